/* SPDX-License-Identifier: MIT */

/* Snapshot graph. Every pair of domains seen together keeps one series of (a_ns, b_ns) readings in
 * file order, shared by both directions. Perfetto keeps one series per set of clocks in a
 * snapshot and, when a pair appears in several sets, uses the set whose hash sorts first; we
 * merge them in file order instead. Everything else follows Perfetto's ClockTracker: latest
 * snapshot at or before the value else the first, fewest hops (at most 4, Perfetto's
 * ClockPath::kMaxLen), ties going to the smaller Perfetto clock id, non-monotonic domains only
 * as targets.
 *
 * Uncertainty: snapshots carry no deviations, so we assume that any two clocks' rates differ by
 * at most SNAPSHOT_MAX_RATE_ERROR_PPM. A hop taken from one snapshot is off by at most that
 * fraction of the distance to it; an interpolated hop by twice it (the chord's rate and the
 * true one may each be off by that much), from the nearer of the two snapshots. */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock-id.h"
#include "snapshot-graph.h"

#define SNAPSHOT_MAX_DOMAINS 256
#define SNAPSHOT_MAX_HOPS 4
#define SNAPSHOT_MAX_RATE_ERROR_PPM 1000
#define RATE_DIVISOR (1000000 / SNAPSHOT_MAX_RATE_ERROR_PPM)   /* error = distance / this */
#define NO_HOP UINT16_MAX

_Static_assert(1000000 % (2 * SNAPSHOT_MAX_RATE_ERROR_PPM) == 0, "rate error must divide 1e6/2");

typedef struct Domain {
        char *name;
        DomainUnit unit;
        int64_t slack_ns;       /* error of one reading converted to ns */
        uint32_t clock_id;      /* Perfetto's, for its tie-breaking between equal paths */
        bool non_monotonic;
} Domain;

typedef struct Pair {
        uint16_t lo, hi;        /* domain indices, lo < hi */
        size_t n, allocated;
        int64_t *lo_ns, *hi_ns; /* readings of lo and hi in each common snapshot, file order */
} Pair;

typedef struct Hop {            /* first step of the path from one domain to another */
        uint16_t next;
        bool reversed;          /* the source is the pair's hi side */
        uint32_t pair;
} Hop;

struct SnapshotGraph {
        Domain domains[SNAPSHOT_MAX_DOMAINS];
        size_t n_domains;
        Pair *pairs;
        size_t n_pairs, allocated_pairs;
        uint16_t *pair_of;      /* [lo * MAX + hi] -> pair index + 1, or 0 */
        Hop *hops;              /* [from * n_domains + to], built by finalize */
        bool finalized;
};

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
        g->pair_of = calloc((size_t) SNAPSHOT_MAX_DOMAINS * SNAPSHOT_MAX_DOMAINS,
                            sizeof(*g->pair_of));
        if (!g->pair_of) {
                free(g);
                return -ENOMEM;
        }

        *ret = g;
        return 0;
}

static void pair_done(Pair *p) {
        free(p->lo_ns);
        free(p->hi_ns);
}

SnapshotGraph *snapshot_graph_free(SnapshotGraph *g) {
        if (!g)
                return NULL;

        for (size_t i = 0; i < g->n_domains; i++)
                free(g->domains[i].name);
        for (size_t i = 0; i < g->n_pairs; i++)
                pair_done(&g->pairs[i]);
        free(g->pairs);
        free(g->pair_of);
        free(g->hops);
        free(g);
        return NULL;
}

static int domain_lookup(const SnapshotGraph *g, const char *name, size_t *ret) {
        for (size_t i = 0; i < g->n_domains; i++)
                if (strcmp(g->domains[i].name, name) == 0) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}

static int domain_append(SnapshotGraph *g, const char *name, const DomainUnit *unit) {
        Domain *d;

        if (g->n_domains >= SNAPSHOT_MAX_DOMAINS)
                return -ENOSPC;

        d = &g->domains[g->n_domains];
        *d = (Domain) {
                .name = strdup(name),
                .unit = *unit,
                .clock_id = clock_id_for_name(name),
        };
        if (!d->name)
                return -ENOMEM;

        /* unit_to_ns() rounds a fractional period to the nearest ns; a truncated reading may be
         * up to one unit behind. */
        if (unit->period_ns != floor(unit->period_ns))
                d->slack_ns += 1;
        if (unit->truncates)
                d->slack_ns += (int64_t) ceil(unit->period_ns);

        g->n_domains++;
        return 0;
}

