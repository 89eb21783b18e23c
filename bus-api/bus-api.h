/* SPDX-License-Identifier: MIT */
#pragma once

/* The org.timeconv.Clock1 object: an sd-bus vtable whose handlers read and validate their
 * arguments, call the daemon's core through BusCoreOps, and reply. They never compute: every
 * answer comes from the core. No globals: all state hangs off the BusApi returned by
 * bus_api_new(), which is the vtable's userdata. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-errors.h"

/* Up to this many source-specific entries per domain in ListDomains' a{sv}: a source's own
 * (DOMAIN_EXTRAS_MAX) and the daemon's (same_as, view_of, owner). */
#define BUS_DOMAIN_EXTRAS_MAX 15

/* One source-specific entry, typed as the XML lists it, so that clients read a number as a
 * number ("probes" t, "connected" b), not a string to parse. type says which field holds
 * the value; 0 (the default, so that { key, value } reads as before) and 's' mean value. */
typedef struct BusDomainExtra {
        const char *key;                /* e.g. "pci_bus_id"; must not clash with the keys below */
        const char *value;              /* 's' */
        char type;                      /* 0 or 's', 'b', 'u', 't', 'x' or 'd' */
        bool b;
        uint32_t u;
        uint64_t t;
        int64_t x;
        double d;
} BusDomainExtra;

/* One domain as ListDomains reports it. Strings are borrowed from the core: they must stay
 * valid until the next call into the core (the handler copies them into the reply first). */
typedef struct BusDomainInfo {
        const char *name;
        const char *unit;               /* "ns", "ms", "us", "tick", ... */
        bool available;
        const char *reference;          /* the domain it is calibrated against */
        uint64_t resolution_ns;
        uint32_t wrap_bits;             /* 64 when it does not wrap */
        bool monotonic;
        int64_t rate_ppb;
        uint64_t uncertainty_ns;
        uint64_t rate_uncertainty_ppb;  /* bound of rate_ppb */
        int64_t last_calibrated_ns;     /* CLOCK_MONOTONIC; 0 for never */
        uint32_t perfetto_id;

        /* Optional: emitted only when set. */
        const char *verdict;            /* X time: "identity" or "tracked"; NULL: unset */
        const char *reason;             /* why it is unavailable ("no X display: ..."); NULL: unset */
        const char *device_name;        /* GPUs; NULL: unset */
        const char *driver;             /* GPUs; NULL: unset */
        double period_ns;               /* GPUs: ns per tick; <= 0: unset */
        bool has_offset_ns;
        int64_t offset_ns;              /* against CLOCK_MONOTONIC, when has_offset_ns */
        size_t n_extras;                /* <= BUS_DOMAIN_EXTRAS_MAX */
        BusDomainExtra extras[BUS_DOMAIN_EXTRAS_MAX];
} BusDomainInfo;

/* One entry of PushSnapshot's clocks: a domain and its reading. name is borrowed from the
 * message, valid during the call. */
typedef struct BusClockReading {
        const char *name;
        int64_t value;
} BusClockReading;

/* Why push_snapshot failed, for the error message: the entry at fault (SIZE_MAX: none in
 * particular) and a static phrase ("belongs to another client"); reason NULL: say nothing. */
typedef struct BusPushFailure {
        size_t index;
        const char *reason;
} BusPushFailure;

/* The daemon's side. Every int-returning callback returns 0 or a negative errno, which the
 * handler turns into our named error: -ENOENT UnknownDomain, -ENOLINK NoPath, -ENODEV and
 * -ENODATA Unavailable, -ERANGE OutOfRange, -EINVAL InvalidArgs, -EDQUOT QuotaExceeded,
 * -EEXIST NameTaken (anything else: sd-bus's own translation). Domain names reaching the core
 * are already valid (bus_domain_name_is_valid()), but may name no domain. All callbacks but
 * client_activity, shared_table_fd, push_snapshot, release_memory and out_of_fds are required. */
