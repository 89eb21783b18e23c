/* SPDX-License-Identifier: MIT */

/* libtimeconv and the timeconv CLI, measured against floors taken in the same run, with a daemon
 * that has every kind of domain (the POSIX clocks, x11 and x11_us of a private Xvfb, msc through
 * X Present, gpu0 on lavapipe): a conversion through the shared table by id for each of
 * monotonic -> boottime, x11_us -> monotonic, gpu0 -> monotonic and msc -> monotonic (two hops
 * each, one record; ns per call in a loop, best round), by name, through a pair handle and in one
 * timeconv_convert_many() of 10^6 values (ns per value, at most the by-id figure); now()
 * in a loop against a plain clock_gettime loop beside it, and bracketed against the floor of two back-to-back
 * clock_gettime; the same conversion over D-Bus against the bus's own round trip (GetId, p50); the
 * CLI converting offline from standard input to a file (nearest mode, 1,000 snapshots, two hops).
 * One JSON object.
 * usage: bench-client TIMECONVD TIMECONV LAVAPIPE_ICD */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"
#include "harness.h"
#include "xvfb.h"
#include "timeconv.h"

#define FLOOR_TRIES 200000
#define FAST_CALLS 20000000
#define FAST_ROUNDS 5
#define MANY_VALUES 1000000
#define BUS_CALLS 2000
#define CLI_VALUES 4000000
#define CLI_SNAPSHOTS 1000
#define CALIBRATED_TIMEOUT_NS (INT64_C(60) * 1000000000)
#define WRAP_SPAN 1024          /* values base + (i mod this): near now for every unit */

extern char **environ;

static volatile int64_t sink;

static int fail(const char *stage, int r) {
        fprintf(stderr, "bench-client: %s: %s\n", stage, strerror(r < 0 ? -r : r));
        return 1;
}

/* Two back-to-back clock_gettime: the best of many (what one call costs). */
static int64_t posix_floor_ns(void) {
        int64_t best = INT64_MAX;

        for (int i = 0; i < FLOOR_TRIES; i++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), t1 = clock_now_ns(CLOCK_MONOTONIC);

                if (t1 - t0 < best)
                        best = t1 - t0;
        }
        return best;
}

/* The best of FAST_ROUNDS rounds, ns per call, values base + (i mod WRAP_SPAN).
 * what: 0 convert_id, 1 convert by name, 2 now_id, 3 through a pair (timeconv_pair_convert()). */
static double fast_ns(struct timeconv *tc, int what, unsigned from, unsigned to, const char *from_name,
                      const char *to_name, int64_t base, int *ret_r) {
        struct timeconv_pair pair = { tc, from, to };
        double best = 1e300;

        *ret_r = 0;
        for (int k = 0; k < FAST_ROUNDS; k++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), acc = 0, v, u;

                for (int64_t i = 0; i < FAST_CALLS; i++) {
                        int64_t value = base + (i & (WRAP_SPAN - 1));
                        int r = what == 0 ? timeconv_convert_id(tc, from, to, value, &v, &u) :
                                what == 1 ? timeconv_convert(tc, from_name, to_name, value, &v, &u) :
                                what == 3 ? timeconv_pair_convert(&pair, value, &v, &u) :
                                            timeconv_now_id(tc, to, &v, &u);

                        if (__builtin_expect(r < 0, 0)) {
                                *ret_r = r;
                                return -1;
                        }
                        acc += v + u;
                }
                sink = acc;
                double ns = (double) (clock_now_ns(CLOCK_MONOTONIC) - t0) / FAST_CALLS;
                if (ns < best)
                        best = ns;
        }
        return best;
}

/* timeconv_convert_many() on MANY_VALUES values base + (i mod WRAP_SPAN), the best of
 * FAST_ROUNDS rounds, ns per value: what a batch costs against the by-id loop above. */
