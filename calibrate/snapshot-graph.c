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

static size_t pair_key(size_t a, size_t b) {
        return a < b ? a * SNAPSHOT_MAX_DOMAINS + b : b * SNAPSHOT_MAX_DOMAINS + a;
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
        free(g->buckets);
        free(g->steps);
        free(g->readings);
        free(g->hops);
        free(g->routes);
        free(g);
        return NULL;
}

static size_t domain_index(const SnapshotGraph *g, const char *name) {
        for (size_t i = 0; i < g->n_domains; i++)
                if (strcmp(g->domains[i].name, name) == 0)
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
        /* unit_to_ns() rounds fractional periods; a truncated reading lags by up to a unit. */
        d->plain_ns = unit->period_ns == 1.0 && (unit->wrap_bits == 0 || unit->wrap_bits == 64) &&
                      unit->encoding == UNIT_ENCODING_PLAIN;
        d->slack_ns = (unit->period_ns != floor(unit->period_ns)) +
                      (unit->truncates ? (int64_t) ceil(unit->period_ns) : 0);
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

int snapshot_graph_add(SnapshotGraph *g, const SnapshotClock *clocks, size_t n) {
        size_t n_domains;
        Reading *next;
        int r = 0;

        if (!g || !clocks || n < 2 || g->finalized)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!clocks[i].domain || !*clocks[i].domain || clocks[i].uncertainty_ns < 0 ||
                    clocks[i].uncertainty_ns > SNAPSHOT_UNCERTAINTY_MAX_NS)
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(clocks[i].domain, clocks[j].domain) == 0)
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
                if (r >= 0)
                        r = unit_to_ns(&g->domains[k].unit, clocks[i].ts, &next[i].ns);
                next[i].snapshot = g->n_snapshots;
                next[i].unc_ns = clocks[i].uncertainty_ns;
                next[i].domain = (uint16_t) k;
        }
        if (r < 0) {
                while (g->n_domains > n_domains)
                        free(g->domains[--g->n_domains].name);
                return r;
        }
        g->n_readings += n;
        g->n_snapshots++;
        return 0;
}

/* Every pair of clocks in a snapshot is an edge, both ways: counts each pair's common snapshots
 * into pair_of[] (returning their sum), or (fill) appends them to the pair pair_of[] points to. */
static size_t visit_pairs(SnapshotGraph *g, size_t *pair_of, bool fill) {
        const Reading *r = g->readings;
        size_t total = 0;

        for (size_t a = 0, b; a < g->n_readings; a = b) {
                for (b = a + 1; b < g->n_readings && r[b].snapshot == r[a].snapshot; b++)
                        ;
                for (size_t i = a; i < b; i++)
                        for (size_t j = i + 1; j < b; j++) {
                                size_t key = pair_key(r[i].domain, r[j].domain);

                                if (fill) {
                                        Pair *p = &g->pairs[pair_of[key] - 1];
                                        p->ns[r[i].domain > r[j].domain][p->n] = r[i].ns;
                                        p->unc_ns[p->n] = r[i].unc_ns + r[j].unc_ns;
                                        p->ns[r[i].domain < r[j].domain][p->n++] = r[j].ns;
                                } else
                                        g->n_pairs += pair_of[key]++ == 0;
                                total++;
                        }
        }
        return total;
}

