/* SPDX-License-Identifier: MIT */
#pragma once

/* What the application-clock tests do on the bus: PushSnapshot, one domain out of ListDomains,
 * the signals, and the synthetic clocks whose truth the tests know. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-api.h"

/* PushSnapshot(clocks); 0 or the negative errno, e gets the error. */
int ac_push(sd_bus *bus, const BusClockReading *clocks, size_t n, sd_bus_error *e);

/* A snapshot of two: known domain's reading and app domain's. */
int ac_push2(sd_bus *bus, const char *known, int64_t known_value, const char *app, int64_t app_value,
             sd_bus_error *e);

/* One domain as ListDomains shows it. */
typedef struct AcDomain {
        bool found;
        bool available;
        bool monotonic;
        char owner[256];                /* "" without one */
} AcDomain;

int ac_domain(sd_bus *bus, const char *name, AcDomain *ret);

/* How many ListDomains entries have an owner. */
int ac_count_owned(sd_bus *bus, size_t *ret);

/* Counts the daemon's DomainsChanged and Discontinuity signals. */
typedef struct AcSignals {
        sd_bus_slot *slots[2];
        unsigned domains_changed;
        unsigned discontinuities;
        char last_domain[64];           /* of the latest Discontinuity */
        int64_t last_step_ns;
} AcSignals;

int ac_signals_watch(sd_bus *bus, AcSignals *s);
void ac_signals_unwatch(AcSignals *s);

/* Processes bus until *counter is above `above`, up to timeout_ms: 0 or -ETIMEDOUT. */
int ac_wait(sd_bus *bus, const unsigned *counter, unsigned above, int timeout_ms);

/* Until ListDomains lists name (listed) or not, following DomainsChanged: 0 or -ETIMEDOUT. */
int ac_wait_listed(sd_bus *bus, AcSignals *s, const char *name, bool listed, int timeout_ms);

/* Until ListDomains has n entries with an owner: 0 or -ETIMEDOUT. */
int ac_wait_owned(sd_bus *bus, AcSignals *s, size_t n, int timeout_ms);

/* A synthetic clock: x = x0 + (r - r0) * (1 + ppb / 1e9), r on the known domain's clock. */
typedef struct AcTruth {
        int64_t r0_ns;
        int64_t x0_ns;
        int64_t ppb;
} AcTruth;

/* The reading (an integer within 1 ns of the line) and the line's inverse (within 2 ns). */
int64_t ac_truth_x(const AcTruth *t, int64_t r_ns);
int64_t ac_truth_r(const AcTruth *t, int64_t x_ns);

/* Whether value +- uncertainty meets [truth - 2, truth + 2] (the truth's own rounding). */
bool ac_holds(int64_t value, uint64_t uncertainty_ns, int64_t truth);

/* Pushes n snapshots of domain app against known, step_ns apart from known value r_first_ns;
 * returns how many succeeded. */
int ac_push_series(sd_bus *bus, const char *known, const char *app, const AcTruth *t, int64_t r_first_ns,
                   int64_t step_ns, int n);
