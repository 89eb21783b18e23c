/* SPDX-License-Identifier: MIT */

/* basic/parse-util.c: trimming, integers (every length up to and past 19 digits, both limits
 * and one past them, signs, blanks, junk after an overflow) against a reference of strtoll(),
 * and numbers in a range. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "splitmix.h"
#include "tap.h"

static void test_trim(void) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "" }, { " \t\r", "" }, { "a", "a" }, { " a b\t", "a b" }, { "\r\n1\r", "\n1" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *s = cases[i].in;
                size_t n = strlen(s);

                parse_trim(&s, &n);
                ok(n == strlen(cases[i].out) && memcmp(s, cases[i].out, n) == 0, "trim '%s' -> '%.*s'",
                   cases[i].in, (int) n, s);
        }
}

/* What strtoll() says of s, the whole of it (blanks around allowed): 0, -EINVAL or -ERANGE. */
static int reference(const char *s, long long *ret) {
        const char *t = s;
        size_t n = strlen(s), sign;
        char *copy;
        int r = 0;

        parse_trim(&t, &n);
        /* An optional sign and digits, nothing else: strtoll() would take blanks after the sign. */
        sign = n > 0 && (t[0] == '-' || t[0] == '+');
        if (n == sign || strspn(t + sign, "0123456789") < n - sign)
                return -EINVAL;
        copy = strndup(t, n);
        if (!copy)
                abort();
        errno = 0;
        *ret = strtoll(copy, NULL, 10);
        if (errno == ERANGE)
                r = -ERANGE;
        free(copy);
        return r;
}

static void check(const char *s) {
        long long want = 0;
        int64_t got = 0;
        int r = parse_int64(s, strlen(s), &got), w = reference(s, &want);

        ok(r == w && (r < 0 || got == want), "'%s': %d %lld (strtoll: %d %lld)", s, r, (long long) got, w,
           want);
}

static void test_int64(void) {
        static const char *const cases[] = {
                "0", "-0", "+7", "42", " -42\t", "\r12\r", "", "-", "+", " - 1", "1 2", "12x", "x12", "--1",
                "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                "99999999999999999999", "99999999999999999999x", "-99999999999999999999", "999999999999999999",
                "000000000000000000000000000000042", "-000000000000000000009223372036854775808",
                "922337203685477580", "9223372036854775800", "92233720368547758070",
        };
        uint64_t seed = 13;
        char buf[48];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check(cases[i]);

        /* Every length from 1 to 21 digits, both signs, random digits: 2 x 21 x 20 values. */
        for (int len = 1; len <= 21; len++)
                for (int k = 0; k < 20; k++) {
                        size_t at = 0;

                        if (k % 2)
                                buf[at++] = '-';
                        for (int d = 0; d < len; d++)
                                buf[at++] = (char) ('0' + splitmix64_next(&seed) % 10);
                        buf[at] = '\0';
                        check(buf);
                }
}

static void test_double(void) {
        double v = 0;

        ok(parse_double("2.5", 1, 10, &v) == 0 && v == 2.5, "2.5 in [1, 10]");
        ok(parse_double("10", 1, 10, &v) == 0 && v == 10, "the upper limit is in the range");
        ok(parse_double("0.5", 1, 10, &v) == -EINVAL, "below the range: -EINVAL");
        ok(parse_double("nan", 0, 10, &v) == -EINVAL && parse_double("inf", 0, INFINITY, &v) == -EINVAL,
           "not finite: -EINVAL");
        ok(parse_double("1x", 0, 10, &v) == -EINVAL && parse_double("", 0, 10, &v) == -EINVAL,
           "not all of it a number: -EINVAL");
}

static void test_uint64_hex(void) {
        uint64_t v = 7;

        ok(parse_uint64_hex("27262979", UINT32_MAX, &v) == 0 && v == 27262979, "decimal");
        ok(parse_uint64_hex("0x1a00003", UINT32_MAX, &v) == 0 && v == 0x1a00003, "hexadecimal after 0x");
        ok(parse_uint64_hex("0XABCdef", UINT32_MAX, &v) == 0 && v == 0xabcdef, "either case");
        ok(parse_uint64_hex("0", 0, &v) == 0 && v == 0, "0 in [0, 0]");
        ok(parse_uint64_hex("4294967295", UINT32_MAX, &v) == 0 && v == UINT32_MAX, "the upper limit");
        ok(parse_uint64_hex("4294967296", UINT32_MAX, &v) == -ERANGE, "above it: -ERANGE");
        ok(parse_uint64_hex("18446744073709551615", UINT64_MAX, &v) == 0 && v == UINT64_MAX, "UINT64_MAX");
        ok(parse_uint64_hex("18446744073709551616", UINT64_MAX, &v) == -ERANGE &&
           parse_uint64_hex("0x10000000000000000", UINT64_MAX, &v) == -ERANGE, "past 64 bits: -ERANGE");
        v = 7;
        ok(parse_uint64_hex("-1", UINT64_MAX, &v) == -EINVAL && parse_uint64_hex("+1", 9, &v) == -EINVAL &&
           parse_uint64_hex(" 1", 9, &v) == -EINVAL && parse_uint64_hex("1 ", 9, &v) == -EINVAL,
           "no sign, no spaces (strtoull() takes \"-1\" for UINT64_MAX)");
        ok(parse_uint64_hex("", 9, &v) == -EINVAL && parse_uint64_hex("0x", 9, &v) == -EINVAL &&
           parse_uint64_hex("12a", UINT64_MAX, &v) == -EINVAL && parse_uint64_hex("0x1g", UINT64_MAX, &v) == -EINVAL &&
           parse_uint64_hex("99999999999999999999x", UINT64_MAX, &v) == -EINVAL, "not all of it a number: -EINVAL");
        is_int(v, 7, "*ret untouched on failure");
}

int main(void) {
        test_trim();
        test_int64();
        test_uint64_hex();
        test_double();
        return done_testing();
}
