/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdint.h>

#include "tap.h"
#include "xtime.h"

#define SENTINEL INT64_C(0x5a5a5a5a5a5a5a5a)
#define MS_WRAP  (INT64_C(1) << 32)             /* 4294967296 ms */
#define US_WRAP  (MS_WRAP * 1000)               /* 4294967296000 µs */

/* Encodings worked out by hand from ((us / 1000) & 0xffffffff) * 1000 + us % 1000. */
static const struct {
        int64_t us;
        int want_r;
        uint64_t want;
} encode_cases[] = {
        { 0,                             0, 0 },
        { 999,                           0, 999 },
        { 1000,                          0, 1000 },
        { 1234567,                       0, 1234567 },
        { INT64_C(4294967295999),        0, UINT64_C(4294967295999) },   /* last µs before the wrap */
        { INT64_C(4294967296000),        0, 0 },                         /* ms part 2^32 -> 0 */
        { INT64_C(4294967296001),        0, 1 },
        { INT64_C(4294968530567),        0, UINT64_C(1234567) },         /* 2^32 ms + 1234.567 ms */
        { INT64_C(12884901888042),       0, UINT64_C(42) },              /* 3 wraps + 42 µs */
        { INT64_C(12884901887999),       0, UINT64_C(4294967295999) },   /* 3 wraps - 1 µs */
        { INT64_MAX,                     0, UINT64_C(2783138807807) },   /* INT64_MAX mod 2^32 ms */
        { -1,                            -ERANGE, 0 },
        { INT64_MIN,                     -ERANGE, 0 },
};

static void test_encode(void) {
        for (size_t i = 0; i < sizeof(encode_cases) / sizeof(encode_cases[0]); i++) {
                uint64_t got = UINT64_C(0xdeadbeef);
                int r = xtime_encode_us(encode_cases[i].us, &got);

                ok(r == encode_cases[i].want_r &&
                   got == (r < 0 ? UINT64_C(0xdeadbeef) : encode_cases[i].want),
                   "encode %" PRId64 " µs -> r=%d, %" PRIu64, encode_cases[i].us, r, got);
        }

        /* The encoding is us mod (2^32 * 1000): check that identity over a spread of values. */
        unsigned bad = 0;
        for (int64_t us = 0; us < INT64_MAX / 3; us = us * 3 + 7777) {
                uint64_t got;

                if (xtime_encode_us(us, &got) < 0 || got != (uint64_t) (us % US_WRAP))
                        bad++;
        }
        ok(bad == 0, "encoding is us mod 2^32 ms for a geometric spread (%u wrong)", bad);
        is_int(xtime_encode_us(1, NULL), -EINVAL, "encode with NULL ret");
}

static const struct {
        uint64_t encoded;
        int64_t hint_us;
        int want_r;
        int64_t want_us;
} decode_cases[] = {
        { 1234567, 1234000, 0, 1234567 },
        { 1234567, 0, 0, 1234567 },
        /* Across the wrap forwards: the hint is just before, the value just after. */
        { 5, US_WRAP - 10, 0, US_WRAP + 5 },
        { 1000, 3 * US_WRAP - 1, 0, 3 * US_WRAP + 1000 },
        /* Backwards: the hint is just after the wrap, the value from just before. */
        { US_WRAP - 1, US_WRAP + 5, 0, US_WRAP - 1 },
        { US_WRAP - 1, 0, 0, -1 },
        /* Half a wrap away is a tie: the later occurrence. */
        { US_WRAP / 2, 0, 0, US_WRAP / 2 },
        { 0, US_WRAP / 2, 0, US_WRAP },
        { US_WRAP / 2 + 1, 0, 0, -(US_WRAP / 2) + 1 },
        /* Hints at the edges of int64 must not overflow on the way. */
        { UINT64_C(2783138807807), INT64_MAX, 0, INT64_MAX },
        { UINT64_C(2783138807806), INT64_MAX, 0, INT64_MAX - 1 },
        { UINT64_C(2783138807808), INT64_MAX, -ERANGE, 0 },     /* INT64_MAX + 1 */
        { UINT64_C(1511828488192), INT64_MIN, 0, INT64_MIN },   /* INT64_MIN mod 2^32 ms */
        { UINT64_C(1511828489192), INT64_MIN, 0, INT64_MIN + 1000 },
        { 0, INT64_MIN, -ERANGE, 0 },                           /* nearest is below INT64_MIN */
        /* ms part 2^32 does not fit. */
        { UINT64_C(4294967296000), 0, -EINVAL, 0 },
        { UINT64_MAX, 0, -EINVAL, 0 },
};

