/* SPDX-License-Identifier: MIT */

/* One well-behaved client: converts in a loop through every path a real one uses and checks
 * each answer against the truth it reads from the kernel itself (the target clock read before
 * and after the source, as tests/integration does), X time against CLOCK_MONOTONIC in ms (Xvfb
 * stamps with it, tests/x11 shows). */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "garbage.h"
#include "load-push.h"
#include "load.h"
#include "timeconv.h"
#include "xtime.h"

#define MANY_MAX 64
#define MS_NS INT64_C(1000000)

static const char *const posix_domains[] = {
        "realtime", "monotonic", "monotonic_raw", "boottime", "tai", "realtime_coarse", "monotonic_coarse",
};
#define N_POSIX (sizeof(posix_domains) / sizeof(posix_domains[0]))

typedef struct Client {
        sd_bus *bus;
        struct timeconv *tc;
        LoadShared *shared;
        LoadClientStats *stats;
        int64_t deadline_ns;
        Rng rng;
        /* ConvertMany: brackets of one pair taken over time, converted together. */
        const char *many_from, *many_to;
        Bracket many[MANY_MAX];
        size_t n_many;
        LoadApp app;                    /* its application clock */
        int64_t lag_ns;                 /* the coarse lag seen at the reads of the next check */
        int64_t coarse_lag_max_ns;      /* what the daemon declares: 4 ticks (domains/posix.c) */
} Client;

void load_stats_fail(LoadClientStats *stats, const char *fmt, ...) {
        va_list ap;

        if (stats->failure[0])
                return;
        va_start(ap, fmt);
        vsnprintf(stats->failure, sizeof(stats->failure), fmt, ap);
        va_end(ap);
}

void load_stats_latency(LoadClientStats *stats, int64_t latency_ns, int64_t deadline_ns) {
        if (latency_ns > stats->max_latency_ns)
                stats->max_latency_ns = latency_ns;
        if (latency_ns > deadline_ns)
                stats->stalls++;
        if (stats->n_latencies < LOAD_LATENCIES_MAX)
                stats->latencies_ns[stats->n_latencies++] = latency_ns;
}

static clockid_t clock_of(const char *domain) {
        clockid_t id = CLOCK_MONOTONIC;

        (void) clock_id_of_domain(domain, &id);
        return id;
}

/* An answer and its bound against [lo, hi]. */
static void check(Client *c, const char *what, const char *from, const char *to, int64_t v, uint64_t unc, int64_t lo,
                  int64_t hi) {
        bool coarse = strstr(from, "_coarse") || strstr(to, "_coarse");
        char *failure = coarse ? c->stats->failure_coarse : c->stats->failure;

        c->stats->checked++;
        if (bracket_holds(v, unc, lo, hi))
                return;
        if (coarse && c->lag_ns > c->coarse_lag_max_ns) {
                /* The bound holds while the kernel keeps its coarse clock within the declared lag;
                 * here it did not (a descheduled VM), which the test counts but cannot blame. */
                c->stats->coarse_lag_beyond++;
                return;
        }
        if (coarse)
                c->stats->wrong_coarse++;
        else
                c->stats->wrong++;
        if (!failure[0])
                snprintf(failure, LOAD_FAILURE_MAX, "%s %s -> %s: %" PRIi64 " +- %" PRIu64 " misses [%" PRIi64 ", %"
                         PRIi64 "]", what, from, to, v, unc, lo, hi);
}

/* A failed call: a timeout is a stall (counted by its latency), anything else an error. */
static void failed(Client *c, const char *what, int r, const sd_bus_error *e) {
        if (r == -ETIMEDOUT)
                return;
        c->stats->errors++;
        load_stats_fail(c->stats, "%s: %s (%s)", what, e && e->name ? e->name : "", strerror(-r));
}

static int64_t call_begin(void) {
        return clock_now_ns(CLOCK_MONOTONIC);
}

static void call_end(Client *c, int64_t t0_ns, bool bus) {
        load_stats_latency(c->stats, clock_now_ns(CLOCK_MONOTONIC) - t0_ns, c->deadline_ns);
        if (bus)
                c->stats->bus_calls++;
}

static void pick_pair(Client *c, const char **from, const char **to) {
        size_t i = rng_below(&c->rng, N_POSIX), j = rng_below(&c->rng, N_POSIX - 1);

        *from = posix_domains[i];
        *to = posix_domains[j >= i ? j + 1 : j];
}

/* libtimeconv: the shared table when it can answer, else D-Bus. */
static void op_library(Client *c) {
        const char *from, *to;
        int64_t t0, v, unc;
        Bracket b;
        int r;

        pick_pair(c, &from, &to);
        bracket_read(clock_of(from), clock_of(to), &b);
        t0 = call_begin();
        r = timeconv_convert(c->tc, from, to, b.from_ns, &v, &unc);
        call_end(c, t0, false);
        if (r < 0) {
                failed(c, "timeconv_convert", r, NULL);
                return;
        }
        if (timeconv_last_path(c->tc) == TIMECONV_PATH_TABLE)
                c->stats->table_calls++;
        else
                c->stats->bus_calls++;
        c->lag_ns = b.coarse_lag_ns;
        check(c, "timeconv_convert", from, to, v, (uint64_t) unc, b.to_lo_ns, b.to_hi_ns);
        c->lag_ns = 0;
}

