/* SPDX-License-Identifier: MIT */

/* The msc domain's pure part (domains/present-box.c): mode intervals, jitter bounds, the box of
 * one event against hand-computed values, and a simulated fake CRTC (present_fake.c's arithmetic,
 * a timer that fires early and late, CLOCK_MONOTONIC slewing against the raw clock) fed through
 * the estimator for ten minutes: no step, no change of rate, the true refresh rate inside the
 * rate bound, and every UST the server reports ten frames later inside the predicted bound. */

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>

#include "history.h"
#include "present-box.h"
#include "tap.h"

static void test_mode_interval(void) {
        double ns = 0;

        bool good;

        /* Arguments are evaluated in no set order: call first, then print. */
        good = present_mode_interval_ns(148500000, 2200, 1125, 0, &ns) == 0 && fabs(ns - 1e9 / 60) < 1e-3;
        ok(good, "1920x1080@60 (CEA): 16666666.667 ns (%.3f)", ns);
        good = present_mode_interval_ns(74250000, 2200, 1125, 1u << 4, &ns) == 0 && fabs(ns - 1e9 / 60) < 1e-3;
        ok(good, "interlaced 1080i: a field per vblank, 16666666.667 ns (%.3f)", ns);
        good = present_mode_interval_ns(25175000, 800, 262, 1u << 5, &ns) == 0 &&
               fabs(ns - 800.0 * 524 * 1e9 / 25175000) < 1e-3;
        ok(good, "doublescan: twice the lines (%.3f)", ns);
        is_int(present_mode_interval_ns(0, 0, 0, 0, &ns), -EDOM, "Xvfb's mode (no dot clock): -EDOM");
        is_int(present_mode_interval_ns(1, 1, 1, 0, NULL), -EINVAL, "NULL: -EINVAL");
}

static void test_jitter(void) {
        PresentJitter j = {};
        bool good;

        good = present_jitter_for_interval(1e9 / 60, &j) == 0 && j.late_ns == 8341667 + 1000 && j.early_ns == j.late_ns;
        ok(good, "60 Hz: half of the interval +1000 ppm, +1 us, both sides (%lld)", (long long) j.late_ns);
        is_int(present_jitter_for_interval(0, &j), -EINVAL, "interval 0: -EINVAL");
        is_int(present_jitter_for_interval(NAN, &j), -EINVAL, "interval NaN: -EINVAL");
}

static void test_event_box(void) {
        const DomainUnit unit = { .period_ns = 1e9 / 60 };
        const PresentJitter j = { .early_ns = 3000, .late_ns = 5000 };
        PresentEvent e = {
                .ust_us = 1000000, .msc = 60,
                .raw0_ns = 1000100000 + 180, .mono_ns = 1000100000, .raw1_ns = 1000100000 + 220,
        };
        Sample s = {};
        bool good;

        /* The bracket is 105 us after the box's far edge: the slew adds ceil(105000 * 5e-4) + 1. */
        ok(present_event_sample(&e, &unit, &j, &s) == 0, "an event's box");
        is_int(s.r0_ns, INT64_C(1000000000) - 5000 + 180 - 54, "r0: ust - late + (raw0 - mono) - slew");
        is_int(s.r1_ns, INT64_C(1000000000) + 999 + 3000 + 220 + 54, "r1: ust + 999 + early + (raw1 - mono) + slew");
        is_int(s.x_lo_ns, INT64_C(1000000000), "x: msc * period (60 frames of 60 Hz: 1 s)");
        is_int(s.x_hi_ns, s.x_lo_ns, "x: a point");

        e.mono_ns += 1000000000;
        e.raw0_ns += 1000000000;
        e.raw1_ns += 1000000000;
        good = present_event_sample(&e, &unit, &j, &s) == 0 && s.r1_ns - s.r0_ns > 2 * 500000;
        ok(good, "dispatched 1 s late: the slew of 500 ppm over 1 s widens the box by 2 x 0.5 ms (%lld)",
           (long long) (s.r1_ns - s.r0_ns));

        e.raw0_ns = e.raw1_ns + 1;
        is_int(present_event_sample(&e, &unit, &j, &s), -EINVAL, "an unordered bracket: -EINVAL");
        e = (PresentEvent) { .ust_us = UINT64_MAX / 2 };
        is_int(present_event_sample(&e, &unit, &j, &s), -ERANGE, "a UST beyond int64 ns: -ERANGE");
        e = (PresentEvent) { .msc = UINT64_MAX };
        is_int(present_event_sample(&e, &unit, &j, &s), -ERANGE, "an msc beyond int64: -ERANGE");
}

static void test_extrapolation(void) {
        uint64_t msc = 0;
        int64_t ns = 0;
        double interval = 0;

        ok(present_interval_between(1000, 10, 1000 + 600 * 16666, 610, &interval) == 0 && interval == 16666000.0,
           "interval between two events: 16666000 ns");
        is_int(present_interval_between(1000, 10, 2000, 10, &interval), -EDOM, "no frames between: -EDOM");
        bool good;

        good = present_next_vblank(1000, 10, 1e7, 1000000 + 25000000, &ns, &msc) == 0 && msc == 13 &&
               ns == 1000000 + 30000000;
        ok(good, "next vblank after 2.5 frames: the third (msc %llu at %lld)",
           (unsigned long long) msc, (long long) ns);
        ok(present_next_vblank(1000, 10, 1e7, 0, &ns, &msc) == 0 && msc == 10 && ns == 1000000,
           "now before the known vblank: that one");
        is_int(present_next_vblank(1000, 10, 0, 0, &ns, &msc), -EINVAL, "interval 0: -EINVAL");
}

