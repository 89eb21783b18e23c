/* SPDX-License-Identifier: MIT */
#pragma once

/* High-precision X time, the form the EWMH frame-sync messages carry:
 * ((us / 1000) & 0xffffffff) * 1000 + us % 1000, i.e. the X server's 32-bit ms in the top part. */

#include <stdint.h>

#define XTIME_MS_WRAP   (INT64_C(1) << 32)              /* X server ms wrap, ~49.7 days */
#define XTIME_US_WRAP   (XTIME_MS_WRAP * 1000)          /* the same period in µs, < 2^42 */

/* us must be >= 0; -ERANGE otherwise. */
int xtime_encode_us(int64_t us, uint64_t *ret_encoded);

/* Inverse, unwrapping the 32-bit ms part to the occurrence nearest hint_us. -EINVAL when the
 * encoded ms part does not fit 32 bits. */
int xtime_decode_us(uint64_t encoded, int64_t hint_us, int64_t *ret_us);

/* 32-bit X ms -> unwrapped ms nearest hint_ms. */
int64_t xtime_unwrap_ms(uint32_t x_ms, int64_t hint_ms);

/* An unreduced value (us >= 0 whose ms part is >= 2^32, as mutter sends g_get_monotonic_time())
 * to its reduced form, the same X time. */
static inline int64_t xtime_us_reduce(int64_t us) {
        return ((us / 1000) & INT64_C(0xffffffff)) * 1000 + us % 1000;
}

/* us modulo the wrap of the encoding (2^32 ms), in [0, wrap), negative us too. */
static inline int64_t xtime_us_residue(int64_t us) {
        int64_t m = us % XTIME_US_WRAP;

        return m < 0 ? m + XTIME_US_WRAP : m;
}

/* The step from a hint (of residue hint_residue_us) to the nearest occurrence of the reduced
 * value base_us (both in [0, wrap)): in (-wrap/2, wrap/2], a tie (exactly half a wrap away)
 * going to the later occurrence. Whatever unwraps an x11_us value unwraps it with this. */
static inline int64_t xtime_us_step(int64_t base_us, int64_t hint_residue_us) {
        int64_t delta = base_us - hint_residue_us;

        if (delta < 0)
                delta += XTIME_US_WRAP;
        if (delta > XTIME_US_WRAP / 2)
                delta -= XTIME_US_WRAP;
        return delta;
}
