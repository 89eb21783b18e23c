/* SPDX-License-Identifier: MIT */

/* bench-hostile: what a hostile client costs the others. timeconvd on a private bus
 * with a desktop session bus's limits, with a real Xvfb (x11, x11_us, msc). A victim thread calls
 * Convert(monotonic -> boottime) all the time and checks every answer against a bracket of the
 * two clocks; the main thread runs each attack in turn:
 *   1. forged NameOwnerChanged signals against another client's application domain;
 *   2. ConvertMany calls at the limit (BUS_API_CONVERT_MANY_MAX values) whose replies are never
 *      read, one in UNREAD_OVERSIZE_EVERY a value beyond it (refused, but the bus carries it);
 *   3. 3,000 GetSharedTable calls whose replies are never read;
 *   4. a stream of legal ConvertMany calls at the limit from msc, read one after the other;
 *   5. the X server grabbed (GrabServer) for 2 s, then stopped (SIGSTOP) for 2 s;
 *   6. a stream of legal ConvertManyMemfd calls at its limit from msc (one sealed memfd of values
 *      for all), read one after the other;
 *   7. a flood of unread calls: as many ConvertMany calls of one value, none read, as 25 M values
 *      at the limit would take (what attack 2 was before the limit came down to 512);
 *   8. 20,000 ListDomains calls sent at once, none read;
 *   9. the same, the answers read as they come;
 *  10. 20,000 Introspect calls (answered by sd-bus itself), none read.
 * For each: the victim's p99 against its p99 with no attack (measured first, in the same run), and
 * the bus daemon's own round trip (GetId), which it also calls between its Converts; the daemon's
 * RSS before and after (its clients gone) and at its peak, wrong answers (the victim's, an
 * application domain taken, a grab taken for an X restart), and whether the daemon is still there.
 * The load of a shared machine drifts, so each attack is also compared with a quiet window of the
 * victim just before it (quiet_before_*). Then attacks 2, 4, 6 and 7 again against a service that
 * does nothing (bus_floor_*): what the same traffic costs the victim through dbus-daemon alone,
 * against that service's own p99 just before.
 * dbus-daemon reads a connection 2 KiB at a time, so every large message costs the others in
 * its loop whatever the service does. The targets (the victim's p99 within 2x its unloaded
 * one, the daemon's RSS within 1 MiB, no wrong answer, no exit) hold over attacks 1-5 and the
 * floods (8-10); attacks 6 and 7 are reported beside them
 * (beyond_targets): 7 stalls the do-nothing service as much, which is dbus-daemon's to fix.
 * One JSON object.
 * usage: bench-hostile TIMECONVD [ATTACK...]   (the attacks to run, 1-10; all by default) */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include "bench-floor.h"
#include "bench-util.h"
#include "bus-errors.h"
#include "harness-proc.h"
#include "harness.h"
#include "x11-bus.h"
#include "xvfb.h"

#define PHASES 11
/* Attacks 6 and 7 are reported beside the targets; the others are held to them. */
#define BEYOND_TARGETS(attack) ((attack) == 6 || (attack) == 7)
/* The same traffic against a service that does nothing (floor_*): attack 2 against it, attack 4
 * against it answered with empty arrays and with replies of the size of the daemon's, attack 6
 * against it copying the values where the answers go, attacks 7, 8 (it has no ListDomains: each
 * call is answered with a small error, as the daemon refuses a flooder's) and 10 against it. */
#define FLOOR_RUNS 7
#define RUNS (PHASES + FLOOR_RUNS)
/* The victim's samples: for each run, a quiet window just before it (2 * run), then the run. */
#define SLOTS (2 * RUNS)
#define LATENCIES_MAX 200000
#define BASELINE_NS (2 * NSEC_PER_SEC)
#define MANY_VALUES BUS_API_CONVERT_MANY_MAX
/* Unread calls at the limit: as many as since the limit was 16384 values. As many calls as 25 M
 * values would take now (49152) make the others wait seconds whatever the calls carry, through
 * the bus daemon alone too: that is attack 7. */
