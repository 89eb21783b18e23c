/* SPDX-License-Identifier: MIT */
#pragma once

/* What the frame parsers (frames-parse.c, frames-gfxinfo.c, frames-jsonl.c, frames-text.c) share;
 * frames-error.c and frames-log.c hold what they have in common. */

#include "frames.h"
#include "parse-util.h"

typedef enum GfxState {
        GFX_OUTSIDE,            /* the text around the PROFILEDATA sections */
        GFX_HEADER,             /* after an opening ---PROFILEDATA---: the column names */
        GFX_ROWS,               /* rows until the closing ---PROFILEDATA--- */
} GfxState;

/* Where a gfxinfo section keeps the columns it reads; -1 when the header lacks it. */
typedef struct GfxColumns {
        int flags;
        int intended_vsync;
        int frame_completed;
        int display_present;    /* Android 12+ */
        int gpu_completed;      /* Android 11+ */
        int frame_interval;     /* Android 12+: the vsync period */
        size_t n_columns;
} GfxColumns;

typedef struct GfxRow {
        Frame frame;            /* present_ns not decided yet */
        int64_t completed_ns;
        int64_t display_present_ns;
} GfxRow;

struct FramesParser {
        FramesLog *log;
        FramesFormat format;
        unsigned line;
        unsigned first_text_line;       /* the line the format was told from */

        /* SurfaceFlinger: the refresh period of the current dump. */
        int64_t refresh_ns;

        /* gfxinfo: a section's rows wait for its end, which tells which present time it has. */
        GfxState gfx_state;
        GfxColumns columns;
        GfxRow *rows;
        size_t n_rows, n_rows_allocated;
        bool saw_section;
};

/* Fills *ret_error (line, message) and returns -EBADMSG. */
int frames_fail(FramesError *ret_error, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

int frames_gfxinfo_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error);
int frames_gfxinfo_finish(FramesParser *p, FramesError *ret_error);
void frames_gfxinfo_free(FramesParser *p);

/* A row of the frame log as read, before it joins its window: what a reader thread makes on its
 * own, and what joins the log in the order of the text (frames-desktop.c). */
typedef struct FramesStagedRow {
        int64_t window;
        char output[FRAMES_OUTPUT_NAME_MAX];    /* "" but for a Wayland row presented on an output */
        int64_t begin_ns;                       /* FRAMES_NO_TIME unless a valid time */
        Frame frame;
        FramesWindowRow row;
        int64_t latency_ns[FRAMES_N_LATENCIES]; /* in full; read where row has FRAMES_LATENCY_WIDE */
} FramesStagedRow;

void frames_row_stage(int64_t window, const FramesRow *row, FramesStagedRow *ret);
/* s to its window's rows. 0 or -ENOMEM. */
int frames_log_add_staged(FramesLog *log, const FramesStagedRow *s);

/* One line of the frame log (trimmed, not empty) to *ret: 0, or -EBADMSG saying line. */
int frames_jsonl_row(unsigned line, const char *text, size_t size, FramesStagedRow *ret, FramesError *ret_error);
int frames_jsonl_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error);

/* A row of a Wayland probe (frames-wayland.c): a JSON object with "surface". 0, or -EBADMSG. */
struct json_t;
int frames_wayland_row(unsigned line, struct json_t *o, FramesStagedRow *ret, FramesError *ret_error);

/* frames_parser_text() (text) or frames_parser_read() (read_at), in blocks of block_size bytes on
 * up to n_workers threads (tests try small blocks). */
int frames_parser_input(FramesParser *p, const char *text, FramesReadAt read_at, void *userdata, uint64_t size,
                        size_t max_line_size, size_t block_size, unsigned n_workers, FramesError *ret_error);
