/* SPDX-License-Identifier: MIT */

/* The estimator against scripted truths generated here (the fake domain drives the larger
 * randomised scenarios in test-accuracy): honesty of the range, convergence, verdicts. */

#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "estimator.h"
#include "tap.h"

typedef struct Truth {
        double offset_ns, rate;         /* x = offset + r·(1 + rate) */
        double period_ns;               /* > 0: the reading truncates to this */
        uint64_t rng;
} Truth;

static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) {
        return (double) (rng_next(s) >> 11) / 9007199254740992.0;
}

static double truth_at(const Truth *t, double r_ns) {
        return t->offset_ns + r_ns * (1.0 + t->rate);
}

/* A bracketed reading at r0 with a round trip of rtt_ns, read at a random instant inside. */
static Sample reading(Truth *t, int64_t r0_ns, int64_t rtt_ns) {
        double at = (double) r0_ns + rng_unit(&t->rng) * (double) rtt_ns;
        double x = truth_at(t, at);
        Sample s = { .r0_ns = r0_ns, .r1_ns = r0_ns + rtt_ns };

        if (t->period_ns > 0) {
                s.x_lo_ns = (int64_t) (floor(x / t->period_ns) * t->period_ns);
                s.x_hi_ns = s.x_lo_ns + (int64_t) t->period_ns;
        } else
                s.x_lo_ns = s.x_hi_ns = (int64_t) llround(x);
        return s;
}

static int count_outside(const Estimator *e, const Truth *t, int64_t from_ns, int64_t to_ns, int steps) {
        int outside = 0;

        for (int i = 0; i <= steps; i++) {
                int64_t r_ns = from_ns + (to_ns - from_ns) / steps * i;
                double lo, hi, x = truth_at(t, (double) r_ns);
                Model m;
                double pred, bound;

                if (estimator_range_at(e, r_ns, &lo, &hi) < 0 || x < lo || x > hi)
                        outside++;
                if (estimator_model(e, &m) < 0)
                        return -1;
                pred = (double) m.x_c_ns + (double) (r_ns - m.r_c_ns) * (1.0 + m.rate);
                bound = model_bound_at(&m, r_ns);
                if (fabs(x - pred) > bound + 1e-3)
                        outside++;
        }
        return outside;
}

static void test_point_samples(void) {
        Truth t = { .offset_ns = 123456789.0, .rate = 100e-6, .rng = 1 };
        Estimator e;
        Model m;
        int bad = 0;

        estimator_init(&e, NULL);
        for (int i = 0; i < 60; i++) {
                Sample s = reading(&t, INT64_C(1000000000) * i, 30 + (int64_t) (rng_unit(&t.rng) * 200));
                EstimatorVerdict v;

                if (estimator_add(&e, &s, &v, NULL) < 0 || v != ESTIMATOR_CONSISTENT)
                        bad++;
        }
        is_int(bad, 0, "60 samples of an affine clock are all consistent");
        is_int(count_outside(&e, &t, -INT64_C(100000000000), INT64_C(200000000000), 3000), 0,
               "truth inside the range and the model bound from -100 s to +200 s");
        ok(estimator_model(&e, &m) == 0, "model available");
        ok(fabs(m.rate - t.rate) <= m.rate_half, "rate %.3f ppb within its bound %.3f ppb of the truth",
           (m.rate - t.rate) * 1e9, m.rate_half * 1e9);
        ok(m.rate_half < 10e-9, "rate bound under 10 ppb after 59 s (%.3f ppb)", m.rate_half * 1e9);
        ok(m.half_ns <= 230, "offset bound at the centre within the round trips (%.1f ns)", m.half_ns);
}

/* The smallest half-width of the feasible range over [0, r_end]: it is convex in r. */
static double narrowest_half_ns(const Estimator *e, int64_t r_end_ns) {
        double a = 0.0, b = (double) r_end_ns, lo, hi;

        for (int i = 0; i < 200 && b - a > 1.0; i++) {
                double m1 = a + (b - a) / 3.0, m2 = b - (b - a) / 3.0, l1, h1, l2, h2;

                if (estimator_range_at(e, (int64_t) m1, &l1, &h1) < 0 ||
                    estimator_range_at(e, (int64_t) m2, &l2, &h2) < 0)
                        return INFINITY;
                if (h1 - l1 <= h2 - l2)
                        b = m2;
                else
                        a = m1;
        }
        if (estimator_range_at(e, (int64_t) a, &lo, &hi) < 0)
                return INFINITY;
        return (hi - lo) / 2.0;
}

