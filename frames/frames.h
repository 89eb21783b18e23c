/* SPDX-License-Identifier: MIT */
#pragma once

/* Frame timings read from `dumpsys SurfaceFlinger --latency`, `dumpsys gfxinfo PKG framestats`
 * and libtimeconv's JSON Lines frame log. Android's dumps merge into one series of presented
 * frames; the frame log's rows are kept per window (frames-desktop.h makes their series). The
 * CLI feeds lines and prints; this part does no I/O, so a fuzzer can drive it with bytes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A time that is not known (a pending fence, a 0 in a dump, a column the dump lacks). */
#define FRAMES_NO_TIME INT64_MIN

typedef struct Frame {
        int64_t present_ns;     /* actual present time, CLOCK_MONOTONIC */
        int64_t desired_ns;     /* when it was meant to be presented, or FRAMES_NO_TIME */
        int64_t ready_ns;       /* when its buffer was ready (acquire fence), or FRAMES_NO_TIME */
        int64_t refresh_ns;     /* the display's refresh period at that time; 0 if unknown */
} Frame;

/* One row of the EWMH frame log (libtimeconv's timeconv_frame_log_write[_record]()). Times
 * are CLOCK_MONOTONIC ns, FRAMES_NO_TIME where the row has null or lacks the field. */
typedef struct FramesRow {
        uint64_t counter;
        int64_t begin_ns, end_ns;               /* the client began / ended the frame */
        int64_t drawn_x11_us;                   /* _NET_WM_FRAME_DRAWN's time as received */
        int64_t presentation_offset_us;         /* _NET_WM_FRAME_TIMINGS' offset as received */
        int64_t drawn_ns, drawn_uncertainty_ns; /* drawn_ns FRAMES_NO_TIME: never drawn */
        int64_t presented_ns, presented_uncertainty_ns;
        int64_t refresh_ns;                     /* 0: unknown */
        int64_t frame_delay_us;
        int64_t drawn_received_ns, timings_received_ns;
} FramesRow;

/* What FramesWindowRow.flags say. */
enum {
        FRAMES_ROW_IDENTITY = 1 << 0,           /* the drawn time as sent is its conversion, within the bound */
        FRAMES_ROW_CAUSAL = 1 << 1,             /* end and arrival known: causality checked */
        FRAMES_ROW_CAUSAL_OUTSIDE = 1 << 2,     /* drawn outside [end, arrival] by more than its bound */
        /* A Wayland row (frames-wayland.c): its frame's desired_ns is the commit, present_ns
         * the wp_presentation time converted to CLOCK_MONOTONIC. */
        FRAMES_ROW_WAYLAND = 1 << 3,
        FRAMES_ROW_DISCARDED = 1 << 4,          /* the compositor discarded the frame */
        FRAMES_ROW_VSYNC = 1 << 5,              /* wp_presentation_feedback's kind flags */
        FRAMES_ROW_HW_CLOCK = 1 << 6,
        FRAMES_ROW_HW_COMPLETION = 1 << 7,
        FRAMES_ROW_ZERO_COPY = 1 << 8,
};

/* An output's name as a Wayland row gives it (xdg-output's), longer names cut. */
#define FRAMES_OUTPUT_NAME_MAX 32

/* The latencies a window keeps of each row, as FramesWindowRow.latency_ns[] indexes them. */
typedef enum FramesLatency {
        FRAMES_END_TO_DRAWN,            /* drawn - end */
        FRAMES_DRAWN_MESSAGE,           /* _NET_WM_FRAME_DRAWN arrived - drawn */
        FRAMES_TIMINGS_MESSAGE,         /* _NET_WM_FRAME_TIMINGS arrived - drawn */
        FRAMES_CLOCK_OFFSET,            /* drawn as sent (x11_us read as CLOCK_MONOTONIC) - converted */
        FRAMES_N_LATENCIES,
} FramesLatency;

/* A latency that is not known, and one beyond the ±2.1 s of 32 bits, which the window keeps in
 * full among its wide values (frames_window_latency() reads either). */
#define FRAMES_LATENCY_NONE INT32_MIN
#define FRAMES_LATENCY_WIDE (INT32_MIN + 1)

/* What a window keeps of a row beside its frame: the latencies already taken. A log has millions
 * of rows, and memory touched for the first time is most of the cost of reading one: a row is
 * this (20 bytes) and its frame (32), where it was the 112 of FramesRow plus a copy as a frame. */
