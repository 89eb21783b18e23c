/* SPDX-License-Identifier: MIT */

/* Application clocks (daemon/app-clocks.h) called directly, with a private dbus-daemon for the
 * clients' unique names (tests/integration/harness.h): a malformed snapshot is refused with its
 * reason and changes nothing; a domain belongs to the client that made it, another client's
 * push to it is refused, and every reading of its owner becomes a sample that holds the truth;
 * a NameOwnerChanged that is not the bus driver's drops nothing; the quotas (readings per
 * snapshot, domains per client, domains in all, snapshots a second); a client leaving the bus
 * drops its domains, frees their names and lets their nodes be reused.
 *
 * The daemon's side is a bus connection on an sd-event loop driven by hand (sd_event_run with a
 * timeout) until what the test waits for has been dispatched; nothing sleeps. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app-clocks.h"
#include "cleanup.h"
#include "core.h"
#include "fake.h"
#include "harness.h"
#include "tap.h"
#include "time-util.h"

#define R0_NS INT64_C(1000000000000)            /* the hub's time of the first snapshot */
#define MIC_OFFSET_NS INT64_C(7000000000)
#define MIC_RATE_PPM 50.0
#define RUN_TRIES 60                            /* loop iterations of up to 1 s each */

static const Log test_log = { .max_level = LOG_ERR };

typedef struct Client {
        sd_bus *bus;
        const char *name;       /* its unique name */
} Client;

static int client_connect(const Harness *h, Client *ret) {
        int r;

        r = harness_connect(h, &ret->bus);
        if (r < 0)
                return r;
        return sd_bus_get_unique_name(ret->bus, &ret->name);
}

static void client_close(Client *cl) {
        cl->bus = sd_bus_flush_close_unref(cl->bus);
        cl->name = NULL;
}

/* The truth of the application clock "mic" at the hub's time r. */
static int64_t mic_at(int64_t r_ns) {
        return MIC_OFFSET_NS + r_ns + (int64_t) llround((double) r_ns * MIC_RATE_PPM * 1e-6);
}

/* A push whose result, failing entry and reason are checked; reason_part NULL: any reason. */
static void check_push(AppClocks *a, const char *sender, const BusClockReading *clocks, size_t n, int want,
                       size_t want_index, const char *reason_part, const char *what) {
        BusPushFailure f = { SIZE_MAX, NULL };
        int r = app_clocks_push(a, sender, clocks, n, &f);
        bool good = r == want;

        if (want < 0 && reason_part)
                good = good && f.reason && strstr(f.reason, reason_part) && f.index == want_index;
        ok(good, "%s", what);
        if (!good)
                diag("got %d (%s), entry %zd, reason '%s'; want %d, entry %zd, '%s'", r, strerror(-r),
                     (ssize_t) f.index, f.reason ?: "(none)", want, (ssize_t) want_index, reason_part ?: "(any)");
}

/* Runs the loop until cond(userdata) holds; false when it never did. */
static bool run_until(sd_event *e, bool (*cond)(const void *userdata), const void *userdata) {
        for (int i = 0; i < RUN_TRIES && !cond(userdata); i++)
                if (sd_event_run(e, USEC_PER_SEC) < 0)
                        break;
        return cond(userdata);
}

static void test_arguments(Core *c, AppClocks *apps, sd_bus *bus, const Client *cl) {
        const BusClockReading snapshot[] = { { CORE_HUB, R0_NS }, { "early", 1 } };
        _cleanup_(app_clocks_freep) AppClocks *unattached = NULL;
        BusPushFailure f = { SIZE_MAX, NULL };
        AppClocks *sentinel = (AppClocks *) &sentinel, *a = sentinel;

        is_int(app_clocks_new(NULL, &a), -EINVAL, "app_clocks_new without a core");
        ok(a == sentinel, "  ret untouched");
        ok(app_clocks_free(NULL) == NULL, "app_clocks_free(NULL)");
        is_int(app_clocks_count(NULL), 0, "no application clocks in NULL");
        ok(app_clocks_owner(NULL, 1) == NULL && app_clocks_owner(apps, CORE_DOMAINS_MAX) == NULL &&
           app_clocks_owner(apps, 0) == NULL, "no owner of the hub or of an index out of range");

        is_int(app_clocks_new(c, &unattached), 0, "app_clocks_new");
        is_int(app_clocks_push(unattached, cl->name, snapshot, 2, &f), -EOPNOTSUPP, "a push before attach");
        ok(f.reason != NULL, "  says why (%s)", f.reason ?: "nothing");
        is_int(app_clocks_attach(unattached, NULL, NULL), -EINVAL, "attach without a bus");
        is_int(app_clocks_attach(NULL, bus, NULL), -EINVAL, "attach without application clocks");
        is_int(app_clocks_push(unattached, cl->name, snapshot, 2, NULL), -EINVAL, "a push with nowhere to say why");
        ok(core_find(c, "early", &(size_t) { 0 }) == -ENOENT, "  none made a domain");
}

