/* SPDX-License-Identifier: MIT */

/* The frame log's rows by window, each window's series, and its desktop figures. A log mixes
 * windows (a compositor's probe and an application, two windows of one client): one series
 * of them all would have intervals between unrelated frames, so each window stands alone. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames-desktop.h"
#include "frames-internal.h"
#include "frames-memory.h"

/* High-precision X time wraps with its 32-bit ms part; in ns. */
#define X11_WRAP_NS (INT64_C(1000000) << 32)
/* A drawn time as sent is whole us: its conversion may lie anywhere in that us. */
#define US_TRUNCATION_NS 1000

static bool window_is(const FramesWindow *w, int64_t id, const char *output) {
        return w->id == id && strcmp(w->output, output) == 0;
}

static int window_for(FramesLog *log, int64_t id, const char *output, FramesWindow **ret) {
        FramesWindow *w;
        void *p;
        int r;

        if (log->n_windows > 0 && window_is(&log->windows[log->last_window], id, output)) {
                *ret = &log->windows[log->last_window];
                return 0;
        }
        for (size_t i = 0; i < log->n_windows; i++)
                if (window_is(&log->windows[i], id, output)) {
                        log->last_window = i;
                        *ret = &log->windows[i];
                        return 0;
                }
        p = log->windows;
        r = frames_small_grow(&p, &log->n_windows_allocated, log->n_windows, sizeof(FramesWindow), 4);
        log->windows = p;
        if (r < 0)
                return r;
        w = &log->windows[log->n_windows];
        *w = (FramesWindow) { .id = id };
        snprintf(w->output, sizeof(w->output), "%s", output);
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

/* Whether the window's frames are its series as they are: every row drawn and presented, in
 * order (what frames_log_add() would keep, all of it). */
static bool frames_are_series(const FramesWindow *w) {
        /* A Wayland row's desired time is its commit, not a time it asked to be presented at. */
        if (w->n_rows > 0 && (w->rows[0].flags & FRAMES_ROW_WAYLAND))
                return false;
        for (size_t i = 0; i < w->n_rows; i++)
                if (w->frames[i].desired_ns == FRAMES_NO_TIME || w->frames[i].present_ns == FRAMES_NO_TIME ||
                    (i > 0 && w->frames[i].present_ns <= w->frames[i - 1].present_ns))
                        return false;
        return w->n_rows > 0;
}

int frames_window_series(const FramesWindow *w, FramesLog **ret_series, FramesTimedBy *ret_timed_by) {
        bool presented = false;
        FramesLog *series;
        int r;

        /* A Wayland surface is timed by its presentation even when none came (all discarded). */
        for (size_t i = 0; i < w->n_rows && !presented; i++)
                presented = w->frames[i].present_ns != FRAMES_NO_TIME || (w->rows[i].flags & FRAMES_ROW_WAYLAND);
        r = frames_log_new(&series);
        if (r < 0)
                return r;
        series->dumps = 1;
        if (frames_are_series(w)) {
                /* Millions of frames not copied (nor their memory touched): the series only
                 * reads them, and the window outlives it. */
                series->frames = (Frame *) w->frames;
                series->frames_borrowed = true;
                series->n_frames = series->n_allocated = w->n_rows;
                series->rows = series->android_rows = w->n_rows;
                *ret_series = series;
                *ret_timed_by = FRAMES_TIMED_BY_PRESENTED;
                return 0;
        }
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
                const Frame *row = &w->frames[i];
                Frame f = {
                        .desired_ns = FRAMES_NO_TIME,
                        .ready_ns = FRAMES_NO_TIME,
                        .refresh_ns = row->refresh_ns,
                };

                if (row->desired_ns == FRAMES_NO_TIME || (w->rows[i].flags & FRAMES_ROW_DISCARDED))
                        continue;       /* never drawn, or discarded: not pending, never to be shown */
                if (presented) {
                        /* Not presented yet: pending, as the older reader counted it. */
                        f.present_ns = row->present_ns != FRAMES_NO_TIME ? row->present_ns : INT64_MAX;
                        if (!(w->rows[i].flags & FRAMES_ROW_WAYLAND))
                                f.desired_ns = row->desired_ns;
                } else
                        f.present_ns = row->desired_ns;
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

/* A latency in 32 bits, or the mark that it is not known or is kept in full. */
static int32_t narrow(int64_t v) {
        if (v == FRAMES_NO_TIME)
                return FRAMES_LATENCY_NONE;
        if (v <= FRAMES_LATENCY_WIDE || v > INT32_MAX)
                return FRAMES_LATENCY_WIDE;
        return (int32_t) v;
}

void frames_row_stage(int64_t window, const FramesRow *row, FramesStagedRow *ret) {
        FramesStagedRow k = {
                .window = window,
                .begin_ns = frames_time_valid(row->begin_ns) ? row->begin_ns : FRAMES_NO_TIME,
                .frame = {
                        .present_ns = FRAMES_NO_TIME,
                        .desired_ns = FRAMES_NO_TIME,
                        .ready_ns = FRAMES_NO_TIME,
                        .refresh_ns = row->refresh_ns,
                },
                .latency_ns = { FRAMES_NO_TIME, FRAMES_NO_TIME, FRAMES_NO_TIME, FRAMES_NO_TIME },
        };
        int64_t unc_ns, *l = k.latency_ns;

        if (frames_time_valid(row->drawn_ns)) {
                unc_ns = row->drawn_uncertainty_ns >= 0 && row->drawn_uncertainty_ns != FRAMES_NO_TIME ?
                        row->drawn_uncertainty_ns : 0;
                k.frame.desired_ns = row->drawn_ns;
                if (frames_time_valid(row->presented_ns))
                        k.frame.present_ns = row->presented_ns;
                l[FRAMES_END_TO_DRAWN] = diff(row->drawn_ns, row->end_ns);
                l[FRAMES_DRAWN_MESSAGE] = diff(row->drawn_received_ns, row->drawn_ns);
                l[FRAMES_TIMINGS_MESSAGE] = diff(row->timings_received_ns, row->drawn_ns);
                l[FRAMES_CLOCK_OFFSET] = clock_offset_ns(row);
                if (l[FRAMES_CLOCK_OFFSET] != FRAMES_NO_TIME && l[FRAMES_CLOCK_OFFSET] <= unc_ns + US_TRUNCATION_NS &&
                    l[FRAMES_CLOCK_OFFSET] >= -unc_ns - US_TRUNCATION_NS)
                        k.row.flags |= FRAMES_ROW_IDENTITY;
                if (l[FRAMES_END_TO_DRAWN] != FRAMES_NO_TIME && l[FRAMES_DRAWN_MESSAGE] != FRAMES_NO_TIME) {
                        k.row.flags |= FRAMES_ROW_CAUSAL;
                        /* By differences: no sum of a time and a bound overflows. */
                        if (l[FRAMES_END_TO_DRAWN] < -unc_ns || l[FRAMES_DRAWN_MESSAGE] < -unc_ns)
                                k.row.flags |= FRAMES_ROW_CAUSAL_OUTSIDE;
                }
        }
        for (size_t i = 0; i < FRAMES_N_LATENCIES; i++)
                k.row.latency_ns[i] = narrow(l[i]);
        *ret = k;
}

static int grow(void **array, size_t *n_allocated, size_t n, size_t size) {
        if (n < *n_allocated)
                return 0;
        return frames_array_grow(array, n_allocated, *n_allocated ? *n_allocated * 2 : 1024, size, true);
}

int frames_log_add_staged(FramesLog *log, const FramesStagedRow *s) {
        FramesWindow *w;
        void *p;
        int r;

        r = window_for(log, s->window, s->output, &w);
        if (r < 0)
                return r;
        p = w->rows;
        r = grow(&p, &w->n_allocated, w->n_rows, sizeof(FramesWindowRow));
        w->rows = p;
        if (r < 0)
                return r;
        p = w->frames;
        r = grow(&p, &w->n_frames_allocated, w->n_rows, sizeof(Frame));
        w->frames = p;
        if (r < 0)
                return r;
        for (size_t l = 0; l < FRAMES_N_LATENCIES; l++) {
                if (s->row.latency_ns[l] != FRAMES_LATENCY_WIDE)
                        continue;
                p = w->wide;
                r = frames_small_grow(&p, &w->n_wide_allocated, w->n_wide, sizeof(FramesWide), 16);
                w->wide = p;
                if (r < 0)
                        return r;
                w->wide[w->n_wide++] = (FramesWide) { w->n_rows, (FramesLatency) l, s->latency_ns[l] };
        }
        w->frames[w->n_rows] = s->frame;
        w->rows[w->n_rows++] = s->row;
        if (s->begin_ns != FRAMES_NO_TIME) {
                if (w->n_begun++ == 0)
                        w->first_begin_ns = s->begin_ns;
                w->last_begin_ns = s->begin_ns;
        }
        log->rows++;
        return 0;
}

int frames_log_add_row(FramesLog *log, int64_t window, const FramesRow *row) {
        FramesStagedRow s;

        frames_row_stage(window, row, &s);
        return frames_log_add_staged(log, &s);
}

int64_t frames_window_latency(const FramesWindow *w, size_t i, FramesLatency l) {
        int32_t v = w->rows[i].latency_ns[l];
        size_t lo = 0, hi = w->n_wide;

        if (v == FRAMES_LATENCY_NONE)
                return FRAMES_NO_TIME;
        if (v != FRAMES_LATENCY_WIDE)
                return v;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const FramesWide *x = &w->wide[mid];

                if (x->row < i || (x->row == i && x->latency < l))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* Always there: a row is marked wide only with its value kept. */
        return lo < w->n_wide && w->wide[lo].row == i && w->wide[lo].latency == l ? w->wide[lo].value_ns :
                FRAMES_NO_TIME;
}

/* One latency of the rows (the values known of it) to spread: how many there were. */
static size_t column(const FramesWindow *w, int64_t *values, FramesLatency l, FramesSpread *ret) {
        size_t n = 0;

        for (size_t i = 0; i < w->n_rows; i++) {
                int32_t v = w->rows[i].latency_ns[l];

                if (v == FRAMES_LATENCY_WIDE)
                        values[n++] = frames_window_latency(w, i, l);
                else if (v != FRAMES_LATENCY_NONE)
                        values[n++] = v;
        }
        frames_spread(values, n, ret);
        return n;
}

static size_t drawn_to_presented(const FramesWindow *w, int64_t *values, FramesSpread *ret) {
        size_t n = 0;

        for (size_t i = 0; i < w->n_rows; i++) {
                /* Presented only when drawn. */
                int64_t v = w->frames[i].present_ns != FRAMES_NO_TIME ?
                        diff(w->frames[i].present_ns, w->frames[i].desired_ns) : FRAMES_NO_TIME;

                if (v != FRAMES_NO_TIME)
                        values[n++] = v;
        }
        frames_spread(values, n, ret);
        return n;
}

int frames_desktop_stats_compute(const FramesWindow *w, FramesDesktopStats *ret) {
        FramesDesktopStats d = { .n_rows = w->n_rows, .client_fps = NAN };
        int64_t *values = frames_array_new(w->n_rows, sizeof(int64_t), false);

        if (!values)
                return -ENOMEM;
        for (size_t i = 0; i < w->n_rows; i++) {
                const FramesWindowRow *row = &w->rows[i];

                d.n_drawn += w->frames[i].desired_ns != FRAMES_NO_TIME;
                d.n_presented += w->frames[i].present_ns != FRAMES_NO_TIME;
                d.n_clock_identity += !!(row->flags & FRAMES_ROW_IDENTITY);
                d.n_causal += !!(row->flags & FRAMES_ROW_CAUSAL);
                d.n_causal_outside += !!(row->flags & FRAMES_ROW_CAUSAL_OUTSIDE);
                d.wayland |= !!(row->flags & FRAMES_ROW_WAYLAND);
                d.n_discarded += !!(row->flags & FRAMES_ROW_DISCARDED);
                d.n_vsync += !!(row->flags & FRAMES_ROW_VSYNC);
                d.n_hw_clock += !!(row->flags & FRAMES_ROW_HW_CLOCK);
                d.n_hw_completion += !!(row->flags & FRAMES_ROW_HW_COMPLETION);
                d.n_zero_copy += !!(row->flags & FRAMES_ROW_ZERO_COPY);
        }
        d.n_client = w->n_begun;
        if (w->n_begun >= 2 && w->last_begin_ns > w->first_begin_ns)
                d.client_fps = (double) (w->n_begun - 1) / ((double) (w->last_begin_ns - w->first_begin_ns) / 1e9);
        /* One scratch array for every column, in turn. */
        d.n_end_to_drawn = column(w, values, FRAMES_END_TO_DRAWN, &d.end_to_drawn);
        d.n_drawn_to_presented = drawn_to_presented(w, values, &d.drawn_to_presented);
        d.n_drawn_message = column(w, values, FRAMES_DRAWN_MESSAGE, &d.drawn_message);
        d.n_timings_message = column(w, values, FRAMES_TIMINGS_MESSAGE, &d.timings_message);
        d.n_clock = column(w, values, FRAMES_CLOCK_OFFSET, &d.clock_offset);
        frames_array_free(values, w->n_rows + (w->n_rows == 0), sizeof(int64_t));
        *ret = d;
        return 0;
}

bool frames_desktop_stats_any(const FramesDesktopStats *d) {
        return !isnan(d->client_fps) || d->n_end_to_drawn > 0 || d->n_drawn_to_presented > 0 ||
               d->n_drawn_message > 0 || d->n_timings_message > 0 || d->n_clock > 0;
}
