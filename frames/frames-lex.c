/* SPDX-License-Identifier: MIT */

/* What every parser of a line needs (frames-internal.h): an error that names its line, trimming,
 * integers read strictly. */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "frames-internal.h"

int frames_fail(FramesError *ret_error, unsigned line, const char *fmt, ...) {
        va_list ap;

        ret_error->line = line;
        va_start(ap, fmt);
        vsnprintf(ret_error->message, sizeof(ret_error->message), fmt, ap);
        va_end(ap);
        return -EBADMSG;
}

void frames_trim(const char **s, size_t *n) {
        while (*n > 0 && ((*s)[0] == ' ' || (*s)[0] == '\t' || (*s)[0] == '\r')) {
                (*s)++;
                (*n)--;
        }
        while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
                (*n)--;
}

int frames_parse_int64(const char *s, size_t n, int64_t *ret) {
        bool negative = n > 0 && s[0] == '-';
        size_t i = n > 0 && (s[0] == '-' || s[0] == '+');
        uint64_t limit = negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX, u = 0;
        bool range = false;

        if (i == n)
                return -EINVAL;
        for (size_t start = i; i < n; i++) {
                unsigned d = (unsigned) (unsigned char) s[i] - '0';

                if (d > 9)
                        return -EINVAL;
                /* 18 digits cannot overflow: check (and divide) only past them. */
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
