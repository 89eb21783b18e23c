/* SPDX-License-Identifier: MIT */

/* timeconvd on its own private dbus-daemon (the integration harness), measured from outside:
 * a Convert round trip against its floor, org.freedesktop.DBus.Peer.Ping to the daemon (routed
 * through the bus daemon both ways, as Convert is; bench-dbus.h), with GetId, the bus daemon's
 * own answer (one routing), beside it; 10,000 values converted as libtimeconv sends them over
 * D-Bus (more than a ConvertMany takes: one ConvertManyMemfd, the values in a sealed memfd made
 * for the call, the answers read back from it) against the same calls to a service that only
 * copies the values to the answers' place (bench-floor.h); with no client at all (POSIX domains
 * only), once the daemon is idle by its own definition (no call for --idle-after), its resident
 * memory and the CPU time of all its threads over --idle-bursts idle cadences. Then a second
 * daemon with --gpu-software, which also opens whatever Vulkan device the loader finds (lavapipe
 * where there is no GPU): its resident memory and threads, against the first one's, are what a
 * GPU domain costs. One JSON object on stdout.
 * usage: bench-bus TIMECONVD [--idle-bursts=N] [--calls=N] */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench-dbus.h"
#include "bench-floor.h"
#include "bench-util.h"
#include "bus-errors.h"
#include "clock-client.h"
#include "harness-proc.h"
#include "harness.h"

#define MANY 10000
#define MANY_WARMUP 5           /* the first large messages grow both ends' buffers */
#define MANY_ROUNDS 30
#define WARMUP_CALLS 200
#define IDLE_AFTER_S 2          /* --idle-after: idle soon after start, so that the run is short */
#define IDLE_CADENCE_S 30       /* --idle-cadence: the default, what the idle figure is about */
#define IDLE_MARGIN_S 15        /* the window starts half a cadence after the idle daemon's first burst */

/* CPU time of every thread of pid, those gone included (its process CPU-time clock), in ns:
 * exact, where /proc/PID/stat counts ticks and /proc/PID/schedstat the main thread only. */
static int process_cpu_ns(pid_t pid, int64_t *ret) {
        struct timespec ts;
        clockid_t clock;
        int r;

        r = clock_getcpuclockid(pid, &clock);
        if (r != 0)
                return -r;
        if (clock_gettime(clock, &ts) < 0)
                return -errno;
        *ret = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
        return 0;
}

typedef struct RoundTrips {
        int64_t *ping_ns;       /* the floor */
        int64_t *get_id_ns;
        int64_t *convert_ns;
} RoundTrips;

/* Ping, Convert and GetId in turns, so that all three see the same machine state. */
static int measure_rtts(sd_bus *bus, size_t calls, const RoundTrips *rt) {
        for (size_t i = 0; i < WARMUP_CALLS + calls; i++) {
                int64_t t0, t1, t2, t3, v;
                uint64_t u;
                int r;

                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = bench_ping(bus);
                t1 = clock_now_ns(CLOCK_MONOTONIC);
                if (r >= 0)
                        r = clock_convert(bus, "monotonic", "boottime", t1, NULL, &v, &u);
                t2 = clock_now_ns(CLOCK_MONOTONIC);
                if (r >= 0)
                        r = bench_get_id(bus);
                t3 = clock_now_ns(CLOCK_MONOTONIC);
                if (r < 0)
                        return r;
                if (i >= WARMUP_CALLS) {
                        rt->ping_ns[i - WARMUP_CALLS] = t1 - t0;
                        rt->convert_ns[i - WARMUP_CALLS] = t2 - t1;
                        rt->get_id_ns[i - WARMUP_CALLS] = t3 - t2;
                }
        }
        return 0;
}

/* MANY values to service's object as libtimeconv's timeconv_convert_many() sends them over
 * D-Bus (client-lib/live-bus.c): a memfd made, sealed and filled, one ConvertManyMemfd, all of
 * the answers copied out; the round trip, all of that included. */
