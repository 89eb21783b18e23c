/* SPDX-License-Identifier: MIT */

/* What application clocks need of the graph and the shared table: a node fed with snapshot
 * boxes converts both ways within its bound; a target-only node (its values went backwards)
 * refuses to be a source, in the graph and in a copy read from the table, but stays a target;
 * a departed node is reset in place, under its own name (the table goes on) or another (the
 * table must be reissued). */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "shared-table.h"
#include "tap.h"

static const EstimatorConfig config = {
        .max_rate_error = 1e-2,
        .window_ns = INT64_C(600) * 1000000000,
        .step_threshold_ns = 10000,
};

/* The truth of the application clock: x = X0 + (r - R0) * (1 + 25 ppm). */
#define R0 INT64_C(1000000000000)
#define X0 INT64_C(777000000000)
#define PPB 25000

static int64_t truth_x(int64_t r_ns) {
        __int128 d = r_ns - R0;

        return X0 + (int64_t) (d + d * PPB / 1000000000);
}

/* Ten snapshots 100 ms apart, each read within +-u_ns of the hub. */
static void feed(History *h, int64_t u_ns) {
        for (int i = 0; i < 10; i++) {
                int64_t r_ns = R0 + i * INT64_C(100000000);
                const Sample s = { r_ns - u_ns, r_ns + u_ns, truth_x(r_ns), truth_x(r_ns) };

                history_add(h, &s, NULL);
        }
}

/* The truth within the bound (1 ns for the integer reading), at points in and beyond the
 * snapshots' span. */
static void check_truth(const ClockGraph *g, size_t app, const char *what) {
        int outside = 0, failed = 0;

        for (int i = -5; i < 30; i++) {
                int64_t r_ns = R0 + i * INT64_C(50000000), x_ns = truth_x(r_ns), v, u;

                if (graph_convert(g, g->hub, app, r_ns, INT64_MIN, &v, &u) < 0)
                        failed++;
                else if (v - u > x_ns + 1 || v + u < x_ns - 1)
                        outside++;
                if (graph_convert(g, app, g->hub, x_ns, INT64_MIN, &v, &u) < 0)
                        failed++;
                else if (v - u > r_ns + 1 || v + u < r_ns - 1)
                        outside++;
        }
        ok(failed == 0 && outside == 0, "%s: both ways, the truth within the bound (%d failed, %d outside)", what,
           failed, outside);
}

int main(void) {
        ClockGraph g;
        History h, other;
        SharedTableNode node_app;
        size_t app = 0, mono = 0, size = shared_table_size(GRAPH_NODES_MAX);
        void *mem = aligned_alloc(64, (size + 63) / 64 * 64);
        uint64_t generation;
        int64_t v, u;

        if (!mem)
                bail_out("out of memory for a shared table of %zu bytes", size);
        history_init(&h, &config);
        history_init(&other, &config);
        is_int(graph_init(&g, "monotonic_raw"), 0, "graph with its hub");
        is_int(graph_add(&g, "monotonic", &UNIT_NS, &other, &mono), 0, "a daemon's domain");
        is_int(graph_add(&g, "cam", &UNIT_NS, &h, &app), 0, "an application domain");
        feed(&h, 2000);
        graph_refresh(&g, app);
        check_truth(&g, app, "boxes of +-2 us");
        ok(sizeof(((GraphNode *) 0)->target_only) == 1 && offsetof(GraphNode, target_only) <
           offsetof(GraphNode, model_id), "target_only sits in what was padding");

        /* Perfetto's rule. */
        is_int(graph_set_target_only(&g, g.hub, true), -EINVAL, "the hub cannot be a target only");
        is_int(graph_set_target_only(&g, app, true), 0, "cam becomes a target only");
        ok(!g.hot[app][g.hub].ok, "a target-only node leaves the inline path");
        is_int(graph_convert(&g, app, g.hub, truth_x(R0), INT64_MIN, &v, &u), -ENOLINK, "from it: -ENOLINK");
        ok(graph_convert(&g, app, app, 5, INT64_MIN, &v, &u) == 0 && v == 5 && u == 0, "to itself: the identity");
        ok(graph_convert(&g, g.hub, app, R0, INT64_MIN, &v, &u) == 0 && v - u <= truth_x(R0) + 1 &&
           v + u >= truth_x(R0) - 1, "to it: still converts, within the bound");

        is_int(shared_table_init(mem, size, GRAPH_NODES_MAX), 0, "a shared table");
        is_int(shared_table_publish(mem, size, &g), 0, "published");
        ok(shared_table_read_node(mem, size, app, &node_app) == 0 && strcmp(node_app.name, "cam") == 0,
           "the table names it");
        is_int(shared_table_convert(mem, size, app, g.hub, truth_x(R0), INT64_MIN, &v, &u), -ENOLINK,
               "a client converting from it through the table gets -ENOLINK too");
        ok(shared_table_convert(mem, size, g.hub, app, R0, INT64_MIN, &v, &u) == 0 && v - u <= truth_x(R0) + 1 &&
           v + u >= truth_x(R0) - 1, "and converts to it");

        /* Its owner leaves: a tombstone, then the node reused. */
        generation = shared_table_generation(mem);
        graph_set_available(&g, app, false);
        is_int(graph_convert(&g, g.hub, app, R0, INT64_MIN, &v, &u), -ENODEV, "a departed node is unavailable");
        is_int(shared_table_publish(mem, size, &g), 0, "the tombstone publishes in place");
        history_init(&h, &config);
        is_int(graph_reset_node(&g, g.hub, "cam", &UNIT_NS, &h), -EINVAL, "the hub is never reset");
        is_int(graph_reset_node(&g, app, "monotonic", &UNIT_NS, &h), -EEXIST, "nor given a name in use");
        is_int(graph_set_same_as(&g, mono, app), 0, "monotonic follows cam (a test of the refusal below)");
        is_int(graph_reset_node(&g, app, "cam", &UNIT_NS, &h), -EINVAL, "a node others follow is not reset");
        is_int(graph_set_same_as(&g, mono, SIZE_MAX), 0, "monotonic on its own again");
        is_int(graph_reset_node(&g, app, "cam", &UNIT_NS, &h), 0, "cam is reset under its name");
        ok(g.nodes[app].available && !g.nodes[app].calibrated && !g.nodes[app].target_only,
           "available, not calibrated, a source again");
        is_int(graph_convert(&g, app, g.hub, 5, INT64_MIN, &v, &u), -ENODEV, "nothing to convert with yet");
        feed(&h, 0);
        graph_refresh(&g, app);
        check_truth(&g, app, "the new clock, from exact boxes");
        is_int(shared_table_publish(mem, size, &g), 0, "the same name publishes in the same table");
        ok(shared_table_generation(mem) == generation, "no new node: the generation stays");

        is_int(graph_reset_node(&g, app, "mic", &UNIT_NS, &h), 0, "the node is given to 'mic'");
        is_int(shared_table_publish(mem, size, &g), SHARED_TABLE_REPLACE, "a renamed node needs a new table");
        ok(graph_find(&g, "cam", &app) == -ENOENT && graph_find(&g, "mic", &app) == 0, "only 'mic' is found");

        free(mem);
        return done_testing();
}
