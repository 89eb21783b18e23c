/* SPDX-License-Identifier: MIT */
#pragma once

/* A domain's history against the reference: a ring of segments, each a model valid over an
 * interval of r. A discontinuity closes the current segment and opens the next; old segments
 * stay (up to HISTORY_SEGMENTS_MAX), so a past timestamp converts with the model of its time. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv-record.h"
#include "estimator.h"
#include "model.h"

#define HISTORY_SEGMENTS_MAX 16

typedef enum SegmentEnd {
        SEGMENT_OPEN,           /* the current one */
        SEGMENT_STEP,           /* closed by a step: announced as a discontinuity */
        SEGMENT_RATE_CHANGE,    /* closed by a change of rate: not announced */
        SEGMENT_RESTART,        /* closed by the source (server restart, device lost) */
} SegmentEnd;

typedef struct Segment {
        Model model;
        int64_t r_begin_ns;     /* first reference time this segment's samples cover */
        int64_t r_end_ns;       /* last one (grows while open) */
        uint64_t id;            /* increases by one per segment, never reused */
        SegmentEnd end;
        int64_t step_ns;        /* for SEGMENT_STEP: the jump at its end */
        /* The model as conversion records (conv-record.h), rebuilt whenever it changes: r -> x
         * and x -> r, in ns. Every conversion with a segment goes through them. */
        ConvRecord forward, inverse;
        int64_t x_begin_ns, x_end_ns;   /* x at r_begin and r_end by forward; INT64_MIN: none */
} Segment;

typedef struct History {
        Estimator estimator;
        Segment ring[HISTORY_SEGMENTS_MAX];
        size_t head, n;         /* oldest at head; the newest is the open one */
        uint64_t next_id;
} History;

typedef struct HistoryEvent {
        EstimatorVerdict verdict;
        int64_t step_ns;        /* for a step */
        int64_t at_r_ns;        /* reference time of the first sample after it */
} HistoryEvent;

void history_init(History *h, const EstimatorConfig *config);

/* Feeds one sample; updates the open segment's model; on a step or rate change closes it and
 * opens a new one. ret_event (optional) reports what happened. */
int history_add(History *h, const Sample *s, HistoryEvent *ret_event);

/* A rate remembered from an earlier run (estimator_set_rate_prior()): narrows the rate of the
 * first calibrations; the open segment's model follows at once. Same errors. */
int history_set_rate_prior(History *h, double rate_lo, double rate_hi);

/* What became of the prior (ESTIMATOR_PRIOR_NONE when there never was one). */
static inline EstimatorPrior history_rate_prior(const History *h) {
        return h->estimator.prior;
}

/* The source says the clock restarted (X server restart, GPU reset): close the open segment. */
void history_restart(History *h);

/* The source says the clock's rate changed by rate_change (b - 1 units, e.g. 1e-6 for 1 ppm),
 * give or take margin (>= 0): close the open segment, and start the next with the old rate
 * range moved by it as a prior (estimator_set_rate_prior(): the samples overrule a wrong one).
 * -ENODATA before the first model (nothing to move), -EINVAL for values that are not finite. */
int history_rate_changed(History *h, double rate_change, double margin);

/* The newest segment (the open one), or NULL before the first sample. */
const Segment *history_current(const History *h);

/* The segment in force at reference time r: the newest whose r_begin <= r, else the oldest. */
const Segment *history_at_r(const History *h, int64_t r_ns);

/* The segment whose domain range contains x: the newest segment whose x at r_begin <= x
 * (after a backward step this prefers the newest), else the oldest. */
const Segment *history_at_x(const History *h, int64_t x_ns);

/* One segment's conversion, by its records: r -> x and x -> r, an input uncertainty carried
 * (conv_record_convert_unc()). -ERANGE for a value the record does not answer (further than
 * about 2^61 ns from the segment) or an answer that does not fit. */
int segment_forward(const Segment *s, int64_t r_ns, int64_t r_unc_ns, int64_t *ret_x_ns, int64_t *ret_unc_ns);
int segment_inverse(const Segment *s, int64_t x_ns, int64_t x_unc_ns, int64_t *ret_r_ns, int64_t *ret_unc_ns);

/* The records of a model centred at_r_ns, as a Segment holds them (a graph node's open model
 * too). A model they cannot be built of gives records that fail every value with -ERANGE. */
void segment_records(const Model *m, int64_t at_r_ns, ConvRecord *ret_forward, ConvRecord *ret_inverse);

/* A conversion with the segment of its time (history_at_r(), history_at_x()). A time between a
 * segment closed by a change of rate and the next one's first sample gets the union of both
 * models' intervals: the rate changed somewhere in between, so the truth there lies on one line
 * or the other. The errors of segment_forward() and segment_inverse(); -ENODATA when empty. */
int history_forward(const History *h, int64_t r_ns, int64_t r_unc_ns, int64_t *ret_x_ns, int64_t *ret_unc_ns);
int history_inverse(const History *h, int64_t x_ns, int64_t x_unc_ns, int64_t *ret_r_ns, int64_t *ret_unc_ns);

size_t history_count(const History *h);
const Segment *history_get(const History *h, size_t i);     /* 0 = oldest */
