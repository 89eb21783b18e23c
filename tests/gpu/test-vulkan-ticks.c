/* SPDX-License-Identifier: MIT */

/* The arithmetic of GPU time (domains/vulkan-ticks.c): tick counts to ns intervals with
 * fractional periods, unwrapping a 36-bit counter, the read window, and burst selection with
 * the adaptive threshold under a deviation distribution that degrades over time. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "burst.h"
#include "tap.h"
#include "vulkan-ticks.h"

/* Periods of real devices (Intel 52.083 and 83.333 ns, AMD 10 and 40 ns, NVIDIA 1 ns) and odd ones. */
static const double periods_ns[] = { 52.083333333333336, 83.33333333333333, 41.666666666666664, 10.0, 40.0,
                                     1.0, 0.5, 0.1, 1.0 / 3.0, 38.46153846153846, 1000.0 };
#define N_PERIODS (sizeof(periods_ns) / sizeof(periods_ns[0]))

static void test_interval_known(void) {
        GpuTicks t;
        int64_t lo, hi;

        is_int(gpu_ticks_init(&t, 52.083333333333336, 36), 0, "init 52.083 ns, 36 bits");
        is_int(t.unit.wrap_bits, 36, "36 valid bits wrap");
        is_int(gpu_ticks_interval(&t.unit, 3, &lo, &hi), 0, "interval of 3 ticks");
        /* 3 ticks = 156.25 ns, +- 26.04: [130.2, 182.3] widened to whole ns. */
        ok(lo == 129 && hi == 183, "3 ticks of 52.083 ns: [129, 183] (got [%lld, %lld])", (long long) lo,
           (long long) hi);
        is_int(gpu_ticks_init(&t, 1.0, 64), 0, "init 1 ns, 64 bits");
        is_int(t.unit.wrap_bits, 0, "64 valid bits: no wrap");
        is_int(gpu_ticks_interval(&t.unit, 1000, &lo, &hi), 0, "interval of 1000 ns ticks");
        ok(lo == 999 && hi == 1001, "1000 ticks of 1 ns: [999, 1001]");

        is_int(gpu_ticks_init(&t, 0.0, 36), -EINVAL, "period 0");
        is_int(gpu_ticks_init(&t, -1.0, 36), -EINVAL, "negative period");
        is_int(gpu_ticks_init(&t, 1.0, 0), -EINVAL, "0 valid bits");
        is_int(gpu_ticks_init(&t, 1.0, 65), -EINVAL, "65 valid bits");
}

/* Every count's interval holds [count - 1/2, count + 1/2] ticks, exactly, and is no wider than
 * a tick and three ns: honest and tight, whatever the period. */
static void test_interval_property(void) {
        static const int64_t counts[] = { 0, 1, 2, 3, 7, 999, 1000001, INT64_C(68719476735), INT64_C(68719476736),
                                          INT64_C(123456789012345), -1, -17 };
        unsigned bad = 0, n = 0;

        for (size_t p = 0; p < N_PERIODS; p++) {
                GpuTicks t;

                if (gpu_ticks_init(&t, periods_ns[p], 64) < 0) {
                        bad++;
                        continue;
                }
                for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
                        long double centre = (long double) counts[i] * periods_ns[p], half = periods_ns[p] / 2.0L;
                        int64_t lo, hi;

                        n++;
                        if (gpu_ticks_interval(&t.unit, counts[i], &lo, &hi) < 0 ||
                            (long double) lo > centre - half || (long double) hi < centre + half ||
                            (long double) (hi - lo) > periods_ns[p] + 3.0L) {
                                diag("period %.17g count %lld: [%lld, %lld]", periods_ns[p], (long long) counts[i],
                                     (long long) lo, (long long) hi);
                                bad++;
                        }
                }
        }
        ok(bad == 0, "%u intervals hold their tick, fractional periods included", n);
}

/* A 36-bit counter of 1 ns ticks wraps every 68.7 s: read it across many wraps, at gaps up to
 * 30 s and with a device clock 150 ppm fast, and the unwrapped count is the truth every time. */
static void test_unwrap_36(void) {
        const uint64_t mask = (UINT64_C(1) << 36) - 1;
        int64_t truth = (INT64_C(1) << 36) - 5000, r_ns = INT64_C(1000) * 1000000000, count;
        uint64_t rng = 88172645463325252u;
        unsigned bad = 0, wraps = 0;
        GpuTicks t;

        is_int(gpu_ticks_init(&t, 1.0, 36), 0, "init 1 ns, 36 bits");
        for (int i = 0; i < 2000; i++) {
                int64_t gap_ns, prev = truth;

                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                gap_ns = (int64_t) (rng % INT64_C(30000000000));
                r_ns += gap_ns;
                truth += gap_ns + gap_ns / 6667;        /* 150 ppm fast */
                wraps += (uint64_t) truth >> 36 != (uint64_t) prev >> 36;

                /* Garbage above the valid bits must not matter. */
                if (gpu_ticks_unwrap(&t, ((uint64_t) truth & mask) | (UINT64_C(0xdead) << 40), r_ns, &count) < 0 ||
                    count != (i == 0 ? (int64_t) ((uint64_t) truth & mask) : truth))
                        bad++;
                if (i == 0)
                        truth = count;          /* the first reading defines the count */
        }
        is_int(bad, 0, "2000 reads of a 36-bit counter unwrap to the truth");
        ok(wraps > 100, "across %u wraps", wraps);

        /* Fractional period: 52.083 ns ticks, 36 bits wrap every 3579 s; a gap of two wraps and a
         * half still lands right, because the hint follows the reference time. */
        is_int(gpu_ticks_init(&t, 52.083333333333336, 36), 0, "init 52.083 ns, 36 bits");
        is_int(gpu_ticks_unwrap(&t, 1000, 0, &count), 0, "first read");
        is_int(count, 1000, "first read is the counter");
        is_int(gpu_ticks_unwrap(&t, (1000 + 2 * (mask + 1) + (mask + 1) / 2 - 77) & mask,
                                (int64_t) ((2.5 * (double) (mask + 1) - 77) * 52.083333333333336), &count), 0,
               "read after two and a half wraps");
        is_int(count, (int64_t) (1000 + 2 * (mask + 1) + (mask + 1) / 2 - 77), "unwrapped across the gap");
        gpu_ticks_reset(&t);
        is_int(gpu_ticks_unwrap(&t, 5, 0, &count), 0, "after a reset");
        is_int(count, 5, "a new device starts from its counter");

        is_int(gpu_ticks_init(&t, 1.0, 64), 0, "init 64 bits");
        is_int(gpu_ticks_unwrap(&t, UINT64_MAX, 0, &count), -ERANGE, "a 64-bit count beyond int64");
}

