/* SPDX-License-Identifier: MIT */

#include <math.h>

#include "domain.h"
#include "x11-sim.h"

uint64_t sim_rng_next(World *w) {
        uint64_t z = (w->rng += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

int64_t sim_rng_range(World *w, int64_t lo, int64_t hi) {
        return lo + (int64_t) (sim_rng_next(w) % (uint64_t) (hi - lo + 1));
}

int64_t sim_coarse_at(const World *w, int64_t mono_ns) {
        int64_t k = (mono_ns - w->tick_phase_ns) / w->coarse_tick_ns;

        return k * w->coarse_tick_ns + w->tick_phase_ns;
}

int sim_world_new(World *w, int64_t mono_offset_ns, int64_t server_offset_ns, double rate_ppm, uint64_t seed) {
        FakeConfig c = {
                .unit = UNIT_MS_X11,
                .offset_ns = server_offset_ns,
                .rate_ppm = rate_ppm,
                .seed = seed,
        };

        *w = (World) {
                .mono_offset_ns = mono_offset_ns,
                .coarse_tick_ns = 4 * MS,
                .rng = seed * 7 + 1,
                .r_ns = INT64_C(1000000000),
                .rtt_min_ns = INT64_MAX,
        };
        w->tick_phase_ns = sim_rng_range(w, 0, w->coarse_tick_ns - 1);
        w->rtt_floor_ns = sim_rng_range(w, 5000, 100000);
        c.r_start_ns = w->r_ns;
        return domain_fake_ops.open("server", &c, &w->server);
}

/* One probe as x11.c takes it. */
int sim_probe(World *w, X11Planner *planner, X11Probe *ret) {
        int64_t now_mono = w->r_ns + w->mono_offset_ns, wake, woke, r0, r1, t, wire, rtt;
        int r;

        for (int attempt = 0; attempt < 2; attempt++) {
                int64_t target = x11_planner_next(planner, now_mono, sim_rng_next(w), &wake);

                woke = now_mono;
                if (wake <= now_mono)
                        break;
                /* The timer's slack and a VM's wake-up: ~80 us, sometimes much more. */
                woke = wake + sim_rng_range(w, 70000, 90000);
                if (sim_rng_next(w) % 10 == 0)
                        woke += sim_rng_range(w, 0, 100000);
                if (x11_planner_woke(planner, wake, target, woke))
                        break;
                now_mono = woke;
        }
        /* Mostly near the floor, sometimes slow (the server or we were preempted). */
        rtt = w->rtt_floor_ns + sim_rng_range(w, 0, w->rtt_floor_ns / 2);
        if (sim_rng_next(w) % 20 == 0)
                rtt += sim_rng_range(w, 0, 4 * w->rtt_floor_ns);
        r0 = woke - w->mono_offset_ns;
        r1 = r0 + rtt;
        t = sim_rng_range(w, r0 + 200, r1 - 200);
        r = fake_read_at(w->server, t, &wire);
        if (r < 0)
                return r;
        if (rtt < w->rtt_min_ns)
                w->rtt_min_ns = rtt;

        *ret = (X11Probe) {
                .raw0_ns = r0,
                .raw1_ns = r1,
                .mono0_ns = r0 + 50 + w->mono_offset_ns,
                .mono1_ns = r1 - 50 + w->mono_offset_ns,
                .coarse0_ns = sim_coarse_at(w, r0 + 100 + w->mono_offset_ns),
                .coarse1_ns = sim_coarse_at(w, r1 - 100 + w->mono_offset_ns),
                .server_ms = (uint32_t) wire,
        };
        w->r_ns = r1 + 500;
        return 0;
}

/* The reference time of the k-th burst of the daemon's schedule. */
int64_t sim_burst_at(int64_t start_ns, int k) {
        static const int64_t early[] = { 0, 10 * MS, 100 * MS };

        return start_ns + (k < 3 ? early[k] : (k - 2) * INT64_C(1000000000));
}

/* The truth in the domain's unwrapped ns: the fake's own era moved next to CLOCK_MONOTONIC. */
double sim_truth_x_ns(const World *w, int64_t r_ns) {
        double x = fake_truth_ns(w->server, r_ns), mono = (double) (r_ns + w->mono_offset_ns);

        return x - nearbyint((x - mono) / (double) WRAP_NS) * (double) WRAP_NS;
}
