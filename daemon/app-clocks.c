/* SPDX-License-Identifier: MIT */

/* Application clocks (app-clocks.h). A push is checked whole before anything changes (quota,
 * ownership, names, the known readings, the order of snapshots), then applied: new domains get
 * nodes, every application reading becomes a sample of its domain's History, and what changed
 * goes to the driver, which publishes it. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "app-clocks.h"
#include "arith.h"
#include "cleanup.h"
#include "time-util.h"

#define DBUS_DRIVER_NAME "org.freedesktop.DBus"
#define DBUS_DRIVER_PATH "/org/freedesktop/DBus"

#define SNAPSHOT_INTERVAL_NS (NSEC_PER_SEC / BUS_API_SNAPSHOTS_PER_S)

typedef struct AppClient {
        AppClocks *apps;
        char *name;                     /* its unique bus name */
        sd_bus_track *track;
        size_t domains[BUS_API_APP_DOMAINS_PER_CLIENT_MAX];
        size_t n_domains;
        /* The rate limit as a virtual schedule (GCRA): each snapshot books the next
         * SNAPSHOT_INTERVAL_NS; a client may be up to BUS_API_SNAPSHOTS_BURST of them ahead. */
        int64_t booked_until_ns;
} AppClient;

/* What the module knows of node i beyond the core: who owns it, its latest snapshot. */
typedef struct AppNode {
        AppClient *owner;               /* NULL: not a live application domain */
        bool has_last;
        int64_t last_r_lo_ns;
        int64_t last_x_ns;
} AppNode;

struct AppClocks {
        Core *core;
        sd_bus *bus;
        sd_bus_slot *driver_filter;     /* drops signals that only claim to be the driver's */
        AppClocksDriver driver;
        /* Each client owns one domain or more, so there are never more clients than domains. */
        AppClient *clients[BUS_API_APP_DOMAINS_MAX];
        size_t n_clients;
        AppNode nodes[CORE_DOMAINS_MAX];
        size_t n_live;
};

/* The limits go into the error messages as text. */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

typedef enum EntryKind {
        ENTRY_KNOWN,                    /* a daemon's domain: says when */
        ENTRY_OWN,                      /* the sender's application domain */
        ENTRY_NEW,                      /* a name no domain has: the sender's new domain */
} EntryKind;

typedef struct Entry {
        EntryKind kind;
        size_t index;                   /* the node, but for ENTRY_NEW until it is made */
} Entry;

static int fail(BusPushFailure *f, int r, size_t index, const char *reason) {
        *f = (BusPushFailure) { .index = index, .reason = reason };
        return r;
}

int app_clocks_new(Core *core, AppClocks **ret) {
        AppClocks *a;

        if (!core || !ret)
                return -EINVAL;
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->core = core;
        *ret = a;
        return 0;
}

static AppClient *client_free(AppClient *cl) {
        if (!cl)
                return NULL;
        sd_bus_track_unref(cl->track);
        free(cl->name);
        free(cl);
        return NULL;
}

AppClocks *app_clocks_free(AppClocks *a) {
        if (!a)
                return NULL;
        for (size_t i = 0; i < a->n_clients; i++)
                client_free(a->clients[i]);
        sd_bus_slot_unref(a->driver_filter);
        sd_bus_unref(a->bus);
        free(a);
        return NULL;
}

static bool str_eq(const char *x, const char *y) {
        return x && y && strcmp(x, y) == 0;
}

static const char *str_or_none(const char *s) {
        return s ? s : "(none)";
}

/* A client can send the daemon a unicast signal that claims to be the bus driver's: dbus-daemon
 * delivers it whatever our match rules say, and sd-bus matches the rule's sender
 * 'org.freedesktop.DBus' against any unique name. A forged NameOwnerChanged would tell the
 * tracks that another client left (and drop its domains), so only the driver itself is heard. */
static int drop_forged_driver_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        AppClocks *a = userdata;
        const char *sender = sd_bus_message_get_sender(m);

        if (!sd_bus_message_is_signal(m, NULL, NULL))
                return 0;
        if (!str_eq(sd_bus_message_get_interface(m), DBUS_DRIVER_NAME) &&
            !str_eq(sd_bus_message_get_path(m), DBUS_DRIVER_PATH))
                return 0;
        if (str_eq(sender, DBUS_DRIVER_NAME))
                return 0;
        log_debug(a->core->log, "application clocks: ignoring %s.%s from %s, not the bus driver",
                  str_or_none(sd_bus_message_get_interface(m)), str_or_none(sd_bus_message_get_member(m)),
                  str_or_none(sender));
        return 1;
}

