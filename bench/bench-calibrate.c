/* SPDX-License-Identifier: MIT */

/* Figures of the calibration core, as one JSON object on stdout:
 *   - the clock pair (two back-to-back clock_gettime: clock_pair_ns) and the deviation of bracketed
 *     samples (best of each burst, as the daemon keeps them), against the target deviation <= 2 x the pair;
 *   - graph_convert() on live models, one hop (monotonic -> hub) and two (monotonic -> boottime);
 *   - snapshot_graph_convert() in nearest mode, two hops, 1,000 snapshots per edge: over random
 *     values (every lookup searches) and over sequential ones (a trace's timestamps: 1 µs
 *     apart, the per-pair interval cache answers);
 *   - loading snapshots (adds and the finalize a conversion needs) per snapshot, 1k and 100k,
 *     against the floor of any loader (appending the readings) and Perfetto's insert.
 * Timing uses CLOCK_MONOTONIC; errors go to stderr and exit 1. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "burst.h"
#include "domain.h"
#include "graph.h"
#include "history.h"
#include "snapshot-graph.h"

#define FLOOR_TRIES 200000
#define BURSTS 4000             /* per domain */
#define BURST_SAMPLES 8
#define HISTORY_BURSTS 32       /* fed to each history, 1 ms apart */
#define CONVERSIONS 10000000    /* in ROUNDS rounds; the fastest round counts */
#define ROUNDS 5
#define SNAPSHOTS_PER_EDGE 1000
#define NEAREST_CONVERSIONS 2000000     /* in ROUNDS rounds too */
#define LOAD_SMALL 1000         /* snapshots loaded, as Perfetto's insert was measured */
#define LOAD_LARGE 100000
/* Perfetto's ClockTracker insert cannot run here (no Perfetto on the machine): its cost per
 * snapshot, finalize included, as measured beside ours in one process (there, ours was 1.9-2.1x
 * of it at 1k snapshots, 1.2-1.9x at 100k), applied to what this benchmark measured of ours then
 * on this machine (60 ns at 1k, 134-174 ns at 100k), the least of each range. */
#define LOAD_1K_TARGET_NS 28
#define LOAD_100K_TARGET_NS 79
#define VALUES 4096             /* power of two: a table of random inputs that stays in L1 */

static const char *const posix_domains[] = { "monotonic", "boottime" };
#define N_POSIX (sizeof(posix_domains) / sizeof(posix_domains[0]))

/* xorshift64*: reproducible inputs, state owned by the caller. */
static uint64_t rng_next(uint64_t *state) {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        return *state * UINT64_C(2685821657736338717);
}

/* The best sample of one burst, kept the way the daemon keeps it. */
static int best_of_burst(Domain *d, Sample *ret) {
        Sample samples[BURST_SAMPLES];
        size_t n = 0, kept = 0;
        int r;

        r = domain_posix_ops.sample_burst(d, samples, BURST_SAMPLES, &n);
        if (r < 0)
                return r;
        r = burst_select(samples, n, 1, &kept);
        if (r < 0)
                return r;
        if (kept == 0)
                return -ENODATA;
        *ret = samples[0];
        return 0;
}

/* Deviations of BURSTS best-of-burst samples into ret_deviations_ns[BURSTS]. */
static int measure_deviation(const char *name, int64_t *ret_deviations_ns) {
        Domain *d = NULL;
        int r;

        r = domain_posix_ops.open(name, NULL, &d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < BURSTS; i++) {
                Sample s;

                r = best_of_burst(d, &s);
                if (r < 0)
                        break;
                ret_deviations_ns[i] = sample_deviation_ns(&s);
        }
        domain_posix_ops.close(d);
        return r < 0 ? r : 0;
}

/* Feeds a history with real samples spread over HISTORY_BURSTS ms, as the daemon would. */
static int feed_history(const char *name, History *h) {
        const struct timespec gap = { .tv_nsec = 1000000 };
        Domain *d = NULL;
        int r;

        r = domain_posix_ops.open(name, NULL, &d);
        if (r < 0)
                return r;
        history_init(h, &ESTIMATOR_CONFIG_DEFAULT);
        for (size_t i = 0; i < HISTORY_BURSTS; i++) {
                Sample s;

                r = best_of_burst(d, &s);
                if (r >= 0)
                        r = history_add(h, &s, NULL);
                if (r < 0)
                        break;
                nanosleep(&gap, NULL);
        }
        domain_posix_ops.close(d);
        return r < 0 ? r : 0;
}

/* ns per graph_convert() from -> to over random values within +-1 s of the latest sample.
 * The machine is shared: the fastest of ROUNDS rounds is the cost, the others saw interference. */
