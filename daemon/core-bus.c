/* SPDX-License-Identifier: MIT */

/* The core's answers to the bus (BusCoreOps). The bus-api has validated the arguments; names
 * may still name no domain, which resolve() says once per name, so that the bus names the one
 * that failed; conversions then go by index. Errors: -ENOENT unknown domain, -ENODEV unavailable
 * or not yet calibrated, -ERANGE a value or answer out of range. Nothing here may abort on client
 * input. */

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "config.h"
#include "core-bus.h"
#include "cleanup.h"
#include "time-util.h"

void core_bus_set_applications(Core *c, const CoreBusApplications *apps) {
        c->bus_applications = apps;
}

/* The unique bus name owning application domain index, NULL: none. */
static const char *core_bus_owner(const Core *c, size_t index) {
        const CoreBusApplications *apps = c->bus_applications;

        return apps && apps->owner ? apps->owner(apps->userdata, index) : NULL;
}

static size_t core_bus_count_domains(void *userdata) {
        Core *c = userdata;

        return core_count(c);
}

/* The bound a conversion of the domain's current value to the reference carries now: the
 * record's, so that a followed clock's residual (X time in identity mode) and its unit's
 * truncation are in it, as in every answer. */
static uint64_t uncertainty_to_reference(const Core *c, size_t index) {
        int64_t r_ns = clock_now_ns(CLOCK_MONOTONIC_RAW), value, back_ns, unc_ns;

        if (graph_convert(&c->graph, c->graph.hub, index, r_ns, r_ns, &value, &unc_ns) < 0 ||
            graph_convert(&c->graph, index, c->graph.hub, value, r_ns, &back_ns, &unc_ns) < 0 || unc_ns < 0)
                return UINT64_MAX;      /* no bound to give */
        return (uint64_t) unc_ns;
}

/* The domain's ns minus CLOCK_MONOTONIC's ns at reference time r_ns, both from their models. */
static int offset_to_monotonic(const Core *c, size_t index, int64_t r_ns, int64_t *ret_offset_ns) {
        Model m_domain, m_monotonic;
        int64_t x_ns, mono_ns, unc_ns;
        size_t monotonic;
        int r;

        r = graph_find(&c->graph, "monotonic", &monotonic);
        if (r < 0)
                return r;
        r = graph_model(&c->graph, index, &m_domain);
        if (r < 0)
                return r;
        r = graph_model(&c->graph, monotonic, &m_monotonic);
        if (r < 0)
                return r;
        r = model_forward(&m_domain, r_ns, 0, &x_ns, &unc_ns);
        if (r < 0)
                return r;
        r = model_forward(&m_monotonic, r_ns, 0, &mono_ns, &unc_ns);
        if (r < 0)
                return r;
        return arith_sub(x_ns, mono_ns, ret_offset_ns);
}

/* The bound of rate_ppb, rounded up. */
static uint64_t rate_uncertainty_ppb(const Model *m) {
        int64_t ppb;

        if (arith_ceil_from_double(m->rate_half * 1e9, &ppb) < 0 || ppb < 0)
                return UINT64_MAX;
        return (uint64_t) ppb;
}

/* A source's typed entry as the bus sends it; the bus API leaves out one whose type is not its
 * key's in the key table (bus-domain-keys.h). */
static BusDomainExtra bus_extra(const DomainExtra *e) {
        BusDomainExtra b = { .key = e->key, .type = e->type };

        switch (e->type) {
        case 's':
                b.value = e->s;
                break;
        case 'b':
                b.b = e->b;
                break;
        case 'u':
                b.u = e->u;
                break;
        case 't':
                b.t = e->t;
                break;
        case 'x':
                b.x = e->x;
                break;
        case 'd':
                b.d = e->d;
                break;
        }
        return b;
}

