/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by app-clocks.c (clients, quotas, PushSnapshot) and app-domains.c (their graph nodes). */

#include <stdbool.h>
#include <stdint.h>

#include "app-clocks.h"
#include "core.h"
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
        BusApi *api;
        /* Each client owns one domain or more, so there are never more clients than domains. */
        AppClient *clients[BUS_API_APP_DOMAINS_MAX];
        size_t n_clients;
        AppNode nodes[CORE_DOMAINS_MAX];
        size_t n_live;
};

/* A node for the new domain name, owned by cl: -EDQUOT when the graph has no room. */
int app_domain_add(AppClocks *a, AppClient *cl, const char *name, size_t *ret_index);

/* The node of a departed client's domain becomes a tombstone. */
void app_domain_bury(AppClocks *a, size_t index);

/* One application reading (its box on the hub) into the domain's history. */
int app_domain_feed(AppClocks *a, size_t index, const Sample *s);
