/* SPDX-License-Identifier: MIT */

/* Across the 2^32 ms wrap of the X server's clock, with the fake domain as the server
 * (x11-sim.h): samples from calibrate/x11-verdict.c, through the history and the live graph,
 * convert continuously to x11 and x11_us, and in identity mode bit for bit. */

#include <math.h>
#include <stdbool.h>

#include "graph.h"
#include "history.h"
#include "tap.h"
#include "x11-sim.h"
#include "x11-verdict.h"
#include "xtime.h"

/* Feeds one burst of probes to history; false when a probe or a sample failed. */
static bool feed_burst(World *w, X11Planner *planner, History *h) {
        bool good = true;

        for (int i = 0; i < 8; i++) {
                X11Probe p;
                Sample s;

                good &= sim_probe(w, planner, &p) == 0 && x11_probe_sample(&p, 0, &s) == 0 &&
                        history_add(h, &s, NULL) == 0;
                x11_planner_add(planner, &p);
        }
        return good;
}

/* Across the 2^32 ms wrap of the server's clock: conversions to x11 and x11_us stay continuous,
 * hold the truth, and in identity mode (x11 same as monotonic) give the encoding bit for bit. */
static void test_wrap(int64_t delta_ns, double rate_ppm, bool identity) {
        static History h, h_mono;
        ClockGraph g;
        X11Planner planner;
        World w;
        /* CLOCK_MONOTONIC reaches 2^32 ms half a second into the run. */
        int64_t mono_off = WRAP_NS - INT64_C(1500000000), start, r_wrap, prev_us = 0;
        size_t x11, x11_us, mono;
        bool fed = true, holds = true, continuous = true, crossed = false, exact = true;

        history_init(&h, NULL);
        history_init(&h_mono, NULL);
        x11_planner_init(&planner);
        sim_world_new(&w, mono_off, mono_off + delta_ns, rate_ppm, 4242);
        graph_init(&g, "monotonic_raw");
        graph_add(&g, "monotonic", &UNIT_NS, &h_mono, &mono);
        graph_add(&g, "x11", &UNIT_MS_X11, &h, &x11);
        graph_add(&g, "x11_us", &UNIT_US_X11, &h, &x11_us);

        start = w.r_ns;
        for (int k = 0; k < 6; k++) {
                Sample exact_sample;

                if (w.r_ns < sim_burst_at(start, k))
                        w.r_ns = sim_burst_at(start, k);
                fed &= feed_burst(&w, &planner, &h);
                exact_sample = (Sample) { w.r_ns, w.r_ns, w.r_ns + mono_off, w.r_ns + mono_off };
                fed &= history_add(&h_mono, &exact_sample, NULL) == 0;
                for (size_t i = 1; i < g.n_nodes; i++) {
                        graph_set_available(&g, i, true);
                        graph_refresh(&g, i);
                }
                for (int j = 0; j < 4 && k > 0; j++) {
                        int64_t r = w.r_ns - j * INT64_C(20000000), v, v_ms, unc, unc_ms, dec;
                        double truth = sim_truth_x_ns(&w, r);

                        holds &= graph_convert(&g, g.hub, x11_us, r, r, &v, &unc) == 0 &&
                                 xtime_decode_us((uint64_t) v, (int64_t) (truth / 1000), &dec) == 0 &&
                                 fabs((double) dec * 1000 - truth) <= (double) unc + 1000 &&
                                 graph_convert(&g, g.hub, x11, r, r, &v_ms, &unc_ms) == 0 &&
                                 v_ms >= 0 && v_ms <= UINT32_MAX &&
                                 fabs((double) xtime_unwrap_ms((uint32_t) v_ms, (int64_t) (truth / 1e6)) * 1e6 -
                                      truth) <= (double) unc_ms + 1e6;
                }
        }
        ok(fed, "%s: every probe gives a sample the history takes", identity ? "identity" : "offset");
        ok(holds, "%s: x11 and x11_us hold the truth across the wrap", identity ? "identity" : "offset");

        /* Step through the instant the server's ms wraps. */
        r_wrap = start + (int64_t) ((double) WRAP_NS * ceil(fake_truth_ns(w.server, start) / (double) WRAP_NS) -
                                    fake_truth_ns(w.server, start));
        for (int64_t r = r_wrap - 3 * MS; r <= r_wrap + 3 * MS; r += MS / 4) {
                int64_t v, unc, dec;

                if (graph_convert(&g, g.hub, x11_us, r, r, &v, &unc) < 0 ||
                    xtime_decode_us((uint64_t) v, (int64_t) (sim_truth_x_ns(&w, r) / 1000), &dec) < 0) {
                        continuous = false;
                        continue;
                }
                if (r > r_wrap - 3 * MS && (dec - prev_us < 150 || dec - prev_us > 350))
                        continuous = false;
                crossed |= v < 1000000 && prev_us != 0;
                prev_us = dec;
        }
        ok(continuous && crossed, "%s: x11_us steps by 250 us through the wrap of its ms part",
           identity ? "identity" : "offset");

        if (identity) {
                ok(graph_set_same_as(&g, x11, mono) == 0 && graph_set_same_as(&g, x11_us, mono) == 0,
                   "identity: x11 and x11_us follow monotonic");
                for (int64_t t = mono_off + r_wrap - 5 * MS; t < mono_off + r_wrap + 5 * MS; t += 12345) {
                        int64_t v, unc;
                        uint64_t want;

                        exact &= graph_convert(&g, mono, x11_us, t, r_wrap, &v, &unc) == 0 &&
                                 xtime_encode_us(t / 1000, &want) == 0 && (uint64_t) v == want && unc <= 1000;
                }
                ok(exact, "identity: monotonic -> x11_us is the encoding of the truth, bit for bit");
        }
        domain_fake_ops.close(w.server);
}

int main(void) {
        test_wrap(0, 0, true);
        test_wrap(-INT64_C(1200321000), 3.3, false);
        return done_testing();
}
