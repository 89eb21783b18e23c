/* SPDX-License-Identifier: MIT */
#pragma once

/* The bodies of model.h's inline functions; include model.h, not this. */

#include <math.h>

/* Rounding the answer to an integer costs up to 0.5 ns; the rest is double rounding (far below
 * 1e-3 ns for spans of years at the rates we allow). */
#define ROUNDING_SLACK_NS 0.501

static inline double model_bound_at(const Model *m, int64_t r_ns) {
        /* In double: |r - r_c| may exceed INT64_MAX, the bound is then huge anyway. */
        double distance_ns = fabs((double) r_ns - (double) m->r_c_ns);

        return m->half_ns + distance_ns * m->rate_half;
}

static inline int model_prepare(const Model *m, PreparedModel *ret) {
        /* Every line of the family has slope >= 1 + rate - rate_half; the estimator's prior keeps
         * it near 1, anything else is a broken model. */
        double slope_min = 1.0 + m->rate - m->rate_half;

        /* |rate| < 1/2 also keeps dr·rate and dx·inverse_rate inside int64 for any int64 dr, dx. */
        if (!(slope_min > 0.5) || !(fabs(m->rate) < 0.5) || !(m->half_ns >= 0.0) || !(m->rate_half >= 0.0))
                return -EINVAL;
        *ret = (PreparedModel) {
                .m = *m,
                .inverse_rate = -m->rate / (1.0 + m->rate),
                .rate_half_inverse = m->rate_half * (1.0 + fabs(m->rate / (1.0 + m->rate))),
                .forward_gain = 1.0 + fabs(m->rate) + m->rate_half,
                .inverse_gain = 1.0 / slope_min,
        };
        return 0;
}

/* out = out_c + d + round(d·rate) with d = in - in_c: the unit part exact in integers, the
 * rate's in a double. d as a double for the bound. */
static inline int prepared_step(int64_t in, int64_t in_c, int64_t out_c, double rate, int64_t *ret_out,
                                double *ret_d) {
        int64_t d_ns, out;
        int r;

        if ((r = arith_sub(in, in_c, &d_ns)) < 0 || (r = arith_add(out_c, d_ns, &out)) < 0 ||
            (r = arith_add(out, arith_round_bounded((double) d_ns * rate), &out)) < 0)
                return r;
        *ret_out = out;
        *ret_d = (double) d_ns;
        return 0;
}

static inline int prepared_forward(const PreparedModel *p, int64_t r_ns, int64_t r_uncertainty_ns,
                                   int64_t *ret_x_ns, int64_t *ret_uncertainty_ns) {
        int64_t x_ns, unc_ns;
        double dr;
        int r;

        if (r_uncertainty_ns < 0)
                return -EINVAL;
        /* x = x_c + dr + rate·dr */
        if ((r = prepared_step(r_ns, p->m.r_c_ns, p->m.x_c_ns, p->m.rate, &x_ns, &dr)) < 0)
                return r;
        /* The true r may be anywhere in r ± r_unc: the point estimate moves by (1 + |rate|) per ns
         * of it and the model's bound by rate_half. */
        r = arith_bound_from_double(p->m.half_ns + fabs(dr) * p->m.rate_half +
                                            (double) r_uncertainty_ns * p->forward_gain + ROUNDING_SLACK_NS,
                                    &unc_ns);
        if (r < 0)
                return r;
        *ret_x_ns = x_ns;
        *ret_uncertainty_ns = unc_ns;
        return 0;
}

static inline int prepared_inverse(const PreparedModel *p, int64_t x_ns, int64_t x_uncertainty_ns,
                                   int64_t *ret_r_ns, int64_t *ret_uncertainty_ns) {
        int64_t r_ns, unc_ns;
        double dx;
        int r;

        if (x_uncertainty_ns < 0)
                return -EINVAL;
        /* r = r_c + dx / (1 + rate) = r_c + dx - dx·rate/(1 + rate). */
        if ((r = prepared_step(x_ns, p->m.x_c_ns, p->m.r_c_ns, p->inverse_rate, &r_ns, &dx)) < 0)
                return r;
        /* With r* the truth and d = r* - r: (1 + rate)|d| = |m(r*) - x| <= w(r*) + x_unc
         * <= w(r) + rate_half·|d| + x_unc, so |d| <= (w(r) + x_unc) / (1 + rate - rate_half).
         * |r - r_c| <= |dx|·(1 + |inverse_rate|) + 1/2, folded into rate_half_inverse. */
        r = arith_bound_from_double((p->m.half_ns + fabs(dx) * p->rate_half_inverse + p->m.rate_half +
                                     (double) x_uncertainty_ns) * p->inverse_gain + ROUNDING_SLACK_NS,
                                    &unc_ns);
        if (r < 0)
                return r;
        *ret_r_ns = r_ns;
        *ret_uncertainty_ns = unc_ns;
        return 0;
}

/* model_forward() and model_inverse(): the model prepared, then one way. */
static inline int model_apply(const Model *m, bool inverse, int64_t v_ns, int64_t v_uncertainty_ns,
                              int64_t *ret_ns, int64_t *ret_uncertainty_ns) {
        PreparedModel p;
        int r = model_prepare(m, &p);

        if (r < 0)
                return r == -EINVAL ? -ERANGE : r;
        return (inverse ? prepared_inverse : prepared_forward)(&p, v_ns, v_uncertainty_ns, ret_ns, ret_uncertainty_ns);
}

static inline int model_forward(const Model *m, int64_t r_ns, int64_t r_uncertainty_ns,
                                int64_t *ret_x_ns, int64_t *ret_uncertainty_ns) {
        return model_apply(m, false, r_ns, r_uncertainty_ns, ret_x_ns, ret_uncertainty_ns);
}

static inline int model_inverse(const Model *m, int64_t x_ns, int64_t x_uncertainty_ns,
                                int64_t *ret_r_ns, int64_t *ret_uncertainty_ns) {
        return model_apply(m, true, x_ns, x_uncertainty_ns, ret_r_ns, ret_uncertainty_ns);
}
