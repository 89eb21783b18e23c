/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "arith.h"
#include "estimator-internal.h"

const EstimatorConfig ESTIMATOR_CONFIG_DEFAULT = {
        .max_rate_error = 1e-3,
        .window_ns = INT64_C(600) * 1000000000,
        .step_threshold_ns = 10000,
};

void estimator_init(Estimator *e, const EstimatorConfig *config) {
        memset(e, 0, sizeof(*e));
        e->config = config ? *config : ESTIMATOR_CONFIG_DEFAULT;
}

void estimator_reset(Estimator *e) {
        e->n = 0;
        e->n_vertices = 0;
        if (e->prior == ESTIMATOR_PRIOR_ACTIVE)
                e->prior = ESTIMATOR_PRIOR_NONE;
}

static void window_remove(Estimator *e, size_t i) {
        memmove(&e->window[i], &e->window[i + 1], (e->n - i - 1) * sizeof(Sample));
        e->n--;
}

/* Makes room for one more sample by dropping the least informative one. */
static void window_make_room(Estimator *e, const EstimatorPoint *poly, size_t n_vertices) {
        size_t worst = 0;
        double worst_slack = -INFINITY;

        if (e->n < ESTIMATOR_WINDOW_MAX)
                return;
        for (size_t i = 0; i < e->n; i++) {
                double slack = estimator_sample_slack(e, i, poly, n_vertices);
                if (slack > worst_slack) {
                        worst_slack = slack;
                        worst = i;
                }
        }
        window_remove(e, worst);
}

static void window_push(Estimator *e, const Sample *s) {
        if (e->n == ESTIMATOR_WINDOW_MAX)
                window_remove(e, 0);
        e->window[e->n++] = *s;
}

/* Drops samples that fell out of the time window; true if any was dropped. */
static bool window_expire(Estimator *e) {
        const Sample *newest = window_newest(e);
        bool dropped = false;

        while (e->n > 1 && newest->r1_ns - window_at(e, 0)->r1_ns > e->config.window_ns) {
                window_remove(e, 0);
                dropped = true;
        }
        return dropped;
}

/* A fresh window of one sample; a prior still active stays (it is what the window lacks). */
static int restart_with(Estimator *e, const Sample *s) {
        e->n = 0;
        e->n_vertices = 0;
        e->pinned_below_r_ns = e->pinned_above_r_ns = s->r1_ns;
        window_push(e, s);
        return estimator_rebuild(e);
}

/* After s went in: does its box hold the range from below or above? Within the range's own
 * width and the step threshold of its edge, it does. */
static void note_pinned(Estimator *e, const Sample *s) {
        double u0 = (double) (s->r0_ns - e->r_origin_ns), u1 = (double) (s->r1_ns - e->r_origin_ns);
        double lo0, hi0, lo1, hi1, y_lo, y_hi, tol;

        estimator_range_local(e, u0, &lo0, &hi0);
        estimator_range_local(e, u1, &lo1, &hi1);
        y_lo = (double) (s->x_lo_ns - e->x_origin_ns) - u1;
        y_hi = (double) (s->x_hi_ns - e->x_origin_ns) - u0;
        tol = fmax(hi1 - lo1, hi0 - lo0) + (double) e->config.step_threshold_ns;
        if (y_lo >= lo1 - tol)
                e->pinned_below_r_ns = s->r1_ns;
        if (y_hi <= hi0 + tol)
                e->pinned_above_r_ns = s->r1_ns;
}

/* How far the sample's box lies outside the current polygon's prediction over [r0, r1]
 * (> 0 above, < 0 below), and the jump of its middle against the prediction's middle. */
static void sample_excess(const Estimator *e, const Sample *s, double *ret_excess_ns, double *ret_jump_ns) {
        double u0 = (double) (s->r0_ns - e->r_origin_ns), u1 = (double) (s->r1_ns - e->r_origin_ns);
        double lo0, hi0, lo1, hi1, y_lo, y_hi, predicted_mid, sample_mid;

        estimator_range_local(e, u0, &lo0, &hi0);
        estimator_range_local(e, u1, &lo1, &hi1);
        /* Bring the box into the frame at each end: y = x - x_origin - u. */
        y_lo = (double) (s->x_lo_ns - e->x_origin_ns) - u1;     /* lowest the box can be */
        y_hi = (double) (s->x_hi_ns - e->x_origin_ns) - u0;     /* highest */

        if (y_lo > hi1)
                *ret_excess_ns = y_lo - hi1;
        else if (y_hi < lo0)
                *ret_excess_ns = y_hi - lo0;
        else
                *ret_excess_ns = 0.0;

        predicted_mid = (lo0 + hi0 + lo1 + hi1) / 4.0;
        sample_mid = (y_lo + y_hi) / 2.0;
        *ret_jump_ns = sample_mid - predicted_mid;
}

/* s fits the model and is in the window: the answers of estimator_add() for it. */
static int accepted(Estimator *e, const Sample *s, EstimatorVerdict *ret_verdict, int64_t *ret_step_ns) {
        note_pinned(e, s);
        e->samples_total++;
        if (ret_verdict)
                *ret_verdict = ESTIMATOR_CONSISTENT;
        if (ret_step_ns)
                *ret_step_ns = 0;
        return 0;
}