typedef struct FramesWindowRow {
        int32_t latency_ns[FRAMES_N_LATENCIES];  /* ns; FRAMES_LATENCY_NONE, FRAMES_LATENCY_WIDE */
        uint32_t flags;                          /* FRAMES_ROW_* */
} FramesWindowRow;

/* A latency of a row beyond 32 bits. */
typedef struct FramesWide {
        size_t row;
        FramesLatency latency;
        int64_t value_ns;
} FramesWide;

/* The rows of one window, in the order of the log. */
typedef struct FramesWindow {
        int64_t id;                     /* the X window; FRAMES_NO_WINDOW: rows that did not say */
        /* A Wayland surface's rows go by the output they were presented on: one window per
         * surface and output ("" for frames on none, the discarded ones). */
        char output[FRAMES_OUTPUT_NAME_MAX];
        /* Row i as a frame: present_ns its presented time, desired_ns its drawn time (both
         * FRAMES_NO_TIME when it was never drawn; presented too when not presented), ready_ns
         * FRAMES_NO_TIME, refresh_ns (0: unknown). When every row was drawn and presented in
         * order, these are the window's series as they are (frames_window_series()). */
        Frame *frames;
        FramesWindowRow *rows;
        size_t n_rows, n_allocated, n_frames_allocated;
        FramesWide *wide;               /* by row, then latency */
        size_t n_wide, n_wide_allocated;
        size_t n_begun;                 /* rows with a begin time, the first and the last of them */
        int64_t first_begin_ns, last_begin_ns;
} FramesWindow;

/* Latency l of row i of w, FRAMES_NO_TIME when it is not known. */
int64_t frames_window_latency(const FramesWindow *w, size_t i, FramesLatency l);

#define FRAMES_NO_WINDOW INT64_C(-1)

/* Android's merged series (present times strictly increase) and the frame log's windows. */
typedef struct FramesLog {
        Frame *frames;
        size_t n_frames, n_allocated;
        uint64_t rows;          /* frame rows read */
        uint64_t pending;       /* rows whose present fence had not signalled yet */
        uint64_t dropped;       /* unused rows, and frames already kept from an earlier dump */
        uint64_t dumps;         /* dumps (SurfaceFlinger) or PROFILEDATA sections (gfxinfo) */
        bool completed_only;    /* gfxinfo sections without present times: FrameCompleted stood in */
        uint64_t android_rows;  /* of rows, those of Android dumps */
        FramesWindow *windows;  /* the frame log's rows, by window in order of appearance */
        size_t n_windows, n_windows_allocated;
        size_t last_window;     /* where the previous row went: rows come in runs */
        bool frames_borrowed;   /* frames are a window's (frames_window_series()): not freed here */
} FramesLog;

int frames_log_new(FramesLog **ret);
FramesLog *frames_log_free(FramesLog *log);

/* A row: kept when its present time is valid and later than the last kept one (which drops
 * unused rows and the frames that successive dumps repeat). 1 kept, 0 dropped, or -ENOMEM. */
int frames_log_add(FramesLog *log, const Frame *f);

/* A row of the frame log, to its window's rows. 0 or -ENOMEM. */
int frames_log_add_row(FramesLog *log, int64_t window, const FramesRow *row);

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

/* The lines of text (split on '\n'; the last one without it when it holds text), as many calls
 * of frames_parser_line() would pass them: the same rows, in the same order, the same error.
 * A large frame log is read by two threads, a block at a time each, its rows added in the
 * order of the text. A line of max_line_size bytes or more (0: no limit) is refused as too
 * long. 0, -ENOMEM or -EBADMSG. */
int frames_parser_text(FramesParser *p, const char *text, size_t size, size_t max_line_size,
                       FramesError *ret_error);

/* Reads up to size bytes of the input at offset into buf: how many (0: it ends there), or
 * -errno. Called from two threads at once, so it keeps no position (pread()). */
typedef ssize_t (*FramesReadAt)(void *userdata, void *buf, size_t size, uint64_t offset);

/* frames_parser_text() on an input of size bytes that read_at() reads (a file, read by the two
 * threads where each needs it: no copy of it all in memory). A read's error is returned, and
 * -ENODATA when the input ends before size bytes (it shrank while it was read). */
int frames_parser_read(FramesParser *p, FramesReadAt read_at, void *userdata, uint64_t size,
                       size_t max_line_size, FramesError *ret_error);

/* A whole text (lines split on '\n'), for tests and fuzzers. */
int frames_parse_text(FramesLog *log, const char *text, size_t size, FramesError *ret_error);
