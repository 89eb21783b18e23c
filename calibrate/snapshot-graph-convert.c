/* SPDX-License-Identifier: MIT */

/* Converting along the paths finalize found. Each hop is the conversion record of the interval
 * the value falls in (snapshot-interval.h). The interval each hop used last is cached per (from,
 * to): a record answers only inside its interval, so a value in the same intervals (sequential
 * values, the common case in a trace) skips the searches, and in NEAREST mode takes the record's
 * 64-bit shortcut. No allocation, no floating point. */

#include <errno.h>

#include "conv-record.h"
#include "snapshot-graph-internal.h"
#include "snapshot-interval.h"

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

/* Interval k applied to ns: NEAREST's shortcut where it takes the value, else the interval's
 * map. CONV_RECORD_MISS when ns is outside the interval. */
static inline __attribute__((always_inline)) int interval_map(const Pair *p, size_t side, size_t k, SnapshotMode mode,
                                                             int64_t ns, int64_t *ret_ns, uint64_t *ret_bound_ns) {
        if (mode == SNAPSHOT_MODE_NEAREST && snapshot_nearest_fast(&p->nearest[side][k], ns, ret_ns, ret_bound_ns))
                return 0;
        return snapshot_interval_map(p, side, k, mode, ns, p->slack_ns, ret_ns, ret_bound_ns);
}

/* Hop i by Perfetto's search and the record found, given that the cached step did not answer;
 * adds the hop's bound, with both readings' rounding, to *unc. */
static int hop_search(const SnapshotGraph *g, Route *rt, size_t i, SnapshotMode mode, const NearestStep *cached,
                      int64_t *ns, uint64_t *unc) {
        const Pair *p = &g->pairs[rt->edge[i] >> 1];
        size_t side = rt->edge[i] & 1, found = pair_search(p, side, *ns);
        int64_t out;
        uint64_t bound;
        int r;

        if (&p->nearest[side][found] != cached)        /* a store only on a change: threads share the line */
                __atomic_store_n(&rt->step[i], &p->nearest[side][found], __ATOMIC_RELAXED);
        r = interval_map(p, side, found, mode, *ns, &out, &bound);
        if (r != 0)     /* the search was the last resort: further than 2^62 ns from the snapshots */
                return r == CONV_RECORD_MISS ? -ERANGE : r;
        *ns = out;
        *unc += bound;
        return 0;
}

/* Hop i: the cached interval's record, else the search. In NEAREST, a value the shortcut
 * declines on the cached interval but the record takes has that interval as its search result
 * too (the source's readings never decrease), so the search answers it. */
static int hop_convert(const SnapshotGraph *g, Route *rt, size_t i, SnapshotMode mode, int64_t *ns, uint64_t *unc) {
        const Pair *p = &g->pairs[rt->edge[i] >> 1];
        size_t side = rt->edge[i] & 1;
        const NearestStep *cached = __atomic_load_n(&rt->step[i], __ATOMIC_RELAXED);
        int64_t out;
        uint64_t bound;
        int r;

        if (mode == SNAPSHOT_MODE_NEAREST)
                r = snapshot_nearest_fast(cached, *ns, &out, &bound) ? 0 : CONV_RECORD_MISS;
        else {
                size_t k = (size_t) (cached - p->nearest[side]);
                const int64_t *src = p->ns[side];

                /* Outside NEAREST's range of interval k, which holds DRIFT's halves, the record
                 * declines: no need to build it. */
                if ((k > 0 && *ns < src[k]) || (k + 1 < p->n && *ns >= src[k + 1]))
                        r = CONV_RECORD_MISS;
                else
                        r = interval_map(p, side, k, mode, *ns, &out, &bound);
        }
        if (r == 0) {
                *ns = out;
                *unc += bound;
        }
        if (r != CONV_RECORD_MISS)
                return r;
        return hop_search(g, rt, i, mode, cached, ns, unc);
}

/* The rest of a NEAREST conversion between ns domains from hop i, whose cached step the
 * shortcut declined. Seven arguments, as many as snapshot_graph_convert() has: a tail call. */