int app_clocks_attach(AppClocks *a, sd_bus *bus, const AppClocksDriver *driver) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *filter = NULL;
        int r;

        if (!a || !bus)
                return -EINVAL;
        /* Filters run before match callbacks, sd_bus_track's among them. */
        r = sd_bus_add_filter(bus, &filter, drop_forged_driver_signal, a);
        if (r < 0)
                return r;
        sd_bus_slot_unref(a->driver_filter);
        a->driver_filter = TAKE_PTR(filter);
        sd_bus_unref(a->bus);
        a->bus = sd_bus_ref(bus);
        a->driver = driver ? *driver : (AppClocksDriver) {};
        return 0;
}

const char *app_clocks_owner(const AppClocks *a, size_t index) {
        if (!a || index >= CORE_DOMAINS_MAX || !a->nodes[index].owner)
                return NULL;
        return a->nodes[index].owner->name;
}

size_t app_clocks_count(const AppClocks *a) {
        return a ? a->n_live : 0;
}

static AppClient *client_find(AppClocks *a, const char *name) {
        for (size_t i = 0; i < a->n_clients; i++)
                if (strcmp(a->clients[i]->name, name) == 0)
                        return a->clients[i];
        return NULL;
}

static bool client_book_snapshot(AppClient *cl, int64_t now_ns) {
        int64_t from_ns = cl->booked_until_ns > now_ns ? cl->booked_until_ns : now_ns;

        if (from_ns + SNAPSHOT_INTERVAL_NS - now_ns > BUS_API_SNAPSHOTS_BURST * SNAPSHOT_INTERVAL_NS)
                return false;
        cl->booked_until_ns = from_ns + SNAPSHOT_INTERVAL_NS;
        return true;
}

static void app_clocks_changed(AppClocks *a, const DaemonChange *ch) {
        if (a->driver.changed)
                a->driver.changed(a->driver.userdata, ch);
}

/* A node for the new domain name, owned by cl: -EDQUOT when the graph has no room. */
static int app_domain_add(AppClocks *a, AppClient *cl, const char *name, size_t *ret_index) {
        size_t index;
        int r;

        r = core_add_application(a->core, name, &index);
        if (r < 0)
                return r;
        a->nodes[index] = (AppNode) { .owner = cl };
        cl->domains[cl->n_domains++] = index;
        a->n_live++;
        log_info(a->core->log, "application clocks: %s made domain '%s'", cl->name, name);
        *ret_index = index;
        return 0;
}

/* One application reading into its domain; a step goes into ch. */
static int app_domain_feed(AppClocks *a, size_t index, const Sample *s, DaemonChange *ch) {
        AppNode *node = &a->nodes[index];
        HistoryEvent event;
        int r;

        r = core_feed_application(a->core, index, s, node->has_last && s->x_lo_ns < node->last_x_ns, &event);
        if (r < 0)
                return r;
        node->has_last = true;
        node->last_r_lo_ns = s->r0_ns;
        node->last_x_ns = s->x_lo_ns;
        if (event.verdict == ESTIMATOR_STEP) {
                log_debug(a->core->log, "application clocks: domain '%s' stepped by %+" PRId64 " ns",
                          core_domain_name(a->core, index), event.step_ns);
                daemon_change_discontinuity(ch, index, event.step_ns, BUS_DISCONTINUITY_STEP);
        }
        return 0;
}

/* Buries the client's domains and forgets the client. */
static void client_drop(AppClocks *a, AppClient *cl) {
        for (size_t i = 0; i < cl->n_domains; i++) {
                core_bury_application(a->core, cl->domains[i]);
                a->nodes[cl->domains[i]] = (AppNode) {};
                a->n_live--;
        }
        for (size_t i = 0; i < a->n_clients; i++)
                if (a->clients[i] == cl) {
                        a->clients[i] = a->clients[--a->n_clients];
                        break;
                }
        client_free(cl);
}

/* sd-bus holds a reference on the track while it calls this: freeing the client is safe. */
static int on_client_gone(sd_bus_track *track, void *userdata) {
        AppClient *cl = userdata;
        AppClocks *a = cl->apps;

        log_info(a->core->log, "application clocks: %s left the bus, its %zu domain(s) go", cl->name,
                 cl->n_domains);
        client_drop(a, cl);
        app_clocks_changed(a, &(const DaemonChange) { .removed = true });
        return 0;
}

