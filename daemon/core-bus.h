/* SPDX-License-Identifier: MIT */
#pragma once

/* The daemon's side of the bus API (BusCoreOps) answered from the core; the core is the userdata.
 * PushSnapshot and a domain's owner go to the application clocks, which the Daemon owns and lends
 * here through core_bus_set_applications(). */

#include <stddef.h>

#include "bus-api.h"
#include "core.h"

typedef struct CoreBusApplications {
        /* The unique bus name owning the application domain at index; NULL for any other. */
        const char *(*owner)(const void *userdata, size_t index);
        /* BusCoreOps.push_snapshot. */
        int (*push)(void *userdata, const char *sender, const BusClockReading *clocks, size_t n,
                    BusPushFailure *ret_failure);
        void *userdata;
} CoreBusApplications;

extern const BusCoreOps core_bus_ops;

/* apps (borrowed, NULL: none; PushSnapshot then answers -EOPNOTSUPP) for the core's bus side. */
void core_bus_set_applications(Core *c, const CoreBusApplications *apps);
