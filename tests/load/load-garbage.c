/* SPDX-License-Identifier: MIT */

/* The hostile client: malformed and oversized calls in a loop, each of which must be answered,
 * in time, with the right error (or, for a ConvertMany at the limit, right answers), while the
 * other clients go on. tests/integration/test-daemon-robust.c covers the variety alone; here it is the
 * pressure on a daemon that is busy. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "garbage.h"
#include "load-push.h"
#include "load.h"

#define VALID_NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_.:-"
#define HUGE_EVERY 40           /* one oversized ConvertMany in this many calls */
#define AT_LIMIT_CALLS 2        /* ConvertMany of exactly the maximum, twice per run */

static const struct {
        const char *member, *signature;
} wrong_signatures[] = {
        { "Convert", "" }, { "Convert", "s" }, { "Convert", "ssxx" }, { "Convert", "sst" }, { "Convert", "xss" },
        { "ConvertMany", "ssai" }, { "ConvertMany", "ssx" }, { "ConvertMany", "ssaxax" }, { "ConvertMany", "ssav" },
        { "Now", "" }, { "Now", "x" }, { "Now", "as" }, { "ListDomains", "s" }, { "GetSharedTable", "h" },
};

static const char *const members[] = { "Convert", "ConvertMany", "Now", "ListDomains", "GetSharedTable" };
static const char *const member_signatures[] = { "ssx", "ssax", "s", "", "" };

typedef struct Garbage {
        sd_bus *bus;
        LoadClientStats *stats;
        const LoadShared *shared;
        int64_t deadline_ns;
        Rng rng;
        int fd;                 /* what an 'h' carries */
        unsigned at_limit_done;
} Garbage;

/* Sends m and judges the answer: want (NULL: any error will do) must be the error's name. */
static void judge(Garbage *g, sd_bus_message *m, const char *what, const char *want) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
        int r;

        r = sd_bus_call(g->bus, m, 0, &e, &reply);
        load_stats_latency(g->stats, clock_now_ns(CLOCK_MONOTONIC) - t0, g->deadline_ns);
        g->stats->bus_calls++;
        if (r >= 0) {
                g->stats->errors++;
                load_stats_fail(g->stats, "%s: accepted", what);
        } else if (r == -ETIMEDOUT)
                ;       /* a stall, counted by its latency */
        else if (!sd_bus_error_is_set(&e) || sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.NoReply") ||
                 sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.ServiceUnknown") ||
                 sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.NameHasNoOwner") ||
                 (want && !sd_bus_error_has_name(&e, want))) {
                g->stats->errors++;
                load_stats_fail(g->stats, "%s: %s (%s), want %s", what, e.name ?: "no error name", strerror(-r),
                                want ?: "an error");
        } else
                g->stats->garbage_refused++;
        sd_bus_error_free(&e);
}

static int new_call(Garbage *g, const char *member, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(g->bus, ret, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                              member);
}