/* A 1 ms clock with a random sub-ms offset, probed about every ms with 5..100 µs round trips (mostly near 5)
 * for 1 s at random phases: intersecting the boxes pins it to about the best round trip. */
static void test_truncated_ms(void) {
        uint64_t seed = 7;

        for (int round = 0; round < 20; round++) {
                Truth t = { .rate = (rng_unit(&seed) - 0.5) * 10e-6, .period_ns = 1e6, .rng = rng_next(&seed) };
                int64_t r_ns = 0, best_rtt = INT64_MAX;
                Estimator e;
                Model m;
                int bad = 0;

                t.offset_ns = 5e12 + rng_unit(&seed) * 1e6;
                estimator_init(&e, NULL);
                while (r_ns < 1000000000) {
                        /* Round trips as an X server gives them: mostly near the floor, a tail
                         * to 100 µs. */
                        double tail_ns = rng_unit(&t.rng) < 0.05 ? rng_unit(&t.rng) * 95000.0
                                                                 : -5000.0 * log(1.0 - rng_unit(&t.rng));
                        int64_t rtt = 5000 + (int64_t) fmin(tail_ns, 95000.0);
                        Sample s = reading(&t, r_ns, rtt);
                        EstimatorVerdict v;

                        if (rtt < best_rtt)
                                best_rtt = rtt;
                        if (estimator_add(&e, &s, &v, NULL) < 0 || v != ESTIMATOR_CONSISTENT)
                                bad++;
                        r_ns += 500000 + (int64_t) (rng_unit(&t.rng) * 1000000);
                }
                bad += count_outside(&e, &t, 0, 2000000000, 1000);
                estimator_model(&e, &m);
                /* The feasible set pins the offset to the round trip where it is narrowest; the
                 * model, centred at the newest sample for conversions of "now", is a little
                 * wider there (the informative, edge-straddling probes are rarely the newest). */
                ok(bad == 0 && narrowest_half_ns(&e, r_ns) <= 2.0 * (double) best_rtt &&
                   m.half_ns <= 4.0 * (double) best_rtt,
                   "ms clock %d: truth inside, half-width %.0f ns <= 2 x best round trip %" PRId64
                   " ns, %.0f ns at the newest sample", round, narrowest_half_ns(&e, r_ns), best_rtt, m.half_ns);
        }
}

static void test_step(void) {
        Truth t = { .offset_ns = 0, .rate = -20e-6, .rng = 3 };
        Estimator e;
        EstimatorVerdict v = ESTIMATOR_CONSISTENT;
        int64_t step_ns = 0;
        int i;

        estimator_init(&e, NULL);
        for (i = 0; i < 20; i++) {
                Sample s = reading(&t, INT64_C(100000000) * i, 100);
                estimator_add(&e, &s, &v, NULL);
        }
        t.offset_ns += 5e6;     /* a 5 ms step, e.g. a suspend */
        {
                Sample s = reading(&t, INT64_C(100000000) * i, 100);
                ok(estimator_add(&e, &s, &v, &step_ns) == 0 && v == ESTIMATOR_STEP,
                   "a 5 ms step is a step at the first sample after it");
                ok(llabs(step_ns - 5000000) < 1000, "its size is measured (%" PRId64 " ns)", step_ns);
                is_int(e.n, 1, "the window restarts at that sample");
        }
        t.offset_ns -= 1e9;     /* and backwards by a second (a clock set) */
        {
                Sample s = reading(&t, INT64_C(100000000) * ++i, 100);
                int r = estimator_add(&e, &s, &v, &step_ns);
                ok(r == 0 && v == ESTIMATOR_STEP && step_ns < -999000000,
                   "a backward step is detected too (%" PRId64 ")", step_ns);
        }
}

