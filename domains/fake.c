/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "clock-id.h"
#include "domain.h"
#include "splitmix.h"
#include "fake.h"
#include "units.h"

struct Domain {
        DomainInfo info;
        FakeConfig config;              /* config.steps points at steps below */
        FakeStep *steps;                /* sorted by at_r_ns */
        int64_t now_ns;                 /* r0 of the next sample */
        int64_t hint_count;             /* last unwrapped count, as a real source keeps it */
        uint64_t rng;                   /* splitmix64 state */
};
_Static_assert(offsetof(struct Domain, info) == 0, "domain_info_first() reads it there");

static double rng_unit(Domain *d) {
        return (double) (splitmix64_next(&d->rng) >> 11) * 0x1p-53;
}

/* Uniform in [lo, hi]; the modulo bias is irrelevant at these spans. */
static int64_t rng_range(Domain *d, int64_t lo, int64_t hi) {
        uint64_t span = (uint64_t) hi - (uint64_t) lo;

        if (span == UINT64_MAX)
                return (int64_t) splitmix64_next(&d->rng);
        return (int64_t) ((uint64_t) lo + splitmix64_next(&d->rng) % (span + 1));
}

static int cmp_step(const void *a, const void *b) {
        const FakeStep *x = a, *y = b;

        return (x->at_r_ns > y->at_r_ns) - (x->at_r_ns < y->at_r_ns);
}

/* The truth at r split as base + rem: base an integer, rem in [0, 1), so that quantizing to an
 * integral period stays exact far beyond the 2^53 ns a double holds. */
static int truth_parts(const Domain *d, int64_t r_ns, int64_t *ret_base, double *ret_rem) {
        double drift = (double) r_ns * d->config.rate_ppm * 1e-6, whole = floor(drift);
        int64_t base, whole_ns;
        int r;

        r = arith_add(d->config.offset_ns, r_ns, &base);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->config.n_steps && d->steps[i].at_r_ns <= r_ns; i++) {
                r = arith_add(base, d->steps[i].step_ns, &base);
                if (r < 0)
                        return r;
        }
        if (!(fabs(whole) < 0x1p62))
                return -ERANGE;
        whole_ns = (int64_t) whole;
        r = arith_add(base, whole_ns, &base);
        if (r < 0)
                return r;

        *ret_base = base;
        *ret_rem = drift - whole;
        return 0;
}

