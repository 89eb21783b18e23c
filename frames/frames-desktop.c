/* SPDX-License-Identifier: MIT */

/* The frame log's rows by window, each window's series, and its desktop figures. A log mixes
 * windows (a compositor's probe and an application, two windows of one client): one series
 * of them all would have intervals between unrelated frames, so each window stands alone. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "frames-desktop.h"
#include "frames-memory.h"

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
                presented = w->rows[i].presented_ns != FRAMES_NO_TIME;
        r = frames_log_new(&series);
        if (r < 0)
                return r;
        series->dumps = 1;
        /* Room for every row at once: no growing (and copying) a million frames at a time. */
        if (w->n_rows > 0) {
                void *frames = NULL;

                if (frames_array_grow(&frames, &series->n_allocated, w->n_rows, sizeof(Frame), false) < 0) {
                        frames_log_free(series);
                        return -ENOMEM;
                }
                series->frames = frames;
        }
        for (size_t i = 0; i < w->n_rows; i++) {
                const FramesWindowRow *row = &w->rows[i];
                Frame f = {
                        .desired_ns = FRAMES_NO_TIME,
                        .ready_ns = FRAMES_NO_TIME,
                        .refresh_ns = row->refresh_ns,
                };

                if (row->drawn_ns == FRAMES_NO_TIME)
                        continue;
                if (presented) {
                        /* Not presented yet: pending, as the older reader counted it. */
                        f.present_ns = row->presented_ns != FRAMES_NO_TIME ? row->presented_ns : INT64_MAX;
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
        /* Mostly the sent time is the converted one give or take a little: no division. */
        d = row->drawn_x11_us * 1000 - row->drawn_ns;
        if (d > -X11_WRAP_NS / 2 && d <= X11_WRAP_NS / 2)
                return d;
        sent_ns = row->drawn_x11_us % (X11_WRAP_NS / 1000) * 1000;
        d = sent_ns - row->drawn_ns % X11_WRAP_NS;
        if (d > X11_WRAP_NS / 2)
                d -= X11_WRAP_NS;
        else if (d <= -X11_WRAP_NS / 2)
                d += X11_WRAP_NS;
        return d;
}

/* The row as the window keeps it. */
static FramesWindowRow compact(const FramesRow *row) {
        FramesWindowRow k = {
                .drawn_ns = FRAMES_NO_TIME,
                .presented_ns = FRAMES_NO_TIME,
                .refresh_ns = row->refresh_ns,
                .end_to_drawn_ns = FRAMES_NO_TIME,
                .drawn_message_ns = FRAMES_NO_TIME,
                .timings_message_ns = FRAMES_NO_TIME,
                .clock_offset_ns = FRAMES_NO_TIME,
        };
        int64_t unc_ns;

        if (!frames_time_valid(row->drawn_ns))
                return k;
        unc_ns = row->drawn_uncertainty_ns >= 0 && row->drawn_uncertainty_ns != FRAMES_NO_TIME ?
                row->drawn_uncertainty_ns : 0;
        k.drawn_ns = row->drawn_ns;
        if (frames_time_valid(row->presented_ns))
                k.presented_ns = row->presented_ns;
        k.end_to_drawn_ns = diff(row->drawn_ns, row->end_ns);
        k.drawn_message_ns = diff(row->drawn_received_ns, row->drawn_ns);
        k.timings_message_ns = diff(row->timings_received_ns, row->drawn_ns);
        k.clock_offset_ns = clock_offset_ns(row);
        if (k.clock_offset_ns != FRAMES_NO_TIME && k.clock_offset_ns <= unc_ns + US_TRUNCATION_NS &&
            k.clock_offset_ns >= -unc_ns - US_TRUNCATION_NS)
                k.flags |= FRAMES_ROW_IDENTITY;
        if (k.end_to_drawn_ns != FRAMES_NO_TIME && k.drawn_message_ns != FRAMES_NO_TIME) {
                k.flags |= FRAMES_ROW_CAUSAL;
                /* By differences: no sum of a time and a bound overflows. */
                if (k.end_to_drawn_ns < -unc_ns || k.drawn_message_ns < -unc_ns)
                        k.flags |= FRAMES_ROW_CAUSAL_OUTSIDE;
        }
        return k;
}

int frames_log_add_row(FramesLog *log, int64_t window, const FramesRow *row) {
        FramesWindow *w;
        int r;

        r = window_for(log, window, &w);
        if (r < 0)
                return r;
        if (w->n_rows == w->n_allocated) {
                void *rows = w->rows;

                r = frames_array_grow(&rows, &w->n_allocated, w->n_allocated ? w->n_allocated * 2 : 1024,
                                      sizeof(FramesWindowRow), true);
                if (r < 0)
                        return r;
                w->rows = rows;
        }
        w->rows[w->n_rows++] = compact(row);
        if (frames_time_valid(row->begin_ns)) {
                if (w->n_begun++ == 0)
                        w->first_begin_ns = row->begin_ns;
                w->last_begin_ns = row->begin_ns;
        }
        log->rows++;
        return 0;
}

/* One column of the rows (the values known of it) to spread: how many there were. */
static size_t column(const FramesWindow *w, int64_t *values, int64_t (*of)(const FramesWindowRow *row),
                     FramesSpread *ret) {
        size_t n = 0;

        for (size_t i = 0; i < w->n_rows; i++) {
                int64_t v = of(&w->rows[i]);

                if (v != FRAMES_NO_TIME)
                        values[n++] = v;
        }
        frames_spread(values, n, ret);
        return n;
}

static int64_t end_to_drawn(const FramesWindowRow *row) {
        return row->end_to_drawn_ns;
}

static int64_t drawn_to_presented(const FramesWindowRow *row) {
        return row->presented_ns != FRAMES_NO_TIME ? diff(row->presented_ns, row->drawn_ns) : FRAMES_NO_TIME;
}

static int64_t drawn_message(const FramesWindowRow *row) {
        return row->drawn_message_ns;
}

static int64_t timings_message(const FramesWindowRow *row) {
        return row->timings_message_ns;
}

static int64_t clock_offset(const FramesWindowRow *row) {
        return row->clock_offset_ns;
}

int frames_desktop_stats_compute(const FramesWindow *w, FramesDesktopStats *ret) {
        FramesDesktopStats d = { .n_rows = w->n_rows, .client_fps = NAN };
        int64_t *values = malloc((w->n_rows ? w->n_rows : 1) * sizeof(int64_t));

        if (!values)
                return -ENOMEM;
        frames_huge_pages(values, w->n_rows * sizeof(int64_t));
        for (size_t i = 0; i < w->n_rows; i++) {
                const FramesWindowRow *row = &w->rows[i];

                d.n_drawn += row->drawn_ns != FRAMES_NO_TIME;
                d.n_presented += row->presented_ns != FRAMES_NO_TIME;
                d.n_clock_identity += !!(row->flags & FRAMES_ROW_IDENTITY);
                d.n_causal += !!(row->flags & FRAMES_ROW_CAUSAL);
                d.n_causal_outside += !!(row->flags & FRAMES_ROW_CAUSAL_OUTSIDE);
        }
        d.n_client = w->n_begun;
        if (w->n_begun >= 2 && w->last_begin_ns > w->first_begin_ns)
                d.client_fps = (double) (w->n_begun - 1) / ((double) (w->last_begin_ns - w->first_begin_ns) / 1e9);
        /* One scratch array for every column, in turn. */
        d.n_end_to_drawn = column(w, values, end_to_drawn, &d.end_to_drawn);
        d.n_drawn_to_presented = column(w, values, drawn_to_presented, &d.drawn_to_presented);
        d.n_drawn_message = column(w, values, drawn_message, &d.drawn_message);
        d.n_timings_message = column(w, values, timings_message, &d.timings_message);
        d.n_clock = column(w, values, clock_offset, &d.clock_offset);
        free(values);
        *ret = d;
        return 0;
}

bool frames_desktop_stats_any(const FramesDesktopStats *d) {
        return !isnan(d->client_fps) || d->n_end_to_drawn > 0 || d->n_drawn_to_presented > 0 ||
               d->n_drawn_message > 0 || d->n_timings_message > 0 || d->n_clock > 0;
}