int snapshot_graph_declare(SnapshotGraph *g, const char *name, const DomainUnit *unit) {
        size_t i;
        int r;

        if (!g || !name || !*name || !unit || g->finalized)
                return -EINVAL;
        r = unit_validate(unit);
        if (r < 0)
                return r;
        if (domain_lookup(g, name, &i) >= 0)
                return -EEXIST;

        return domain_append(g, name, unit);
}

/* Makes room for one more reading of the pair (a, b), creating it if needed. */
static int pair_reserve(SnapshotGraph *g, size_t a, size_t b) {
        uint16_t *slot = &g->pair_of[pair_key(a, b)];
        Pair *p;

        if (*slot == 0) {
                if (g->n_pairs == g->allocated_pairs) {
                        size_t k = g->allocated_pairs ? 2 * g->allocated_pairs : 16;
                        Pair *np = realloc(g->pairs, k * sizeof(*np));
                        if (!np)
                                return -ENOMEM;
                        g->pairs = np;
                        g->allocated_pairs = k;
                }
                g->pairs[g->n_pairs] = (Pair) {
                        .lo = (uint16_t) (a < b ? a : b),
                        .hi = (uint16_t) (a < b ? b : a),
                };
                *slot = (uint16_t) ++g->n_pairs;
        }

        p = &g->pairs[*slot - 1];
        if (p->n == p->allocated) {
                size_t k = p->allocated ? 2 * p->allocated : 8;
                int64_t *lo = realloc(p->lo_ns, k * sizeof(*lo));
                if (!lo)
                        return -ENOMEM;
                p->lo_ns = lo;
                int64_t *hi = realloc(p->hi_ns, k * sizeof(*hi));
                if (!hi)
                        return -ENOMEM;
                p->hi_ns = hi;
                p->allocated = k;
        }
        return 0;
}

/* Forgets the pairs and domains a failed add created (they are the last ones). */
static void rollback(SnapshotGraph *g, size_t n_domains, size_t n_pairs) {
        while (g->n_pairs > n_pairs) {
                Pair *p = &g->pairs[--g->n_pairs];
                g->pair_of[pair_key(p->lo, p->hi)] = 0;
                pair_done(p);
        }
        while (g->n_domains > n_domains)
                free(g->domains[--g->n_domains].name);
}

int snapshot_graph_add(SnapshotGraph *g, const SnapshotClock *clocks, size_t n) {
        size_t n_domains, n_pairs, n_new = 0, *index = NULL;
        int64_t *ns = NULL;
        int r;

        if (!g || !clocks || n < 2 || g->finalized)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!clocks[i].domain || !*clocks[i].domain)
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(clocks[i].domain, clocks[j].domain) == 0)
                                return -EINVAL;
        }

        index = malloc(n * sizeof(*index));
        ns = malloc(n * sizeof(*ns));
        if (!index || !ns) {
                r = -ENOMEM;
                goto finish;
        }

        /* Check everything before changing anything; new domains are in ns. */
        for (size_t i = 0; i < n; i++) {
                const DomainUnit *unit = &UNIT_NS;
                size_t k;

                if (domain_lookup(g, clocks[i].domain, &k) >= 0)
                        unit = &g->domains[k].unit;
                else
                        n_new++;
                r = unit_to_ns(unit, clocks[i].ts, &ns[i]);
                if (r < 0)
                        goto finish;
        }
        if (g->n_domains + n_new > SNAPSHOT_MAX_DOMAINS) {
                r = -ENOSPC;
                goto finish;
        }

        n_domains = g->n_domains;
        n_pairs = g->n_pairs;
        for (size_t i = 0; i < n; i++)
                if (domain_lookup(g, clocks[i].domain, &index[i]) < 0) {
                        r = domain_append(g, clocks[i].domain, &UNIT_NS);
                        if (r < 0)
                                goto fail;
                        index[i] = g->n_domains - 1;
                }
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        r = pair_reserve(g, index[i], index[j]);
                        if (r < 0)
                                goto fail;
                }

        /* Every pair of clocks in the snapshot is an edge, both ways. */
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        Pair *p = &g->pairs[g->pair_of[pair_key(index[i], index[j])] - 1];
                        bool swap = index[i] > index[j];

                        p->lo_ns[p->n] = swap ? ns[j] : ns[i];
                        p->hi_ns[p->n] = swap ? ns[i] : ns[j];
                        p->n++;
                }
        r = 0;
        goto finish;

