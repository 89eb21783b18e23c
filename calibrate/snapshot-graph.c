/* SPDX-License-Identifier: MIT */

/* Snapshots are kept as added; finalize builds a series per pair of domains, and the hops. */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock-id.h"
#include "snapshot-graph-internal.h"
#include "snapshot-interval.h"

/* Pairs are keyed over the domains there are (n of them), not over the most there may be: a
 * table of 256 x 256 would cost more to clear than a small file costs to load. */
static size_t pair_key(size_t n, size_t a, size_t b) {
        return a < b ? a * n + b : b * n + a;
}

int snapshot_graph_new(SnapshotGraph **ret) {
        SnapshotGraph *g;

        if (!ret)
                return -EINVAL;
        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        *ret = g;
        return 0;
}

SnapshotGraph *snapshot_graph_free(SnapshotGraph *g) {
        if (!g)
                return NULL;
        for (size_t i = 0; i < g->n_domains; i++)
                free(g->domains[i].name);
        free(g->pairs);
        free(g->series);
        free(g->rates);
        free(g->buckets);
        free(g->steps);
        free(g->readings);
        free(g->hops);
        free(g->routes);
        free(g);
        return NULL;
}

static size_t domain_index(const SnapshotGraph *g, const char *name) {
        /* the first byte tells most names apart without a call */
        for (size_t i = 0; i < g->n_domains; i++)
                if (g->domains[i].name[0] == name[0] && strcmp(g->domains[i].name, name) == 0)
                        return i;
        return SIZE_MAX;
}

static int domain_append(SnapshotGraph *g, const char *name, const DomainUnit *unit) {
        Domain *d = &g->domains[g->n_domains];

        if (g->n_domains >= SNAPSHOT_MAX_DOMAINS)
                return -ENOSPC;
        *d = (Domain) { .name = strdup(name), .unit = *unit, .clock_id = clock_id_for_name(name) };
        if (!d->name)
                return -ENOMEM;
        /* unit_to_ns() rounds fractional periods. A truncated count x means [x, x + 1) units:
         * it is read as the middle, half a unit either side (as the live graph reads it), not as
         * x with a whole unit of slack, which counted the truncation twice over a hop. A reading
         * that says where in its unit it was (has_frac) has no truncation left. */
        d->plain_ns = unit->period_ns == 1.0 && (unit->wrap_bits == 0 || unit->wrap_bits == 64) &&
                      unit->encoding == UNIT_ENCODING_PLAIN;
        d->center_ns = unit->truncates ? (int64_t) floor(unit->period_ns / 2) : 0;
        d->trunc_ns = unit->truncates ? (int64_t) ceil(unit->period_ns) - d->center_ns : 0;
        d->slack_ns = unit->period_ns != floor(unit->period_ns);
        d->wraps = unit->encoding != UNIT_ENCODING_PLAIN || (unit->wrap_bits > 0 && unit->wrap_bits < 64);
        g->n_domains++;
        return 0;
}

int snapshot_graph_declare(SnapshotGraph *g, const char *name, const DomainUnit *unit) {
        int r;

        if (!g || !name || !*name || !unit || g->finalized)
                return -EINVAL;
        r = unit_validate(unit);
        if (r < 0)
                return r;
        if (domain_index(g, name) != SIZE_MAX)
                return -EEXIST;
        return domain_append(g, name, unit);
}

static int32_t rate_clamp(int64_t ppb) {
        return (int32_t) (ppb < -RATE_LIMIT_PPB ? -RATE_LIMIT_PPB : ppb > RATE_LIMIT_PPB ? RATE_LIMIT_PPB : ppb);
}

/* The unwrapped count of a reading ts of domain d: the occurrence nearest d's last reading, or
 * for its first, its own wire form's. */
int snapshot_domain_count(const Domain *d, int64_t ts, int64_t *ret_count) {
        int64_t hint;
        int r;

        if (!d->wraps) {
                *ret_count = ts;
                return 0;
        }
        if (d->has_last)
                hint = d->last_count;
        else if ((r = unit_wrap(&d->unit, ts, &hint)) < 0)
                return r;
        return unit_unwrap(&d->unit, ts, hint, ret_count);
}

/* A reading's ns and uncertainty: where it says it was in its unit (frac_ns), else the middle
 * of a truncated count with the half unit added to its uncertainty. */
