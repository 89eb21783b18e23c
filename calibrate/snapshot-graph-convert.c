/* SPDX-License-Identifier: MIT */

/* Converting along the paths finalize found. Each hop is a conversion record (conv-record.h) of
 * the interval the value falls in, built here in integers: NEAREST, Perfetto's offset from the
 * latest snapshot at or before the value (slope 1, the bound growing by 1000 ppm of the distance);
 * DRIFT, where the rate is plausible, the line through the interval's two snapshots (two records,
 * one per half, each bounded from its own end: the bound of snapshot-graph.h). The interval each
 * hop used last is cached per (from, to): a record answers only inside its interval, so a value
 * in the same intervals (sequential values, the common case in a trace) skips the searches. No
 * allocation, no floating point. */

#include <errno.h>

#include "conv-record.h"
#include "snapshot-graph-internal.h"

/* Q62 of 1/1000 and 2/1000, rounded down: with CONV_RECORD_BOUND_CEIL the bound is exactly
 * ceil(|d| / 1000) (and / 500) for |d| < 2^50. */
#define NEAREST_BOUND_Q62 (INT64_C(4611686018427387904) / RATE_DIVISOR)
#define DRIFT_BOUND_Q62 (INT64_C(4611686018427387904) / (RATE_DIVISOR / 2))
#define SPAN_Q62 (INT64_C(1) << 62)

/* Largest k with ts[k] <= v, else 0: Perfetto's upper_bound() - 1, clamped to the first. */
static size_t floor_index(const int64_t *ts, size_t n, int64_t v) {
        const int64_t *base = ts;

        for (size_t half; n > 1; n -= half) {
                half = n / 2;
                base = base[half] <= v ? base + half : base;
        }
        return (size_t) (base - ts);
}

/* floor_index() of the side's readings, through the buckets where the side has them: a search of
 * the few readings of one bucket (one or two for snapshots taken at a steady pace). */
static size_t pair_search(const Pair *p, size_t side, int64_t v) {
        const int64_t *ts = p->ns[side];
        size_t b, lo, hi;

        if (!p->first[side])
                return floor_index(ts, p->n, v);
        if (v < ts[0])
                return 0;
        if (v >= ts[p->n - 1])
                return p->n - 1;
        b = pair_bucket(p, side, v);
        lo = p->first[side][b];
        hi = p->first[side][b + 1];
        return lo + floor_index(ts + lo, hi - lo + 1, v);
}