static int time_graph_convert(const ClockGraph *g, size_t from, size_t to, int64_t centre_ns,
                              double *ret_ns) {
        int64_t values[VALUES], acc = 0, best_ns = INT64_MAX;
        volatile int64_t sink;
        uint64_t rng = 0x9e3779b97f4a7c15u;

        for (size_t i = 0; i < VALUES; i++)
                values[i] = centre_ns + (int64_t) (rng_next(&rng) % 2000000000u) - 1000000000;

        for (int round = 0; round < ROUNDS; round++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), t1;

                for (size_t i = 0; i < CONVERSIONS / ROUNDS; i++) {
                        int64_t out = 0, uncertainty_ns = 0;
                        int r;

                        r = graph_convert(g, from, to, values[i & (VALUES - 1)], INT64_MIN, &out,
                                          &uncertainty_ns);
                        if (r < 0)
                                return r;
                        acc += out ^ uncertainty_ns;
                }
                t1 = clock_now_ns(CLOCK_MONOTONIC);
                if (t1 - t0 < best_ns)
                        best_ns = t1 - t0;
        }
        /* One volatile store: the loop's results are used, without a memory round trip per call. */
        sink = acc;
        (void) sink;
        *ret_ns = (double) best_ns / (CONVERSIONS / ROUNDS);
        return 0;
}

static int measure_graph(double *ret_1hop_ns, double *ret_2hop_ns) {
        History monotonic, boottime;    /* the graph points at them: they live as long as it */
        ClockGraph g;
        size_t i_mono, i_boot;
        int r;

        r = feed_history("monotonic", &monotonic);
        if (r < 0)
                return r;
        r = feed_history("boottime", &boottime);
        if (r < 0)
                return r;

        r = graph_init(&g, "monotonic_raw");
        if (r < 0)
                return r;
        r = graph_add(&g, "monotonic", &UNIT_NS, &monotonic, &i_mono);
        if (r < 0)
                return r;
        r = graph_add(&g, "boottime", &UNIT_NS, &boottime, &i_boot);
        if (r < 0)
                return r;
        graph_refresh(&g, i_mono);
        graph_refresh(&g, i_boot);

        r = time_graph_convert(&g, i_mono, g.hub, clock_now_ns(CLOCK_MONOTONIC), ret_1hop_ns);
        if (r < 0)
                return r;
        return time_graph_convert(&g, i_mono, i_boot, clock_now_ns(CLOCK_MONOTONIC), ret_2hop_ns);
}

/* a-b-c with per_edge snapshots per edge, interleaved so every domain stays monotonic (a
 * non-monotonic b could not be the middle hop); a -> c is then two hops. */
static int build_snapshot_graph_n(SnapshotGraph *g, int64_t per_edge, int64_t *ret_a_first, int64_t *ret_a_last) {
        const int64_t step_ns = 1000000, base_ns = 1000000000;
        int r;

        for (int64_t i = 0; i < per_edge; i++) {
                int64_t t = base_ns + i * step_ns;
                SnapshotClock ab[] = { { "a", t }, { "b", t + 5000 + i } };
                SnapshotClock bc[] = { { "b", t + step_ns / 2 }, { "c", t + step_ns / 2 + 9000 - i } };

                r = snapshot_graph_add(g, ab, 2);
                if (r < 0)
                        return r;
                r = snapshot_graph_add(g, bc, 2);
                if (r < 0)
                        return r;
        }
        *ret_a_first = base_ns;
        *ret_a_last = base_ns + (per_edge - 1) * step_ns;
        return snapshot_graph_finalize(g);
}

static int build_snapshot_graph(SnapshotGraph *g, int64_t *ret_a_first, int64_t *ret_a_last) {
        return build_snapshot_graph_n(g, SNAPSHOTS_PER_EDGE, ret_a_first, ret_a_last);
}

/* Loading n_snapshots (two clocks each, as build_snapshot_graph_n() makes them): new, every add
 * and the finalize a conversion needs, per snapshot, the fastest of ROUNDS; and the floor of
 * any loader, appending the same readings to one growing array (what a trace processor's
 * insert does at the least: Perfetto's also hashes and indexes them). */