/* Each refused whole, with its reason and entry, before anything changes. */
static void test_malformed(Core *c, AppClocks *a, const Client *cl) {
        const BusClockReading one[] = { { CORE_HUB, R0_NS } };
        const BusClockReading none_known[] = { { "lonely", 1 }, { "alone", 2 } };
        const BusClockReading none_app[] = { { CORE_HUB, R0_NS }, { "f", R0_NS } };
        const BusClockReading twice[] = { { CORE_HUB, R0_NS }, { "dup", 1 }, { "dup", 2 } };
        const BusClockReading spread[] = { { CORE_HUB, R0_NS }, { "wide", 1 },
                                           { CORE_HUB, R0_NS + 2 * NSEC_PER_SEC } };
        const BusClockReading uncalibrated[] = { { "wide", 1 }, { "u", R0_NS } };
        const BusClockReading edge[] = { { "f", INT64_MAX }, { "edge", 1 } };
        const BusClockReading ok_snapshot[] = { { CORE_HUB, R0_NS }, { "stranger", 1 } };
        BusClockReading many[BUS_API_SNAPSHOT_CLOCKS_MAX + 1];
        static const char *const made[] = { "lonely", "alone", "dup", "wide", "edge", "stranger", "m0", "m16" };
        size_t n_domains = core_count(c);
        bool none_made = true;

        for (size_t i = 0; i < ELEMENTSOF(many); i++) {
                static char names[ELEMENTSOF(many)][8];

                snprintf(names[i], sizeof(names[i]), "m%zu", i);
                many[i] = (BusClockReading) { i == 0 ? CORE_HUB : names[i], i == 0 ? R0_NS : (int64_t) i };
        }

        check_push(a, NULL, ok_snapshot, 2, -EINVAL, SIZE_MAX, "unique bus name", "no sender");
        check_push(a, "org.example.App", ok_snapshot, 2, -EINVAL, SIZE_MAX, "unique bus name", "a well-known sender");
        check_push(a, ":1.99999", ok_snapshot, 2, -EINVAL, SIZE_MAX, "left the bus",
                   "a sender that is not on the bus");
        check_push(a, cl->name, one, 1, -EINVAL, SIZE_MAX, "two readings", "one reading");
        is_int(app_clocks_push(a, cl->name, many, ELEMENTSOF(many), &(BusPushFailure) { SIZE_MAX, NULL }), -EINVAL,
               "more than 16 readings (InvalidArgs, as the contract says)");
        check_push(a, cl->name, none_known, 2, -EINVAL, SIZE_MAX, "no known domain", "no known domain");
        check_push(a, cl->name, none_app, 2, -EINVAL, SIZE_MAX, "no application domain", "no application domain");
        check_push(a, cl->name, twice, 3, -EINVAL, 2, "named twice", "an application domain twice");
        check_push(a, cl->name, spread, 3, -EINVAL, SIZE_MAX, "1 s apart", "known readings 2 s apart");
        check_push(a, cl->name, uncalibrated, 2, -ENODEV, 1, "not calibrated", "a known domain not calibrated");
        check_push(a, cl->name, edge, 2, -ERANGE, 0, "does not convert", "a known reading at INT64_MAX");

        for (size_t i = 0; i < ELEMENTSOF(made); i++)
                none_made = none_made && core_find(c, made[i], &(size_t) { 0 }) == -ENOENT;
        ok(none_made && core_count(c) == n_domains && app_clocks_count(a) == 0,
           "no refused snapshot made a domain or a node");
}

