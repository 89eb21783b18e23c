/* SPDX-License-Identifier: MIT */

/* The statistics of timeconv frames (frames/frames-stats.c, frames-janks.c) against answers
 * worked out by hand: on the dumps of tests/frames/data (their rows are in the comments of
 * test-frames-parse.c and in the files) and on series built here.
 * usage: test-frames-stats DATA_DIR */

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames-desktop.h"
#include "frames-report.h"
#include "frames-stats.h"
#include "tap.h"

#define MS INT64_C(1000000)

static const char *data_dir;

static void is_near(double got, double want, const char *what, const char *name) {
        bool pass = isnan(want) ? isnan(got) : fabs(got - want) <= 1e-6 * fmax(1, fabs(want));

        ok(pass, "%s: %s = %.6f", what, name, want);
        if (!pass)
                diag("got %.9f", got);
}

static int load(const char *name, FramesLog **ret) {
        char path[4096], *text = malloc(1 << 16);
        FramesError error = {};
        size_t size = 0;
        FILE *f;
        int r;

        snprintf(path, sizeof(path), "%s/%s", data_dir, name);
        f = fopen(path, "re");
        if (!f || !text) {
                free(text);
                if (f)
                        fclose(f);
                return -ENOENT;
        }
        size = fread(text, 1, 1 << 16, f);
        fclose(f);
        r = frames_log_new(ret);
        if (r >= 0)
                r = frames_parse_text(*ret, text, size, &error);
        free(text);
        return r;
}

typedef struct Want {
        const char *file;
        int64_t default_refresh_ms;
        size_t frames;
        double fps, mean, p50, p90, p99, min, max, jitter;
        double latency_mean, latency_max, ready_mean, ready_max;
        int64_t late, perfdog_jank, perfdog_bigjank, chromium;
} Want;

static void check_file(const Want *w) {
        FramesLog *log = NULL, *series = NULL;
        const FramesLog *frames;
        FramesTimedBy by;
        FramesStats s;
        int r = load(w->file, &log);

        /* A frame log's one window stands for the log. */
        if (r >= 0 && log->n_windows == 1 && log->android_rows == 0)
                r = frames_window_series(&log->windows[0], &series, &by);
        frames = series ? series : log;
        if (r >= 0)
                r = frames_stats_compute(frames->frames, frames->n_frames, w->default_refresh_ms * MS, &s);
        ok(r == 0, "%s: computes", w->file);
        if (r < 0) {
                frames_log_free(log);
                return;
        }
        is_int(s.n_frames, w->frames, "frames");
        is_near(s.fps, w->fps, w->file, "fps");
        is_near(s.interval.mean_ms, w->mean, w->file, "interval mean");
        is_near(s.interval.p50_ms, w->p50, w->file, "interval p50");
        is_near(s.interval.p90_ms, w->p90, w->file, "interval p90");
        is_near(s.interval.p99_ms, w->p99, w->file, "interval p99");
        is_near(s.interval.min_ms, w->min, w->file, "interval min");
        is_near(s.interval.max_ms, w->max, w->file, "interval max");
        is_near(s.jitter_ms, w->jitter, w->file, "jitter");
        is_near(s.latency_mean_ms, w->latency_mean, w->file, "present latency mean");
        is_near(s.latency_max_ms, w->latency_max, w->file, "present latency max");
        is_near(s.ready_mean_ms, w->ready_mean, w->file, "ready->present mean");
        is_near(s.ready_max_ms, w->ready_max, w->file, "ready->present max");
        is_int(s.late_frames, w->late, "late frames");
        is_int(s.perfdog_jank, w->perfdog_jank, "PerfDog Jank");
        is_int(s.perfdog_bigjank, w->perfdog_bigjank, "PerfDog BigJank");
        is_int(s.chromium_jank, w->chromium, "Chromium jank");
        frames_stats_done(&s);
        frames_log_free(series);
        frames_log_free(log);
}

static void is_spread(const FramesSpread *v, size_t n, size_t want_n, const double want[6], const char *what) {
        ok(n == want_n, "%s: %zu frames", what, want_n);
        is_near(v->mean_ms, want[0], what, "mean");
        is_near(v->p50_ms, want[1], what, "p50");
        is_near(v->p90_ms, want[2], what, "p90");
        is_near(v->p99_ms, want[3], what, "p99");
        is_near(v->min_ms, want[4], what, "min");
        is_near(v->max_ms, want[5], what, "max");
}

