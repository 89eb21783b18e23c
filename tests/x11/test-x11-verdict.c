/* SPDX-License-Identifier: MIT */

/* calibrate/x11-verdict.c with the fake domain as the X server (x11-sim.h): the bound the probes
 * give, the identity verdict, and that it is never latched. */

#include <stdbool.h>

#include "estimator.h"
#include "tap.h"
#include "x11-sim.h"
#include "x11-verdict.h"

/* Random offsets and rates, 1 s of the daemon's schedule: the bound holds at every burst, and
 * then its full width is at most about twice the best round trip. */
static void test_bound(void) {
        int bad_bound = 0, too_wide = 0, runs = 40;
        double worst_ratio = 0;

        for (int run = 0; run < runs; run++) {
                World w;
                X11Planner planner;
                Estimator e;
                int64_t start, server_offset;
                double lo, hi;

                x11_planner_init(&planner);
                estimator_init(&e, NULL);
                /* A second run of the same seed family draws the offset; sub-ms part random. */
                w.rng = (uint64_t) run * 977 + 5;
                server_offset = (int64_t) (sim_rng_next(&w) % (UINT64_C(1) << 45));
                if (sim_world_new(&w, INT64_C(3000000000) + run * 12345, server_offset,
                              (run % 7 - 3) * 1.7, (uint64_t) run + 100) < 0) {
                        ok(false, "fake server opens");
                        return;
                }
                start = w.r_ns;
                for (int k = 0; k < 4; k++) {
                        if (w.r_ns < sim_burst_at(start, k))
                                w.r_ns = sim_burst_at(start, k);
                        for (int i = 0; i < 8; i++) {
                                X11Probe p;
                                Sample s;

                                if (sim_probe(&w, &planner, &p) < 0 || x11_probe_sample(&p, 0, &s) < 0 ||
                                    estimator_add(&e, &s, NULL, NULL) < 0) {
                                        bad_bound++;
                                        continue;
                                }
                                x11_planner_add(&planner, &p);
                        }
                        for (int j = 0; j < 5; j++) {
                                int64_t r = start + (w.r_ns - start) * j / 4;
                                double x = sim_truth_x_ns(&w, r);

                                if (estimator_range_at(&e, r, &lo, &hi) < 0 || x < lo || x > hi)
                                        bad_bound++;
                        }
                }
                estimator_range_at(&e, w.r_ns, &lo, &hi);
                if (hi - lo > 2.0 * (double) w.rtt_min_ns)
                        too_wide++;
                if ((hi - lo) / (double) w.rtt_min_ns > worst_ratio)
                        worst_ratio = (hi - lo) / (double) w.rtt_min_ns;
                domain_fake_ops.close(w.server);
        }
        is_int(bad_bound, 0, "the bound contains the truth at every burst of every run");
        ok(too_wide <= runs / 20 && worst_ratio <= 3,
           "after 1 s the width is <= 2x the best round trip (%d of %d runs wider; worst %.2fx)",
           too_wide, runs, worst_ratio);
}

/* Runs the schedule for n_bursts; returns how many probes the verdict called identity after. */
static int run_verdict(World *w, X11Verdict *v, int n_bursts, X11Identity want, int *ret_first) {
        X11Planner planner;
        int64_t start = w->r_ns;
        int n_want = 0, n = 0;

        x11_planner_init(&planner);
        *ret_first = -1;
        for (int k = 0; k < n_bursts; k++) {
                if (w->r_ns < sim_burst_at(start, k))
                        w->r_ns = sim_burst_at(start, k);
                for (int i = 0; i < 8; i++, n++) {
                        X11Probe p;

                        if (sim_probe(w, &planner, &p) < 0)
                                continue;
                        x11_planner_add(&planner, &p);
                        x11_verdict_add(v, &p);
                        if (x11_verdict_get(v) == want) {
                                n_want++;
                                if (*ret_first < 0)
                                        *ret_first = n;
                        }
                }
        }
        return n_want;
}