static double many_ns(struct timeconv *tc, const char *from, const char *to, int64_t base, int *ret_r) {
        _cleanup_free_ int64_t *values = malloc(MANY_VALUES * sizeof(int64_t));
        _cleanup_free_ int64_t *out = malloc(MANY_VALUES * sizeof(int64_t));
        _cleanup_free_ int64_t *unc = malloc(MANY_VALUES * sizeof(int64_t));
        double best = 1e300;

        *ret_r = 0;
        if (!values || !out || !unc) {
                *ret_r = -ENOMEM;
                return -1;
        }
        for (int64_t i = 0; i < MANY_VALUES; i++)
                values[i] = base + (i & (WRAP_SPAN - 1));
        for (int k = 0; k < FAST_ROUNDS; k++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), acc = 0;
                int r = timeconv_convert_many(tc, from, to, values, MANY_VALUES, out, unc);

                if (r < 0) {
                        *ret_r = r;
                        return -1;
                }
                double ns = (double) (clock_now_ns(CLOCK_MONOTONIC) - t0) / MANY_VALUES;
                for (int64_t i = 0; i < MANY_VALUES; i += 4096)
                        acc += out[i] + unc[i];
                sink = acc;
                if (ns < best)
                        best = ns;
        }
        return best;
}

/* A clock_gettime in a loop, ns per call: the loop figure now() compares with. */
static double posix_loop_ns(void) {
        double best = 1e300;

        for (int k = 0; k < FAST_ROUNDS; k++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), acc = 0;

                for (int i = 0; i < FAST_CALLS / 4; i++)
                        acc += clock_now_ns(CLOCK_MONOTONIC_RAW);
                sink = acc;
                double ns = (double) (clock_now_ns(CLOCK_MONOTONIC) - t0) / (FAST_CALLS / 4);
                if (ns < best)
                        best = ns;
        }
        return best;
}

/* now() measured as the floor is: the least t1 - t0 around one call, which is the call plus
 * what two back-to-back reads cost, the floor itself. */
static double now_bracket_ns(struct timeconv *tc, unsigned id, int64_t floor_ns) {
        int64_t best = INT64_MAX, v;

        for (int i = 0; i < FLOOR_TRIES; i++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);

                timeconv_now_id(tc, id, &v, NULL);
                int64_t t1 = clock_now_ns(CLOCK_MONOTONIC);
                if (t1 - t0 < best)
                        best = t1 - t0;
                sink = v;
        }
        return (double) (best - floor_ns);
}

static int get_id(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        const char *id;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId",
                               NULL, &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &id);
        sd_bus_message_unref(reply);
        return r;
}

/* p50 of a D-Bus Convert through the library and of GetId on a connection of our own, taken
 * in turns so that both see the same machine. */
static int bus_figures(const Harness *h, struct timeconv *tc, int64_t *ret_convert_ns, int64_t *ret_floor_ns) {
        static int64_t convert_ns[BUS_CALLS], floor_ns[BUS_CALLS];
        sd_bus *bus = NULL;
        int r;

        r = harness_connect(h, &bus);
        if (r < 0)
                return r;
        timeconv_set_paths(tc, TIMECONV_PATH_DBUS);
        for (int i = 0; r >= 0 && i < 200 + BUS_CALLS; i++) {
                int64_t t0, t1, t2, v, u;

                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = get_id(bus);
                t1 = clock_now_ns(CLOCK_MONOTONIC);
                if (r >= 0)
                        r = timeconv_convert(tc, "monotonic", "boottime", t1, &v, &u);
                t2 = clock_now_ns(CLOCK_MONOTONIC);
                if (i >= 200) {
                        floor_ns[i - 200] = t1 - t0;
                        convert_ns[i - 200] = t2 - t1;
                }
        }
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
        sd_bus_flush_close_unref(bus);
        if (r < 0)
                return r;
        qsort(convert_ns, BUS_CALLS, sizeof(int64_t), bench_cmp_i64);
        qsort(floor_ns, BUS_CALLS, sizeof(int64_t), bench_cmp_i64);
        *ret_convert_ns = convert_ns[BUS_CALLS / 2];
        *ret_floor_ns = floor_ns[BUS_CALLS / 2];
        return 0;
}

