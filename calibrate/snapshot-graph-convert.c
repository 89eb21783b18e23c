/* SPDX-License-Identifier: MIT */

/* Converting along the paths finalize found: one hop per pair, Perfetto's offset from the latest
 * snapshot at or before the value (NEAREST) or interpolated (DRIFT), with the error bound of
 * snapshot-graph.h. No allocation. */

#include <errno.h>
#include <math.h>

#include "snapshot-graph-internal.h"

static uint64_t ceil_div(uint64_t a, uint64_t b) {
        return a / b + (a % b != 0);
}

/* Largest k with ts[k] <= v, else 0: Perfetto's upper_bound() - 1, clamped to the first. */
static size_t floor_index(const int64_t *ts, size_t n, int64_t v) {
        const int64_t *base = ts;

        for (size_t half; n > 1; n -= half) {
                half = n / 2;
                base = base[half] <= v ? base + half : base;
        }
        return (size_t) (base - ts);
}

/* One hop from cur; adds its error bound, with both readings' rounding, to *unc. */
static int hop_convert(const SnapshotGraph *g, size_t cur, SnapshotMode mode, size_t to,
                       int64_t *ns, uint64_t *unc) {
        const Hop *h = &g->hops[cur * g->n_domains + to];
        const Pair *p = &g->pairs[h->pair];
        size_t side = cur > h->next;
        const int64_t *src = p->ns[side], *dst = p->ns[!side];
        size_t k = floor_index(src, p->n, *ns);
        __int128 d = (__int128) *ns - src[k], r = d + dst[k];
        uint64_t bound = ceil_div((uint64_t) (d < 0 ? -d : d), RATE_DIVISOR);

        /* src[k] <= ns < src[k + 1] here, so 0 < d < dx < 2^64, and |c| <= |drift| < dx. */
        if (mode == SNAPSHOT_MODE_DRIFT && d > 0 && k + 1 < p->n && !isnan(p->slope[side][k])) {
                uint64_t dx = (uint64_t) src[k + 1] - (uint64_t) src[k], near = (uint64_t) d;
                double c = (double) near * p->slope[side][k];

                /* Branch-free rounding and minimum: a mispredicted branch would stall the next
                 * hop, which waits for this one. */
                r += (int64_t) (c + copysign(0.5, c));
                near = dx - near < near ? dx - near : near;
                bound = ceil_div(near, RATE_DIVISOR / 2) + 1;
        }

        if (r < INT64_MIN || r > INT64_MAX)
                return -ERANGE;
        *ns = (int64_t) r;
        *unc += bound + (uint64_t) (g->domains[cur].slack_ns + g->domains[h->next].slack_ns);
        return 0;
}

int snapshot_graph_convert(const SnapshotGraph *g, SnapshotMode mode, size_t from, size_t to,
                           int64_t value, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int64_t ns, out, error_ns;
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

        r = unit_to_ns(&g->domains[from].unit, value, &ns);
        if (r < 0)
                return r;
        unc = (uint64_t) g->domains[from].slack_ns;
        for (size_t cur = from; cur != to; cur = g->hops[cur * g->n_domains + to].next) {
                r = hop_convert(g, cur, mode, to, &ns, &unc);
                if (r < 0)
                        return r;
        }
        r = unit_from_ns(&g->domains[to].unit, ns, &out, &error_ns);
        if (r < 0)
                return r;
        unc += (uint64_t) error_ns;
        if (unc > INT64_MAX)
                return -ERANGE;
        *ret_value = out;
        if (ret_uncertainty_ns)
                *ret_uncertainty_ns = (int64_t) unc;
        return 0;
}
