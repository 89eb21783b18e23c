/* SPDX-License-Identifier: MIT */

/* calibrate/units.c with fractional periods (GPU ticks of 52.083 ns and the like): answers worked
 * out by hand, and every value of a range against an exact __int128 oracle. */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "units.h"

#define SENTINEL INT64_C(0x5a5a5a5a5a5a5a5a)

static DomainUnit plain_unit(double period_ns, unsigned wrap_bits, bool truncates) {
        return (DomainUnit) { .period_ns = period_ns, .wrap_bits = wrap_bits, .truncates = truncates };
}

/* Fractional periods, answers worked out by hand. */
static void test_fractional_known(void) {
        static const struct {
                double period_ns;
                bool truncates;
                int64_t count;
                int want_r;
                int64_t want_ns;
        } to_cases[] = {
                { 0.5, false, 3, 0, 2 },                        /* 1.5: halves up */
                { 0.5, false, -3, 0, -1 },                      /* -1.5: halves up */
                { 0.5, true, 3, 0, 2 },                         /* ceil: the first ns reading 3 */
                { 0.5, true, -3, 0, -1 },
                { 0.5, false, INT64_MAX, 0, INT64_C(4611686018427387904) },
                { 0.5, false, INT64_MIN, 0, INT64_C(-4611686018427387904) },
                { 2.5, false, INT64_C(3689348814741910322), 0, INT64_C(9223372036854775805) },
                { 2.5, false, INT64_C(3689348814741910323), -ERANGE, 0 },       /* ...807.5 rounds to 2^63 */
                { 2.5, true, INT64_C(3689348814741910323), -ERANGE, 0 },
                { 2.5, false, INT64_C(-3689348814741910323), 0, INT64_C(-9223372036854775807) },
                { 2.5, false, INT64_C(-3689348814741910324), -ERANGE, 0 },      /* -2^63 - 2 */
                { 1000.5, true, 7, 0, 7004 },                   /* 7003.5 */
                { 1000.5, false, 7, 0, 7004 },
                { 1000.5, false, -7, 0, -7003 },
        };

        for (size_t i = 0; i < sizeof(to_cases) / sizeof(to_cases[0]); i++) {
                DomainUnit u = plain_unit(to_cases[i].period_ns, 0, to_cases[i].truncates);
                int64_t got = SENTINEL;
                int r = unit_to_ns(&u, to_cases[i].count, &got);

                ok(r == to_cases[i].want_r && got == (r < 0 ? SENTINEL : to_cases[i].want_ns),
                   "to_ns(%" PRId64 " x %g ns%s) -> r=%d, %" PRId64, to_cases[i].count,
                   to_cases[i].period_ns, to_cases[i].truncates ? ", ceil" : "", r, got);
        }

        static const struct {
                double period_ns;
                bool truncates;
                int64_t ns;
                int want_r;
                int64_t want_count, want_error_ns;
        } from_cases[] = {
                { 0.5, false, 7, 0, 14, 0 },
                { 0.5, true, -7, 0, -14, 0 },
                { 0.5, false, INT64_C(4611686018427387903), 0, INT64_MAX - 1, 0 },
                { 0.5, false, INT64_C(4611686018427387904), -ERANGE, 0, 0 },    /* 2^63 */
                { 0.5, false, INT64_C(-4611686018427387904), 0, INT64_MIN, 0 },
                { 0.5, true, INT64_MIN, -ERANGE, 0, 0 },
                { 2.5, true, INT64_MAX, 0, INT64_C(3689348814741910322), 2 },
                { 2.5, false, INT64_MAX, 0, INT64_C(3689348814741910323), 1 },  /* 0.5 rounded up */
                { 2.5, false, 5, 0, 2, 0 },
                { 2.5, false, 6, 0, 2, 1 },
                { 2.5, true, 7, 0, 2, 2 },
                { 2.5, false, -6, 0, -2, 1 },
                { 2.5, true, -6, 0, -3, 2 },                    /* -7.5 <= -6 < -5 */
                { 52.083333, false, 1000000000, 0, 19200000, 7 },               /* 6.4 ns short */
                { 1e9 / 19.2e6, false, 1000000000, 0, 19200000, 1 },            /* 4.5e-8 ns, up to 1 */
                { 1e9 / 19.2e6, true, 1000000000, 0, 19199999, 53 },
        };

        for (size_t i = 0; i < sizeof(from_cases) / sizeof(from_cases[0]); i++) {
                DomainUnit u = plain_unit(from_cases[i].period_ns, 0, from_cases[i].truncates);
                int64_t count = SENTINEL, error_ns = SENTINEL;
                int r = unit_from_ns(&u, from_cases[i].ns, &count, &error_ns);
                bool want_ok = from_cases[i].want_r == 0;

                ok(r == from_cases[i].want_r && count == (want_ok ? from_cases[i].want_count : SENTINEL) &&
                   error_ns == (want_ok ? from_cases[i].want_error_ns : SENTINEL),
                   "from_ns(%" PRId64 ", %.17g ns%s) -> r=%d, %" PRId64 " +- %" PRId64, from_cases[i].ns,
                   from_cases[i].period_ns, from_cases[i].truncates ? ", floor" : "", r, count, error_ns);
        }
}