#define UNREAD_MANY_CALLS 1536
#define FLOOD_CALLS (25165824 / MANY_VALUES)
#define UNREAD_OVERSIZE_EVERY 8
#define RSS_EVERY 64                    /* calls between two reads of the daemon's memory */
#define TABLE_CALLS 3000
#define MSC_MANY_CALLS (4194304 / MANY_VALUES) /* 4.2 M values, as the 4 calls of 10^6 before */
#define MEMFD_VALUES BUS_API_CONVERT_MANY_MEMFD_MAX
#define MSC_MEMFD_CALLS (16777216 / MEMFD_VALUES) /* 16 M values */
#define FLOOD_SMALL_CALLS 20000        /* attacks 8-10 */
#define X_HOLD_NS (2 * NSEC_PER_SEC)
#define CALL_USEC (30 * USEC_PER_SEC)

static const char *const phase_names[PHASES] = {
        "none", "forged_owner_changed", "unread_convert_many", "unread_shared_table", "msc_convert_many",
        "x_grab_and_stop", "msc_convert_many_memfd", "unread_flood", "list_domains_flood_unread",
        "list_domains_flood_read", "introspect_flood_unread",
};

typedef struct Victim {
        const Harness *h;
        atomic_int slot;                /* -1: stop */
        int64_t *latencies_ns[SLOTS], *getid_ns[SLOTS];
        size_t n[SLOTS], n_getid[SLOTS];
        unsigned wrong, failed;
} Victim;

typedef struct Phase {
        int64_t p50_ns, p99_ns, max_ns, getid_p99_ns, quiet_p99_ns, quiet_max_ns;
        size_t calls;
        int64_t rss_before_kib, rss_after_kib, rss_peak_kib;
        unsigned wrong;
        bool alive;
} Phase;

/* What each run is: an attack (0: none) against the daemon or against the floor service, whose
 * ConvertMany answers at object. */
typedef struct Run {
        int attack;
        const char *service, *object;
} Run;

static const Run runs[RUNS] = {
        { 0, BUS_API_SERVICE, BUS_API_OBJECT }, { 1, BUS_API_SERVICE, BUS_API_OBJECT },
        { 2, BUS_API_SERVICE, BUS_API_OBJECT }, { 3, BUS_API_SERVICE, BUS_API_OBJECT },
        { 4, BUS_API_SERVICE, BUS_API_OBJECT }, { 5, BUS_API_SERVICE, BUS_API_OBJECT },
        { 6, BUS_API_SERVICE, BUS_API_OBJECT }, { 7, BUS_API_SERVICE, BUS_API_OBJECT },
        { 8, BUS_API_SERVICE, BUS_API_OBJECT }, { 9, BUS_API_SERVICE, BUS_API_OBJECT },
        { 10, BUS_API_SERVICE, BUS_API_OBJECT },
        { 2, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_EMPTY }, { 4, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_EMPTY },
        { 4, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_ECHO }, { 6, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_ECHO },
        { 7, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_EMPTY }, { 8, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_EMPTY },
        { 10, BENCH_FLOOR_SERVICE, BENCH_FLOOR_OBJECT_EMPTY },
};
enum { RUN_FLOOR_UNREAD = PHASES, RUN_FLOOR_MSC_EMPTY, RUN_FLOOR_MSC_ECHO, RUN_FLOOR_MEMFD, RUN_FLOOR_FLOOD,
       RUN_FLOOR_LIST_DOMAINS, RUN_FLOOR_INTROSPECT };

/* Convert(monotonic -> boottime) of the time between two reads of both clocks: the answer
 * must lie in the bracket, widened by its bound (the floor service's answers are not checked). */
static int victim_call(sd_bus *bus, const char *service, int64_t *ret_latency_ns, bool *ret_wrong) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int64_t m0 = clock_now_ns(CLOCK_MONOTONIC), b = clock_now_ns(CLOCK_BOOTTIME);
        int64_t m1 = clock_now_ns(CLOCK_MONOTONIC), t0, value;
        uint64_t unc;
        int r;

        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = sd_bus_call_method(bus, service, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert", &e, &reply,
                               "ssx", "monotonic", "boottime", m1);
        *ret_latency_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
        if (r < 0)
                fprintf(stderr, "bench-hostile: the victim's Convert: %s\n", e.message ? e.message : strerror(-r));
        if (r >= 0)
                r = sd_bus_message_read(reply, "xt", &value, &unc);
        if (r < 0)
                return r;
        /* boottime at m1 lies in [b, b + (m1 - m0)]. */
        *ret_wrong = strcmp(service, BUS_API_SERVICE) == 0 &&
                     (value + (int64_t) unc < b || value - (int64_t) unc > b + (m1 - m0));
        return 0;
}

