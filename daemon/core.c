/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burst.h"
#include "clock-id.h"
#include "core.h"
#include "cleanup.h"
#include "time-util.h"

CoreDomain *core_domain_alloc(Core *c) {
        for (size_t i = 0; i < CORE_DOMAINS_MAX; i++)
                if (!c->slots[i].in_use) {
                        memset(&c->slots[i], 0, sizeof(c->slots[i]));
                        c->slots[i].in_use = true;
                        return &c->slots[i];
                }
        return NULL;
}

CoreDomain *core_domain_release(CoreDomain *d) {
        if (!d)
                return NULL;
        if (d->ops && d->domain)
                d->ops->close(d->domain);
        d->domain = NULL;
        d->in_use = false;
        return NULL;
}

DomainInfo core_ns_domain_info(const char *name) {
        DomainInfo info = {
                .unit = UNIT_NS,
                .resolution_ns = 1,
                .monotonic = true,
                .perfetto_id = clock_id_for_name(name),
        };

        snprintf(info.name, sizeof(info.name), "%s", name);
        return info;
}

/* The hub as it is before a source describes it: exact, monotonic, never wrapping. */
static int core_add_hub(Core *c) {
        CoreDomain *hub;
        int r;

        r = graph_init(&c->graph, CORE_HUB);
        if (r < 0)
                return r;
        hub = core_domain_alloc(c);
        if (!hub)
                return -ENOMEM;
        hub->view_of = SIZE_MAX;
        hub->info = core_ns_domain_info(CORE_HUB);
        c->domains[c->graph.hub] = hub;
        c->n_domains = 1;
        return 0;
}

int core_new(const Log *log, Core **ret) {
        _cleanup_(core_freep) Core *c = NULL;
        int r;

        if (!log || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->log = log;
        c->relist_from = SIZE_MAX;
        /* calloc() of this size maps fresh zero pages: write them, so they are resident now.
         * Not memset(): GCC folds malloc + memset(0) into calloc, which leaves them unwritten. */
        c->slots = malloc(CORE_DOMAINS_MAX * sizeof(CoreDomain));
        if (!c->slots)
                return -ENOMEM;
        explicit_bzero(c->slots, CORE_DOMAINS_MAX * sizeof(CoreDomain));

        r = core_add_hub(c);
        if (r < 0)
                return r;
        r = snapshot_ring_new(SNAPSHOT_RING_CAPACITY, &c->snapshots);
        if (r < 0)
                return r;
        r = table_publisher_new(&c->table);
        if (r < 0)
                /* Clients still get every answer over the bus, only slower. */
                log_warning_errno(log, r, "no shared table, clients will use the bus: %m");

        *ret = TAKE_PTR(c);
        return 0;
}

Core *core_free(Core *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_domains; i++)
                core_domain_release(c->domains[i]);
        snapshot_ring_free(c->snapshots);
        table_publisher_free(c->table);
        free(c->relist_config);
        free(c->slots);
        free(c);
        return NULL;
}

/* Makes *d a node of the graph on history (its own, or that of the domain it shows) and appends
 * it: the core owns it then, and *d is NULL. */
static int core_append(Core *c, CoreDomain **d, History *history) {
        size_t index;
        int r;

        r = graph_add(&c->graph, (*d)->info.name, &(*d)->info.unit, history, &index);
        if (r < 0)
                return r;
        r = graph_set_lag(&c->graph, index, (*d)->info.lag_ns);
        if (r < 0)
                return r;
        c->domains[c->n_domains++] = TAKE_PTR(*d);
        return 0;
}

/* An application's clock counts ns at a nominal rate (a crystal is within 100 ppm): a prior of
 * 1 % keeps the bound honest for one the application scales roughly, and two snapshots pin the
 * rate far tighter. The rest as for the daemon's own clocks. */
static const EstimatorConfig app_estimator_config = {
        .max_rate_error = 1e-2,
        .window_ns = INT64_C(600) * NSEC_PER_SEC,
        .step_threshold_ns = 10000,
};

static void core_application_init(CoreDomain *d, const char *name) {
        history_init(&d->history, &app_estimator_config);
        d->info = core_ns_domain_info(name);
        d->ops = NULL;
        d->domain = NULL;
        d->view_of = SIZE_MAX;
        d->last_calibrated_ns = 0;
        d->application = true;
        d->gone = false;
}

