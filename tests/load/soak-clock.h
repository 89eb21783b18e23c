/* SPDX-License-Identifier: MIT */
#pragma once

/* A scripted clock for a simulated week: the fake domain can hold one rate only, so a clock
 * whose rate changes (an NTP slew, a GPU warming up) is a chain of fake domains, each opened in
 * advance, each continuous with the one before at the instant it takes over. Steps (suspends,
 * clock sets) are the fake domain's own. Every event falls half a second past a whole second,
 * never inside a burst. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake.h"
#include "graph.h"
#include "history.h"

#define SOAK_CLOCKS 3
#define SOAK_PIECES_MAX 64
#define SOAK_STEPS_MAX 32

typedef struct SoakPiece {
        int64_t r_from_ns;              /* this piece is the truth from here on */
        int64_t rate_ppm;
        int64_t offset_ns;              /* its truth at r = 0, steps aside */
        Domain *domain;
} SoakPiece;

typedef struct SoakClock {
        const char *name;
        DomainUnit unit;
        SoakPiece pieces[SOAK_PIECES_MAX];
        size_t n_pieces;
        size_t current;                 /* the piece the bursts read */
        FakeStep steps[SOAK_STEPS_MAX];
        size_t n_steps;
        History history;
        size_t node;                    /* in the graph */
        int64_t last_tick_ns;
} SoakClock;

/* Scripts clock `which` (0: a boottime-like ns clock with suspends, clock sets and slews; 1: the
 * X server's 32-bit ms clock, wrapping mid-week, with slews; 2: a 36-bit GPU tick clock with
 * thermal drift) over [r_start_ns, r_end_ns], opens its pieces and adds it to g. */
int soak_clock_init(SoakClock *c, size_t which, int64_t r_start_ns, int64_t r_end_ns, ClockGraph *g);
void soak_clock_done(SoakClock *c);

/* The piece that is the truth at r_ns: for a burst (bursts only go forward), for a look. */
Domain *soak_clock_burst_domain(SoakClock *c, int64_t r_ns);
const Domain *soak_clock_domain_at(const SoakClock *c, int64_t r_ns);

/* The truth at r_ns, in the clock's ns, unwrapped. */
double soak_clock_truth_ns(const SoakClock *c, int64_t r_ns);

/* How many steps the script has in (from_ns, to_ns]; whether it has a change of rate there. */
size_t soak_clock_steps_between(const SoakClock *c, int64_t from_ns, int64_t to_ns);
bool soak_clock_slew_between(const SoakClock *c, int64_t from_ns, int64_t to_ns);

/* Whether each piece takes over where the one before left off (within 1 ns); the worst jump. */
bool soak_clock_continuous(const SoakClock *c, double *ret_worst_ns);

/* Whether the clock shows at some later time what it shows at r_ns (a step back came after):
 * converting that value back is ambiguous. */
bool soak_clock_x_repeats(const SoakClock *c, int64_t r_ns);

void soak_sort_by_reference(Sample *samples, size_t n);
