/* SPDX-License-Identifier: MIT */

/* The figures of `timeconv frames` over a merged series: frame rate, the spread of the frame
 * intervals, latencies, late frames and janks. Percentiles are by nearest rank (an interval
 * that happened), found by selection rather than sorting: a long capture has millions. Products
 * of intervals go through 128 bits: an interval may be anything up to INT64_MAX. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames-memory.h"
#include "frames-stats.h"

#define NS_PER_S INT64_C(1000000000)
#define NS_PER_MS 1e6
#define SELECT_MAX_ROUNDS 128
#define MOVIE_FRAMES_PER_S 24
#define CHROMIUM_MAX_PERIODS 20

/* The two jank definitions people compare: frames-stats.h says what each counts. */
void frames_janks_perfdog(const int64_t *intervals_ns, size_t n, uint8_t *marks,
                          int64_t *ret_jank, int64_t *ret_bigjank) {
        int64_t jank = 0, bigjank = 0;

        for (size_t i = 3; i < n; i++) {
                __int128 d = intervals_ns[i];
                __int128 three = (__int128) intervals_ns[i - 1] + intervals_ns[i - 2] + intervals_ns[i - 3];

                /* d > 2 * three / 3 and d > 2 movie frames = 2 s / 24, without dividing. */
                if (3 * d <= 2 * three || MOVIE_FRAMES_PER_S * d <= 2 * NS_PER_S)
                        continue;
                jank++;
                marks[i] |= FRAMES_MARK_PERFDOG_JANK;
                if (MOVIE_FRAMES_PER_S * d > 3 * NS_PER_S) {
                        bigjank++;
                        marks[i] |= FRAMES_MARK_PERFDOG_BIGJANK;
                }
        }
        *ret_jank = jank;
        *ret_bigjank = bigjank;
}

/* round(delta / period) with halves away from zero, period > 0. */
static __int128 round_periods(__int128 delta, __int128 period) {
        if (delta >= 0)
                return (2 * delta + period) / (2 * period);
        return -((-2 * delta + period) / (2 * period));
}

/* Chromium's count as it goes, one interval at a time. */
typedef struct ChromiumJanks {
        bool any_period, have_previous;
        int64_t janks, previous;
} ChromiumJanks;

static inline void chromium_step(ChromiumJanks *c, int64_t interval_ns, int64_t refresh_ns, uint8_t *mark) {
        __int128 d = interval_ns, k;

        if (refresh_ns <= 0)
                return;
        c->any_period = true;
        if (2 * d < refresh_ns)
                return;
        if (c->have_previous) {
                k = round_periods(d - c->previous, refresh_ns);
                if (k > 0 && k < CHROMIUM_MAX_PERIODS) {
                        c->janks++;
                        *mark |= FRAMES_MARK_CHROMIUM;
                }
        }
        c->previous = interval_ns;
        c->have_previous = true;
}

int64_t frames_janks_chromium(const int64_t *intervals_ns, const int64_t *refresh_ns, size_t n,
                              uint8_t *marks) {
        ChromiumJanks c = {};

        for (size_t i = 0; i < n; i++)
                chromium_step(&c, intervals_ns[i], refresh_ns[i], &marks[i]);
        return c.any_period ? c.janks : -1;
}

static void swap(int64_t *a, int64_t *b) {
        int64_t t = *a;

        *a = *b;
        *b = t;
}

static int compare_int64(const void *x, const void *y) {
        int64_t a = *(const int64_t *) x, b = *(const int64_t *) y;

        return (a > b) - (a < b);
}

/* Puts the k-th smallest of a[lo..hi] at a[k], the smaller ones before it and the larger after
 * (Hoare's selection with a median-of-three pivot). Input made to defeat the pivot would make
 * it quadratic: after many rounds it sorts what is left instead. */
