/* SPDX-License-Identifier: MIT */
#pragma once

/* The one place that tells the world what changed. The models (core.h, app-clocks.h) and the
 * scheduler describe a change in a DaemonChange and hand it here: the shared table is written
 * first, so that a client that acts on a signal finds the new models in its fast path, then
 * Discontinuity goes out for each domain that stepped (and every view of it), then
 * DomainsChanged. A signal that cannot be sent is only logged: a client that misses it still
 * sees the change in ListDomains. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus-api.h"
#include "core.h"
#include "log.h"

/* A push may step every application domain it names. */
#define DAEMON_CHANGE_DISCONTINUITIES_MAX BUS_API_SNAPSHOT_CLOCKS_MAX

typedef struct DaemonDiscontinuity {
        size_t index;                   /* the domain; its views are told as well */
        int64_t step_ns;
        BusDiscontinuityKind kind;
} DaemonDiscontinuity;

typedef struct DaemonChange {
        bool added;                     /* domains joined the list (DomainsChanged, the table) */
        bool removed;                   /* domains left it (the same) */
        bool changed;                   /* a domain's availability changed (DomainsChanged) */
        bool models;                    /* models moved: the table is written, nobody is told */
        DaemonDiscontinuity discontinuities[DAEMON_CHANGE_DISCONTINUITIES_MAX];
        size_t n_discontinuities;
} DaemonChange;

/* Adds a discontinuity of domain index to ch; one too many is dropped (a signal is best effort). */
void daemon_change_discontinuity(DaemonChange *ch, size_t index, int64_t step_ns, BusDiscontinuityKind kind);

/* Writes the table (when anything but availability changed) and then emits the signals on api
 * (NULL: no signals). Returns whether it wrote the table. */
bool daemon_publish(Core *core, BusApi *api, const Log *log, const DaemonChange *ch);