/* Client A makes "mic" and feeds it; B may not push to it. */
static void test_ownership(Core *c, AppClocks *a, const Client *owner, const Client *other, size_t *ret_mic) {
        const BusClockReading theirs[] = { { CORE_HUB, R0_NS + 20 * NSEC_PER_MSEC }, { "mic", 1 } };
        bool pushes_ok = true, truth_ok = true;
        size_t mic = SIZE_MAX;

        for (int k = 0; k < 10; k++) {
                int64_t r_ns = R0_NS + k * 10 * NSEC_PER_MSEC;
                const BusClockReading snapshot[] = { { CORE_HUB, r_ns }, { "mic", mic_at(r_ns) } };
                BusPushFailure f = { SIZE_MAX, NULL };

                if (app_clocks_push(a, owner->name, snapshot, 2, &f) < 0) {
                        diag("push %d: %s", k, f.reason ?: "(no reason)");
                        pushes_ok = false;
                }
        }
        ok(pushes_ok, "the owner's ten snapshots are taken");
        is_int(core_find(c, "mic", &mic), 0, "  'mic' is a domain");
        ok(mic != SIZE_MAX && c->domains[mic]->application && !core_domain_gone(c, mic), "  an application's");
        ok(mic != SIZE_MAX && app_clocks_owner(a, mic) && strcmp(app_clocks_owner(a, mic), owner->name) == 0,
           "  owned by its sender (%s)", owner->name);
        is_int(app_clocks_count(a), 1, "  one application domain");

        for (int64_t r_ns = R0_NS; mic != SIZE_MAX && r_ns <= R0_NS + 90 * NSEC_PER_MSEC; r_ns += 7 * NSEC_PER_MSEC) {
                int64_t v = 0, u = 0, back = 0, back_u = 0;

                if (graph_convert(&c->graph, c->graph.hub, mic, r_ns, r_ns, &v, &u) < 0 ||
                    llabs(v - mic_at(r_ns)) > u ||
                    graph_convert(&c->graph, mic, c->graph.hub, mic_at(r_ns), r_ns, &back, &back_u) < 0 ||
                    llabs(back - r_ns) > back_u) {
                        diag("at r %" PRId64 ": mic %" PRId64 " +- %" PRId64 " (truth %" PRId64 "), back %" PRId64
                             " +- %" PRId64, r_ns, v, u, mic_at(r_ns), back, back_u);
                        truth_ok = false;
                }
        }
        ok(truth_ok, "  the snapshots calibrate it: the truth lies within the bounds, both ways");

        check_push(a, other->name, theirs, 2, -EEXIST, 1, "belongs to another client", "another client's push to it");
        ok(strcmp(app_clocks_owner(a, mic), owner->name) == 0 && app_clocks_count(a) == 1, "  changes nothing");
        {
                const BusClockReading older[] = { { CORE_HUB, R0_NS + 50 * NSEC_PER_MSEC }, { "mic", 5 } };

                check_push(a, owner->name, older, 2, -EINVAL, 1, "older", "the owner's snapshot older than the latest");
        }
        *ret_mic = mic;
}

/* A client sends the daemon a NameOwnerChanged of its own, saying the owner left; then a
 * signal of its own as a fence (the bus keeps one sender's messages in order). */
typedef struct Spoof {
        unsigned fences;
} Spoof;

static int on_fence(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ((Spoof *) userdata)->fences++;
        return 0;
}

static bool fenced(const void *userdata) {
        return ((const Spoof *) userdata)->fences > 0;
}

static void test_spoof(sd_event *e, sd_bus *bus, Core *c, AppClocks *a, const Client *victim, const Client *liar) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *lie = NULL, *fence = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        const BusClockReading snapshot[] = { { CORE_HUB, R0_NS }, { "victim", 1 } };
        size_t live = app_clocks_count(a), index = SIZE_MAX;
        const char *daemon_name = NULL;
        Spoof spoof = {};
        int r;

        check_push(a, victim->name, snapshot, 2, 0, 0, NULL, "a client makes 'victim'");
        r = sd_bus_get_unique_name(bus, &daemon_name);
        if (r >= 0)
                r = sd_bus_add_match(bus, &slot, "type='signal',interface='org.timeconv.Test',member='Fence'", on_fence,
                                     &spoof);
        if (r >= 0)
                r = sd_bus_message_new_signal(liar->bus, &lie, "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                              "NameOwnerChanged");
        if (r >= 0)
                r = sd_bus_message_set_destination(lie, daemon_name);
        if (r >= 0)
                r = sd_bus_message_append(lie, "sss", victim->name, victim->name, "");
        if (r >= 0)
                r = sd_bus_send(liar->bus, lie, NULL);
        if (r >= 0)
                r = sd_bus_message_new_signal(liar->bus, &fence, "/org/timeconv/Test", "org.timeconv.Test", "Fence");
        if (r >= 0)
                r = sd_bus_message_set_destination(fence, daemon_name);
        if (r >= 0)
                r = sd_bus_send(liar->bus, fence, NULL);
        if (r >= 0)
                r = sd_bus_flush(liar->bus);
        is_int(r, 0, "another client sends the daemon a NameOwnerChanged saying it left");
        ok(run_until(e, fenced, &spoof), "  the daemon has dispatched it");
        /* sd-bus matches sender='org.freedesktop.DBus' against any unique-name sender (it cannot
         * know a sender's well-known names): sd_bus_track alone would believe the lie. */
        ok(app_clocks_count(a) == live + 1 && core_find(c, "victim", &index) == 0 && app_clocks_owner(a, index) &&
           strcmp(app_clocks_owner(a, index), victim->name) == 0,
           "  believed from the bus driver only: the client keeps its domain");
}

