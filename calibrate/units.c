/* SPDX-License-Identifier: MIT */

/* Units and their conversion to ns.
 *
 * A whole-ns period (ns, µs, ms) takes an exact int64 path. Any other period (GPU ticks of
 * 52.083333 ns, 0.5 ns) goes through long double and is then corrected with the residual
 * fmal(count, period, -ns): with a 64-bit significand (x86-64; aarch64 has more) count, ns and
 * period are exact operands and the residual, a small multiple of the period's last bit, is
 * exact too. So the rounding direction is always right and the reported error is the true one,
 * rounded up. Where long double is only a double, a slack term keeps the error bound honest. */

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "arith.h"
#include "units.h"
#include "xtime.h"

const DomainUnit UNIT_NS = {
        .period_ns = 1.0,
        .wrap_bits = 0,
        .truncates = false,
        .encoding = UNIT_ENCODING_PLAIN,
};

const DomainUnit UNIT_MS_X11 = {
        .period_ns = 1e6,
        .wrap_bits = 32,
        .truncates = true,
        .encoding = UNIT_ENCODING_PLAIN,
};

/* The 32-bit wrap of the ms part lives inside the encoding, not in wrap_bits. */
const DomainUnit UNIT_US_X11 = {
        .period_ns = 1000.0,
        .wrap_bits = 0,
        .truncates = true,
        .encoding = UNIT_ENCODING_X11_US,
};

/* The largest wire value of the X11 µs encoding: ms part 2^32 - 1, then 999 µs. */
#define X11_US_ENCODED_MAX (INT64_C(0xffffffff) * 1000 + 999)

int unit_validate(const DomainUnit *u) {
        if (!u)
                return -EINVAL;
        /* Written so that NaN fails too. */
        if (!(u->period_ns > 0.0) || !isfinite(u->period_ns))
                return -EINVAL;
        if (u->wrap_bits > 64)
                return -EINVAL;

        switch (u->encoding) {
        case UNIT_ENCODING_PLAIN:
                return 0;
        case UNIT_ENCODING_X11_US:
                /* The encoding wraps by itself; a second wrap on top would be ambiguous. */
                return u->wrap_bits == 0 || u->wrap_bits == 64 ? 0 : -EINVAL;
        }

        return -EINVAL;
}

static bool plain_wraps(const DomainUnit *u) {
        return u->wrap_bits > 0 && u->wrap_bits < 64;
}

int unit_unwrap(const DomainUnit *u, int64_t raw, int64_t hint, int64_t *ret) {
        uint64_t m, d;
        int64_t delta;
        int r;

        if (!ret)
                return -EINVAL;
        r = unit_validate(u);
        if (r < 0)
                return r;

        if (u->encoding == UNIT_ENCODING_X11_US) {
                if (raw < 0 || raw > X11_US_ENCODED_MAX)
                        return -ERANGE;
                return xtime_decode_us((uint64_t) raw, hint, ret);
        }

        if (!plain_wraps(u)) {
                *ret = raw;
                return 0;
        }

        m = UINT64_C(1) << u->wrap_bits;
        if (raw < 0 || (uint64_t) raw >= m)
                return -ERANGE;

        /* (raw - hint) mod m in unsigned arithmetic, then the signed step of smallest magnitude;
         * a tie (exactly m/2) goes to the later occurrence. */
        d = ((uint64_t) raw - (uint64_t) hint) & (m - 1);
        delta = d > m / 2 ? -(int64_t) (m - d) : (int64_t) d;

        return arith_add(hint, delta, ret);
}

int unit_wrap(const DomainUnit *u, int64_t unwrapped, int64_t *ret) {
        uint64_t encoded;
        int r;

        if (!ret)
                return -EINVAL;
        r = unit_validate(u);
        if (r < 0)
                return r;

        if (u->encoding == UNIT_ENCODING_X11_US) {
                r = xtime_encode_us(unwrapped, &encoded);
                if (r < 0)
                        return r;
                *ret = (int64_t) encoded;       /* < 2^42 */
                return 0;
        }

        if (!plain_wraps(u)) {
                *ret = unwrapped;
                return 0;
        }

        /* Two's complement masking is the positive remainder mod 2^wrap_bits. */
        *ret = (int64_t) ((uint64_t) unwrapped & ((UINT64_C(1) << u->wrap_bits) - 1));
        return 0;
}