static int measure_load(int64_t n_snapshots, double *ret_ns, double *ret_floor_ns) {
        int64_t best_ns = INT64_MAX, best_floor_ns = INT64_MAX, first, last;
        volatile int64_t sink = 0;
        int r;

        for (int round = 0; round < ROUNDS; round++) {
                SnapshotGraph *g = NULL;
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), t1;
                int64_t *readings = NULL;
                size_t n = 0, allocated = 0;

                r = snapshot_graph_new(&g);
                if (r >= 0)
                        r = build_snapshot_graph_n(g, n_snapshots / 2, &first, &last);
                t1 = clock_now_ns(CLOCK_MONOTONIC);
                snapshot_graph_free(g);
                if (r < 0)
                        return r;
                if (t1 - t0 < best_ns)
                        best_ns = t1 - t0;

                t0 = clock_now_ns(CLOCK_MONOTONIC);
                for (int64_t i = 0; i < n_snapshots; i++) {
                        if (n + 4 > allocated) {
                                int64_t *p;

                                allocated = 2 * allocated + 4;
                                p = realloc(readings, allocated * sizeof(*p));
                                if (!p) {
                                        free(readings);
                                        return -ENOMEM;
                                }
                                readings = p;
                        }
                        /* clock index and value, twice */
                        readings[n++] = i & 1;
                        readings[n++] = 1000000000 + i * 500000;
                        readings[n++] = 1 + (i & 1);
                        readings[n++] = 1000005000 + i * 500000 + i;
                }
                sink += readings[n - 1];
                t1 = clock_now_ns(CLOCK_MONOTONIC);
                free(readings);
                if (t1 - t0 < best_floor_ns)
                        best_floor_ns = t1 - t0;
        }
        (void) sink;
        *ret_ns = (double) best_ns / (double) n_snapshots;
        *ret_floor_ns = (double) best_floor_ns / (double) n_snapshots;
        return 0;
}

static int measure_nearest(bool sequential, double *ret_ns) {
        SnapshotGraph *g = NULL;
        int64_t values[VALUES], first, last, acc = 0, best_ns = INT64_MAX;
        volatile int64_t sink;
        uint64_t rng = 0x2545f4914f6cdd1du, span_ns;
        size_t a, c;
        int r;

        r = snapshot_graph_new(&g);
        if (r < 0)
                return r;
        r = build_snapshot_graph(g, &first, &last);
        if (r >= 0)
                r = snapshot_graph_find(g, "a", &a);
        if (r >= 0)
                r = snapshot_graph_find(g, "c", &c);
        if (r < 0)
                goto finish;

        /* Spread over the whole span and 1 ms beyond both ends, so every lookup searches. */
        span_ns = (uint64_t) (last - first) + 2000000;
        for (size_t i = 0; i < VALUES; i++)
                values[i] = first - 1000000 + (int64_t) (rng_next(&rng) % span_ns);
        if (sequential)
                for (size_t i = 0; i < VALUES; i++)
                        values[i] = first + (last - first) / 2 + (int64_t) i * 1000;

        for (int round = 0; round < ROUNDS; round++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), t1;

                for (size_t i = 0; i < NEAREST_CONVERSIONS / ROUNDS; i++) {
                        int64_t out = 0, uncertainty_ns = 0;

                        r = snapshot_graph_convert(g, SNAPSHOT_MODE_NEAREST, a, c, values[i & (VALUES - 1)],
                                                   &out, &uncertainty_ns);
                        if (r < 0)
                                goto finish;
                        acc += out ^ uncertainty_ns;
                }
                t1 = clock_now_ns(CLOCK_MONOTONIC);
                if (t1 - t0 < best_ns)
                        best_ns = t1 - t0;
        }
        sink = acc;
        (void) sink;
        *ret_ns = (double) best_ns / (NEAREST_CONVERSIONS / ROUNDS);
        r = 0;
finish:
        snapshot_graph_free(g);
        return r;
}

