/* SPDX-License-Identifier: MIT */

/* Between the core and the state (daemon/state-apply.c), with the fake clock as the truth: what
 * a calibrated core remembers, that the next core starts from it with a narrow rate bound only
 * for the same clock (name, source, device, unit), with a wider margin after a reboot, and that
 * a remembered rate the clock no longer has is found out by the second burst. */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "core.h"
#include "fake.h"
#include "state.h"
#include "tap.h"

static const Log test_log = { .max_level = LOG_DEBUG };

static Core *core_with_fake(double rate_ppm, size_t *ret_index) {
        FakeConfig fc = { .offset_ns = 777, .rate_ppm = rate_ppm, .deviation_min_ns = 200,
                          .deviation_max_ns = 2000, .r_start_ns = 1000000000, .interval_ns = 500, .seed = 5 };
        DomainInfo info = { .name = "f", .unit = UNIT_NS };
        Core *c = NULL;

        if (core_new(&test_log, &c) < 0 || core_add_domain(c, &domain_fake_ops, &info, &fc) < 0 ||
            graph_find(&c->graph, "f", ret_index) < 0)
                abort();
        return c;
}

/* n bursts a second apart; the rate bound after the first one, in ppm. */
static double calibrate(Core *c, size_t index, int n) {
        double first_ppm = NAN;

        for (int i = 0; i < n; i++) {
                CoreBurst burst;

                if (core_calibrate(c, index, &burst) < 0)
                        return NAN;
                if (i == 0)
                        first_ppm = history_current(core_domain_history(c, index))->model.rate_half * 1e6;
                fake_advance(c->domains[index]->domain, INT64_C(1000000000));
        }
        return first_ppm;
}

static double prior_half_ppm(const Core *c, size_t index) {
        const Estimator *e = &core_domain_history(c, index)->estimator;

        return (e->prior_rate_hi - e->prior_rate_lo) / 2.0 * 1e6;
}

static void test_remember(State *s) {
        size_t index;
        Core *c = core_with_fake(12, &index);
        const StateDomain *d = &s->domains[0];

        calibrate(c, index, 30);
        ok(state_from_core(c, s) == 0 && s->n_domains == 1, "one domain to remember (not the hub)");
        ok(strcmp(d->name, "f") == 0 && strcmp(d->source, "fake") == 0 && d->unit.period_ns == 1.0,
           "the fake clock, by name, source and unit");
        ok(llabs(d->rate_ppb - 12000) <= d->rate_uncertainty_ppb && d->rate_uncertainty_ppb < 1000,
           "its rate %+.3f ppm +- %.3f ppm holds the truth (12 ppm)", (double) d->rate_ppb * 1e-3,
           (double) d->rate_uncertainty_ppb * 1e-3);
        ok(d->span_ns >= INT64_C(29000000000), "over the 30 s it was calibrated");
        core_free(c);
}

static void test_restore(const State *s) {
        size_t index;
        Core *cold = core_with_fake(12, &index), *warm = core_with_fake(12, &index);
        double cold_ppm, warm_ppm;

        is_int(state_apply(s, warm, &test_log), 1, "the next core takes the remembered rate");
        is_int(history_rate_prior(core_domain_history(warm, index)), ESTIMATOR_PRIOR_ACTIVE, "as a prior");
        ok(fabs(prior_half_ppm(warm, index) - 50.0 - (double) s->domains[0].rate_uncertainty_ppb * 1e-3) < 1e-6,
           "its bound plus 50 ppm in the same boot (%.3f ppm)", prior_half_ppm(warm, index));
        cold_ppm = calibrate(cold, index, 1);
        warm_ppm = calibrate(warm, index, 1);
        ok(warm_ppm <= 51 && cold_ppm >= 999, "the first burst's rate bound: %.1f ppm, against %.1f ppm cold",
           warm_ppm, cold_ppm);
        calibrate(warm, index, 2);
        is_int(history_rate_prior(core_domain_history(warm, index)), ESTIMATOR_PRIOR_RELEASED,
               "the samples take over a second later");
        core_free(cold);
        core_free(warm);
}

static void test_not_applied(const State *good) {
        State *s = malloc(sizeof(*s));
        size_t index;
        Core *c;

        *s = *good;
        s->domains[0].unit.period_ns = 2.0;
        c = core_with_fake(12, &index);
        is_int(state_apply(s, c, &test_log), 0, "another unit: not applied");
        is_int(history_rate_prior(core_domain_history(c, index)), ESTIMATOR_PRIOR_NONE, "no prior");
        core_free(c);

        *s = *good;
        strcpy(s->domains[0].source, "posix");
        c = core_with_fake(12, &index);
        is_int(state_apply(s, c, &test_log), 0, "another source: not applied");
        core_free(c);

        *s = *good;
        strcpy(s->domains[0].device, "device_name=another GPU;");
        c = core_with_fake(12, &index);
        is_int(state_apply(s, c, &test_log), 0, "another device: not applied");
        core_free(c);

        *s = *good;
        strcpy(s->domains[0].name, "gone");
        s->domains[1] = good->domains[0];
        strcpy(s->domains[2].name, "monotonic_raw");
        s->n_domains = 3;
        c = core_with_fake(12, &index);
        is_int(state_apply(s, c, &test_log), 1, "an unknown domain and the hub are ignored, the others applied");
        core_free(c);

        *s = *good;
        strcpy(s->boot_id, "another-boot");
        c = core_with_fake(12, &index);
        state_apply(s, c, &test_log);
        ok(fabs(prior_half_ppm(c, index) - 200.0 - (double) s->domains[0].rate_uncertainty_ppb * 1e-3) < 1e-6,
           "after a reboot the margin is 200 ppm (%.3f ppm)", prior_half_ppm(c, index));
        core_free(c);
        free(s);
}

/* The clock's rate moved by 100 ppm while the daemon was down. */
static void test_moved(const State *s) {
        size_t index;
        Core *c = core_with_fake(112, &index);
        const Segment *seg;

        state_apply(s, c, &test_log);
        calibrate(c, index, 2);
        is_int(history_rate_prior(core_domain_history(c, index)), ESTIMATOR_PRIOR_CONTRADICTED,
               "a rate that moved by 100 ppm: the second burst finds the prior wrong");
        calibrate(c, index, 3);
        seg = history_current(core_domain_history(c, index));
        ok(fabs(seg->model.rate - 112e-6) <= seg->model.rate_half, "and the rate is found (%.3f ppm +- %.3f)",
           seg->model.rate * 1e6, seg->model.rate_half * 1e6);
        is_int(history_count(core_domain_history(c, index)), 1, "in the same segment: no discontinuity");
        core_free(c);
}

int main(void) {
        State *s = calloc(1, sizeof(*s));

        test_remember(s);
        test_restore(s);
        test_not_applied(s);
        test_moved(s);
        free(s);
        return done_testing();
}
