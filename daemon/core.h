/* SPDX-License-Identifier: MIT */
#pragma once

/* The Core: the live clock graph, one History per domain, the open Domain handles and the
 * snapshot ring. It calibrates a domain when told to (the scheduler decides when); core-bus.h
 * answers the bus from it. It knows nothing of sd-event or sd-bus. Domain i of the core is node i
 * of the graph; node 0 is the hub, monotonic_raw, against which every model is made. The core is
 * the only writer of its domain table: the sources' domains, views, and application clocks (made,
 * fed and buried here for app-clocks.h, which keeps who owns them). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "graph.h"
#include "history.h"
#include "log.h"
#include "snapshots.h"
#include "table-publish.h"

#define CORE_HUB "monotonic_raw"
#define CORE_DOMAINS_MAX GRAPH_NODES_MAX

/* A burst reads this many samples and keeps the best (smallest deviation) few. */
#define CORE_BURST_SAMPLES 8
#define CORE_BURST_KEEP 2

typedef struct CoreDomain {
        DomainInfo info;
        const DomainOps *ops;           /* NULL for the hub and for views */
        Domain *domain;
        History history;                /* unused for the hub and for views */
        size_t view_of;                 /* a view: index of the domain it shows; else SIZE_MAX */
        uint64_t generation;            /* the source's, as of the latest burst */
        bool has_generation;
        uint64_t rate_epoch;            /* the source's, as of the latest burst */
        uint64_t list_epoch;            /* the source's DomainStatus.list_epoch, as of the same */
        int64_t last_calibrated_ns;     /* CLOCK_MONOTONIC of the latest burst; 0: never */
        unsigned timeouts;              /* bursts in a row that timed out */
        /* An application's clock (app-clocks.c): no source, its history fed by PushSnapshot.
         * gone: its owner left; the node stays (indices never change) but names no domain. */
        bool application;
        bool gone;
        bool in_use;                    /* its slot in Core.slots is taken */
        /* Non-NULL while another thread reads a burst (core_domain_set_busy()): the source's
         * status as of the burst's start, given instead of asking the busy source. */
        const DomainStatus *busy_status;
} CoreDomain;

/* What one burst found: the most important verdict among its samples (a step beats a change of
 * rate beats consistent). */
typedef struct CoreBurst {
        EstimatorVerdict verdict;
        bool restarted;                 /* the source said the clock restarted (with ESTIMATOR_STEP) */
        int64_t step_ns;                /* for ESTIMATOR_STEP: the jump of the domain */
        int64_t at_r_ns;                /* reference time of the first sample after it */
} CoreBurst;

typedef void (*CoreActivityHook)(void *userdata);

typedef struct Core {
        const Log *log;
        ClockGraph graph;
        CoreDomain *domains[CORE_DOMAINS_MAX];
        size_t n_domains;
        /* Every CoreDomain lives in one of these, allocated (and written) with the core: a
         * domain that comes and goes (an application's) reuses memory that is already resident,
         * so the daemon's size does not creep up with what clients do. */
        CoreDomain *slots;
        SnapshotRing *snapshots;
        TablePublisher *table;          /* NULL: no shared table, clients use the bus */
        int64_t last_tick_r_ns;         /* reference time of the latest snapshot */
        int64_t last_tick_ns;           /* CLOCK_MONOTONIC of the same */
        CoreActivityHook activity_hook;
        void *activity_userdata;
        /* The application clocks' side of the bus (core-bus.h), borrowed; NULL: none. */
        const struct CoreBusApplications *bus_applications;
        /* A source whose domains may list more of them later (msc per monitor): its config, kept
         * to open them; relist_from: the domain whose list changed, SIZE_MAX: none. */
        const DomainOps *relist_ops;
        void *relist_config;
        size_t relist_from;
        bool out_of_fds_logged;         /* said once that calls were refused at the fd limit */
} Core;

int core_new(const Log *log, Core **ret);

/* The info of a domain read in ns as it is, named name (at most DOMAIN_NAME_MAX - 1 bytes): the
 * hub, and every application clock. */
DomainInfo core_ns_domain_info(const char *name);

/* A zeroed CoreDomain from the core's slots, or NULL when all are taken; core_domain_release()
 * closes its source handle and gives the slot back (accepts NULL, returns NULL). */
CoreDomain *core_domain_alloc(Core *c);
CoreDomain *core_domain_release(CoreDomain *d);

static inline void core_domain_releasep(CoreDomain **d) {
        core_domain_release(*d);
}
Core *core_free(Core *c);

static inline void core_freep(Core **c) {
        core_free(*c);
}

/* Adds a domain a source listed: opens it with config and gives it a History and a graph node.
 * The hub is not opened (it is the reference): its info only replaces the defaults. A view
 * (info->view_of) is not opened either: it is a node on the history of the domain it shows,
 * which must be there already. -EEXIST for a name already in use, -ENOSPC when full, -ENOENT
 * for a view of nothing, or the source's error. */