static void test_decode(void) {
        for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
                int64_t got = SENTINEL;
                int r = xtime_decode_us(decode_cases[i].encoded, decode_cases[i].hint_us, &got);

                ok(r == decode_cases[i].want_r && got == (r < 0 ? SENTINEL : decode_cases[i].want_us),
                   "decode %" PRIu64 " near %" PRId64 " -> r=%d, %" PRId64, decode_cases[i].encoded,
                   decode_cases[i].hint_us, r, got);
        }

        is_int(xtime_decode_us(0, 0, NULL), -EINVAL, "decode with NULL ret");
}

/* decode(encode(us)) == us for any hint within half a wrap of us, either side. */
static void test_round_trip(void) {
        static const int64_t values_us[] = {
                0, 1, 999, 1000, US_WRAP - 1, US_WRAP, US_WRAP + 1, 5 * US_WRAP - 500,
                INT64_C(1700000000123456), INT64_MAX - US_WRAP,
        };
        static const int64_t jitters_us[] = {
                0, 1, -1, 1000, -1000, US_WRAP / 2 - 1, -(US_WRAP / 2) + 1, US_WRAP / 3, -(US_WRAP / 3),
        };
        unsigned bad = 0, n = 0;

        for (size_t i = 0; i < sizeof(values_us) / sizeof(values_us[0]); i++)
                for (size_t j = 0; j < sizeof(jitters_us) / sizeof(jitters_us[0]); j++) {
                        uint64_t encoded;
                        int64_t got;

                        n++;
                        if (xtime_encode_us(values_us[i], &encoded) < 0 ||
                            xtime_decode_us(encoded, values_us[i] + jitters_us[j], &got) < 0 ||
                            got != values_us[i]) {
                                diag("round trip of %" PRId64 " with jitter %" PRId64 " failed",
                                     values_us[i], jitters_us[j]);
                                bad++;
                        }
                }

        ok(bad == 0, "%u encode/decode round trips (%u wrong)", n, bad);
}

static const struct {
        uint32_t x_ms;
        int64_t hint_ms;
        int64_t want_ms;
} unwrap_cases[] = {
        { 5, 10, 5 },
        { 0xffffffff, MS_WRAP + 3, MS_WRAP - 1 },               /* backwards across the wrap */
        { 3, MS_WRAP - 2, MS_WRAP + 3 },                        /* forwards across the wrap */
        { 0xffffffff, 0, -1 },
        { 7, 10 * MS_WRAP + 100, 10 * MS_WRAP + 7 },
        { 0x80000000, 0, 0x80000000 },                          /* tie: the later one */
        { 0, 0x80000000, MS_WRAP },                             /* tie: the later one */
        { 0x80000001, 0, -INT64_C(0x7fffffff) },
        /* The nearest occurrence would overflow: the neighbour on the other side instead. */
        { 0, INT64_MAX, INT64_MAX - 0xffffffff },
        { 0xffffffff, INT64_MIN, INT64_MIN + 0xffffffff },
        { 0xffffffff, INT64_MAX, INT64_MAX },
        { 0, INT64_MIN, INT64_MIN },
};

static void test_unwrap_ms(void) {
        for (size_t i = 0; i < sizeof(unwrap_cases) / sizeof(unwrap_cases[0]); i++) {
                int64_t got = xtime_unwrap_ms(unwrap_cases[i].x_ms, unwrap_cases[i].hint_ms);

                ok(got == unwrap_cases[i].want_ms, "unwrap %" PRIu32 " ms near %" PRId64 " -> %" PRId64
                   " (want %" PRId64 ")", unwrap_cases[i].x_ms, unwrap_cases[i].hint_ms, got,
                   unwrap_cases[i].want_ms);
        }
}

int main(void) {
        test_encode();
        test_decode();
        test_round_trip();
        test_unwrap_ms();
        return done_testing();
}
