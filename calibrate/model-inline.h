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

static inline int model_forward(const Model *m, int64_t r_ns, int64_t r_uncertainty_ns,
                                int64_t *ret_x_ns, int64_t *ret_uncertainty_ns) {
        int64_t dr_ns, x_ns, correction_ns, unc_ns;
        double unc;
        int r;

        if (r_uncertainty_ns < 0)
                return -EINVAL;

        r = arith_sub(r_ns, m->r_c_ns, &dr_ns);
        if (r < 0)
                return r;
        /* x = x_c + dr + rate·dr: the unit part stays exact in integers. */
        r = arith_from_double((double) dr_ns * m->rate, &correction_ns);
        if (r < 0)
                return r;
        r = arith_add(m->x_c_ns, dr_ns, &x_ns);
        if (r < 0)
                return r;
        r = arith_add(x_ns, correction_ns, &x_ns);
        if (r < 0)
                return r;

        /* The true r may be anywhere in r ± r_unc: the point estimate moves by (1 + |rate|) per ns
         * of it and the model's bound by rate_half. */
        unc = model_bound_at(m, r_ns) +
              (double) r_uncertainty_ns * (1.0 + fabs(m->rate) + m->rate_half) +
              ROUNDING_SLACK_NS;
        r = arith_ceil_from_double(unc, &unc_ns);
        if (r < 0)
                return r;

        *ret_x_ns = x_ns;
        *ret_uncertainty_ns = unc_ns;
        return 0;
}

static inline int model_inverse(const Model *m, int64_t x_ns, int64_t x_uncertainty_ns,
                                int64_t *ret_r_ns, int64_t *ret_uncertainty_ns) {
        int64_t dx_ns, r_ns, correction_ns, unc_ns;
        double slope_min, unc;
        int r;

        if (x_uncertainty_ns < 0)
                return -EINVAL;

        r = arith_sub(x_ns, m->x_c_ns, &dx_ns);
        if (r < 0)
                return r;
        /* r = r_c + dx / (1 + rate) = r_c + dx - dx·rate/(1 + rate). */
        r = arith_from_double(-(double) dx_ns * m->rate / (1.0 + m->rate), &correction_ns);
        if (r < 0)
                return r;
        r = arith_add(m->r_c_ns, dx_ns, &r_ns);
        if (r < 0)
                return r;
        r = arith_add(r_ns, correction_ns, &r_ns);
        if (r < 0)
                return r;

        /* With r* the truth and d = r* - r: (1 + rate)|d| = |m(r*) - x| <= w(r*) + x_unc
         * <= w(r) + rate_half·|d| + x_unc, so |d| <= (w(r) + x_unc) / (1 + rate - rate_half). */
        slope_min = 1.0 + m->rate - m->rate_half;
        if (slope_min <= 0.0)
                return -ERANGE;
        unc = (model_bound_at(m, r_ns) + (double) x_uncertainty_ns) / slope_min + ROUNDING_SLACK_NS;
        r = arith_ceil_from_double(unc, &unc_ns);
        if (r < 0)
                return r;

        *ret_r_ns = r_ns;
        *ret_uncertainty_ns = unc_ns;
        return 0;
}

