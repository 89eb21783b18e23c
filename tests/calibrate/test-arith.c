/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "arith.h"
#include "tap.h"

#define SENTINEL INT64_C(0x5a5a5a5a5a5a5a5a)

enum { OP_ADD, OP_SUB, OP_MUL };

static const struct {
        int op;
        int64_t a, b;
        int want_r;
        int64_t want;
} int_cases[] = {
        { OP_ADD, 1, 2, 0, 3 },
        { OP_ADD, INT64_MAX, 0, 0, INT64_MAX },
        { OP_ADD, INT64_MAX, 1, -ERANGE, 0 },
        { OP_ADD, INT64_MAX - 5, 5, 0, INT64_MAX },
        { OP_ADD, INT64_MAX - 5, 6, -ERANGE, 0 },
        { OP_ADD, INT64_MIN, -1, -ERANGE, 0 },
        { OP_ADD, INT64_MIN, INT64_MAX, 0, -1 },
        { OP_ADD, INT64_MIN, INT64_MIN, -ERANGE, 0 },
        { OP_SUB, 0, INT64_MAX, 0, -INT64_MAX },
        { OP_SUB, 0, INT64_MIN, -ERANGE, 0 },
        { OP_SUB, -1, INT64_MIN, 0, INT64_MAX },
        { OP_SUB, INT64_MIN, 1, -ERANGE, 0 },
        { OP_SUB, INT64_MAX, -1, -ERANGE, 0 },
        { OP_SUB, INT64_MAX, INT64_MAX, 0, 0 },
        { OP_MUL, INT64_MIN, -1, -ERANGE, 0 },
        { OP_MUL, INT64_MIN, 1, 0, INT64_MIN },
        { OP_MUL, INT64_MIN + 1, -1, 0, INT64_MAX },
        { OP_MUL, INT64_MAX, 2, -ERANGE, 0 },
        { OP_MUL, INT64_C(3037000499), INT64_C(3037000499), 0, INT64_C(9223372030926249001) },
        { OP_MUL, INT64_C(3037000500), INT64_C(3037000500), -ERANGE, 0 },
        { OP_MUL, INT64_C(9223372036854), INT64_C(1000000), 0, INT64_C(9223372036854000000) },
        { OP_MUL, INT64_C(9223372036855), INT64_C(1000000), -ERANGE, 0 },
        { OP_MUL, INT64_C(-9223372036854), INT64_C(1000000), 0, INT64_C(-9223372036854000000) },
        { OP_MUL, INT64_C(-9223372036855), INT64_C(1000000), -ERANGE, 0 },
        { OP_MUL, 0, INT64_MIN, 0, 0 },
};

static void test_int(void) {
        static const char *const op_names[] = { "+", "-", "*" };

        for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
                int64_t got = SENTINEL;
                int r;

                switch (int_cases[i].op) {
                case OP_ADD:
                        r = arith_add(int_cases[i].a, int_cases[i].b, &got);
                        break;
                case OP_SUB:
                        r = arith_sub(int_cases[i].a, int_cases[i].b, &got);
                        break;
                default:
                        r = arith_mul(int_cases[i].a, int_cases[i].b, &got);
                        break;
                }

                ok(r == int_cases[i].want_r &&
                   got == (int_cases[i].want_r < 0 ? SENTINEL : int_cases[i].want),
                   "%" PRId64 " %s %" PRId64 " -> r=%d, %" PRId64, int_cases[i].a, op_names[int_cases[i].op],
                   int_cases[i].b, r, got);
        }
}

/* 2^63 - 1024 is the first double we refuse; 2^63 - 2048 the last we accept (it is exact). */
static const struct {
        double v;
        int want_r;
        int64_t want_round, want_ceil;
} double_cases[] = {
        { 0.0,                   0, 0, 0 },
        { -0.0,                  0, 0, 0 },
        { 0.4,                   0, 0, 1 },
        { 0.5,                   0, 1, 1 },
        { -0.5,                  0, -1, 0 },
        { 1.5,                   0, 2, 2 },
        { -1.5,                  0, -2, -1 },
        { -0.9,                  0, -1, 0 },
        { 2.0,                   0, 2, 2 },
        { 1e15 + 0.25,           0, INT64_C(1000000000000000), INT64_C(1000000000000001) },
        { 0x1p62,                0, INT64_C(4611686018427387904), INT64_C(4611686018427387904) },
        { 0x1p63 - 2048.0,       0, INT64_C(9223372036854773760), INT64_C(9223372036854773760) },
        { -(0x1p63 - 2048.0),    0, INT64_C(-9223372036854773760), INT64_C(-9223372036854773760) },
        { 0x1p63 - 1024.0,       -ERANGE, 0, 0 },
        { -(0x1p63 - 1024.0),    -ERANGE, 0, 0 },
        { 0x1p63,                -ERANGE, 0, 0 },
        { -0x1p63,               -ERANGE, 0, 0 },
        { 1e300,                 -ERANGE, 0, 0 },
        { -1e300,                -ERANGE, 0, 0 },
        { HUGE_VAL,              -ERANGE, 0, 0 },
        { -HUGE_VAL,             -ERANGE, 0, 0 },
        { NAN,                   -ERANGE, 0, 0 },
};

static void test_double(void) {
        for (size_t i = 0; i < sizeof(double_cases) / sizeof(double_cases[0]); i++) {
                int64_t got_round = SENTINEL, got_ceil = SENTINEL;
                int r_round, r_ceil;
                int want_r = double_cases[i].want_r;

                r_round = arith_from_double(double_cases[i].v, &got_round);
                r_ceil = arith_ceil_from_double(double_cases[i].v, &got_ceil);

                ok(r_round == want_r && got_round == (want_r < 0 ? SENTINEL : double_cases[i].want_round),
                   "from_double(%a) -> r=%d, %" PRId64, double_cases[i].v, r_round, got_round);
                ok(r_ceil == want_r && got_ceil == (want_r < 0 ? SENTINEL : double_cases[i].want_ceil),
                   "ceil_from_double(%a) -> r=%d, %" PRId64, double_cases[i].v, r_ceil, got_ceil);
        }

}

/* Every double from 2^63 - 10^6 to just past 2^63, both signs: accepted exactly when its
 * magnitude is below 2^63 - 1024, and then converted without change. */
static void test_double_edges(void) {
        unsigned bad = 0, n = 0;

        for (int sign = -1; sign <= 1; sign += 2)
                for (double v = sign * (0x1p63 - 1e6); fabs(v) <= 0x1p63 + 8192.0;
                     v = nextafter(v, sign * HUGE_VAL), n++) {
                        bool want_ok = fabs(v) < 0x1p63 - 1024.0;
                        int64_t got;
                        int r;

                        r = arith_from_double(v, &got);
                        if (want_ok ? r != 0 || (double) got != v : r != -ERANGE)
                                bad++;
                }

        ok(n > 1900 && bad == 0, "%u doubles near +-2^63 convert or fail as expected (%u wrong)", n, bad);
}

int main(void) {
        test_int();
        test_double();
        test_double_edges();
        return done_testing();
}
