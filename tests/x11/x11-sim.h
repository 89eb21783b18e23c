/* SPDX-License-Identifier: MIT */
#pragma once

/* A simulated X server for the tests of calibrate/x11-verdict.c: the fake domain (a ms-truncated,
 * 32-bit clock with a known offset and rate) is the server's clock, and probes are taken as
 * domains/x11.c takes them: the planned phase, a late wake-up (timer slack), a round trip near
 * this connection's floor of 5-100 us (sometimes slow), the stamp somewhere inside the bracket.
 * Bursts follow the daemon's schedule: 8 probes at 0, 10 ms, 100 ms, then every second. */

#include <stdint.h>

#include "fake.h"
#include "x11-verdict.h"

#define MS INT64_C(1000000)
#define WRAP_NS ((INT64_C(1) << 32) * MS)

typedef struct World {
        Domain *server;                 /* the fake: truth in server ns at reference r */
        int64_t mono_offset_ns;         /* CLOCK_MONOTONIC = r + this (no slewing here) */
        int64_t coarse_tick_ns;         /* CLOCK_MONOTONIC_COARSE ticks; its phase is tick_phase */
        int64_t tick_phase_ns;
        int64_t r_ns;                   /* the simulated reference, now */
        int64_t rtt_floor_ns;           /* this connection's round trip, 5-100 us */
        uint64_t rng;
        int64_t rtt_min_ns;             /* the best round trip seen */
} World;

uint64_t sim_rng_next(World *w);
int64_t sim_rng_range(World *w, int64_t lo, int64_t hi);

/* CLOCK_MONOTONIC_COARSE at a CLOCK_MONOTONIC time. */
int64_t sim_coarse_at(const World *w, int64_t mono_ns);

/* CLOCK_MONOTONIC = r + mono_offset_ns; the server's truth = server_offset_ns + r (1 + rate). */
int sim_world_new(World *w, int64_t mono_offset_ns, int64_t server_offset_ns, double rate_ppm, uint64_t seed);

/* One probe planned by planner (not updated: the caller adds the probe where it wants). */
int sim_probe(World *w, X11Planner *planner, X11Probe *ret);

/* The reference time of the k-th burst of the daemon's schedule. */
int64_t sim_burst_at(int64_t start_ns, int k);

/* The truth in the domain's unwrapped ns: the fake's own era moved next to CLOCK_MONOTONIC. */
double sim_truth_x_ns(const World *w, int64_t r_ns);
