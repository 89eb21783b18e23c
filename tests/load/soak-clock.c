/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "soak-clock.h"

#define SECOND_NS INT64_C(1000000000)
#define MINUTE_NS (INT64_C(60) * SECOND_NS)
#define HOUR_NS (INT64_C(60) * MINUTE_NS)
#define DAY_NS (INT64_C(24) * HOUR_NS)
/* Events fall here past a whole second: bursts start on whole seconds and last < 1 ms. */
#define EVENT_PHASE_NS (SECOND_NS / 2)

typedef struct Script {
        const char *name;
        FakeConfig config;              /* offset_ns and rate_ppm: those of the first piece */
        int64_t rate_min_ppm, rate_max_ppm;
        int64_t slew_offset_ns;         /* slews at 3, 7, 10, 13 and 19 h of each day, plus this */
        bool steps;
} Script;

static const Script scripts[SOAK_CLOCKS] = {
        { "boottime", { .offset_ns = INT64_C(5000000000000), .rate_ppm = 12, .deviation_min_ns = 20,
          .deviation_max_ns = 200, .outlier_probability = 0.1, .outlier_max_ns = 50000, .interval_ns = 1000,
          .seed = 11 }, -400, 400, 0, true },
        /* CLOCK_MONOTONIC in ms, as Xorg stamps: 2^32 ms come 3.5 days into the week. */
        { "x11", { .unit = { 1e6, 32, true, UNIT_ENCODING_PLAIN },
          .offset_ns = INT64_C(4294967296) * 1000000 - INT64_C(302400) * SECOND_NS, .rate_ppm = -3,
          .deviation_min_ns = 5000, .deviation_max_ns = 100000, .interval_ns = 400000, .seed = 12 },
          -300, 300, HOUR_NS, false },
        /* 100 MHz, 36 bits: wraps every 11.5 minutes. */
        { "gpu", { .unit = { 10.0, 36, true, UNIT_ENCODING_PLAIN }, .offset_ns = INT64_C(100000000000),
          .rate_ppm = -80, .deviation_min_ns = 100, .deviation_max_ns = 2000, .outlier_probability = 0.05,
          .outlier_max_ns = 100000, .interval_ns = 1000, .seed = 13 }, -100, -60, 2 * HOUR_NS, false },
};

static const int64_t slew_hours[] = { 3, 7, 10, 13, 19 };

