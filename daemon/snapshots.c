/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots.h"
#include "cleanup.h"
#include "time-util.h"

/* present is a 64-bit mask of nodes. */
_Static_assert(GRAPH_NODES_MAX <= 64, "SnapshotEntry.present has one bit per graph node");

int snapshot_ring_new(size_t capacity, SnapshotRing **ret) {
        SnapshotRing *ring;

        if (capacity == 0 || !ret)
                return -EINVAL;
        ring = calloc(1, sizeof(*ring));
        if (!ring)
                return -ENOMEM;
        ring->entries = malloc(capacity * sizeof(SnapshotEntry));
        if (!ring->entries) {
                free(ring);
                return -ENOMEM;
        }
        /* Written now, so that the ring is resident from the start: memory that only grows
         * while the ring fills would look like a leak to whoever watches the daemon's RSS.
         * Not memset(): GCC folds malloc + memset(0) into calloc, which leaves them unwritten. */
        explicit_bzero(ring->entries, capacity * sizeof(SnapshotEntry));
        ring->capacity = capacity;
        *ret = ring;
        return 0;
}

SnapshotRing *snapshot_ring_free(SnapshotRing *ring) {
        if (!ring)
                return NULL;
        free(ring->entries);
        free(ring);
        return NULL;
}

size_t snapshot_ring_count(const SnapshotRing *ring) {
        return ring->n;
}

const SnapshotEntry *snapshot_ring_get(const SnapshotRing *ring, size_t i) {
        if (i >= ring->n)
                return NULL;
        return &ring->entries[(ring->head + i) % ring->capacity];
}

/* Node i's value at hub time r_ns, its bound, and for a truncating unit where in the value's
 * unit the time was (graph_convert_frac()): an X ms value kept whole would cost an offline
 * answer up to a ms more than live. -ERANGE for a bound or fraction past 32 bits. */
static int snapshot_value(const ClockGraph *g, size_t i, int64_t r_ns, int64_t *ret_value, int64_t *ret_unc_ns,
                          int64_t *ret_frac_ns) {
        int64_t value, unc_ns, frac_ns = 0;
        int r;

        if (g->nodes[i].unit.truncates)
                r = graph_convert_frac(g, g->hub, i, r_ns, r_ns, &value, &unc_ns, &frac_ns);
        else
                r = graph_convert(g, g->hub, i, r_ns, r_ns, &value, &unc_ns);
        if (r < 0)
                return r;
        if (unc_ns < 0 || unc_ns > UINT32_MAX || frac_ns < 0 || frac_ns > UINT32_MAX)
                return -ERANGE;
        *ret_value = value;
        *ret_unc_ns = unc_ns;
        *ret_frac_ns = frac_ns;
        return 0;
}

/* Node i's rate against the hub and its bound, in ppb, from its model (the hub's is 0, 0); the
 * bound covers the rounding of the rate to whole ppb. UINT32_MAX for none that fits. */
static void snapshot_rate(const ClockGraph *g, size_t i, int32_t *ret_ppb, uint32_t *ret_unc_ppb) {
        double ppb, unc_ppb;
        Model m;

        *ret_ppb = 0;
        *ret_unc_ppb = UINT32_MAX;
        if (i == g->hub) {
                *ret_unc_ppb = 0;
                return;
        }
        if (graph_model(g, i, &m) < 0)
                return;
        ppb = m.rate * 1e9;
        unc_ppb = ceil(m.rate_half * 1e9) + 1;
        if (!(fabs(ppb) < 1e8) || !(unc_ppb >= 0 && unc_ppb < 1e8))
                return;
        *ret_ppb = (int32_t) llround(ppb);
        *ret_unc_ppb = (uint32_t) unc_ppb;
}

void snapshot_ring_take(SnapshotRing *ring, const ClockGraph *g, int64_t r_ns) {
        SnapshotEntry *e;

        if (ring->n == ring->capacity) {
                ring->head = (ring->head + 1) % ring->capacity;
                ring->n--;
        }
        e = &ring->entries[(ring->head + ring->n) % ring->capacity];
        ring->n++;

        e->r_ns = r_ns;
        e->present = 0;
        e->utc_maxerror_ns = e->utc_esterror_ns = -1;
        for (size_t i = 0; i < g->n_nodes; i++) {
                int64_t value, uncertainty_ns, frac_ns;

                /* Unavailable and uncalibrated nodes answer -ENODEV: they are left out. */
                if (snapshot_value(g, i, r_ns, &value, &uncertainty_ns, &frac_ns) < 0)
                        continue;
                e->values[i] = value;
                e->uncertainties_ns[i] = (uint32_t) uncertainty_ns;
                e->fracs_ns[i] = (uint32_t) frac_ns;
                e->present |= UINT64_C(1) << i;
                snapshot_rate(g, i, &e->rates_ppb[i], &e->rate_uncertainties_ppb[i]);
        }
}

void snapshot_ring_set_utc(SnapshotRing *ring, int64_t maxerror_ns, int64_t esterror_ns) {
        SnapshotEntry *e;

        if (!ring || ring->n == 0)
                return;
        e = &ring->entries[(ring->head + ring->n - 1) % ring->capacity];
        e->utc_maxerror_ns = maxerror_ns;
        e->utc_esterror_ns = esterror_ns;
}

