/* SPDX-License-Identifier: MIT */

/* `dumpsys gfxinfo PKG framestats`: text, then for each window a section between two
 * "---PROFILEDATA---" lines, whose first line names the columns and whose rows are one frame
 * each, comma separated (with a comma after the last). Android 6-11 and 12+ order and name the
 * columns differently (12+ adds FrameTimelineVsyncId, FrameDeadline, FrameInterval,
 * DisplayPresentTime, ...), so columns are found by name.
 *
 * A frame's present time is DisplayPresentTime where the section has one (Android 12+ with
 * present fences; a 0 there is a fence not signalled yet), else FrameCompleted. Its desired
 * time is IntendedVsync, unless Flags marks it an outlier (a layout change, the first frame),
 * which the platform's documentation says to leave out of frame-time figures. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frames-internal.h"
#include "frames-memory.h"

#define PROFILEDATA "---PROFILEDATA---"
#define GFX_MAX_COLUMNS 64

static bool is_marker(const char *s, size_t n) {
        return n == strlen(PROFILEDATA) && memcmp(s, PROFILEDATA, n) == 0;
}

/* The comma separated fields of s, trimmed; a comma at the end adds no field. How many, or
 * max + 1 when there are more. */
static size_t split(const char *s, size_t n, const char **fields, size_t *sizes, size_t max) {
        size_t count = 0;

        while (n > 0) {
                const char *comma = memchr(s, ',', n);
                size_t k = comma ? (size_t) (comma - s) : n;

                if (count == max)
                        return max + 1;
                fields[count] = s;
                sizes[count] = k;
                parse_trim(&fields[count], &sizes[count]);
                count++;
                s += k + !!comma;
                n -= k + !!comma;
        }
        return count;
}

static int find(const char **fields, const size_t *sizes, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (sizes[i] == strlen(name) && memcmp(fields[i], name, sizes[i]) == 0)
                        return (int) i;
        return -1;
}

static int header(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        const char *fields[GFX_MAX_COLUMNS];
        size_t sizes[GFX_MAX_COLUMNS], n;
        GfxColumns c;

        n = split(line, size, fields, sizes, GFX_MAX_COLUMNS);
        if (n > GFX_MAX_COLUMNS)
                return frames_fail(ret_error, p->line, "more than %d columns", GFX_MAX_COLUMNS);
        c = (GfxColumns) {
                .flags = find(fields, sizes, n, "Flags"),
                .intended_vsync = find(fields, sizes, n, "IntendedVsync"),
                .frame_completed = find(fields, sizes, n, "FrameCompleted"),
                .display_present = find(fields, sizes, n, "DisplayPresentTime"),
                .gpu_completed = find(fields, sizes, n, "GpuCompleted"),
                .frame_interval = find(fields, sizes, n, "FrameInterval"),
                .n_columns = n,
        };
        if (c.flags < 0 || c.intended_vsync < 0 || c.frame_completed < 0)
                return frames_fail(ret_error, p->line, "not a framestats header: it needs the "
                                   "columns Flags, IntendedVsync and FrameCompleted");
        p->columns = c;
        p->gfx_state = GFX_ROWS;
        p->n_rows = 0;
        return 0;
}

static int64_t column(const int64_t *v, int index) {
        return index >= 0 ? v[index] : FRAMES_NO_TIME;
}

static int row(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        const char *fields[GFX_MAX_COLUMNS];
        size_t sizes[GFX_MAX_COLUMNS], n;
        int64_t v[GFX_MAX_COLUMNS];
        const GfxColumns *c = &p->columns;
        GfxRow *r;

        n = split(line, size, fields, sizes, GFX_MAX_COLUMNS);
        if (n != c->n_columns)
                return frames_fail(ret_error, p->line, "%zu columns where the header has %zu",
                                   n > GFX_MAX_COLUMNS ? (size_t) GFX_MAX_COLUMNS + 1 : n, c->n_columns);
        for (size_t i = 0; i < n; i++) {
                int k = parse_int64(fields[i], sizes[i], &v[i]);

                if (k < 0)
                        return frames_fail(ret_error, p->line, "column %zu: %s", i + 1,
                                           k == -ERANGE ? "number out of range" : "not an integer");
        }
        {
                void *rows = p->rows;
                int g = frames_small_grow(&rows, &p->n_rows_allocated, p->n_rows, sizeof(GfxRow), 128);

                p->rows = rows;
                if (g < 0)
                        return g;
        }
        r = &p->rows[p->n_rows++];
        *r = (GfxRow) {
                .frame = {
                        .desired_ns = v[c->flags] == 0 && frames_time_valid(v[c->intended_vsync]) ?
                                v[c->intended_vsync] : FRAMES_NO_TIME,
                        .ready_ns = frames_time_valid(column(v, c->gpu_completed)) ?
                                v[c->gpu_completed] : FRAMES_NO_TIME,
                        .refresh_ns = column(v, c->frame_interval) > 0 ? v[c->frame_interval] : 0,
                },
                .completed_ns = v[c->frame_completed],
                .display_present_ns = column(v, c->display_present),
        };
        return 0;
}

/* The section ended: now it is known whether its rows have display present times. */
static int flush(FramesParser *p) {
        bool presents = false;

        for (size_t i = 0; i < p->n_rows && !presents; i++)
                presents = frames_time_valid(p->rows[i].display_present_ns);
        p->log->completed_only |= p->n_rows > 0 && !presents;
        for (size_t i = 0; i < p->n_rows; i++) {
                GfxRow *r = &p->rows[i];

                if (!presents)
                        r->frame.present_ns = r->completed_ns;
                else if (frames_time_valid(r->display_present_ns))
                        r->frame.present_ns = r->display_present_ns;
                else
                        r->frame.present_ns = INT64_MAX;        /* not on screen yet */
                if (frames_log_add(p->log, &r->frame) < 0)
                        return -ENOMEM;
        }
        p->log->dumps++;
        p->n_rows = 0;
        return 0;
}

int frames_gfxinfo_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        parse_trim(&line, &size);
        switch (p->gfx_state) {
        case GFX_OUTSIDE:
                if (is_marker(line, size)) {
                        p->gfx_state = GFX_HEADER;
                        p->saw_section = true;
                }
                return 0;
        case GFX_HEADER:
                if (size == 0)
                        return 0;
                if (is_marker(line, size)) {
                        p->gfx_state = GFX_OUTSIDE;     /* a window without frames */
                        return 0;
                }
                return header(p, line, size, ret_error);
        default:
                if (size == 0)
                        return 0;
                if (is_marker(line, size)) {
                        p->gfx_state = GFX_OUTSIDE;
                        return flush(p);
                }
                return row(p, line, size, ret_error);
        }
}

int frames_gfxinfo_finish(FramesParser *p, FramesError *ret_error) {
        if (!p->saw_section)
                return frames_fail(ret_error, p->first_text_line, "not a SurfaceFlinger --latency "
                                   "dump, gfxinfo framestats or frame log (no ---PROFILEDATA---)");
        /* A dump cut after its last row still counts. */
        if (p->gfx_state == GFX_ROWS) {
                p->gfx_state = GFX_OUTSIDE;
                return flush(p);
        }
        return 0;
}

void frames_gfxinfo_free(FramesParser *p) {
        free(p->rows);
        p->rows = NULL;
}