/* Turns pair_of[] from counts into pair indices + 1, and allocates the pairs. */
static int pairs_alloc(SnapshotGraph *g, size_t *pair_of, size_t total) {
        int64_t *next;

        uint32_t *next_bucket;
        NearestStep *next_step;

        free(g->pairs);         /* from an earlier attempt that ran out of memory */
        free(g->series);
        free(g->buckets);
        free(g->steps);
        g->pairs = calloc(g->n_pairs + 1, sizeof(Pair));
        g->series = next = malloc(5 * total * sizeof(int64_t) + 1);
        g->buckets = next_bucket = malloc((2 * total + 2 * g->n_pairs + 1) * sizeof(uint32_t));
        g->steps = next_step = malloc((2 * total + 1) * sizeof(NearestStep));
        g->n_pairs = 0;
        if (!g->pairs || !next || !next_bucket || !next_step)
                return -ENOMEM;
        for (size_t key = 0; key < SNAPSHOT_MAX_DOMAINS * SNAPSHOT_MAX_DOMAINS; key++) {
                Pair *p = &g->pairs[g->n_pairs];
                size_t n = pair_of[key];

                if (n == 0)
                        continue;
                *p = (Pair) {
                        .domain = { key / SNAPSHOT_MAX_DOMAINS, key % SNAPSHOT_MAX_DOMAINS },
                        .ns = { next, next + n },
                        .slope_q62 = { next + 2 * n, next + 3 * n },
                        .unc_ns = next + 4 * n,
                        .first = { next_bucket, next_bucket + n + 1 },
                        .nearest = { next_step, next_step + n },
                };
                next += 5 * n;
                next_bucket += 2 * (n + 1);
                next_step += 2 * n;
                pair_of[key] = ++g->n_pairs;
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
 * seen going backwards); DRIFT needs each interval's rate, if plausible, as an integer slope. */
static void pair_finalize(SnapshotGraph *g, Pair *p) {
        p->slack_ns = g->domains[p->domain[0]].slack_ns + g->domains[p->domain[1]].slack_ns;
        for (size_t s = 0; s < 2; s++)
                for (size_t k = 0; k + 1 < p->n; k++) {
                        __int128 dx = (__int128) p->ns[s][k + 1] - p->ns[s][k];
                        __int128 dy = (__int128) p->ns[!s][k + 1] - p->ns[!s][k];
                        __int128 drift = dy - dx, abs_drift = drift < 0 ? -drift : drift;

                        g->domains[p->domain[s]].non_monotonic |= dx < 0;
                        /* |drift| <= dx / 1000 keeps dy < 2^65, so dy << 62 fits 128 bits. */
                        p->slope_q62[s][k] = dx > 0 && abs_drift * RATE_DIVISOR <= dx && dx < ((__int128) 1 << 64) ?
                                             (int64_t) ((dy << 62) / dx) : 0;
                }
        for (size_t s = 0; s < 2; s++) {
                pair_buckets(p, s);
                snapshot_nearest_steps(p, s, p->nearest[s]);
        }
}

static bool edge_exists(const SnapshotGraph *g, const size_t *pair_of, size_t u, size_t v) {
        return u != v && !g->domains[u].non_monotonic && pair_of[pair_key(u, v)] != 0;
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
                                *h = (Hop) { v, pair_of[pair_key(u, v)] - 1 };
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
                        if (g->domains[from].plain_ns && g->domains[to].plain_ns && g->domains[from].slack_ns <= 1) {
                                rt->plain_hops = rt->n_hops;
                                rt->from_slack_ns = (uint8_t) g->domains[from].slack_ns;
                        }
                }
}

int snapshot_graph_finalize(SnapshotGraph *g) {
        size_t n = g ? g->n_domains : 0, *pair_of, routes_size;
        int r;

        if (!g)
                return -EINVAL;
        g->n_pairs = 0;
        free(g->hops);
        pair_of = calloc(SNAPSHOT_MAX_DOMAINS * SNAPSHOT_MAX_DOMAINS, sizeof(*pair_of));
        g->hops = malloc((n * n + 1) * sizeof(*g->hops));
        free(g->routes);
        /* aligned: a route never straddles two cache lines */
        routes_size = ((n * n + 1) * sizeof(Route) + 63) / 64 * 64;
        g->routes = aligned_alloc(64, routes_size);
        r = pair_of && g->hops && g->routes ? 0 : -ENOMEM;
        if (r >= 0)
                r = pairs_alloc(g, pair_of, visit_pairs(g, pair_of, false));
        if (r >= 0) {
                visit_pairs(g, pair_of, true);
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