static void op_convert(Client *c) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *from, *to;
        int64_t t0, v;
        uint64_t unc;
        Bracket b;
        int r;

        pick_pair(c, &from, &to);
        bracket_read(clock_of(from), clock_of(to), &b);
        t0 = call_begin();
        r = clock_convert(c->bus, from, to, b.from_ns, &e, &v, &unc);
        call_end(c, t0, true);
        if (r < 0)
                failed(c, "Convert", r, &e);
        else {
                c->lag_ns = b.coarse_lag_ns;
                check(c, "Convert", from, to, v, unc, b.to_lo_ns, b.to_hi_ns);
                c->lag_ns = 0;
        }
        sd_bus_error_free(&e);
}

/* Values from the last seconds, converted together: each with the model of its time. */
static void op_convert_many(Client *c) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t values[MANY_MAX], out[MANY_MAX], t0;
        uint64_t unc[MANY_MAX];
        size_t n = 0;
        int r;

        bracket_read(clock_of(c->many_from), clock_of(c->many_to), &c->many[c->n_many % MANY_MAX]);
        c->n_many++;
        for (size_t i = 0; i < c->n_many && i < MANY_MAX; i++)
                values[i] = c->many[i].from_ns;
        t0 = call_begin();
        r = clock_convert_many(c->bus, c->many_from, c->many_to, values, c->n_many < MANY_MAX ? c->n_many : MANY_MAX,
                               &e, out, unc, &n);
        call_end(c, t0, true);
        if (r < 0)
                failed(c, "ConvertMany", r, &e);
        else if (n != (c->n_many < MANY_MAX ? c->n_many : MANY_MAX)) {
                c->stats->errors++;
                load_stats_fail(c->stats, "ConvertMany: %zu answers", n);
        } else
                for (size_t i = 0; i < n; i++) {
                        c->lag_ns = c->many[i].coarse_lag_ns;
                        check(c, "ConvertMany", c->many_from, c->many_to, out[i], unc[i], c->many[i].to_lo_ns,
                              c->many[i].to_hi_ns);
                        c->lag_ns = 0;
                }
        sd_bus_error_free(&e);
}

static void op_now(Client *c) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *domain = posix_domains[rng_below(&c->rng, N_POSIX)];
        int64_t lo, hi, v, t0;
        uint64_t unc;
        int r;

        lo = clock_now_ns(clock_of(domain));
        t0 = call_begin();
        r = clock_now(c->bus, domain, &e, &v, &unc);
        call_end(c, t0, true);
        hi = clock_now_ns(clock_of(domain));
        if (strstr(domain, "_coarse"))
                c->lag_ns = clock_now_ns(clock_of(domain) == CLOCK_MONOTONIC_COARSE ? CLOCK_MONOTONIC
                                                                                          : CLOCK_REALTIME) - lo;
        if (r < 0)
                failed(c, "Now", r, &e);
        else
                check(c, "Now", domain, domain, v, unc, lo, hi);
        c->lag_ns = 0;
        sd_bus_error_free(&e);
}

/* X time, three ways: monotonic_raw -> x11_us (the truth: CLOCK_MONOTONIC around the raw read),
 * x11 -> monotonic (an ms of CLOCK_MONOTONIC is that ms of X time) and, through the library,
 * monotonic -> x11_us. Unavailable is the right answer while the server restarts, and then
 * only. */