static int64_t clamp_add(int64_t a, int64_t b) {
        int64_t r;

        return __builtin_add_overflow(a, b, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}

/* NEAREST's record of interval k: every field but four a constant, so that conv_record_map()
 * inlined on it folds to an add and a multiply for the bound. */
static inline __attribute__((always_inline)) void nearest_record(const Pair *p, size_t side, size_t k,
                                                                 int64_t slack_ns, ConvRecord *ret) {
        const int64_t *src = p->ns[side], *dst = p->ns[!side];

        *ret = (ConvRecord) {
                .in_lo = k == 0 ? clamp_add(src[0], -SPAN_Q62) : src[k],
                .in_hi = k + 1 == p->n ? clamp_add(src[k], SPAN_Q62) : clamp_add(src[k + 1], -1),
                .in_c = src[k], .out_c = dst[k],
                .slope = SPAN_Q62, .slope_neg = SPAN_Q62, .shift = 62,
                .bound_c_ns = slack_ns + p->unc_ns[k], .bound_slope = NEAREST_BOUND_Q62, .bound_shift = 62,
                .flags = CONV_RECORD_BOUND_CEIL,
        };
}

/* The record of interval k of src -> dst for value ns (DRIFT picks the half ns is in). */
static void hop_record(const Pair *p, size_t side, size_t k, SnapshotMode mode, int64_t ns, int64_t slack_ns,
                       ConvRecord *ret) {
        const int64_t *src = p->ns[side], *dst = p->ns[!side];
        int64_t lo = k == 0 ? clamp_add(src[0], -SPAN_Q62) : src[k];
        int64_t hi = k + 1 == p->n ? clamp_add(src[k], SPAN_Q62) : clamp_add(src[k + 1], -1);
        int64_t slope = p->slope_q62[side][k < p->n - 1 ? k : 0];

        *ret = (ConvRecord) {
                .in_lo = lo, .in_hi = hi, .in_c = src[k], .out_c = dst[k],
                .slope = SPAN_Q62, .slope_neg = SPAN_Q62, .shift = 62,
                .bound_c_ns = slack_ns + p->unc_ns[k], .bound_slope = NEAREST_BOUND_Q62, .bound_shift = 62,
                .flags = CONV_RECORD_BOUND_CEIL,
        };
        if (mode != SNAPSHOT_MODE_DRIFT || k + 1 >= p->n || slope == 0 || ns <= src[k] || ns >= src[k + 1])
                return;
        /* DRIFT: the interval's line, rounded to nearest (+1/2), bounded from the nearer end. */
        {
                uint64_t dx = (uint64_t) src[k + 1] - (uint64_t) src[k], half = dx / 2;

                ret->slope = slope + 1;
                ret->slope_neg = slope;
                ret->out_frac = INT64_C(1) << 61;
                /* between two snapshots the line's error is at most the larger of theirs */
                ret->bound_c_ns = slack_ns + 1 + (p->unc_ns[k] > p->unc_ns[k + 1] ? p->unc_ns[k] : p->unc_ns[k + 1]);
                ret->bound_slope = DRIFT_BOUND_Q62;
                if ((uint64_t) ns - (uint64_t) src[k] <= half) {
                        ret->in_lo = src[k] + 1;
                        ret->in_hi = (int64_t) ((uint64_t) src[k] + half);
                } else {
                        ret->in_c = src[k + 1];
                        ret->out_c = dst[k + 1];
                        ret->in_lo = (int64_t) ((uint64_t) src[k] + half + 1);
                        ret->in_hi = src[k + 1] - 1;
                }
        }
}

/* One hop from cur; adds its bound, with both readings' rounding, to *unc. */
static int hop_convert(const SnapshotGraph *g, size_t cur, SnapshotMode mode, size_t to, uint32_t *cache,
                       int64_t *ns, uint64_t *unc) {
        const Hop *h = &g->hops[cur * g->n_domains + to];
        const Pair *p = &g->pairs[h->pair];
        size_t side = cur > h->next;
        int64_t slack_ns = g->domains[cur].slack_ns + g->domains[h->next].slack_ns, out, bound;
        size_t k = __atomic_load_n(cache, __ATOMIC_RELAXED);
        ConvRecord rec;
        int r;

        /* The cached interval answers when the value is inside it; else Perfetto's search. */
        if (mode == SNAPSHOT_MODE_NEAREST && __builtin_expect(k < p->n, 1)) {
                nearest_record(p, side, k, slack_ns, &rec);
                r = conv_record_map(&rec, *ns, &out, &bound);
                if (__builtin_expect(r != -ESTALE, 1))
                        goto done;
        } else if (k < p->n) {
                hop_record(p, side, k, mode, *ns, slack_ns, &rec);
                r = conv_record_map(&rec, *ns, &out, &bound);
                if (__builtin_expect(r != -ESTALE, 1))
                        goto done;
        }
        k = pair_search(p, side, *ns);
        __atomic_store_n(cache, (uint32_t) k, __ATOMIC_RELAXED);
        hop_record(p, side, k, mode, *ns, slack_ns, &rec);
        r = conv_record_map(&rec, *ns, &out, &bound);
        if (r == -ESTALE)
                return -ERANGE;         /* further than 2^62 ns from the snapshots */
done:
        if (r < 0)
                return r;
        *ns = out;
        *unc += (uint64_t) bound;
        return 0;
}

int snapshot_graph_convert(const SnapshotGraph *g, SnapshotMode mode, size_t from, size_t to,
                           int64_t value, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int64_t ns, out, error_ns;
        uint32_t *cache;
        uint64_t unc;
        int r;

        if (!g || !g->finalized || !ret_value ||
            (mode != SNAPSHOT_MODE_NEAREST && mode != SNAPSHOT_MODE_DRIFT))
                return -EINVAL;
        if (from >= g->n_domains || to >= g->n_domains)
                return -ENOENT;
        if (from == to) {       /* Perfetto too: unchanged, whatever the domain */
                *ret_value = value;
                if (ret_uncertainty_ns)
                        *ret_uncertainty_ns = 0;
                return 0;
        }
        if (g->hops[from * g->n_domains + to].next == NO_HOP)
                return -ENOLINK;

        if (g->domains[from].plain_ns)
                ns = value;
        else if ((r = unit_to_ns(&g->domains[from].unit, value, &ns)) < 0)
                return r;
        unc = (uint64_t) g->domains[from].slack_ns;
        cache = &g->cache[(from * g->n_domains + to) * SNAPSHOT_MAX_HOPS];
        for (size_t cur = from; cur != to; cur = g->hops[cur * g->n_domains + to].next) {
                r = hop_convert(g, cur, mode, to, cache++, &ns, &unc);
                if (r < 0)
                        return r;
        }
        if (g->domains[to].plain_ns) {
                out = ns;
                error_ns = 0;
        } else if ((r = unit_from_ns(&g->domains[to].unit, ns, &out, &error_ns)) < 0)
                return r;
        unc += (uint64_t) error_ns;
        if (unc > INT64_MAX)
                return -ERANGE;
        *ret_value = out;
        if (ret_uncertainty_ns)
                *ret_uncertainty_ns = (int64_t) unc;
        return 0;
}
