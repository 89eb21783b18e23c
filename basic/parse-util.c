/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

void parse_trim(const char **s, size_t *n) {
        while (*n > 0 && is_blank((*s)[0])) {
                (*s)++;
                (*n)--;
        }
        while (*n > 0 && is_blank((*s)[*n - 1]))
                (*n)--;
}

int parse_int64(const char *s, size_t n, int64_t *ret) {
        uint64_t limit, u = 0;
        bool negative, range = false;
        size_t i;

        parse_trim(&s, &n);
        negative = n > 0 && s[0] == '-';
        i = n > 0 && (s[0] == '-' || s[0] == '+');
        if (i == n)
                return -EINVAL;
        limit = negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
        for (size_t start = i; i < n; i++) {
                unsigned d = (unsigned) (unsigned char) s[i] - '0';

                if (d > 9)
                        return -EINVAL;
                /* 18 digits cannot overflow: check (and divide) only past them, as a frame dump's
                 * millions of numbers are read. */
                if (i - start < 18)
                        u = u * 10 + d;
                else if (u > (limit - d) / 10)
                        range = true;   /* go on: "99999999999999999999x" is not a number */
                else
                        u = u * 10 + d;
        }
        if (range)
                return -ERANGE;
        *ret = negative ? (int64_t) (0 - u) : (int64_t) u;
        return 0;
}

int parse_uint64_hex(const char *s, uint64_t max, uint64_t *ret) {
        bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        unsigned base = hex ? 16 : 10;
        const char *p = hex ? s + 2 : s;
        uint64_t u = 0;
        bool range = false;

        if (*p == '\0')
                return -EINVAL;
        for (; *p; p++) {
                char c = *p;
                unsigned d = c >= '0' && c <= '9' ? (unsigned) (c - '0') :
                             hex && c >= 'a' && c <= 'f' ? (unsigned) (c - 'a' + 10) :
                             hex && c >= 'A' && c <= 'F' ? (unsigned) (c - 'A' + 10) : 99;

                if (d >= base)
                        return -EINVAL;
                /* Go on past an overflow: "99999999999999999999x" is not a number. */
                if (u > (UINT64_MAX - d) / base)
                        range = true;
                else
                        u = u * base + d;
        }
        if (range || u > max)
                return -ERANGE;
        *ret = u;
        return 0;
}

int parse_double(const char *s, double min, double max, double *ret) {
        char *end = NULL;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}