/* desktop.jsonl, window 0x200003: begun at 1000 1016 1032 1048 1064 ms, the third never drawn;
 * end -> drawn 1 1 17 17; FRAME_DRAWN arrived 1 2 1 -1 ms after drawn (the last before it:
 * outside its causal window); FRAME_TIMINGS 18 ms after each; the last drawn time as sent
 * is 0.5 ms off its conversion, the others the same. */
static void test_desktop(void) {
        FramesReport *report = NULL;
        FramesLog *log = NULL;
        int r = load("desktop.jsonl", &log);

        if (r >= 0)
                r = frames_report_new(log, "frame log", 0, FRAMES_NO_WINDOW, &report);
        ok(r == 0 && report->n_sections == 2, "desktop.jsonl: a section per window");
        if (r == 0 && report->n_sections == 2) {
                const FramesSection *a = &report->sections[0], *b = &report->sections[1];
                const FramesDesktopStats *d = &a->desktop_stats;

                ok(a->desktop && a->window == 0x200003 && a->timed_by == FRAMES_TIMED_BY_DRAWN &&
                   a->rows == 5 && a->not_drawn == 1, "window 0x200003: 5 rows, 1 never drawn, timed by drawn");
                is_int(a->stats.n_frames, 4, "window 0x200003: 4 frames");
                is_near(a->stats.fps, 3 / 0.080, "window 0x200003", "fps (drawn 1002 to 1082 ms)");
                is_near(d->client_fps, 4 / 0.064, "window 0x200003", "client fps (begun 1000 to 1064 ms)");
                is_spread(&d->end_to_drawn, d->n_end_to_drawn, 4, (double[]) { 9, 1, 17, 17, 1, 17 },
                          "end->drawn");
                is_spread(&d->drawn_message, d->n_drawn_message, 4, (double[]) { 0.75, 1, 2, 2, -1, 2 },
                          "FRAME_DRAWN message");
                is_spread(&d->timings_message, d->n_timings_message, 4, (double[]) { 18, 18, 18, 18, 18, 18 },
                          "FRAME_TIMINGS message");
                is_int(d->n_drawn_to_presented, 0, "drawn->presented: none");
                ok(d->n_clock == 4 && d->n_clock_identity == 3, "compositor clock: identity on 3 of 4");
                ok(d->n_causal == 4 && d->n_causal_outside == 1, "causality: 1 of 4 outside");
                ok(b->window == 0x400005 && b->stats.n_frames == 3, "window 0x400005: 3 frames");
                is_near(b->stats.fps, 2 / 0.064, "window 0x400005", "fps");
                ok(frames_report_any(report), "something was computed");
        }
        frames_report_free(report);
        report = NULL;
        if (r == 0)
                r = frames_report_new(log, "frame log", 0, 0x400005, &report);
        ok(r == 0 && report->n_sections == 1 && report->sections[0].window == 0x400005 && report->rows == 3,
           "--window 0x400005: its section alone, its rows counted");
        frames_report_free(report);
        report = NULL;
        is_int(frames_report_new(log, "frame log", 0, 0x1234, &report), -ENOENT, "a window not in the log: -ENOENT");
        frames_log_free(log);
}