static int reading_ns(const Domain *d, const SnapshotClock *c, int64_t count, int64_t *ret_ns, int64_t *ret_unc_ns) {
        int64_t ns, unc_ns = c->uncertainty_ns;
        int r;

        if (!c->has_frac || !d->trunc_ns) {
                r = snapshot_domain_to_ns(d, count, &ns);
                if (r >= 0 && __builtin_add_overflow(unc_ns, d->trunc_ns, &unc_ns))
                        r = -ERANGE;
        } else if (c->frac_ns < 0 || c->frac_ns >= (int64_t) ceil(d->unit.period_ns))
                r = -EINVAL;
        else if ((r = unit_to_ns(&d->unit, count, &ns)) >= 0 && __builtin_add_overflow(ns, c->frac_ns, &ns))
                r = -ERANGE;
        if (r < 0)
                return r;
        *ret_ns = ns;
        *ret_unc_ns = unc_ns;
        return 0;
}

int snapshot_domain_to_ns(const Domain *d, int64_t count, int64_t *ret_ns) {
        int64_t ns;
        int r = unit_to_ns(&d->unit, count, &ns);

        if (r < 0)
                return r;
        if (__builtin_add_overflow(ns, d->center_ns, ret_ns))
                return -ERANGE;
        return 0;
}

int snapshot_graph_add(SnapshotGraph *g, const SnapshotClock *clocks, size_t n) {
        size_t n_domains;
        Reading *next;
        int64_t counts[SNAPSHOT_MAX_DOMAINS];
        int r = 0;

        if (!g || !clocks || n < 2 || n > SNAPSHOT_MAX_DOMAINS || g->finalized || g->n_snapshots >= UINT32_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!clocks[i].domain || !*clocks[i].domain || clocks[i].uncertainty_ns < 0 ||
                    clocks[i].uncertainty_ns > SNAPSHOT_UNCERTAINTY_MAX_NS ||
                    (clocks[i].has_rate && (clocks[i].rate_uncertainty_ppb < 0 ||
                                            clocks[i].rate_ppb < -RATE_LIMIT_PPB ||
                                            clocks[i].rate_ppb > RATE_LIMIT_PPB ||
                                            clocks[i].rate_uncertainty_ppb > RATE_LIMIT_PPB)))
                        return -EINVAL;
        }
        if (g->n_readings + n > g->allocated_readings) {
                size_t a = 2 * g->allocated_readings + n;
                Reading *p = realloc(g->readings, a * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                g->readings = p;
                g->allocated_readings = a;
        }

        /* Readings go into the room just made; a failure forgets the domains this call made. */
        next = &g->readings[g->n_readings];
        n_domains = g->n_domains;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                size_t k = domain_index(g, clocks[i].domain);

                if (k == SIZE_MAX) {
                        r = domain_append(g, clocks[i].domain, &UNIT_NS);
                        k = g->n_domains - 1;
                }
                counts[i] = clocks[i].ts;
                next[i].unc_ns = clocks[i].uncertainty_ns;
                if (r >= 0 && g->domains[k].plain_ns && !g->domains[k].trunc_ns)   /* the common case */
                        next[i].ns = clocks[i].ts;
                else if (r >= 0 && (r = snapshot_domain_count(&g->domains[k], clocks[i].ts, &counts[i])) >= 0)
                        r = reading_ns(&g->domains[k], &clocks[i], counts[i], &next[i].ns, &next[i].unc_ns);
                next[i].snapshot = (uint32_t) g->n_snapshots;
                next[i].domain = (uint16_t) k;
                next[i].has_rate = clocks[i].has_rate;
                next[i].rate_lo_ppb = rate_clamp(clocks[i].rate_ppb - clocks[i].rate_uncertainty_ppb);
                next[i].rate_hi_ppb = rate_clamp(clocks[i].rate_ppb + clocks[i].rate_uncertainty_ppb);
        }
        /* a domain twice in one snapshot: by index, now that the names are resolved */
        for (size_t i = 0; r >= 0 && i < n; i++)
                for (size_t j = 0; j < i; j++)
                        if (next[i].domain == next[j].domain)
                                r = -EINVAL;
        if (r < 0) {
                while (g->n_domains > n_domains)
                        free(g->domains[--g->n_domains].name);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                Domain *d = &g->domains[next[i].domain];

                d->last_count = counts[i];
                d->has_last = true;
                g->has_rates |= next[i].has_rate;
        }
        g->n_readings += n;
        g->n_snapshots++;
        return 0;
}