/* splitmix64, as a deterministic source of jitter */
static uint64_t rng_state = 42;
static double uniform(void) {
        uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return (double) ((z ^ (z >> 31)) >> 11) / 0x1p53;
}

/* The simulated machine: CLOCK_MONOTONIC = raw * (1 + 20 ppm) + 7 s; Xvfb's fake CRTC at
 * 1000000 / 60 = 16666 us. Its timer fires up to 2 ms early, mostly on time, now and then up to
 * 4 ms late (a loaded server); ust and msc as present_fake.c computes them. */
#define SIM_SLEW 20e-6
#define SIM_MONO_OFF INT64_C(7000000000)
#define SIM_INTERVAL_US 16666

static int64_t sim_mono(int64_t raw_ns) {
        return raw_ns + (int64_t) llround((double) raw_ns * SIM_SLEW) + SIM_MONO_OFF;
}

static int64_t sim_raw(int64_t mono_ns) {
        return (int64_t) llround((double) (mono_ns - SIM_MONO_OFF) / (1 + SIM_SLEW));
}

static void sim_fire(uint64_t target, PresentEvent *ret) {
        double u = uniform();
        int64_t jitter_ns = u < 0.70 ? -(int64_t) (uniform() * 2e6) :
                            u < 0.95 ? (int64_t) (uniform() * 3e5) : (int64_t) (uniform() * 4e6);
        int64_t fire_ns = (int64_t) target * SIM_INTERVAL_US * 1000 + jitter_ns;
        int64_t recv_ns = fire_ns + 60000 + (int64_t) (uniform() * 2e6);
        uint64_t ust = (uint64_t) (fire_ns / 1000);

        *ret = (PresentEvent) {
                .ust_us = ust,
                .msc = (ust + SIM_INTERVAL_US / 2) / SIM_INTERVAL_US,
                .raw0_ns = sim_raw(recv_ns) - 25,
                .mono_ns = recv_ns,
                .raw1_ns = sim_raw(recv_ns) + 25,
        };
}

static void test_simulated_fake(void) {
        static History h;
        const DomainUnit unit = { .period_ns = 1e9 / 60 };
        PresentJitter j;
        uint64_t msc = 600000, n_events = 0, n_missed = 0, n_predictions = 0;
        int64_t worst_margin_ns = INT64_MAX, bound_max_ns = 0;
        bool consistent = true, holds = true, fed = true;
        double true_rate = (double) unit.period_ns / (SIM_INTERVAL_US * 1000.0) * (1 + SIM_SLEW) - 1;
        Model m = {};

        history_init(&h, NULL);
        present_jitter_for_interval(unit.period_ns, &j);

        /* A burst a second for ten minutes: two frames each, as domains/present.c asks. */
        for (int k = 0; k < 600; k++) {
                msc += 60 + (uint64_t) (uniform() * 3);
                for (int f = 1; f <= 2; f++) {
                        HistoryEvent ev;
                        PresentEvent e;
                        Sample s;

                        sim_fire(msc + f, &e);
                        n_events++;
                        if (e.msc != msc + f) {
                                n_missed++;
                                continue;
                        }
                        fed &= present_event_sample(&e, &unit, &j, &s) == 0 && history_add(&h, &s, &ev) == 0;
                        consistent &= ev.verdict == ESTIMATOR_CONSISTENT;
                }
                if (k < 5)
                        continue;

                /* Ten frames ahead: the model's time of vblank msc + 12 (raw, then monotonic) holds
                 * the UST the server will report for it. */
                PresentEvent future;
                int64_t x_ns, r_ns, unc_ns, pred_mono_ns, bound_ns, margin_ns;

                m = history_current(&h)->model;
                sim_fire(msc + 12, &future);
                if (future.msc != msc + 12 || unit_to_ns(&unit, (int64_t) msc + 12, &x_ns) < 0 ||
                    model_inverse(&m, x_ns, 0, &r_ns, &unc_ns) < 0) {
                        holds &= future.msc != msc + 12;
                        continue;
                }
                pred_mono_ns = sim_mono(r_ns);
                bound_ns = (int64_t) ceil((double) unc_ns * (1 + SIM_SLEW)) + 1 + 1000;
                margin_ns = bound_ns - llabs((int64_t) future.ust_us * 1000 - pred_mono_ns);
                holds &= margin_ns >= 0;
                worst_margin_ns = margin_ns < worst_margin_ns ? margin_ns : worst_margin_ns;
                bound_max_ns = bound_ns > bound_max_ns ? bound_ns : bound_max_ns;
                n_predictions++;
        }
        ok(fed, "every event of the target frame became a sample the history took");
        ok(consistent, "ten minutes: no step, no change of rate (%llu events, %llu missed their frame)",
           (unsigned long long) n_events, (unsigned long long) n_missed);
        ok(fabs(m.rate - true_rate) <= m.rate_half, "rate %+.1f ppm +- %.1f holds the fake's %+.1f ppm",
           m.rate * 1e6, m.rate_half * 1e6, true_rate * 1e6);
        ok(holds && n_predictions > 500, "%llu predictions 10 frames ahead hold the reported UST (worst margin %lld ns, "
           "bound up to %lld ns)", (unsigned long long) n_predictions, (long long) worst_margin_ns,
           (long long) bound_max_ns);
}

int main(void) {
        test_mode_interval();
        test_jitter();
        test_event_box();
        test_extrapolation();
        test_simulated_fake();
        return done_testing();
}