static void select_kth(int64_t *a, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t k) {
        for (unsigned round = 0; lo < hi; round++) {
                ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
                int64_t pivot;

                if (round == SELECT_MAX_ROUNDS) {
                        qsort(a + lo, (size_t) (hi - lo + 1), sizeof(*a), compare_int64);
                        return;
                }

                if (a[mid] < a[lo])
                        swap(&a[mid], &a[lo]);
                if (a[hi] < a[lo])
                        swap(&a[hi], &a[lo]);
                if (a[hi] < a[mid])
                        swap(&a[hi], &a[mid]);
                pivot = a[mid];
                while (i <= j) {
                        while (a[i] < pivot)
                                i++;
                        while (a[j] > pivot)
                                j--;
                        if (i <= j)
                                swap(&a[i++], &a[j--]);
                }
                if (k <= j)
                        hi = j;
                else if (k >= i)
                        lo = i;
                else
                        return;
        }
}

/* The index of the p-th percentile of m sorted values by nearest rank: ceil(p * m / 100) - 1. */
static size_t rank(unsigned p, size_t m) {
        size_t r = (p * m + 99) / 100;

        return r > 0 ? r - 1 : 0;
}

void frames_spread(int64_t *d, size_t m, FramesSpread *ret) {
        size_t k50 = rank(50, m), k90 = rank(90, m), k99 = rank(99, m);
        int64_t min = INT64_MAX, max = INT64_MIN;
        double sum = 0;

        if (m == 0) {
                *ret = (FramesSpread) { NAN, NAN, NAN, NAN, NAN, NAN };
                return;
        }
        for (size_t i = 0; i < m; i++) {
                sum += (double) d[i];
                min = d[i] < min ? d[i] : min;
                max = d[i] > max ? d[i] : max;
        }
        /* Each selection leaves what is above its rank after it, so the next searches there. */
        select_kth(d, 0, (ptrdiff_t) m - 1, (ptrdiff_t) k50);
        select_kth(d, (ptrdiff_t) k50, (ptrdiff_t) m - 1, (ptrdiff_t) k90);
        select_kth(d, (ptrdiff_t) k90, (ptrdiff_t) m - 1, (ptrdiff_t) k99);
        *ret = (FramesSpread) {
                .mean_ms = sum / (double) m / NS_PER_MS,
                .p50_ms = (double) d[k50] / NS_PER_MS,
                .p90_ms = (double) d[k90] / NS_PER_MS,
                .p99_ms = (double) d[k99] / NS_PER_MS,
                .min_ms = (double) min / NS_PER_MS,
                .max_ms = (double) max / NS_PER_MS,
        };
}

static double jitter_ms(const int64_t *d, size_t m, double mean_ms) {
        double sum = 0;

        for (size_t i = 0; i < m; i++) {
                double e = (double) d[i] / NS_PER_MS - mean_ms;

                sum += e * e;
        }
        return sqrt(sum / (double) m);
}

/* Present latency, ready -> present and late frames: per frame, no intervals needed. */
static void latencies(const Frame *frames, size_t n, int64_t default_refresh_ns, FramesStats *s) {
        double latency_sum = 0, ready_sum = 0;
        int64_t latency_max = INT64_MIN, ready_max = INT64_MIN, late = 0;
        size_t late_known = 0;

        for (size_t i = 0; i < n; i++) {
                const Frame *f = &frames[i];
                int64_t refresh_ns = f->refresh_ns > 0 ? f->refresh_ns : default_refresh_ns;

                if (f->desired_ns != FRAMES_NO_TIME) {
                        int64_t l = f->present_ns - f->desired_ns;

                        s->n_latency++;
                        latency_sum += (double) l;
                        latency_max = l > latency_max ? l : latency_max;
                        if (refresh_ns > 0) {
                                late_known++;
                                late += l > refresh_ns;
                        }
                }
                if (f->ready_ns != FRAMES_NO_TIME) {
                        int64_t l = f->present_ns - f->ready_ns;

                        s->n_ready++;
                        ready_sum += (double) l;
                        ready_max = l > ready_max ? l : ready_max;
                }
                if (refresh_ns > 0) {
                        s->refresh_ns = refresh_ns;
                        if (s->refresh_min_ns == 0 || refresh_ns < s->refresh_min_ns)
                                s->refresh_min_ns = refresh_ns;
                        if (refresh_ns > s->refresh_max_ns)
                                s->refresh_max_ns = refresh_ns;
                }
        }
        s->latency_mean_ms = s->n_latency ? latency_sum / (double) s->n_latency / NS_PER_MS : NAN;
        s->latency_max_ms = s->n_latency ? (double) latency_max / NS_PER_MS : NAN;
        s->ready_mean_ms = s->n_ready ? ready_sum / (double) s->n_ready / NS_PER_MS : NAN;
        s->ready_max_ms = s->n_ready ? (double) ready_max / NS_PER_MS : NAN;
        s->late_frames = late_known ? late : -1;
}