/* ConvertMany of n values; beyond the limit it must be refused whole, at it answered whole. */
static void convert_many_sized(Garbage *g, size_t n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t *values = malloc(n * sizeof(int64_t)), t0;
        const int64_t *out;
        const uint64_t *unc;
        size_t out_size = 0, unc_size = 0;
        Bracket b;
        int r;

        if (!values) {
                g->stats->errors++;
                return;
        }
        bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
        for (size_t i = 0; i < n; i++)
                values[i] = b.from_ns;
        r = new_call(g, "ConvertMany", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", "monotonic", "boottime");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
        free(values);
        if (r < 0) {
                g->stats->errors++;
                return;
        }
        if (n > BUS_API_CONVERT_MANY_MAX) {
                judge(g, m, "ConvertMany beyond the limit", BUS_ERROR_INVALID_ARGUMENT);
                return;
        }
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        /* Waited for as long as the test may run, not sd-bus's 25 s: on a machine loaded by other
         * jobs the answer may take that long, and a call given up on checks nothing. */
        r = sd_bus_call(g->bus, m, UINT64_C(100) * 1000000, &e, &reply);
        /* 4 KiB in and 8 KiB out through the bus daemon, worked a slice at a time between
         * the other clients' calls: on a loaded machine it may take longer than a call should,
         * and its own deadline is five times theirs. */
        load_stats_latency(g->stats, clock_now_ns(CLOCK_MONOTONIC) - t0, 5 * g->deadline_ns);
        g->stats->bus_calls++;
        if (r >= 0)
                r = sd_bus_message_read_array(reply, 'x', (const void **) &out, &out_size);
        if (r >= 0)
                r = sd_bus_message_read_array(reply, 't', (const void **) &unc, &unc_size);
        if (r >= 0 && (out_size != n * sizeof(int64_t) || unc_size != out_size))
                r = -EBADMSG;
        if (r >= 0 && !(bracket_holds(out[0], unc[0], b.to_lo_ns, b.to_hi_ns) &&
                        bracket_holds(out[n - 1], unc[n - 1], b.to_lo_ns, b.to_hi_ns))) {
                g->stats->wrong++;
                load_stats_fail(g->stats, "ConvertMany at the limit: wrong answers");
        } else if (r >= 0)
                g->stats->oversized_ok++;
        else if (r != -ETIMEDOUT) {
                g->stats->errors++;
                load_stats_fail(g->stats, "ConvertMany at the limit: %s (%s)", e.name ?: "", strerror(-r));
        }
        g->stats->checked += 2;
        sd_bus_error_free(&e);
}

static void one_call(Garbage *g, unsigned i) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *name = NULL;
        char sig[GARBAGE_SIGNATURE_MAX + 2];
        size_t k;
        int r;

        if (i % HUGE_EVERY == HUGE_EVERY - 1) {
                /* Twice a run, the first at the first turn (a loaded machine may leave time for
                 * few turns): exactly the limit, 4 KiB in and 8 KiB out. */
                if ((i / HUGE_EVERY == 0 || i / HUGE_EVERY == 5) && g->at_limit_done < AT_LIMIT_CALLS) {
                        g->at_limit_done++;
                        convert_many_sized(g, BUS_API_CONVERT_MANY_MAX);
                } else
                        convert_many_sized(g, BUS_API_CONVERT_MANY_MAX + 1 + rng_below(&g->rng, 1000));
                return;
        }
        switch (i % 7) {
        case 0:
                k = rng_below(&g->rng, sizeof(wrong_signatures) / sizeof(wrong_signatures[0]));
                r = new_call(g, wrong_signatures[k].member, &m);
                if (r >= 0)
                        r = garbage_append(m, wrong_signatures[k].signature, &g->rng, g->fd);
                if (r >= 0)
                        judge(g, m, "wrong signature", "org.freedesktop.DBus.Error.InvalidArgs");
                break;
        case 1:
                /* A valid name no domain has. */
                name = garbage_string(&g->rng, 1 + rng_below(&g->rng, 40), VALID_NAME_CHARS);
                r = name ? new_call(g, "Convert", &m) : -ENOMEM;
                if (r >= 0)
                        r = sd_bus_message_append(m, "ssx", "monotonic", name, INT64_C(0));
                /* A name of ours by chance is no garbage: skip it. */
                if (r >= 0 && !strchr(name, '_') && strlen(name) > 4)
                        judge(g, m, "unknown domain", BUS_ERROR_UNKNOWN_DOMAIN);
                break;
        case 2:
                /* Long strings: past the name limit, now and then a megabyte. */
                name = garbage_string(&g->rng, rng_below(&g->rng, 50) == 0 ? 1 << 20 : 64 + rng_below(&g->rng, 8000),
                                      VALID_NAME_CHARS);
                r = name ? new_call(g, "Now", &m) : -ENOMEM;
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", name);
                if (r >= 0)
                        judge(g, m, "long name", BUS_ERROR_INVALID_ARGUMENT);
                break;
        case 6:
                load_push_garbage(g->bus, i, g->shared, g->stats, g->deadline_ns);
                return;
        case 3:
                r = new_call(g, "Convert", &m);
                if (r >= 0)
                        r = sd_bus_message_append(m, "ssx", "monotonic", "realtime", INT64_MAX - 5);
                if (r >= 0)
                        judge(g, m, "out of range", BUS_ERROR_OUT_OF_RANGE);
                break;
        default:
                /* Random payloads, fds among them; never a member's own signature. */
                k = rng_below(&g->rng, sizeof(members) / sizeof(members[0]));
                garbage_signature(&g->rng, 6, rng_below(&g->rng, 4) == 0, sig);
                if (strcmp(sig, member_signatures[k]) == 0) {
                        memmove(sig + 1, sig, strlen(sig) + 1);
                        sig[0] = 'y';
                }
                r = new_call(g, members[k], &m);
                if (r >= 0)
                        r = garbage_append(m, sig, &g->rng, g->fd);
                if (r >= 0)
                        judge(g, m, "random payload", NULL);
        }
        if (r < 0) {
                g->stats->errors++;
                load_stats_fail(g->stats, "building a call: %s", strerror(-r));
        }
}

void load_garbage_run(const char *bus_address, unsigned index, int64_t deadline_ns, LoadShared *shared,
                      LoadClientStats *stats) {
        Garbage g = { .stats = stats, .shared = shared, .deadline_ns = deadline_ns,
                      .rng = { .state = UINT64_C(0x67617262) + index } };
        int r;

        g.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        /* The error map is ours already: harness_new() registered it before the fork. */
        r = sd_bus_new(&g.bus);
        if (r >= 0)
                r = sd_bus_set_address(g.bus, bus_address);
        if (r >= 0)
                r = sd_bus_set_bus_client(g.bus, true);
        if (r >= 0)
                r = sd_bus_negotiate_fds(g.bus, true);
        if (r >= 0)
                r = sd_bus_start(g.bus);
        if (r >= 0)
                r = sd_bus_set_method_call_timeout(g.bus, (uint64_t) (deadline_ns / 1000));
        if (r < 0 || g.fd < 0) {
                stats->errors++;
                load_stats_fail(stats, "connecting: %s", strerror(r < 0 ? -r : errno));
        } else {
                load_push_quotas(g.bus, stats, deadline_ns);
                for (unsigned i = 0; !__atomic_load_n(&shared->stop, __ATOMIC_ACQUIRE); i++)
                        one_call(&g, i);
        }
        sd_bus_flush_close_unref(g.bus);
        if (g.fd >= 0)
                close(g.fd);
}
