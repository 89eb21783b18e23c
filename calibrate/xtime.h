/* SPDX-License-Identifier: MIT */
#pragma once

/* High-precision X time, the form the EWMH frame-sync messages carry:
 * ((us / 1000) & 0xffffffff) * 1000 + us % 1000, i.e. the X server's 32-bit ms in the top part. */

#include <stdint.h>

/* us must be >= 0; -ERANGE otherwise. */
int xtime_encode_us(int64_t us, uint64_t *ret_encoded);

/* Inverse, unwrapping the 32-bit ms part to the occurrence nearest hint_us. -EINVAL when the
 * encoded ms part does not fit 32 bits. */
int xtime_decode_us(uint64_t encoded, int64_t hint_us, int64_t *ret_us);

/* 32-bit X ms -> unwrapped ms nearest hint_ms. */
int64_t xtime_unwrap_ms(uint32_t x_ms, int64_t hint_ms);