int estimator_add(Estimator *e, const Sample *s, EstimatorVerdict *ret_verdict, int64_t *ret_step_ns) {
        EstimatorPoint candidate[ESTIMATOR_VERTICES_MAX];
        const Sample *newest;
        size_t n;
        int r;

        r = sample_validate(s);
        if (r < 0)
                return r;
        newest = window_newest(e);
        if (newest && s->r0_ns < newest->r0_ns)
                return -EINVAL;

        if (e->n == 0) {
                r = restart_with(e, s);
                if (r < 0) {
                        estimator_reset(e);
                        return r;
                }
                return accepted(e, s, ret_verdict, ret_step_ns);
        }

        memcpy(candidate, e->polygon, e->n_vertices * sizeof(EstimatorPoint));
        n = e->n_vertices;
        r = estimator_clip_sample(e, candidate, &n, s);
        if (r < 0)
                return r;

        if (n == 0 && e->prior == ESTIMATOR_PRIOR_ACTIVE) {
                r = estimator_prior_contradicted(e, s, candidate, &n);
                if (r < 0)
                        return r;
        }

        if (n > 0) {
                size_t n_before = e->n;

                window_make_room(e, candidate, n);
                window_push(e, s);
                if (window_expire(e) || e->n <= n_before) {
                        r = estimator_rebuild(e);
                        if (r < 0)
                                return restart_with(e, s);
                } else {
                        memcpy(e->polygon, candidate, n * sizeof(EstimatorPoint));
                        e->n_vertices = n;
                }
                r = estimator_prior_release_if_redundant(e);
                if (r < 0)
                        return r;
                return accepted(e, s, ret_verdict, ret_step_ns);
        }

        /* The model broke. A change of rate cannot move the clock further from the old line than
         * the largest rate error over the time since a sample last held it on the side it left:
         * beyond that it stepped. */
        {
                double excess_ns, jump_ns, rate_limit_ns;
                int64_t step_ns = 0, pinned_r_ns;
                EstimatorVerdict verdict;

                sample_excess(e, s, &excess_ns, &jump_ns);
                /* Above the range: it rose since the top was last held; below: since the bottom. */
                pinned_r_ns = excess_ns > 0 ? e->pinned_above_r_ns : e->pinned_below_r_ns;
                if (pinned_r_ns > newest->r0_ns || pinned_r_ns == 0)
                        pinned_r_ns = newest->r0_ns;
                rate_limit_ns = 2.0 * e->config.max_rate_error * (double) (s->r1_ns - pinned_r_ns);
                if (fabs(excess_ns) > (double) e->config.step_threshold_ns + rate_limit_ns) {
                        verdict = ESTIMATOR_STEP;
                        (void) arith_from_double(jump_ns, &step_ns);
                } else
                        verdict = ESTIMATOR_RATE_CHANGE;

                r = restart_with(e, s);
                if (r < 0)
                        return r;
                e->samples_total++;
                if (ret_verdict)
                        *ret_verdict = verdict;
                if (ret_step_ns)
                        *ret_step_ns = step_ns;
        }
        return 0;
}

int64_t estimator_span_ns(const Estimator *e) {
        if (e->n == 0)
                return 0;
        return window_newest(e)->r1_ns - window_at(e, 0)->r0_ns;
}

int estimator_range_at(const Estimator *e, int64_t r_ns, double *ret_lo_ns, double *ret_hi_ns) {
        double u, lo, hi;

        if (e->n_vertices == 0)
                return -ENODATA;
        u = (double) r_ns - (double) e->r_origin_ns;
        estimator_range_local(e, u, &lo, &hi);
        *ret_lo_ns = (double) e->x_origin_ns + u + lo;
        *ret_hi_ns = (double) e->x_origin_ns + u + hi;
        return 0;
}

int estimator_model(const Estimator *e, Model *ret) {
        double lo, hi, mid, d_min = INFINITY, d_max = -INFINITY;
        int64_t u_c, mid_ns, r_c_ns, x_c_ns;
        int r;

        if (e->n == 0 || e->n_vertices == 0)
                return -ENODATA;

        /* Centred at the newest sample: the width of the feasible range changes by at most
         * rate_half per ns of r (it is the spread of lines whose slopes differ by at most twice
         * that), so half + rate_half·|r - r_c| holds it at any r, and it is exact at the newest
         * sample, next to "now", where nearly every conversion is asked. */
        u_c = window_newest(e)->r1_ns - e->r_origin_ns;

        estimator_range_local(e, (double) u_c, &lo, &hi);
        mid = (lo + hi) / 2.0;
        mid_ns = (int64_t) llround(mid);
        for (size_t i = 0; i < e->n_vertices; i++) {
                if (e->polygon[i].d < d_min)
                        d_min = e->polygon[i].d;
                if (e->polygon[i].d > d_max)
                        d_max = e->polygon[i].d;
        }

        if ((r = arith_add(e->r_origin_ns, u_c, &r_c_ns)) < 0 ||
            (r = arith_add(e->x_origin_ns, u_c, &x_c_ns)) < 0 ||
            (r = arith_add(x_c_ns, mid_ns, &x_c_ns)) < 0)
                return r;

        *ret = (Model) {
                .r_c_ns = r_c_ns,
                .x_c_ns = x_c_ns,
                .rate = (d_min + d_max) / 2.0,
                .half_ns = (hi - lo) / 2.0 + fabs((double) mid_ns - mid),
                .rate_half = (d_max - d_min) / 2.0,
        };
        return 0;
}