static int many_once(sd_bus *bus, const char *service, const char *object, const int64_t *values, int64_t *out,
                     int64_t *unc, int64_t *ret_ns) {
        _Static_assert(MANY > BUS_API_CONVERT_MANY_MAX, "libtimeconv sends this many in a memfd");
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        size_t size = BUS_API_MEMFD_BYTES(MANY);
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
        uint8_t *map = MAP_FAILED;
        int fd, r;

        fd = memfd_create("bench-many", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        r = fd < 0 || ftruncate(fd, (off_t) size) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ? -errno : 0;
        if (r >= 0) {
                map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                r = map == MAP_FAILED ? -errno : 0;
        }
        if (r >= 0) {
                memcpy(map, values, MANY * sizeof(int64_t));
                r = sd_bus_message_new_method_call(bus, &m, service, object, BUS_API_INTERFACE, "ConvertManyMemfd");
        }
        if (r >= 0)
                r = sd_bus_message_append(m, "ssht", "monotonic", "boottime", fd, (uint64_t) MANY);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, NULL, NULL);
        if (r >= 0) {
                memcpy(out, map + MANY * sizeof(int64_t), MANY * sizeof(int64_t));
                memcpy(unc, map + 2 * MANY * sizeof(int64_t), MANY * sizeof(int64_t));
        }
        if (map != MAP_FAILED)
                (void) munmap(map, size);
        if (fd >= 0)
                close(fd);
        *ret_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
        return r;
}

/* The best and the median of MANY_ROUNDS ConvertMany calls to the daemon and to the echo, in
 * turns, so that both see the same machine. */
static int measure_many(sd_bus *bus, int64_t *ret_best_ns, int64_t *ret_median_ns, int64_t *ret_floor_best_ns,
                        int64_t *ret_floor_median_ns) {
        _cleanup_free_ int64_t *values = calloc(MANY, sizeof(int64_t));
        _cleanup_free_ int64_t *out = calloc(MANY, sizeof(int64_t)), *unc = calloc(MANY, sizeof(int64_t));
        int64_t round_ns[MANY_ROUNDS], floor_ns[MANY_ROUNDS], base = clock_now_ns(CLOCK_MONOTONIC), ns;
        int r = values && out && unc ? 0 : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < MANY; i++)
                values[i] = base - (int64_t) (MANY - i) * 100000;
        for (int k = 0; r >= 0 && k < MANY_WARMUP + MANY_ROUNDS; k++) {
                r = many_once(bus, BUS_API_SERVICE, BUS_API_OBJECT, values, out, unc, &ns);
                /* The daemon's answers: boottime - monotonic is the same for all (no suspend),
                 * within their bounds. */
                if (r >= 0 && llabs((out[MANY - 1] - values[MANY - 1]) - (out[0] - values[0])) > unc[0] + unc[MANY - 1])
                        r = -EBADMSG;
                if (r >= 0 && k >= MANY_WARMUP)
                        round_ns[k - MANY_WARMUP] = ns;
                if (r >= 0)
                        r = many_once(bus, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_ECHO, values, out, unc, &ns);
                if (r >= 0 && k >= MANY_WARMUP)
                        floor_ns[k - MANY_WARMUP] = ns;
        }
        if (r < 0)
                return r;
        *ret_median_ns = bench_percentile(round_ns, MANY_ROUNDS, 0.5);
        *ret_best_ns = round_ns[0];     /* sorted by bench_percentile() */
        *ret_floor_median_ns = bench_percentile(floor_ns, MANY_ROUNDS, 0.5);
        *ret_floor_best_ns = floor_ns[0];
        return 0;
}

