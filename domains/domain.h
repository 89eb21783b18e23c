/* SPDX-License-Identifier: MIT */
#pragma once

/* The interface every clock source implements. A source (posix, fake, x11, vulkan) lists the
 * domains it can offer, opens one, reads bursts of bracketed samples into caller-provided
 * memory, and may have an fd for the event loop to watch. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "units.h"

#define DOMAIN_NAME_MAX 64

typedef struct DomainInfo {
        char name[DOMAIN_NAME_MAX];
        DomainUnit unit;
        int64_t resolution_ns;          /* clock_getres() or equivalent */
        bool monotonic;                 /* never goes backwards */
        uint32_t perfetto_id;
        /* Non-empty: this entry is another name for the domain named here, in its own unit
         * (x11_us for x11, a GPU's stable alias for gpuN). A view is never opened: it shares the
         * domain's samples, model, availability and status. List it after the domain. */
        char view_of[DOMAIN_NAME_MAX];
        /* What ListDomains calls the unit ("tick" for a GPU, whatever its period); empty: named
         * from the period (ns, us, ms). */
        char unit_name[8];
        /* A reading lags the time the model follows by 0 to lag_ns (a _COARSE clock shows the
         * time of its last tick): the model fits [x, x + lag_ns], and a conversion to or from
         * a reading carries the lag in its bound. 0 for a clock read as it is. */
        int64_t lag_ns;
} DomainInfo;

#define DOMAIN_EXTRAS_MAX 12

/* What a source says about an open domain beyond its samples. Strings are borrowed from the
 * Domain and stay valid until the next call on it. */
/* One source-specific entry, typed: type is the key's D-Bus signature as the bus's key table
 * (bus-api/bus-domain-keys.c) and the XML list it, and says which field holds the value. The
 * daemon leaves out an entry whose type is not the key's. */
typedef struct DomainExtra {
        const char *key;                /* lower_case, e.g. "pci_bus_id" */
        char type;                      /* 's', 'b', 'u', 't', 'x' or 'd' */
        union {
                const char *s;
                bool b;
                uint32_t u;
                uint64_t t;
                int64_t x;
                double d;
        };
} DomainExtra;

#define DOMAIN_EXTRA_S(k, v) ((DomainExtra) { .key = (k), .type = 's', .s = (v) })
#define DOMAIN_EXTRA_B(k, v) ((DomainExtra) { .key = (k), .type = 'b', .b = (v) })
#define DOMAIN_EXTRA_U(k, v) ((DomainExtra) { .key = (k), .type = 'u', .u = (v) })
#define DOMAIN_EXTRA_T(k, v) ((DomainExtra) { .key = (k), .type = 't', .t = (v) })
#define DOMAIN_EXTRA_X(k, v) ((DomainExtra) { .key = (k), .type = 'x', .x = (v) })
#define DOMAIN_EXTRA_D(k, v) ((DomainExtra) { .key = (k), .type = 'd', .d = (v) })

typedef struct DomainStatus {
        /* Changes when the clock itself restarted (a new X server, a GPU reset): the daemon
         * closes the domain's segment, so that old values keep the old model. */
        uint64_t generation;
        const char *verdict;            /* NULL, or e.g. "identity" / "tracked" for X time */
        /* NULL, or the name of a domain this one equals exactly right now (X time that is
         * CLOCK_MONOTONIC in ms): conversions then go through that domain with no model error. */
        const char *same_as;
        const char *device_name;        /* GPUs; NULL: unset */
        const char *driver;             /* GPUs; NULL: unset */
        size_t n_extras;
        DomainExtra extras[DOMAIN_EXTRAS_MAX];
        /* With same_as: how far (ns, >= 0) the clock may still be from that domain. The identity
         * is a hypothesis the probes pin only to a window; a conversion through same_as adds this
         * to its bound. 0 without same_as. */
        int64_t same_as_uncertainty_ns;
        /* Changes when the source knows the clock's rate changed (the kernel's NTP discipline,
         * for the POSIX clocks it steers): the segment closes at once, not when the samples stop
         * fitting, and the next one starts from the old rate moved by rate_change_ppb, give or
         * take rate_change_margin_ppb, as a prior the samples may overrule. 0 when the source
         * cannot tell. */
        uint64_t rate_epoch;
        int64_t rate_change_ppb;
        int64_t rate_change_margin_ppb;
        /* Why the clock cannot be read now ("no X display: ...", "the X server on :1 went
         * away"), for ListDomains and the Unavailable error; NULL when it can, or cannot say. */
        const char *unavailable_reason;
        /* Changes when the source would list other domains than before (a monitor plugged in):
         * listed[] is what it lists now, and the daemon adds those it does not have, opening each
         * with the source's config. 0 and none when the source cannot tell. */
        uint64_t list_epoch;
        const DomainInfo *listed;
        size_t n_listed;
} DomainStatus;

