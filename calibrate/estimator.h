/* SPDX-License-Identifier: MIT */
#pragma once

/* Set-membership estimation of x = a + b·r from a window of bracketed samples.
 *
 * Each sample says the line crossed the box [r0, r1] x [x_lo, x_hi]; with b > 0 that is two
 * half-planes in (a, b): a + b·r0 <= x_hi and a + b·r1 >= x_lo. The feasible set is a convex
 * polygon; its image at any r is the set of values the truth may take there. If the truth is
 * affine and every box is honest, the truth is in the polygon: the bound holds by construction.
 * An empty polygon proves the model broke (a step or a change of rate). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "sample.h"

#define ESTIMATOR_WINDOW_MAX 64
#define ESTIMATOR_VERTICES_MAX (2 * ESTIMATOR_WINDOW_MAX + 8)

typedef struct EstimatorConfig {
        double max_rate_error;          /* prior bound on |b - 1|, e.g. 1e-3 (1000 ppm) */
        int64_t window_ns;              /* drop samples older than this behind the newest */
        int64_t step_threshold_ns;      /* a jump larger than this (beyond the bound) is a step */
} EstimatorConfig;

extern const EstimatorConfig ESTIMATOR_CONFIG_DEFAULT;

typedef enum EstimatorVerdict {
        ESTIMATOR_CONSISTENT,   /* the sample fits the current model */
        ESTIMATOR_STEP,         /* a discontinuity: the window restarts at this sample */
        ESTIMATOR_RATE_CHANGE,  /* the rate changed (e.g. NTP slew): the window restarts */
} EstimatorVerdict;

typedef struct EstimatorPoint {
        double a, d;            /* offset and rate error, in the estimator's local frame */
} EstimatorPoint;

typedef struct Estimator {
        EstimatorConfig config;
        Sample window[ESTIMATOR_WINDOW_MAX];    /* by reference time, oldest first */
        size_t n;
        int64_t r_origin_ns, x_origin_ns;       /* local frame: u = r - r_origin, y = x - x_origin - u */
        EstimatorPoint polygon[ESTIMATOR_VERTICES_MAX];
        size_t n_vertices;
        int64_t samples_total;
} Estimator;

void estimator_init(Estimator *e, const EstimatorConfig *config);
void estimator_reset(Estimator *e);

/* Adds a sample. When the window is full, the sample whose constraints are slackest against the
 * polygon goes (it tells the least); samples older than window_ns go too. ret_verdict says whether it fit; on a step or a rate change the window holds
 * only this sample afterwards, and ret_step_ns (optional) is the jump of x against the old
 * model's prediction at the sample. -EINVAL for an invalid sample or one older than the newest. */
int estimator_add(Estimator *e, const Sample *s, EstimatorVerdict *ret_verdict, int64_t *ret_step_ns);

/* The current model (needs >= 1 sample; -ENODATA otherwise). With one sample the rate is only
 * bounded by the prior, so the bound grows at max_rate_error per ns. */
int estimator_model(const Estimator *e, Model *ret);

/* The feasible range of x at r (exact polygon, tighter than the model's linear bound). */
int estimator_range_at(const Estimator *e, int64_t r_ns, double *ret_lo_ns, double *ret_hi_ns);

/* Reference span covered by the window. */
int64_t estimator_span_ns(const Estimator *e);
