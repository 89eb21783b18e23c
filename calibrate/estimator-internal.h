/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by estimator.c, estimator-polygon.c and estimator-prior.c only: not installed, not part
 * of the API (estimator.h). The polygon lives in the local frame u = r - r_origin,
 * y = x - x_origin - u, in the coordinates (a, d) of EstimatorPoint. */

#include <stddef.h>

#include "estimator.h"

/* Readings are integers: a clock that reads x was somewhere in [x - 1, x + 1] ns of the real
 * line, and so was the reference. One ns of slack on every box keeps the polygon honest. */
#define BOX_SLACK_NS 1.0

static inline const Sample *window_at(const Estimator *e, size_t i) {
        return &e->window[i];
}

static inline const Sample *window_newest(const Estimator *e) {
        return e->n > 0 ? window_at(e, e->n - 1) : NULL;
}

/* estimator-polygon.c */

/* Clips poly (n vertices) by one sample; 0 and the new vertex count in *n, possibly 0 (empty). */
int estimator_clip_sample(const Estimator *e, EstimatorPoint *poly, size_t *n, const Sample *s);

/* Rebuilds the polygon from the whole window in a frame anchored at its oldest sample, within
 * the prior's rate range while it is active. -EDOM when the polygon comes out empty. */
int estimator_rebuild(Estimator *e);

/* The lowest and highest y of the polygon's lines at u. */
void estimator_range_local(const Estimator *e, double u, double *ret_lo, double *ret_hi);

/* How little window sample i constrains poly: INFINITY when it cannot be put in the frame. */
double estimator_sample_slack(const Estimator *e, size_t i, const EstimatorPoint *poly, size_t n_vertices);

/* estimator-prior.c */

/* The polygon clipped by s came out empty under an active prior: drops the prior as
 * contradicted, refits the window and clips s again into candidate (*n its vertex count). */
int estimator_prior_contradicted(Estimator *e, const Sample *s, EstimatorPoint *candidate, size_t *n);

/* Releases an active prior once the window pins the rate as tightly on its own. */
int estimator_prior_release_if_redundant(Estimator *e);
