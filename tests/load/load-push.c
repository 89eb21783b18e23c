/* SPDX-License-Identifier: MIT */

/* Application clocks under load (PushSnapshot). Client i owns "load-app-<i>", a clock it can
 * read exactly: CLOCK_BOOTTIME plus an offset of its own. It pushes a snapshot every
 * PUSH_INTERVAL_NS (monotonic read before and after its clock: a bracket), and everyone
 * converts to and from it, the owner and another client, over D-Bus and through the shared
 * table, each answer checked against that clock. The hostile client tries what the contract
 * refuses: malformed snapshots, another client's name, more domains and more snapshots than the
 * quotas allow. */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "load-push.h"

#define PUSH_INTERVAL_NS (INT64_C(20) * 1000000)      /* 50 a second: half the quota */
#define QUOTA_BURST 60

void load_app_name(unsigned index, char ret[LOAD_APP_NAME_MAX]) {
        snprintf(ret, LOAD_APP_NAME_MAX, "load-app-%u", index);
}

int64_t load_app_offset_ns(unsigned index) {
        return (int64_t) (index + 1) * INT64_C(1000000007) + INT64_C(123456789000);
}

/* PushSnapshot with n readings; error (may be NULL) gets the D-Bus error. */
int load_push(sd_bus *bus, const char *const *names, const int64_t *values, size_t n, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                           "PushSnapshot");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sx)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "(sx)", names[i], values[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, error, &reply);
        return r;
}

/* A bracketed snapshot of the app clock `index`: monotonic, the clock, monotonic. */
int load_push_bracketed(sd_bus *bus, const char *name, int64_t offset_ns, sd_bus_error *error) {
        const char *names[] = { "monotonic", name, "monotonic" };
        int64_t values[3];

        values[0] = clock_now_ns(CLOCK_MONOTONIC);
        values[1] = clock_now_ns(CLOCK_BOOTTIME) + offset_ns;
        values[2] = clock_now_ns(CLOCK_MONOTONIC);
        return load_push(bus, names, values, 3, error);
}

bool load_app_due(const LoadApp *a) {
        return a->supported && clock_now_ns(CLOCK_MONOTONIC) - a->last_push_ns >= PUSH_INTERVAL_NS;
}

int load_app_push(LoadApp *a, sd_bus *bus, LoadClientStats *stats, int64_t deadline_ns) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
        int r;

        r = load_push_bracketed(bus, a->name, a->offset_ns, &e);
        load_stats_latency(stats, clock_now_ns(CLOCK_MONOTONIC) - t0, deadline_ns);
        stats->bus_calls++;
        a->last_push_ns = t0;
        if (r >= 0) {
                stats->pushes++;
                __atomic_store_n(&stats->app_ready, 1, __ATOMIC_RELEASE);
        } else if (sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.UnknownMethod")) {
                a->supported = false;
                stats->push_unsupported = 1;
        }
        else if (r != -ETIMEDOUT) {
                stats->errors++;
                load_stats_fail(stats, "PushSnapshot %s: %s (%s)", a->name, e.name ?: "", strerror(-r));
        }
        sd_bus_error_free(&e);
        return r;
}

/* An application clock's answer against the truth; Unavailable or UnknownDomain are right for
 * another client's clock that is not there (yet, or any more). */
static void judge(LoadClientStats *stats, const char *what, bool own, int r, const sd_bus_error *e, int64_t v,
                  uint64_t unc, int64_t lo, int64_t hi) {
        if (r < 0 && !own && (r == -ENOENT || r == -ENODEV || sd_bus_error_has_name(e, BUS_ERROR_UNKNOWN_DOMAIN) ||
                              sd_bus_error_has_name(e, BUS_ERROR_UNAVAILABLE))) {
                stats->app_absent++;
                return;
        }
        if (r == -ETIMEDOUT)
                return;
        if (r < 0) {
                stats->errors++;
                load_stats_fail(stats, "%s: %s (%s)", what, e && e->name ? e->name : "", strerror(-r));
                return;
        }
        stats->checked++;
        stats->app_checked++;
        if (!bracket_holds(v, unc, lo, hi)) {
                stats->wrong++;
                load_stats_fail(stats, "%s: %" PRIi64 " +- %" PRIu64 " misses [%" PRIi64 ", %" PRIi64 "]", what, v, unc,
                                lo, hi);
        }
}

