/* SPDX-License-Identifier: MIT */

/* The estimator's feasible set: each sample's box as two half-planes in (a, d), the convex
 * polygon they cut from the allowed rate range, and what it says at any point of the frame. */

#include <errno.h>
#include <math.h>

#include "arith.h"
#include "estimator-internal.h"

/* One sample's two half-planes in the local frame, as  pa·a + pd·d <= c. */
typedef struct HalfPlane {
        double pa, pd, c;
} HalfPlane;

/* The sample in the local frame u = r - r_origin, y = x - x_origin - u:
 * the line reaches the box's top no later than r0, its bottom no earlier than r1. */
static int sample_half_planes(const Estimator *e, const Sample *s, HalfPlane ret[2], double *ret_u1) {
        int64_t u0, u1, top, bottom;
        int r;

        if ((r = arith_sub(s->r0_ns, e->r_origin_ns, &u0)) < 0 ||
            (r = arith_sub(s->r1_ns, e->r_origin_ns, &u1)) < 0 ||
            (r = arith_sub(s->x_hi_ns, e->x_origin_ns, &top)) < 0 ||
            (r = arith_sub(s->x_lo_ns, e->x_origin_ns, &bottom)) < 0 ||
            (r = arith_sub(top, u0, &top)) < 0 ||
            (r = arith_sub(bottom, u1, &bottom)) < 0)
                return r;

        /* a + d·u0 <= top + slack */
        ret[0] = (HalfPlane) { 1.0, (double) u0, (double) top + BOX_SLACK_NS };
        /* a + d·u1 >= bottom - slack */
        ret[1] = (HalfPlane) { -1.0, -(double) u1, -((double) bottom - BOX_SLACK_NS) };
        if (ret_u1)
                *ret_u1 = (double) u1;
        return 0;
}

/* Sutherland-Hodgman against one half-plane; a convex polygon gains at most one vertex. */
static size_t clip(const EstimatorPoint *in, size_t n, EstimatorPoint *out, const HalfPlane *h) {
        size_t n_out = 0;

        for (size_t i = 0; i < n; i++) {
                const EstimatorPoint *p = &in[i], *q = &in[(i + 1) % n];
                double fp = h->pa * p->a + h->pd * p->d - h->c;
                double fq = h->pa * q->a + h->pd * q->d - h->c;

                if (fp <= 0.0)
                        out[n_out++] = *p;
                if ((fp < 0.0 && fq > 0.0) || (fp > 0.0 && fq < 0.0)) {
                        double t = fp / (fp - fq);
                        out[n_out++] = (EstimatorPoint) {
                                p->a + t * (q->a - p->a),
                                p->d + t * (q->d - p->d),
                        };
                }
        }
        return n_out;
}

/* Each clip adds at most one vertex, and the polygon only ever holds the window's samples plus
 * the one being tried: it cannot outgrow its array. */
_Static_assert(ESTIMATOR_VERTICES_MAX >= 4 + 2 * (ESTIMATOR_WINDOW_MAX + 1), "polygon array too small");

/* Clips the polygon by one sample; 0 and the new vertex count, possibly 0 (empty). */
int estimator_clip_sample(const Estimator *e, EstimatorPoint *poly, size_t *n, const Sample *s) {
        EstimatorPoint tmp[ESTIMATOR_VERTICES_MAX];
        HalfPlane h[2];
        size_t m;
        int r;

        r = sample_half_planes(e, s, h, NULL);
        if (r < 0)
                return r;
        if (*n + 2 > ESTIMATOR_VERTICES_MAX)
                return -ENOSPC;
        m = clip(poly, *n, tmp, &h[0]);
        *n = clip(tmp, m, poly, &h[1]);
        return 0;
}

/* Rebuilds the polygon from the whole window in a frame anchored at its oldest sample. */
int estimator_rebuild(Estimator *e) {
        const Sample *first = window_at(e, 0);
        double dmax = e->config.max_rate_error, amax, u1, d_lo = -dmax, d_hi = dmax;
        HalfPlane h[2];
        size_t n;
        int r;

        e->r_origin_ns = first->r0_ns;
        e->x_origin_ns = first->x_lo_ns;

        /* The first box alone bounds a (the offset at u = 0) for any allowed rate; start from
         * that box so the doubles stay at the scale of the data. */
        r = sample_half_planes(e, first, h, &u1);
        if (r < 0)
                return r;
        amax = 2.0 * (fabs(h[0].c) + fabs(h[1].c) + dmax * u1) + 1.0;

        if (e->prior == ESTIMATOR_PRIOR_ACTIVE) {
                d_lo = e->prior_rate_lo;
                d_hi = e->prior_rate_hi;
        }
        e->polygon[0] = (EstimatorPoint) { -amax, d_lo };
        e->polygon[1] = (EstimatorPoint) { amax, d_lo };
        e->polygon[2] = (EstimatorPoint) { amax, d_hi };
        e->polygon[3] = (EstimatorPoint) { -amax, d_hi };
        n = 4;

        for (size_t i = 0; i < e->n; i++) {
                r = estimator_clip_sample(e, e->polygon, &n, window_at(e, i));
                if (r < 0)
                        return r;
                if (n == 0)
                        break;
        }
        e->n_vertices = n;
        return n > 0 ? 0 : -EDOM;
}

void estimator_range_local(const Estimator *e, double u, double *ret_lo, double *ret_hi) {
        double lo = INFINITY, hi = -INFINITY;

        for (size_t i = 0; i < e->n_vertices; i++) {
                double y = e->polygon[i].a + e->polygon[i].d * u;
                if (y < lo)
                        lo = y;
                if (y > hi)
                        hi = y;
        }
        *ret_lo = lo;
        *ret_hi = hi;
}

/* How little sample i constrains the polygon: the smallest margin of any vertex to either of its
 * half-planes. A sample far from every vertex tells nothing the others do not. */
double estimator_sample_slack(const Estimator *e, size_t i, const EstimatorPoint *poly, size_t n_vertices) {
        double slack = INFINITY;
        HalfPlane h[2];

        if (sample_half_planes(e, window_at(e, i), h, NULL) < 0)
                return INFINITY;
        for (size_t k = 0; k < 2; k++)
                for (size_t v = 0; v < n_vertices; v++) {
                        double margin = h[k].c - h[k].pa * poly[v].a - h[k].pd * poly[v].d;
                        if (margin < slack)
                                slack = margin;
                }
        return slack;
}
