/* SPDX-License-Identifier: MIT */

/* The frame log's rows by window, each window's series, and its desktop figures. A log mixes
 * windows (a compositor's probe and an application, two windows of one client): one series
 * of them all would have intervals between unrelated frames, so each window stands alone. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "frames-desktop.h"

/* High-precision X time wraps with its 32-bit ms part; in ns. */
#define X11_WRAP_NS (INT64_C(1000000) << 32)
/* A drawn time as sent is whole us: its conversion may lie anywhere in that us. */
#define US_TRUNCATION_NS 1000

static int window_for(FramesLog *log, int64_t id, FramesWindow **ret) {
        FramesWindow *w;

        if (log->n_windows > 0 && log->windows[log->last_window].id == id) {
                *ret = &log->windows[log->last_window];
                return 0;
        }
        for (size_t i = 0; i < log->n_windows; i++)
                if (log->windows[i].id == id) {
                        log->last_window = i;
                        *ret = &log->windows[i];
                        return 0;
                }
        if (log->n_windows == log->n_windows_allocated) {
                size_t n = log->n_windows_allocated ? log->n_windows_allocated * 2 : 4;
                FramesWindow *windows = reallocarray(log->windows, n, sizeof(*windows));

                if (!windows)
                        return -ENOMEM;
                log->windows = windows;
                log->n_windows_allocated = n;
        }
        w = &log->windows[log->n_windows];
        *w = (FramesWindow) { .id = id };
        log->last_window = log->n_windows++;
        *ret = w;
        return 0;
}

int frames_log_add_row(FramesLog *log, int64_t window, const FramesRow *row) {
        FramesWindow *w;
        int r;

        r = window_for(log, window, &w);
        if (r < 0)
                return r;
        if (w->n_rows == w->n_allocated) {
                size_t n = w->n_allocated ? w->n_allocated * 2 : 1024;
                FramesRow *rows = reallocarray(w->rows, n, sizeof(*rows));

                if (!rows)
                        return -ENOMEM;
                w->rows = rows;
                w->n_allocated = n;
        }
        w->rows[w->n_rows++] = *row;
        log->rows++;
        return 0;
}

const char *frames_timed_by_name(FramesTimedBy t) {
        switch (t) {
        case FRAMES_TIMED_BY_ACTUAL_PRESENT:
                return "actual present";
        case FRAMES_TIMED_BY_COMPLETED:
                return "frame completed";
        case FRAMES_TIMED_BY_PRESENTED:
                return "presented";
        default:
                return "drawn";
        }
}

int frames_window_series(const FramesWindow *w, FramesLog **ret_series, FramesTimedBy *ret_timed_by) {
        bool presented = false;
        FramesLog *series;
        int r;

        for (size_t i = 0; i < w->n_rows && !presented; i++)
                presented = frames_time_valid(w->rows[i].drawn_ns) && frames_time_valid(w->rows[i].presented_ns);
        r = frames_log_new(&series);
        if (r < 0)
                return r;
        series->dumps = 1;
        for (size_t i = 0; i < w->n_rows; i++) {
                const FramesRow *row = &w->rows[i];
                bool drawn = frames_time_valid(row->drawn_ns);
                Frame f = {
                        .desired_ns = FRAMES_NO_TIME,
                        .ready_ns = FRAMES_NO_TIME,
                        .refresh_ns = row->refresh_ns,
                };

                if (!drawn)
                        continue;
                if (presented) {
                        /* Not presented yet: pending, as the older reader counted it. */
                        f.present_ns = frames_time_valid(row->presented_ns) ? row->presented_ns : INT64_MAX;
                        f.desired_ns = row->drawn_ns;
                } else
                        f.present_ns = row->drawn_ns;
                if (frames_log_add(series, &f) < 0) {
                        frames_log_free(series);
                        return -ENOMEM;
                }
        }
        *ret_series = series;
        *ret_timed_by = presented ? FRAMES_TIMED_BY_PRESENTED : FRAMES_TIMED_BY_DRAWN;
        return 0;
}

/* a - b, or FRAMES_NO_TIME when either is unknown or the difference overflows. */
static int64_t diff(int64_t a, int64_t b) {
        int64_t d;

        if (a == FRAMES_NO_TIME || b == FRAMES_NO_TIME || __builtin_sub_overflow(a, b, &d))
                return FRAMES_NO_TIME;
        return d;
}

/* The drawn time as sent (x11_us) minus its conversion, both taken modulo the wrap of the
 * X time's ms part (mutter sends CLOCK_MONOTONIC us unreduced). */