void load_app_convert(LoadApp *a, sd_bus *bus, struct timeconv *tc, unsigned way, unsigned other,
                      LoadClientStats *stats, int64_t deadline_ns) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char other_name[LOAD_APP_NAME_MAX], what[LOAD_APP_NAME_MAX + 48];
        int64_t t0, v = 0, signed_unc = 0;
        uint64_t unc = 0;
        Bracket b;
        int r;

        t0 = clock_now_ns(CLOCK_MONOTONIC);
        switch (way % 3) {
        case 0:
                /* Ours -> monotonic, over D-Bus. */
                bracket_read(CLOCK_BOOTTIME, CLOCK_MONOTONIC, &b);
                r = clock_convert(bus, a->name, "monotonic", b.from_ns + a->offset_ns, &e, &v, &unc);
                snprintf(what, sizeof(what), "Convert %s -> monotonic", a->name);
                stats->bus_calls++;
                judge(stats, what, true, r, &e, v, unc, b.to_lo_ns, b.to_hi_ns);
                break;
        case 1:
                /* Monotonic -> ours, through the library (the shared table when it can). */
                bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
                r = timeconv_convert(tc, "monotonic", a->name, b.from_ns, &v, &signed_unc);
                snprintf(what, sizeof(what), "timeconv_convert monotonic -> %s", a->name);
                if (r >= 0 && timeconv_last_path(tc) == TIMECONV_PATH_TABLE)
                        stats->table_calls++;
                else
                        stats->bus_calls++;
                judge(stats, what, true, r, NULL, v, (uint64_t) signed_unc, b.to_lo_ns + a->offset_ns,
                      b.to_hi_ns + a->offset_ns);
                break;
        default:
                /* Realtime -> another client's, over D-Bus: anyone may convert to it. */
                load_app_name(other, other_name);
                bracket_read(CLOCK_REALTIME, CLOCK_BOOTTIME, &b);
                r = clock_convert(bus, "realtime", other_name, b.from_ns, &e, &v, &unc);
                snprintf(what, sizeof(what), "Convert realtime -> %s", other_name);
                stats->bus_calls++;
                judge(stats, what, false, r, &e, v, unc, b.to_lo_ns + load_app_offset_ns(other),
                      b.to_hi_ns + load_app_offset_ns(other));
        }
        load_stats_latency(stats, clock_now_ns(CLOCK_MONOTONIC) - t0, deadline_ns);
        sd_bus_error_free(&e);
}

/* What the hostile client tries. Each must be refused with its error; want NULL: any. Its own
 * pushes also spend its rate (100 a second, bursts of 20), and a loaded machine can bunch them
 * up: QuotaExceeded is then a refusal as honest as the named one. */
static void refused(LoadClientStats *stats, const char *what, int r, const sd_bus_error *e, const char *want) {
        if (r >= 0) {
                stats->errors++;
                load_stats_fail(stats, "PushSnapshot %s: accepted", what);
        } else if (r == -ETIMEDOUT)
                ;
        else if (!sd_bus_error_has_name(e, want) && !sd_bus_error_has_name(e, BUS_ERROR_QUOTA_EXCEEDED)) {
                stats->errors++;
                load_stats_fail(stats, "PushSnapshot %s: %s, want %s", what, e->name ?: strerror(-r), want);
        } else
                stats->garbage_refused++;
}

