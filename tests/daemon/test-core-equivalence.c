/* SPDX-License-Identifier: MIT */

/* The three answers of one conversion against a fake clock's truth: the daemon's core (its graph,
 * as Convert answers), the shared table published from it, and the offline snapshot graph loaded
 * from the core's export (the daemon's own export code, core_bus_ops). Fake domains of every kind
 * of unit: ns with a drift, X server ms (truncating, wrapping at 32 bits), and GPU ticks of a
 * fractional period. For values about the latest calibration and every ordered pair, each answer's
 * bound must hold the truth, and the three answers must agree within their bounds. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "core-bus.h"
#include "fake.h"
#include "shared-table.h"
#include "snapshots.h"
#include "tap.h"
#include "timeconv.h"

#define N_FAKES 3
#define BURSTS 30
#define VALUES 200

static const DomainUnit UNIT_TICK = { .period_ns = 52.083, .wrap_bits = 0 };
static const char *const names[N_FAKES] = { "drifty", "xms", "ticks" };
static const DomainUnit *const units[N_FAKES] = { &UNIT_NS, &UNIT_MS_X11, &UNIT_TICK };

/* Adds fake i (one per kind of unit: ns drifting, X ms, GPU ticks), sampled every interval_ns. */
static int add_fake(Core *c, size_t i, int64_t interval_ns, uint64_t seed) {
        FakeConfig fc = {
                .unit = *units[i],
                .offset_ns = INT64_C(1000000007) * (int64_t) (i + 3),
                .rate_ppm = i == 0 ? 35.0 : i == 1 ? -12.0 : 120.0,
                .deviation_min_ns = i == 1 ? 20000 : 40,
                .deviation_max_ns = i == 1 ? 60000 : 400,
                .r_start_ns = INT64_C(1000000000),
                .interval_ns = interval_ns,
                .seed = seed,
        };
        DomainInfo info = { .unit = *units[i], .resolution_ns = 1, .monotonic = true };

        snprintf(info.name, sizeof(info.name), "%s", names[i]);
        return core_add_domain(c, &domain_fake_ops, &info, &fc);
}