/* A departed application's node, or SIZE_MAX: the one called name first, else any. */
static size_t core_find_gone(const Core *c, const char *name) {
        size_t index;

        if (graph_find(&c->graph, name, &index) == 0)
                return c->domains[index]->gone ? index : SIZE_MAX;
        for (size_t i = 0; i < c->n_domains; i++)
                if (c->domains[i]->gone)
                        return i;
        return SIZE_MAX;
}

int core_add_application(Core *c, const char *name, size_t *ret_index) {
        size_t index;
        int r;

        if (!c || !name || !ret_index)
                return -EINVAL;
        if (core_find(c, name, &index) == 0)
                return -EEXIST;
        /* A departed node of that name keeps its index (a client that comes back finds its
         * domain where it was); else a new node; else any departed one, renamed. */
        index = SIZE_MAX;
        if (graph_find(&c->graph, name, &index) < 0 && c->n_domains < CORE_DOMAINS_MAX &&
            c->graph.n_nodes == c->n_domains) {
                _cleanup_(core_domain_releasep) CoreDomain *fresh = core_domain_alloc(c);

                if (!fresh)
                        return -EDQUOT;
                core_application_init(fresh, name);
                index = c->n_domains;
                r = core_append(c, &fresh, &fresh->history);
                if (r < 0)
                        return r;
                *ret_index = index;
                return 0;
        }
        index = core_find_gone(c, name);
        if (index == SIZE_MAX)
                return -EDQUOT;
        core_application_init(c->domains[index], name);
        r = graph_reset_node(&c->graph, index, name, &UNIT_NS, &c->domains[index]->history);
        if (r < 0) {
                c->domains[index]->gone = true;
                return r;
        }
        *ret_index = index;
        return 0;
}

/* Takes the node's snapshots out of the export: they were another clock's. */
static void core_forget_snapshots(SnapshotRing *ring, size_t index) {
        for (size_t i = 0; i < ring->capacity; i++)
                ring->entries[i].present &= ~(UINT64_C(1) << index);
}

void core_bury_application(Core *c, size_t index) {
        CoreDomain *d;

        if (!c || index >= c->n_domains || !c->domains[index]->application)
                return;
        d = c->domains[index];
        d->gone = true;
        history_init(&d->history, &app_estimator_config);
        (void) graph_set_target_only(&c->graph, index, false);
        graph_set_available(&c->graph, index, false);
        graph_refresh(&c->graph, index);
        core_forget_snapshots(c->snapshots, index);
}

int core_feed_application(Core *c, size_t index, const Sample *s, bool backwards, HistoryEvent *ret_event) {
        CoreDomain *d;
        int r;

        if (!c || index >= c->n_domains || !s || !ret_event || !c->domains[index]->application ||
            c->domains[index]->gone)
                return -EINVAL;
        d = c->domains[index];
        /* Its values no longer name one instant each (Perfetto's rule): a target only, for good. */
        if (backwards && d->info.monotonic) {
                log_info(c->log, "application clocks: domain '%s' went backwards, it is a target only now",
                         d->info.name);
                d->info.monotonic = false;
                (void) graph_set_target_only(&c->graph, index, true);
        }
        r = history_add(&d->history, s, ret_event);
        if (r < 0)
                return r;
        d->last_calibrated_ns = clock_now_ns(CLOCK_MONOTONIC);
        graph_refresh(&c->graph, index);
        return 0;
}

/* A view: a node on the history of the domain it shows, in a unit of its own. */
static int core_add_view(Core *c, const DomainInfo *info) {
        _cleanup_(core_domain_releasep) CoreDomain *d = NULL;
        size_t shown;

        if (graph_find(&c->graph, info->view_of, &shown) < 0)
                return -ENOENT;
        if (shown == c->graph.hub || c->domains[shown]->view_of != SIZE_MAX)
                return -EINVAL;

        d = core_domain_alloc(c);
        if (!d)
                return -ENOSPC;
        d->info = *info;
        d->view_of = shown;

        return core_append(c, &d, &c->domains[shown]->history);
}