/* The rate of dst against src, minus 1, in ppb, from their rates against one reference: (1 +
 * dst) / (1 + src) - 1 = (dst - src) / (1 + src), its least and most over the bounds, outward. */
static void pair_rate(const Reading *src, const Reading *dst, int32_t *ret) {
        int64_t lo = (int64_t) dst->rate_lo_ppb - src->rate_hi_ppb, hi = (int64_t) dst->rate_hi_ppb - src->rate_lo_ppb;
        int64_t s = src->rate_lo_ppb < 0 ? -(int64_t) src->rate_lo_ppb : src->rate_lo_ppb;
        int64_t m = lo < 0 ? -lo : lo;

        if (!src->has_rate || !dst->has_rate) {
                ret[0] = -RATE_DEFAULT_PPB;
                ret[1] = RATE_DEFAULT_PPB;
                return;
        }
        if (src->rate_hi_ppb > s)
                s = src->rate_hi_ppb;
        if (hi > m)
                m = hi;
        /* |x / (1 + src) - x| <= |x|·|src| / (1 - |src|), with |src| <= 10 %: plus one for rounding */
        m = (int64_t) (((__int128) m * s + (1000000000 - s) - 1) / (1000000000 - s)) + 1;
        ret[0] = rate_clamp(lo - m);
        ret[1] = rate_clamp(hi + m);
}

/* Every pair of clocks in a snapshot is an edge, both ways: counts each pair's common snapshots
 * into pair_of[] (returning their sum), or (fill) appends them to the pair pair_of[] points to. */
static size_t visit_pairs(SnapshotGraph *g, size_t *pair_of, bool fill) {
        const Reading *r = g->readings;
        size_t total = 0, n = g->n_domains;

        for (size_t a = 0, b; a < g->n_readings; a = b) {
                for (b = a + 1; b < g->n_readings && r[b].snapshot == r[a].snapshot; b++)
                        ;
                for (size_t i = a; i < b; i++)
                        for (size_t j = i + 1; j < b; j++) {
                                size_t key = pair_key(n, r[i].domain, r[j].domain);

                                if (fill) {
                                        Pair *p = &g->pairs[pair_of[key] - 1];
                                        const Reading *lo = r[i].domain < r[j].domain ? &r[i] : &r[j];
                                        const Reading *hi = lo == &r[i] ? &r[j] : &r[i];

                                        if (p->rate_ppb) {
                                                pair_rate(lo, hi, &p->rate_ppb[4 * p->n]);
                                                pair_rate(hi, lo, &p->rate_ppb[4 * p->n + 2]);
                                        }
                                        p->ns[0][p->n] = lo->ns;
                                        p->ns[1][p->n] = hi->ns;
                                        p->unc_ns[p->n++] = r[i].unc_ns + r[j].unc_ns;
                                } else
                                        g->n_pairs += pair_of[key]++ == 0;
                                total++;
                        }
        }
        return total;
}

/* Turns pair_of[] from counts into pair indices + 1, and allocates the pairs: what every pair
 * needs in three blocks (few pages to fault in), the rates only where a reading has one. The
 * NEAREST steps come later, in the readings' own memory (steps_alloc()). */
static int pairs_alloc(SnapshotGraph *g, size_t *pair_of, size_t total) {
        size_t n_keys = g->n_domains * g->n_domains;
        int32_t *next_rate = NULL;
        uint32_t *next_bucket;
        int64_t *next;

        free(g->pairs);         /* from an earlier attempt that ran out of memory */
        free(g->series);
        free(g->rates);
        free(g->buckets);
        g->pairs = calloc(g->n_pairs + 1, sizeof(Pair));
        g->series = next = malloc(3 * total * sizeof(int64_t) + 1);
        g->rates = next_rate = g->has_rates ? malloc(4 * total * sizeof(int32_t) + 1) : NULL;
        g->buckets = next_bucket = malloc((2 * total + 2 * g->n_pairs + 1) * sizeof(uint32_t));
        g->n_pairs = 0;
        if (!g->pairs || !next || !next_bucket || (g->has_rates && !next_rate))
                return -ENOMEM;
        for (size_t key = 0; key < n_keys; key++) {
                Pair *p = &g->pairs[g->n_pairs];
                size_t n = pair_of[key];

                if (n == 0)
                        continue;
                *p = (Pair) {
                        .domain = { key / g->n_domains, key % g->n_domains },
                        .ns = { next, next + n },
                        .unc_ns = next + 2 * n,
                        .rate_ppb = next_rate,
                        .first = { next_bucket, next_bucket + n + 1 },
                };
                next += 3 * n;
                if (next_rate)
                        next_rate += 4 * n;
                next_bucket += 2 * (n + 1);
                pair_of[key] = ++g->n_pairs;
        }
        return 0;
}

