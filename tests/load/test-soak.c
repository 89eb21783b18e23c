/* SPDX-License-Identifier: MIT */

/* A simulated week in a few seconds: three scripted clocks (domains/fake.h) calibrated through
 * burst selection, History, Estimator, the live ClockGraph and the daemon's snapshot ring as
 * timeconvd feeds them, on its cadences (a burst a second while clients are active, every 30 s
 * when idle). The week brings what weeks bring: suspends and clock sets (steps), NTP slews
 * (changes of rate: a piecewise script of fake domains, continuous at each change), the 32-bit
 * ms X server clock wrapping, a 36-bit GPU tick clock wrapping every 11 minutes. Checked:
 * every answer at thousands of points holds the truth within its bound, every step is found as
 * one and no slew is taken for one, and memory stays flat: the heap in use (mallinfo2) is the
 * same after every simulated day as before the first, and every ring stays within its capacity. */

#include <malloc.h>
#include <math.h>
#include <time.h>

#include "burst.h"
#include "snapshots.h"
#include "soak-clock.h"
#include "tap.h"

#define DAY_NS (INT64_C(86400) * 1000000000)
#define HOUR_NS (INT64_C(3600) * 1000000000)
#define WEEK_DAYS 7
#define R_START_NS HOUR_NS
#define ACTIVE_CADENCE_NS INT64_C(1000000000)
#define IDLE_CADENCE_NS (INT64_C(30) * 1000000000)
/* Clients are active an hour a day (then the daemon bursts every second), idle otherwise. */
#define ACTIVE_FROM_NS (INT64_C(10) * HOUR_NS)
#define ACTIVE_TO_NS (INT64_C(11) * HOUR_NS)
#define CHECKS_PER_CHECKPOINT 120

static const char *const kind_names[] = { "reference -> clock", "clock -> reference", "clock -> clock" };

typedef struct Soak {
        SoakClock clocks[SOAK_CLOCKS];
        ClockGraph graph;
        SnapshotRing *snapshots;
        uint64_t rng;
        int64_t last_r1_ns;             /* the newest sample of the latest tick */
        /* what was found */
        int errors;
        unsigned checked[3], outside[3];
        double worst_ratio[3];
        unsigned steps_announced, steps_missed, slews_as_steps, other_steps;
        size_t max_segments, max_window, max_snapshots;
} Soak;

