/* SPDX-License-Identifier: MIT */

/* Honest bounds against known truth: the fake domain (offsets, ±500 ppm, jitter, 1 ms truncation,
 * wraps, steps) calibrated through burst selection, history and the live graph exactly as the
 * daemon does it; then 100,000 random conversions per scenario, each direction checked: the
 * truth must be inside the reported bound every time. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "burst.h"
#include "fake.h"
#include "graph.h"
#include "tap.h"

#define CONVERSIONS 100000
#define BURST_MAX 16

typedef struct Scenario {
        const char *name;
        FakeConfig config;
        int n_bursts;
        size_t burst_size, keep;
        int64_t burst_interval_ns;      /* simulated time between bursts */
        int64_t extrapolate_ns;         /* convert up to this far past the last calibration */
        int64_t hint_window_ns;         /* values are converted within this of the caller's now */
} Scenario;

static const FakeStep steps_mixed[] = {
        { INT64_C(20000000000), INT64_C(3000000) },             /* +3 ms: a short suspend */
        { INT64_C(40000000000), -INT64_C(1000000000) },         /* -1 s: a clock set back */
        { INT64_C(55000000000), INT64_C(10000000000) },         /* +10 s */
};

static const Scenario scenarios[] = {
        { "realtime-like offset", { .offset_ns = INT64_C(1700000000000000000), .deviation_min_ns = 20,
          .deviation_max_ns = 200, .interval_ns = 1000, .seed = 1 }, 300, 8, 2, 200000000, 10000000000, 0 },
        { "+500 ppm with jitter and outliers", { .rate_ppm = 500, .offset_ns = -12345678901, .deviation_min_ns = 50,
          .deviation_max_ns = 5000, .outlier_probability = 0.1, .outlier_max_ns = 2000000, .interval_ns = 3000,
          .seed = 2 }, 300, 8, 2, 200000000, 10000000000, 0 },
        { "-500 ppm", { .rate_ppm = -500, .offset_ns = 987654321, .deviation_min_ns = 30, .deviation_max_ns = 300,
          .interval_ns = 1000, .seed = 3 }, 300, 8, 2, 200000000, 10000000000, 0 },
        { "1 ms truncation", { .unit = { 1e6, 0, true, UNIT_ENCODING_PLAIN }, .rate_ppm = 3.7,
          .offset_ns = 4242424242424, .deviation_min_ns = 5000, .deviation_max_ns = 100000,
          .interval_ns = 400000, .seed = 4 }, 60, 16, 16, 1000000000, 5000000000, 0 },
        { "X server ms across the 2^32 wrap", { .unit = { 1e6, 32, true, UNIT_ENCODING_PLAIN }, .rate_ppm = -2.5,
          .offset_ns = INT64_C(4294967296) * 1000000 - INT64_C(30000000000), .deviation_min_ns = 5000,
          .deviation_max_ns = 100000, .interval_ns = 400000, .seed = 5 }, 60, 16, 16, 1000000000, 5000000000,
          INT64_C(20000000000) },
        { "GPU 36-bit ns ticks across wraps", { .unit = { 1.0, 36, true, UNIT_ENCODING_PLAIN }, .rate_ppm = 120,
          .offset_ns = INT64_C(68000000000), .deviation_min_ns = 100, .deviation_max_ns = 2000,
          .interval_ns = 1000, .seed = 6 }, 400, 8, 2, 500000000, 5000000000, INT64_C(30000000000) },
        { "GPU 52.083 ns ticks, 40 bits", { .unit = { 52.0833333333, 40, true, UNIT_ENCODING_PLAIN }, .rate_ppm = -80,
          .offset_ns = 5555555555, .deviation_min_ns = 100, .deviation_max_ns = 2000, .interval_ns = 1000,
          .seed = 7 }, 300, 8, 2, 200000000, 5000000000, INT64_C(30000000000) },
        { "steps +3 ms, -1 s, +10 s", { .rate_ppm = 45, .offset_ns = 1000, .deviation_min_ns = 40,
          .deviation_max_ns = 400, .interval_ns = 1000, .steps = steps_mixed, .n_steps = 3, .seed = 8 },
          350, 8, 2, 200000000, 5000000000, 0 },
};

static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static void sort_by_time(Sample *s, size_t n) {
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && s[j - 1].r0_ns > s[j].r0_ns; j--) {
                        Sample t = s[j];
                        s[j] = s[j - 1];
                        s[j - 1] = t;
                }
}

/* A reference time is ambiguous when it falls between the last sample before a discontinuity
 * and the first after: nobody can know on which side of the step it was. */
static bool in_gap(const History *h, int64_t r_ns) {
        for (size_t i = 1; i < history_count(h); i++) {
                const Segment *before = history_get(h, i - 1), *after = history_get(h, i);
                if (r_ns > before->r_end_ns && r_ns < after->r_begin_ns)
                        return true;
        }
        return false;
}

/* After a backward step some domain values happened twice; converting them back is ambiguous. */
static bool x_repeats(const Domain *d, const History *h, int64_t r_ns) {
        double x = fake_truth_ns(d, r_ns);

        for (size_t i = 1; i < history_count(h); i++) {
                const Segment *s = history_get(h, i);
                if (s->r_begin_ns > r_ns && fake_truth_ns(d, s->r_begin_ns) <= x)
                        return true;
        }
        return false;
}