/* 500 snapshots monotonic/boottime and 500 boottime/custom: monotonic -> custom is two hops. */
static int write_inputs(const char *dir, char **ret_snapshots, char **ret_values) {
        char *snapshots = NULL, *values = NULL;
        FILE *f;

        if (asprintf(&snapshots, "%s/bench-snapshots.json", dir) < 0 || asprintf(&values, "%s/bench-values", dir) < 0)
                return -ENOMEM;
        f = fopen(snapshots, "w");
        if (!f)
                return -errno;
        fputs("{\"snapshots\":[\n", f);
        for (int i = 0; i < CLI_SNAPSHOTS; i++) {
                int64_t t = INT64_C(1000000000) + (int64_t) i * 1000000;

                if (i % 2 == 0)
                        fprintf(f, "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":%" PRIi64 "},"
                                "{\"domain\":\"boottime\",\"ts\":%" PRIi64 "}]}", t, t + 5000 + i);
                else
                        fprintf(f, "{\"clocks\":[{\"domain\":\"boottime\",\"ts\":%" PRIi64 "},"
                                "{\"domain\":\"custom\",\"ts\":%" PRIi64 "}]}", t, 3 * t + i);
                fputs(i + 1 < CLI_SNAPSHOTS ? ",\n" : "\n", f);
        }
        fputs("]}\n", f);
        if (fclose(f) != 0)
                return -EIO;

        f = fopen(values, "w");
        if (!f)
                return -errno;
        srand(1);
        for (int i = 0; i < CLI_VALUES; i++)
                fprintf(f, "%" PRIi64 "\n",
                        INT64_C(1000000000) + (int64_t) rand() % (CLI_SNAPSHOTS * INT64_C(1000000)));
        if (fclose(f) != 0)
                return -EIO;
        *ret_snapshots = snapshots;
        *ret_values = values;
        return 0;
}

