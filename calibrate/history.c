/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "arith.h"
#include "history.h"

void history_init(History *h, const EstimatorConfig *config) {
        memset(h, 0, sizeof(*h));
        estimator_init(&h->estimator, config);
        h->next_id = 1;
}

void segment_records(const Model *m, int64_t at_r_ns, ConvRecord *ret_forward, ConvRecord *ret_inverse) {
        ConvSpec spec = {
                .from_unit = &UNIT_NS,
                .to_unit = &UNIT_NS,
                .to_model = m,
                .from_x_begin_ns = INT64_MIN,
                .to_r_begin_ns = INT64_MIN,
                .at_r_ns = at_r_ns,
        };

        if (conv_record_build(&spec, ret_forward) < 0)
                conv_record_failing(-ERANGE, ret_forward);
        spec.to_model = NULL;
        spec.from_model = m;
        if (conv_record_build(&spec, ret_inverse) < 0)
                conv_record_failing(-ERANGE, ret_inverse);
}

static int segment_convert(const ConvRecord *c, int64_t v, int64_t unc, int64_t *ret_v, int64_t *ret_unc) {
        int r = conv_record_convert_unc(c, v, unc, ret_v, ret_unc);

        /* Nothing further to ask: a value the segment's record does not cover is out of range. */
        return r == CONV_RECORD_MISS ? -ERANGE : r;
}

int segment_forward(const Segment *s, int64_t r_ns, int64_t r_unc_ns, int64_t *ret_x_ns, int64_t *ret_unc_ns) {
        return segment_convert(&s->forward, r_ns, r_unc_ns, ret_x_ns, ret_unc_ns);
}

int segment_inverse(const Segment *s, int64_t x_ns, int64_t x_unc_ns, int64_t *ret_r_ns, int64_t *ret_unc_ns) {
        return segment_convert(&s->inverse, x_ns, x_unc_ns, ret_r_ns, ret_unc_ns);
}

/* After s->model or its range changed: its records, centred at the model's centre. */
static void segment_update(Segment *s) {
        int64_t unc;

        segment_records(&s->model, s->model.r_c_ns, &s->forward, &s->inverse);
        if (segment_forward(s, s->r_begin_ns, 0, &s->x_begin_ns, &unc) < 0)
                s->x_begin_ns = INT64_MIN;
        if (segment_forward(s, s->r_end_ns, 0, &s->x_end_ns, &unc) < 0)
                s->x_end_ns = INT64_MIN;
}

static Segment *segment_at(History *h, size_t i) {
        return &h->ring[(h->head + i) % HISTORY_SEGMENTS_MAX];
}

size_t history_count(const History *h) {
        return h->n;
}

const Segment *history_get(const History *h, size_t i) {
        if (i >= h->n)
                return NULL;
        return &h->ring[(h->head + i) % HISTORY_SEGMENTS_MAX];
}

const Segment *history_current(const History *h) {
        return h->n > 0 ? history_get(h, h->n - 1) : NULL;
}

/* Opens a new segment; the oldest goes when the ring is full (bounded memory). */
static Segment *segment_open(History *h, int64_t r_begin_ns) {
        Segment *s;

        if (h->n == HISTORY_SEGMENTS_MAX) {
                h->head = (h->head + 1) % HISTORY_SEGMENTS_MAX;
                h->n--;
        }
        s = segment_at(h, h->n++);
        *s = (Segment) {
                .r_begin_ns = r_begin_ns,
                .r_end_ns = r_begin_ns,
                .id = h->next_id++,
                .end = SEGMENT_OPEN,
        };
        return s;
}

int history_add(History *h, const Sample *sample, HistoryEvent *ret_event) {
        EstimatorVerdict verdict;
        Segment *current;
        int64_t step_ns;
        int r;

        r = estimator_add(&h->estimator, sample, &verdict, &step_ns);
        if (r < 0)
                return r;

        current = h->n > 0 ? segment_at(h, h->n - 1) : NULL;
        if (current && current->end == SEGMENT_OPEN && verdict != ESTIMATOR_CONSISTENT) {
                current->end = verdict == ESTIMATOR_STEP ? SEGMENT_STEP : SEGMENT_RATE_CHANGE;
                current->step_ns = step_ns;
        }
        if (!current || current->end != SEGMENT_OPEN)
                current = segment_open(h, sample->r0_ns);

        r = estimator_model(&h->estimator, &current->model);
        if (r < 0)
                return r;
        current->r_end_ns = sample->r1_ns;
        segment_update(current);

        if (ret_event)
                *ret_event = (HistoryEvent) {
                        .verdict = verdict,
                        .step_ns = step_ns,
                        .at_r_ns = sample->r0_ns,
                };
        return 0;
}

int history_set_rate_prior(History *h, double rate_lo, double rate_hi) {
        Segment *current = h->n > 0 ? segment_at(h, h->n - 1) : NULL;
        int r;

        r = estimator_set_rate_prior(&h->estimator, rate_lo, rate_hi);
        if (r < 0)
                return r;
        if (current && current->end == SEGMENT_OPEN && h->estimator.n > 0) {
                r = estimator_model(&h->estimator, &current->model);
                if (r < 0)
                        return r;
                segment_update(current);
        }
        return 0;
}