static void run(const Scenario *sc) {
        const DomainOps *ops = &domain_fake_ops;
        const DomainUnit *unit;
        ClockGraph g;
        History h;
        Domain *d = NULL;
        size_t fake;
        int64_t r_first, r_last;
        uint64_t rng = sc->config.seed * 7919;
        int steps_announced = 0, steps_missed = 0, errors = 0, outside = 0, checked = 0;
        double worst_ratio = 0, sum_unc = 0;
        Model m;

        if (ops->open(sc->name, &sc->config, &d) < 0) {
                ok(false, "%s: open", sc->name);
                return;
        }
        unit = &ops->info(d)->unit;
        history_init(&h, NULL);
        graph_init(&g, "monotonic_raw");
        graph_add(&g, "fake", unit, &h, &fake);

        r_first = fake_now_ns(d);
        for (int b = 0; b < sc->n_bursts; b++) {
                Sample samples[BURST_MAX];
                size_t n = 0, kept = 0;
                int64_t burst_begin = fake_now_ns(d);
                bool step_inside = false, announced = false;

                for (size_t i = 0; i < sc->config.n_steps; i++)
                        if (sc->config.steps[i].at_r_ns > burst_begin - sc->burst_interval_ns &&
                            sc->config.steps[i].at_r_ns <= burst_begin)
                                step_inside = true;

                if (ops->sample_burst(d, samples, sc->burst_size, &n) < 0 ||
                    burst_select(samples, n, sc->keep, &kept) < 0)
                        errors++;
                sort_by_time(samples, kept);
                for (size_t i = 0; i < kept; i++) {
                        HistoryEvent ev;
                        if (history_add(&h, &samples[i], &ev) < 0)
                                errors++;
                        else if (ev.verdict == ESTIMATOR_STEP)
                                announced = true;
                }
                graph_refresh(&g, fake);
                if (step_inside) {
                        steps_announced += announced;
                        steps_missed += !announced;
                }
                fake_advance(d, sc->burst_interval_ns);
        }
        r_last = fake_now_ns(d);

        for (int i = 0; i < CONVERSIONS; i++) {
                int64_t span = r_last + sc->extrapolate_ns - r_first;
                int64_t r_ns = r_first + (int64_t) (rng_next(&rng) % (uint64_t) span);
                int64_t hint_r = sc->hint_window_ns ? r_ns + (int64_t) (rng_next(&rng) % (uint64_t) sc->hint_window_ns) -
                                                              sc->hint_window_ns / 2
                                                    : INT64_MIN;
                int64_t v, unc, wire, count, unwrapped;
                double truth, err;

                if (sc->hint_window_ns == 0 && (unit->wrap_bits != 0 && unit->wrap_bits != 64))
                        hint_r = r_ns;
                if (in_gap(&h, r_ns))
                        continue;

                if (i % 2 == 0) {
                        /* reference -> domain */
                        if (graph_convert(&g, g.hub, fake, r_ns, hint_r, &v, &unc) < 0) {
                                errors++;
                                continue;
                        }
                        truth = fake_truth_ns(d, r_ns);
                        count = (int64_t) floor(truth / unit->period_ns);
                        if (unit_unwrap(unit, v, count, &unwrapped) < 0) {
                                errors++;
                                continue;
                        }
                        err = fabs((double) unwrapped * unit->period_ns - truth);
                } else {
                        /* domain -> reference */
                        if (x_repeats(d, &h, r_ns))
                                continue;
                        if (fake_read_at(d, r_ns, &wire) < 0 ||
                            graph_convert(&g, fake, g.hub, wire, hint_r, &v, &unc) < 0) {
                                errors++;
                                continue;
                        }
                        err = fabs((double) (v - r_ns));
                }
                checked++;
                sum_unc += (double) unc;
                if (err > (double) unc)
                        outside++;
                if (unc > 0 && err / (double) unc > worst_ratio)
                        worst_ratio = err / (double) unc;
        }

        is_int(errors, 0, "no calibration or conversion failed");
        ok(outside == 0 && checked > CONVERSIONS * 8 / 10,
           "%s: truth inside the bound in %d of %d conversions (worst error/bound %.3f, mean bound %.0f ns)",
           sc->name, checked - outside, checked, worst_ratio, sum_unc / checked);
        if (graph_model(&g, fake, &m) == 0) {
                double rate_truth = sc->config.rate_ppm * 1e-6;
                ok(fabs(m.rate - rate_truth) <= m.rate_half,
                   "%s: rate converges to %.4f ppm (truth %.4f ppm, bound %.4f ppm)", sc->name, m.rate * 1e6,
                   rate_truth * 1e6, m.rate_half * 1e6);
        } else
                ok(false, "%s: model", sc->name);
        if (sc->config.n_steps > 0)
                ok(steps_announced == (int) sc->config.n_steps && steps_missed == 0,
                   "%s: every step announced at the first burst after it (%d of %zu)", sc->name, steps_announced,
                   sc->config.n_steps);
        ops->close(d);
}

int main(void) {
        for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
                run(&scenarios[i]);
        return done_testing();
}