static uint64_t soak_rng(Soak *s) {
        uint64_t z = (s->rng += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static int64_t tick_cadence_ns(int64_t r_ns) {
        int64_t in_day = r_ns % DAY_NS;

        return in_day >= ACTIVE_FROM_NS && in_day < ACTIVE_TO_NS ? ACTIVE_CADENCE_NS : IDLE_CADENCE_NS;
}

/* The heap in use: what a leak or a growing structure would change. */
static size_t heap_in_use(void) {
        struct mallinfo2 mi = mallinfo2();

        return mi.uordblks + mi.hblkhd;
}

/* One tick as the core makes it: a burst per clock (8 samples; keep the best 2, or all of a
 * truncating clock's), in time order into its history, the graph refreshed; then a snapshot. */
static void tick(Soak *s, int64_t t_ns) {
        for (size_t i = 0; i < SOAK_CLOCKS; i++) {
                SoakClock *c = &s->clocks[i];
                Sample samples[8];
                size_t n = 0, kept = 0;
                bool step = false, script_step, script_slew;
                Domain *d = soak_clock_burst_domain(c, t_ns);

                fake_advance(d, t_ns - fake_now_ns(d));
                if (domain_fake_ops.sample_burst(d, samples, 8, &n) < 0) {
                        s->errors++;
                        continue;
                }
                if (c->unit.truncates)
                        kept = n;
                else if (burst_select(samples, n, 2, &kept) < 0)
                        s->errors++;
                soak_sort_by_reference(samples, kept);
                for (size_t k = 0; k < kept; k++) {
                        HistoryEvent ev;

                        if (history_add(&c->history, &samples[k], &ev) < 0)
                                s->errors++;
                        else if (ev.verdict == ESTIMATOR_STEP)
                                step = true;
                        if (samples[k].r1_ns > s->last_r1_ns)
                                s->last_r1_ns = samples[k].r1_ns;
                }
                graph_refresh(&s->graph, c->node);

                /* What happened since this clock's previous burst, by the script. */
                script_step = soak_clock_steps_between(c, c->last_tick_ns, t_ns) > 0;
                script_slew = soak_clock_slew_between(c, c->last_tick_ns, t_ns);
                c->last_tick_ns = t_ns;
                if (script_step) {
                        s->steps_announced += step;
                        s->steps_missed += !step;
                } else if (step && script_slew)
                        s->slews_as_steps++;
                else if (step)
                        s->other_steps++;
                if (step != script_step)
                        diag("%s, burst at %.6f h: %s%s", c->name, (double) t_ns / HOUR_NS,
                             step ? "a step announced" : "a step missed",
                             script_slew ? ", where the script changed the rate and made no step" : "");
                if (history_count(&c->history) > s->max_segments)
                        s->max_segments = history_count(&c->history);
                if (c->history.estimator.n > s->max_window)
                        s->max_window = c->history.estimator.n;
        }
        snapshot_ring_take(s->snapshots, &s->graph, t_ns);
        if (snapshot_ring_count(s->snapshots) > s->max_snapshots)
                s->max_snapshots = snapshot_ring_count(s->snapshots);
}

/* Whether r_ns falls where no one can know the answer: between the last sample before a
 * segment's end and the first after it (on which side of the step was it?). */
static bool in_gap(const SoakClock *c, int64_t r_ns) {
        const History *h = &c->history;

        for (size_t i = 1; i < history_count(h); i++)
                if (r_ns > history_get(h, i - 1)->r_end_ns && r_ns < history_get(h, i)->r_begin_ns)
                        return true;
        return false;
}

/* The error of a value v of clock c (wire form) against the truth at r_ns, in ns. */
static int error_against_truth(const SoakClock *c, int64_t v, int64_t r_ns, double *ret_err_ns) {
        double truth = soak_clock_truth_ns(c, r_ns);
        int64_t unwrapped;
        int r;

        r = unit_unwrap(&c->unit, v, (int64_t) floor(truth / c->unit.period_ns), &unwrapped);
        if (r < 0)
                return r;
        *ret_err_ns = fabs((double) unwrapped * c->unit.period_ns - truth);
        return 0;
}

/* CHECKS_PER_CHECKPOINT conversions at random times of the calibrated past (back to the oldest
 * segment every clock still holds) and up to now_ns, each against the script's truth. */
static void checkpoint(Soak *s, int64_t now_ns) {
        int64_t lo_ns = now_ns - DAY_NS;

        for (size_t i = 0; i < SOAK_CLOCKS; i++) {
                const Segment *oldest = history_get(&s->clocks[i].history, 0);

                if (oldest && oldest->r_begin_ns > lo_ns)
                        lo_ns = oldest->r_begin_ns;
        }
        for (int k = 0; k < CHECKS_PER_CHECKPOINT; k++) {
                int64_t r_ns = lo_ns + (int64_t) (soak_rng(s) % (uint64_t) (now_ns - lo_ns + 1));
                unsigned kind = (unsigned) (soak_rng(s) % 3);
                SoakClock *a = &s->clocks[soak_rng(s) % SOAK_CLOCKS], *b = a;
                int64_t wire = 0, v, unc;
                double err = 0;
                int r;

                while (kind == 2 && b == a)
                        b = &s->clocks[soak_rng(s) % SOAK_CLOCKS];
                if (in_gap(a, r_ns) || in_gap(b, r_ns) || (kind != 0 && soak_clock_x_repeats(a, r_ns)))
                        continue;
                if (kind != 0 && fake_read_at(soak_clock_domain_at(a, r_ns), r_ns, &wire) < 0) {
                        s->errors++;
                        continue;
                }
                switch (kind) {
                case 0:
                        r = graph_convert(&s->graph, s->graph.hub, a->node, r_ns, r_ns, &v, &unc);
                        if (r >= 0)
                                r = error_against_truth(a, v, r_ns, &err);
                        break;
                case 1:
                        r = graph_convert(&s->graph, a->node, s->graph.hub, wire, r_ns, &v, &unc);
                        err = fabs((double) v - (double) r_ns);
                        break;
                default:
                        r = graph_convert(&s->graph, a->node, b->node, wire, r_ns, &v, &unc);
                        if (r >= 0)
                                r = error_against_truth(b, v, r_ns, &err);
                }
                if (r < 0) {
                        if (s->errors++ < 5)
                                diag("%s, %s at r %.3f h: %s", kind_names[kind], a->name, (double) r_ns / HOUR_NS,
                                     strerror(-r));
                        continue;
                }
                s->checked[kind]++;
                if (err > (double) unc && s->outside[kind]++ < 5)
                        diag("outside: %s %s%s%s at r %.6f h: error %.0f ns, bound %" PRIi64 " ns", kind_names[kind],
                             a->name, kind == 2 ? " -> " : "", kind == 2 ? b->name : "", (double) r_ns / HOUR_NS,
                             err, unc);
                if (unc > 0 && err / (double) unc > s->worst_ratio[kind])
                        s->worst_ratio[kind] = err / (double) unc;
        }
}

int main(void) {
        static Soak s;  /* static: about 150 KiB of rings and histories */
        int64_t t_ns = R_START_NS, end_ns = R_START_NS + WEEK_DAYS * DAY_NS, next_check_ns = R_START_NS + HOUR_NS;
        size_t heap_before, heap_max_growth = 0, steps_scripted = 0;
        struct timespec t0, t1;
        int day = 0, r;

        s.rng = 0x736f616b;
        r = snapshot_ring_new(SNAPSHOT_RING_CAPACITY, &s.snapshots);
        if (r >= 0)
                r = graph_init(&s.graph, "monotonic_raw");
        for (size_t i = 0; r >= 0 && i < SOAK_CLOCKS; i++)
                r = soak_clock_init(&s.clocks[i], i, R_START_NS, end_ns, &s.graph);
        ok(r >= 0, "three scripted clocks for a week: boottime-like, X server ms, GPU ticks: %s",
           r < 0 ? strerror(-r) : "ready");
        if (r < 0)
                return done_testing();
        for (size_t i = 0; i < SOAK_CLOCKS; i++) {
                const SoakClock *c = &s.clocks[i];
                double jump_ns, wrap_ns = c->unit.period_ns * ldexp(1, (int) c->unit.wrap_bits), wraps = 0;

                steps_scripted += soak_clock_steps_between(c, R_START_NS, end_ns);
                if (c->unit.wrap_bits > 0 && c->unit.wrap_bits < 64)
                        wraps = floor(soak_clock_truth_ns(c, end_ns) / wrap_ns) -
                                floor(soak_clock_truth_ns(c, R_START_NS) / wrap_ns);
                ok(soak_clock_continuous(c, &jump_ns) && (c->unit.wrap_bits == 0 || wraps >= 1),
                   "%s: %zu changes of rate, each continuous (within %.3g ns), %zu steps, %.0f wraps", c->name,
                   c->n_pieces - 1, jump_ns, soak_clock_steps_between(c, R_START_NS, end_ns), wraps);
        }

        /* Everything the week needs exists now: from here on, nothing may allocate for good. */
        heap_before = heap_in_use();
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (t_ns < end_ns) {
                tick(&s, t_ns);
                t_ns += tick_cadence_ns(t_ns);
                if (t_ns >= next_check_ns) {
                        checkpoint(&s, s.last_r1_ns);
                        next_check_ns += HOUR_NS;
                }
                if (t_ns >= R_START_NS + (int64_t) (day + 1) * DAY_NS) {
                        size_t heap = heap_in_use();

                        day++;
                        if (heap > heap_before && heap - heap_before > heap_max_growth)
                                heap_max_growth = heap - heap_before;
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        diag("a simulated week in %.2f s", (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);

        is_int(s.errors, 0, "no calibration or conversion failed");
        for (int k = 0; k < 3; k++)
                ok(s.outside[k] == 0 && s.checked[k] > WEEK_DAYS * 24 * CHECKS_PER_CHECKPOINT / 6,
                   "%s: the truth inside the bound in %u of %u conversions (worst error/bound %.3f)", kind_names[k],
                   s.checked[k] - s.outside[k], s.checked[k], s.worst_ratio[k]);
        ok(s.steps_missed == 0 && s.steps_announced == steps_scripted,
           "every step announced at the first burst after it (%u of %zu)", s.steps_announced, steps_scripted);
        ok(s.slews_as_steps + s.other_steps == 0, "no change of rate (or anything else) announced as a step "
           "(%u were)", s.slews_as_steps + s.other_steps);
        is_int(heap_max_growth, 0, "the heap in use is the same after every simulated day (mallinfo2)");
        ok(heap_in_use() == heap_before, "and after the week");
        ok(s.max_segments <= HISTORY_SEGMENTS_MAX && s.max_window <= ESTIMATOR_WINDOW_MAX &&
           s.max_snapshots <= SNAPSHOT_RING_CAPACITY,
           "the rings stay within capacity: %zu segments, %zu samples, %zu snapshots", s.max_segments, s.max_window,
           s.max_snapshots);
        ok(s.max_segments == HISTORY_SEGMENTS_MAX && s.max_snapshots == SNAPSHOT_RING_CAPACITY,
           "and the week filled them (so the bound was reached, not just approached)");

        for (size_t i = 0; i < SOAK_CLOCKS; i++)
                soak_clock_done(&s.clocks[i]);
        snapshot_ring_free(s.snapshots);
        return done_testing();
}