/* The NEAREST steps of every pair, in the memory the readings held: the pairs' series hold all
 * that was in them, and pages already touched cost no fault (a real trace has 10^5-10^6
 * snapshots, and faulting fresh pages in was most of the cost of loading them). Nothing is lost
 * on failure: the readings stay for another try. */
static int steps_alloc(SnapshotGraph *g, size_t total) {
        NearestStep *next = realloc(g->readings, (2 * total + 1) * sizeof(NearestStep));

        if (!next)
                return -ENOMEM;
        g->readings = NULL;
        g->n_readings = g->allocated_readings = 0;
        g->steps = next;
        for (size_t i = 0; i < g->n_pairs; i++) {
                Pair *p = &g->pairs[i];

                p->nearest[0] = next;
                p->nearest[1] = next + p->n;
                next += 2 * p->n;
        }
        return 0;
}

/* Pair.first[side] and mult[side]; first[] NULL for a side whose readings go backwards. */
static void pair_buckets(Pair *p, size_t s) {
        const int64_t *ts = p->ns[s];
        uint64_t span;
        unsigned __int128 m;
        size_t n = p->n, k = 0;

        for (size_t i = 0; i + 1 < n; i++)
                if (ts[i + 1] < ts[i] || n > UINT32_MAX) {
                        p->first[s] = NULL;
                        return;
                }
        span = (uint64_t) ts[n - 1] - (uint64_t) ts[0];
        /* floor(2^64·n / (span + 1)): every v <= ts[n - 1] falls in a bucket < n */
        m = span == UINT64_MAX ? (unsigned __int128) n : ((unsigned __int128) n << 64) / ((unsigned __int128) span + 1);
        p->mult[s] = m > UINT64_MAX ? UINT64_MAX : (uint64_t) m;
        for (size_t b = 0; b <= n; b++) {
                /* the last k whose bucket is < b */
                while (k + 1 < n && pair_bucket(p, s, ts[k + 1]) < b)
                        k++;
                p->first[s][b] = (uint32_t) (pair_bucket(p, s, ts[k]) < b ? k : 0);
        }
}

/* Binary search needs a non-decreasing source (Perfetto drops every outgoing edge of a clock
 * seen going backwards). DRIFT computes what it needs when it converts: nothing for it here. */
static void pair_finalize(SnapshotGraph *g, Pair *p) {
        p->slack_ns = g->domains[p->domain[0]].slack_ns + g->domains[p->domain[1]].slack_ns;
        for (size_t s = 0; s < 2; s++) {
                for (size_t k = 0; k + 1 < p->n; k++)
                        g->domains[p->domain[s]].non_monotonic |= p->ns[s][k + 1] < p->ns[s][k];
                pair_buckets(p, s);
                snapshot_nearest_steps(p, s, p->nearest[s]);
        }
}

static bool edge_exists(const SnapshotGraph *g, const size_t *pair_of, size_t u, size_t v) {
        return u != v && !g->domains[u].non_monotonic && pair_of[pair_key(g->n_domains, u, v)] != 0;
}

/* Fills the hops towards t. Perfetto's breadth-first search, neighbours in clock-id order, finds
 * the lexicographically smallest shortest path: the smallest next step that stays shortest. */