typedef struct BusCoreOps {
        size_t (*count_domains)(void *core);
        /* index < count_domains(); writes *ret (zeroed by the caller first). -ESRCH: no domain
         * at this index now (a departed client's): ListDomains skips it. */
        int (*get_domain)(void *core, size_t index, BusDomainInfo *ret);
        /* The index (as get_domain()'s) of the domain called name; -ENOENT when there is none.
         * A handler looks each name up once, so an unknown name is known to be that one. */
        int (*resolve)(void *core, const char *name, size_t *ret_index);
        /* from, to, domain: indices resolve() gave in the same method call. */
        int (*convert)(void *core, size_t from, size_t to, int64_t value,
                       int64_t *ret_value, uint64_t *ret_uncertainty_ns);
        int (*now)(void *core, size_t domain, int64_t *ret_value, uint64_t *ret_uncertainty_ns);
        /* *ret_json is malloc'ed; the caller frees it. */
        int (*export_snapshots)(void *core, char **ret_json);
        /* Constant for the life of the object (the properties say EmitsChangedSignal=const). */
        const char *(*version)(void *core);
        const char *(*reference_domain)(void *core);
        /* Called at the start of every method call of our interface: a client is active. */
        void (*client_activity)(void *core);
        /* The shared table's sealed memfd (calibrate/shared-table.h), borrowed: sd-bus dups it
         * into the reply. -ENODEV (or a NULL callback): no table, Unavailable. */
        int (*shared_table_fd)(void *core);
        /* PushSnapshot: n (BUS_API_SNAPSHOT_CLOCKS_MIN..MAX) readings with valid names, from
         * sender (the caller's unique bus name; NULL on a connection without a bus). On
         * failure *ret_failure (set to { SIZE_MAX, NULL } by the caller) may say why. NULL
         * callback: the method answers NotSupported. */
        int (*push_snapshot)(void *core, const char *sender, const BusClockReading *clocks, size_t n,
                             BusPushFailure *ret_failure);
        /* Called once a long queue of answers (a flood of calls, each answered, if only by an
         * error) has been sent, and a moment after clients left: the allocator may give the
         * memory back to the system (NULL: not asked). */
        void (*release_memory)(void *core);
        /* A call was refused because the daemon is at its limit of open files (errnum: EMFILE
         * or ENFILE): the daemon says so, once (NULL: not told). */
        void (*out_of_fds)(void *core, int errnum);
} BusCoreOps;

typedef struct BusApi BusApi;

/* Adds the vtable at BUS_API_OBJECT on bus (does not request the name: the daemon does that
 * with sd_bus_request_name() after this). ops must outlive the object. -EINVAL when a required
 * callback is missing. */
int bus_api_new(sd_bus *bus, const BusCoreOps *ops, void *core, BusApi **ret);

/* Removes the vtable. Accepts NULL; returns NULL. */
BusApi *bus_api_free(BusApi *api);

/* What closed a segment, as the Discontinuity signal names it. */
typedef enum BusDiscontinuityKind {
        BUS_DISCONTINUITY_STEP,         /* "step": the clock jumped (suspend, a clock set) */
        BUS_DISCONTINUITY_RATE,         /* "rate": its rate changed (an NTP slew) */
        BUS_DISCONTINUITY_RESTART,      /* "restart": a new clock (X server restart, GPU reset) */
} BusDiscontinuityKind;

const char *bus_discontinuity_kind_to_string(BusDiscontinuityKind kind);

/* Emit the signals; return 0 or -errno. DomainsChanged names the domains added, removed, and
 * those whose availability changed since the previous one (or since bus_api_new()). */
int bus_api_emit_discontinuity(BusApi *api, const char *domain, int64_t monotonic_ns, int64_t step_ns,
                               BusDiscontinuityKind kind);
int bus_api_emit_domains_changed(BusApi *api);

static inline void bus_api_freep(BusApi **p) {
        bus_api_free(*p);
}
