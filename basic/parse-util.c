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