int main(void) {
        int64_t deviations[N_POSIX][BURSTS], all[N_POSIX * BURSTS];
        int64_t floor_ns, floor_p50_ns, domain_p50_ns[N_POSIX], deviation_p50_ns;
        double ratio, convert_1hop_ns, convert_2hop_ns, nearest_ns, nearest_seq_ns;
        double load_small_ns, load_large_ns, floor_small_ns, floor_large_ns;
        const char *stage;
        int r;

        stage = "floor";
        r = bench_clock_pair(CLOCK_MONOTONIC, FLOOR_TRIES, &floor_ns, &floor_p50_ns);
        if (r < 0)
                goto fail;

        for (size_t k = 0; k < N_POSIX; k++) {
                stage = posix_domains[k];
                r = measure_deviation(posix_domains[k], deviations[k]);
                if (r < 0)
                        goto fail;
                memcpy(all + k * BURSTS, deviations[k], sizeof(deviations[k]));
                domain_p50_ns[k] = bench_percentile(deviations[k], BURSTS, 0.5);
        }
        deviation_p50_ns = bench_percentile(all, N_POSIX * BURSTS, 0.5);
        ratio = (double) deviation_p50_ns / (double) (floor_ns > 0 ? floor_ns : 1);

        stage = "graph";
        r = measure_graph(&convert_1hop_ns, &convert_2hop_ns);
        if (r < 0)
                goto fail;

        stage = "snapshot-graph";
        r = measure_nearest(false, &nearest_ns);
        if (r >= 0)
                r = measure_nearest(true, &nearest_seq_ns);
        if (r < 0)
                goto fail;

        stage = "snapshot-load";
        r = measure_load(LOAD_SMALL, &load_small_ns, &floor_small_ns);
        if (r >= 0)
                r = measure_load(LOAD_LARGE, &load_large_ns, &floor_large_ns);
        if (r < 0)
                goto fail;

        printf("{\n");
        printf("  \"clock_pair_ns\": %" PRIi64 ",\n", floor_ns);
        printf("  \"clock_pair_p50_ns\": %" PRIi64 ",\n", floor_p50_ns);
        printf("  \"posix_deviation_p50_ns\": %" PRIi64 ",\n", deviation_p50_ns);
        printf("  \"posix_deviation_p50_by_domain_ns\": {");
        for (size_t k = 0; k < N_POSIX; k++)
                printf("%s\"%s\": %" PRIi64, k ? ", " : " ", posix_domains[k], domain_p50_ns[k]);
        printf(" },\n");
        printf("  \"posix_deviation_to_clock_pair_ratio\": %.2f,\n", ratio);
        printf("  \"bursts_per_domain\": %d,\n  \"samples_per_burst\": %d,\n", BURSTS, BURST_SAMPLES);
        printf("  \"convert_1hop_ns\": %.2f,\n", convert_1hop_ns);
        printf("  \"convert_2hop_ns\": %.2f,\n", convert_2hop_ns);
        printf("  \"conversions\": %d,\n  \"rounds\": %d,\n", CONVERSIONS, ROUNDS);
        printf("  \"nearest_random_2hop_ns\": %.2f,\n", nearest_ns);
        printf("  \"nearest_sequential_2hop_ns\": %.2f,\n", nearest_seq_ns);
        printf("  \"nearest_snapshots_per_edge\": %d,\n", SNAPSHOTS_PER_EDGE);
        printf("  \"load_1k_ns_per_snapshot\": %.1f,\n  \"load_100k_ns_per_snapshot\": %.1f,\n", load_small_ns,
               load_large_ns);
        printf("  \"load_append_floor_1k_ns_per_snapshot\": %.1f,\n", floor_small_ns);
        printf("  \"load_append_floor_100k_ns_per_snapshot\": %.1f,\n", floor_large_ns);
        printf("  \"load_1k_to_append_floor_ratio\": %.2f,\n  \"load_100k_to_append_floor_ratio\": %.2f,\n",
               load_small_ns / floor_small_ns, load_large_ns / floor_large_ns);
        printf("  \"target_values\": { \"posix_deviation_to_clock_pair_ratio\": 2, \"convert_1hop_ns\": 5, "
               "\"convert_2hop_ns\": 5, \"nearest_random_2hop_ns\": 45, \"nearest_sequential_2hop_ns\": 6, "
               "\"load_1k_ns_per_snapshot\": %d, \"load_100k_ns_per_snapshot\": %d },\n", LOAD_1K_TARGET_NS,
               LOAD_100K_TARGET_NS);
        printf("  \"targets\": {\n");
        printf("    \"posix_deviation_le_2x_clock_pair\": %s,\n", ratio <= 2.0 ? "true" : "false");
        printf("    \"convert_1hop_le_5ns\": %s,\n", convert_1hop_ns <= 5.0 ? "true" : "false");
        printf("    \"convert_2hop_le_5ns\": %s,\n", convert_2hop_ns <= 5.0 ? "true" : "false");
        printf("    \"nearest_random_2hop_le_45ns\": %s,\n", nearest_ns <= 45.0 ? "true" : "false");
        printf("    \"nearest_sequential_2hop_le_6ns\": %s,\n", nearest_seq_ns <= 6.0 ? "true" : "false");
        printf("    \"load_1k_le_perfetto_insert\": %s,\n", load_small_ns <= LOAD_1K_TARGET_NS ? "true" : "false");
        printf("    \"load_100k_le_perfetto_insert\": %s\n", load_large_ns <= LOAD_100K_TARGET_NS ? "true" : "false");
        printf("  }\n}\n");
        return 0;

fail:
        fprintf(stderr, "bench-calibrate: %s: %s\n", stage, strerror(-r));
        return 1;
}