static int64_t clock_offset_ns(const FramesRow *row) {
        int64_t sent_ns, d;

        if (row->drawn_x11_us < 0 || row->drawn_x11_us == FRAMES_NO_TIME ||
            row->drawn_x11_us > INT64_MAX / 1000)
                return FRAMES_NO_TIME;
        sent_ns = row->drawn_x11_us % (X11_WRAP_NS / 1000) * 1000;
        d = sent_ns - row->drawn_ns % X11_WRAP_NS;
        if (d > X11_WRAP_NS / 2)
                d -= X11_WRAP_NS;
        else if (d <= -X11_WRAP_NS / 2)
                d += X11_WRAP_NS;
        return d;
}

typedef struct Columns {
        int64_t *end_to_drawn, *drawn_to_presented, *drawn_message, *timings_message, *clock;
} Columns;

static void columns_free(Columns *c) {
        free(c->end_to_drawn);
        free(c->drawn_to_presented);
        free(c->drawn_message);
        free(c->timings_message);
        free(c->clock);
}

static void push(int64_t *column, size_t *n, int64_t v) {
        if (v != FRAMES_NO_TIME)
                column[(*n)++] = v;
}

int frames_desktop_stats_compute(const FramesWindow *w, FramesDesktopStats *ret) {
        FramesDesktopStats d = { .n_rows = w->n_rows, .client_fps = NAN };
        int64_t first_begin = FRAMES_NO_TIME, last_begin = FRAMES_NO_TIME;
        size_t n = w->n_rows ? w->n_rows : 1;
        Columns c = {
                .end_to_drawn = malloc(n * sizeof(int64_t)),
                .drawn_to_presented = malloc(n * sizeof(int64_t)),
                .drawn_message = malloc(n * sizeof(int64_t)),
                .timings_message = malloc(n * sizeof(int64_t)),
                .clock = malloc(n * sizeof(int64_t)),
        };

        if (!c.end_to_drawn || !c.drawn_to_presented || !c.drawn_message || !c.timings_message || !c.clock) {
                columns_free(&c);
                return -ENOMEM;
        }
        for (size_t i = 0; i < w->n_rows; i++) {
                const FramesRow *row = &w->rows[i];
                int64_t offset_ns, unc_ns;

                if (frames_time_valid(row->begin_ns)) {
                        if (first_begin == FRAMES_NO_TIME)
                                first_begin = row->begin_ns;
                        last_begin = row->begin_ns;
                        d.n_client++;
                }
                if (!frames_time_valid(row->drawn_ns))
                        continue;
                d.n_drawn++;
                unc_ns = row->drawn_uncertainty_ns >= 0 && row->drawn_uncertainty_ns != FRAMES_NO_TIME ?
                        row->drawn_uncertainty_ns : 0;
                push(c.end_to_drawn, &d.n_end_to_drawn, diff(row->drawn_ns, row->end_ns));
                if (frames_time_valid(row->presented_ns)) {
                        d.n_presented++;
                        push(c.drawn_to_presented, &d.n_drawn_to_presented, diff(row->presented_ns, row->drawn_ns));
                }
                push(c.drawn_message, &d.n_drawn_message, diff(row->drawn_received_ns, row->drawn_ns));
                push(c.timings_message, &d.n_timings_message, diff(row->timings_received_ns, row->drawn_ns));

                offset_ns = clock_offset_ns(row);
                if (offset_ns != FRAMES_NO_TIME) {
                        c.clock[d.n_clock++] = offset_ns;
                        d.n_clock_identity += offset_ns <= unc_ns + US_TRUNCATION_NS &&
                                              offset_ns >= -unc_ns - US_TRUNCATION_NS;
                }
                if (row->end_ns != FRAMES_NO_TIME && row->drawn_received_ns != FRAMES_NO_TIME) {
                        d.n_causal++;
                        /* Compared by differences: no sum of a time and a bound overflows. */
                        d.n_causal_outside += diff(row->drawn_ns, row->end_ns) < -unc_ns ||
                                              diff(row->drawn_received_ns, row->drawn_ns) < -unc_ns;
                }
        }
        if (d.n_client >= 2 && last_begin > first_begin)
                d.client_fps = (double) (d.n_client - 1) / ((double) (last_begin - first_begin) / 1e9);
        frames_spread(c.end_to_drawn, d.n_end_to_drawn, &d.end_to_drawn);
        frames_spread(c.drawn_to_presented, d.n_drawn_to_presented, &d.drawn_to_presented);
        frames_spread(c.drawn_message, d.n_drawn_message, &d.drawn_message);
        frames_spread(c.timings_message, d.n_timings_message, &d.timings_message);
        frames_spread(c.clock, d.n_clock, &d.clock_offset);
        columns_free(&c);
        *ret = d;
        return 0;
}

bool frames_desktop_stats_any(const FramesDesktopStats *d) {
        return !isnan(d->client_fps) || d->n_end_to_drawn > 0 || d->n_drawn_to_presented > 0 ||
               d->n_drawn_message > 0 || d->n_timings_message > 0 || d->n_clock > 0;
}
