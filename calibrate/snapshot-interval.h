/* SPDX-License-Identifier: MIT */
#pragma once

/* One interval of a pair's series as the map of a hop: k, the latest snapshot at or before the
 * value (else the first). NEAREST's is the conversion record (conv-record.h) of Perfetto's offset
 * from snapshot k: slope 1 and a bound growing by 1000 ppm of the distance. DRIFT's, strictly
 * between snapshots k and k + 1, is the middle of what both ends allow (snapshot-graph.h), in
 * 128-bit integers rounded outward; elsewhere NEAREST's record.
 *
 * snapshot_nearest_fast() is NEAREST's record applied without building it, for the values where
 * conv_record_map() reduces to 64-bit integer operations; it gives that record's answer and
 * bound to the bit (the proof is beside it, tests/calibrate/test-snapshot-interval.c checks it) and
 * declines every other value, which the record itself then answers: still one engine. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv-record.h"
#include "snapshot-graph-internal.h"

/* Q62 of 1/1000, rounded down: with CONV_RECORD_BOUND_CEIL the bound is exactly ceil(|d| / 1000)
 * for |d| < 2^50. */
#define NEAREST_BOUND_Q62 (INT64_C(4611686018427387904) / RATE_DIVISOR)
#define SPAN_Q62 (INT64_C(1) << 62)
/* Below this distance from the snapshot, NEAREST's bound term is ceil(|d| / 1000): see above. */
#define NEAREST_FAST_MAX_NS (INT64_C(1) << 50)

/* ceil(x / 1000) for x < 2^50 in one multiply: floor((x + 999)·M / 2^64) with M = ceil(2^64 /
 * 1000) = 2^64/1000 + e, 0 < e < 1. For y = x + 999 = 1000q + r (r <= 999, y < 2^51) it is
 * floor(q + r/1000 + y·e/2^64), and r/1000 + y·e/2^64 < 999/1000 + 2^-13 < 1: q, floor(y / 1000). */
#define NEAREST_CEIL_M UINT64_C(18446744073709552)
#define NEAREST_CEIL_DIV(x) ((uint64_t) (((unsigned __int128) ((x) + (RATE_DIVISOR - 1)) * NEAREST_CEIL_M) >> 64))
_Static_assert(RATE_DIVISOR == 1000, "NEAREST_CEIL_M is ceil(2^64 / RATE_DIVISOR)");

static inline int64_t snapshot_clamp_add(int64_t a, int64_t b) {
        int64_t r;

        return __builtin_add_overflow(a, b, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}

/* NEAREST's record of interval k (< p->n) of side -> !side: answers from src[k] (from 2^62 below
 * the first snapshot for k = 0) to just before src[k + 1] (2^62 past the last for the last). */
static inline __attribute__((always_inline)) void snapshot_nearest_record(const Pair *p, size_t side, size_t k,
                                                                          int64_t slack_ns, ConvRecord *ret) {
        const int64_t *src = p->ns[side], *dst = p->ns[!side];

        *ret = (ConvRecord) {
                .in_lo = k == 0 ? snapshot_clamp_add(src[0], -SPAN_Q62) : src[k],
                .in_hi = k + 1 == p->n ? snapshot_clamp_add(src[k], SPAN_Q62) : snapshot_clamp_add(src[k + 1], -1),
                .in_c = src[k], .out_c = dst[k],
                .slope = SPAN_Q62, .slope_neg = SPAN_Q62, .shift = 62,
                .bound_c_ns = slack_ns + p->unc_ns[k], .bound_slope = NEAREST_BOUND_Q62, .bound_shift = 62,
                .flags = CONV_RECORD_BOUND_CEIL,
        };
}

/* Interval k (< p->n) of side -> !side applied to ns: NEAREST's record, or in DRIFT between
 * snapshots k and k + 1 the middle of what both ends allow. CONV_RECORD_MISS when ns is outside the
 * record's range (far from every snapshot), -ERANGE when the answer does not fit. */
int snapshot_interval_map(const Pair *p, size_t side, size_t k, SnapshotMode mode, int64_t ns, int64_t slack_ns,
                          int64_t *ret_ns, uint64_t *ret_bound_ns);

/* The NEAREST steps of side (n, snapshot_nearest_fast()'s input) of a pair whose slack_ns is set,
 * as snapshot_nearest_record() with p->slack_ns reads them. */
void snapshot_nearest_steps(const Pair *p, size_t side, NearestStep *ret);

/* conv_record_map() of snapshot_nearest_record(p, side, k, p->slack_ns) at ns, given step k of
 * that pair side, when ns is within 2^50 ns of src[k] and inside the record's range; false
 * (nothing written) otherwise.
 *
 * Why it is the record's answer, to the bit. Taken, lo_ns <= ns < lo_ns + width_ns, that is
 * (snapshot_nearest_steps()): ns >= src[k], or k = 0 and ns > src[0] - 2^50; ns < src[k] +
 * 2^50; ns < src[k + 1] unless k is the last; and dst[k] + ns - src[k] fits an int64 (for the
 * others the record answers -ERANGE). So |ns - src[k]| < 2^50, and ns is in [in_lo, in_hi].
 * Above: in_lo = src[k], or for k = 0 in_lo = max(src[0] - 2^62, INT64_MIN), below both src[0]
 * - 2^50 and ns. Below: ns <= src[k + 1] - 1 = in_hi (no clamp: src[k + 1] > ns), or for the
 * last ns < src[k] + 2^50, so ns <= in_hi = min(src[k] + 2^62, INT64_MAX). There the record's
 * d = ns - in_c is the exact difference (no wrap). Its answer: p = d·2^62 + 0 and p >> 62 = d,
 * so out_c + d, which fits. Its bound: bound_c_ns + floor((|d|·Q + 2^62 - 1) / 2^62) with Q =
 * floor(2^62 / 1000) = 2^62/1000 - e, 0 <= e < 1, is ceil(|d|/1000 - |d|·e/2^62) where
 * |d|·e/2^62 < 2^-12: for |d| = 1000m that is m, and for |d| = 1000m + r, 0 < r < 1000, the
 * fraction r/1000 >= 1/1000 > 2^-12 keeps it above m, so m + 1: ceil(|d| / 1000) either way.
 * No residual term (out_period_q32 = 0). */
static inline __attribute__((always_inline)) bool snapshot_nearest_fast(const NearestStep *s, int64_t ns,
                                                                        int64_t *ret_ns, uint64_t *ret_bound_ns) {
        int64_t d;
        uint64_t ad;

        if (__builtin_expect((uint64_t) ns - (uint64_t) s->lo_ns >= s->width_ns, 0))
                return false;
        d = (int64_t) ((uint64_t) ns - (uint64_t) s->src_ns);        /* |d| < 2^50: no wrap */
        ad = d < 0 ? -(uint64_t) d : (uint64_t) d;
        *ret_ns = (int64_t) ((uint64_t) s->dst_ns + (uint64_t) d);   /* fits: the step's range */
        *ret_bound_ns = (uint64_t) s->bound_c_ns + NEAREST_CEIL_DIV(ad);
        return true;
}