int core_add_domain(Core *c, const DomainOps *ops, const DomainInfo *info, const void *config) {
        _cleanup_(core_domain_releasep) CoreDomain *d = NULL;
        size_t index;
        int r;

        if (!c || !ops || !info)
                return -EINVAL;

        if (strcmp(info->name, CORE_HUB) == 0) {
                c->domains[c->graph.hub]->info = *info;
                return 0;
        }
        if (graph_find(&c->graph, info->name, &index) == 0)
                return -EEXIST;
        if (c->n_domains == CORE_DOMAINS_MAX)
                return -ENOSPC;
        /* Graph nodes are only ever appended, so node and domain indices stay equal. */
        if (c->graph.n_nodes != c->n_domains)
                return -EIO;
        if (info->view_of[0])
                return core_add_view(c, info);

        d = core_domain_alloc(c);
        if (!d)
                return -ENOSPC;
        history_init(&d->history, NULL);
        d->view_of = SIZE_MAX;

        r = ops->open(info->name, config, &d->domain);
        if (r < 0)
                return r;
        d->ops = ops;
        d->info = *ops->info(d->domain);
        d->info.view_of[0] = 0;

        return core_append(c, &d, &d->history);
}

int core_set_relist(Core *c, const DomainOps *ops, const void *config, size_t size) {
        void *copy;

        if (!c || !ops || (!config && size > 0))
                return -EINVAL;
        copy = size > 0 ? malloc(size) : NULL;
        if (size > 0 && !copy)
                return -ENOMEM;
        if (size > 0)
                memcpy(copy, config, size);
        free(c->relist_config);
        c->relist_config = copy;
        c->relist_ops = ops;
        return 0;
}

int core_relist(Core *c) {
        DomainStatus status = {};
        size_t index;
        int added = 0, r;

        if (!c || c->relist_from == SIZE_MAX)
                return 0;
        index = c->relist_from;
        c->relist_from = SIZE_MAX;
        if (index >= c->n_domains || c->domains[index]->ops != c->relist_ops || c->domains[index]->busy_status ||
            c->domains[index]->ops->status(c->domains[index]->domain, &status) < 0)
                return 0;
        for (size_t i = 0; i < status.n_listed; i++) {
                DomainInfo info = status.listed[i];
                size_t other;

                if (graph_find(&c->graph, info.name, &other) == 0)
                        continue;
                r = core_add_domain(c, c->relist_ops, &info, c->relist_config);
                if (r < 0) {
                        log_warning_errno(c->log, r, "source '%s': cannot add domain '%s': %m", c->relist_ops->source,
                                          info.name);
                        continue;
                }
                log_info(c->log, "source '%s': domain '%s' added", c->relist_ops->source, info.name);
                added++;
        }
        return added;
}

size_t core_count(const Core *c) {
        return c->n_domains;
}

const char *core_domain_name(const Core *c, size_t index) {
        return index < c->n_domains ? c->domains[index]->info.name : NULL;
}

bool core_domain_is_hub(const Core *c, size_t index) {
        return index == c->graph.hub;
}

bool core_domain_available(const Core *c, size_t index) {
        return index < c->n_domains && c->graph.nodes[index].available;
}

bool core_domain_is_view(const Core *c, size_t index) {
        return index < c->n_domains && c->domains[index]->view_of != SIZE_MAX;
}

bool core_domain_is_view_of(const Core *c, size_t index, size_t shown) {
        return index < c->n_domains && c->domains[index]->view_of == shown;
}

bool core_domain_gone(const Core *c, size_t index) {
        return index < c->n_domains && c->domains[index]->gone;
}

int core_find(const Core *c, const char *name, size_t *ret_index) {
        size_t index;

        /* Names are unique in the graph: a departed application's node keeps its name until a
         * new application domain takes the node. */
        if (graph_find(&c->graph, name, &index) < 0 || core_domain_gone(c, index))
                return -ENOENT;
        *ret_index = index;
        return 0;
}

/* The domain that owns index's source handle and history: itself, or the one it is a view of. */
static const CoreDomain *core_domain_owner(const Core *c, size_t index) {
        const CoreDomain *d = c->domains[index];

        return d->view_of == SIZE_MAX ? d : c->domains[d->view_of];
}

const History *core_domain_history(const Core *c, size_t index) {
        if (index >= c->n_domains || index == c->graph.hub)
                return NULL;
        return &core_domain_owner(c, index)->history;
}

int core_domain_status(const Core *c, size_t index, DomainStatus *ret) {
        const CoreDomain *d;

        if (index >= c->n_domains)
                return -EINVAL;
        d = core_domain_owner(c, index);
        if (d->busy_status) {
                *ret = *d->busy_status;
                return 0;
        }
        if (!d->ops || !d->ops->status)
                return -EOPNOTSUPP;
        *ret = (DomainStatus) {};
        return d->ops->status(d->domain, ret);
}

