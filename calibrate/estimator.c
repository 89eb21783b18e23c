/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "arith.h"
#include "estimator.h"

const EstimatorConfig ESTIMATOR_CONFIG_DEFAULT = {
        .max_rate_error = 1e-3,
        .window_ns = INT64_C(600) * 1000000000,
        .step_threshold_ns = 10000,
};

/* Readings are integers: a clock that reads x was somewhere in [x - 1, x + 1] ns of the real
 * line, and so was the reference. One ns of slack on every box keeps the polygon honest. */
#define BOX_SLACK_NS 1.0

/* One sample's two half-planes in the local frame, as  pa·a + pd·d <= c. */
typedef struct HalfPlane {
        double pa, pd, c;
} HalfPlane;

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

static const Sample *window_at(const Estimator *e, size_t i) {
        return &e->window[i];
}

static const Sample *window_newest(const Estimator *e) {
        return e->n > 0 ? window_at(e, e->n - 1) : NULL;
}

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
static int clip_sample(const Estimator *e, EstimatorPoint *poly, size_t *n, const Sample *s) {
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
static int rebuild(Estimator *e) {
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
                r = clip_sample(e, e->polygon, &n, window_at(e, i));
                if (r < 0)
                        return r;
                if (n == 0)
                        break;
        }
        e->n_vertices = n;
        return n > 0 ? 0 : -EDOM;
}

static void range_local(const Estimator *e, double u, double *ret_lo, double *ret_hi) {
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

static void window_remove(Estimator *e, size_t i) {
        memmove(&e->window[i], &e->window[i + 1], (e->n - i - 1) * sizeof(Sample));
        e->n--;
}

/* How little sample i constrains the polygon: the smallest margin of any vertex to either of its
 * half-planes. A sample far from every vertex tells nothing the others do not. */
static double sample_slack(const Estimator *e, size_t i, const EstimatorPoint *poly, size_t n_vertices) {
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

/* Makes room for one more sample by dropping the least informative one. */
static void window_make_room(Estimator *e, const EstimatorPoint *poly, size_t n_vertices) {
        size_t worst = 0;
        double worst_slack = -INFINITY;

        if (e->n < ESTIMATOR_WINDOW_MAX)
                return;
        for (size_t i = 0; i < e->n; i++) {
                double slack = sample_slack(e, i, poly, n_vertices);
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
        return rebuild(e);
}

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
        r = rebuild(e);
        if (r < 0) {
                e->prior = old_prior;
                e->prior_rate_lo = old_lo;
                e->prior_rate_hi = old_hi;
                (void) rebuild(e);
                return r;
        }
        return 0;
}

/* How far the sample's box lies outside the current polygon's prediction over [r0, r1]
 * (> 0 above, < 0 below), and the jump of its middle against the prediction's middle. */
/* After s went in: does its box hold the range from below or above? Within the range's own
 * width and the step threshold of its edge, it does. */
static void note_pinned(Estimator *e, const Sample *s) {
        double u0 = (double) (s->r0_ns - e->r_origin_ns), u1 = (double) (s->r1_ns - e->r_origin_ns);
        double lo0, hi0, lo1, hi1, y_lo, y_hi, tol;

        range_local(e, u0, &lo0, &hi0);
        range_local(e, u1, &lo1, &hi1);
        y_lo = (double) (s->x_lo_ns - e->x_origin_ns) - u1;
        y_hi = (double) (s->x_hi_ns - e->x_origin_ns) - u0;
        tol = fmax(hi1 - lo1, hi0 - lo0) + (double) e->config.step_threshold_ns;
        if (y_lo >= lo1 - tol)
                e->pinned_below_r_ns = s->r1_ns;
        if (y_hi <= hi0 + tol)
                e->pinned_above_r_ns = s->r1_ns;
}

static void sample_excess(const Estimator *e, const Sample *s, double *ret_excess_ns, double *ret_jump_ns) {
        double u0 = (double) (s->r0_ns - e->r_origin_ns), u1 = (double) (s->r1_ns - e->r_origin_ns);
        double lo0, hi0, lo1, hi1, y_lo, y_hi, predicted_mid, sample_mid;

        range_local(e, u0, &lo0, &hi0);
        range_local(e, u1, &lo1, &hi1);
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
                note_pinned(e, s);
                e->samples_total++;
                if (ret_verdict)
                        *ret_verdict = ESTIMATOR_CONSISTENT;
                if (ret_step_ns)
                        *ret_step_ns = 0;
                return 0;
        }

        memcpy(candidate, e->polygon, e->n_vertices * sizeof(EstimatorPoint));
        n = e->n_vertices;
        r = clip_sample(e, candidate, &n, s);
        if (r < 0)
                return r;

        if (n == 0 && e->prior == ESTIMATOR_PRIOR_ACTIVE) {
                /* The remembered rate was wrong, not the clock: refit the window without it (it
                 * held under a narrower range, so it holds now) and try the sample again. */
                e->prior = ESTIMATOR_PRIOR_CONTRADICTED;
                r = rebuild(e);
                if (r < 0)
                        return r;
                memcpy(candidate, e->polygon, e->n_vertices * sizeof(EstimatorPoint));
                n = e->n_vertices;
                r = clip_sample(e, candidate, &n, s);
                if (r < 0)
                        return r;
        }

        if (n > 0) {
                size_t n_before = e->n;

                window_make_room(e, candidate, n);
                window_push(e, s);
                if (window_expire(e) || e->n <= n_before) {
                        r = rebuild(e);
                        if (r < 0)
                                return restart_with(e, s);
                } else {
                        memcpy(e->polygon, candidate, n * sizeof(EstimatorPoint));
                        e->n_vertices = n;
                }
                if (e->prior == ESTIMATOR_PRIOR_ACTIVE && prior_redundant(e)) {
                        /* Dropping a constraint only widens the polygon: it cannot be empty. */
                        e->prior = ESTIMATOR_PRIOR_RELEASED;
                        r = rebuild(e);
                        if (r < 0)
                                return r;
                }
                note_pinned(e, s);
                e->samples_total++;
                if (ret_verdict)
                        *ret_verdict = ESTIMATOR_CONSISTENT;
                if (ret_step_ns)
                        *ret_step_ns = 0;
                return 0;
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
        range_local(e, u, &lo, &hi);
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

        range_local(e, (double) u_c, &lo, &hi);
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
