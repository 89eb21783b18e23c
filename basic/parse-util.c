/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

void parse_trim(const char **s, size_t *n) {
        while (*n > 0 && strchr(" \t\r", (*s)[0]) && (*s)[0]) {
                (*s)++;
                (*n)--;
        }
        while (*n > 0 && strchr(" \t\r", (*s)[*n - 1]) && (*s)[*n - 1])
                (*n)--;
}

int parse_int64(const char *s, size_t n, int64_t *ret) {
        uint64_t limit, u = 0;
        bool negative;
        size_t i = 0;

        parse_trim(&s, &n);
        negative = n > 0 && s[0] == '-';
        i = n > 0 && (s[0] == '-' || s[0] == '+');
        if (i == n)
                return -EINVAL;
        limit = negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
        for (; i < n; i++) {
                unsigned d = (unsigned) (unsigned char) s[i] - '0';

                if (d > 9)
                        return -EINVAL;
                if (u > (limit - d) / 10) {
                        /* Still tell "12x" (not a number) from "99999999999999999999". */
                        for (i++; i < n; i++)
                                if ((unsigned) (unsigned char) s[i] - '0' > 9)
                                        return -EINVAL;
                        return -ERANGE;
                }
                u = u * 10 + d;
        }
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