int core_domain_watch_fd(const Core *c, size_t index) {
        const CoreDomain *d;

        if (index >= c->n_domains)
                return -EINVAL;
        d = c->domains[index];
        if (!d->ops || !d->ops->watch_fd || !d->ops->dispatch)
                return -EOPNOTSUPP;
        if (d->busy_status)
                return -EBUSY;
        return d->ops->watch_fd(d->domain);
}

/* Availability goes with the domain to every view of it. */
static void core_set_available(Core *c, size_t index, bool available) {
        graph_set_available(&c->graph, index, available);
        for (size_t i = 0; i < c->n_domains; i++)
                if (c->domains[i]->view_of == index)
                        graph_set_available(&c->graph, i, available);
}

int core_domain_dispatch(Core *c, size_t index) {
        CoreDomain *d;
        int r;

        if (index >= c->n_domains)
                return -EINVAL;
        d = c->domains[index];
        if (!d->ops || !d->ops->dispatch)
                return -EOPNOTSUPP;
        if (d->busy_status)
                return -EBUSY;
        r = d->ops->dispatch(d->domain);
        if (r < 0)
                core_set_available(c, index, false);
        return r;
}

/* Bursts in a row that may time out before a domain that was calibrated is called unavailable. */
#define CORE_TIMEOUTS_UNAVAILABLE 3

/* Samples go to the history oldest first; a burst keeps a handful, so insertion sort it is. */
static void sort_by_reference(Sample *samples, size_t n) {
        for (size_t i = 1; i < n; i++) {
                Sample s = samples[i];
                size_t j;

                for (j = i; j > 0 && samples[j - 1].r0_ns > s.r0_ns; j--)
                        samples[j] = samples[j - 1];
                samples[j] = s;
        }
}

static int verdict_rank(EstimatorVerdict v) {
        switch (v) {
        case ESTIMATOR_STEP:
                return 2;
        case ESTIMATOR_RATE_CHANGE:
                return 1;
        default:
                return 0;
        }
}

typedef enum CoreStatusChange {
        CORE_STATUS_SAME,
        CORE_STATUS_RESTARTED,          /* a new clock: the old segment's model in *ret_old_model */
        CORE_STATUS_RATE_CHANGED,       /* the source knows the rate changed, and by how much */
} CoreStatusChange;

/* A change of rate the source told of closes the segment now, and the old rate moved by the
 * change is where the next one starts, so that its first bounds are as tight as the last. */
static bool core_apply_rate_epoch(Core *c, CoreDomain *d, const DomainStatus *status) {
        int r;

        if (status->rate_epoch == d->rate_epoch)
                return false;
        r = history_rate_changed(&d->history, (double) status->rate_change_ppb * 1e-9,
                                 (double) status->rate_change_margin_ppb * 1e-9);
        if (r < 0)
                return false;
        log_info(c->log, "domain '%s': the kernel's NTP discipline changed its rate by %+" PRId64 " +- %" PRId64
                 " ppb; a new segment starts", d->info.name, status->rate_change_ppb, status->rate_change_margin_ppb);
        return true;
}

/* What the source says beyond its samples, before the new samples go in: a new generation of
 * the clock closes the segment, and so does a change of rate it knows of; same_as makes the
 * node (and its views) follow that domain. */
/* A restarted clock may count in another unit (a vblank counter on another mode): the node is
 * re-made with the unit and lag the source gives now, on the restarted history. */
static void core_apply_unit(Core *c, size_t index) {
        CoreDomain *d = c->domains[index];
        const DomainInfo *now = d->ops->info(d->domain);
        bool available = c->graph.nodes[index].available;

        if (memcmp(&now->unit, &d->info.unit, sizeof(now->unit)) == 0 && now->lag_ns == d->info.lag_ns)
                return;
        log_info(c->log, "domain '%s': now %.0f ns a %s", d->info.name, now->unit.period_ns,
                 d->info.unit_name[0] ? d->info.unit_name : "unit");
        if (graph_reset_node(&c->graph, index, d->info.name, &now->unit, &d->history) < 0 ||
            graph_set_lag(&c->graph, index, now->lag_ns) < 0) {
                log_warning(c->log, "domain '%s': cannot take its new unit", d->info.name);
                return;
        }
        graph_set_available(&c->graph, index, available);
        d->info.unit = now->unit;
        d->info.lag_ns = now->lag_ns;
        d->info.resolution_ns = now->resolution_ns;
}