void history_restart(History *h) {
        Segment *current = h->n > 0 ? segment_at(h, h->n - 1) : NULL;

        if (current && current->end == SEGMENT_OPEN)
                current->end = SEGMENT_RESTART;
        estimator_reset(&h->estimator);
}

int history_rate_changed(History *h, double rate_change, double margin) {
        Segment *current = h->n > 0 ? segment_at(h, h->n - 1) : NULL;
        double lo, hi;

        if (!isfinite(rate_change) || !isfinite(margin) || margin < 0)
                return -EINVAL;
        if (!current || current->end != SEGMENT_OPEN || h->estimator.n == 0)
                return -ENODATA;

        lo = current->model.rate - current->model.rate_half + rate_change - margin;
        hi = current->model.rate + current->model.rate_half + rate_change + margin;
        current->end = SEGMENT_RATE_CHANGE;
        current->step_ns = 0;
        estimator_reset(&h->estimator);
        /* Out of the configured range, or no width: the samples start from nothing, as after
         * any other change of rate. */
        (void) estimator_set_rate_prior(&h->estimator, lo, hi);
        return 0;
}

const Segment *history_at_r(const History *h, int64_t r_ns) {
        for (size_t i = h->n; i > 0; i--) {
                const Segment *s = history_get(h, i - 1);
                if (s->r_begin_ns <= r_ns)
                        return s;
        }
        return history_get(h, 0);
}

/* The segment that follows s when s was closed by a change of rate, else NULL. */
static const Segment *segment_after_rate_change(const History *h, const Segment *s) {
        if (s->end != SEGMENT_RATE_CHANGE)
                return NULL;
        for (size_t i = 0; i + 1 < h->n; i++)
                if (history_get(h, i) == s)
                        return history_get(h, i + 1);
        return NULL;
}

/* The smallest interval that holds both [v - u, v + u] and [w - t, w + t]. */
static int interval_union(int64_t v, int64_t u, int64_t w, int64_t t, int64_t *ret_mid, int64_t *ret_half) {
        int64_t lo_a, hi_a, lo_b, hi_b, lo, hi, width;
        int r;

        if ((r = arith_sub(v, u, &lo_a)) < 0 || (r = arith_add(v, u, &hi_a)) < 0 ||
            (r = arith_sub(w, t, &lo_b)) < 0 || (r = arith_add(w, t, &hi_b)) < 0)
                return r;
        lo = lo_a < lo_b ? lo_a : lo_b;
        hi = hi_a > hi_b ? hi_a : hi_b;
        if ((r = arith_sub(hi, lo, &width)) < 0)
                return r;
        *ret_mid = lo + width / 2;
        *ret_half = width - width / 2;
        return 0;
}

/* history_forward() (r -> x) or history_inverse() (x -> r): the segment of the value's time; past
 * a segment's end, where the next segment changed the rate, either segment may be right, so the
 * answer covers both. */
static int history_map(const History *h, bool inverse, int64_t v_ns, int64_t v_unc_ns, int64_t *ret_ns,
                       int64_t *ret_unc_ns) {
        int (*segment_map)(const Segment *, int64_t, int64_t, int64_t *, int64_t *) =
                inverse ? segment_inverse : segment_forward;
        const Segment *s, *next;
        int64_t out, unc, out_next, unc_next;
        bool past_end;
        int r;

        if (h->n == 0)
                return -ENODATA;
        s = inverse ? history_at_x(h, v_ns) : history_at_r(h, v_ns);
        r = segment_map(s, v_ns, v_unc_ns, &out, &unc);
        if (r < 0)
                return r;
        next = segment_after_rate_change(h, s);
        /* a segment without an x end (INT64_MIN) has nothing past it in x */
        past_end = inverse ? s->x_end_ns != INT64_MIN && v_ns > s->x_end_ns : v_ns > s->r_end_ns;
        if (next && past_end && segment_map(next, v_ns, v_unc_ns, &out_next, &unc_next) >= 0 &&
            interval_union(out, unc, out_next, unc_next, &out, &unc) < 0)
                return -ERANGE;
        *ret_ns = out;
        *ret_unc_ns = unc;
        return 0;
}

int history_forward(const History *h, int64_t r_ns, int64_t r_unc_ns, int64_t *ret_x_ns, int64_t *ret_unc_ns) {
        return history_map(h, false, r_ns, r_unc_ns, ret_x_ns, ret_unc_ns);
}

int history_inverse(const History *h, int64_t x_ns, int64_t x_unc_ns, int64_t *ret_r_ns, int64_t *ret_unc_ns) {
        return history_map(h, true, x_ns, x_unc_ns, ret_r_ns, ret_unc_ns);
}

const Segment *history_at_x(const History *h, int64_t x_ns) {
        for (size_t i = h->n; i > 0; i--) {
                const Segment *s = history_get(h, i - 1);

                if (s->x_begin_ns != INT64_MIN && s->x_begin_ns <= x_ns)
                        return s;
        }
        return history_get(h, 0);
}
