/* SPDX-License-Identifier: MIT */

/* The rate prior (estimator.h): a rate remembered from an earlier run narrows the polygon's rate
 * range until the samples contradict it or pin the rate as tightly on their own. Every change of
 * Estimator.prior but estimator_reset()'s happens here. */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "arith.h"
#include "estimator-internal.h"

/* Whether the oldest and newest boxes alone bound the rate at least as tightly as the prior:
 * the lines through both have slopes between the two diagonals of the boxes, and the polygon
 * without prior has no wider a rate range than that. */
static bool prior_redundant(const Estimator *e) {
        const Sample *a = window_at(e, 0), *b = window_newest(e);
        int64_t dx_hi, dr_short, dx_lo, dr_long;
        double d_hi, d_lo;

        if (e->n < 2 || b->r0_ns <= a->r1_ns)
                return false;
        if (arith_sub(b->x_hi_ns, a->x_lo_ns, &dx_hi) < 0 || arith_sub(b->r0_ns, a->r1_ns, &dr_short) < 0 ||
            arith_sub(b->x_lo_ns, a->x_hi_ns, &dx_lo) < 0 || arith_sub(b->r1_ns, a->r0_ns, &dr_long) < 0 ||
            arith_sub(dx_hi, dr_short, &dx_hi) < 0 || arith_sub(dx_lo, dr_long, &dx_lo) < 0)
                return false;
        d_hi = ((double) dx_hi + 2.0 * BOX_SLACK_NS) / (double) dr_short;
        d_lo = ((double) dx_lo - 2.0 * BOX_SLACK_NS) / (double) dr_long;
        return d_hi - d_lo <= e->prior_rate_hi - e->prior_rate_lo;
}

int estimator_set_rate_prior(Estimator *e, double rate_lo, double rate_hi) {
        EstimatorPrior old_prior = e->prior;
        double old_lo = e->prior_rate_lo, old_hi = e->prior_rate_hi, dmax = e->config.max_rate_error;
        int r;

        if (!isfinite(rate_lo) || !isfinite(rate_hi))
                return -EINVAL;
        rate_lo = fmax(rate_lo, -dmax);
        rate_hi = fmin(rate_hi, dmax);
        /* A prior of zero width would leave a degenerate polygon: a caller always adds a margin. */
        if (!(rate_lo < rate_hi))
                return -EINVAL;

        e->prior = ESTIMATOR_PRIOR_ACTIVE;
        e->prior_rate_lo = rate_lo;
        e->prior_rate_hi = rate_hi;
        if (e->n == 0)
                return 0;
        r = estimator_rebuild(e);
        if (r < 0) {
                e->prior = old_prior;
                e->prior_rate_lo = old_lo;
                e->prior_rate_hi = old_hi;
                (void) estimator_rebuild(e);
                return r;
        }
        return 0;
}

int estimator_prior_contradicted(Estimator *e, const Sample *s, EstimatorPoint *candidate, size_t *n) {
        int r;

        /* The remembered rate was wrong, not the clock: refit the window without it (it held
         * under a narrower range, so it holds now) and try the sample again. */
        e->prior = ESTIMATOR_PRIOR_CONTRADICTED;
        r = estimator_rebuild(e);
        if (r < 0)
                return r;
        memcpy(candidate, e->polygon, e->n_vertices * sizeof(EstimatorPoint));
        *n = e->n_vertices;
        return estimator_clip_sample(e, candidate, n, s);
}

int estimator_prior_release_if_redundant(Estimator *e) {
        if (e->prior != ESTIMATOR_PRIOR_ACTIVE || !prior_redundant(e))
                return 0;
        /* Dropping a constraint only widens the polygon: it cannot be empty. */
        e->prior = ESTIMATOR_PRIOR_RELEASED;
        return estimator_rebuild(e);
}
