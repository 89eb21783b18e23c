/* SPDX-License-Identifier: MIT */
#pragma once

/* Checked int64 arithmetic: every result near INT64_MIN/MAX is -ERANGE, never undefined behaviour. */

#include <errno.h>
#include <stdint.h>

static inline int arith_add(int64_t a, int64_t b, int64_t *ret) {
        int64_t r;
        if (__builtin_add_overflow(a, b, &r))
                return -ERANGE;
        *ret = r;
        return 0;
}

static inline int arith_sub(int64_t a, int64_t b, int64_t *ret) {
        int64_t r;
        if (__builtin_sub_overflow(a, b, &r))
                return -ERANGE;
        *ret = r;
        return 0;
}

static inline int arith_mul(int64_t a, int64_t b, int64_t *ret) {
        int64_t r;
        if (__builtin_mul_overflow(a, b, &r))
                return -ERANGE;
        *ret = r;
        return 0;
}

/* Doubles in [2^62, 2^63) are 1024 apart: anything at or above 2^63 - 1024 is too close to the
 * edge for rounding to be trusted. Below it the conversion to int64 is exact and defined. */
#define ARITH_DOUBLE_LIMIT (0x1p63 - 1024.0)

/* Inline and without libm: these sit on the conversion hot path, where a call to round() or
 * ceil() costs more than the whole affine map. */

/* Rounds to nearest, halves away from zero; -ERANGE when v is NaN, infinite or out of range. */
static inline int arith_from_double(double v, int64_t *ret) {
        int64_t t;
        double frac;

        if (!(v > -ARITH_DOUBLE_LIMIT && v < ARITH_DOUBLE_LIMIT))
                return -ERANGE;
        t = (int64_t) v;        /* toward zero; exact when |v| >= 2^52, where v is integral */
        frac = v - (double) t;
        if (frac >= 0.5)
                t++;
        else if (frac <= -0.5)
                t--;
        *ret = t;
        return 0;
}

/* For the hot path, where the caller has bounded v already (|v| < 2^62): the nearest integer
 * (ties to even; needs -fno-math-errno to become one instruction). */
static inline int64_t arith_round_bounded(double v) {
        return (int64_t) __builtin_llrint(v);
}

/* An integer > v for a bound v >= 0 (floor + 1: at most one more than ceil, and two
 * instructions); -ERANGE when v is NaN or too large. */
static inline int arith_bound_from_double(double v, int64_t *ret) {
        if (!(v < ARITH_DOUBLE_LIMIT) || !(v >= 0.0))
                return -ERANGE;
        *ret = (int64_t) v + 1;
        return 0;
}

/* Rounds up to the next integer >= v, for bounds; -ERANGE as above. */
static inline int arith_ceil_from_double(double v, int64_t *ret) {
        int64_t t;

        if (!(v > -ARITH_DOUBLE_LIMIT && v < ARITH_DOUBLE_LIMIT))
                return -ERANGE;
        t = (int64_t) v;
        if ((double) t < v)
                t++;
        *ret = t;
        return 0;
}