static void test_files(void) {
        static const Want wants[] = {
                /* Intervals 16 16 32 16 16: jitter sqrt((4 * 3.2^2 + 12.8^2) / 5) = 6.4; the
                 * 32 after a 16 is round(16 / 16) = 1 Chromium jank; latencies 10 10 10 26 10 10,
                 * one above a refresh period; ready->present 5 6 2 4 5 (the last has none). */
                { "sf-basic.txt", 0, 6, 5 / 0.096, 19.2, 16, 32, 32, 16, 32, 6.4,
                  76.0 / 6, 26, 4.4, 6, 1, 0, 0, 1 },
                /* Two overlapping dumps: five frames 16 ms apart, none counted twice. */
                { "sf-overlap.txt", 0, 5, 62.5, 16, 16, 16, 16, 16, 16, 0,
                  10, 10, 5.4, 8, 0, 0, 0, 0 },
                /* 16 ms, then 8 ms refresh: intervals 16 16 8 8 8 12; the last grows by half an
                 * 8 ms period, which rounds (away from zero) to one: a Chromium jank only with the
                 * period of its own dump. Latency 10 is late at 8 ms, not at 16. */
                { "sf-refresh-change.txt", 0, 7, 6 / 0.068, 68.0 / 6, 8, 16, 16, 8, 16,
                  sqrt((2 * pow(16 - 68.0 / 6, 2) + 3 * pow(8 - 68.0 / 6, 2) + pow(12 - 68.0 / 6, 2)) / 6),
                  52.0 / 7, 10, NAN, NAN, 1, 0, 0, 1 },
                /* Android 12+: intervals 16 32 16 16; latencies 32 32 48 32 32, all late. */
                { "gfxinfo-android12.txt", 0, 5, 50, 20, 16, 32, 32, 16, 32, sqrt(48),
                  35.2, 48, 20.8, 24, 5, 0, 0, 1 },
                /* Android 6-11 has no refresh period: late frames and Chromium cannot be told... */
                { "gfxinfo-android10.txt", 0, 4, 3 / 0.070, 70.0 / 3, 10, 50, 50, 10, 50,
                  sqrt((2 * pow(10 - 70.0 / 3, 2) + pow(50 - 70.0 / 3, 2)) / 3),
                  64.0 / 3, 42, NAN, NAN, -1, 0, 0, -1 },
                /* ...unless given one: 42 ms is late at 16 ms; 50 after 10 is round(2.5) = 3. */
                { "gfxinfo-android10.txt", 16, 4, 3 / 0.070, 70.0 / 3, 10, 50, 50, 10, 50,
                  sqrt((2 * pow(10 - 70.0 / 3, 2) + pow(50 - 70.0 / 3, 2)) / 3),
                  64.0 / 3, 42, NAN, NAN, 1, 0, 0, 1 },
                /* The frame log: 16 and 32 ms; latency 16 is not more than the 16 ms period. */
                { "frames.jsonl", 0, 3, 2 / 0.048, 24, 16, 32, 32, 16, 32, 8,
                  16, 16, NAN, NAN, 0, 0, 0, 1 },
                /* No frames: nothing can be computed. */
                { "sf-zero.txt", 0, 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
                  NAN, NAN, NAN, NAN, -1, -1, -1, -1 },
        };

        for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
                check_file(&wants[i]);
}

/* Frames 1 s + the running sum of intervals_ns, no desired or ready time. */
static Frame *series(const int64_t *intervals_ns, size_t n, int64_t refresh_ns) {
        Frame *frames = calloc(n + 1, sizeof(*frames));
        int64_t t = 1000 * MS;

        for (size_t i = 0; frames && i <= n; i++) {
                frames[i] = (Frame) { t, FRAMES_NO_TIME, FRAMES_NO_TIME, refresh_ns };
                t += i < n ? intervals_ns[i] : 0;
        }
        return frames;
}

static void test_perfdog(void) {
        /* ms: a Jank (100 > 2 * 16, > 83.3), a BigJank (130 > 125), 84 (> 83.3) and 83 (not),
         * 90 against three 40s (> 80), exactly twice the mean (not), exactly 125 (not big), and
         * a long first interval that has no three before it. */
        static const int64_t d_ms[] = { 200, 16, 16, 16, 100, 16, 16, 16, 130, 16, 16, 16, 84,
                                        16, 16, 16, 83, 40, 40, 40, 90, 90, 90, 90, 180, 16, 16,
                                        16, 125 };
        static const size_t jank_at[] = { 4, 8, 12, 20, 28 };
        size_t n = sizeof(d_ms) / sizeof(d_ms[0]);
        int64_t d[sizeof(d_ms) / sizeof(d_ms[0])], jank = -1, bigjank = -1;
        uint8_t marks[sizeof(d_ms) / sizeof(d_ms[0])] = {};
        bool marks_right = true;

        for (size_t i = 0; i < n; i++)
                d[i] = d_ms[i] * MS;
        frames_janks_perfdog(d, n, marks, &jank, &bigjank);
        is_int(jank, 5, "PerfDog: Janks");
        is_int(bigjank, 1, "PerfDog: BigJanks (130 ms only)");
        for (size_t i = 0, k = 0; i < n; i++) {
                bool want = k < 5 && jank_at[k] == i;

                k += want;
                marks_right &= !!(marks[i] & FRAMES_MARK_PERFDOG_JANK) == want;
                marks_right &= !!(marks[i] & FRAMES_MARK_PERFDOG_BIGJANK) == (i == 8);
        }
        ok(marks_right, "PerfDog: the janks are marked where they are");

        /* Just over two movie frames: 83.333334 ms is a Jank, 83.333333 is not. */
        d[0] = d[1] = d[2] = 1 * MS;
        d[3] = 83333334;
        frames_janks_perfdog(d, 4, marks, &jank, &bigjank);
        is_int(jank, 1, "PerfDog: 83.333334 ms is over two movie frames");
        d[3] = 83333333;
        frames_janks_perfdog(d, 4, marks, &jank, &bigjank);
        is_int(jank, 0, "PerfDog: 83.333333 ms is not");
}