static void *victim_run(void *userdata) {
        Victim *v = userdata;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int slot;

        if (harness_connect(v->h, &bus) < 0) {
                v->failed++;
                return NULL;
        }
        while ((slot = atomic_load(&v->slot)) >= 0) {
                int64_t latency_ns;
                bool wrong = false;

                if (victim_call(bus, runs[slot / 2].service, &latency_ns, &wrong) < 0) {
                        v->failed++;
                        continue;
                }
                v->wrong += wrong;
                if (v->n[slot] < LATENCIES_MAX)
                        v->latencies_ns[slot][v->n[slot]++] = latency_ns;

                /* The bus daemon's own round trip, in the same conditions. */
                latency_ns = clock_now_ns(CLOCK_MONOTONIC);
                if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetId", NULL, NULL, NULL) >= 0 && v->n_getid[slot] < LATENCIES_MAX)
                        v->getid_ns[slot][v->n_getid[slot]++] = clock_now_ns(CLOCK_MONOTONIC) - latency_ns;
        }
        return NULL;
}

/* What the daemon holds (anonymous and shmem): file pages come and go with the code that runs. */
static int64_t rss_kib(pid_t pid) {
        ProcUsage u;

        return proc_usage(pid, &u) < 0 ? 0 : proc_usage_held_kib(&u);
}

static int on_counted_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ++*(unsigned *) userdata;
        return 0;
}

static int call_async_counted(sd_bus *bus, sd_bus_message *m, unsigned *replies) {
        return sd_bus_call_async(bus, NULL, m, NULL, NULL, CALL_USEC) < 0 ? -EIO : (int) ++*replies;
}

/* 1: B forges A's departure; A's domain must stay A's. */
static unsigned attack_forged(const Harness *h) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *a = NULL, *b = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *a_name = NULL;
        unsigned wrong = 0;

        if (harness_connect(h, &a) < 0 || harness_connect(h, &b) < 0 || sd_bus_get_unique_name(a, &a_name) < 0)
                return 1;
        for (int i = 0; i < 3; i++) {
                int64_t now = clock_now_ns(CLOCK_MONOTONIC);

                if (sd_bus_call_method(a, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "PushSnapshot", &e,
                                       NULL, "a(sx)", 2, "audio0", now / 1000, "monotonic", now) < 0)
                        return 1;
        }
        for (int i = 0; i < 1000; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                if (sd_bus_message_new_signal(b, &m, "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                              "NameOwnerChanged") < 0 ||
                    sd_bus_message_set_destination(m, BUS_API_SERVICE) < 0 ||
                    sd_bus_message_append(m, "sss", a_name, a_name, "") < 0 || sd_bus_send(b, m, NULL) < 0)
                        return 1;
        }
        (void) sd_bus_flush(b);
        /* Taken over if B may now push under A's name. */
        int64_t now = clock_now_ns(CLOCK_MONOTONIC);
        if (sd_bus_call_method(b, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "PushSnapshot", &e, NULL,
                               "a(sx)", 2, "audio0", now, "monotonic", now) >= 0 ||
            !sd_bus_error_has_name(&e, BUS_ERROR_NAME_TAKEN))
                wrong++;
        return wrong;
}

/* msc values around the current frame, n + 1 of them; false if msc cannot be read. */
static bool msc_values(sd_bus *bus, int64_t *values, size_t n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int64_t msc = 0;
        uint64_t unc;

        if (sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "Now", NULL, &reply, "s",
                               "msc") < 0 || sd_bus_message_read(reply, "xt", &msc, &unc) < 0)
                return false;
        for (size_t i = 0; i <= n; i++)
                values[i] = msc + (int64_t) (i % 120) - 60;
        return true;
}