typedef struct Domain Domain;

typedef struct DomainOps {
        const char *source;

        /* Lists what this source can open on this machine, up to n_max. config is source-specific
         * (may be NULL), the same that open() gets. */
        int (*enumerate)(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n);

        /* Opens the domain called name. config is source-specific (may be NULL); the source copies
         * what it keeps. */
        int (*open)(const char *name, const void *config, Domain **ret);

        /* Reads up to n_max samples; samples are in the domain's ns, unwrapped, and the reference
         * is CLOCK_MONOTONIC_RAW (the fake source's is simulated). A source whose clock went away
         * (server gone, device lost) fails with -ENOTCONN / -ENODEV and tries to come back in a
         * later call (its own backoff): the daemon keeps calling at its cadence. */
        int (*sample_burst)(Domain *d, Sample *samples, size_t n_max, size_t *ret_n);

        /* An fd for the event loop to watch for input (EPOLLIN), or -EOPNOTSUPP, or -ENOTCONN
         * while disconnected. The daemon asks again after every sample_burst() and dispatch():
         * the fd may change across a reconnection. */
        int (*watch_fd)(Domain *d);

        /* Optional (may be NULL): the watch fd is readable; read and handle what is pending
         * without blocking. -ENOTCONN when the connection died: the daemon marks the domain
         * unavailable at once. */
        int (*dispatch)(Domain *d);

        /* Optional (may be NULL): whether the next burst may wait on something outside the process
         * for long (a GPU's driver creating an instance to reconnect): the daemon then reads it on
         * a thread, as it reads every burst of a source with a connection (dispatch). */
        bool (*burst_may_block)(Domain *d);

        /* Optional (may be NULL): the dynamic status, see DomainStatus. */
        int (*status)(Domain *d, DomainStatus *ret);

        const DomainInfo *(*info)(Domain *d);

        Domain *(*close)(Domain *d);
} DomainOps;

/* Every source's struct Domain starts with its DomainInfo, so one info() serves them all. */
static inline const DomainInfo *domain_info_first(Domain *d) {
        return (const DomainInfo *) d;
}

/* watch_fd() of a source that is read only in bursts and never has input to wait for. */
static inline int domain_no_watch_fd(Domain *d) {
        return -EOPNOTSUPP;
}

/* Defines domain_<name>_ops from the functions every source names <name>_enumerate, _open,
 * _sample_burst and _close, so the list of members is written once; the arguments add what
 * differs between sources (watch_fd always, dispatch and status where the source has them). */
#define DOMAIN_OPS_DEFINE(name, ...)                                    \
        const DomainOps domain_##name##_ops = {                         \
                .source = #name,                                        \
                .enumerate = name##_enumerate,                          \
                .open = name##_open,                                    \
                .sample_burst = name##_sample_burst,                    \
                .info = domain_info_first,                              \
                .close = name##_close,                                  \
                __VA_ARGS__                                             \
        }

extern const DomainOps domain_posix_ops;
extern const DomainOps domain_fake_ops;
extern const DomainOps domain_x11_ops;         /* domains/x11.c, config: X11Config (x11.h) */
extern const DomainOps domain_vulkan_ops;      /* domains/vulkan.c, config: VulkanConfig (vulkan.h) */
