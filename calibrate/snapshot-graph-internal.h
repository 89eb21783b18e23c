/* SPDX-License-Identifier: MIT */
#pragma once

/* The snapshot graph's layout, shared by its two halves: building (snapshot-graph.c: the
 * snapshots, the series per pair, Perfetto's path search) and converting along the paths
 * (snapshot-graph-convert.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot-graph.h"

#define SNAPSHOT_MAX_DOMAINS 256
#define SNAPSHOT_MAX_HOPS 4
#define SNAPSHOT_MAX_RATE_ERROR_PPM 1000
#define RATE_DIVISOR (1000000 / SNAPSHOT_MAX_RATE_ERROR_PPM)   /* error = distance / this */
#define NO_HOP UINT32_MAX

typedef struct Domain {
        char *name;
        DomainUnit unit;
        int64_t slack_ns;       /* error of one reading converted to ns */
        uint32_t clock_id;      /* Perfetto's, for its tie-breaking between equal paths */
        bool non_monotonic;
        bool plain_ns;          /* unit ns, no wrap: readings are ns as they are */
} Domain;

typedef struct Reading {        /* one clock of one snapshot, as added */
        size_t snapshot;
        int64_t ns;
        int64_t unc_ns;         /* SnapshotClock.uncertainty_ns */
        uint16_t domain;
} Reading;

typedef struct Pair {
        uint16_t domain[2];     /* domain[0] < domain[1] */
        size_t n;
        int64_t *ns[2];         /* each side's reading in every common snapshot, file order */
        int64_t *unc_ns;        /* the two readings' uncertainties, summed, per common snapshot */
        /* per interval: d(other)/d(this) in Q62, rounded down; 0 if implausible (DRIFT's slope) */
        int64_t *slope_q62[2];
        /* The search's shortcut, per side whose readings never decrease (else first[] is NULL):
         * n buckets evenly over [ns[0], ns[n - 1]], bucket (v - ns[0])·mult >> 64, and
         * first[b] the last k whose reading lies in a bucket before b (0 if none): the interval
         * of a value in bucket b is one of first[b] .. first[b + 1] (pair_bucket_search()). */
        uint32_t *first[2];
        uint64_t mult[2];
} Pair;

typedef struct Hop {            /* first step of the path from one domain to another */
        uint32_t next;
        uint32_t pair;
} Hop;

struct SnapshotGraph {
        Domain domains[SNAPSHOT_MAX_DOMAINS];
        size_t n_domains;
        Reading *readings;
        size_t n_readings, allocated_readings, n_snapshots;
        Pair *pairs;            /* built by finalize, like the rest below */
        size_t n_pairs;
        void *series;           /* every pair's ns[] and slope[] */
        uint32_t *buckets;      /* every pair's first[] */
        Hop *hops;              /* [from * n_domains + to] */
        /* [(from * n_domains + to) * SNAPSHOT_MAX_HOPS + hop]: the interval each hop of the path
         * used last, so that the next value (in a trace, the next timestamp) skips the search.
         * Relaxed atomics: threads share it, and any index in it is a valid guess. */
        uint32_t *cache;
        bool finalized;
};

/* The bucket of v >= ns[0] on side s (first[s] not NULL). */
static inline size_t pair_bucket(const Pair *p, size_t s, int64_t v) {
        return (size_t) (((unsigned __int128) ((uint64_t) v - (uint64_t) p->ns[s][0]) * p->mult[s]) >> 64);
}
