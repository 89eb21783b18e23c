/* SPDX-License-Identifier: MIT */
#pragma once

/* A bounded ring of calibration snapshots: after each scheduler tick, the hub's time r and every
 * calibrated domain's value at r, as the models said then. ExportSnapshots() hands the ring out
 * as a JSON snapshot file (DESIGN.md), which offline conversion loads. When full, the oldest
 * snapshot goes: memory is fixed when the ring is made. */

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

#define SNAPSHOT_RING_CAPACITY 512

typedef struct SnapshotEntry {
        int64_t r_ns;
        uint64_t present;                       /* bit i: values[i] holds node i's value */
        int64_t values[GRAPH_NODES_MAX];        /* in each node's unit (wire form) */
        /* The bound of each value's conversion from r_ns (exported as "unc_ns": offline answers
         * carry it); a value uncertain by more than 2^32 ns is left out. */
        uint32_t uncertainties_ns[GRAPH_NODES_MAX];
        /* A truncating node's value is a whole unit (X ms): where in it the time was, in ns
         * (exported as "frac_ns"), which its bound then leaves out; 0 for other nodes. */
        uint32_t fracs_ns[GRAPH_NODES_MAX];
        /* Each value's model then: its rate against the hub minus 1 in ppb, and a bound of that
         * (exported as "rate_ppb" and "rate_unc_ppb": offline DRIFT bounds the rate between two
         * snapshots by them, as the live model did, instead of by 1000 ppm). UINT32_MAX: none. */
        int32_t rates_ppb[GRAPH_NODES_MAX];
        uint32_t rate_uncertainties_ppb[GRAPH_NODES_MAX];
        /* The kernel's maxerror and esterror of realtime against UTC then (-1: not synchronised
         * or not known), exported with the realtime reading: what relates two machines' exports. */
        int64_t utc_maxerror_ns, utc_esterror_ns;
} SnapshotEntry;

typedef struct SnapshotRing {
        SnapshotEntry *entries;
        size_t capacity;
        size_t head;                            /* the oldest */
        size_t n;
} SnapshotRing;

int snapshot_ring_new(size_t capacity, SnapshotRing **ret);
SnapshotRing *snapshot_ring_free(SnapshotRing *ring);

/* Records the value of every available, calibrated node of g at hub time r_ns. */
void snapshot_ring_take(SnapshotRing *ring, const ClockGraph *g, int64_t r_ns);

/* The kernel's word on realtime against UTC (ntp-state.h: -1, -1 for none) for the snapshot
 * just taken. */
void snapshot_ring_set_utc(SnapshotRing *ring, int64_t maxerror_ns, int64_t esterror_ns);

size_t snapshot_ring_count(const SnapshotRing *ring);
const SnapshotEntry *snapshot_ring_get(const SnapshotRing *ring, size_t i);     /* 0 = oldest */

/* The unit's name on the bus and in snapshot files: "ns", "us", "ms" or "tick". */
const char *snapshot_unit_name(const DomainUnit *u);

/* The ring as a JSON snapshot file, oldest first; *ret_json is malloc'ed. Domains are described
 * from g (names and units); unit_names (NULL, or an entry per node, NULL for none) names a unit
 * as ListDomains does ("frame" for msc), else snapshot_unit_name(). */
int snapshot_ring_export(const SnapshotRing *ring, const ClockGraph *g, const char *const *unit_names,
                         char **ret_json);