int core_add_domain(Core *c, const DomainOps *ops, const DomainInfo *info, const void *config);

/* ops's domains may list more of them later (DomainStatus.list_epoch): core_relist() opens
 * those with a copy of config (size bytes, pointers in it borrowed for the core's life). */
int core_set_relist(Core *c, const DomainOps *ops, const void *config, size_t size);

/* After a burst: adds what a domain of the relisting source now lists and the core lacks.
 * Returns how many were added. */
int core_relist(Core *c);

size_t core_count(const Core *c);
const char *core_domain_name(const Core *c, size_t index);
bool core_domain_is_hub(const Core *c, size_t index);
bool core_domain_available(const Core *c, size_t index);
bool core_domain_is_view(const Core *c, size_t index);
/* Whether domain index is a view of domain shown (x11_us of x11, a GPU's stable name of gpuN). */
bool core_domain_is_view_of(const Core *c, size_t index, size_t shown);
/* A departed application's node (CoreDomain.gone): no domain, for the bus. */
bool core_domain_gone(const Core *c, size_t index);

/* The domain called name as the bus sees it: graph_find() without departed applications'
 * nodes. -ENOENT when none. */
int core_find(const Core *c, const char *name, size_t *ret_index);

/* The history that models domain index (a view's is its domain's); NULL for the hub. */
const History *core_domain_history(const Core *c, size_t index);

/* The source's status of domain index (a view asks its domain); -EOPNOTSUPP when the source
 * has none. Strings are valid until the next call into the core. */
int core_domain_status(const Core *c, size_t index, DomainStatus *ret);

/* The domain's watch fd (domain.h), or -EOPNOTSUPP / -ENOTCONN. */
int core_domain_watch_fd(const Core *c, size_t index);

/* Its watch fd is readable: let the source read. A dead connection marks the domain (and its
 * views) unavailable and returns the error. */
int core_domain_dispatch(Core *c, size_t index);

/* One burst of domain index: read CORE_BURST_SAMPLES samples, keep the best CORE_BURST_KEEP
 * (all of them for a truncating clock, whose informative samples are those that straddle a
 * tick, whatever their width), feed them to its history in time order, refresh its graph node
 * and its views. A new source generation (a new X server, a GPU reset) closes the segment first
 * and is reported as a step, its jump measured by the first new sample against the old model; the
 * source's same_as makes the node follow that domain exactly. A failed read marks the domain
 * unavailable (a later good burst makes it available again) and returns the error. -EINVAL for
 * the hub, a view or an index out of range. An application's domain has nothing to read: 0 and
 * a consistent burst (its pushes calibrate it). */
int core_calibrate(Core *c, size_t index, CoreBurst *ret);

/* core_calibrate() in two halves, so that a source that talks to a server can be read off the
 * event loop (daemon/burst-worker.c): its handle (-EOPNOTSUPP for the hub, a view or an
 * application's domain), which only the reading thread may use while the burst is in flight,
 * and then, on the loop, what the read gave (sample_burst()'s return, its samples, up to
 * CORE_BURST_SAMPLES) taken in as core_calibrate() would. */
int core_domain_source(const Core *c, size_t index, const DomainOps **ret_ops, Domain **ret_domain);
int core_calibrate_samples(Core *c, size_t index, int read_result, Sample *samples, size_t n, CoreBurst *ret);

/* From status (non-NULL) until called again with NULL, another thread owns domain index's source
 * handle: core_domain_status() gives *status (which the caller keeps valid), dispatch and
 * watch_fd and core_calibrate() refuse with -EBUSY, core_calibrate_samples() with -EINVAL. */
void core_domain_set_busy(Core *c, size_t index, const DomainStatus *status);

/* Records one snapshot: the hub's time now and every calibrated domain's value then. */
void core_snapshot(Core *c);

/* The kernel's maxerror and esterror of realtime against UTC (-1: none) for that snapshot. */
void core_snapshot_utc(Core *c, int64_t maxerror_ns, int64_t esterror_ns);

/* Writes the graph to the shared table, if there is one. */
void core_publish(Core *c);

void core_set_activity_hook(Core *c, CoreActivityHook hook, void *userdata);

/* An application clock's node (no source, ns, a prior for a crystal), called name: the departed
 * node of that name, else a new node, else any departed one (renamed). -EEXIST when a domain has
 * that name, -EDQUOT when the graph has no room. */
int core_add_application(Core *c, const char *name, size_t *ret_index);

/* Its owner left: the node becomes a tombstone (CoreDomain.gone: unavailable, nameless for the
 * bus, its history and snapshots cleared), kept so that the shared table's indices stay valid. */
void core_bury_application(Core *c, size_t index);

/* One application reading (its box on the hub) into the domain's history; backwards: its value is
 * below the previous one, so the domain becomes a target only. The history's verdict in
 * *ret_event. */
int core_feed_application(Core *c, size_t index, const Sample *s, bool backwards, HistoryEvent *ret_event);