static void test_window(void) {
        int64_t lo, hi;

        gpu_read_window(1000, 2000, true, 1500, 100, &lo, &hi);
        ok(lo == 1400 && hi == 1600, "raw host +- deviation inside the bracket narrows it");
        gpu_read_window(1000, 2000, true, 1050, 100, &lo, &hi);
        ok(lo == 1000 && hi == 1150, "overlapping one end: the intersection");
        gpu_read_window(1000, 2000, true, 5000, 100, &lo, &hi);
        ok(lo == 1000 && hi == 2000, "a driver window outside our bracket: the bracket");
        gpu_read_window(1000, 2000, false, 1500, 1, &lo, &hi);
        ok(lo == 1000 && hi == 2000, "host domain not the reference: the bracket");
        gpu_read_window(1000, 2000, true, 1500, UINT64_MAX, &lo, &hi);
        ok(lo == 1000 && hi == 2000, "a huge deviation: the bracket");
}

/* Reads whose deviations grow by 3 % per burst (up to 20x), with a tail of outliers. */
typedef struct Load {
        uint64_t rng;
        int burst;
        unsigned n_reads;
        int64_t t_ns;
} Load;

static int load_read(void *userdata, Sample *ret) {
        Load *l = userdata;
        double scale = 1.0;
        int64_t dev_ns;

        for (int i = 0; i < l->burst && scale < 20.0; i++)
                scale *= 1.03;
        l->rng ^= l->rng << 13;
        l->rng ^= l->rng >> 7;
        l->rng ^= l->rng << 17;
        dev_ns = (int64_t) (scale * (200.0 + (double) (l->rng % 400)));
        if (l->rng % 10 == 0)
                dev_ns *= 50;   /* preempted */
        l->n_reads++;
        l->t_ns += 1000;
        *ret = (Sample) { .r0_ns = l->t_ns, .r1_ns = l->t_ns + dev_ns, .x_lo_ns = l->t_ns, .x_hi_ns = l->t_ns };
        return 0;
}

static void test_selection_degrading(void) {
        Load load = { .rng = 2463534242u };
        GpuThreshold threshold = {};
        unsigned starved = 0, over_budget = 0, unsorted = 0, early_late = 0;

        for (load.burst = 0; load.burst < 300; load.burst++) {
                Sample best[8];
                size_t n = 0;

                load.n_reads = 0;
                if (burst_collect(load_read, &load, 3 * 8, gpu_threshold_good_ns(&threshold), best, 8, &n) < 0 ||
                    n != 8) {
                        starved++;
                        continue;
                }
                over_budget += load.n_reads > 3 * 8;
                for (size_t i = 1; i < n; i++)
                        unsorted += sample_deviation_ns(&best[i - 1]) > sample_deviation_ns(&best[i]);
                gpu_threshold_update(&threshold, sample_deviation_ns(&best[0]));
                /* Once the load is steady (20x from burst ~102 on), the threshold has caught up:
                 * bursts end early again instead of reading their whole budget. */
                if (load.burst >= 250)
                        early_late += load.n_reads < 3 * 8;
        }
        is_int(starved, 0, "every burst yields its samples while deviations degrade");
        is_int(over_budget, 0, "no burst reads more than its budget");
        is_int(unsorted, 0, "kept samples are the best, ascending");
        ok(early_late >= 40, "the threshold follows the load: %u of 50 late bursts end early", early_late);
        ok(gpu_threshold_good_ns(&threshold) > 2 * 200 * 10, "threshold grew with the load (%lld ns)",
           (long long) gpu_threshold_good_ns(&threshold));

        /* A better burst brings the floor down at once. */
        gpu_threshold_update(&threshold, 150);
        is_int(gpu_threshold_good_ns(&threshold), 300, "floor follows a better burst at once");
        gpu_threshold_update(&threshold, 100000);
        ok(gpu_threshold_good_ns(&threshold) <= 2 * (150 + 150 / 8 + 1), "and a worse one slowly");

        threshold = (GpuThreshold) {};
        is_int(gpu_threshold_good_ns(&threshold), INT64_MAX, "nothing seen: every reading is good");
}

int main(void) {
        test_interval_known();
        test_interval_property();
        test_unwrap_36();
        test_window();
        test_selection_degrading();
        return done_testing();
}