static __attribute__((noinline)) int route_finish(const SnapshotGraph *g, Route *rt, size_t i, int64_t ns,
                                                  uint64_t unc, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int r = hop_search(g, rt, i, SNAPSHOT_MODE_NEAREST, __atomic_load_n(&rt->step[i], __ATOMIC_RELAXED), &ns,
                           &unc);

        for (i++; r >= 0 && i < rt->n_hops; i++)
                r = hop_convert(g, rt, i, SNAPSHOT_MODE_NEAREST, &ns, &unc);
        if (r < 0)
                return r;
        if (unc > INT64_MAX)
                return -ERANGE;
        *ret_value = ns;
        if (ret_uncertainty_ns)
                *ret_uncertainty_ns = (int64_t) unc;
        return 0;
}

/* Any conversion, every check made. */
static __attribute__((noinline)) int convert_general(const SnapshotGraph *g, SnapshotMode mode, size_t from,
                                                     size_t to, int64_t value, int64_t *ret_value,
                                                     int64_t *ret_uncertainty_ns) {
        int64_t ns, out, error_ns, count;
        uint64_t unc;
        Route *rt;
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
        rt = &g->routes[from * g->n_domains + to];
        if (rt->n_hops == 0)
                return -ENOLINK;

        if (g->domains[from].plain_ns)
                ns = value;
        else if ((r = snapshot_domain_count(&g->domains[from], value, &count)) < 0 ||
                 (r = snapshot_domain_to_ns(&g->domains[from], count, &ns)) < 0)
                return r;
        unc = (uint64_t) (g->domains[from].slack_ns + g->domains[from].trunc_ns);
        for (size_t i = 0; i < rt->n_hops; i++) {
                r = hop_convert(g, rt, i, mode, &ns, &unc);
                if (r < 0)
                        return r;
        }
        if (g->domains[to].plain_ns) {
                out = ns;
                error_ns = 0;
        } else if ((r = unit_from_ns(&g->domains[to].unit, ns, &count, &error_ns)) < 0 ||
                   (r = unit_wrap(&g->domains[to].unit, count, &out)) < 0)
                return r;
        /* A truncating target's answer x means [x, x + 1) units, as live gives it: the instant
         * is in it, and the bound is the instant's. A rounding one's answer is off by error_ns. */
        if (!g->domains[to].unit.truncates)
                unc += (uint64_t) error_ns;
        if (unc > INT64_MAX)
                return -ERANGE;
        *ret_value = out;
        if (ret_uncertainty_ns)
                *ret_uncertainty_ns = (int64_t) unc;
        return 0;
}

/* The common case in a trace, short enough to stay in registers: NEAREST between ns domains,
 * every hop's value in its cached interval, where the shortcut takes it. A hop it declines goes
 * on in route_finish(); any other conversion goes to convert_general(). */
int snapshot_graph_convert(const SnapshotGraph *g, SnapshotMode mode, size_t from, size_t to,
                           int64_t value, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        Route *rt;
        int64_t ns = value;
        uint64_t unc;
        size_t i;

        if (__builtin_expect(!g || !g->finalized || !ret_value || mode != SNAPSHOT_MODE_NEAREST ||
                             from >= g->n_domains || to >= g->n_domains, 0))
                goto general;
        rt = &g->routes[from * g->n_domains + to];
        if (__builtin_expect(rt->plain_hops == 0, 0))
                goto general;
        unc = rt->from_slack_ns;
        /* unrolled: no loop counter, and each hop's fields at fixed offsets */
#pragma GCC unroll 4
        for (i = 0; i < SNAPSHOT_MAX_HOPS; i++) {
                uint64_t bound;

                if (__builtin_expect(!snapshot_nearest_fast(__atomic_load_n(&rt->step[i], __ATOMIC_RELAXED), ns, &ns,
                                                            &bound), 0))
                        return route_finish(g, rt, i, ns, unc, ret_value, ret_uncertainty_ns);
                unc += bound;
                if (i + 1 == rt->plain_hops)
                        break;
        }
        if (__builtin_expect(unc > INT64_MAX, 0))
                return -ERANGE;
        *ret_value = ns;
        if (ret_uncertainty_ns)
                *ret_uncertainty_ns = (int64_t) unc;
        return 0;
general:
        return convert_general(g, mode, from, to, value, ret_value, ret_uncertainty_ns);
}