static int per_second(const Frame *frames, size_t n, FramesStats *s) {
        int64_t t0 = frames[0].present_ns, span_ns = frames[n - 1].present_ns - t0;

        /* Whole seconds only: a last partial one would read as a drop in frame rate. A span of
         * years is a broken dump, not a capture: no per-second figures then. */
        if (span_ns / NS_PER_S > FRAMES_MAX_SECONDS) {
                s->per_second_too_long = true;
                return 0;
        }
        s->n_seconds = (size_t) (span_ns / NS_PER_S);
        if (s->n_seconds == 0)
                return 0;
        s->fps_per_second = calloc(s->n_seconds, sizeof(*s->fps_per_second));
        if (!s->fps_per_second)
                return -ENOMEM;
        /* Second k holds the frames presented in (t0 + k s, t0 + (k + 1) s]. */
        for (size_t i = 1; i < n; i++) {
                size_t k = (size_t) ((frames[i].present_ns - t0 - 1) / NS_PER_S);

                if (k < s->n_seconds)
                        s->fps_per_second[k]++;
        }
        return 0;
}

static int intervals(const Frame *frames, size_t n, int64_t default_refresh_ns, FramesStats *s) {
        size_t m = n - 1;
        int64_t *d = frames_array_new(m, sizeof(*d), false);
        ChromiumJanks chromium = {};
        int r = -ENOMEM;

        /* Released by frames_stats_done(), which knows m from n_frames. */
        s->marks = frames_array_new(m, sizeof(*s->marks), true);
        if (!d || !s->marks)
                goto finish;
        for (size_t i = 0; i < m; i++)
                d[i] = frames[i + 1].present_ns - frames[i].present_ns;
        frames_janks_perfdog(d, m, s->marks, &s->perfdog_jank, &s->perfdog_bigjank);
        /* The refresh period of each interval as it goes: no array of them (memory touched for
         * the first time costs more than computing it). */
        for (size_t i = 0; i < m; i++)
                chromium_step(&chromium, d[i],
                              frames[i + 1].refresh_ns > 0 ? frames[i + 1].refresh_ns : default_refresh_ns,
                              &s->marks[i]);
        s->chromium_jank = chromium.any_period ? chromium.janks : -1;
        frames_spread(d, m, &s->interval);      /* reorders d */
        s->jitter_ms = jitter_ms(d, m, s->interval.mean_ms);
        r = per_second(frames, n, s);
finish:
        frames_array_free(d, m, sizeof(*d));
        return r;
}

int frames_stats_compute(const Frame *frames, size_t n_frames, int64_t default_refresh_ns,
                         FramesStats *ret) {
        FramesStats s = {
                .n_frames = n_frames,
                .span_s = NAN,
                .fps = NAN,
                .interval = { NAN, NAN, NAN, NAN, NAN, NAN },
                .jitter_ms = NAN,
                .perfdog_jank = -1,
                .perfdog_bigjank = -1,
                .chromium_jank = -1,
        };
        int r;

        latencies(frames, n_frames, default_refresh_ns, &s);
        if (n_frames >= 2) {
                int64_t span_ns = frames[n_frames - 1].present_ns - frames[0].present_ns;

                s.span_s = (double) span_ns / (double) NS_PER_S;
                s.fps = (double) (n_frames - 1) / s.span_s;
                r = intervals(frames, n_frames, default_refresh_ns, &s);
                if (r < 0) {
                        frames_stats_done(&s);
                        return r;
                }
        }
        *ret = s;
        return 0;
}

void frames_stats_done(FramesStats *s) {
        free(s->fps_per_second);
        if (s->marks)
                frames_array_free(s->marks, s->n_frames - 1, sizeof(*s->marks));
        s->fps_per_second = NULL;
        s->marks = NULL;
}