static CoreStatusChange core_apply_status(Core *c, size_t index, Model *ret_old_model) {
        CoreDomain *d = c->domains[index];
        DomainStatus status = {};
        size_t same_as = SIZE_MAX;
        CoreStatusChange change = CORE_STATUS_SAME;

        if (!d->ops->status || d->ops->status(d->domain, &status) < 0)
                return CORE_STATUS_SAME;

        if (d->has_generation && status.generation != d->generation) {
                const Segment *closed = history_current(&d->history);

                log_info(c->log, "domain '%s': the clock restarted (generation %" PRIu64 "); a new segment starts",
                         d->info.name, status.generation);
                if (closed) {
                        *ret_old_model = closed->model;
                        change = CORE_STATUS_RESTARTED;
                }
                history_restart(&d->history);
                core_apply_unit(c, index);
        } else if (core_apply_rate_epoch(c, d, &status))
                change = CORE_STATUS_RATE_CHANGED;
        /* From the first burst on: a domain opened before its server answered lists what it
         * finds once it does. */
        if (status.list_epoch != d->list_epoch && d->ops == c->relist_ops)
                c->relist_from = index;
        d->generation = status.generation;
        d->has_generation = true;
        d->rate_epoch = status.rate_epoch;
        d->list_epoch = status.list_epoch;

        if (status.same_as && graph_find(&c->graph, status.same_as, &same_as) < 0) {
                log_debug(c->log, "domain '%s': same as unknown domain '%s', ignored", d->info.name, status.same_as);
                same_as = SIZE_MAX;
        }
        for (size_t i = 0; i < c->n_domains; i++)
                if (i == index || c->domains[i]->view_of == index) {
                        if (graph_set_same_as(&c->graph, i, same_as) < 0)
                                log_debug(c->log, "domain '%s': cannot follow '%s'", c->domains[i]->info.name,
                                          status.same_as);
                        else if (same_as != SIZE_MAX)
                                /* The verdict pins the clock near the other, not onto it. */
                                (void) graph_set_same_as_uncertainty(&c->graph, i,
                                                                     status.same_as_uncertainty_ns > 0 ?
                                                                             status.same_as_uncertainty_ns : 0);
                }
        return change;
}

/* A restarted clock (a new X server, a GPU back after a loss) is a discontinuity like any step:
 * announced with its jump, the first new sample against what the old model predicted there. */
static CoreBurst core_restart_burst(const Model *old_model, const Sample *first) {
        int64_t r_ns = first->r0_ns + (first->r1_ns - first->r0_ns) / 2;
        int64_t x_ns = first->x_lo_ns + (first->x_hi_ns - first->x_lo_ns) / 2;
        int64_t predicted_ns, uncertainty_ns;

        if (model_forward(old_model, r_ns, 0, &predicted_ns, &uncertainty_ns) < 0)
                predicted_ns = x_ns;
        return (CoreBurst) {
                .verdict = ESTIMATOR_STEP,
                .restarted = true,
                .step_ns = x_ns - predicted_ns,
                .at_r_ns = first->r0_ns,
        };
}

int core_domain_source(const Core *c, size_t index, const DomainOps **ret_ops, Domain **ret_domain) {
        const CoreDomain *d;

        if (!c || index >= c->n_domains || !ret_ops || !ret_domain)
                return -EINVAL;
        d = c->domains[index];
        if (!d->ops || !d->domain)
                return -EOPNOTSUPP;
        *ret_ops = d->ops;
        *ret_domain = d->domain;
        return 0;
}

void core_domain_set_busy(Core *c, size_t index, const DomainStatus *status) {
        if (c && index < c->n_domains)
                c->domains[index]->busy_status = status;
}

int core_calibrate(Core *c, size_t index, CoreBurst *ret) {
        Sample samples[CORE_BURST_SAMPLES];
        CoreDomain *d;
        size_t n = 0;
        int r;

        if (!c || index >= c->n_domains || index == c->graph.hub || core_domain_is_view(c, index))
                return -EINVAL;
        d = c->domains[index];
        if (d->application) {
                *ret = (CoreBurst) { .verdict = ESTIMATOR_CONSISTENT };
                return 0;
        }
        if (d->busy_status)
                return -EBUSY;

        r = d->ops->sample_burst(d->domain, samples, ELEMENTSOF(samples), &n);
        return core_calibrate_samples(c, index, r, samples, n, ret);
}