/* A client's snapshots as fast as it can push them: refused beyond the burst. The first
 * BUS_API_SNAPSHOTS_BURST are taken however slow the machine (the burst allowance), and no more
 * than the allowance plus what the elapsed time earned. */
static void test_rate(Core *c, AppClocks *a, const Client *fast, const Client *other) {
        const int64_t interval_ns = NSEC_PER_SEC / BUS_API_SNAPSHOTS_PER_S;
        int64_t start_ns = clock_now_ns(CLOCK_MONOTONIC), elapsed_ns;
        BusPushFailure f = { SIZE_MAX, NULL };
        int r = 0, taken = 0;

        for (int k = 0; k < 100000; k++) {
                int64_t r_ns = R0_NS + k * NSEC_PER_MSEC;
                const BusClockReading snapshot[] = { { CORE_HUB, r_ns }, { "rate", r_ns } };

                f = (BusPushFailure) { SIZE_MAX, NULL };
                r = app_clocks_push(a, fast->name, snapshot, 2, &f);
                if (r < 0)
                        break;
                taken++;
        }
        elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        ok(r == -EDQUOT && f.reason && strstr(f.reason, "snapshots a second"),
           "snapshots pushed as fast as can be are refused at last: QuotaExceeded");
        if (r != -EDQUOT)
                diag("got %d (%s)", r, f.reason ?: "(no reason)");
        ok(taken >= BUS_API_SNAPSHOTS_BURST, "  not before the burst allowance (%d taken)", taken);
        ok(taken <= BUS_API_SNAPSHOTS_BURST + 1 + elapsed_ns / interval_ns,
           "  and not more than it and what %" PRId64 " ms earned", elapsed_ns / NSEC_PER_MSEC);
        {
                const BusClockReading snapshot[] = { { CORE_HUB, R0_NS }, { "other", 1 } };

                check_push(a, other->name, snapshot, 2, 0, 0, NULL, "  another client's push meanwhile is taken");
        }
}

/* A snapshot with names name_prefix0 .. name_prefix(n-1), all new. */
static int push_new(AppClocks *a, const Client *cl, const char *prefix, size_t n, BusPushFailure *f) {
        char names[BUS_API_SNAPSHOT_CLOCKS_MAX][16];
        BusClockReading clocks[BUS_API_SNAPSHOT_CLOCKS_MAX];

        if (n + 1 > ELEMENTSOF(clocks))
                return -E2BIG;
        clocks[0] = (BusClockReading) { CORE_HUB, R0_NS };
        for (size_t i = 0; i < n; i++) {
                snprintf(names[i], sizeof(names[i]), "%s%zu", prefix, i);
                clocks[i + 1] = (BusClockReading) { names[i], (int64_t) i };
        }
        *f = (BusPushFailure) { SIZE_MAX, NULL };
        return app_clocks_push(a, cl->name, clocks, n + 1, f);
}

static void check_quota(int r, const BusPushFailure *f, const char *reason_part, const char *what) {
        bool good = r == -EDQUOT && f->reason && strstr(f->reason, reason_part);

        ok(good, "%s: QuotaExceeded", what);
        if (!good)
                diag("got %d (%s)", r, f->reason ?: "(no reason)");
}

/* Domains per client and in all. fillers[0] makes eight domains, fillers[1] is refused, the
 * others fill the daemon. */
