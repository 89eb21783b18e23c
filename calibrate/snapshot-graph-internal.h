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
        int64_t slack_ns;       /* error of one count converted to ns (a fractional period's rounding) */
        int64_t center_ns;      /* a truncating unit's count x means [x, x + 1) units: x's ns + this, */
        int64_t trunc_ns;       /* give or take this (0 for a unit that does not truncate) */
        uint32_t clock_id;      /* Perfetto's, for its tie-breaking between equal paths */
        bool non_monotonic;
        bool plain_ns;          /* unit ns, no wrap: readings are ns as they are */
        bool wraps;             /* wrap_bits < 64 or the X11 µs encoding: values are unwrapped */
        bool has_last;
        int64_t last_count;     /* the last reading, unwrapped: where values are unwrapped to */
} Domain;

/* Rates are kept in ppb within +-RATE_LIMIT_PPB (10 %): past it nothing about a clock is honest */
#define RATE_LIMIT_PPB 100000000
#define RATE_DEFAULT_PPB (SNAPSHOT_MAX_RATE_ERROR_PPM * 1000)

typedef struct Reading {        /* one clock of one snapshot, as added */
        int64_t ns;
        int64_t unc_ns;         /* SnapshotClock.uncertainty_ns */
        uint32_t snapshot;
        uint16_t domain;
        bool has_rate;
        int32_t rate_lo_ppb, rate_hi_ppb;       /* rate_ppb -+ rate_uncertainty_ppb, clamped */
} Reading;

/* Interval k of a pair seen from one side, what NEAREST's record of it needs in one place: the
 * fields of snapshot_nearest_record() that are not constants, and the values its shortcut takes
 * (snapshot_nearest_fast()). */
typedef struct NearestStep {
        int64_t src_ns, dst_ns;         /* snapshot k: the side's reading and the other's */
        int64_t bound_c_ns;             /* the record's bound_c_ns: Pair.slack_ns + Pair.unc_ns[k] */
        /* The shortcut takes lo_ns <= ns < lo_ns + width_ns: from src_ns (from 2^50 - 1 below it
         * for k = 0) to before the next snapshot and before src_ns + 2^50, where the answer
         * fits an int64. */
        int64_t lo_ns;
        uint64_t width_ns;
} NearestStep;

typedef struct Pair {
        uint16_t domain[2];     /* domain[0] < domain[1] */
        size_t n;
        int64_t *ns[2];         /* each side's reading in every common snapshot, file order */
        int64_t *unc_ns;        /* the two readings' uncertainties, summed, per common snapshot */
        /* NULL, or per common snapshot where both readings have a rate, the rate of the other
         * side against each side, minus 1, in ppb: [4k + 2s] the least, [4k + 2s + 1] the most
         * (RATE_DEFAULT_PPB's +-1000 ppm where a reading has none). DRIFT bounds interval k with
         * what snapshots k and k + 1 say (snapshot_drift_rates()). */
        int32_t *rate_ppb;
        /* The search's shortcut, per side whose readings never decrease (else first[] is NULL):
         * n buckets evenly over [ns[0], ns[n - 1]], bucket (v - ns[0])·mult >> 64, and
         * first[b] the last k whose reading lies in a bucket before b (0 if none): the interval
         * of a value in bucket b is one of first[b] .. first[b + 1] (pair_bucket_search()). */
        uint32_t *first[2];
        uint64_t mult[2];
        int64_t slack_ns;       /* both domains' Domain.slack_ns: what every hop on the pair adds */
        /* per side, n steps: a copy of ns[] and unc_ns[], so that a hop reads one or two cache
         * lines, not four */
        NearestStep *nearest[2];
} Pair;

typedef struct Hop {            /* first step of the path from one domain to another */
        uint32_t next;
        uint32_t pair;
} Hop;

/* The whole path from one domain to another in a cache line, so that a conversion finds every
 * hop's pair and cached interval at once instead of following the hops. */
typedef struct Route {
        /* The interval each hop used last, as its step (&Pair.nearest[side][k]), so that the next
         * value (in a trace, the next timestamp) skips the search and the step's address. Relaxed
         * atomics: threads share it, and any step of the hop's pair side is a valid guess. */
        const NearestStep *step[SNAPSHOT_MAX_HOPS];
        uint16_t edge[SNAPSHOT_MAX_HOPS];       /* pair << 1 | side: the side of the hop's source */
        uint8_t n_hops;                         /* 0: no path, or from == to */
        /* n_hops when from and to are both Domain.plain_ns, else 0: the hops of the shortcut loop
         * of snapshot_graph_convert(), which converts no unit */
        uint8_t plain_hops;
        uint8_t from_slack_ns;                  /* from's Domain.slack_ns where plain_hops > 0 (0 or 1) */
        uint8_t unused[64 - 8 * SNAPSHOT_MAX_HOPS - 2 * SNAPSHOT_MAX_HOPS - 3];
} Route;

_Static_assert(sizeof(Route) == 64, "a route is a cache line");
_Static_assert(SNAPSHOT_MAX_DOMAINS * (SNAPSHOT_MAX_DOMAINS - 1) <= UINT16_MAX, "pair << 1 | side fits Route.edge");

struct SnapshotGraph {
        Domain domains[SNAPSHOT_MAX_DOMAINS];
        size_t n_domains;
        Reading *readings;
        size_t n_readings, allocated_readings, n_snapshots;
        Pair *pairs;            /* built by finalize, like the rest below */
        size_t n_pairs;
        void *series;           /* every pair's ns[] and unc_ns[] */
        int32_t *rates;         /* every pair's rate_ppb[], when a reading has a rate */
        bool has_rates;
        uint32_t *buckets;      /* every pair's first[] */
        NearestStep *steps;     /* every pair's nearest[] */
        Hop *hops;              /* [from * n_domains + to], while finalize finds the paths */
        Route *routes;          /* [from * n_domains + to], 64-byte aligned */
        bool finalized;
};

/* The unwrapped count of a reading ts of d (snapshot-graph.h: wrapping domains): the occurrence
 * nearest d's last reading. */
int snapshot_domain_count(const Domain *d, int64_t ts, int64_t *ret_count);

/* An unwrapped count -> ns, the middle of a truncating unit's count (Domain.center_ns). */
int snapshot_domain_to_ns(const Domain *d, int64_t count, int64_t *ret_ns);

/* The bucket of v >= ns[0] on side s (first[s] not NULL). */
static inline size_t pair_bucket(const Pair *p, size_t s, int64_t v) {
        return (size_t) (((unsigned __int128) ((uint64_t) v - (uint64_t) p->ns[s][0]) * p->mult[s]) >> 64);
}