void load_push_garbage(sd_bus *bus, unsigned i, const LoadShared *shared, LoadClientStats *stats,
                       int64_t deadline_ns) {
        const char *names[17];
        int64_t values[17], now = clock_now_ns(CLOCK_MONOTONIC), t0 = now;
        char victim[LOAD_APP_NAME_MAX];
        sd_bus_error e = SD_BUS_ERROR_NULL;
        unsigned k = (i / 7) % 6, owner = i % (shared->n_clients ? shared->n_clients : 1);
        const char *what, *want = BUS_ERROR_INVALID_ARGUMENT;
        size_t n = 0;
        int r;

        for (size_t j = 0; j < 17; j++) {
                names[j] = j % 2 ? "monotonic" : "garbage-app-1";
                values[j] = now;
        }
        switch (k) {
        case 0:
                what = "with one entry";
                n = 1;
                break;
        case 1:
                what = "with 17 entries";
                n = 17;
                break;
        case 2:
                what = "with a bad name";
                names[0] = "Garbage App";
                n = 2;
                break;
        case 3:
                what = "with no known domain";
                names[1] = "garbage-app-2";     /* its own too */
                n = 2;
                break;
        case 4:
                what = "with known readings 2 s apart";
                names[2] = "monotonic";
                values[2] = now + INT64_C(2000000000);
                n = 3;
                break;
        default:
                /* Another client's clock, once it has one: not ours to move. */
                if (!__atomic_load_n(&shared->clients[owner].app_ready, __ATOMIC_ACQUIRE))
                        return;
                load_app_name(owner, victim);
                what = "into another client's domain";
                want = BUS_ERROR_NAME_TAKEN;
                names[0] = victim;
                n = 2;
        }
        r = load_push(bus, names, values, n, &e);
        load_stats_latency(stats, clock_now_ns(CLOCK_MONOTONIC) - t0, deadline_ns);
        stats->bus_calls++;
        if (stats->push_unsupported)
                ;
        else if (sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.UnknownMethod"))
                stats->push_unsupported = 1;
        else
                refused(stats, what, r, &e, want);
        sd_bus_error_free(&e);
}

typedef struct Burst {
        unsigned replies, refused, failed;
        char failure[LOAD_FAILURE_MAX];
} Burst;

static int on_burst_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        Burst *b = userdata;

        b->replies++;
        if (e && sd_bus_error_has_name(e, BUS_ERROR_QUOTA_EXCEEDED))
                b->refused++;
        else if (e && !b->failed++)
                snprintf(b->failure, sizeof(b->failure), "%s", e->name);
        return 0;
}

/* QUOTA_BURST snapshots sent at once, beyond the 100 a second (bursts of 20) one client may
 * push: some must be refused with QuotaExceeded, the rest taken. */
static void push_burst(sd_bus *bus, const char *name, LoadClientStats *stats, int64_t deadline_ns) {
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), until_ns = t0 + deadline_ns;
        Burst b = {};
        unsigned sent = 0;
        int r = 0;

        for (; r >= 0 && sent < QUOTA_BURST; sent++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                int64_t now = clock_now_ns(CLOCK_MONOTONIC);

                r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                                   "PushSnapshot");
                if (r >= 0)
                        r = sd_bus_message_append(m, "a(sx)", 2, "monotonic", now, name,
                                                  clock_now_ns(CLOCK_BOOTTIME));
                if (r >= 0)
                        r = sd_bus_call_async(bus, NULL, m, on_burst_reply, &b, 0);
        }
        while (r >= 0 && b.replies < sent && clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, (uint64_t) (until_ns - clock_now_ns(CLOCK_MONOTONIC)) / 1000);
        }
        load_stats_latency(stats, clock_now_ns(CLOCK_MONOTONIC) - t0, deadline_ns);
        stats->bus_calls += b.replies;
        if (r < 0 || b.replies < sent || b.failed > 0 || b.refused == 0) {
                stats->errors++;
                load_stats_fail(stats, "PushSnapshot, %u at once: %u answers, %u refused by the quota, %u failed "
                                "otherwise (%s)", sent, b.replies, b.refused, b.failed,
                                r < 0 ? strerror(-r) : b.failure);
        } else
                stats->garbage_refused++;
}

/* Once: its 8 domains (the quota) and a 9th refused; then a burst beyond the rate. */
void load_push_quotas(sd_bus *bus, LoadClientStats *stats, int64_t deadline_ns) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char name[LOAD_APP_NAME_MAX];
        int r;

        for (unsigned d = 0; d <= 8; d++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);

                snprintf(name, sizeof(name), "garbage-app-%u", d);
                r = load_push_bracketed(bus, name, 0, &e);
                load_stats_latency(stats, clock_now_ns(CLOCK_MONOTONIC) - t0, deadline_ns);
                stats->bus_calls++;
                if (sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.UnknownMethod")) {
                        stats->push_unsupported = 1;
                        sd_bus_error_free(&e);
                        return;
                }
                if (d < 8 && r < 0 && r != -ETIMEDOUT) {
                        stats->errors++;
                        load_stats_fail(stats, "PushSnapshot %s: %s, want it made", name, e.name ?: strerror(-r));
                } else if (d == 8)
                        refused(stats, "a 9th domain", r, &e, BUS_ERROR_QUOTA_EXCEEDED);
                sd_bus_error_free(&e);
        }
        push_burst(bus, "garbage-app-0", stats, deadline_ns);
}
