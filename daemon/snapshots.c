/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <jansson.h>
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
        for (size_t i = 0; i < g->n_nodes; i++) {
                int64_t value, uncertainty_ns;

                /* Unavailable and uncalibrated nodes answer -ENODEV: they are left out. */
                if (graph_convert(g, g->hub, i, r_ns, r_ns, &value, &uncertainty_ns) < 0 ||
                    uncertainty_ns < 0 || uncertainty_ns > UINT32_MAX)
                        continue;
                e->values[i] = value;
                e->uncertainties_ns[i] = (uint32_t) uncertainty_ns;
                e->present |= UINT64_C(1) << i;
        }
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
                                                             "wrap_bits", (json_int_t) node->unit.wrap_bits,
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
                if (json_array_append_new(clocks, json_pack("{s:s, s:I, s:I}", "domain", g->nodes[i].name,
                                                            "ts", (json_int_t) e->values[i],
                                                            "unc_ns", (json_int_t) e->uncertainties_ns[i])) < 0)
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