/* A record for sender, tracked on the bus: -ESRCH when it left already (its call was queued). */
static int client_new(AppClocks *a, const char *sender, int64_t now_ns, AppClient **ret) {
        AppClient *cl;
        int r;

        if (a->n_clients == BUS_API_APP_DOMAINS_MAX)
                return -EDQUOT;
        cl = calloc(1, sizeof(*cl));
        if (!cl)
                return -ENOMEM;
        cl->apps = a;
        cl->booked_until_ns = now_ns + SNAPSHOT_INTERVAL_NS;
        cl->name = strdup(sender);
        r = cl->name ? sd_bus_track_new(a->bus, &cl->track, on_client_gone, cl) : -ENOMEM;
        if (r >= 0)
                r = sd_bus_track_add_name(cl->track, sender);
        if (r < 0) {
                client_free(cl);
                return r == -ENXIO || r == -ENOENT || r == -ESRCH ? -ESRCH : r;
        }
        a->clients[a->n_clients++] = cl;
        *ret = cl;
        return 0;
}

/* Sorts the entries and checks them against ownership and quotas; nothing changes. */
static int classify(AppClocks *a, const AppClient *cl, const BusClockReading *clocks, size_t n, Entry *entries,
                    size_t *ret_n_new, BusPushFailure *f) {
        Core *c = a->core;
        size_t n_known = 0, n_app = 0, n_new = 0, room = CORE_DOMAINS_MAX - c->n_domains;

        for (size_t i = 0; i < n; i++) {
                size_t index;

                if (core_find(c, clocks[i].name, &index) < 0)
                        entries[i] = (Entry) { .kind = ENTRY_NEW, .index = SIZE_MAX };
                else if (!c->domains[index]->application)
                        entries[i] = (Entry) { .kind = ENTRY_KNOWN, .index = index };
                else if (cl && a->nodes[index].owner == cl)
                        entries[i] = (Entry) { .kind = ENTRY_OWN, .index = index };
                else
                        return fail(f, -EEXIST, i, "the domain belongs to another client");

                for (size_t j = 0; j < i; j++)
                        if (entries[i].kind != ENTRY_KNOWN && strcmp(clocks[i].name, clocks[j].name) == 0)
                                return fail(f, -EINVAL, i, "an application domain named twice in one snapshot");
                n_known += entries[i].kind == ENTRY_KNOWN;
                n_app += entries[i].kind != ENTRY_KNOWN;
                n_new += entries[i].kind == ENTRY_NEW;
        }
        if (n_known == 0)
                return fail(f, -EINVAL, SIZE_MAX, "no known domain in the snapshot: name one of the daemon's "
                            "domains to say when it was taken");
        if (n_app == 0)
                return fail(f, -EINVAL, SIZE_MAX, "no application domain in the snapshot: every name is one "
                            "of the daemon's domains");

        for (size_t i = 0; i < c->n_domains; i++)
                room += c->domains[i]->gone;
        if (n_new > 0 && (cl ? cl->n_domains : 0) + n_new > BUS_API_APP_DOMAINS_PER_CLIENT_MAX)
                return fail(f, -EDQUOT, SIZE_MAX, "at most " STRINGIFY(BUS_API_APP_DOMAINS_PER_CLIENT_MAX)
                            " application domains per client");
        if (n_new > 0 && (a->n_live + n_new > BUS_API_APP_DOMAINS_MAX || n_new > room))
                return fail(f, -EDQUOT, SIZE_MAX, "the daemon holds as many application domains as it can");
        *ret_n_new = n_new;
        return 0;
}

/* When the snapshot was taken, on the hub: the hull of the known readings, each widened by
 * its conversion's bound. The application read its clocks within that span (a known domain
 * read before and after brackets them). */