static void test_verdict(void) {
        int never = 0, found = 0, first, worst_first = 0;

        for (int run = 0; run < 30; run++) {
                World w;
                X11Verdict v;
                int64_t mono_off = INT64_C(5000000000) + run * 7777;

                x11_verdict_init(&v, 4 * MS);
                sim_world_new(&w, mono_off, mono_off, 0, (uint64_t) run + 1);
                if (run_verdict(&w, &v, 12, X11_IDENTITY_MONOTONIC, &first) > 0 && first >= 0) {
                        found++;
                        if (first > worst_first)
                                worst_first = first;
                }
                domain_fake_ops.close(w.server);
        }
        is_int(found, 30, "an identity server is called identity");
        ok(worst_first <= 5 * 8, "... within the first bursts (worst after probe %d)", worst_first);

        /* Offsets beyond the margin, either sign, any size, a few ppm: never identity. */
        for (int run = 0; run < 60; run++) {
                World w;
                X11Verdict v;
                int64_t mono_off = INT64_C(7000000000) + run * 1111, delta;

                w.rng = (uint64_t) run * 31 + 7;
                delta = 250000 + (int64_t) (sim_rng_next(&w) % (run % 3 == 0 ? 750000 : 10000000000));
                if (run % 2)
                        delta = -delta;
                x11_verdict_init(&v, 4 * MS);
                sim_world_new(&w, mono_off, mono_off + delta, (run % 5 - 2) * 2.0, (uint64_t) run + 50);
                never += run_verdict(&w, &v, 30, X11_IDENTITY_MONOTONIC, &first) == 0 &&
                         run_verdict(&w, &v, 30, X11_IDENTITY_COARSE, &first) == 0;
                domain_fake_ops.close(w.server);
        }
        is_int(never, 60, "an offset of 250 us or more is never called identity");
}

/* The residual: whenever the verdict says identity, the server's true offset (0, or small enough
 * to pass) lies within it, so a conversion through same_as that adds it stays honest. */
static void test_residual(void) {
        int outside = 0, n_identity = 0, nonzero_tracked = 0, too_wide = 0;
        int64_t widest_ns = 0;

        for (int run = 0; run < 40; run++) {
                World w;
                X11Verdict v;
                X11Planner planner;
                int64_t mono_off = INT64_C(6000000000) + run * 3333, delta, start;

                w.rng = (uint64_t) run * 13 + 3;
                delta = run % 4 == 0 ? 0 : sim_rng_range(&w, -45000, 45000);
                x11_verdict_init(&v, 4 * MS);
                x11_planner_init(&planner);
                sim_world_new(&w, mono_off, mono_off + delta, 0, (uint64_t) run + 300);
                start = w.r_ns;
                for (int k = 0; k < 12; k++) {
                        if (w.r_ns < sim_burst_at(start, k))
                                w.r_ns = sim_burst_at(start, k);
                        for (int i = 0; i < 8; i++) {
                                X11Probe p;
                                X11Identity id;
                                int64_t residual_ns;

                                if (sim_probe(&w, &planner, &p) < 0)
                                        continue;
                                x11_planner_add(&planner, &p);
                                x11_verdict_add(&v, &p);
                                id = x11_verdict_get(&v);
                                residual_ns = x11_verdict_residual_ns(&v, id);
                                if (id == X11_IDENTITY_NONE) {
                                        nonzero_tracked += residual_ns != 0;
                                        continue;
                                }
                                n_identity++;
                                outside += residual_ns < (delta < 0 ? -delta : delta);
                                too_wide += id == X11_IDENTITY_MONOTONIC && residual_ns > 2 * MS;
                                if (residual_ns > widest_ns)
                                        widest_ns = residual_ns;
                        }
                }
                domain_fake_ops.close(w.server);
        }
        ok(n_identity > 0, "identity was called (%d times)", n_identity);
        is_int(outside, 0, "the true offset lies within the residual every time");
        is_int(too_wide, 0, "the residual is a window, not the whole ms");
        is_int(nonzero_tracked, 0, "tracked: no residual");
        diag("widest residual %lld ns", (long long) widest_ns);
}

