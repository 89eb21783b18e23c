/* SPDX-License-Identifier: MIT */
#pragma once

/* Frame timings read from `dumpsys SurfaceFlinger --latency`, `dumpsys gfxinfo PKG framestats`
 * and libtimeconv's JSON Lines frame log, merged into one series of presented frames. The CLI
 * feeds lines and prints; this part does no I/O, so a fuzzer can drive it with bytes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A time that is not known (a pending fence, a 0 in a dump, a column the dump lacks). */
#define FRAMES_NO_TIME INT64_MIN

typedef struct Frame {
        int64_t present_ns;     /* actual present time, CLOCK_MONOTONIC */
        int64_t desired_ns;     /* when it was meant to be presented, or FRAMES_NO_TIME */
        int64_t ready_ns;       /* when its buffer was ready (acquire fence), or FRAMES_NO_TIME */
        int64_t refresh_ns;     /* the display's refresh period at that time; 0 if unknown */
} Frame;

/* The merged series: present times strictly increase. */
typedef struct FramesLog {
        Frame *frames;
        size_t n_frames, n_allocated;
        uint64_t rows;          /* frame rows read */
        uint64_t pending;       /* rows whose present fence had not signalled yet */
        uint64_t dropped;       /* unused rows, and frames already kept from an earlier dump */
        uint64_t dumps;         /* dumps (SurfaceFlinger) or PROFILEDATA sections (gfxinfo) */
} FramesLog;

int frames_log_new(FramesLog **ret);
FramesLog *frames_log_free(FramesLog *log);

/* A row: kept when its present time is valid and later than the last kept one (which drops
 * unused rows and the frames that successive dumps repeat). 1 kept, 0 dropped, or -ENOMEM. */
int frames_log_add(FramesLog *log, const Frame *f);

/* Whether t is a time a dump means (not 0, negative or the pending INT64_MAX). */
static inline bool frames_time_valid(int64_t t) {
        return t > 0 && t < INT64_MAX;
}

typedef enum FramesFormat {
        FRAMES_FORMAT_UNKNOWN,          /* no line with text yet */
        FRAMES_FORMAT_SURFACEFLINGER,   /* first line: one integer, the refresh period */
        FRAMES_FORMAT_GFXINFO,          /* anything else that is not a JSON object */
        FRAMES_FORMAT_JSONL,            /* first line starts with '{' */
} FramesFormat;

const char *frames_format_name(FramesFormat format);

typedef struct FramesError {
        unsigned line;                  /* 1-based; 0 when not about one line */
        char message[160];
} FramesError;

typedef struct FramesParser FramesParser;

/* A parser for one input (a file or standard input) adding its frames to log. The format is
 * told from the first line that holds text. */
int frames_parser_new(FramesLog *log, FramesParser **ret);
FramesParser *frames_parser_free(FramesParser *p);

/* The next line of the input, without its newline. 0, -ENOMEM, or -EBADMSG with *ret_error
 * saying which line and why (ret_error is written only on failure). */
int frames_parser_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error);

/* The end of the input: what is still buffered goes to the log. 0, -ENOMEM or -EBADMSG. */
int frames_parser_finish(FramesParser *p, FramesError *ret_error);

FramesFormat frames_parser_format(const FramesParser *p);
/* Lines seen so far. */
unsigned frames_parser_lines(const FramesParser *p);

/* A whole text (lines split on '\n'), for tests and fuzzers. */
int frames_parse_text(FramesLog *log, const char *text, size_t size, FramesError *ret_error);
