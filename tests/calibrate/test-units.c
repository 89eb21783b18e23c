/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "units.h"

#define SENTINEL INT64_C(0x5a5a5a5a5a5a5a5a)
#define US_WRAP  (INT64_C(4294967296) * 1000)   /* the X11 µs encoding repeats every 2^32 ms */
#define M32      (INT64_C(1) << 32)
#define M36      (INT64_C(1) << 36)

static DomainUnit plain_unit(double period_ns, unsigned wrap_bits, bool truncates) {
        return (DomainUnit) { .period_ns = period_ns, .wrap_bits = wrap_bits, .truncates = truncates };
}

static void test_constants(void) {
        ok(unit_validate(&UNIT_NS) == 0 && UNIT_NS.period_ns == 1.0 && UNIT_NS.wrap_bits == 0 &&
           !UNIT_NS.truncates && UNIT_NS.encoding == UNIT_ENCODING_PLAIN, "UNIT_NS is plain ns");
        ok(unit_validate(&UNIT_MS_X11) == 0 && UNIT_MS_X11.period_ns == 1e6 && UNIT_MS_X11.wrap_bits == 32 &&
           UNIT_MS_X11.truncates && UNIT_MS_X11.encoding == UNIT_ENCODING_PLAIN, "UNIT_MS_X11: X ms");
        ok(unit_validate(&UNIT_US_X11) == 0 && UNIT_US_X11.period_ns == 1e3 && UNIT_US_X11.wrap_bits == 0 &&
           UNIT_US_X11.truncates && UNIT_US_X11.encoding == UNIT_ENCODING_X11_US, "UNIT_US_X11: X µs");

        static const struct {
                DomainUnit u;
                int want;
                const char *name;
        } cases[] = {
                { { 1.0, 0, false, UNIT_ENCODING_PLAIN }, 0, "1 ns" },
                { { 52.083333, 36, false, UNIT_ENCODING_PLAIN }, 0, "GPU ticks, 36 bits" },
                { { 1.0, 64, false, UNIT_ENCODING_PLAIN }, 0, "64 bits" },
                { { 0.0, 0, false, UNIT_ENCODING_PLAIN }, -EINVAL, "period 0" },
                { { -1.0, 0, false, UNIT_ENCODING_PLAIN }, -EINVAL, "negative period" },
                { { NAN, 0, false, UNIT_ENCODING_PLAIN }, -EINVAL, "NaN period" },
                { { HUGE_VAL, 0, false, UNIT_ENCODING_PLAIN }, -EINVAL, "infinite period" },
                { { 1.0, 65, false, UNIT_ENCODING_PLAIN }, -EINVAL, "65 wrap bits" },
                { { 1.0, 0, false, (UnitEncoding) 7 }, -EINVAL, "unknown encoding" },
                { { 1000.0, 32, true, UNIT_ENCODING_X11_US }, -EINVAL, "X11 µs with a second wrap" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                is_int(unit_validate(&cases[i].u), cases[i].want, cases[i].name);
        is_int(unit_validate(NULL), -EINVAL, "NULL unit");
}

static const struct {
        unsigned bits;
        int64_t raw, hint;
        int want_r;
        int64_t want;
} unwrap_cases[] = {
        { 32, 5, 10, 0, 5 },
        { 32, M32 - 1, M32 + 3, 0, M32 - 1 },                   /* backwards across the wrap */
        { 32, 3, M32 - 2, 0, M32 + 3 },                         /* forwards across the wrap */
        { 32, M32 - 1, 0, 0, -1 },
        { 32, 7, 9 * M32 + 100, 0, 9 * M32 + 7 },
        { 32, M32 / 2, 0, 0, M32 / 2 },                         /* tie: the later one */
        { 32, 0, M32 / 2, 0, M32 },                             /* tie: the later one */
        { 32, M32, 0, -ERANGE, 0 },                             /* raw must be < 2^32 */
        { 32, -1, 0, -ERANGE, 0 },
        { 36, M36 - 1, M36 + 7, 0, M36 - 1 },
        { 36, 7, M36 - 1, 0, M36 + 7 },
        { 36, 7, 5 * M36 + 3, 0, 5 * M36 + 7 },
        { 36, M36 - 2, 5 * M36 + 1, 0, 5 * M36 - 2 },
        { 36, M36 - 1, -3, 0, -1 },
        { 36, M32 + 5, 0, 0, M32 + 5 },                         /* above 32 bits, no wrap */
        { 36, M36, 0, -ERANGE, 0 },
        { 1, 1, 0, 0, 1 },                                      /* every odd value is a tie */
        { 1, 0, 5, 0, 6 },
        { 1, 1, 5, 0, 5 },
        { 63, INT64_MAX, 0, 0, -1 },
        { 63, 0, INT64_MAX, -ERANGE, 0 },                       /* nearest is 2^63 */
        { 63, 0, INT64_MIN + 5, 0, INT64_MIN },
        { 0, -12345, 99, 0, -12345 },                           /* no wrap: raw as is */
        { 64, INT64_MIN, 99, 0, INT64_MIN },
};

static void test_unwrap_wrap(void) {
        for (size_t i = 0; i < sizeof(unwrap_cases) / sizeof(unwrap_cases[0]); i++) {
                DomainUnit u = plain_unit(1.0, unwrap_cases[i].bits, false);
                int64_t got = SENTINEL, wrapped;
                int r;

                r = unit_unwrap(&u, unwrap_cases[i].raw, unwrap_cases[i].hint, &got);
                ok(r == unwrap_cases[i].want_r && got == (r < 0 ? SENTINEL : unwrap_cases[i].want),
                   "unwrap %" PRId64 " at %u bits near %" PRId64 " -> r=%d, %" PRId64, unwrap_cases[i].raw,
                   unwrap_cases[i].bits, unwrap_cases[i].hint, r, got);
                if (r < 0)
                        continue;
                ok(unit_wrap(&u, got, &wrapped) == 0 && wrapped == unwrap_cases[i].raw,
                   "wrap gives the raw value back (%" PRId64 ")", wrapped);
        }

        /* X server ms: wrapping at 32 bits, values are unwrapped counts of ms. */
        int64_t got = SENTINEL;
        ok(unit_unwrap(&UNIT_MS_X11, 10, M32 - 5, &got) == 0 && got == M32 + 10,
           "X ms forwards over the wrap");
        ok(unit_wrap(&UNIT_MS_X11, M32 + 10, &got) == 0 && got == 10, "X ms wrap");
        ok(unit_wrap(&UNIT_MS_X11, -1, &got) == 0 && got == M32 - 1,
           "negative count wraps to the positive remainder");
        DomainUnit u36 = plain_unit(1.0, 36, false);
        ok(unit_wrap(&u36, -M36 - 3, &got) == 0 && got == M36 - 3, "36 bits, -2^36 - 3");
        ok(unit_wrap(&UNIT_NS, INT64_MIN, &got) == 0 && got == INT64_MIN, "no wrap: count as is");

        /* High-precision X time: the encoding carries the wrap. */
        ok(unit_unwrap(&UNIT_US_X11, 1234, US_WRAP - 10, &got) == 0 && got == US_WRAP + 1234,
           "X µs forwards over the wrap");
        ok(unit_unwrap(&UNIT_US_X11, US_WRAP - 1, US_WRAP + 10, &got) == 0 && got == US_WRAP - 1,
           "X µs backwards over the wrap");
        got = SENTINEL;
        ok(unit_unwrap(&UNIT_US_X11, US_WRAP + 1234, 0, &got) == 0 && got == 1234,
           "X µs ms part >= 2^32: unreduced, the same X time as its reduced form");
        got = SENTINEL;
        ok(unit_unwrap(&UNIT_US_X11, -1, 0, &got) == -ERANGE && got == SENTINEL, "X µs negative raw");
        ok(unit_wrap(&UNIT_US_X11, 3 * US_WRAP + 4294967295999, &got) == 0 && got == 4294967295999,
           "X µs wrap of the last µs before a wrap");
        ok(unit_wrap(&UNIT_US_X11, 2 * US_WRAP + 1234567, &got) == 0 && got == 1234567,
           "X µs wrap after 2 wraps");
        got = SENTINEL;
        ok(unit_wrap(&UNIT_US_X11, -1, &got) == 0 && got == US_WRAP - 1,
           "X µs wrap of a negative count: modulo the wrap (a round trip of x11 -> monotonic before 0)");

        is_int(unit_unwrap(NULL, 0, 0, &got), -EINVAL, "unwrap with NULL unit");
        is_int(unit_unwrap(&UNIT_NS, 0, 0, NULL), -EINVAL, "unwrap with NULL ret");
        is_int(unit_wrap(&UNIT_NS, 0, NULL), -EINVAL, "wrap with NULL ret");
}

/* Counts -> ns and back, whole-ns periods: exact, -ERANGE at the int64 edges. */
static void test_integer_periods(void) {
        static const DomainUnit ms_round = { 1e6, 0, false, UNIT_ENCODING_PLAIN };
        static const struct {
                const DomainUnit *u;
                int64_t count;
                int want_r;
                int64_t want_ns;
        } to_cases[] = {
                { &UNIT_NS, INT64_MAX, 0, INT64_MAX },
                { &UNIT_NS, INT64_MIN, 0, INT64_MIN },
                { &UNIT_MS_X11, INT64_C(9223372036854), 0, INT64_C(9223372036854000000) },
                { &UNIT_MS_X11, INT64_C(9223372036855), -ERANGE, 0 },
                { &UNIT_MS_X11, INT64_C(-9223372036854), 0, INT64_C(-9223372036854000000) },
                { &UNIT_MS_X11, INT64_C(-9223372036855), -ERANGE, 0 },
                { &UNIT_US_X11, INT64_C(9223372036854775), 0, INT64_C(9223372036854775000) },
                { &UNIT_US_X11, INT64_C(9223372036854776), -ERANGE, 0 },
        };

        for (size_t i = 0; i < sizeof(to_cases) / sizeof(to_cases[0]); i++) {
                int64_t got = SENTINEL;
                int r = unit_to_ns(to_cases[i].u, to_cases[i].count, &got);

                ok(r == to_cases[i].want_r && got == (r < 0 ? SENTINEL : to_cases[i].want_ns),
                   "to_ns(%" PRId64 " x %g ns) -> r=%d, %" PRId64, to_cases[i].count,
                   to_cases[i].u->period_ns, r, got);
        }

        /* Truncating units floor (what the clock would have read); the others round, halves up. */
        static const struct {
                const DomainUnit *u;
                int64_t ns;
                int64_t want_count, want_error_ns;
        } from_cases[] = {
                { &UNIT_MS_X11, 0, 0, 0 },
                { &UNIT_MS_X11, 1999999, 1, 999999 },
                { &UNIT_MS_X11, 2000000, 2, 0 },
                { &UNIT_MS_X11, -1, -1, 999999 },
                { &UNIT_MS_X11, -1000000, -1, 0 },
                { &UNIT_MS_X11, INT64_MIN, INT64_C(-9223372036855), 224192 },
                { &UNIT_MS_X11, INT64_MAX, INT64_C(9223372036854), 775807 },
                { &ms_round, 1499999, 1, 499999 },
                { &ms_round, 1500000, 2, 500000 },
                { &ms_round, -1500000, -1, 500000 },
                { &ms_round, -1500001, -2, 499999 },
                { &ms_round, INT64_MIN, INT64_C(-9223372036855), 224192 },
                { &ms_round, INT64_MAX, INT64_C(9223372036855), 224193 },
                { &UNIT_US_X11, 1500, 1, 500 },
                { &UNIT_NS, INT64_MIN, INT64_MIN, 0 },
                { &UNIT_NS, INT64_MAX, INT64_MAX, 0 },
        };

        for (size_t i = 0; i < sizeof(from_cases) / sizeof(from_cases[0]); i++) {
                int64_t count = SENTINEL, error_ns = SENTINEL;
                int r = unit_from_ns(from_cases[i].u, from_cases[i].ns, &count, &error_ns);

                ok(r == 0 && count == from_cases[i].want_count && error_ns == from_cases[i].want_error_ns,
                   "from_ns(%" PRId64 ", %g ns%s) -> r=%d, %" PRId64 " +- %" PRId64, from_cases[i].ns,
                   from_cases[i].u->period_ns, from_cases[i].u->truncates ? ", floor" : "", r, count,
                   error_ns);
        }

        int64_t count = SENTINEL;
        ok(unit_from_ns(&UNIT_MS_X11, 2500000, &count, NULL) == 0 && count == 2, "ret_error_ns is optional");
        is_int(unit_from_ns(&UNIT_NS, 0, NULL, NULL), -EINVAL, "from_ns with NULL ret_count");
        is_int(unit_to_ns(&UNIT_NS, 0, NULL), -EINVAL, "to_ns with NULL ret");
        is_int(unit_to_ns(NULL, 0, &count), -EINVAL, "to_ns with NULL unit");
}

int main(void) {
        test_constants();
        test_unwrap_wrap();
        test_integer_periods();
        return done_testing();
}