static uint64_t script_rng(uint64_t *state) {
        uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static int64_t rng_between(uint64_t *state, int64_t lo, int64_t hi) {
        return lo + (int64_t) (script_rng(state) % (uint64_t) (hi - lo + 1));
}

static int add_step(SoakClock *c, int64_t at_ns, int64_t step_ns) {
        if (c->n_steps == SOAK_STEPS_MAX)
                return -ENOSPC;
        c->steps[c->n_steps++] = (FakeStep) { .at_r_ns = at_ns + EVENT_PHASE_NS, .step_ns = step_ns };
        return 0;
}

/* Each night a suspend of 6 to 9 h, each afternoon one of 20 minutes; a suspend of 5 minutes
 * while clients are active; the clock set back by 2 s and forward by 1.5 s. */
static int script_steps(SoakClock *c, int64_t day0_ns, int days, uint64_t *rng) {
        int r = 0;

        for (int d = 0; r >= 0 && d < days; d++) {
                int64_t day_ns = day0_ns + d * DAY_NS;

                r = add_step(c, day_ns + 23 * HOUR_NS + rng_between(rng, 0, 59) * MINUTE_NS,
                             rng_between(rng, 6 * 3600, 9 * 3600) * SECOND_NS);
                if (r >= 0)
                        r = add_step(c, day_ns + 15 * HOUR_NS + rng_between(rng, 0, 30) * MINUTE_NS, 20 * MINUTE_NS);
        }
        if (r >= 0)
                r = add_step(c, day0_ns + 2 * DAY_NS + 10 * HOUR_NS + 50 * MINUTE_NS, 5 * MINUTE_NS);
        if (r >= 0)
                r = add_step(c, day0_ns + 3 * DAY_NS + 16 * HOUR_NS, -2 * SECOND_NS);
        if (r >= 0)
                r = add_step(c, day0_ns + 5 * DAY_NS + 12 * HOUR_NS, 3 * SECOND_NS / 2);
        return r;
}

/* A new piece from at_ns on at rate_ppm, continuous with the last: at_ns is a whole number of
 * ms and the rates whole ppm, so both pieces' drift at at_ns is a whole number of ns. */
static int add_piece(SoakClock *c, const FakeConfig *base, int64_t at_ns, int64_t rate_ppm) {
        FakeConfig config = *base;
        SoakPiece *prev = c->n_pieces > 0 ? &c->pieces[c->n_pieces - 1] : NULL;
        int r;

        if (c->n_pieces == SOAK_PIECES_MAX)
                return -ENOSPC;
        if (prev)
                config.offset_ns = prev->offset_ns + (at_ns / 1000000) * (prev->rate_ppm - rate_ppm);
        config.rate_ppm = (double) rate_ppm;
        config.r_start_ns = at_ns;
        config.steps = c->steps;
        config.n_steps = c->n_steps;
        config.seed = base->seed * 1000 + c->n_pieces;
        r = domain_fake_ops.open(c->name, &config, &c->pieces[c->n_pieces].domain);
        if (r < 0)
                return r;
        c->pieces[c->n_pieces].r_from_ns = at_ns;
        c->pieces[c->n_pieces].rate_ppm = rate_ppm;
        c->pieces[c->n_pieces].offset_ns = config.offset_ns;
        c->n_pieces++;
        return 0;
}

int soak_clock_init(SoakClock *c, size_t which, int64_t r_start_ns, int64_t r_end_ns, ClockGraph *g) {
        const Script *s;
        uint64_t rng;
        int64_t day0_ns = r_start_ns - r_start_ns % DAY_NS;
        int days = (int) ((r_end_ns - day0_ns) / DAY_NS) + 1;
        int r;

        if (which >= SOAK_CLOCKS)
                return -EINVAL;
        s = &scripts[which];
        *c = (SoakClock) { .name = s->name, .unit = s->config.unit, .last_tick_ns = r_start_ns };
        rng = s->config.seed;
        history_init(&c->history, NULL);

        r = s->steps ? script_steps(c, day0_ns, days, &rng) : 0;
        if (r >= 0)
                r = add_piece(c, &s->config, r_start_ns, (int64_t) s->config.rate_ppm);
        for (int d = 0; r >= 0 && d < days; d++)
                for (size_t k = 0; r >= 0 && k < sizeof(slew_hours) / sizeof(slew_hours[0]); k++) {
                        int64_t at_ns = day0_ns + d * DAY_NS + slew_hours[k] * HOUR_NS + s->slew_offset_ns +
                                        rng_between(&rng, 0, 40) * MINUTE_NS + EVENT_PHASE_NS;

                        if (at_ns <= r_start_ns || at_ns >= r_end_ns)
                                continue;
                        r = add_piece(c, &s->config, at_ns, rng_between(&rng, s->rate_min_ppm, s->rate_max_ppm));
                }
        /* The fake's unit: an all-zero one in the script is ns. */
        if (r >= 0)
                c->unit = domain_fake_ops.info(c->pieces[0].domain)->unit;
        if (r >= 0)
                r = graph_add(g, c->name, &c->unit, &c->history, &c->node);
        if (r < 0)
                soak_clock_done(c);
        return r;
}

void soak_clock_done(SoakClock *c) {
        for (size_t i = 0; i < c->n_pieces; i++)
                c->pieces[i].domain = domain_fake_ops.close(c->pieces[i].domain);
        c->n_pieces = 0;
}

static size_t piece_at(const SoakClock *c, size_t from, int64_t r_ns) {
        while (from + 1 < c->n_pieces && c->pieces[from + 1].r_from_ns <= r_ns)
                from++;
        return from;
}

Domain *soak_clock_burst_domain(SoakClock *c, int64_t r_ns) {
        c->current = piece_at(c, c->current, r_ns);
        return c->pieces[c->current].domain;
}

const Domain *soak_clock_domain_at(const SoakClock *c, int64_t r_ns) {
        return c->pieces[piece_at(c, 0, r_ns)].domain;
}

double soak_clock_truth_ns(const SoakClock *c, int64_t r_ns) {
        return fake_truth_ns(soak_clock_domain_at(c, r_ns), r_ns);
}

size_t soak_clock_steps_between(const SoakClock *c, int64_t from_ns, int64_t to_ns) {
        size_t n = 0;

        for (size_t i = 0; i < c->n_steps; i++)
                n += c->steps[i].at_r_ns > from_ns && c->steps[i].at_r_ns <= to_ns;
        return n;
}

bool soak_clock_continuous(const SoakClock *c, double *ret_worst_ns) {
        double worst_ns = 0;

        for (size_t i = 1; i < c->n_pieces; i++) {
                int64_t at_ns = c->pieces[i].r_from_ns;
                double jump_ns = fabs(fake_truth_ns(c->pieces[i].domain, at_ns) -
                                      fake_truth_ns(c->pieces[i - 1].domain, at_ns));

                if (jump_ns > worst_ns)
                        worst_ns = jump_ns;
        }
        *ret_worst_ns = worst_ns;
        return worst_ns < 1.0;
}

bool soak_clock_slew_between(const SoakClock *c, int64_t from_ns, int64_t to_ns) {
        for (size_t i = 1; i < c->n_pieces; i++)
                if (c->pieces[i].r_from_ns > from_ns && c->pieces[i].r_from_ns <= to_ns)
                        return true;
        return false;
}

bool soak_clock_x_repeats(const SoakClock *c, int64_t r_ns) {
        double x = soak_clock_truth_ns(c, r_ns);

        for (size_t i = 0; i < c->n_steps; i++)
                if (c->steps[i].step_ns < 0 && c->steps[i].at_r_ns > r_ns &&
                    soak_clock_truth_ns(c, c->steps[i].at_r_ns) <= x)
                        return true;
        return false;
}

void soak_sort_by_reference(Sample *samples, size_t n) {
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && samples[j - 1].r0_ns > samples[j].r0_ns; j--) {
                        Sample t = samples[j];

                        samples[j] = samples[j - 1];
                        samples[j - 1] = t;
                }
}