/* Threads of pid, from /proc/PID/status; -EBADMSG when it says nothing of them. */
static int read_threads(pid_t pid, int64_t *ret) {
        _cleanup_free_ char *status = NULL;
        char path[64];
        const char *p;
        long long n;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        r = proc_read_file(path, &status, NULL);
        if (r < 0)
                return r;
        p = strstr(status, "\nThreads:");
        if (!p || sscanf(p + 9, "%lld", &n) != 1)
                return -EBADMSG;
        *ret = n;
        return 0;
}

static void idle_for(double seconds) {
        struct timespec t = { .tv_sec = (time_t) seconds,
                              .tv_nsec = (long) ((seconds - (double) (time_t) seconds) * 1e9) };

        /* A measurement over time with nobody calling, not a wait for an event. */
        while (nanosleep(&t, &t) < 0 && errno == EINTR)
                ;
}

typedef struct GpuCost {
        char domain[64];                /* the GPU domain the daemon offered; "" for none */
        int64_t rss_kib;
        int64_t threads;
} GpuCost;

/* A daemon with --gpu-software, idle for idle_s once READY=1 (its first burst of every domain,
 * the GPU's included, is in): its resident memory and threads, and which GPU domain it has. */
static int measure_gpu_daemon(const char *daemon, double idle_s, GpuCost *ret) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(clock_strv_freep) char **domains = NULL;
        const char *const args[] = { "--no-x11", "--gpu-software", NULL };
        GpuCost c = {};
        int r;

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_start_daemon(h, daemon, args, HARNESS_READY_TIMEOUT_MS);
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = clock_list_domains(bus, &domains);
        if (r < 0)
                return r;
        for (char **d = domains; *d; d++)
                if (strncmp(*d, "gpu", 3) == 0 && (*d)[3] >= '0' && (*d)[3] <= '9') {
                        snprintf(c.domain, sizeof(c.domain), "%s", *d);
                        break;
                }
        bus = sd_bus_flush_close_unref(bus);
        idle_for(idle_s);
        r = proc_rss_kib(h->daemon_pid, &c.rss_kib);
        if (r >= 0)
                r = read_threads(h->daemon_pid, &c.threads);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

static int fail(const char *stage, int r) {
        fprintf(stderr, "bench-bus: %s: %s\n", stage, strerror(r < 0 ? -r : r));
        return 1;
}

typedef struct IdleFigures {
        int64_t window_ns;
        int64_t cpu_ns;         /* all threads, over the window */
        int64_t rss_kib;
        int64_t threads;
} IdleFigures;

/* The daemon (started with --idle-after=IDLE_AFTER_S --idle-cadence=IDLE_CADENCE_S, ready at
 * ready_ns, nobody calling since) over `bursts` idle cadences. By its own definition it is idle
 * at its first burst IDLE_AFTER_S after its last activity (its start, before READY=1): that
 * burst comes at most a second (its active cadence, + 5 % timer slack) later. The window starts
 * IDLE_MARGIN_S after, half an idle cadence, and lasts `bursts` cadences: it holds exactly
 * `bursts` idle bursts whatever their phase and slack, and no active one. */