static void test_rate_change(void) {
        Truth t = { .offset_ns = 0, .rate = 0, .rng = 5 };
        Estimator e;
        EstimatorVerdict v = ESTIMATOR_CONSISTENT;
        int64_t r_ns = 0;
        int changes = 0, steps = 0;

        estimator_init(&e, NULL);
        for (int i = 0; i < 30; i++, r_ns += 1000000000) {
                Sample s = reading(&t, r_ns, 50);
                estimator_add(&e, &s, &v, NULL);
        }
        /* NTP starts slewing by 200 ppm at r_ns, continuously. */
        t.offset_ns = -(double) r_ns * 200e-6;
        t.rate = 200e-6;
        for (int i = 0; i < 10; i++, r_ns += 1000000000) {
                Sample s = reading(&t, r_ns, 50);
                estimator_add(&e, &s, &v, NULL);
                changes += v == ESTIMATOR_RATE_CHANGE;
                steps += v == ESTIMATOR_STEP;
        }
        ok(changes >= 1 && steps == 0, "a 200 ppm slew is a change of rate, never a step (%d, %d)", changes, steps);
}

static void test_bad_input(void) {
        Estimator e;
        Sample good = { 100, 200, 1000, 1000 }, backwards = { 200, 100, 0, 0 }, older = { 50, 60, 0, 0 };
        Model m;

        estimator_init(&e, NULL);
        is_int(estimator_model(&e, &m), -ENODATA, "no model before the first sample");
        is_int(estimator_add(&e, &backwards, NULL, NULL), -EINVAL, "r1 < r0 is -EINVAL");
        ok(estimator_add(&e, &good, NULL, NULL) == 0, "a good sample is taken");
        is_int(estimator_add(&e, &older, NULL, NULL), -EINVAL, "a sample older than the newest is -EINVAL");
        ok(estimator_model(&e, &m) == 0 && fabs(m.rate_half - 1e-3) < 1e-9,
           "one sample: the rate is only bounded by the prior");
}

static void test_window_full(void) {
        Truth t = { .offset_ns = -7e15, .rate = 499e-6, .rng = 11 };
        Estimator e;
        int bad = 0;

        /* Far more samples than the window holds; the oldest fall out, the bound stays honest. */
        estimator_init(&e, NULL);
        for (int i = 0; i < 1000; i++) {
                Sample s = reading(&t, INT64_C(3000000000000) + INT64_C(250000000) * i, 20 + i % 300);
                EstimatorVerdict v;

                if (estimator_add(&e, &s, &v, NULL) < 0 || v != ESTIMATOR_CONSISTENT)
                        bad++;
                if (i % 97 == 0 && count_outside(&e, &t, s.r0_ns - 20000000000, s.r0_ns + 20000000000, 50))
                        bad++;
        }
        is_int(bad, 0, "1000 samples through a 64-sample window at 499 ppm: consistent and honest");
        ok(e.n == ESTIMATOR_WINDOW_MAX, "the window is bounded (%zu)", e.n);
}

/* Bursts of two samples a few µs apart every second, as the daemon takes them; returns how
 * often the truth fell outside the range or the model bound, over the window and at each burst. */
static int feed_bursts(Estimator *e, Truth *t, int n_bursts, int64_t *r_ns, int *ret_non_consistent) {
        int outside = 0;

        for (int b = 0; b < n_bursts; b++, *r_ns += 1000000000) {
                for (int k = 0; k < 2; k++) {
                        Sample s = reading(t, *r_ns + 3000 * k, 200 + 50 * k);
                        EstimatorVerdict v;

                        if (estimator_add(e, &s, &v, NULL) < 0)
                                outside++;
                        else if (v != ESTIMATOR_CONSISTENT && ret_non_consistent)
                                (*ret_non_consistent)++;
                }
                outside += count_outside(e, t, e->window[0].r0_ns, e->window[e->n - 1].r1_ns, 20);
        }
        return outside;
}

static void test_prior_arguments(void) {
        Truth t = { .offset_ns = 5e9, .rate = 100e-6, .rng = 17 };
        Estimator e;
        int64_t r_ns = 0;

        estimator_init(&e, NULL);
        is_int(estimator_set_rate_prior(&e, NAN, 1e-6), -EINVAL, "a NaN prior is -EINVAL");
        is_int(estimator_set_rate_prior(&e, 2e-6, 1e-6), -EINVAL, "an empty prior is -EINVAL");
        is_int(estimator_set_rate_prior(&e, 3e-6, 3e-6), -EINVAL, "a prior of zero width is -EINVAL");
        is_int(estimator_set_rate_prior(&e, 2e-3, 3e-3), -EINVAL, "a prior beyond max_rate_error is -EINVAL");
        is_int(e.prior, ESTIMATOR_PRIOR_NONE, "and none of them is taken");

        feed_bursts(&e, &t, 3, &r_ns, NULL);
        is_int(estimator_set_rate_prior(&e, -10e-6, 10e-6), -EDOM,
               "a prior the window already contradicts is -EDOM");
        is_int(e.prior, ESTIMATOR_PRIOR_NONE, "and leaves no prior behind");
        is_int(count_outside(&e, &t, 0, r_ns, 50), 0, "the model is the one it had");
}