static void test_chromium(void) {
        /* P = 16 ms. Growth in periods: +0.5 -> 1 (jank), 0, +0.4375 -> 0, -0.94 -> -1; 7 ms is
         * under half a period (left out), so 40 grows from 16: +1.5 -> 2 (jank); 8 ms is half a
         * period (kept); +19.5 -> 20 (not), then +19.4 -> 19 (jank). */
        static const int64_t d_us[] = { 16000, 16000, 24000, 24000, 31000, 16000, 7000, 40000, 8000,
                                        320000, 16000, 326400 };
        size_t n = sizeof(d_us) / sizeof(d_us[0]);
        int64_t d[sizeof(d_us) / sizeof(d_us[0])], p[sizeof(d_us) / sizeof(d_us[0])];
        uint8_t marks[sizeof(d_us) / sizeof(d_us[0])] = {};

        for (size_t i = 0; i < n; i++) {
                d[i] = d_us[i] * 1000;
                p[i] = 16 * MS;
        }
        is_int(frames_janks_chromium(d, p, n, marks), 3, "Chromium: janks");
        ok(marks[2] == FRAMES_MARK_CHROMIUM && marks[7] == FRAMES_MARK_CHROMIUM &&
           marks[11] == FRAMES_MARK_CHROMIUM && !marks[9] && !marks[4] && !marks[5],
           "Chromium: marked at 2, 7 and 11 only");

        memset(p, 0, sizeof(p));
        is_int(frames_janks_chromium(d, p, n, marks), -1, "Chromium: no refresh period, no count");
        /* Intervals of unknown period are left out: 16 (?) 32 grows from 16 by one period. */
        p[0] = p[2] = 16 * MS;
        d[0] = 16 * MS;
        d[1] = 100 * MS;
        d[2] = 32 * MS;
        is_int(frames_janks_chromium(d, p, 3, marks), 1, "Chromium: unknown periods left out");
}