static int measure_idle(const Harness *h, int64_t ready_ns, int bursts, IdleFigures *ret) {
        int64_t start_ns = ready_ns + (IDLE_AFTER_S + 1 + IDLE_MARGIN_S) * INT64_C(1000000000);
        int64_t cpu0_ns, cpu1_ns, t0_ns, t1_ns;
        IdleFigures f = {};
        int r;

        idle_for((double) (start_ns - clock_now_ns(CLOCK_MONOTONIC)) / 1e9);
        r = process_cpu_ns(h->daemon_pid, &cpu0_ns);
        if (r < 0)
                return r;
        t0_ns = clock_now_ns(CLOCK_MONOTONIC);
        idle_for((double) bursts * IDLE_CADENCE_S);
        r = process_cpu_ns(h->daemon_pid, &cpu1_ns);
        t1_ns = clock_now_ns(CLOCK_MONOTONIC);
        if (r >= 0)
                r = proc_rss_kib(h->daemon_pid, &f.rss_kib);
        if (r >= 0)
                r = read_threads(h->daemon_pid, &f.threads);
        if (r < 0)
                return r;
        f.window_ns = t1_ns - t0_ns;
        f.cpu_ns = cpu1_ns - cpu0_ns;
        *ret = f;
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        char idle_after_arg[32], idle_cadence_arg[32];
        const char *const args[] = { "--no-x11", "--no-gpu", idle_after_arg, idle_cadence_arg, NULL };
        size_t calls = 2000;
        int bursts = 2;
        GpuCost gpu = {};
        IdleFigures idle;
        RoundTrips rt;
        int64_t rss_load_kib = -1, many_best_ns, many_median_ns, many_floor_best_ns, many_floor_median_ns;
        pid_t floor_pid = 0;
        int64_t ping_p50, get_id_p50, convert_p50, convert_p99;
        double cpu_pct, ratio;
        int r;

        for (int i = 2; i < argc; i++)
                if (strncmp(argv[i], "--idle-bursts=", 14) == 0)
                        bursts = atoi(argv[i] + 14);
                else if (strncmp(argv[i], "--calls=", 8) == 0)
                        calls = strtoul(argv[i] + 8, NULL, 10);
                else
                        argc = 0;
        if (argc < 2 || bursts < 1 || bursts > 100 || calls < 10) {
                fprintf(stderr, "usage: %s TIMECONVD [--idle-bursts=N] [--calls=N]\n", argv[0]);
                return 2;
        }
        snprintf(idle_after_arg, sizeof(idle_after_arg), "--idle-after=%d", IDLE_AFTER_S);
        snprintf(idle_cadence_arg, sizeof(idle_cadence_arg), "--idle-cadence=%d", IDLE_CADENCE_S);
        r = harness_new(NULL, &h);
        if (r < 0)
                return fail("starting dbus-daemon", r);
        r = harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS);
        if (r < 0)
                return fail("starting timeconvd", r);

        /* Nobody connected but the bus itself: the daemon keeps its clocks calibrated alone. */
        r = measure_idle(h, clock_now_ns(CLOCK_MONOTONIC), bursts, &idle);
        if (r < 0)
                return fail("reading /proc/PID", r);
        cpu_pct = 100.0 * (double) idle.cpu_ns / (double) idle.window_ns;

        rt = (RoundTrips) { .ping_ns = calloc(calls, sizeof(int64_t)), .get_id_ns = calloc(calls, sizeof(int64_t)),
                            .convert_ns = calloc(calls, sizeof(int64_t)) };
        if (!rt.ping_ns || !rt.get_id_ns || !rt.convert_ns)
                return fail("allocating", -ENOMEM);
        r = harness_connect(h, &bus);
        if (r >= 0)
                r = measure_rtts(bus, calls, &rt);
        if (r < 0)
                return fail("round trips", r);
        r = bench_floor_start(h, &floor_pid);
        if (r < 0)
                return fail("starting the echo service", r);
        r = measure_many(bus, &many_best_ns, &many_median_ns, &many_floor_best_ns, &many_floor_median_ns);
        bench_floor_stop(floor_pid);
        if (r < 0)
                return fail("ConvertMany", r);
        (void) proc_rss_kib(h->daemon_pid, &rss_load_kib);

        ping_p50 = bench_percentile(rt.ping_ns, calls, 0.5);
        get_id_p50 = bench_percentile(rt.get_id_ns, calls, 0.5);
        convert_p50 = bench_percentile(rt.convert_ns, calls, 0.5);
        convert_p99 = bench_percentile(rt.convert_ns, calls, 0.99);
        ratio = (double) convert_p50 / (double) ping_p50;
        free(rt.ping_ns);
        free(rt.get_id_ns);
        free(rt.convert_ns);

        /* One daemon at a time: the first is gone before the second one starts. */
        bus = sd_bus_flush_close_unref(bus);
        h = harness_free(h);
        r = measure_gpu_daemon(argv[1], 10, &gpu);
        if (r < 0)
                return fail("timeconvd --gpu-software", r);

        printf("{\n");
        printf("  \"ping_rtt_p50_ns\": %" PRIi64 ",\n", ping_p50);
        printf("  \"get_id_rtt_p50_ns\": %" PRIi64 ",\n", get_id_p50);
        printf("  \"convert_rtt_p50_ns\": %" PRIi64 ",\n", convert_p50);
        printf("  \"convert_rtt_p99_ns\": %" PRIi64 ",\n", convert_p99);
        printf("  \"convert_rtt_to_ping_ratio\": %.2f,\n", ratio);
        printf("  \"convert_rtt_to_get_id_ratio\": %.2f,\n", (double) convert_p50 / (double) get_id_p50);
        printf("  \"round_trips\": %zu,\n", calls);
        printf("  \"convert_many_10k_ns\": %" PRIi64 ",\n", many_best_ns);
        printf("  \"convert_many_10k_median_ns\": %" PRIi64 ",\n", many_median_ns);
        /* The same calls to a service that only copies the values where the answers go. */
        printf("  \"convert_many_10k_bus_floor_ns\": %" PRIi64 ",\n", many_floor_best_ns);
        printf("  \"convert_many_10k_bus_floor_median_ns\": %" PRIi64 ",\n", many_floor_median_ns);
        printf("  \"convert_many_10k_to_bus_floor_ratio\": %.2f,\n",
               (double) many_best_ns / (double) many_floor_best_ns);
        printf("  \"idle_cadence_s\": %d,\n", IDLE_CADENCE_S);
        printf("  \"idle_bursts\": %d,\n", bursts);
        printf("  \"idle_window_s\": %.1f,\n", (double) idle.window_ns / 1e9);
        printf("  \"daemon_cpu_idle_window_ns\": %" PRIi64 ",\n", idle.cpu_ns);
        printf("  \"daemon_cpu_idle_per_burst_ns\": %" PRIi64 ",\n", idle.cpu_ns / bursts);
        printf("  \"daemon_cpu_idle_pct\": %.5f,\n", cpu_pct);
        printf("  \"daemon_rss_kib\": %" PRIi64 ",\n", idle.rss_kib);
        printf("  \"daemon_rss_after_load_kib\": %" PRIi64 ",\n", rss_load_kib);
        printf("  \"daemon_threads\": %" PRIi64 ",\n", idle.threads);
        /* --gpu-software: the same daemon with the first Vulkan device the loader offers. */
        printf("  \"gpu_domain\": \"%s\",\n", gpu.domain);
        printf("  \"daemon_rss_with_gpu_kib\": %" PRIi64 ",\n", gpu.domain[0] ? gpu.rss_kib : -1);
        printf("  \"daemon_threads_with_gpu\": %" PRIi64 ",\n", gpu.domain[0] ? gpu.threads : -1);
        printf("  \"target_values\": { \"convert_rtt_to_ping_ratio\": 1.5, \"convert_many_10k_ns\": 2000000, "
               "\"daemon_rss_kib\": 8192, \"daemon_cpu_idle_pct\": 0.1 },\n");
        printf("  \"targets\": {\n");
        printf("    \"convert_rtt_p50_le_1.5x_ping\": %s,\n", ratio <= 1.5 ? "true" : "false");
        printf("    \"convert_many_10k_le_2ms\": %s,\n", many_best_ns <= 2000000 ? "true" : "false");
        printf("    \"daemon_rss_le_8192_kib\": %s,\n", idle.rss_kib <= 8192 ? "true" : "false");
        printf("    \"daemon_cpu_idle_le_0.1_pct\": %s\n", cpu_pct <= 0.1 ? "true" : "false");
        printf("  }\n}\n");
        return 0;
}