static int64_t floor_div(int64_t a, int64_t b) {
        int64_t q = a / b;

        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int double_to_ns(double v, int64_t *ret) {
        if (!(fabs(v) < 0x1p62))
                return -ERANGE;
        *ret = (int64_t) v;
        return 0;
}

/* The count the clock shows for truth base + rem, and an honest box around the truth in ns. */
static int quantize(const DomainUnit *u, int64_t base, double rem,
                    int64_t *ret_count, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        int64_t count, lo, hi, x;
        int r;

        if (u->period_ns == floor(u->period_ns) && u->period_ns < 0x1p62) {
                int64_t p = (int64_t) u->period_ns, q = floor_div(base, p), m;

                r = arith_mul(q, p, &x);
                if (r < 0)
                        return r;
                m = base - x;
                count = (!unit_floors(u) && (double) m + rem >= (double) p / 2) ? q + 1 : q;
                r = arith_mul(count, p, &x);
                if (r < 0)
                        return r;
                if (unit_floors(u)) {
                        lo = x;
                        r = arith_add(x, p, &hi);
                        if (r < 0)
                                return r;
                } else {
                        lo = x < base ? x : base;
                        hi = x > base ? x : base + (rem > 0);
                }
        } else {
                double t = (double) base + rem;
                double c = unit_floors(u) ? floor(t / u->period_ns) : floor(t / u->period_ns + 0.5);

                /* t / period may round across an integer; a truncated count must not exceed t. */
                if (unit_floors(u) && c * u->period_ns > t)
                        c -= 1;
                if (unit_floors(u) && (c + 1) * u->period_ns <= t)
                        c += 1;
                r = double_to_ns(c, &count);
                if (r < 0)
                        return r;
                if (unit_floors(u))
                        r = double_to_ns(floor(c * u->period_ns), &lo) ?: double_to_ns(ceil((c + 1) * u->period_ns), &hi);
                else
                        r = double_to_ns(floor(fmin(c * u->period_ns, t)), &lo) ?: double_to_ns(ceil(fmax(c * u->period_ns, t)), &hi);
                if (r < 0)
                        return r;
        }

        *ret_count = count;
        *ret_lo_ns = lo;
        *ret_hi_ns = hi;
        return 0;
}

static int quantize_at(const Domain *d, int64_t r_ns, int64_t *ret_count, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        int64_t base;
        double rem;
        int r;

        r = truth_parts(d, r_ns, &base, &rem);
        if (r < 0)
                return r;
        return quantize(&d->info.unit, base, rem, ret_count, ret_lo_ns, ret_hi_ns);
}

static int validate_config(const FakeConfig *c) {
        if (!isfinite(c->rate_ppm) || c->rate_ppm <= -1e6 || c->rate_ppm >= 1e6)
                return -EINVAL;
        if (c->deviation_min_ns < 0 || c->deviation_max_ns < c->deviation_min_ns)
                return -EINVAL;
        if (!(c->outlier_probability >= 0 && c->outlier_probability <= 1))
                return -EINVAL;
        if (c->outlier_probability > 0 && c->outlier_max_ns < c->deviation_max_ns)
                return -EINVAL;
        if (c->interval_ns < 0 || (c->n_steps > 0 && !c->steps))
                return -EINVAL;
        return 0;
}

static int fake_enumerate(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n) {
        if ((!ret_infos && n_max > 0) || !ret_n)
                return -EINVAL;

        if (n_max > 0) {
                ret_infos[0] = (DomainInfo) {
                        .name = "fake",
                        .unit = UNIT_NS,
                        .resolution_ns = 1,
                        .monotonic = true,
                        .perfetto_id = clock_id_for_name("fake"),
                };
        }
        *ret_n = n_max > 0 ? 1 : 0;
        return 0;
}

static int fake_open(const char *name, const void *config, Domain **ret) {
        static const FakeConfig ideal = {};
        const FakeConfig *c = config ?: &ideal;
        int64_t lo, hi;
        Domain *d;
        int r;

        if (!name || !ret || name[0] == '\0' || strlen(name) >= DOMAIN_NAME_MAX)
                return -EINVAL;
        r = validate_config(c);
        if (r < 0)
                return r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->config = *c;
        d->info.unit = c->unit.period_ns == 0 && c->unit.wrap_bits == 0 ? UNIT_NS : c->unit;
        r = unit_validate(&d->info.unit);
        if (r < 0)
                goto fail;
        if (c->n_steps > 0) {
                d->steps = calloc(c->n_steps, sizeof(FakeStep));
                if (!d->steps) {
                        r = -ENOMEM;
                        goto fail;
                }
                memcpy(d->steps, c->steps, c->n_steps * sizeof(FakeStep));
                qsort(d->steps, c->n_steps, sizeof(FakeStep), cmp_step);
        }
        d->config.steps = d->steps;

        strcpy(d->info.name, name);
        d->info.resolution_ns = (int64_t) ceil(d->info.unit.period_ns);
        d->info.monotonic = true;
        for (size_t i = 0; i < c->n_steps; i++)
                if (d->steps[i].step_ns < 0)
                        d->info.monotonic = false;
        d->info.perfetto_id = clock_id_for_name(name);
        d->now_ns = c->r_start_ns;
        d->rng = c->seed;

        /* A real source starts in era 0; the fake knows the era, so its samples and
         * fake_truth_ns() agree. From here on it unwraps against its last reading. */
        r = quantize_at(d, c->r_start_ns, &d->hint_count, &lo, &hi);
        if (r < 0)
                goto fail;

        *ret = d;
        return 0;
fail:
        free(d->steps);
        free(d);
        return r;
}

static int fake_sample_one(Domain *d, Sample *ret) {
        const FakeConfig *c = &d->config;
        int64_t dev, r0 = d->now_ns, r1, t, next, count, wire, unwrapped, lo, hi, shift_ns;
        int r;

        if (rng_unit(d) < c->outlier_probability)
                dev = rng_range(d, c->deviation_max_ns, c->outlier_max_ns);
        else
                dev = rng_range(d, c->deviation_min_ns, c->deviation_max_ns);
        r = arith_add(r0, dev, &r1) ?: arith_add(r1, c->interval_ns, &next);
        if (r < 0)
                return r;
        t = rng_range(d, r0, r1);

        r = quantize_at(d, t, &count, &lo, &hi);
        if (r < 0)
                return r;
        r = unit_wrap(&d->info.unit, count, &wire);
        if (r < 0)
                return r;
        r = unit_unwrap(&d->info.unit, wire, d->hint_count, &unwrapped);
        if (r < 0)
                return r;
        /* Normally zero; after too long a gap the source picks the wrong era, like a real one. */
        r = double_to_ns(nearbyint(((double) unwrapped - (double) count) * d->info.unit.period_ns), &shift_ns);
        if (r < 0)
                return r;
        r = arith_add(lo, shift_ns, &lo) ?: arith_add(hi, shift_ns, &hi);
        if (r < 0)
                return r;

        d->hint_count = unwrapped;
        d->now_ns = next;
        *ret = (Sample) { .r0_ns = r0, .r1_ns = r1, .x_lo_ns = lo, .x_hi_ns = hi };
        return 0;
}

static int fake_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        size_t n = 0;
        int r = 0;

        if (!d || (!samples && n_max > 0) || !ret_n)
                return -EINVAL;

        for (; n < n_max; n++) {
                r = fake_sample_one(d, &samples[n]);
                if (r < 0)
                        break;
        }
        /* A partial burst is still a burst; fail only when nothing was read. */
        if (n == 0 && r < 0)
                return r;
        *ret_n = n;
        return 0;
}

static Domain *fake_close(Domain *d) {
        if (!d)
                return NULL;
        free(d->steps);
        free(d);
        return NULL;
}

double fake_truth_ns(const Domain *d, int64_t r_ns) {
        int64_t base;
        double rem;

        if (!d || truth_parts(d, r_ns, &base, &rem) < 0)
                return NAN;
        return (double) base + rem;
}

int64_t fake_now_ns(const Domain *d) {
        return d ? d->now_ns : 0;
}

void fake_advance(Domain *d, int64_t dt_ns) {
        if (!d || dt_ns <= 0)
                return;
        if (arith_add(d->now_ns, dt_ns, &d->now_ns) < 0)
                d->now_ns = INT64_MAX;
}

int fake_read_at(const Domain *d, int64_t r_ns, int64_t *ret_count_wire) {
        int64_t count, lo, hi;
        int r;

        if (!d || !ret_count_wire)
                return -EINVAL;
        r = quantize_at(d, r_ns, &count, &lo, &hi);
        if (r < 0)
                return r;
        return unit_wrap(&d->info.unit, count, ret_count_wire);
}

DOMAIN_OPS_DEFINE(fake, .watch_fd = domain_no_watch_fd);