int core_calibrate_samples(Core *c, size_t index, int read_result, Sample *samples, size_t n, CoreBurst *ret) {
        CoreBurst burst = { .verdict = ESTIMATOR_CONSISTENT };
        size_t n_kept = 0, n_added = 0;
        Model old_model = {};
        CoreStatusChange change;
        EstimatorPrior prior;
        CoreDomain *d;
        int r = read_result;

        if (!c || index >= c->n_domains || index == c->graph.hub || core_domain_is_view(c, index) ||
            (!samples && n > 0) || !ret)
                return -EINVAL;
        d = c->domains[index];
        if (d->application || d->busy_status)
                return -EINVAL;

        if (r >= 0 && n > CORE_BURST_SAMPLES)
                r = -EIO;
        if (r >= 0) {
                if (d->info.unit.truncates) {
                        n_kept = n;
                } else
                        r = burst_select(samples, n, CORE_BURST_KEEP, &n_kept);
        }
        if (r >= 0 && n_kept == 0)
                r = -ENODATA;
        if (r == -ETIMEDOUT && d->last_calibrated_ns > 0 && ++d->timeouts < CORE_TIMEOUTS_UNAVAILABLE)
                /* A server slow to answer under load: the model holds, its bound grows with the
                 * time since the last burst; only a server that stays silent is unavailable. */
                return r;
        if (r < 0) {
                core_set_available(c, index, false);
                return r;
        }
        d->timeouts = 0;
        sort_by_reference(samples, n_kept);
        change = core_apply_status(c, index, &old_model);
        prior = history_rate_prior(&d->history);

        for (size_t i = 0; i < n_kept; i++) {
                HistoryEvent event;

                r = history_add(&d->history, &samples[i], &event);
                if (r < 0) {
                        /* A sample older than the window's newest: the source misbehaved once. */
                        log_debug_errno(c->log, r, "domain '%s': sample %zu of the burst rejected: %m",
                                        d->info.name, i);
                        continue;
                }
                n_added++;
                if (verdict_rank(event.verdict) > verdict_rank(burst.verdict))
                        burst = (CoreBurst) {
                                .verdict = event.verdict,
                                .step_ns = event.step_ns,
                                .at_r_ns = event.at_r_ns,
                        };
        }
        if (n_added == 0)
                return -EINVAL;
        /* A remembered rate (daemon/state-apply.c) the samples refuted: say so, it is news. */
        if (prior == ESTIMATOR_PRIOR_ACTIVE && history_rate_prior(&d->history) == ESTIMATOR_PRIOR_CONTRADICTED)
                log_notice(c->log, "domain '%s': the remembered rate was wrong (it moved while the daemon was "
                           "down), calibrating from the samples alone", d->info.name);
        if (change == CORE_STATUS_RESTARTED && burst.verdict == ESTIMATOR_CONSISTENT)
                burst = core_restart_burst(&old_model, &samples[0]);
        else if (change == CORE_STATUS_RATE_CHANGED && burst.verdict == ESTIMATOR_CONSISTENT)
                burst = (CoreBurst) { .verdict = ESTIMATOR_RATE_CHANGE, .at_r_ns = samples[0].r0_ns };

        core_set_available(c, index, true);
        graph_refresh(&c->graph, index);
        for (size_t i = 0; i < c->n_domains; i++)
                if (c->domains[i]->view_of == index) {
                        graph_refresh(&c->graph, i);
                        c->domains[i]->last_calibrated_ns = clock_now_ns(CLOCK_MONOTONIC);
                }
        d->last_calibrated_ns = clock_now_ns(CLOCK_MONOTONIC);
        *ret = burst;
        return 0;
}

void core_snapshot_utc(Core *c, int64_t maxerror_ns, int64_t esterror_ns) {
        snapshot_ring_set_utc(c->snapshots, maxerror_ns, esterror_ns);
}

void core_snapshot(Core *c) {
        int64_t r_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);

        snapshot_ring_take(c->snapshots, &c->graph, r_ns);
        c->last_tick_r_ns = r_ns;
        c->last_tick_ns = clock_now_ns(CLOCK_MONOTONIC);
        /* The hub needs no burst: it is calibrated by definition, as of every tick. */
        c->domains[c->graph.hub]->last_calibrated_ns = c->last_tick_ns;
}

void core_publish(Core *c) {
        int r;

        if (!c->table)
                return;
        r = table_publisher_update(c->table, &c->graph);
        if (r < 0)
                log_debug_errno(c->log, r, "cannot update the shared table: %m");
}

void core_set_activity_hook(Core *c, CoreActivityHook hook, void *userdata) {
        c->activity_hook = hook;
        c->activity_userdata = userdata;
}