static int snapshot_span(AppClocks *a, const BusClockReading *clocks, const Entry *entries, size_t n,
                         int64_t *ret_lo_ns, int64_t *ret_hi_ns, BusPushFailure *f) {
        const ClockGraph *g = &a->core->graph;
        int64_t lo_ns = INT64_MAX, hi_ns = INT64_MIN, hint_ns = clock_now_ns(CLOCK_MONOTONIC_RAW), spread_ns;

        for (size_t i = 0; i < n; i++) {
                int64_t r_ns, u_ns, r_lo_ns, r_hi_ns;
                int r;

                if (entries[i].kind != ENTRY_KNOWN)
                        continue;
                r = graph_convert(g, entries[i].index, g->hub, clocks[i].value, hint_ns, &r_ns, &u_ns);
                if (r == -ENODEV || r == -ENODATA)
                        return fail(f, -ENODEV, i, "the domain is not calibrated or unavailable now");
                if (r >= 0 && (arith_sub(r_ns, u_ns, &r_lo_ns) < 0 || arith_add(r_ns, u_ns, &r_hi_ns) < 0))
                        r = -ERANGE;
                if (r == -ERANGE)
                        return fail(f, -ERANGE, i, "the reading does not convert to the reference");
                if (r < 0)
                        return fail(f, -EINVAL, i, "not a reading of that domain");
                lo_ns = r_lo_ns < lo_ns ? r_lo_ns : lo_ns;
                hi_ns = r_hi_ns > hi_ns ? r_hi_ns : hi_ns;
        }
        if (arith_sub(hi_ns, lo_ns, &spread_ns) < 0 || spread_ns > BUS_API_SNAPSHOT_SPREAD_MAX_NS)
                return fail(f, -EINVAL, SIZE_MAX, "the known readings are more than 1 s apart: not one instant");
        *ret_lo_ns = lo_ns;
        *ret_hi_ns = hi_ns;
        return 0;
}

int app_clocks_push(AppClocks *a, const char *sender, const BusClockReading *clocks, size_t n,
                    BusPushFailure *ret_failure) {
        Entry entries[BUS_API_SNAPSHOT_CLOCKS_MAX];
        int64_t lo_ns, hi_ns, now = clock_now_ns(CLOCK_MONOTONIC);
        BusPushFailure *f = ret_failure;
        DaemonChange change = {};
        size_t n_new = 0;
        AppClient *cl;
        int r;

        if (!a || !f || !clocks || n > BUS_API_SNAPSHOT_CLOCKS_MAX)
                return -EINVAL;
        if (!a->bus)
                return fail(f, -EOPNOTSUPP, SIZE_MAX, "application clocks need a bus");
        if (!sender || sender[0] != ':')
                return fail(f, -EINVAL, SIZE_MAX, "the caller has no unique bus name to own domains");
        if (n < BUS_API_SNAPSHOT_CLOCKS_MIN)
                return fail(f, -EINVAL, SIZE_MAX, "a snapshot needs two readings or more");

        cl = client_find(a, sender);
        if (cl && !client_book_snapshot(cl, now))
                return fail(f, -EDQUOT, SIZE_MAX, "more than " STRINGIFY(BUS_API_SNAPSHOTS_PER_S)
                            " snapshots a second");
        r = classify(a, cl, clocks, n, entries, &n_new, f);
        if (r < 0)
                return r;
        r = snapshot_span(a, clocks, entries, n, &lo_ns, &hi_ns, f);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (entries[i].kind == ENTRY_OWN && a->nodes[entries[i].index].has_last &&
                    lo_ns < a->nodes[entries[i].index].last_r_lo_ns)
                        return fail(f, -EINVAL, i, "the snapshot is older than the domain's latest");

        /* Checked: from here on only allocation can fail. */
        if (!cl) {
                r = client_new(a, sender, now, &cl);
                if (r == -ESRCH)
                        return fail(f, -EINVAL, SIZE_MAX, "the caller left the bus");
                if (r < 0)
                        return fail(f, r, SIZE_MAX, "cannot track the caller");
        }
        for (size_t i = 0; i < n; i++)
                if (entries[i].kind == ENTRY_NEW) {
                        r = app_domain_add(a, cl, clocks[i].name, &entries[i].index);
                        if (r < 0) {
                                /* A client owns a domain or more, or is not kept. */
                                if (cl->n_domains == 0)
                                        client_drop(a, cl);
                                return fail(f, r, i, "cannot make the domain");
                        }
                }
        for (size_t i = 0; i < n; i++)
                if (entries[i].kind != ENTRY_KNOWN) {
                        const Sample s = {
                                .r0_ns = lo_ns,
                                .r1_ns = hi_ns,
                                .x_lo_ns = clocks[i].value,
                                .x_hi_ns = clocks[i].value,
                        };

                        r = app_domain_feed(a, entries[i].index, &s, &change);
                        if (r < 0) {
                                /* Only values at the edge of int64 get here. What was fed is
                                 * published; the new domains are told of with the next change. */
                                change.models = true;
                                app_clocks_changed(a, &change);
                                return fail(f, r == -ERANGE ? -ERANGE : -EINVAL, i,
                                            "the reading does not fit the domain's model");
                        }
                }

        change.models = true;
        change.added = n_new > 0;
        app_clocks_changed(a, &change);
        return 0;
}