fail:
        rollback(g, n_domains, n_pairs);
finish:
        free(index);
        free(ns);
        return r;
}

static bool edge_exists(const SnapshotGraph *g, size_t u, size_t v) {
        return u != v && !g->domains[u].non_monotonic && g->pair_of[pair_key(u, v)] != 0;
}

static bool series_goes_back(const int64_t *ts, size_t n) {
        for (size_t k = 1; k < n; k++)
                if (ts[k] < ts[k - 1])
                        return true;
        return false;
}

/* dist[u] = hops from u to t (at most SNAPSHOT_MAX_HOPS), UINT8_MAX when t is out of reach. */
static void distances_to(const SnapshotGraph *g, size_t t, uint8_t *dist, uint16_t *queue) {
        size_t n = g->n_domains, head = 0, tail = 0;

        memset(dist, UINT8_MAX, n);
        dist[t] = 0;
        queue[tail++] = (uint16_t) t;
        while (head < tail) {
                size_t x = queue[head++];

                if (dist[x] >= SNAPSHOT_MAX_HOPS)
                        continue;
                for (size_t u = 0; u < n; u++)
                        if (dist[u] == UINT8_MAX && edge_exists(g, u, x)) {
                                dist[u] = (uint8_t) (dist[x] + 1);
                                queue[tail++] = (uint16_t) u;
                        }
        }
}

/* Perfetto's breadth-first search, neighbours in clock-id order, returns the lexicographically
 * smallest shortest path; choosing the smallest next step that stays shortest does the same. */
static Hop first_hop(const SnapshotGraph *g, size_t u, const uint8_t *dist) {
        Hop h = { .next = NO_HOP };

        if (dist[u] == UINT8_MAX || dist[u] == 0)
                return h;
        for (size_t v = 0; v < g->n_domains; v++) {
                if (dist[v] != dist[u] - 1 || !edge_exists(g, u, v))
                        continue;
                if (h.next != NO_HOP && g->domains[v].clock_id >= g->domains[h.next].clock_id)
                        continue;
                h = (Hop) {
                        .next = (uint16_t) v,
                        .reversed = u > v,
                        .pair = g->pair_of[pair_key(u, v)] - 1u,
                };
        }
        return h;
}

int snapshot_graph_finalize(SnapshotGraph *g) {
        size_t n;
        uint8_t *dist;
        uint16_t *queue;

        if (!g)
                return -EINVAL;
        if (g->finalized)
                return 0;
        n = g->n_domains;

        /* Binary search needs a non-decreasing source series; Perfetto drops every outgoing edge
         * of a clock seen going backwards. */
        for (size_t i = 0; i < g->n_pairs; i++) {
                const Pair *p = &g->pairs[i];
                if (series_goes_back(p->lo_ns, p->n))
                        g->domains[p->lo].non_monotonic = true;
                if (series_goes_back(p->hi_ns, p->n))
                        g->domains[p->hi].non_monotonic = true;
        }

        if (n > 0) {
                g->hops = malloc(n * n * sizeof(*g->hops));
                dist = malloc(n);
                queue = malloc(n * sizeof(*queue));
                if (!g->hops || !dist || !queue) {
                        free(g->hops);
                        g->hops = NULL;
                        free(dist);
                        free(queue);
                        return -ENOMEM;
                }
                for (size_t t = 0; t < n; t++) {
                        distances_to(g, t, dist, queue);
                        for (size_t u = 0; u < n; u++)
                                g->hops[u * n + t] = first_hop(g, u, dist);
                }
                free(dist);
                free(queue);
        }

        g->finalized = true;
        return 0;
}

