/* SPDX-License-Identifier: MIT */
#pragma once

/* What the x11 integration tests and bench-x11 read from timeconvd: one domain's ListDomains
 * entry, DomainsChanged, and waiting for a condition without sleeping (on the bus, re-reading
 * ListDomains at most every poll interval). */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct X11BusDomain {
        bool listed;                    /* false: ListDomains has no such entry */
        bool available;
        uint64_t uncertainty_ns;
        int64_t last_calibrated_ns;
        char verdict[32];               /* "" when absent */
        char same_as[64];
        char probes[32];
        char rtt_min_ns[32];
        char probe_cpu_ns[32];
        char reason[256];               /* why it is unavailable; "" when absent */
        char verdict_reason[160];
        char crtc[48];                  /* an msc domain's CRTC */
        double mode_refresh_hz;         /* an msc domain's RandR mode; 0 when absent */
} X11BusDomain;

/* -ENOENT when ListDomains has no entry called name. */
int x11_bus_domain(sd_bus *bus, const char *name, X11BusDomain *ret);

/* Counts DomainsChanged signals on bus. */
typedef struct X11BusWatch {
        sd_bus_slot *slot;
        unsigned changes;
} X11BusWatch;

int x11_bus_watch(sd_bus *bus, X11BusWatch *w);
void x11_bus_unwatch(X11BusWatch *w);

/* Processes bus until w->changes exceeds since (a DomainsChanged came); -ETIMEDOUT. */
int x11_bus_wait_changed(sd_bus *bus, X11BusWatch *w, unsigned since, int timeout_ms);

typedef bool (*X11BusCondition)(const X11BusDomain *d, void *userdata);

/* Reads name's entry until cond holds (0) or timeout_ms passes (-ETIMEDOUT); between reads it
 * waits on the bus (a signal ends the wait early). *ret (may be NULL) gets the last entry
 * (listed false while there is none). */
int x11_bus_wait_for(sd_bus *bus, const char *name, X11BusCondition cond, void *userdata, int timeout_ms,
                     X11BusDomain *ret);
