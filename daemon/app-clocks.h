/* SPDX-License-Identifier: MIT */
#pragma once

/* Application clocks: domains that clients own and feed through PushSnapshot (the XML says the
 * contract). Each is a node of the core's graph with a History like any domain, but no source:
 * a snapshot pairs the application's reading with known readings of the daemon's domains, which
 * convert to the hub with their bounds and give the sample's box [r - u, r + u] x {x}. The
 * estimator then gives honest bounds, rates and steps as for every other clock.
 *
 * A domain belongs to the unique bus name that created it and goes when that name leaves the
 * bus (sd_bus_track). Its node is not removed (indices into the shared table must keep naming
 * a node): it becomes a tombstone (CoreDomain.gone: unavailable, unknown to the bus) whose slot
 * a later application domain reuses. Memory is bounded by construction: BUS_API_APP_DOMAINS_MAX
 * domains, at most as many clients (each owns one or more), a fixed-size History each. */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "bus-api.h"
#include "core.h"
#include "publish.h"

typedef struct AppClocks AppClocks;

/* Where the module's changes go (publish.h says what follows): changed() is called once a push
 * changed anything, and when a client left and its domains went. The module neither writes the
 * table nor emits. */
typedef struct AppClocksDriver {
        void (*changed)(void *userdata, const DaemonChange *ch);
        void *userdata;
} AppClocksDriver;

/* The application clocks on core (borrowed; the core makes, feeds and buries their nodes);
 * nothing is accepted until app_clocks_attach(). */
int app_clocks_new(Core *core, AppClocks **ret);
/* Frees the clients and their tracks; leaves the core's nodes as they are (the core is going
 * too). Emits nothing. Accepts NULL; returns NULL. */
AppClocks *app_clocks_free(AppClocks *a);

static inline void app_clocks_freep(AppClocks **a) {
        app_clocks_free(*a);
}

/* The bus whose clients own the domains (referenced) and where changes go (copied; NULL:
 * nowhere). */
int app_clocks_attach(AppClocks *a, sd_bus *bus, const AppClocksDriver *driver);

/* BusCoreOps.push_snapshot: see org.timeconv.Clock1.xml. -EOPNOTSUPP before attach; -EINVAL,
 * -EEXIST, -EDQUOT, -ENODEV, -ERANGE as the contract says, with *ret_failure saying why. */
int app_clocks_push(AppClocks *a, const char *sender, const BusClockReading *clocks, size_t n,
                    BusPushFailure *ret_failure);

/* The unique bus name owning the application domain at node index; NULL for any other. */
const char *app_clocks_owner(const AppClocks *a, size_t index);

/* Live application domains, all clients together. */
size_t app_clocks_count(const AppClocks *a);