static void op_x11(Client *c, unsigned way) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t t0, v, dec, lo, hi, signed_unc, down_ns, back_ns;
        uint64_t unc;
        Bracket b;
        int r;

        bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &b);
        t0 = call_begin();
        if (way == 0)
                r = clock_convert(c->bus, "monotonic_raw", "x11_us", b.from_ns, &e, &v, &unc);
        else if (way == 1)
                r = clock_convert(c->bus, "x11", "monotonic", (b.to_lo_ns / MS_NS) & 0xffffffff, &e, &v, &unc);
        else {
                r = timeconv_convert(c->tc, "monotonic", "x11_us", b.to_lo_ns, &v, &signed_unc);
                unc = (uint64_t) signed_unc;
        }
        call_end(c, t0, way < 2 || timeconv_last_path(c->tc) != TIMECONV_PATH_TABLE);
        down_ns = __atomic_load_n(&c->shared->x11_down_ns, __ATOMIC_ACQUIRE);
        back_ns = __atomic_load_n(&c->shared->x11_back_ns, __ATOMIC_ACQUIRE);
        /* Unavailable is right for a call that overlapped the server's absence, only. */
        if ((r == -ENODEV || sd_bus_error_has_name(&e, BUS_ERROR_UNAVAILABLE)) && down_ns != 0 &&
            clock_now_ns(CLOCK_MONOTONIC) > down_ns && (back_ns == 0 || t0 < back_ns)) {
                c->stats->x11_unavailable++;
                sd_bus_error_free(&e);
                return;
        }
        if (r < 0) {
                failed(c, way == 2 ? "timeconv_convert x11_us" : "Convert x11", r, &e);
                sd_bus_error_free(&e);
                return;
        }
        if (way == 2 && timeconv_last_path(c->tc) == TIMECONV_PATH_TABLE)
                c->stats->table_calls++;
        if (way == 1) {
                /* The ms b.to_lo_ns fell in: X showed that value for all of it. */
                lo = b.to_lo_ns / MS_NS * MS_NS;
                hi = lo + MS_NS - 1;
                check(c, "Convert", "x11", "monotonic", v, unc, lo, hi);
        } else if (xtime_decode_us((uint64_t) v, b.to_lo_ns / 1000, &dec) < 0) {
                c->stats->errors++;
                load_stats_fail(c->stats, "x11_us: %" PRIi64 " does not decode", v);
                return;
        } else if (way == 0)
                check(c, "Convert", "monotonic_raw", "x11_us", dec * 1000, unc + 1000, b.to_lo_ns, b.to_hi_ns);
        else
                check(c, "timeconv_convert", "monotonic", "x11_us", dec * 1000, unc + 1000, b.to_lo_ns, b.to_lo_ns);
        if (back_ns != 0 && t0 > back_ns)
                c->stats->x11_after_restart++;
}

static int get_id(Client *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t t0 = call_begin();
        const char *id;
        int r;

        r = sd_bus_call_method(c->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetId", &e, &reply, "");
        call_end(c, t0, true);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &id);
        if (r < 0)
                failed(c, "GetId", r, &e);
        sd_bus_error_free(&e);
        return r;
}

static int client_connect(const char *address, int64_t deadline_ns, sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        /* The error map is ours already: harness_new() registered it before the fork. */
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, true);
        if (r >= 0)
                r = sd_bus_start(bus);
        /* Every call without a timeout of its own gets the deadline: a stall ends as -ETIMEDOUT. */
        if (r >= 0)
                r = sd_bus_set_method_call_timeout(bus, (uint64_t) (deadline_ns / 1000));
        if (r < 0)
                return r;
        *ret = bus;
        bus = NULL;
        return 0;
}

void load_client_run(const char *bus_address, LoadMode mode, unsigned index, int64_t deadline_ns,
                     LoadShared *shared, LoadClientStats *stats) {
        Client c = { .shared = shared, .stats = stats, .deadline_ns = deadline_ns,
                     .rng = { .state = UINT64_C(0x6c6f6164) * (index + 1) } };
        bool x11 = shared->with_x11 && index % 2 == 0;  /* half the clients ask for X time too */
        struct timespec res;
        int r;

        /* Both coarse clocks tick at the kernel's HZ. */
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0)
                c.coarse_lag_max_ns = 4 * ((int64_t) res.tv_sec * 1000000000 + res.tv_nsec);

        r = client_connect(bus_address, deadline_ns, &c.bus);
        if (r >= 0 && mode == LOAD_MODE_MIX)
                r = timeconv_open_address(bus_address, &c.tc);
        if (r < 0) {
                stats->errors++;
                load_stats_fail(stats, "connecting: %s", strerror(-r));
                goto out;
        }
        pick_pair(&c, &c.many_from, &c.many_to);
        load_app_name(index, c.app.name);
        c.app.offset_ns = load_app_offset_ns(index);
        c.app.supported = mode == LOAD_MODE_MIX;
        /* The first snapshot makes the clock: before it, there is nothing to convert. */
        if (c.app.supported)
                (void) load_app_push(&c.app, c.bus, stats, deadline_ns);

        for (unsigned i = 0; !__atomic_load_n(&shared->stop, __ATOMIC_ACQUIRE); i++) {
                if (mode == LOAD_MODE_FLOOR) {
                        if (get_id(&c) < 0 && stats->errors > 100)
                                break;
                        continue;
                }
                if (load_app_due(&c.app))
                        (void) load_app_push(&c.app, c.bus, stats, deadline_ns);
                switch (i % 10) {
                case 0:
                case 5:
                        op_library(&c);
                        break;
                case 1:
                case 6:
                        op_convert(&c);
                        break;
                case 2:
                        op_convert_many(&c);
                        break;
                case 3:
                        op_now(&c);
                        break;
                case 4:
                case 9:
                        if (c.app.supported)
                                load_app_convert(&c.app, c.bus, c.tc, i / 5, (index + 1) % shared->n_clients, stats,
                                                 deadline_ns);
                        else
                                op_library(&c);
                        break;
                default:
                        if (x11)
                                op_x11(&c, (i / 10) % 3);
                        else
                                op_library(&c);
                }
        }
out:
        timeconv_free(c.tc);
        sd_bus_flush_close_unref(c.bus);
}