static void test_quotas(const Harness *h, Core *c, AppClocks *a, Client *fillers, size_t n_fillers) {
        Client *eight = &fillers[0], *greedy = &fillers[1], *last = NULL;
        size_t live = app_clocks_count(a);
        BusPushFailure f;
        bool made_ok = true;

        if (client_connect(h, eight) < 0 || client_connect(h, greedy) < 0) {
                ok(false, "clients connect");
                return;
        }
        is_int(push_new(a, eight, "eight", BUS_API_APP_DOMAINS_PER_CLIENT_MAX, &f), 0,
               "a client makes 8 domains in one snapshot");
        is_int(app_clocks_count(a), live + BUS_API_APP_DOMAINS_PER_CLIENT_MAX, "  all eight are there");
        check_quota(push_new(a, eight, "ninth", 1, &f), &f, "per client", "  a ninth");
        check_quota(push_new(a, greedy, "greedy", BUS_API_APP_DOMAINS_PER_CLIENT_MAX + 1, &f), &f, "per client",
                    "a new client's snapshot of nine new domains");
        ok(app_clocks_count(a) == live + BUS_API_APP_DOMAINS_PER_CLIENT_MAX &&
           core_find(c, "greedy0", &(size_t) { 0 }) == -ENOENT, "  makes none of them");

        /* The rest of the daemon's room, eight to a client; the last one gets fewer. */
        for (size_t k = 2; k < n_fillers && app_clocks_count(a) < BUS_API_APP_DOMAINS_MAX; k++) {
                size_t n = BUS_API_APP_DOMAINS_MAX - app_clocks_count(a);
                char prefix[16];

                last = &fillers[k];
                snprintf(prefix, sizeof(prefix), "fill%zu_", k);
                if (n > BUS_API_APP_DOMAINS_PER_CLIENT_MAX)
                        n = BUS_API_APP_DOMAINS_PER_CLIENT_MAX;
                if (client_connect(h, last) < 0 || push_new(a, last, prefix, n, &f) < 0) {
                        diag("filler %zu: %s", k, f.reason ?: "(no reason)");
                        made_ok = false;
                        break;
                }
        }
        ok(made_ok && app_clocks_count(a) == BUS_API_APP_DOMAINS_MAX, "clients fill the daemon's 48 domains");
        is_int(core_count(c), CORE_DOMAINS_MAX, "  and the graph");
        check_quota(push_new(a, greedy, "one", 1, &f), &f, "as it can", "then a new client's one more");
        /* 4 domains before this test and 8 above leave 36: the last filler made 4 and has room. */
        if (last)
                check_quota(push_new(a, last, "more", 1, &f), &f, "as it can",
                            "  and one more from a client below its own quota");
        is_int(app_clocks_count(a), BUS_API_APP_DOMAINS_MAX, "  the daemon holds 48 still");
}

static const AppClocks *wait_apps;
static size_t wait_count;

/* The driver, as the daemon's: what the module reports goes to publish.h (no bus: no signals). */
typedef struct Driver {
        Core *core;
        DaemonChange last;
} Driver;

static void driver_changed(void *userdata, const DaemonChange *ch) {
        Driver *d = userdata;

        d->last = *ch;
        (void) daemon_publish(d->core, NULL, &test_log, ch);
}

static Driver driver;

static bool count_reached(const void *userdata) {
        return app_clocks_count(wait_apps) == wait_count;
}

static bool wait_for_count(sd_event *e, const AppClocks *a, size_t want) {
        wait_apps = a;
        wait_count = want;
        return run_until(e, count_reached, NULL);
}

/* Clients leave: their domains go, their names are free, their nodes are reused: under the
 * same name, or (the graph being full) under another, for which the table is reissued. */
