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

/* The record of interval k applied to *ns: NEAREST's shortcut where it takes the value, else the
 * record itself. -ESTALE when ns is outside the interval. */
static int interval_map(const Pair *p, size_t side, size_t k, SnapshotMode mode, int64_t slack_ns, int64_t *ns,
                        uint64_t *unc) {
        int64_t out, bound;
        uint64_t fast_bound;
        ConvRecord rec;
        int r;

        if (mode == SNAPSHOT_MODE_NEAREST && snapshot_nearest_fast(p, side, k, slack_ns, *ns, &out, &fast_bound)) {
                *ns = out;
                *unc += fast_bound;
                return 0;
        }
        snapshot_interval_record(p, side, k, mode, *ns, slack_ns, &rec);
        r = conv_record_map(&rec, *ns, &out, &bound);
        if (r < 0)
                return r;
        *ns = out;
        *unc += (uint64_t) bound;
        return 0;
}

/* One hop from cur; adds its bound, with both readings' rounding, to *unc. */
static int hop_convert(const SnapshotGraph *g, size_t cur, SnapshotMode mode, size_t to, uint32_t *cache,
                       int64_t *ns, uint64_t *unc) {
        const Hop *h = &g->hops[cur * g->n_domains + to];
        const Pair *p = &g->pairs[h->pair];
        size_t side = cur > h->next;
        int64_t slack_ns = g->domains[cur].slack_ns + g->domains[h->next].slack_ns;
        size_t k = __atomic_load_n(cache, __ATOMIC_RELAXED), found;
        int r;

        /* The cached interval answers when the value is inside it; else Perfetto's search. In
         * NEAREST, a value the shortcut declines on the cached interval but the record takes
         * has that interval as its search result too (the source's readings never decrease):
         * the search answers it. */
        if (__builtin_expect(k < p->n, 1)) {
                if (mode == SNAPSHOT_MODE_NEAREST) {
                        int64_t out;
                        uint64_t fast_bound;

                        if (snapshot_nearest_fast(p, side, k, slack_ns, *ns, &out, &fast_bound)) {
                                *ns = out;
                                *unc += fast_bound;
                                return 0;
                        }
                } else if ((r = interval_map(p, side, k, mode, slack_ns, ns, unc)) != -ESTALE)
                        return r;
        }
        found = pair_search(p, side, *ns);
        if (found != k)         /* a store only on a change: threads share the line */
                __atomic_store_n(cache, (uint32_t) found, __ATOMIC_RELAXED);
        r = interval_map(p, side, found, mode, slack_ns, ns, unc);
        return r == -ESTALE ? -ERANGE : r;      /* further than 2^62 ns from the snapshots */
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