int snapshot_graph_find(const SnapshotGraph *g, const char *name, size_t *ret_index) {
        if (!g || !name || !ret_index)
                return -EINVAL;
        return domain_lookup(g, name, ret_index);
}

size_t snapshot_graph_count(const SnapshotGraph *g) {
        return g ? g->n_domains : 0;
}

const char *snapshot_graph_name(const SnapshotGraph *g, size_t index) {
        if (!g || index >= g->n_domains)
                return NULL;
        return g->domains[index].name;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) {
        return a / b + (a % b != 0);
}

static uint64_t magnitude(__int128 v) {
        return (uint64_t) (v < 0 ? -v : v);
}

/* Largest k with ts[k] <= v, else 0: Perfetto's upper_bound() - 1, clamped to the first. */
static size_t floor_index(const int64_t *ts, size_t n, int64_t v) {
        const int64_t *base = ts;

        while (n > 1) {
                size_t half = n / 2;
                base = base[half] <= v ? base + half : base;
                n -= half;
        }
        return (size_t) (base - ts);
}

static int hop_convert(const SnapshotGraph *g, const Hop *h, SnapshotMode mode, int64_t ns,
                       int64_t *ret_ns, uint64_t *ret_uncertainty_ns) {
        const Pair *p = &g->pairs[h->pair];
        const int64_t *src = h->reversed ? p->hi_ns : p->lo_ns;
        const int64_t *dst = h->reversed ? p->lo_ns : p->hi_ns;
        size_t k = floor_index(src, p->n, ns);
        __int128 d = (__int128) ns - src[k], r = d + dst[k];
        uint64_t unc = ceil_div(magnitude(d), RATE_DIVISOR);

        /* src[k] <= ns < src[k + 1] here, so 0 < d < dx < 2^64. */
        if (mode == SNAPSHOT_MODE_DRIFT && d > 0 && k + 1 < p->n) {
                uint64_t dx = (uint64_t) src[k + 1] - (uint64_t) src[k], near = (uint64_t) d;
                __int128 drift = (__int128) dst[k + 1] - dst[k] - dx;

                if ((drift < 0 ? -drift : drift) * RATE_DIVISOR <= dx) {
                        /* |c| <= |drift| <= dx / RATE_DIVISOR: everything fits in 64 bits. */
                        double c = (double) near * (double) (int64_t) drift / (double) dx;

                        /* Branch-free rounding and minimum: a mispredicted branch here would
                         * stall the next hop, which depends on this one. */
                        r += (int64_t) (c + copysign(0.5, c));
                        near = dx - near < near ? dx - near : near;
                        unc = ceil_div(near, RATE_DIVISOR / 2) + 1;
                }
        }

        if (r < INT64_MIN || r > INT64_MAX)
                return -ERANGE;
        *ret_ns = (int64_t) r;
        *ret_uncertainty_ns = unc;
        return 0;
}

int snapshot_graph_convert(const SnapshotGraph *g, SnapshotMode mode, size_t from, size_t to,
                           int64_t value, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        size_t n;
        int64_t ns, out, error_ns;
        uint64_t unc;
        int r;

        if (!g || !g->finalized || !ret_value ||
            (mode != SNAPSHOT_MODE_NEAREST && mode != SNAPSHOT_MODE_DRIFT))
                return -EINVAL;
        n = g->n_domains;
        if (from >= n || to >= n)
                return -ENOENT;
        if (from == to) {
                *ret_value = value;
                if (ret_uncertainty_ns)
                        *ret_uncertainty_ns = 0;
                return 0;
        }
        if (g->hops[from * n + to].next == NO_HOP)
                return -ENOLINK;

        r = unit_to_ns(&g->domains[from].unit, value, &ns);
        if (r < 0)
                return r;
        unc = (uint64_t) g->domains[from].slack_ns;

        for (size_t cur = from; cur != to;) {
                const Hop *h = &g->hops[cur * n + to];
                uint64_t hop_unc;

                r = hop_convert(g, h, mode, ns, &ns, &hop_unc);
                if (r < 0)
                        return r;
                /* Both readings of the snapshot carry their domain's rounding. */
                unc += hop_unc + (uint64_t) g->domains[cur].slack_ns +
                       (uint64_t) g->domains[h->next].slack_ns;
                cur = h->next;
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