/* A sealed memfd holding n values, with room for their answers; -errno on failure. */
static int memfd_of(const int64_t *values, size_t n) {
        size_t size = BUS_API_MEMFD_BYTES(n);
        int fd = memfd_create("bench-hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        uint8_t *map;

        if (fd < 0 || ftruncate(fd, (off_t) size) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
                goto fail;
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                goto fail;
        memcpy(map, values, n * sizeof(int64_t));
        (void) munmap(map, size);
        return fd;
fail:
        if (fd >= 0)
                close(fd);
        return -errno;
}

/* 6: n ConvertManyMemfd calls of MEMFD_VALUES from msc, one after the other, all on one memfd: an
 * attacker need not pay for a new one each time (libtimeconv does), so that the daemon's work
 * is what it costs. */
static void attack_memfd(const Harness *h, const Run *run, unsigned n, pid_t pid, int64_t *peak_kib) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ int64_t *values = malloc((MEMFD_VALUES + 1) * sizeof(int64_t));
        _cleanup_close_ int fd = -EBADF;

        if (!values || harness_connect(h, &bus) < 0 || !msc_values(bus, values, MEMFD_VALUES))
                return;
        fd = memfd_of(values, MEMFD_VALUES);
        if (fd < 0)
                return;
        for (unsigned i = 0; i < n; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                int64_t kib;

                (void) sd_bus_call_method(bus, run->service, run->object, BUS_API_INTERFACE, "ConvertManyMemfd", &e,
                                          NULL, "ssht", "msc", "monotonic", fd, (uint64_t) MEMFD_VALUES);
                kib = rss_kib(pid);
                if (kib > *peak_kib)
                        *peak_kib = kib;
        }
}

/* 2, 4 and 7: n ConvertMany calls of per_call values from `from` to run's service; read: one after
 * the other; else none is read, and, at the limit, one in UNREAD_OVERSIZE_EVERY has a value too
 * many. */
static void attack_many(const Harness *h, const Run *run, const char *from, unsigned n, size_t per_call, bool read,
                        pid_t pid, int64_t *peak_kib) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ int64_t *values = malloc((MANY_VALUES + 1) * sizeof(int64_t));
        unsigned sent = 0;

        if (!values || harness_connect(h, &bus) < 0)
                return;
        if (strcmp(from, "msc") == 0) {
                if (!msc_values(bus, values, MANY_VALUES))
                        return;
        } else
                for (size_t i = 0; i <= MANY_VALUES; i++)
                        values[i] = clock_now_ns(CLOCK_MONOTONIC);
        for (unsigned i = 0; i < n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                size_t n_values = !read && per_call == MANY_VALUES &&
                                  i % UNREAD_OVERSIZE_EVERY == UNREAD_OVERSIZE_EVERY - 1 ? MANY_VALUES + 1 : per_call;
                int64_t kib;

                if (sd_bus_message_new_method_call(bus, &m, run->service, run->object, BUS_API_INTERFACE,
                                                   "ConvertMany") < 0 ||
                    sd_bus_message_append(m, "ss", from, "monotonic") < 0 ||
                    sd_bus_message_append_array(m, 'x', values, n_values * sizeof(int64_t)) < 0)
                        return;
                if (read)
                        (void) sd_bus_call(bus, m, CALL_USEC, &e, &reply);
                else if (call_async_counted(bus, m, &sent) < 0 || sd_bus_flush(bus) < 0)
                        return;
                /* Not after every call: reading the daemon's memory takes longer than one. */
                if (i % RSS_EVERY != RSS_EVERY - 1 && i != n - 1)
                        continue;
                kib = rss_kib(pid);
                if (kib > *peak_kib)
                        *peak_kib = kib;
        }
}

/* 8-10: n calls of member sent at once; read: their answers are read as they come and to the
 * last, else none is and the client leaves. */
static void attack_small_flood(const Harness *h, const Run *run, const char *interface, const char *member,
                               unsigned n, bool read, pid_t pid, int64_t *peak_kib) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        unsigned sent = 0, answered = 0;

        if (harness_connect(h, &bus) < 0)
                return;
        for (unsigned i = 0; i < n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                if (sd_bus_message_new_method_call(bus, &m, run->service, run->object, interface, member) < 0 ||
                    sd_bus_call_async(bus, NULL, m, on_counted_reply, &answered, CALL_USEC) < 0)
                        return;
                sent++;
                if (read)
                        while (sd_bus_process(bus, NULL) > 0)
                                ;
                if (i % RSS_EVERY == RSS_EVERY - 1) {
                        int64_t kib = rss_kib(pid);

                        (void) sd_bus_flush(bus);
                        if (kib > *peak_kib)
                                *peak_kib = kib;
                }
        }
        (void) sd_bus_flush(bus);
        while (read && answered < sent)
                if (sd_bus_process(bus, NULL) == 0 && sd_bus_wait(bus, CALL_USEC) <= 0)
                        break;
}

