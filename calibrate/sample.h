/* SPDX-License-Identifier: MIT */
#pragma once

/* One bracketed reading: the reference before (r0), the domain's value, the reference after (r1).
 * The domain's value is an interval [x_lo, x_hi] in the domain's ns (unwrapped count * period):
 * a point reading has x_lo == x_hi; a truncating clock gives [x, x + resolution]. */

#include <stddef.h>
#include <stdint.h>

typedef struct Sample {
        int64_t r0_ns;
        int64_t r1_ns;
        int64_t x_lo_ns;
        int64_t x_hi_ns;
} Sample;

static inline int64_t sample_deviation_ns(const Sample *s) {
        return s->r1_ns - s->r0_ns;
}

/* -EINVAL unless r0 <= r1 and x_lo <= x_hi. */
int sample_validate(const Sample *s);