static void test_leave(sd_event *e, Core *c, AppClocks *a, Client *owner, const Client *other, Client *eight,
                       const Client *greedy, size_t mic) {
        const BusClockReading again[] = { { CORE_HUB, R0_NS }, { "mic", 3 } };
        size_t live = app_clocks_count(a), n_nodes = core_count(c), index = SIZE_MAX;
        int table_fd;

        client_close(owner);
        driver.last = (DaemonChange) {};
        ok(wait_for_count(e, a, live - 1), "the owner of 'mic' leaves the bus: its domain goes");
        ok(driver.last.removed && !driver.last.added, "  the module reports a removal");
        ok(core_find(c, "mic", &index) == -ENOENT && core_domain_gone(c, mic) && !core_domain_available(c, mic) &&
           app_clocks_owner(a, mic) == NULL, "  'mic' is no domain any more, its node a tombstone");

        check_push(a, other->name, again, 2, 0, 0, NULL, "the client refused 'mic' before may make it now");
        ok(core_find(c, "mic", &index) == 0 && index == mic && app_clocks_owner(a, mic) &&
           strcmp(app_clocks_owner(a, mic), other->name) == 0 && !core_domain_gone(c, mic),
           "  on the same node, owned by it");
        is_int(app_clocks_count(a), live, "  the daemon is full again");

        client_close(eight);
        ok(wait_for_count(e, a, live - BUS_API_APP_DOMAINS_PER_CLIENT_MAX),
           "a client of eight domains leaves: all eight go");
        table_fd = table_publisher_fd(c->table);
        check_push(a, greedy->name, (const BusClockReading[]) { { CORE_HUB, R0_NS }, { "late", 1 } }, 2, 0, 0, NULL,
                   "another client makes a domain of a new name");
        ok(driver.last.added && driver.last.models, "  the module reports an addition");
        ok(core_find(c, "late", &index) == 0 && core_count(c) == n_nodes && !core_domain_gone(c, index) &&
           app_clocks_owner(a, index) && strcmp(app_clocks_owner(a, index), greedy->name) == 0,
           "  on a departed node: no node is added");
        ok(table_publisher_fd(c->table) >= 0 && table_publisher_fd(c->table) != table_fd,
           "  a renamed node: clients get a new shared table");
}

int main(void) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        Client owner = {}, other = {}, fast = {}, victim = {}, fillers[8] = {};
        FakeConfig fc = { .deviation_min_ns = 100, .deviation_max_ns = 300, .r_start_ns = R0_NS - NSEC_PER_SEC,
                          .interval_ns = 100000, .seed = 3 };
        size_t f_index, mic = SIZE_MAX;
        AppClocks *apps = NULL;
        Core *c = NULL;
        int r;

        r = harness_new(NULL, &h);
        if (r < 0) {
                /* .ci/run installs dbus-daemon: its absence is a failure, not a skip. */
                is_int(r, 0, "a private bus");
                return done_testing();
        }
        if (sd_event_new(&e) < 0 || harness_connect(h, &bus) < 0 || sd_bus_attach_event(bus, e, 0) < 0 ||
            client_connect(h, &owner) < 0 || client_connect(h, &other) < 0 || client_connect(h, &fast) < 0 ||
            client_connect(h, &victim) < 0) {
                ok(false, "the daemon's connection and four clients on the private bus");
                return done_testing();
        }

        /* Known domains: the hub, "f" (a fake clock, calibrated) and "u" (never calibrated). */
        if (core_new(&test_log, &c) < 0 ||
            core_add_domain(c, &domain_fake_ops, &(DomainInfo) { .name = "f", .unit = UNIT_NS }, &fc) < 0 ||
            core_add_domain(c, &domain_fake_ops, &(DomainInfo) { .name = "u", .unit = UNIT_NS }, &fc) < 0 ||
            core_find(c, "f", &f_index) < 0 || app_clocks_new(c, &apps) < 0)
                abort();
        for (int i = 0; i < 10; i++)
                if (core_calibrate(c, f_index, &(CoreBurst) {}) < 0)
                        abort();
        /* More known domains, so that the graph is full when the applications' quota is: a
         * new name then needs a departed node. */
        while (core_count(c) < CORE_DOMAINS_MAX - BUS_API_APP_DOMAINS_MAX) {
                DomainInfo info = { .unit = UNIT_NS };

                snprintf(info.name, sizeof(info.name), "k%zu", core_count(c));
                if (core_add_domain(c, &domain_fake_ops, &info, &fc) < 0)
                        abort();
        }

        test_arguments(c, apps, bus, &owner);
        driver.core = c;
        is_int(app_clocks_attach(apps, bus, &(const AppClocksDriver) { driver_changed, &driver }), 0,
               "app_clocks_attach");
        test_malformed(c, apps, &owner);
        test_ownership(c, apps, &owner, &other, &mic);
        test_spoof(e, bus, c, apps, &victim, &other);
        test_rate(c, apps, &fast, &other);
        test_quotas(h, c, apps, fillers, ELEMENTSOF(fillers));
        test_leave(e, c, apps, &owner, &other, &fillers[0], &fillers[1], mic);

        app_clocks_free(apps);
        core_free(c);
        client_close(&other);
        client_close(&fast);
        client_close(&victim);
        for (size_t i = 0; i < ELEMENTSOF(fillers); i++)
                client_close(&fillers[i]);
        return done_testing();
}
