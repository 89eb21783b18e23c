/* SPDX-License-Identifier: MIT */
#pragma once

/* An affine map from the reference (r, ns) to a domain's ns (x), with an honest bound:
 *
 *   x(r) = x_c + (r - r_c) * (1 + rate)
 *   |x_true(r) - x(r)| <= half_ns + |r - r_c| * rate_half       (for r anywhere)
 *
 * The estimator guarantees the bound for every r when the domain is affine over the segment. */

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>

#include "arith.h"

typedef struct Model {
        int64_t r_c_ns;         /* reference time of the model's centre */
        int64_t x_c_ns;         /* domain ns at r_c (point estimate) */
        double rate;            /* dx/dr - 1 (0.000001 is 1 ppm) */
        double half_ns;         /* bound at r_c, >= 0 */
        double rate_half;       /* growth of the bound per ns away from r_c, >= 0 */
} Model;

/* The identity, exact: the hub's model of itself. */
extern const Model MODEL_IDENTITY;

/* A model with the constants its conversions need worked out once (no division per call). */
typedef struct PreparedModel {
        Model m;
        double inverse_rate;    /* -rate / (1 + rate) */
        double rate_half_inverse; /* rate_half·(1 + |inverse_rate|): the bound's growth per ns of x */
        double forward_gain;    /* 1 + |rate| + rate_half: how an error in r grows into x */
        double inverse_gain;    /* 1 / (1 + rate - rate_half): how an error in x maps back to r */
} PreparedModel;

/* -EINVAL for a model whose lines could be flat or falling (slope <= 1/2) or a negative bound. */
static inline int model_prepare(const Model *m, PreparedModel *ret);

/* The bound at r, before rounding. */
static inline double model_bound_at(const Model *m, int64_t r_ns);

/* r -> x. r_uncertainty_ns is how far the true r may be from r_ns (>= 0); the answer's bound
 * covers it, the model's own bound and the rounding to an integer. -ERANGE when the answer does
 * not fit int64. */
static inline int prepared_forward(const PreparedModel *p, int64_t r_ns, int64_t r_uncertainty_ns,
                                   int64_t *ret_x_ns, int64_t *ret_uncertainty_ns);

/* x -> r, the inverse, with the bound mapped back to the reference. */
static inline int prepared_inverse(const PreparedModel *p, int64_t x_ns, int64_t x_uncertainty_ns,
                                   int64_t *ret_r_ns, int64_t *ret_uncertainty_ns);

/* The same on an unprepared model (prepares it first: for one-off conversions). */
static inline int model_forward(const Model *m, int64_t r_ns, int64_t r_uncertainty_ns,
                                int64_t *ret_x_ns, int64_t *ret_uncertainty_ns);
static inline int model_inverse(const Model *m, int64_t x_ns, int64_t x_uncertainty_ns,
                                int64_t *ret_r_ns, int64_t *ret_uncertainty_ns);

/* rate in parts per billion, rounded. */
int64_t model_rate_ppb(const Model *m);

/* Inline: these are the conversion hot path (a few ns each, no call, no libm). */
#include "model-inline.h"