/* Not latched: one inconsistent probe makes it tracked at once, and it comes back. */
static void test_not_latched(void) {
        X11Verdict v;
        /* Brackets across the 6 ms edge, stamped after it and before it: each pins one side. */
        X11Probe good[2] = {
                { .raw0_ns = 10, .raw1_ns = 30000, .mono0_ns = 5 * MS + 999990,
                  .mono1_ns = 6 * MS + 20000, .server_ms = 6 },
                { .raw0_ns = 10, .raw1_ns = 30000, .mono0_ns = 5 * MS + 999990,
                  .mono1_ns = 6 * MS + 20000, .server_ms = 5 },
        };
        X11Probe bad = good[0];
        int i;

        x11_verdict_init(&v, 4 * MS);
        for (i = 0; i < X11_VERDICT_MIN_PROBES - 1; i++)
                x11_verdict_add(&v, &good[i % 2]);
        ok(x11_verdict_get(&v) == X11_IDENTITY_NONE, "fewer than %d probes: tracked", X11_VERDICT_MIN_PROBES);
        x11_verdict_add(&v, &good[1]);
        ok(x11_verdict_get(&v) == X11_IDENTITY_MONOTONIC, "%d consistent edge probes: identity",
           X11_VERDICT_MIN_PROBES);
        bad.server_ms = 7;
        ok(x11_probe_consistency(&bad, 4 * MS) == 0, "a ms the bracket cannot show is inconsistent");
        x11_verdict_add(&v, &bad);
        ok(x11_verdict_get(&v) == X11_IDENTITY_NONE, "one inconsistent probe: tracked at once");
        for (i = 0; i < X11_VERDICT_WINDOW - 1; i++)
                x11_verdict_add(&v, &good[i % 2]);
        ok(x11_verdict_get(&v) == X11_IDENTITY_NONE, "tracked while it is in the window");
        x11_verdict_add(&v, &good[1]);
        ok(x11_verdict_get(&v) == X11_IDENTITY_MONOTONIC, "identity again once it left: never latched");

        /* Consistent, but never close to an edge: the offset is not pinned, so not identity. */
        x11_verdict_init(&v, 4 * MS);
        for (i = 0; i < X11_VERDICT_WINDOW; i++)
                x11_verdict_add(&v, &(X11Probe) { .mono0_ns = 5 * MS + 400000, .mono1_ns = 5 * MS + 430000,
                                                  .server_ms = 5 });
        ok(x11_verdict_get(&v) == X11_IDENTITY_NONE, "consistent but unpinned: tracked");

        /* A server stamping with a 1 ms coarse clock that lags: the coarse hypothesis. */
        for (int run = 0; run < 5; run++) {
                World w;
                X11Probe p;
                X11Planner planner;
                int64_t mono_off = INT64_C(9000000000);
                bool coarse_ok = true;

                x11_verdict_init(&v, MS);
                x11_planner_init(&planner);
                sim_world_new(&w, mono_off, mono_off, 0, (uint64_t) run + 900);
                w.coarse_tick_ns = MS;
                w.tick_phase_ns = 300000 + run * 100000;
                for (i = 0; i < 64; i++) {
                        sim_probe(&w, &planner, &p);
                        /* The server reads the coarse clock somewhere inside the bracket. */
                        p.server_ms = (uint32_t) (sim_coarse_at(&w, p.mono0_ns + (p.mono1_ns - p.mono0_ns) / 2) / MS);
                        coarse_ok &= (x11_probe_consistency(&p, MS) & X11_CONSISTENT_COARSE) != 0;
                        x11_verdict_add(&v, &p);
                        x11_planner_add(&planner, &p);
                }
                ok(coarse_ok && x11_verdict_get(&v) == X11_IDENTITY_COARSE,
                   "a coarse server: identity with monotonic_coarse");
                /* Its offset from the coarse clock is 0, pinned to within about a tick. */
                ok(x11_verdict_residual_ns(&v, X11_IDENTITY_COARSE) > 0 &&
                   x11_verdict_residual_ns(&v, X11_IDENTITY_COARSE) <= 2 * MS,
                   "... with a residual of %lld ns", (long long) x11_verdict_residual_ns(&v, X11_IDENTITY_COARSE));
                domain_fake_ops.close(w.server);
        }
}

int main(void) {
        test_bound();
        test_verdict();
        test_residual();
        test_not_latched();
        return done_testing();
}