/* The period as an int64 when it is a whole number of ns. */
static bool period_is_integer(double period_ns, int64_t *ret_period_ns) {
        if (period_ns >= 0x1p63 || period_ns != floor(period_ns))
                return false;

        *ret_period_ns = (int64_t) period_ns;
        return true;
}

/* count * period - ns, exact where long double has a 64-bit significand (see the top). */
static long double residual_ns(long double count, long double period_ns, long double ns) {
        return fmal(count, period_ns, -ns);
}

static bool ldouble_fits_int64(long double v) {
        return v >= -0x1p63L && v < 0x1p63L;
}

int unit_to_ns(const DomainUnit *u, int64_t count, int64_t *ret_ns) {
        long double period, c, x, res;
        int64_t period_ns;
        int r;

        if (!ret_ns)
                return -EINVAL;
        r = unit_validate(u);
        if (r < 0)
                return r;

        if (period_is_integer(u->period_ns, &period_ns))
                return arith_mul(count, period_ns, ret_ns);

        period = u->period_ns;
        c = (long double) count;
        x = c * period;
        /* A truncating unit starts at the first whole ns at or after count * period, so that
         * unit_from_ns() maps it back to count; others round to nearest, halves up. */
        x = u->truncates ? ceill(x) : floorl(x + 0.5L);

        for (int i = 0; i < 2; i++) {
                res = residual_ns(c, period, x);
                if (u->truncates ? res > 0 : res >= 0.5L)
                        x += 1;
                else if (u->truncates ? res <= -1 : res < -0.5L)
                        x -= 1;
                else
                        break;
        }

        if (!ldouble_fits_int64(x))
                return -ERANGE;

        *ret_ns = (int64_t) x;
        return 0;
}

static int from_ns_integer(const DomainUnit *u, int64_t period_ns, int64_t ns, int64_t *ret_count,
                           int64_t *ret_error_ns) {
        int64_t q, rem;

        /* period_ns >= 1, so neither the division nor the adjustments below can overflow. */
        q = ns / period_ns;
        rem = ns % period_ns;
        if (rem < 0) {
                q--;
                rem += period_ns;
        }

        /* Now ns = q * period + rem with 0 <= rem < period. Halves round up. */
        if (!u->truncates && rem >= period_ns - rem) {
                q++;
                rem = period_ns - rem;
        }

        *ret_count = q;
        if (ret_error_ns)
                *ret_error_ns = rem;
        return 0;
}

int unit_from_ns(const DomainUnit *u, int64_t ns, int64_t *ret_count, int64_t *ret_error_ns) {
        long double period, half, n, c, res, error_ns;
        int64_t period_ns;
        int r;

        if (!ret_count)
                return -EINVAL;
        r = unit_validate(u);
        if (r < 0)
                return r;

        if (period_is_integer(u->period_ns, &period_ns))
                return from_ns_integer(u, period_ns, ns, ret_count, ret_error_ns);

        period = u->period_ns;
        half = period / 2;
        n = (long double) ns;
        c = n / period;
        c = u->truncates ? floorl(c) : floorl(c + 0.5L);
        /* Far outside int64 (tiny periods): no correction can bring it back. */
        if (!(fabsl(c) <= 0x1p64L))
                return -ERANGE;

        /* Truncating: c * period <= ns < (c + 1) * period. Nearest: |res| <= period / 2, and a
         * tie goes up, to the count whose residual is +period/2. */
        for (int i = 0; i < 2; i++) {
                res = residual_ns(c, period, n);
                if (u->truncates ? res > 0 : res > half)
                        c -= 1;
                else if (u->truncates ? res <= -period : res <= -half)
                        c += 1;
                else
                        break;
        }

        if (!ldouble_fits_int64(c))
                return -ERANGE;

        error_ns = fabsl(residual_ns(c, period, n));
#if LDBL_MANT_DIG < 64
        /* long double is a double here: ns and count * period were rounded on the way. */
        error_ns += (fabsl(n) + fabsl(c * period)) * 2 * LDBL_EPSILON;
#endif
        error_ns = ceill(error_ns);
        if (!ldouble_fits_int64(error_ns))
                return -ERANGE;

        *ret_count = (int64_t) c;
        if (ret_error_ns)
                *ret_error_ns = (int64_t) error_ns;
        return 0;
}
