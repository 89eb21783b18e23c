/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"

void cli_out_init(CliOut *o, int fd) {
        o->fd = fd;
        o->error = 0;
        o->n = 0;
}

int cli_out_flush(CliOut *o) {
        for (size_t done = 0; done < o->n && o->error == 0;) {
                ssize_t k = write(o->fd, o->buf + done, o->n - done);

                if (k < 0 && errno != EINTR)
                        o->error = -errno;
                else if (k > 0)
                        done += (size_t) k;
        }
        o->n = 0;
        return o->error;
}

void cli_out_write(CliOut *o, const char *s, size_t n) {
        while (n > 0) {
                size_t k = sizeof(o->buf) - o->n < n ? sizeof(o->buf) - o->n : n;

                memcpy(o->buf + o->n, s, k);
                o->n += k;
                s += k;
                n -= k;
                if (o->n == sizeof(o->buf))
                        cli_out_flush(o);
        }
}

void cli_out_str(CliOut *o, const char *s) {
        cli_out_write(o, s, strlen(s));
}

void cli_out_char(CliOut *o, char c) {
        if (o->n == sizeof(o->buf))
                cli_out_flush(o);
        o->buf[o->n++] = c;
}

void cli_out_int(CliOut *o, int64_t v) {
        char digits[24], *p = digits + sizeof(digits);
        /* In unsigned arithmetic, so that INT64_MIN negates. */
        uint64_t u = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;

        do {
                *--p = (char) ('0' + u % 10);
                u /= 10;
        } while (u > 0);
        if (v < 0)
                *--p = '-';
        if (sizeof(o->buf) - o->n < sizeof(digits))
                cli_out_flush(o);
        memcpy(o->buf + o->n, p, (size_t) (digits + sizeof(digits) - p));
        o->n += (size_t) (digits + sizeof(digits) - p);
}

void cli_out_json_string(CliOut *o, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";

        cli_out_char(o, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c == '"' || c == '\\') {
                        cli_out_char(o, '\\');
                        cli_out_char(o, (char) c);
                } else if (c < 0x20 || c == 0x7f) {
                        char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        cli_out_write(o, esc, sizeof(esc));
                } else
                        cli_out_char(o, (char) c);
        }
        cli_out_char(o, '"');
}

void cli_lines_init(CliLines *l, int fd) {
        l->fd = fd;
        l->start = l->end = 0;
        l->eof = l->overlong = false;
}

int cli_lines_next(CliLines *l, const char **ret_line, size_t *ret_size) {
        for (;;) {
                char *nl = memchr(l->buf + l->start, '\n', l->end - l->start);
                ssize_t k;

                if (nl || (l->eof && (l->start < l->end || l->overlong))) {
                        size_t stop = nl ? (size_t) (nl - l->buf) : l->end;
                        bool overlong = l->overlong;

                        *ret_line = l->buf + l->start;
                        /* A CRLF ends a line as a LF does (a file from another system). */
                        *ret_size = stop - l->start - (nl && stop > l->start && l->buf[stop - 1] == '\r');
                        l->start = nl ? stop + 1 : stop;
                        l->overlong = false;
                        return overlong ? CLI_LINE_TOO_LONG : CLI_LINE;
                }
                if (l->eof)
                        return CLI_LINE_EOF;

                memmove(l->buf, l->buf + l->start, l->end - l->start);
                l->end -= l->start;
                l->start = 0;
                if (l->end == sizeof(l->buf)) {
                        /* A line longer than the buffer: drop its text, keep the count. */
                        l->overlong = true;
                        l->end = 0;
                }
                k = read(l->fd, l->buf + l->end, sizeof(l->buf) - l->end);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        l->eof = true;
                l->end += (size_t) k;
        }
}