/* What the source adds: the X verdict, a GPU's name and driver, source-specific entries. */
static void add_status(const Core *c, size_t index, BusDomainInfo *ret) {
        DomainStatus status;

        if (core_domain_status(c, index, &status) < 0)
                return;
        ret->verdict = status.verdict;
        ret->reason = status.unavailable_reason;
        ret->device_name = status.device_name;
        ret->driver = status.driver;
        for (size_t i = 0; i < status.n_extras && ret->n_extras < BUS_DOMAIN_EXTRAS_MAX; i++)
                if (status.extras[i].key && (status.extras[i].type != 's' || status.extras[i].s))
                        ret->extras[ret->n_extras++] = bus_extra(&status.extras[i]);
        if (status.same_as && ret->n_extras < BUS_DOMAIN_EXTRAS_MAX)
                ret->extras[ret->n_extras++] = (BusDomainExtra) { .key = "same_as", .value = status.same_as };
        if (core_domain_is_view(c, index) && ret->n_extras < BUS_DOMAIN_EXTRAS_MAX)
                ret->extras[ret->n_extras++] = (BusDomainExtra) {
                        .key = "view_of",
                        .value = c->domains[index]->info.view_of,
                };
}

/* A domain's unit as ListDomains and export name it: the source's own name ("frame", "tick"),
 * else by its period. */
static const char *core_bus_unit_name(const CoreDomain *d) {
        return d->info.unit_name[0] ? d->info.unit_name : snapshot_unit_name(&d->info.unit);
}

static int core_bus_get_domain(void *userdata, size_t index, BusDomainInfo *ret) {
        Core *c = userdata;
        const GraphNode *node;
        const CoreDomain *d;
        const History *history;
        bool hub, calibrated;
        int64_t r_ns;
        Model m;

        if (index >= c->n_domains)
                return -ENOENT;
        if (core_domain_gone(c, index))
                return -ESRCH;
        d = c->domains[index];
        node = &c->graph.nodes[index];
        hub = core_domain_is_hub(c, index);
        history = core_domain_history(c, index);
        calibrated = graph_model(&c->graph, index, &m) >= 0;

        *ret = (BusDomainInfo) {
                .name = d->info.name,
                .unit = core_bus_unit_name(d),
                .available = node->available && node->calibrated,
                .reference = c->graph.nodes[c->graph.hub].name,
                .resolution_ns = d->info.resolution_ns,
                .wrap_bits = d->info.unit.wrap_bits == 0 ? 64 : d->info.unit.wrap_bits,
                .monotonic = d->info.monotonic,
                .rate_ppb = calibrated ? model_rate_ppb(&m) : 0,
                .rate_uncertainty_ppb = hub ? 0 : calibrated ? rate_uncertainty_ppb(&m) : UINT64_MAX,
                .uncertainty_ns = hub ? 0 : calibrated ? uncertainty_to_reference(c, index) : UINT64_MAX,
                .last_calibrated_ns = d->last_calibrated_ns,
                .perfetto_id = d->info.perfetto_id,
        };
        if (strcmp(ret->unit, "tick") == 0)
                ret->period_ns = d->info.unit.period_ns;

        add_status(c, index, ret);
        if (d->application && core_bus_owner(c, index) && ret->n_extras < BUS_DOMAIN_EXTRAS_MAX)
                ret->extras[ret->n_extras++] = (BusDomainExtra) {
                        .key = "owner",
                        .value = core_bus_owner(c, index),
                };

        if (calibrated) {
                const Segment *current = hub ? NULL : history_current(history);

                r_ns = current ? current->r_end_ns : c->last_tick_r_ns;
                ret->has_offset_ns = offset_to_monotonic(c, index, r_ns, &ret->offset_ns) >= 0;
        }
        return 0;
}

static int core_bus_resolve(void *userdata, const char *name, size_t *ret_index) {
        Core *c = userdata;

        if (!name)
                return -ENOENT;
        return core_find(c, name, ret_index);
}

/* Whether index (from core_bus_resolve() in this method call) still names a domain. */
static bool core_bus_names_domain(const Core *c, size_t index) {
        return index < c->n_domains && !core_domain_gone(c, index);
}

static bool core_bus_unit_wraps(const DomainUnit *u) {
        return u->encoding != UNIT_ENCODING_PLAIN || (u->wrap_bits > 0 && u->wrap_bits < 64);
}

