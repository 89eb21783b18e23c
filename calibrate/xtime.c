/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdint.h>

#include "arith.h"
#include "xtime.h"


int xtime_encode_us(int64_t us, uint64_t *ret_encoded) {
        if (!ret_encoded)
                return -EINVAL;
        if (us < 0)
                return -ERANGE;

        /* The X server's ms are its clock mod 2^32; the sub-ms part rides below them. */
        *ret_encoded = ((uint64_t) (us / 1000) & UINT64_C(0xffffffff)) * 1000 + (uint64_t) (us % 1000);
        return 0;
}

int xtime_decode_us(uint64_t encoded, int64_t hint_us, int64_t *ret_us) {
        if (!ret_us)
                return -EINVAL;
        if (encoded / 1000 > UINT64_C(0xffffffff))
                return -EINVAL;
        /* encoded is the occurrence in [0, 2^32 ms); the others are it + k * XTIME_US_WRAP. The
         * hint's residue keeps every intermediate from overflowing. */
        return arith_add(hint_us, xtime_us_step((int64_t) encoded, xtime_us_residue(hint_us)), ret_us);
}

int64_t xtime_unwrap_ms(uint32_t x_ms, int64_t hint_ms) {
        uint64_t d;
        int64_t delta_ms, r;

        /* Unsigned arithmetic: the low 32 bits of x - hint, whatever the sign of hint. */
        d = ((uint64_t) x_ms - (uint64_t) hint_ms) & UINT64_C(0xffffffff);
        delta_ms = (int64_t) d;
        if (delta_ms > XTIME_MS_WRAP / 2)
                delta_ms -= XTIME_MS_WRAP;

        if (arith_add(hint_ms, delta_ms, &r) >= 0)
                return r;

        /* The nearest occurrence does not fit int64 (hint within 2^31 of an edge): the
         * neighbouring one, on the other side of hint, always does. There is no error return. */
        return hint_ms + (delta_ms > 0 ? delta_ms - XTIME_MS_WRAP : delta_ms + XTIME_MS_WRAP);
}