static void test_series(void) {
        int64_t d[100];
        Frame *frames;
        FramesStats s;

        /* Intervals 1..100 ms in a scrambled order: nearest-rank percentiles are 50, 90, 99; the
         * standard deviation of 1..100 is sqrt((100^2 - 1) / 12). */
        for (size_t i = 0; i < 100; i++)
                d[i] = (int64_t) ((i * 37) % 100 + 1) * MS;
        frames = series(d, 100, 0);
        if (frames && frames_stats_compute(frames, 101, 0, &s) == 0) {
                is_near(s.interval.p50_ms, 50, "1..100 ms", "p50");
                is_near(s.interval.p90_ms, 90, "1..100 ms", "p90");
                is_near(s.interval.p99_ms, 99, "1..100 ms", "p99");
                is_near(s.interval.mean_ms, 50.5, "1..100 ms", "mean");
                is_near(s.jitter_ms, sqrt((100.0 * 100 - 1) / 12), "1..100 ms", "jitter");
                is_near(s.fps, 100 / 5.05, "1..100 ms", "fps");
                is_int(s.n_seconds, 5, "1..100 ms: five whole seconds");
                frames_stats_done(&s);
        } else
                ok(0, "1..100 ms: computes");
        free(frames);

        /* Every 10 ms for 2.5 s, less the 19 frames from 1.51 to 1.69 s: 81 frames in the first
         * second after the first frame, 100 in the second; the half second left is not one. */
        frames = calloc(251, sizeof(*frames));
        if (frames) {
                size_t n = 0;

                for (int64_t k = 0; k <= 250; k++)
                        if (k < 51 || k > 69)
                                frames[n++] = (Frame) { 1000 * MS + k * 10 * MS, FRAMES_NO_TIME,
                                                        FRAMES_NO_TIME, 10 * MS };
                if (frames_stats_compute(frames, n, 0, &s) == 0) {
                        ok(s.n_seconds == 2 && s.fps_per_second[0] == 81 && s.fps_per_second[1] == 100,
                           "per second: 81 then 100");
                        is_near(s.fps, (double) (n - 1) / 2.5, "every 10 ms", "fps over the span");
                        frames_stats_done(&s);
                } else
                        ok(0, "per second: computes");
        }
        free(frames);

        /* One frame: its latency is known, nothing else. */
        {
                Frame one = { 1000 * MS, 990 * MS, FRAMES_NO_TIME, 16 * MS };

                if (frames_stats_compute(&one, 1, 0, &s) == 0) {
                        ok(isnan(s.fps) && isnan(s.interval.mean_ms) && isnan(s.jitter_ms) &&
                           s.perfdog_jank == -1 && s.chromium_jank == -1 && !s.marks,
                           "one frame: no rate, intervals or janks");
                        is_near(s.latency_mean_ms, 10, "one frame", "latency");
                        frames_stats_done(&s);
                } else
                        ok(0, "one frame: computes");
        }
}

/* The report of text as JSON, in a string to free; NULL when it does not parse. */
static char *report_of(const char *text, size_t size) {
        FramesReport *report = NULL;
        FramesLog *log = NULL;
        FramesError error;
        char *json = NULL;
        size_t n = 0;
        FILE *f;

        if (frames_log_new(&log) < 0 || frames_parse_text(log, text, size, &error) < 0 ||
            frames_report_new(log, "frame log", 0, FRAMES_NO_WINDOW, &report) < 0) {
                frames_log_free(log);
                return NULL;
        }
        f = open_memstream(&json, &n);
        if (f) {
                frames_report_json(f, report);
                fclose(f);
        }
        frames_report_free(report);
        frames_log_free(log);
        return json;
}

/* Each line of text as jansson writes it with blanks and its keys sorted, and a blank before
 * it: a log edited by hand, which the general parser reads. */
static char *reserialise(const char *text, size_t size) {
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);

        if (!f)
                abort();
        while (size > 0) {
                const char *nl = memchr(text, '\n', size);
                size_t k = nl ? (size_t) (nl - text) : size;
                json_t *o = json_loadb(text, k, 0, NULL);
                char *line = o ? json_dumps(o, JSON_SORT_KEYS) : NULL;

                fprintf(f, " %s\n", line ? line : "");
                free(line);
                json_decref(o);
                text += k + !!nl;
                size -= k + !!nl;
        }
        fclose(f);
        return out;
}

/* A log as libtimeconv writes it, of two windows, with numbers of every size, negative ones
 * and nulls: what the fast path reads. */
