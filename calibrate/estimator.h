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

/* A rate remembered from an earlier run is a hint, not a fact: it narrows the polygon's rate
 * range while the window alone cannot, and goes as soon as the data contradict it or pin the
 * rate at least as tightly on their own. */
typedef enum EstimatorPrior {
        ESTIMATOR_PRIOR_NONE,           /* never had one, or estimator_reset() dropped it */
        ESTIMATOR_PRIOR_ACTIVE,         /* narrowing the rate now */
        ESTIMATOR_PRIOR_RELEASED,       /* the samples pinned the rate on their own: no longer needed */
        ESTIMATOR_PRIOR_CONTRADICTED,   /* no line within it fit the samples: it was wrong, dropped */
} EstimatorPrior;

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
        EstimatorPrior prior;
        double prior_rate_lo, prior_rate_hi;    /* while ESTIMATOR_PRIOR_ACTIVE */
        /* r1 of the newest sample whose box bottom (top) held the feasible range from below
         * (above): a change of rate can have moved the clock away on that side only since then.
         * A truncating clock's box pins one side only now and then, when it straddles a tick. */
        int64_t pinned_below_r_ns, pinned_above_r_ns;
} Estimator;

void estimator_init(Estimator *e, const EstimatorConfig *config);
/* Empties the window and drops any prior (the clock restarted: what was known of it is gone). */
void estimator_reset(Estimator *e);

/* Narrows the prior on the rate error to [rate_lo, rate_hi] (intersected with the configured
 * +-max_rate_error) until the samples contradict it (ESTIMATOR_PRIOR_CONTRADICTED: the window is
 * refitted without it; the sample still counts as consistent when the refit holds it) or pin
 * the rate within it on their own (ESTIMATOR_PRIOR_RELEASED). The bound is honest only if the
 * true rate lies in the prior until then: the caller makes it wide enough. -EINVAL for a range
 * that is empty, not finite or outside the configured one; -EDOM when the samples already in
 * the window contradict it (nothing changes). */
int estimator_set_rate_prior(Estimator *e, double rate_lo, double rate_hi);

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