#ifdef __SIZEOF_INT128__
typedef __int128 i128;

/* An independent oracle: period = m * 2^-shift exactly, so count * period - ns scaled by 2^shift
 * is an exact 128-bit integer. Only used where shift <= 63, which all periods below satisfy. */
typedef struct Exact {
        i128 m, d;              /* period = m / d, d = 2^shift */
} Exact;

static Exact exact_period(double period_ns) {
        int e;
        double f = frexp(period_ns, &e);
        int64_t m = (int64_t) ldexp(f, 53);
        int shift = 53 - e;

        while (shift > 0 && m % 2 == 0) {
                m /= 2;
                shift--;
        }
        return (Exact) { .m = m, .d = (i128) 1 << shift };
}

static i128 floor_div(i128 a, i128 b) {         /* b > 0 */
        i128 q = a / b;

        return q * b > a ? q - 1 : q;
}

static bool i128_fits_int64(i128 v) {
        return v >= INT64_MIN && v <= INT64_MAX;
}

/* from_ns: floor/nearest exactly right, error the exact residual rounded up; -ERANGE only when
 * the exact count does not fit. */
static bool check_from_ns(const DomainUnit *u, Exact p, int64_t ns) {
        int64_t count, error_ns;
        int r = unit_from_ns(u, ns, &count, &error_ns);
        i128 n_d = (i128) ns * p.d;
        i128 want = u->truncates ? floor_div(n_d, p.m) : floor_div(2 * n_d + p.m, 2 * p.m);
        i128 n, abs_n;

        if (r < 0)
                return r == -ERANGE && !i128_fits_int64(want);
        if (count != want)
                return false;

        n = (i128) count * p.m - n_d;           /* (count * period - ns) * d */
        abs_n = n < 0 ? -n : n;
        /* error_ns is exactly the residual rounded up: an upper bound, and no looser than that. */
        return error_ns * p.d >= abs_n && (error_ns == 0 || (error_ns - 1) * p.d < abs_n);
}

/* to_ns: ceil for truncating units, nearest (halves up) otherwise. */
static bool check_to_ns(const DomainUnit *u, Exact p, int64_t count) {
        int64_t ns;
        int r = unit_to_ns(u, count, &ns);
        i128 c_m = (i128) count * p.m;
        i128 want = u->truncates ? -floor_div(-c_m, p.d) : floor_div(2 * c_m + p.d, 2 * p.d);

        if (r < 0)
                return r == -ERANGE && !i128_fits_int64(want);
        return ns == want;
}

static uint64_t lcg_next(uint64_t *state) {
        *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        return *state;
}

static void test_fractional_exact(void) {
        static const double periods_ns[] = {
                52.083333, 1e9 / 19.2e6, 0.5, 2.5, 1.5, 1e9 / 24e6, 30517.578125, 0.1, 1000.5,
                3.0 / 7.0, 1e6 / 3.0, 1e9 / 48000.0,
        };
        static const int64_t edges[] = {
                0, 1, -1, 2, 12345, 999999999, INT64_C(1) << 53, (INT64_C(1) << 53) + 1,
                INT64_C(1) << 62, (INT64_C(1) << 62) + 12345, -(INT64_C(1) << 62) - 12345,
                INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1,
        };
        uint64_t state = 42;

        for (size_t i = 0; i < sizeof(periods_ns) / sizeof(periods_ns[0]); i++)
                for (int truncates = 0; truncates <= 1; truncates++) {
                        DomainUnit u = plain_unit(periods_ns[i], 0, truncates);
                        Exact p = exact_period(periods_ns[i]);
                        unsigned bad_from = 0, bad_to = 0, bad_trip = 0, n = 0;

                        for (size_t j = 0; j < sizeof(edges) / sizeof(edges[0]) + 3000; j++, n++) {
                                int64_t v, ns, back;

                                if (j < sizeof(edges) / sizeof(edges[0]))
                                        v = edges[j];
                                else if (j % 2)         /* the whole range */
                                        v = (int64_t) lcg_next(&state);
                                else {                  /* every magnitude, 2^62 and below */
                                        unsigned shift = 1 + (lcg_next(&state) >> 33) % 62;

                                        v = (int64_t) (lcg_next(&state) >> shift);
                                }

                                bad_from += !check_from_ns(&u, p, v);
                                bad_to += !check_to_ns(&u, p, v);

                                /* A truncating unit's count starts at to_ns(count), which reads
                                 * back as count. */
                                if (truncates && periods_ns[i] >= 1.0 && unit_to_ns(&u, v, &ns) == 0)
                                        bad_trip += unit_from_ns(&u, ns, &back, NULL) != 0 || back != v;
                        }

                        ok(bad_from == 0 && bad_to == 0 && bad_trip == 0,
                           "period %.17g ns%s: %u values exact both ways "
                           "(%u from_ns, %u to_ns, %u round trips wrong)",
                           periods_ns[i], truncates ? ", truncating" : "", n, bad_from, bad_to, bad_trip);
                }
}
#else
static void test_fractional_exact(void) {
        skip("no __int128 for the exact oracle");
}
#endif

int main(void) {
        test_fractional_known();
        test_fractional_exact();
        return done_testing();
}
