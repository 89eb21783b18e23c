/* SPDX-License-Identifier: MIT */
#pragma once

/* Offline conversion from snapshots (sets of simultaneous readings of two or more domains), with
 * Perfetto trace processor's semantics in NEAREST mode:
 *   - every pair of clocks in a snapshot is an edge both ways, each hop a constant offset taken
 *     from the latest snapshot whose source timestamp is <= the value, else the first one;
 *   - the path is the one with the fewest hops (breadth-first);
 *   - a domain whose timestamps go backwards across its snapshots keeps only its incoming edges
 *     (it can be a target, never a source or an intermediate hop);
 *   - equal timestamps are allowed, the last of an equal run is used.
 * DRIFT mode interpolates between the snapshot at or before the value and the next one when the
 * rate between them is plausible, and falls back to NEAREST across a discontinuity.
 *
 * Where the result can differ from Perfetto's: when a pair of domains is read together in
 * snapshots of different sets of clocks, we keep one series for the pair, all of them in file
 * order, and judge "backwards" on it (Perfetto keeps a series per set of clocks, uses the one
 * whose hash sorts first and judges each). As in Perfetto, paths longer than 4 hops are not
 * taken and equal paths go through the smaller Perfetto clock id (clock-id.h).
 *
 * Uncertainty (ns): the bound assumes that no two clocks' rates differ by more than 1000 ppm
 * (SNAPSHOT_MAX_RATE_ERROR_PPM in snapshot-graph-internal.h), or, between two snapshots whose
 * readings say how their clocks' rates relate (SnapshotClock.has_rate: timeconvd's export gives
 * its models' rates and their bounds), by more than those rates allow. Per hop, NEAREST adds
 * ceil(|value - the snapshot's source ts| * 1000 ppm) and the two readings' own uncertainties
 * (SnapshotClock, 0 unless given: timeconvd's export gives each reading the bound of the live
 * conversion that made it, so that an offline answer carries the live one's bound). DRIFT,
 * between two snapshots, takes what both ends allow: from each end, its readings' uncertainties
 * and the rates between (1000 ppm, and the readings' rate bounds where given), the intersection
 * of the two intervals and of NEAREST's; it answers its middle, so it is never looser than
 * NEAREST (where the two ends disagree, a discontinuity, it answers as NEAREST). A reading of a
 * domain with a fractional period adds 1 ns, of a truncating domain one period; the final
 * conversion adds its rounding (unit_from_ns). Hops add up.
 *
 * Wrapping domains (wrap_bits < 64, the X11 µs encoding) are read as the live graph reads them:
 * the readings of each such domain are unwrapped in file order, each to the occurrence nearest
 * the one before; a value to convert is unwrapped to the occurrence nearest the domain's last
 * reading (the export's "now", as live unwraps to the occurrence nearest the current time); an
 * answer in such a domain is given in its wire form (unit_wrap()).
 *
 * Building allocates; converting does not.
 * Errors: -ENOENT unknown domain, -ENOLINK no path, -ERANGE out of range, -EINVAL bad argument
 * (also: declare or add after finalize, convert before it), -ENOSPC more than 256 domains. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "units.h"

typedef struct SnapshotGraph SnapshotGraph;

typedef enum SnapshotMode {
        SNAPSHOT_MODE_NEAREST,
        SNAPSHOT_MODE_DRIFT,
} SnapshotMode;

/* The largest uncertainty a reading may carry: a pair sums two, a hop adds 1000 ppm of at most
 * 2^62 ns (< 2^53) and the units' rounding, and a path has at most four hops, so a conversion's
 * bound stays below 2^63 whatever the readings say (2^61, the limit before, could wrap 2^64). */
#define SNAPSHOT_UNCERTAINTY_MAX_NS (INT64_C(1) << 58)

typedef struct SnapshotClock {
        const char *domain;
        int64_t ts;             /* in the domain's unit */
        /* How far ts may be from the time the snapshot stands for, in ns (>= 0; 0: exact): a
         * reading that is itself a live conversion (timeconvd's export) carries that
         * conversion's bound, and every offline answer through the snapshot carries it too. */
        int64_t uncertainty_ns;
        /* Optional (has_rate): the clock's rate against the snapshot's reference clock, minus
         * nominal, in ppb, and a bound of its error (>= 0): the reference itself reads 0, 0.
         * Between two snapshots whose readings of a pair both have it, DRIFT bounds the pair's
         * rate by them instead of by 1000 ppm. */
        bool has_rate;
        int64_t rate_ppb;
        int64_t rate_uncertainty_ppb;
        /* Optional (has_frac), for a truncating unit: where in ts's unit the instant was, in ns
         * past its start (0 <= frac_ns < the period), which a reading in whole units lost; its
         * uncertainty_ns is then that of ts + frac_ns. Without it a truncated reading stands for
         * its unit's middle, half a unit either side. */
        bool has_frac;
        int64_t frac_ns;
} SnapshotClock;

int snapshot_graph_new(SnapshotGraph **ret);
SnapshotGraph *snapshot_graph_free(SnapshotGraph *g);

/* Declares a domain's unit (default: ns). Before any snapshot mentions it. -EEXIST if known. */
int snapshot_graph_declare(SnapshotGraph *g, const char *name, const DomainUnit *unit);

/* Adds one snapshot of n >= 2 clocks; -EINVAL for n < 2 or a domain twice in one snapshot. */
int snapshot_graph_add(SnapshotGraph *g, const SnapshotClock *clocks, size_t n);

/* Sorts nothing (snapshot order is file order, as in Perfetto), finds the non-monotonic domains,
 * and precomputes the shortest paths. Call once after the last add. */
int snapshot_graph_finalize(SnapshotGraph *g);

int snapshot_graph_find(const SnapshotGraph *g, const char *name, size_t *ret_index);
size_t snapshot_graph_count(const SnapshotGraph *g);
const char *snapshot_graph_name(const SnapshotGraph *g, size_t index);

/* ret_uncertainty_ns may be NULL. from == to gives the value back unchanged, as in Perfetto. */
int snapshot_graph_convert(const SnapshotGraph *g, SnapshotMode mode, size_t from, size_t to,
                           int64_t value, int64_t *ret_value, int64_t *ret_uncertainty_ns);
