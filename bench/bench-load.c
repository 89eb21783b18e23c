/* SPDX-License-Identifier: MIT */

/* timeconvd under load, measured from outside (tests/load/ has the machinery, test-load the
 * same run with its checks): N client processes (32) converting through every path, each
 * answer checked against the truth, one hostile client, Xvfb restarted a third of the way in.
 * The floor, in the same run: the same N processes calling the bus daemon's own GetId as fast
 * as they can (what the bus carries with nobody else behind it), and one alone (its round
 * trip). Figures: the daemon's calls per second (Convert, ConvertMany, Now, PushSnapshot, the
 * library's D-Bus calls, the hostile ones) and their latency against the floor's, the
 * wrong answers, the daemon's RSS and fds before and after. One JSON object on stdout.
 * The RSS target is on anonymous and shmem pages, the memory the daemon holds (its heap, its
 * mappings, the shared table): the file pages of its binary and libraries, mapped 64 KiB at a
 * time when a code path first runs, are clean and shared and do not grow with load; their
 * growth is reported apart, and so is the growth since the daemon's start, before any client.
 * usage: bench-load TIMECONVD [--duration=SECONDS] [--clients=N] */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

#define DEADLINE_NS (INT64_C(2) * 1000000000)
#define FLOOR_NS (INT64_C(2) * 1000000000)
#define WARMUP_NS (INT64_C(300) * 1000000)
#define RSS_GROWTH_TARGET_KIB 256      /* anonymous + shmem */

static double per_s(uint64_t n, int64_t elapsed_ns) {
        return elapsed_ns > 0 ? (double) n * 1e9 / (double) elapsed_ns : 0;
}

static int fail(LoadRun *run, const char *stage, int r) {
        fprintf(stderr, "bench-load: %s: %s\n", stage, strerror(r < 0 ? -r : r));
        load_teardown(run);
        return 1;
}