const char *snapshot_unit_name(const DomainUnit *u) {
        if (u->encoding == UNIT_ENCODING_X11_US || u->period_ns == 1000.0)
                return "us";
        if (u->period_ns == 1.0)
                return "ns";
        if (u->period_ns == 1e6)
                return "ms";
        return "tick";
}

/* The domains of the exported snapshots only: a departed application's node, or one never
 * calibrated, would be a declaration with nothing behind it. */
static json_t *export_domains(const ClockGraph *g, const char *const *unit_names, uint64_t seen) {
        json_auto_t *domains = json_array();

        if (!domains)
                return NULL;
        for (size_t i = 0; i < g->n_nodes; i++) {
                const GraphNode *node = &g->nodes[i];
                double period_ns = node->unit.period_ns;
                json_t *period;

                if (!(seen & (UINT64_C(1) << i)))
                        continue;

                /* Integral periods as integers: "period_ns": 1, not 1.0. */
                if (period_ns == (double) (int64_t) period_ns)
                        period = json_integer((json_int_t) period_ns);
                else
                        period = json_real(period_ns);

                /* With "truncates" and "events", offline conversion reads a value as the live graph
                 * does. */
                if (json_array_append_new(domains, json_pack("{s:s, s:s, s:o, s:I, s:b, s:b}",
                                                             "name", node->name,
                                                             "unit", unit_names && unit_names[i] ? unit_names[i] :
                                                                     snapshot_unit_name(&node->unit),
                                                             "period_ns", period,
                                                             /* 64 for no wrap, as ListDomains says. */
                                                             "wrap_bits", (json_int_t) (node->unit.wrap_bits == 0 ? 64 :
                                                                                        node->unit.wrap_bits),
                                                             "truncates", node->unit.truncates,
                                                             "events", node->unit.events)) < 0)
                        return NULL;
        }
        return json_incref(domains);
}

static json_t *export_snapshot(const SnapshotEntry *e, const ClockGraph *g) {
        json_auto_t *clocks = json_array();

        if (!clocks)
                return NULL;
        for (size_t i = 0; i < g->n_nodes; i++) {
                if (!(e->present & (UINT64_C(1) << i)))
                        continue;
                int64_t value = e->values[i], unc_ns = e->uncertainties_ns[i], frac_ns = e->fracs_ns[i];
                int64_t now_value, now_unc_ns, now_frac_ns;
                json_t *c;

                /* What the daemon knows now of that instant, where it knows it better than it did
                 * then (a model that has seen more samples since, its history for a past segment):
                 * an offline answer is then as tight as a live one, even about an early snapshot. */
                if (snapshot_value(g, i, e->r_ns, &now_value, &now_unc_ns, &now_frac_ns) == 0 && now_unc_ns < unc_ns) {
                        value = now_value;
                        unc_ns = now_unc_ns;
                        frac_ns = now_frac_ns;
                }
                c = json_pack("{s:s, s:I, s:I}", "domain", g->nodes[i].name, "ts", (json_int_t) value,
                              "unc_ns", (json_int_t) unc_ns);
                /* "truncates" domains: where in ts's unit the time was (the loader's has_frac) */
                if (c && g->nodes[i].unit.truncates && json_object_set_new(c, "frac_ns", json_integer(frac_ns)) < 0) {
                        json_decref(c);
                        return NULL;
                }

                if (c && e->rate_uncertainties_ppb[i] != UINT32_MAX &&
                    (json_object_set_new(c, "rate_ppb", json_integer(e->rates_ppb[i])) < 0 ||
                     json_object_set_new(c, "rate_unc_ppb", json_integer(e->rate_uncertainties_ppb[i])) < 0)) {
                        json_decref(c);
                        return NULL;
                }
                /* realtime's reading says how far from UTC the kernel had it */
                if (c && e->utc_maxerror_ns >= 0 && strcmp(g->nodes[i].name, "realtime") == 0 &&
                    (json_object_set_new(c, "utc_maxerror_ns", json_integer(e->utc_maxerror_ns)) < 0 ||
                     (e->utc_esterror_ns >= 0 &&
                      json_object_set_new(c, "utc_esterror_ns", json_integer(e->utc_esterror_ns)) < 0))) {
                        json_decref(c);
                        return NULL;
                }
                if (json_array_append_new(clocks, c) < 0)
                        return NULL;
        }
        return json_pack("{s:O}", "clocks", clocks);
}

int snapshot_ring_export(const SnapshotRing *ring, const ClockGraph *g, const char *const *unit_names,
                         char **ret_json) {
        json_auto_t *root = NULL;
        json_auto_t *snapshots = NULL;
        uint64_t seen = 0;
        char *json;

        snapshots = json_array();
        if (!snapshots)
                return -ENOMEM;
        for (size_t i = 0; i < ring->n; i++) {
                const SnapshotEntry *e = snapshot_ring_get(ring, i);

                /* A snapshot relates two domains or more; a lone hub says nothing. */
                if (__builtin_popcountll(e->present) < 2)
                        continue;
                if (json_array_append_new(snapshots, export_snapshot(e, g)) < 0)
                        return -ENOMEM;
                seen |= e->present;
        }

        root = json_pack("{s:o, s:O}", "domains", export_domains(g, unit_names, seen), "snapshots", snapshots);
        if (!root)
                return -ENOMEM;

        json = json_dumps(root, JSON_COMPACT);
        if (!json)
                return -ENOMEM;
        *ret_json = json;
        return 0;
}