/* 3: GetSharedTable again and again, no reply read. */
static void attack_tables(const Harness *h) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        unsigned sent = 0;

        if (harness_connect(h, &bus) < 0)
                return;
        for (unsigned i = 0; i < TABLE_CALLS; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                if (sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                                   "GetSharedTable") < 0 || call_async_counted(bus, m, &sent) < 0)
                        return;
        }
        (void) sd_bus_flush(bus);
}

static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *domain, *kind;
        int64_t at_ns, step_ns;

        if (sd_bus_message_read(m, "sxxs", &domain, &at_ns, &step_ns, &kind) >= 0 && strcmp(kind, "restart") == 0)
                ++*(unsigned *) userdata;
        return 0;
}

/* Processes bus for ns, counting its signals. */
static void pump_for(sd_bus *bus, int64_t ns) {
        int64_t end_ns = clock_now_ns(CLOCK_MONOTONIC) + ns, left_ns;

        while ((left_ns = end_ns - clock_now_ns(CLOCK_MONOTONIC)) > 0)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, (uint64_t) left_ns / 1000);
}

/* 5: a grab, then a stopped server; a restart announced for either is a wrong answer. */
static unsigned attack_x(const Harness *h, Xvfb *x) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        xcb_connection_t *c;
        unsigned restarts = 0;

        if (harness_connect(h, &bus) < 0 ||
            sd_bus_match_signal(bus, &slot, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "Discontinuity",
                                on_discontinuity, &restarts) < 0)
                return 1;
        c = xcb_connect(x->name, NULL);
        if (xcb_connection_has_error(c)) {
                xcb_disconnect(c);
                return 1;
        }
        xcb_grab_server(c);
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
        pump_for(bus, X_HOLD_NS);
        xcb_ungrab_server(c);
        xcb_flush(c);
        xcb_disconnect(c);

        (void) xvfb_pause(x, true);
        pump_for(bus, X_HOLD_NS);
        (void) xvfb_pause(x, false);
        /* What the daemon says once the server answers again. */
        pump_for(bus, X_HOLD_NS);
        return restarts;
}

static bool is_available(const X11BusDomain *d, void *userdata) {
        return d->available;
}

static int64_t settle_rss(sd_bus *bus, pid_t pid) {
        int64_t kib = rss_kib(pid), last_kib;

        for (int i = 0; i < 10; i++) {
                pump_for(bus, NSEC_PER_SEC / 2);
                last_kib = kib;
                kib = rss_kib(pid);
                if (kib >= last_kib)
                        break;
        }
        return kib;
}

static void percentiles(int64_t *v, size_t n, Phase *p) {
        p->calls = n;
        p->p50_ns = bench_percentile(v, n, 0.5);
        p->p99_ns = bench_percentile(v, n, 0.99);
        p->max_ns = bench_percentile(v, n, 1.0);
}

static bool wanted(int attack, int argc, char **argv) {
        if (argc <= 2 || attack == 0)
                return true;
        for (int i = 2; i < argc; i++)
                if (atoi(argv[i]) == attack)
                        return true;
        return false;
}