int main(int argc, char **argv) {
        LoadConfig load = { .n_clients = 32, .duration_ns = INT64_C(10) * 1000000000, .call_deadline_ns = DEADLINE_NS,
                            .garbage = true, .restart_x = true };
        LoadConfig floor_all, floor_one, warmup = { .n_clients = 1, .duration_ns = WARMUP_NS,
                                                    .call_deadline_ns = DEADLINE_NS };
        LoadResult fa = {}, fo = {}, res = {}, w = {};
        LoadUsage start, before, after;
        LoadRun run = {};
        uint64_t wrong;
        int64_t held_growth_kib;
        double calls_per_s, floor_per_s;
        int r;

        for (int i = 2; i < argc; i++)
                if (strncmp(argv[i], "--duration=", 11) == 0)
                        load.duration_ns = (int64_t) (strtod(argv[i] + 11, NULL) * 1e9);
                else if (strncmp(argv[i], "--clients=", 10) == 0)
                        load.n_clients = (unsigned) strtoul(argv[i] + 10, NULL, 10);
                else
                        argc = 0;
        if (argc < 2 || load.duration_ns < 1000000000 || load.duration_ns > INT64_C(3600) * 1000000000 ||
            load.n_clients < 1 || load.n_clients > LOAD_CLIENTS_MAX) {
                fprintf(stderr, "usage: %s TIMECONVD [--duration=SECONDS] [--clients=N]\n", argv[0]);
                return 2;
        }
        floor_all = (LoadConfig) { .n_clients = load.n_clients, .duration_ns = FLOOR_NS,
                                   .call_deadline_ns = DEADLINE_NS };
        floor_one = (LoadConfig) { .n_clients = 1, .duration_ns = FLOOR_NS / 2, .call_deadline_ns = DEADLINE_NS };

        r = load_setup(argv[1], true, &run);
        if (r < 0)
                return fail(&run, "starting dbus-daemon, Xvfb and timeconvd", r);
        r = load_phase(&run, &floor_one, LOAD_MODE_FLOOR, &fo);
        if (r >= 0)
                r = load_phase(&run, &floor_all, LOAD_MODE_FLOOR, &fa);
        if (r < 0)
                return fail(&run, "the bus floor", r);
        /* Before any client (reported), then the run's start: after one client made each kind of
         * call once, so that what the daemon sets up at its first client does not count as growth. */
        r = load_usage(&run, &start);
        if (r >= 0)
                r = load_phase(&run, &warmup, LOAD_MODE_MIX, &w);
        if (r >= 0)
                r = load_usage(&run, &before);
        if (r >= 0)
                r = load_phase(&run, &load, LOAD_MODE_MIX, &res);
        if (r >= 0)
                r = load_usage(&run, &after);
        if (r < 0)
                return fail(&run, "the load run", r);

        wrong = res.total.wrong + res.total.wrong_coarse;
        held_growth_kib = proc_usage_held_kib(&after) - proc_usage_held_kib(&before);
        calls_per_s = per_s(res.total.bus_calls, res.elapsed_ns);
        floor_per_s = per_s(fa.total.bus_calls, fa.elapsed_ns);
        printf("{\n");
        printf("  \"clients\": %u,\n", load.n_clients);
        printf("  \"duration_s\": %.1f,\n", (double) res.elapsed_ns / 1e9);
        printf("  \"load_calls_per_s\": %.0f,\n", calls_per_s);
        printf("  \"load_p50_ns\": %" PRIi64 ",\n", res.p50_ns);
        printf("  \"load_p99_ns\": %" PRIi64 ",\n", res.p99_ns);
        printf("  \"load_max_ns\": %" PRIi64 ",\n", res.total.max_latency_ns);
        printf("  \"table_conversions_per_s\": %.0f,\n", per_s(res.total.table_calls, res.elapsed_ns));
        printf("  \"checked_answers\": %" PRIu64 ",\n", res.total.checked);
        printf("  \"wrong_answers\": %" PRIu64 ",\n", wrong);
        printf("  \"wrong_answers_coarse\": %" PRIu64 ",\n", res.total.wrong_coarse);
        printf("  \"failed_calls\": %" PRIu64 ",\n", res.total.errors);
        printf("  \"stalled_calls\": %" PRIu64 ",\n", res.total.stalls);
        printf("  \"call_deadline_ns\": %" PRIi64 ",\n", load.call_deadline_ns);
        printf("  \"snapshots_pushed_per_s\": %.0f,\n", per_s(res.total.pushes, res.elapsed_ns));
        printf("  \"application_clock_answers\": %" PRIu64 ",\n", res.total.app_checked);
        printf("  \"hostile_calls_refused\": %" PRIu64 ",\n", res.total.garbage_refused);
        printf("  \"x_server_restarted\": %s,\n", res.x_restarted ? "true" : "false");
        printf("  \"x_back_after_ns\": %" PRIi64 ",\n", res.x_back_after_ns);
        printf("  \"rss_start_kib\": %" PRIi64 ",\n", before.rss_kib);
        printf("  \"rss_end_kib\": %" PRIi64 ",\n", after.rss_kib);
        printf("  \"rss_growth_kib\": %" PRIi64 ",\n", after.rss_kib - before.rss_kib);
        printf("  \"rss_anon_growth_kib\": %" PRIi64 ",\n", after.rss_anon_kib - before.rss_anon_kib);
        printf("  \"rss_shmem_growth_kib\": %" PRIi64 ",\n", after.rss_shmem_kib - before.rss_shmem_kib);
        printf("  \"rss_file_growth_kib\": %" PRIi64 ",\n", after.rss_file_kib - before.rss_file_kib);
        printf("  \"rss_anon_shmem_growth_kib\": %" PRIi64 ",\n", held_growth_kib);
        printf("  \"rss_daemon_start_kib\": %" PRIi64 ",\n", start.rss_kib);
        printf("  \"rss_anon_shmem_growth_since_daemon_start_kib\": %" PRIi64 ",\n",
               proc_usage_held_kib(&after) - proc_usage_held_kib(&start));
        printf("  \"fd_growth\": %d,\n", after.n_fds - before.n_fds);
        printf("  \"bus_floor_rtt_p50_ns\": %" PRIi64 ",\n", fo.p50_ns);
        printf("  \"bus_floor_calls_per_s\": %.0f,\n", floor_per_s);
        printf("  \"bus_floor_p99_ns\": %" PRIi64 ",\n", fa.p99_ns);
        printf("  \"load_calls_to_floor_ratio\": %.3f,\n", floor_per_s > 0 ? calls_per_s / floor_per_s : 0);
        printf("  \"load_p99_to_floor_p99_ratio\": %.2f,\n",
               fa.p99_ns > 0 ? (double) res.p99_ns / (double) fa.p99_ns : 0);
        printf("  \"target_values\": { \"wrong_answers\": 0, \"rss_anon_shmem_growth_kib\": %d, \"fd_growth\": 0 },\n",
               RSS_GROWTH_TARGET_KIB);
        printf("  \"targets\": {\n");
        printf("    \"wrong_answers_eq_0\": %s,\n", wrong == 0 ? "true" : "false");
        printf("    \"rss_anon_shmem_growth_le_%d_kib\": %s,\n", RSS_GROWTH_TARGET_KIB,
               held_growth_kib <= RSS_GROWTH_TARGET_KIB ? "true" : "false");
        printf("    \"fd_growth_eq_0\": %s\n", after.n_fds == before.n_fds ? "true" : "false");
        printf("  }\n}\n");
        load_teardown(&run);
        return 0;
}
