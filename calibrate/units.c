/* SPDX-License-Identifier: MIT */

/* Units and their conversion to ns.
 *
 * Integers only: the period (a double) is read from its bits as m·2^-s exactly, and count·P and
 * ns/P are computed exactly in 128 bits, so the rounding direction is always right and the
 * reported error is the true one, rounded up. (This replaced long double, fmal and fenv: msc
 * cost 882 ns a conversion through glibc's software fmal.) The live graph and the table do not
 * come here at all: their units are folded into the conversion records (conv-record.h). */

#include <errno.h>
#include <string.h>
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

int unit_validate(const DomainUnit *u) {
        uint64_t bits;

        if (!u)
                return -EINVAL;
        /* 0 < period < 2^1000 (NaN fails too), from the bits: every conversion checks its unit
         * here, and a conversion has no floating point. */
        memcpy(&bits, &u->period_ns, sizeof(bits));
        if (bits >> 63 || bits == 0 || ((bits >> 52) & 0x7ff) >= 1023 + 1000)
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

/* What every conversion of a unit checks first: an answer to write and a valid unit. */
static int unit_check(const DomainUnit *u, const int64_t *ret) {
        return ret ? unit_validate(u) : -EINVAL;
}

int unit_unwrap(const DomainUnit *u, int64_t raw, int64_t hint, int64_t *ret) {
        int r;

        r = unit_check(u, ret);
        if (r < 0)
                return r;
        if (u->encoding == UNIT_ENCODING_X11_US) {
                if (raw < 0)
                        return -ERANGE;
                /* An unreduced value is the same X time as its reduced form, as in conv-record.h. */
                return xtime_decode_us((uint64_t) xtime_us_reduce(raw), hint, ret);
        }
        if (!plain_wraps(u)) {
                *ret = raw;
                return 0;
        }
        if (raw < 0 || (uint64_t) raw >> u->wrap_bits)
                return -ERANGE;
        return arith_add(hint, unit_wrap_step((uint64_t) raw, hint, u->wrap_bits), ret);
}

int unit_wrap(const DomainUnit *u, int64_t unwrapped, int64_t *ret) {
        int r;

        r = unit_check(u, ret);
        if (r < 0)
                return r;
        if (u->encoding == UNIT_ENCODING_X11_US)
                /* The floor modulo of the whole wrap: a negative time (an X time before the wrap
                 * origin, as x11 -> monotonic may answer) encodes too. */
                *ret = xtime_us_residue(unwrapped);
        else if (plain_wraps(u))
                /* Two's complement masking is the positive remainder mod 2^wrap_bits. */
                *ret = (int64_t) ((uint64_t) unwrapped & ((UINT64_C(1) << u->wrap_bits) - 1));
        else
                *ret = unwrapped;
        return 0;
}

/* The period as m·2^-s exactly, read from the double's bits (no floating point arithmetic on
 * the conversion path). -EINVAL for anything but a positive normal number. */
static int period_bits(double period_ns, uint64_t *ret_m, int *ret_s) {
        uint64_t bits, m;
        int e;

        memcpy(&bits, &period_ns, sizeof(bits));
        if (bits >> 63 || ((bits >> 52) & 0x7ff) == 0 || ((bits >> 52) & 0x7ff) == 0x7ff)
                return -EINVAL;
        m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
        e = (int) ((bits >> 52) & 0x7ff) - 1075;
        e += __builtin_ctzll(m);
        m >>= __builtin_ctzll(m);
        if (e > 40 || e < -100)
                return -EINVAL;
        *ret_m = m;
        *ret_s = -e;
        return 0;
}

/* What unit_to_ns() and unit_from_ns() check first: an answer to write, a valid unit, and its
 * period as m·2^-sh. */
static int unit_period(const DomainUnit *u, const int64_t *ret, uint64_t *ret_m, int *ret_sh) {
        int r = unit_check(u, ret);

        return r < 0 ? r : period_bits(u->period_ns, ret_m, ret_sh);
}

int unit_to_ns(const DomainUnit *u, int64_t count, int64_t *ret_ns) {
        __int128 v, q;
        uint64_t m;
        int sh, r;

        r = unit_period(u, ret_ns, &m, &sh);
        if (r < 0)
                return r;

        if (m == 1 && sh == 0) {        /* ns */
                *ret_ns = count;
                return 0;
        }
        /* count·P exactly in 128 bits. A unit that floors (truncating, events) starts at the first
         * whole ns at or after it, so that unit_from_ns() maps it back to count; others round to
         * nearest, halves up. */
        v = (__int128) count * (__int128) m;
        if (sh <= 0) {
                /* A multiplication, not v << -sh: shifting a negative value left is undefined.
                 * Beyond 64 bits the answer cannot fit anyway. */
                if (v != 0 && (-sh > 62 || v < INT64_MIN || v > INT64_MAX))
                        return -ERANGE;
                q = v == 0 ? 0 : v * ((__int128) 1 << -sh);
        } else {
                __int128 rem = v & (((__int128) 1 << sh) - 1);

                q = v >> sh;
                if (unit_floors(u) ? rem != 0 : rem >= ((__int128) 1 << (sh - 1)))
                        q++;
        }
        if (q < INT64_MIN || q > INT64_MAX)
                return -ERANGE;
        *ret_ns = (int64_t) q;
        return 0;
}

int unit_from_ns(const DomainUnit *u, int64_t ns, int64_t *ret_count, int64_t *ret_error_ns) {
        __int128 n, d, q, rem;
        uint64_t m;
        int sh, r;

        r = unit_period(u, ret_count, &m, &sh);
        if (r < 0)
                return r;

        if (m == 1 && sh == 0) {        /* ns */
                *ret_count = ns;
                if (ret_error_ns)
                        *ret_error_ns = 0;
                return 0;
        }
        /* ns / P = ns·2^sh / m, exactly: a quotient and a remainder in 128 bits (in 64 for a
         * whole-ns period, where a 128-bit division would cost more than the rest). */
        if (sh <= 0 && (m << -sh) >> -sh == m && (m << -sh) <= INT64_MAX) {
                int64_t d64 = (int64_t) (m << -sh), q64 = ns / d64, rem64 = ns % d64;

                if (rem64 < 0) {
                        q64--;
                        rem64 += d64;
                }
                if (!unit_floors(u) && rem64 >= d64 - rem64) {
                        q64++;
                        rem64 = d64 - rem64;
                }
                *ret_count = q64;
                if (ret_error_ns)
                        *ret_error_ns = rem64;
                return 0;
        }
        if (sh >= 0) {
                if (sh > 62)
                        return -ERANGE;
                n = (__int128) ns * ((__int128) 1 << sh);
                d = (__int128) m;
        } else {
                n = (__int128) ns;
                d = (__int128) m << -sh;
        }
        q = n / d;
        rem = n - q * d;
        if (rem < 0) {
                q--;
                rem += d;
        }
        /* Now n = q·d + rem, 0 <= rem < d. Halves round up. */
        if (!unit_floors(u) && 2 * rem >= d) {
                q++;
                rem = d - rem;
        }
        if (q < INT64_MIN || q > INT64_MAX)
                return -ERANGE;
        *ret_count = (int64_t) q;
        if (ret_error_ns) {
                /* |count·P - ns| = rem·2^-sh ns, rounded up */
                if (sh > 0)
                        rem = (rem + (((__int128) 1 << sh) - 1)) >> sh;
                if (rem > INT64_MAX)
                        return -ERANGE;
                *ret_error_ns = (int64_t) rem;
        }
        return 0;
}
