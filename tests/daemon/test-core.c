/* SPDX-License-Identifier: MIT */

/* The daemon's core with a scripted source in front of the fake clock: views share their
 * domain's model and availability, a truncating clock's whole burst reaches the estimator, the
 * source's same_as makes a node follow another exactly (and stop), a new generation of the
 * clock opens a new segment, a failed burst or a dead connection makes the domain and its views
 * unavailable, and ListDomains shows the source's status. */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "core.h"
#include "core-bus.h"
#include "fake.h"
#include "tap.h"
#include "time-util.h"

/* What the scripted source says; a test changes it between bursts. */
static struct {
        uint64_t generation;
        const char *same_as;
        const char *verdict;
        int burst_error;        /* < 0: the next bursts fail with it */
        int dispatch_error;
} script;

struct Domain {
        Domain *fake;
        DomainInfo info;
};

static int scripted_enumerate(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n) {
        if (n_max < 3)
                return -ENOBUFS;
        ret_infos[0] = (DomainInfo) { .name = "monotonic", .unit = UNIT_NS, .resolution_ns = 1, .monotonic = true };
        ret_infos[1] = (DomainInfo) { .name = "xms", .unit = UNIT_MS_X11, .resolution_ns = 1000000,
                                      .monotonic = true };
        ret_infos[2] = (DomainInfo) { .name = "xus", .unit = UNIT_US_X11, .resolution_ns = 1000000,
                                      .monotonic = true, .view_of = "xms" };
        *ret_n = 3;
        return 0;
}

static int scripted_open(const char *name, const void *config, Domain **ret) {
        bool xms = strcmp(name, "xms") == 0;
        FakeConfig fc = {
                .unit = xms ? UNIT_MS_X11 : UNIT_NS,
                .offset_ns = 1000000,
                .deviation_min_ns = xms ? 20000 : 30,
                .deviation_max_ns = xms ? 60000 : 90,
                .r_start_ns = 1000000000,
                .interval_ns = 300000,
                .seed = xms ? 1 : 2,
        };
        Domain *d = calloc(1, sizeof(*d));
        int r;

        if (!d)
                return -ENOMEM;
        r = domain_fake_ops.open(name, &fc, &d->fake);
        if (r < 0) {
                free(d);
                return r;
        }
        d->info = *domain_fake_ops.info(d->fake);
        d->info.unit = fc.unit;
        *ret = d;
        return 0;
}

static int scripted_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        if (script.burst_error < 0)
                return script.burst_error;
        return domain_fake_ops.sample_burst(d->fake, samples, n_max, ret_n);
}

static int scripted_watch_fd(Domain *d) {
        return 0;       /* any fd: the core only passes it on */
}

static int scripted_dispatch(Domain *d) {
        return script.dispatch_error;
}

static int scripted_status(Domain *d, DomainStatus *ret) {
        *ret = (DomainStatus) {
                .generation = script.generation,
                .same_as = strcmp(d->info.name, "xms") == 0 ? script.same_as : NULL,
                .verdict = script.verdict,
                .n_extras = 1,
                .extras = { DOMAIN_EXTRA_T("probes", 8) },
        };
        return 0;
}

static const DomainInfo *scripted_info(Domain *d) {
        return &d->info;
}

static Domain *scripted_close(Domain *d) {
        if (d) {
                domain_fake_ops.close(d->fake);
                free(d);
        }
        return NULL;
}

static const DomainOps scripted_ops = {
        .source = "scripted",
        .enumerate = scripted_enumerate,
        .open = scripted_open,
        .sample_burst = scripted_sample_burst,
        .watch_fd = scripted_watch_fd,
        .dispatch = scripted_dispatch,
        .status = scripted_status,
        .info = scripted_info,
        .close = scripted_close,
};

static const BusDomainExtra *typed_extra(const BusDomainInfo *info, const char *key) {
        for (size_t i = 0; i < info->n_extras; i++)
                if (strcmp(info->extras[i].key, key) == 0)
                        return &info->extras[i];
        return NULL;
}

static const char *extra(const BusDomainInfo *info, const char *key) {
        const BusDomainExtra *e = typed_extra(info, key);

        return e ? e->value : NULL;
}