static char *canonical_log(size_t rows) {
        uint64_t x = 88172645463325252u;
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        int64_t t = 1000 * MS;

        if (!f)
                abort();
        for (size_t i = 0; i < rows; i++) {
                int64_t drawn = t + 4 * MS, v[6];

                for (size_t k = 0; k < 6; k++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        /* 1 to 18 digits, some negative. */
                        v[k] = (int64_t) (x % 1000000000000000000u) >> (x >> 58);
                        v[k] = x % 7 == 0 ? -v[k] : v[k];
                }
                char presented[32] = "null", drawn_text[32] = "null";

                /* Now and then not presented, or never drawn. */
                if (i % 11 != 0)
                        snprintf(presented, sizeof(presented), "%" PRId64, drawn + 12 * MS + v[3] % MS);
                if (i % 13 != 0)
                        snprintf(drawn_text, sizeof(drawn_text), "%" PRId64, drawn);
                fprintf(f, "{\"window\":%d,\"counter\":%zu,\"begin_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ","
                        "\"drawn_x11_us\":%" PRId64 ",\"presentation_offset_us\":%" PRId64 ",\"drawn_ns\":%s,"
                        "\"drawn_uncertainty_ns\":1500,\"presented_ns\":%s,\"presented_uncertainty_ns\":1500,"
                        "\"refresh_interval_ns\":16666667,\"frame_delay_us\":%" PRId64 ","
                        "\"drawn_received_ns\":%" PRId64 ",\"timings_received_ns\":null}\n",
                        i % 5 == 4 ? 0x400005 : 0x200003, 4 * (i + 1), t,
                        /* A negative end now and then: not a time, but a number to read. */
                        i % 17 == 0 ? -1 - (v[0] < 0 ? -v[0] : v[0]) % MS : t + v[0] % (2 * MS),
                        drawn / 1000 + v[1] % 3, v[2], drawn_text, presented, v[4], drawn + v[5] % MS);
                t += 16 * MS + (int64_t) (x % 3) * MS;
        }
        fclose(f);
        return out;
}

/* Whether two texts give the same rows, window by window. */
static bool same_rows(const char *a, size_t size_a, const char *b, size_t size_b) {
        FramesLog *x = NULL, *y = NULL;
        FramesError error;
        bool same;

        if (frames_log_new(&x) < 0 || frames_log_new(&y) < 0)
                abort();
        same = frames_parse_text(x, a, size_a, &error) == 0 && frames_parse_text(y, b, size_b, &error) == 0 &&
               x->n_windows == y->n_windows && x->rows == y->rows && x->rows > 0;
        for (size_t i = 0; same && i < x->n_windows; i++) {
                const FramesWindow *u = &x->windows[i], *v = &y->windows[i];

                same = u->id == v->id && u->n_rows == v->n_rows && u->n_begun == v->n_begun &&
                       u->first_begin_ns == v->first_begin_ns && u->last_begin_ns == v->last_begin_ns &&
                       memcmp(u->rows, v->rows, u->n_rows * sizeof(*u->rows)) == 0 &&
                       memcmp(u->frames, v->frames, u->n_rows * sizeof(*u->frames)) == 0 &&
                       u->n_wide == v->n_wide;
                for (size_t k = 0; same && k < u->n_wide; k++)
                        same = u->wide[k].row == v->wide[k].row && u->wide[k].latency == v->wide[k].latency &&
                               u->wide[k].value_ns == v->wide[k].value_ns;
        }
        frames_log_free(x);
        frames_log_free(y);
        return same;
}

/* The same statistics from a log as libtimeconv writes it (its rows read by the fast path) and
 * from the same log with blanks and other key order (read by jansson). */
static void test_canonical_and_edited(void) {
        static const char *const files[] = { "desktop.jsonl", "frames.jsonl" };

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) + 1; i++) {
                char path[4096], *text = NULL, *edited, *a, *b;
                const char *name = i < sizeof(files) / sizeof(files[0]) ? files[i] : "generated";
                size_t size = 0;

                if (i < sizeof(files) / sizeof(files[0])) {
                        FILE *f;

                        snprintf(path, sizeof(path), "%s/%s", data_dir, files[i]);
                        text = malloc(1 << 16);
                        f = fopen(path, "re");
                        if (!f || !text)
                                abort();
                        size = fread(text, 1, 1 << 16, f);
                        fclose(f);
                } else {
                        text = canonical_log(3000);
                        size = strlen(text);
                }
                edited = reserialise(text, size);
                a = report_of(text, size);
                b = report_of(edited, strlen(edited));
                ok(a && b && strcmp(a, b) == 0 && strcmp(edited, text) != 0,
                   "%s: the same report from the log as written and as edited", name);
                ok(same_rows(text, size, edited, strlen(edited)), "%s: the same rows, every field", name);
                if (!a || !b || strcmp(a, b) != 0)
                        diag("written: %s\nedited: %s", a ? a : "(none)", b ? b : "(none)");
                free(a);
                free(b);
                free(edited);
                free(text);
        }
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 1, "DATA_DIR");
        data_dir = argv[1];
        test_files();
        test_desktop();
        test_perfdog();
        test_chromium();
        test_series();
        test_canonical_and_edited();
        return done_testing();
}