static double ratio_of(int64_t a, int64_t b) {
        return b > 0 ? (double) a / (double) b : 0;
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        Victim v = {};
        Phase phases[RUNS] = {};
        Xvfb x = {};
        pthread_t thread;
        pid_t pid = 0, floor_pid = 0;
        unsigned wrong = 0, exits = 0;
        /* [0]: attacks 1-5 and 8-10 (the targets), [1]: 6 and 7 */
        bool ratios_ok[2] = { true, true }, quiet_ratios_ok[2] = { true, true }, ran[2] = {}, growth_ok = true;
        const char *args[] = { "--display", NULL, "--no-gpu", NULL };

        if (argc < 2) {
                fprintf(stderr, "usage: %s TIMECONVD [ATTACK...]\n", argv[0]);
                return 2;
        }
        if (xvfb_start(-1, &x) < 0 || harness_new(NULL, &h) < 0) {
                fprintf(stderr, "bench-hostile: cannot start Xvfb or a private bus\n");
                return 1;
        }
        args[1] = x.name;
        if (harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS) < 0 || harness_connect(h, &bus) < 0 ||
            harness_name_pid(bus, BUS_API_SERVICE, &pid) < 0) {
                fprintf(stderr, "bench-hostile: timeconvd did not start\n");
                return 1;
        }
        /* Before any thread: the child only serves the bus. */
        if (bench_floor_start(h, &floor_pid) < 0) {
                fprintf(stderr, "bench-hostile: the floor service did not start\n");
                return 1;
        }
        if (x11_bus_wait_for(bus, "msc", is_available, NULL, 20000, NULL) < 0 ||
            x11_bus_wait_for(bus, "x11", is_available, NULL, 20000, NULL) < 0) {
                fprintf(stderr, "bench-hostile: x11 and msc did not become available\n");
                return 1;
        }
        for (int i = 0; i < SLOTS; i++) {
                v.latencies_ns[i] = malloc(LATENCIES_MAX * sizeof(int64_t));
                v.getid_ns[i] = malloc(LATENCIES_MAX * sizeof(int64_t));
                if (!v.latencies_ns[i] || !v.getid_ns[i])
                        return 1;
        }
        v.h = h;
        if (pthread_create(&thread, NULL, victim_run, &v) != 0)
                return 1;

        for (int i = 0; i < RUNS; i++) {
                const Run *run = &runs[i];
                Phase *p = &phases[i];

                if (!wanted(run->attack, argc, argv))
                        continue;
                /* The machine's load drifts over a run: each attack is also compared with the
                 * victim's p99 just before it. */
                if (run->attack != 0) {
                        atomic_store(&v.slot, 2 * i);
                        pump_for(bus, BASELINE_NS);
                }
                p->rss_before_kib = p->rss_peak_kib = rss_kib(pid);
                atomic_store(&v.slot, 2 * i + 1);
                switch (run->attack) {
                case 0:
                        pump_for(bus, BASELINE_NS);
                        break;
                case 1:
                        p->wrong = attack_forged(h);
                        break;
                case 2:
                        attack_many(h, run, "monotonic", UNREAD_MANY_CALLS, MANY_VALUES, false, pid, &p->rss_peak_kib);
                        break;
                case 3:
                        attack_tables(h);
                        break;
                case 4:
                        attack_many(h, run, "msc", MSC_MANY_CALLS, MANY_VALUES, true, pid, &p->rss_peak_kib);
                        break;
                case 5:
                        p->wrong = attack_x(h, &x);
                        break;
                case 6:
                        attack_memfd(h, run, MSC_MEMFD_CALLS, pid, &p->rss_peak_kib);
                        break;
                case 7:
                        attack_many(h, run, "monotonic", FLOOD_CALLS, 1, false, pid, &p->rss_peak_kib);
                        break;
                case 8:
                case 9:
                        attack_small_flood(h, run, BUS_API_INTERFACE, "ListDomains", FLOOD_SMALL_CALLS, run->attack == 9,
                                           pid, &p->rss_peak_kib);
                        break;
                case 10:
                        attack_small_flood(h, run, "org.freedesktop.DBus.Introspectable", "Introspect", FLOOD_SMALL_CALLS,
                                           false, pid, &p->rss_peak_kib);
                        break;
                }
                /* The victim keeps calling while the daemon answers what the attack left; its
                 * memory is read once it stops going down (the bus daemon takes large replies
                 * slowly), for 5 s at most. */
                p->rss_after_kib = settle_rss(bus, pid);
                if (p->rss_after_kib > p->rss_peak_kib)
                        p->rss_peak_kib = p->rss_after_kib;
                p->alive = harness_daemon_alive(h);
                exits += !p->alive;
                wrong += p->wrong;
        }
        atomic_store(&v.slot, -1);
        pthread_join(thread, NULL);
        wrong += v.wrong;
        bench_floor_stop(floor_pid);

        for (int i = 0; i < RUNS; i++) {
                percentiles(v.latencies_ns[2 * i + 1], v.n[2 * i + 1], &phases[i]);
                phases[i].getid_p99_ns = bench_percentile(v.getid_ns[2 * i + 1], v.n_getid[2 * i + 1], 0.99);
                phases[i].quiet_p99_ns = bench_percentile(v.latencies_ns[2 * i], v.n[2 * i], 0.99);
                phases[i].quiet_max_ns = bench_percentile(v.latencies_ns[2 * i], v.n[2 * i], 1.0);
        }

        printf("{\n  \"baseline_p99_ns\": %" PRId64 ",\n  \"baseline_bus_getid_p99_ns\": %" PRId64 ",\n"
               "  \"attacks\": {\n", phases[0].p99_ns, phases[0].getid_p99_ns);
        for (int i = 1, first = 1; i < PHASES; i++) {
                const Phase *p = &phases[i];
                double ratio = ratio_of(p->p99_ns, phases[0].p99_ns), quiet_ratio = ratio_of(p->p99_ns, p->quiet_p99_ns);
                int64_t growth_kib = p->rss_after_kib - p->rss_before_kib;

                if (!wanted(i, argc, argv))
                        continue;
                ran[BEYOND_TARGETS(i)] = true;
                ratios_ok[BEYOND_TARGETS(i)] &= ratio <= 2.0;
                quiet_ratios_ok[BEYOND_TARGETS(i)] &= quiet_ratio <= 2.0;
                growth_ok &= growth_kib <= 1024;
                printf("%s    \"%s\": { \"victim_calls\": %zu, \"victim_p50_ns\": %" PRId64 ", \"victim_p99_ns\": %" PRId64
                       ", \"victim_max_ns\": %" PRId64 ", \"p99_to_baseline_ratio\": %.2f, \"quiet_before_p99_ns\": %" PRId64
                       ", \"quiet_before_max_ns\": %" PRId64 ", \"p99_to_quiet_before_ratio\": %.2f, \"bus_getid_p99_ns\": %" PRId64,
                       first ? "" : ",\n", phase_names[i], p->calls, p->p50_ns, p->p99_ns, p->max_ns, ratio, p->quiet_p99_ns,
                       p->quiet_max_ns, quiet_ratio, p->getid_p99_ns);
                /* The same attack against the service that does nothing: its Convert's p99 against
                 * its own just before. */
                for (int f = PHASES; f < RUNS; f++)
                        if (runs[f].attack == i && wanted(i, argc, argv))
                                printf(", \"bus_floor%s_p99_ns\": %" PRId64 ", \"bus_floor%s_p99_ratio\": %.2f",
                                       f == RUN_FLOOR_MSC_ECHO ? "_full_replies" : "", phases[f].p99_ns,
                                       f == RUN_FLOOR_MSC_ECHO ? "_full_replies" : "",
                                       ratio_of(phases[f].p99_ns, phases[f].quiet_p99_ns));
                printf(", \"rss_growth_kib\": %" PRId64 ", \"rss_peak_growth_kib\": %" PRId64
                       ", \"wrong\": %u, \"daemon_alive\": %s }",
                       growth_kib, p->rss_peak_kib - p->rss_before_kib, p->wrong, p->alive ? "true" : "false");
                first = 0;
        }
        printf("\n  },\n  \"victim_calls_failed\": %u,\n  \"wrong_answers\": %u,\n  \"daemon_exits\": %u,\n", v.failed,
               wrong, exits);
        printf("  \"targets\": {\n    \"p99_le_2x_baseline\": %s,\n    \"p99_le_2x_quiet_before\": %s,\n"
               "    \"rss_growth_le_1mib\": %s,\n    \"no_wrong_answers\": %s,\n    \"no_daemon_exits\": %s\n  },\n",
               ratios_ok[0] ? "true" : "false", quiet_ratios_ok[0] ? "true" : "false", growth_ok ? "true" : "false", wrong == 0 ? "true" : "false",
               exits == 0 ? "true" : "false");
        printf("  \"beyond_targets\": { \"attacks_6_7_p99_le_2x_baseline\": %s, \"attacks_6_7_p99_le_2x_quiet_before\": %s }\n}\n",
               !ran[1] ? "null" : ratios_ok[1] ? "true" : "false", !ran[1] ? "null" : quiet_ratios_ok[1] ? "true" : "false");

        (void) xvfb_stop(&x);
        for (int i = 0; i < SLOTS; i++) {
                free(v.latencies_ns[i]);
                free(v.getid_ns[i]);
        }
        return 0;
}
