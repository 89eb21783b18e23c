/* SPDX-License-Identifier: MIT */

/* The sections of a report: Android's merged series when the inputs had any Android dump,
 * then each window of the frame log in the order it first appeared. */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "frames-report.h"

/* From this many rows a window's desktop figures are computed on a thread of their own, beside
 * its series and their statistics: each reads the rows alone, and each takes a third of a
 * second for a few million. */
#define DESKTOP_THREAD_MIN_ROWS 100000

typedef struct DesktopJob {
        const FramesWindow *window;
        FramesDesktopStats stats;
        int r;
} DesktopJob;

static void *desktop_job_run(void *userdata) {
        DesktopJob *job = userdata;

        job->r = frames_desktop_stats_compute(job->window, &job->stats);
        return NULL;
}

static int add_section(FramesReport *r, const FramesSection *s) {
        FramesSection *sections = reallocarray(r->sections, r->n_sections + 1, sizeof(*sections));

        if (!sections)
                return -ENOMEM;
        r->sections = sections;
        r->sections[r->n_sections++] = *s;
        return 0;
}

static int android_section(FramesReport *r, const FramesLog *log, int64_t default_refresh_ns) {
        FramesSection s = {
                .window = FRAMES_NO_WINDOW,
                .timed_by = log->completed_only ? FRAMES_TIMED_BY_COMPLETED : FRAMES_TIMED_BY_ACTUAL_PRESENT,
                .rows = log->android_rows,
                .series = log,
        };
        int k;

        if (frames_stats_compute(log->frames, log->n_frames, default_refresh_ns, &s.stats) < 0)
                return -ENOMEM;
        k = add_section(r, &s);
        if (k < 0)
                frames_stats_done(&s.stats);
        return k;
}

static int window_section(FramesReport *r, const FramesWindow *w, int64_t default_refresh_ns) {
        FramesSection s = {
                .window = w->id,
                .desktop = true,
                .rows = w->n_rows,
                .window_rows = w,
        };
        DesktopJob job = { .window = w };
        bool threaded = false;
        pthread_t thread;
        int k;

        /* Without a thread (none to be had, or a small window), the same in turn. */
        if (w->n_rows >= DESKTOP_THREAD_MIN_ROWS)
                threaded = pthread_create(&thread, NULL, desktop_job_run, &job) == 0;
        k = frames_window_series(w, &s.owned, &s.timed_by);
        if (k >= 0) {
                s.series = s.owned;
                s.not_drawn = w->n_rows - s.owned->rows;
                k = frames_stats_compute(s.owned->frames, s.owned->n_frames, default_refresh_ns, &s.stats);
        }
        if (threaded)
                (void) pthread_join(thread, NULL);
        else
                desktop_job_run(&job);
        if (k >= 0 && job.r < 0) {
                frames_stats_done(&s.stats);
                k = job.r;
        }
        if (k < 0) {
                frames_log_free(s.owned);
                return k;
        }
        s.desktop_stats = job.stats;
        k = add_section(r, &s);
        if (k < 0) {
                frames_stats_done(&s.stats);
                frames_log_free(s.owned);
                return k;
        }
        r->pending += s.owned->pending;
        r->dropped += s.owned->dropped;
        return 0;
}

int frames_report_new(const FramesLog *log, const char *format, int64_t default_refresh_ns,
                      int64_t only_window, FramesReport **ret) {
        FramesReport *r = calloc(1, sizeof(*r));
        bool found = false;
        int k = 0;

        if (!r)
                return -ENOMEM;
        *r = (FramesReport) {
                .format = format,
                .dumps = log->dumps,
                .rows = log->rows,
                .pending = log->pending,
                .dropped = log->dropped,
        };
        /* An input without a single row still gets its (empty) section, as before windows. */
        if (only_window == FRAMES_NO_WINDOW && (log->android_rows > 0 || log->n_windows == 0))
                k = android_section(r, log, default_refresh_ns);
        for (size_t i = 0; i < log->n_windows && k >= 0; i++) {
                if (only_window != FRAMES_NO_WINDOW && log->windows[i].id != only_window)
                        continue;
                found = true;
                k = window_section(r, &log->windows[i], default_refresh_ns);
        }
        if (k >= 0 && only_window != FRAMES_NO_WINDOW && !found)
                k = -ENOENT;
        if (k >= 0 && only_window != FRAMES_NO_WINDOW) {
                /* The input line then speaks of that window's rows alone. */
                r->rows = r->sections[0].rows;
                r->pending = r->sections[0].series->pending;
                r->dropped = r->sections[0].series->dropped;
        }
        if (k < 0) {
                frames_report_free(r);
                return k;
        }
        *ret = r;
        return 0;
}

FramesReport *frames_report_free(FramesReport *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_sections; i++) {
                frames_stats_done(&r->sections[i].stats);
                frames_log_free(r->sections[i].owned);
        }
        free(r->sections);
        free(r);
        return NULL;
}

bool frames_report_any(const FramesReport *r) {
        for (size_t i = 0; i < r->n_sections; i++) {
                const FramesSection *s = &r->sections[i];

                if (s->stats.n_frames >= 2 || s->stats.n_latency > 0 || s->stats.n_ready > 0 ||
                    (s->desktop && frames_desktop_stats_any(&s->desktop_stats)))
                        return true;
        }
        return false;
}