static uint64_t rng_next(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The truth of node index (0: the hub, r itself) at r, in its unit: the count a reading would
 * give (floor for a truncating unit, else nearest), and the true ns. */
static int truth(Core *c, Domain *const *fakes, size_t index, int64_t r_ns, int64_t *ret_count, double *ret_ns) {
        const DomainUnit *u = &c->graph.nodes[index].unit;
        double ns = index == c->graph.hub ? (double) r_ns : fake_truth_ns(fakes[index - 1], r_ns);
        int64_t count, wrapped;
        int r;

        r = unit_from_ns(u, (int64_t) floor(ns), &count, NULL);
        if (r >= 0)
                r = unit_wrap(u, count, &wrapped);
        if (r < 0)
                return r;
        *ret_count = wrapped;
        *ret_ns = ns;
        return 0;
}

/* Whether an answer (in to's unit) holds the truth within its bound. Both sides are counts of a
 * real instant (the answer's, the truth's floor or nearest), each up to a count off it: hence
 * two counts of slack, and 1 ns for the unit's ns rounding. */
static bool holds(const DomainUnit *u, int64_t answer, int64_t bound_ns, int64_t truth_count, double truth_ns) {
        int64_t a_ns, t_ns;

        if (unit_to_ns(u, answer, &a_ns) < 0 || unit_to_ns(u, truth_count, &t_ns) < 0)
                return false;
        /* wrapped values: compare within the wrap, by the counts' ns */
        (void) truth_ns;
        /* Subtracted as integers: beyond 2^53 ns, doubles are more than 1 ns apart. */
        return fabs((double) ((__int128) a_ns - t_ns)) <= (double) bound_ns + 2.0 * u->period_ns + 1.0;
}

#define TIGHT_ROUNDS 48
#define TIGHT_EVERY 4           /* a snapshot every 4th round: instants between snapshots */

/* Offline as tight as live: calibrated bursts about 8 s apart, a snapshot every 4th round (about
 * 30 s apart, as the daemon's scheduler spaces them once settled). At each round between
 * snapshots the live answer (the core's graph then) of hub <-> every fake at that instant; after
 * the run, the export converted offline (DRIFT, the default) at the same instants must hold the
 * truth and be within 2x the live bound (X ms included), and never looser than NEAREST. */
static void test_offline_as_tight_as_live(void) {
        const Log log = { .max_level = LOG_ERR };
        struct {
                int64_t r_ns, live_bound_ns[2][N_FAKES + 1];
        } at[TIGHT_ROUNDS];
        struct timeconv_snapshots *snaps = NULL;
        struct timeconv_error error = {};
        Domain *fakes[N_FAKES];
        size_t n_at = 0, looser = 0, missed = 0, wide = 0, compared = 0;
        double worst_ratio = 0;
        char *json = NULL;
        CoreBurst burst;
        Core *c = NULL;
        int failed = 0;

        is_int(core_new(&log, &c), 0, "tight: core_new");
        for (size_t i = 0; i < N_FAKES; i++) {
                if (add_fake(c, i, 1000000000, i + 11) < 0 ||
                    core_domain_source(c, i + 1, &(const DomainOps *) { NULL }, &fakes[i]) < 0)
                        failed++;
        }
        is_int(failed, 0, "tight: three fakes, a sample a second");
        for (int round = 0; !failed && round < TIGHT_ROUNDS; round++) {
                int64_t r_now = 0;

                for (size_t i = 0; i < N_FAKES; i++) {
                        failed += core_calibrate(c, i + 1, &burst) < 0;
                        r_now = fake_now_ns(fakes[i]) > r_now ? fake_now_ns(fakes[i]) : r_now;
                }
                if (round % TIGHT_EVERY == 0) {
                        snapshot_ring_take(c->snapshots, &c->graph, r_now);
                        continue;
                }
                /* what a live client asking now would have got: both ways, at this instant */
                at[n_at].r_ns = r_now;
                for (size_t j = 1; j <= N_FAKES; j++) {
                        int64_t value, v, v_ns;
                        double ns;

                        int64_t *bound = at[n_at].live_bound_ns[0], *back = at[n_at].live_bound_ns[1];

                        bound[j] = back[j] = -1;
                        if (graph_convert(&c->graph, c->graph.hub, j, r_now, r_now, &v, &bound[j]) < 0 ||
                            truth(c, fakes, j, r_now, &value, &ns) < 0 ||
                            graph_convert(&c->graph, j, c->graph.hub, value, r_now, &v_ns, &back[j]) < 0)
                                failed++;
                }
                n_at++;
        }
        is_int(failed, 0, "tight: every burst calibrated, every live conversion answered");
        ok(core_bus_ops.export_snapshots(c, &json) == 0 && json &&
           timeconv_snapshots_load_buffer(json, strlen(json), &snaps, &error) == 0, "tight: the export loads %s",
           error.message);
        ok(json && strstr(json, "\"rate_ppb\"") && strstr(json, "\"rate_unc_ppb\""),
           "tight: the export carries the models' rates and their bounds");
        ok(json && strstr(json, "\"frac_ns\""), "tight: and where in its ms each X ms reading was");

        for (size_t k = 0; snaps && k + TIGHT_EVERY < n_at + n_at / (TIGHT_EVERY - 1); k++) {
                if (k >= n_at || at[k].r_ns > c->snapshots->entries[c->snapshots->n - 1].r_ns)
                        break;  /* after the last snapshot: extrapolation, not what this is about */
                for (size_t j = 1; j <= N_FAKES; j++)
                        for (int dir = 0; dir < 2; dir++) {
                                const char *from = dir ? names[j - 1] : c->graph.nodes[c->graph.hub].name;
                                const char *to = dir ? c->graph.nodes[c->graph.hub].name : names[j - 1];
                                const DomainUnit *u = dir ? &UNIT_NS : units[j - 1];
                                int64_t value, want, drift, drift_unc, nearest, nearest_unc, allow;
                                double ns, ns_to;

                                if (truth(c, fakes, dir ? j : c->graph.hub, at[k].r_ns, &value, &ns) < 0 ||
                                    truth(c, fakes, dir ? c->graph.hub : j, at[k].r_ns, &want, &ns_to) < 0 ||
                                    timeconv_snapshots_convert(snaps, TIMECONV_MODE_DRIFT, from, to, value, &drift,
                                                               &drift_unc) < 0 ||
                                    timeconv_snapshots_convert(snaps, TIMECONV_MODE_NEAREST, from, to, value, &nearest,
                                                               &nearest_unc) < 0) {
                                        failed++;
                                        continue;
                                }
                                compared++;
                                /* the value itself is a whole count: the instant it names is anywhere in
                                 * half a period of it (a tick of 52 ns), which no bound carries */
                                if (!holds(u, drift, drift_unc + (dir ? (int64_t) ceil(units[j - 1]->period_ns) : 0),
                                           want, ns_to) && missed++ < 3)
                                        diag("%s -> %s at r %" PRId64 ": offline %" PRId64 " +-%" PRId64
                                             ", truth %" PRId64,
                                             from, to, at[k].r_ns, drift, drift_unc, want);
                                looser += drift_unc > nearest_unc;
                                /* Give or take the units' own rounding, which falls where it falls on
                                 * each side (up to half a 52 ns tick). X ms too: a truncated reading
                                 * or value is read as the middle of its ms, +-0.5 ms, as live reads
                                 * it (it had 2 ms of its own here while the truncation counted twice). */
                                allow = 2 * at[k].live_bound_ns[dir][j] + 2 * 53;
                                if (drift_unc > allow && wide++ < 3)
                                        diag("%s -> %s at r %" PRId64 ": offline +-%" PRId64 " ns, live +-%" PRId64,
                                             from, to, at[k].r_ns, drift_unc, at[k].live_bound_ns[dir][j]);
                                if ((double) drift_unc / (double) at[k].live_bound_ns[dir][j] > worst_ratio)
                                        worst_ratio = (double) drift_unc / (double) at[k].live_bound_ns[dir][j];
                        }
        }
        diag("tight: %zu offline conversions between snapshots, worst offline/live bound %.2f (ns, X ms, ticks)",
             compared, worst_ratio);
        ok(compared > 0 && failed == 0, "tight: offline answered every instant (%d failed)", failed);
        is_int(missed, 0, "tight: the offline DRIFT bound holds the truth");
        is_int(looser, 0, "tight: DRIFT is never looser than NEAREST");
        is_int(wide, 0, "tight: the offline bound is within 2x the live one at the same instant");
        timeconv_snapshots_free(snaps);
        free(json);
        core_free(c);
}

int main(void) {
        test_offline_as_tight_as_live();
        const Log log = { .max_level = LOG_ERR };
        Domain *fakes[N_FAKES];
        struct timeconv_snapshots *snaps = NULL;
        struct timeconv_error error = {};
        char *json = NULL;
        size_t size = shared_table_size(GRAPH_NODES_MAX), n;
        int missed[3] = {}, disagree = 0, failed[3] = {}, checked = 0;
        uint64_t seed = 0x5eed;
        void *mem = NULL;
        CoreBurst burst;
        Core *c = NULL;
        int64_t r_last = 0;

        is_int(core_new(&log, &c), 0, "core_new");
        for (size_t i = 0; i < N_FAKES; i++) {
                ok(add_fake(c, i, 20000000, i + 1) == 0, "add %s", names[i]);
        }
        n = core_count(c);
        ok(n == N_FAKES + 1, "the hub and %d fakes", N_FAKES);
        for (size_t i = 1; i < n; i++) {
                const DomainOps *ops;

                if (core_domain_source(c, i, &ops, &fakes[i - 1]) < 0)
                        fakes[i - 1] = NULL;
        }
        for (int b = 0; b < BURSTS; b++) {
                for (size_t i = 1; i < n; i++) {
                        if (core_calibrate(c, i, &burst) < 0)
                                failed[0]++;
                        if (fake_now_ns(fakes[i - 1]) > r_last)
                                r_last = fake_now_ns(fakes[i - 1]);
                }
                /* a snapshot after each round, as the daemon's tick (the fakes' times move apart a
                 * little: the latest of them, so that snapshots go forwards) */
                snapshot_ring_take(c->snapshots, &c->graph, r_last);
        }
        is_int(failed[0], 0, "every burst calibrated");

        ok(posix_memalign(&mem, 64, size) == 0 && shared_table_init(mem, size, GRAPH_NODES_MAX) == 0 &&
           shared_table_publish(mem, size, &c->graph) == 0, "the table published from the core");
        ok(core_bus_ops.export_snapshots(c, &json) == 0 && json, "the core's export");
        ok(json && timeconv_snapshots_load_buffer(json, strlen(json), &snaps, &error) == 0,
           "the export loads %s", error.message);

        for (int k = 0; snaps && k < VALUES; k++) {
                /* within the last second of calibration, where the snapshots are */
                int64_t r_ns = r_last - (int64_t) (rng_next(&seed) % INT64_C(1000000000));

                for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < n; j++) {
                                const DomainUnit *u = &c->graph.nodes[j].unit;
                                int64_t value, want, v[3], unc[3];
                                double ns_i, ns_j;
                                int rr[3];

                                if (i == j || truth(c, fakes, i, r_ns, &value, &ns_i) < 0 ||
                                    truth(c, fakes, j, r_ns, &want, &ns_j) < 0)
                                        continue;
                                checked++;
                                rr[0] = graph_convert(&c->graph, i, j, value, r_ns, &v[0], &unc[0]);
                                rr[1] = shared_table_convert(mem, size, i, j, value, r_ns, &v[1], &unc[1]);
                                if (rr[1] == CONV_RECORD_MISS)  /* the table sends these to the daemon */
                                        rr[1] = graph_convert(&c->graph, i, j, value, r_ns, &v[1], &unc[1]);
                                rr[2] = timeconv_snapshots_convert(snaps, TIMECONV_MODE_NEAREST, c->graph.nodes[i].name,
                                                                   c->graph.nodes[j].name, value, &v[2], &unc[2]);
                                for (int p = 0; p < 3; p++) {
                                        if (rr[p] < 0) {
                                                if (failed[p]++ < 2)
                                                        diag("%d: %s -> %s: %s", p, c->graph.nodes[i].name,
                                                             c->graph.nodes[j].name, strerror(-rr[p]));
                                                continue;
                                        }
                                        if (!holds(u, v[p], unc[p], want, ns_j)) {
                                                if (missed[p]++ < 3)
                                                        diag("%s: %s -> %s at r %" PRIi64 ": %" PRIi64 " +- %" PRIi64
                                                             ", truth %" PRIi64, p == 0 ? "core" : p == 1 ? "table" : "offline",
                                                             c->graph.nodes[i].name, c->graph.nodes[j].name, r_ns, v[p],
                                                             unc[p], want);
                                        }
                                }
                                if (rr[0] >= 0 && rr[1] >= 0 && (v[0] != v[1] || unc[0] != unc[1]))
                                        disagree++;
                        }
        }
        diag("%d conversions of %zu domains", checked, n);
        ok(checked > 0, "conversions checked");
        ok(failed[0] == 0 && failed[1] == 0 && failed[2] == 0, "no path failed (core %d, table %d, offline %d)",
           failed[0], failed[1], failed[2]);
        is_int(missed[0], 0, "the core's bound holds the truth");
        is_int(missed[1], 0, "the table's bound holds the truth");
        is_int(missed[2], 0, "the offline bound (from the core's export) holds the truth");
        is_int(disagree, 0, "the table answers exactly as the core");

        timeconv_snapshots_free(snaps);
        free(json);
        free(mem);
        core_free(c);
        return done_testing();
}
