/* SPDX-License-Identifier: MIT */
#pragma once

/* What every benchmark needs: percentiles and the clock pair. Two clock floors, two names, in
 * every benchmark's JSON:
 *   clock_pair_ns: two back-to-back clock_gettime, t1 - t0, the least of many: what a bracket
 *                  around anything costs at least (a bracketed sample's floor);
 *   clock_read_ns: one clock_gettime, timed over a batch of calls per pair of timer reads: what
 *                  a call that reads the clock once costs at least (a "now" figure's floor).
 * Header-only: each benchmark is one program. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "time-util.h"

static inline int bench_cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return (x > y) - (x < y);
}

/* Sorts v in place; the value at rank q (0: the least, 0.5: the median, 1: the largest),
 * rounded to the nearest rank. 0 for no values. */
static inline int64_t bench_percentile(int64_t *v, size_t n, double q) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), bench_cmp_i64);
        return v[(size_t) (q * (double) (n - 1) + 0.5)];
}

/* clock_pair_ns: two back-to-back reads of clock, tries times; the least and the median gap.
 * -ENOMEM. */
static inline int bench_clock_pair(clockid_t clock, size_t tries, int64_t *ret_min_ns, int64_t *ret_p50_ns) {
        int64_t *gaps = malloc(tries * sizeof(*gaps));

        if (!gaps || tries == 0) {
                free(gaps);
                return -ENOMEM;
        }
        for (size_t i = 0; i < tries; i++) {
                int64_t t0 = clock_now_ns(clock);
                int64_t t1 = clock_now_ns(clock);

                gaps[i] = t1 - t0;
        }
        *ret_p50_ns = bench_percentile(gaps, tries, 0.5);
        *ret_min_ns = gaps[0];
        free(gaps);
        return 0;
}