static int core_bus_convert(void *userdata, size_t from, size_t to, int64_t value,
                            int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        Core *c = userdata;
        int64_t result, uncertainty_ns;
        int r;

        if (!core_bus_names_domain(c, from) || !core_bus_names_domain(c, to))
                return -ENOENT;

        /* A wrapping value is unwrapped to the occurrence nearest to now; for any other the hint
         * is unused, and reading the clock would cost more than the conversion (ConvertMany). */
        r = graph_convert(&c->graph, from, to, value,
                          core_bus_unit_wraps(&c->graph.nodes[from].unit) ? clock_now_ns(CLOCK_MONOTONIC_RAW) : INT64_MIN,
                          &result, &uncertainty_ns);
        if (r < 0)
                return r;
        if (uncertainty_ns < 0)
                return -ERANGE;

        *ret_value = result;
        *ret_uncertainty_ns = (uint64_t) uncertainty_ns;
        return 0;
}

static int core_bus_now(void *userdata, size_t domain, int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        Core *c = userdata;
        int64_t r_ns, result, uncertainty_ns;
        int r;

        if (!core_bus_names_domain(c, domain))
                return -ENOENT;

        r_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        r = graph_convert(&c->graph, c->graph.hub, domain, r_ns, r_ns, &result, &uncertainty_ns);
        if (r < 0)
                return r;
        if (uncertainty_ns < 0)
                return -ERANGE;

        *ret_value = result;
        *ret_uncertainty_ns = (uint64_t) uncertainty_ns;
        return 0;
}

static int core_bus_export_snapshots(void *userdata, char **ret_json) {
        const char *unit_names[GRAPH_NODES_MAX] = {};
        Core *c = userdata;

        /* The names ListDomains gives ("frame" for msc), so that export and ListDomains agree. */
        for (size_t i = 0; i < c->n_domains && i < GRAPH_NODES_MAX; i++)
                if (!core_domain_gone(c, i))
                        unit_names[i] = core_bus_unit_name(c->domains[i]);
        return snapshot_ring_export(c->snapshots, &c->graph, unit_names, ret_json);
}

static int core_bus_shared_table_fd(void *userdata) {
        Core *c = userdata;

        return c->table ? table_publisher_fd(c->table) : -ENODEV;
}

static const char *core_bus_version(void *userdata) {
        return TIMECONV_VERSION;
}

static const char *core_bus_reference_domain(void *userdata) {
        return CORE_HUB;
}

static void core_bus_client_activity(void *userdata) {
        Core *c = userdata;

        if (c->activity_hook)
                c->activity_hook(c->activity_userdata);
}

static int core_bus_push_snapshot(void *userdata, const char *sender, const BusClockReading *clocks, size_t n,
                                  BusPushFailure *ret_failure) {
        Core *c = userdata;
        const CoreBusApplications *apps = c->bus_applications;

        if (!apps || !apps->push) {
                *ret_failure = (BusPushFailure) { .index = SIZE_MAX, .reason = "application clocks need a bus" };
                return -EOPNOTSUPP;
        }
        return apps->push(apps->userdata, sender, clocks, n, ret_failure);
}

/* glibc keeps freed heap below its top, and what a flood's answers took stays resident
 * otherwise: malloc_trim() hands back every free page. */
static void core_bus_release_memory(void *userdata) {
        (void) malloc_trim(0);
}

/* Once: a client that keeps the daemon at its limit would otherwise fill the journal. The calls
 * are refused (QuotaExceeded) and the daemon goes on. */
static void core_bus_out_of_fds(void *userdata, int errnum) {
        Core *c = userdata;

        if (c->out_of_fds_logged)
                return;
        c->out_of_fds_logged = true;
        log_warning_errno(c->log, errnum, "at the limit of open files, refusing calls that need one: %m");
}

const BusCoreOps core_bus_ops = {
        .count_domains = core_bus_count_domains,
        .get_domain = core_bus_get_domain,
        .resolve = core_bus_resolve,
        .convert = core_bus_convert,
        .now = core_bus_now,
        .export_snapshots = core_bus_export_snapshots,
        .shared_table_fd = core_bus_shared_table_fd,
        .version = core_bus_version,
        .reference_domain = core_bus_reference_domain,
        .client_activity = core_bus_client_activity,
        .push_snapshot = core_bus_push_snapshot,
        .release_memory = core_bus_release_memory,
        .out_of_fds = core_bus_out_of_fds,
};