int main(void) {
        const Log log = { .max_level = LOG_ERR };
        DomainInfo infos[3];
        Core *c = NULL;
        CoreBurst burst;
        BusDomainInfo bi;
        size_t n = 0, mono = 1, xms = 2, xus = 3, segments;
        int64_t v, unc;

        is_int(core_new(&log, &c), 0, "core_new");
        is_int(scripted_ops.enumerate(NULL, infos, 3, &n), 0, "enumerate");
        is_int(core_add_domain(c, &scripted_ops, &infos[2], NULL), -ENOENT, "a view before its domain is -ENOENT");
        for (size_t i = 0; i < n; i++)
                ok(core_add_domain(c, &scripted_ops, &infos[i], NULL) == 0, "add %s", infos[i].name);
        ok(core_count(c) == 4 && core_domain_is_view(c, xus) && !core_domain_is_view(c, xms), "xus is a view");
        ok(core_domain_history(c, xus) == core_domain_history(c, xms), "a view shares its domain's history");
        is_int(core_calibrate(c, xus, &burst), -EINVAL, "a view is not calibrated by itself");

        for (int i = 0; i < 5; i++) {
                ok(core_calibrate(c, mono, &burst) == 0, "monotonic burst %d", i);
                ok(core_calibrate(c, xms, &burst) == 0, "xms burst %d", i);
        }
        ok(core_domain_available(c, xus) && c->graph.nodes[xus].calibrated, "the view is calibrated with it");
        ok(core_domain_history(c, xms)->estimator.n == 40,
           "a truncating clock's whole bursts reach the estimator (%zu samples)",
           core_domain_history(c, xms)->estimator.n);
        is_int(graph_convert(&c->graph, mono, xus, 2000000000, 2000000000, &v, &unc), 0, "monotonic -> xus converts");
        ok(unc > 1000, "tracked: a bound of the models (%" PRId64 " ns)", unc);

        script.same_as = "monotonic";
        script.verdict = "identity";
        is_int(core_calibrate(c, xms, &burst), 0, "burst with same_as monotonic");
        ok(c->graph.nodes[xms].model_id == mono && c->graph.nodes[xus].model_id == mono,
           "the domain and its view follow monotonic");
        is_int(graph_convert(&c->graph, mono, xus, 2000000000, 2000000000, &v, &unc), 0, "monotonic -> xus");
        ok(v == 2000000 && unc == 0, "the identity: exact (%" PRId64 " +- %" PRId64 ")", v, unc);
        bi = (BusDomainInfo) {};
        is_int(core_bus_ops.get_domain(c, xus, &bi), 0, "ListDomains of the view");
        ok(bi.verdict && strcmp(bi.verdict, "identity") == 0, "the view shows its domain's verdict");
        ok(extra(&bi, "same_as") && strcmp(extra(&bi, "same_as"), "monotonic") == 0, "same_as is listed");
        ok(extra(&bi, "view_of") && strcmp(extra(&bi, "view_of"), "xms") == 0, "view_of is listed");
        ok(typed_extra(&bi, "probes") && typed_extra(&bi, "probes")->type == 't' && typed_extra(&bi, "probes")->t == 8,
           "the source's extras are listed, typed as it gave them");
        /* Identity with a probe residual: ListDomains' uncertainty is what a conversion to the
         * reference carries, the residual in it (without it, it said 12-22 ns where
         * answers carried 7-9 µs). */
        is_int(graph_set_same_as_uncertainty(&c->graph, xms, 7000), 0, "a residual of 7 µs");
        bi = (BusDomainInfo) {};
        {
                /* The bound grows as now leaves the model's centre: ListDomains' lies between the
                 * bounds of just before and just after it (on a loaded machine they differ). */
                int64_t r_ns[2], x, back, unc_back[2];

                r_ns[0] = clock_now_ns(CLOCK_MONOTONIC_RAW);
                is_int(core_bus_ops.get_domain(c, xms, &bi), 0, "ListDomains of xms");
                r_ns[1] = clock_now_ns(CLOCK_MONOTONIC_RAW);
                for (int i = 0; i < 2; i++)
                        ok(graph_convert(&c->graph, c->graph.hub, xms, r_ns[i], r_ns[i], &x, &unc) == 0 &&
                           graph_convert(&c->graph, xms, c->graph.hub, x, r_ns[i], &back, &unc_back[i]) == 0,
                           "xms -> the hub %s", i ? "after" : "before");
                ok(bi.uncertainty_ns >= 7000 && bi.uncertainty_ns >= (uint64_t) unc_back[0] &&
                   bi.uncertainty_ns <= (uint64_t) unc_back[1],
                   "uncertainty_ns is that conversion's bound, the residual in it (%" PRIu64 " ns in [%" PRId64
                   ", %" PRId64 "])", bi.uncertainty_ns, unc_back[0], unc_back[1]);
        }
        is_int(graph_set_same_as_uncertainty(&c->graph, xms, 0), 0, "no residual again");

        script.same_as = NULL;
        script.verdict = "tracked";
        is_int(core_calibrate(c, xms, &burst), 0, "burst without same_as");
        ok(c->graph.nodes[xms].model_id == xms && c->graph.nodes[xus].model_id == xus, "both on their own model again");
        script.same_as = "nosuchdomain";
        is_int(core_calibrate(c, xms, &burst), 0, "same_as an unknown domain is ignored");
        ok(c->graph.nodes[xms].model_id == xms, "  and the node keeps its own model");
        script.same_as = NULL;

        segments = history_count(core_domain_history(c, xms));
        script.generation = 2;
        is_int(core_calibrate(c, xms, &burst), 0, "burst of a new generation");
        is_int(history_count(core_domain_history(c, xms)), segments + 1, "a new generation opens a new segment");
        ok(history_get(core_domain_history(c, xms), segments - 1)->end == SEGMENT_RESTART,
           "the old segment ended by a restart");

        script.burst_error = -ENOTCONN;
        is_int(core_calibrate(c, xms, &burst), -ENOTCONN, "a failed burst fails");
        ok(!core_domain_available(c, xms) && !core_domain_available(c, xus), "the domain and its view are unavailable");
        is_int(graph_convert(&c->graph, mono, xus, 2000000000, 2000000000, &v, &unc), -ENODEV,
               "conversions say unavailable");
        script.burst_error = 0;
        is_int(core_calibrate(c, xms, &burst), 0, "the next good burst");
        ok(core_domain_available(c, xms) && core_domain_available(c, xus), "available again, the view too");

        is_int(core_domain_watch_fd(c, xms), 0, "the watch fd is the source's");
        is_int(core_domain_watch_fd(c, mono), 0, "the scripted monotonic has one too");
        script.dispatch_error = -ENOTCONN;
        is_int(core_domain_dispatch(c, xms), -ENOTCONN, "a dead connection");
        ok(!core_domain_available(c, xms) && !core_domain_available(c, xus), "makes the domain and its view unavailable");

        core_free(c);
        return done_testing();
}