static void hops_to(SnapshotGraph *g, const size_t *pair_of, size_t t) {
        const Domain *d = g->domains;
        size_t n = g->n_domains, head = 0, tail = 0;
        uint8_t dist[SNAPSHOT_MAX_DOMAINS];
        uint16_t queue[SNAPSHOT_MAX_DOMAINS];

        memset(dist, UINT8_MAX, n);
        dist[t] = 0;
        queue[tail++] = (uint16_t) t;
        while (head < tail) {
                size_t x = queue[head++];

                for (size_t u = 0; dist[x] < SNAPSHOT_MAX_HOPS && u < n; u++)
                        if (dist[u] == UINT8_MAX && edge_exists(g, pair_of, u, x)) {
                                dist[u] = (uint8_t) (dist[x] + 1);
                                queue[tail++] = (uint16_t) u;
                        }
        }

        for (size_t u = 0; u < n; u++) {
                Hop *h = &g->hops[u * n + t];

                *h = (Hop) { NO_HOP, 0 };
                for (size_t v = 0; dist[u] != UINT8_MAX && v < n; v++)
                        if (dist[v] + 1 == dist[u] && edge_exists(g, pair_of, u, v) &&
                            (h->next == NO_HOP || d[v].clock_id < d[h->next].clock_id))
                                *h = (Hop) { v, pair_of[pair_key(n, u, v)] - 1 };
        }
}

/* Each path as its hops' pairs, from the first steps hops_to() found. */
static void routes_fill(SnapshotGraph *g) {
        size_t n = g->n_domains;

        for (size_t from = 0; from < n; from++)
                for (size_t to = 0; to < n; to++) {
                        Route *rt = &g->routes[from * n + to];

                        *rt = (Route) { .n_hops = 0 };
                        if (from == to || g->hops[from * n + to].next == NO_HOP)
                                continue;
                        /* breadth-first within SNAPSHOT_MAX_HOPS: the path has no more */
                        for (size_t cur = from; cur != to; cur = g->hops[cur * n + to].next) {
                                const Hop *h = &g->hops[cur * n + to];

                                size_t side = cur > h->next;

                                rt->step[rt->n_hops] = g->pairs[h->pair].nearest[side];
                                rt->edge[rt->n_hops++] = (uint16_t) (h->pair << 1 | side);
                        }
                        /* a plain ns domain's slack is 0, or 1 if it truncates */
                        if (g->domains[from].plain_ns && g->domains[to].plain_ns &&
                            g->domains[from].slack_ns + g->domains[from].trunc_ns <= 1) {
                                rt->plain_hops = rt->n_hops;
                                rt->from_slack_ns = (uint8_t) (g->domains[from].slack_ns + g->domains[from].trunc_ns);
                        }
                }
}

int snapshot_graph_finalize(SnapshotGraph *g) {
        size_t n = g ? g->n_domains : 0, *pair_of, routes_size, total = 0;
        int r;

        if (!g)
                return -EINVAL;
        if (g->finalized)       /* the readings are gone into the steps: nothing to do again */
                return 0;
        g->n_pairs = 0;
        free(g->hops);
        pair_of = calloc(n * n + 1, sizeof(*pair_of));
        g->hops = malloc((n * n + 1) * sizeof(*g->hops));
        free(g->routes);
        /* aligned: a route never straddles two cache lines */
        routes_size = ((n * n + 1) * sizeof(Route) + 63) / 64 * 64;
        g->routes = aligned_alloc(64, routes_size);
        r = pair_of && g->hops && g->routes ? 0 : -ENOMEM;
        if (r >= 0)
                r = pairs_alloc(g, pair_of, total = visit_pairs(g, pair_of, false));
        if (r >= 0) {
                visit_pairs(g, pair_of, true);
                r = steps_alloc(g, total);
        }
        if (r >= 0) {
                for (size_t i = 0; i < g->n_pairs; i++)
                        pair_finalize(g, &g->pairs[i]);
                for (size_t t = 0; t < n; t++)
                        hops_to(g, pair_of, t);
                routes_fill(g);
                g->finalized = true;
        }
        free(g->hops);          /* the routes hold the paths now */
        g->hops = NULL;
        free(pair_of);
        return r;
}

int snapshot_graph_find(const SnapshotGraph *g, const char *name, size_t *ret_index) {
        size_t i = g && name ? domain_index(g, name) : SIZE_MAX;

        if (!g || !name || !ret_index)
                return -EINVAL;
        if (i == SIZE_MAX)
                return -ENOENT;
        *ret_index = i;
        return 0;
}

size_t snapshot_graph_count(const SnapshotGraph *g) {
        return g ? g->n_domains : 0;
}

const char *snapshot_graph_name(const SnapshotGraph *g, size_t index) {
        return g && index < g->n_domains ? g->domains[index].name : NULL;
}
