/* SPDX-License-Identifier: MIT */

/* The graph nodes of application clocks: made (appended, or a departed one reused), fed with
 * snapshot boxes, buried when their owner leaves. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "app-clocks-internal.h"

/* An application's clock counts ns at a nominal rate (a crystal is within 100 ppm): a prior of
 * 1 % keeps the bound honest for one the application scales roughly, and two snapshots pin the
 * rate far tighter. The rest as for the daemon's own clocks. */
static const EstimatorConfig app_estimator_config = {
        .max_rate_error = 1e-2,
        .window_ns = INT64_C(600) * NSEC_PER_SEC,
        .step_threshold_ns = 10000,
};

/* Takes the node's snapshots out of the export: they were another clock's. */
static void forget_snapshots(SnapshotRing *ring, size_t index) {
        for (size_t i = 0; i < ring->capacity; i++)
                ring->entries[i].present &= ~(UINT64_C(1) << index);
}

/* The node of a departed client's domain: unavailable and nameless for the bus, its history
 * cleared, kept in the graph so that the shared table's indices stay valid. */
void app_domain_bury(AppClocks *a, size_t index) {
        Core *c = a->core;
        CoreDomain *d = c->domains[index];

        d->gone = true;
        history_init(&d->history, &app_estimator_config);
        (void) graph_set_target_only(&c->graph, index, false);
        graph_set_available(&c->graph, index, false);
        graph_refresh(&c->graph, index);
        forget_snapshots(c->snapshots, index);
        a->nodes[index] = (AppNode) {};
        a->n_live--;
}

static void domain_init(CoreDomain *d, const char *name) {
        history_init(&d->history, &app_estimator_config);
        d->info = core_ns_domain_info(name);
        d->ops = NULL;
        d->domain = NULL;
        d->view_of = SIZE_MAX;
        d->last_calibrated_ns = 0;
        d->application = true;
        d->gone = false;
}

/* A node for the new domain name: the departed one of that name, else a new node, else any
 * departed one (renamed: the table cannot say that, so clients get a new one). */
int app_domain_add(AppClocks *a, AppClient *cl, const char *name, size_t *ret_index) {
        Core *c = a->core;
        CoreDomain *d;
        size_t index = SIZE_MAX;
        int r;

        if (graph_find(&c->graph, name, &index) < 0) {
                index = SIZE_MAX;
                if (c->n_domains < CORE_DOMAINS_MAX && c->graph.n_nodes == c->n_domains) {
                        _cleanup_(core_domain_releasep) CoreDomain *fresh = core_domain_alloc(c);

                        if (!fresh)
                                return -EDQUOT;
                        domain_init(fresh, name);
                        r = graph_add(&c->graph, name, &UNIT_NS, &fresh->history, &index);
                        if (r < 0)
                                return r;
                        c->domains[c->n_domains++] = fresh;
                        fresh = NULL;
                } else
                        for (size_t i = 0; i < c->n_domains && index == SIZE_MAX; i++)
                                if (c->domains[i]->gone)
                                        index = i;
                if (index == SIZE_MAX)
                        return -EDQUOT;
        }
        d = c->domains[index];
        if (d->application && !d->gone && a->nodes[index].owner)
                return -EEXIST;
        if (d->gone) {
                domain_init(d, name);
                r = graph_reset_node(&c->graph, index, name, &UNIT_NS, &d->history);
                if (r < 0) {
                        d->gone = true;
                        return r;
                }
        }
        a->nodes[index] = (AppNode) { .owner = cl };
        cl->domains[cl->n_domains++] = index;
        a->n_live++;
        log_info(c->log, "application clocks: %s made domain '%s'", cl->name, name);
        *ret_index = index;
        return 0;
}

/* One application reading into its domain. A value below the previous one makes the domain a
 * target only, for good: its values no longer name one instant each (Perfetto's rule). */
int app_domain_feed(AppClocks *a, size_t index, const Sample *s) {
        Core *c = a->core;
        CoreDomain *d = c->domains[index];
        AppNode *node = &a->nodes[index];
        HistoryEvent event;
        int r;

        if (node->has_last && s->x_lo_ns < node->last_x_ns && d->info.monotonic) {
                log_info(c->log, "application clocks: domain '%s' went backwards, it is a target only now",
                         d->info.name);
                d->info.monotonic = false;
                (void) graph_set_target_only(&c->graph, index, true);
        }
        r = history_add(&d->history, s, &event);
        if (r < 0)
                return r;
        node->has_last = true;
        node->last_r_lo_ns = s->r0_ns;
        node->last_x_ns = s->x_lo_ns;
        d->last_calibrated_ns = clock_now_ns(CLOCK_MONOTONIC);
        graph_refresh(&c->graph, index);
        if (event.verdict == ESTIMATOR_STEP && a->api) {
                /* After the table has it, as for the daemon's own steps. */
                core_publish(c);
                log_debug(c->log, "application clocks: domain '%s' stepped by %+" PRId64 " ns", d->info.name,
                          event.step_ns);
                r = bus_api_emit_discontinuity(a->api, d->info.name, clock_now_ns(CLOCK_MONOTONIC), event.step_ns,
                                               BUS_DISCONTINUITY_STEP);
                if (r < 0)
                        log_warning_errno(c->log, r, "cannot emit Discontinuity: %m");
        }
        return 0;
}