/* Values per second of `timeconv convert --snapshots ... --mode nearest < values > out`. */
static int cli_values_per_s(const char *cli, const char *dir, double *ret) {
        _cleanup_free_ char *snapshots = NULL, *values = NULL, *out = NULL;
        posix_spawn_file_actions_t fa;
        int64_t t0, t1;
        int r, status;
        pid_t pid;

        r = write_inputs(dir, &snapshots, &values);
        if (r < 0 || asprintf(&out, "%s/bench-out", dir) < 0)
                return r < 0 ? r : -ENOMEM;
        const char *argv[] = { cli, "convert", "--snapshots", snapshots, "--mode", "nearest", "--from", "monotonic",
                               "--to", "custom", NULL };

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, values, O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = posix_spawn(&pid, cli, &fa, NULL, (char *const *) argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return -r;
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        t1 = clock_now_ns(CLOCK_MONOTONIC);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EPROTO;
        *ret = CLI_VALUES / ((double) (t1 - t0) / 1e9);
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        static const char *const pair_names[][2] = {
                { "monotonic", "boottime" }, { "x11_us", "monotonic" }, { "gpu0", "monotonic" }, { "msc", "monotonic" },
        };
        static const char *const pair_keys[] = {
                "monotonic_to_boottime", "x11_us_to_monotonic", "gpu0_to_monotonic", "msc_to_monotonic",
        };
        enum { N_PAIRS = 4 };
        char display_arg[32];
        const char *args[] = { display_arg, "--gpu-software", "--cadence=0.5", NULL };
        double pair_ns[N_PAIRS], pair_name_ns[N_PAIRS], pair_pair_ns[N_PAIRS], by_pair_max = 0, now_loop_ns = -1, now_ns = -1, clock_loop_ns, cli_per_s = 0;
        double by_id_max = 0, by_name_max = 0, pair_many_ns[N_PAIRS];
        bool many_le_by_id = true;
        int64_t floor_ns, dbus_ns = 0, bus_floor_ns = 0, v, u, base[N_PAIRS], deadline;
        struct timeconv *tc = NULL;
        unsigned ids[N_PAIRS][2], mono;
        bool table = true;
        Xvfb x = {};
        int r, r1 = 0;

        (void) table;
        if (argc != 4) {
                fprintf(stderr, "usage: %s TIMECONVD TIMECONV LAVAPIPE_ICD\n", argv[0]);
                return 2;
        }
        r = xvfb_start(-1, &x);
        if (r < 0)
                return fail("starting Xvfb", r);
        snprintf(display_arg, sizeof(display_arg), "--display=%s", x.name);
        setenv("VK_ICD_FILENAMES", argv[3], 1);
        setenv("LP_NUM_THREADS", "1", 1);
        r = harness_new(NULL, &h);
        if (r < 0)
                return fail("starting dbus-daemon", r);
        r = harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS);
        if (r < 0)
                return fail("starting timeconvd", r);
        r = timeconv_open_address(h->bus_address, &tc);
        for (int k = 0; r >= 0 && k < N_PAIRS; k++)
                for (int side = 0; r >= 0 && side < 2; side++)
                        r = timeconv_domain_id(tc, pair_names[k][side], &ids[k][side]);
        if (r >= 0)
                r = timeconv_domain_id(tc, "monotonic", &mono);
        if (r < 0)
                return fail("opening libtimeconv", r);

        /* Every domain calibrated and in the table: its current value answers by the table. */
        timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        deadline = clock_now_ns(CLOCK_MONOTONIC) + CALIBRATED_TIMEOUT_NS;
        for (int k = 0; k < N_PAIRS; k++) {
                struct timespec pause = { 0, 20000000 };

                timeconv_set_paths(tc, TIMECONV_PATH_ANY);
                r = timeconv_now_id(tc, ids[k][0], &base[k], &u);
                timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
                if (r >= 0)
                        r = timeconv_convert_id(tc, ids[k][0], ids[k][1], base[k], &v, &u);
                if (r < 0) {
                        if (clock_now_ns(CLOCK_MONOTONIC) > deadline)
                                return fail(pair_names[k][0], r);
                        timeconv_process(tc);
                        nanosleep(&pause, NULL);        /* calibration takes its bursts */
                        k--;
                }
        }

        floor_ns = posix_floor_ns();
        for (int k = 0; r1 >= 0 && k < N_PAIRS; k++) {
                pair_ns[k] = fast_ns(tc, 0, ids[k][0], ids[k][1], NULL, NULL, base[k], &r1);
                if (r1 >= 0)
                        pair_name_ns[k] = fast_ns(tc, 1, 0, 0, pair_names[k][0], pair_names[k][1], base[k], &r1);
                if (r1 >= 0)
                        pair_pair_ns[k] = fast_ns(tc, 3, ids[k][0], ids[k][1], NULL, NULL, base[k], &r1);
                if (r1 >= 0)
                        pair_many_ns[k] = many_ns(tc, pair_names[k][0], pair_names[k][1], base[k], &r1);
                if (r1 >= 0 && pair_many_ns[k] > pair_ns[k])
                        many_le_by_id = false;
                if (r1 >= 0 && pair_pair_ns[k] > by_pair_max)
                        by_pair_max = pair_pair_ns[k];
                if (pair_ns[k] > by_id_max)
                        by_id_max = pair_ns[k];
                if (pair_name_ns[k] > by_name_max)
                        by_name_max = pair_name_ns[k];
        }
        if (r1 >= 0)
                now_loop_ns = fast_ns(tc, 2, mono, mono, NULL, NULL, 0, &r1);
        if (r1 >= 0)
                now_ns = now_bracket_ns(tc, mono, floor_ns);
        if (r1 < 0)
                return fail("a fast-path call", r1);
        clock_loop_ns = posix_loop_ns();
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
        r = bus_figures(h, tc, &dbus_ns, &bus_floor_ns);
        if (r < 0)
                return fail("D-Bus round trips", r);
        r = cli_values_per_s(argv[2], h->dir, &cli_per_s);
        if (r < 0)
                return fail("timeconv convert --snapshots", r);
        timeconv_close(tc);
        h = harness_free(h);    /* the daemon, before its X server */
        xvfb_stop(&x);

        printf("{\n");
        printf("  \"posix_floor_ns\": %" PRIi64 ",\n", floor_ns);
        printf("  \"fastpath_available\": %s,\n", table ? "true" : "false");
        printf("  \"fastpath_convert_by_id_ns\": {");
        for (int k = 0; k < N_PAIRS; k++)
                printf("%s\"%s\": %.2f", k ? ", " : " ", pair_keys[k], pair_ns[k]);
        printf(" },\n");
        printf("  \"fastpath_convert_by_name_ns\": {");
        for (int k = 0; k < N_PAIRS; k++)
                printf("%s\"%s\": %.2f", k ? ", " : " ", pair_keys[k], pair_name_ns[k]);
        printf(" },\n");
        printf("  \"fastpath_convert_pair_ns\": {");
        for (int k = 0; k < N_PAIRS; k++)
                printf("%s\"%s\": %.2f", k ? ", " : " ", pair_keys[k], pair_pair_ns[k]);
        printf(" },\n");
        printf("  \"fastpath_convert_many_per_value_ns\": {");
        for (int k = 0; k < N_PAIRS; k++)
                printf("%s\"%s\": %.2f", k ? ", " : " ", pair_keys[k], pair_many_ns[k]);
        printf(" },\n");
        printf("  \"fastpath_convert_ns\": %.2f,\n", pair_ns[0]);
        printf("  \"fastpath_now_ns\": %.2f,\n", now_ns);
        printf("  \"fastpath_now_to_floor_ratio\": %.2f,\n", now_ns / (double) (floor_ns ?: 1));
        printf("  \"fastpath_now_loop_ns\": %.2f,\n", now_loop_ns);
        printf("  \"posix_clock_loop_ns\": %.2f,\n", clock_loop_ns);
        printf("  \"fastpath_now_to_clock_loop_ratio\": %.2f,\n", now_loop_ns / clock_loop_ns);
        printf("  \"dbus_convert_ns\": %" PRIi64 ",\n", dbus_ns);
        printf("  \"bus_floor_ns\": %" PRIi64 ",\n", bus_floor_ns);
        printf("  \"dbus_to_fastpath_ratio\": %.0f,\n", (double) dbus_ns / pair_ns[0]);
        printf("  \"cli_offline_values_per_s\": %.0f,\n", cli_per_s);
        printf("  \"target_values\": { \"fastpath_convert_by_id_ns\": 5, \"fastpath_convert_by_name_ns\": 10, \"fastpath_convert_pair_ns\": 10, "
               "\"fastpath_now_to_clock_loop_ratio\": 1.3, \"cli_offline_values_per_s\": 2000000 },\n");
        printf("  \"targets\": {\n");
        printf("    \"fastpath_convert_by_id_le_5ns\": %s,\n", by_id_max <= 5 ? "true" : "false");
        printf("    \"fastpath_convert_by_name_le_10ns\": %s,\n", by_name_max <= 10 ? "true" : "false");
        printf("    \"fastpath_convert_pair_le_10ns\": %s,\n", by_pair_max <= 10 ? "true" : "false");
        printf("    \"fastpath_convert_many_per_value_le_by_id\": %s,\n", many_le_by_id ? "true" : "false");
        printf("    \"fastpath_now_le_1_3x_clock_loop\": %s,\n", now_loop_ns <= 1.3 * clock_loop_ns ? "true" : "false");
        printf("    \"cli_offline_ge_2M_values_per_s\": %s\n", cli_per_s >= 2e6 ? "true" : "false");
        printf("  }\n}\n");
        return 0;
}
