/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "history.h"

void history_init(History *h, const EstimatorConfig *config) {
        memset(h, 0, sizeof(*h));
        estimator_init(&h->estimator, config);
        h->next_id = 1;
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
        if (current && current->end == SEGMENT_OPEN && h->estimator.n > 0)
                return estimator_model(&h->estimator, &current->model);
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

const Segment *history_at_x(const History *h, int64_t x_ns) {
        for (size_t i = h->n; i > 0; i--) {
                const Segment *s = history_get(h, i - 1);
                int64_t x_begin_ns, unc_ns;

                if (model_forward(&s->model, s->r_begin_ns, 0, &x_begin_ns, &unc_ns) < 0)
                        continue;
                if (x_begin_ns <= x_ns)
                        return s;
        }
        return history_get(h, 0);
}