/* The first burst with and without a right prior, then the samples take over. */
static void test_prior_narrows(void) {
        uint64_t seed = 23;
        int outside = 0, narrower = 0, released = 0;

        for (int round = 0; round < 50; round++) {
                Truth t = { .offset_ns = 1e12 * rng_unit(&seed), .rate = (rng_unit(&seed) - 0.5) * 400e-6,
                            .rng = rng_next(&seed) };
                /* Yesterday's estimate, off by less than its bound plus the margin. */
                double remembered = t.rate + (rng_unit(&seed) - 0.5) * 80e-6;
                Estimator cold, warm;
                int64_t r_cold = INT64_C(7000000000), r_warm = r_cold;
                uint64_t rng = t.rng;
                Model mc, mw;

                estimator_init(&cold, NULL);
                estimator_init(&warm, NULL);
                if (estimator_set_rate_prior(&warm, remembered - 50e-6, remembered + 50e-6) < 0)
                        outside++;
                outside += feed_bursts(&cold, &t, 1, &r_cold, NULL);
                t.rng = rng;
                outside += feed_bursts(&warm, &t, 1, &r_warm, NULL);
                if (estimator_model(&cold, &mc) == 0 && estimator_model(&warm, &mw) == 0 &&
                    mw.rate_half <= 50e-6 + 1e-12 && mc.rate_half > 900e-6)
                        narrower++;
                /* One second later, extrapolated from the first burst: still inside. */
                outside += count_outside(&warm, &t, r_warm - 1000000000, r_warm, 20);
                outside += feed_bursts(&warm, &t, 5, &r_warm, NULL);
                released += warm.prior == ESTIMATOR_PRIOR_RELEASED;
        }
        is_int(outside, 0, "a right prior keeps the truth inside the bound, within and beyond the window");
        is_int(narrower, 50, "it narrows the rate bound of the first burst from 1000 ppm to 50 ppm");
        is_int(released, 50, "and goes once the samples bound the rate better on their own");
}

/* The rate moved while the daemon was down: by 100 ppm, and by every amount around the edge. */
static void test_prior_wrong(void) {
        static const double errors_ppm[] = { 100, -100, 50.001, -50.001, 50.5, 51, 55, 70, 300, -900 };
        uint64_t seed = 29;
        int outside = 0, contradicted = 0, non_consistent = 0;

        for (size_t i = 0; i < sizeof(errors_ppm) / sizeof(errors_ppm[0]); i++)
                for (int round = 0; round < 10; round++) {
                        Truth t = { .offset_ns = 1e10 * rng_unit(&seed), .rate = (rng_unit(&seed) - 0.5) * 200e-6,
                                    .rng = rng_next(&seed) };
                        double remembered = t.rate - errors_ppm[i] * 1e-6;
                        Estimator e;
                        int64_t r_ns = INT64_C(1000000000);

                        estimator_init(&e, NULL);
                        estimator_set_rate_prior(&e, remembered - 50e-6, remembered + 50e-6);
                        outside += feed_bursts(&e, &t, 30, &r_ns, &non_consistent);
                        contradicted += e.prior == ESTIMATOR_PRIOR_CONTRADICTED;
                }
        is_int(outside, 0, "a wrong prior never puts the truth outside the bound within the window");
        is_int(non_consistent, 0, "its end is neither a step nor a change of rate: the clock did not change");
        ok(contradicted >= 80, "the samples contradict it (%d of 100; the others it no longer narrowed)",
           contradicted);
}

int main(void) {
        test_point_samples();
        test_truncated_ms();
        test_step();
        test_rate_change();
        test_bad_input();
        test_window_full();
        test_prior_arguments();
        test_prior_narrows();
        test_prior_wrong();
        return done_testing();
}
