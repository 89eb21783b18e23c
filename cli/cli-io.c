/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"
#include "fd-util.h"

void cli_out_init(CliOut *o, int fd) {
        o->fd = fd;
        o->error = 0;
        o->n = 0;
}

int cli_out_flush(CliOut *o) {
        if (o->error == 0)
                o->error = write_fd_whole(o->fd, o->buf, o->n);
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

void cli_out_uint(CliOut *o, uint64_t v) {
        char digits[24], *p = digits + sizeof(digits);

        do {
                *--p = (char) ('0' + v % 10);
                v /= 10;
        } while (v > 0);
        cli_out_write(o, p, (size_t) (digits + sizeof(digits) - p));
}

void cli_out_int(CliOut *o, int64_t v) {
        if (v < 0)
                cli_out_char(o, '-');
        /* In unsigned arithmetic, so that INT64_MIN negates. */
        cli_out_uint(o, v < 0 ? 0 - (uint64_t) v : (uint64_t) v);
}

size_t cli_utf8_char(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 :
                     (p[0] & 0xf8) == 0xf0 ? 4 : 0;
        uint32_t c = len == 1 ? p[0] : len == 2 ? p[0] & 0x1fu : len == 3 ? p[0] & 0x0fu : p[0] & 0x07u;

        if (len == 0 || len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                c = c << 6 | (p[i] & 0x3fu);
        }
        /* Overlong forms, surrogates and what lies past U+10FFFF are not UTF-8. */
        if ((len == 2 && c < 0x80) || (len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
            (len == 4 && (c < 0x10000 || c > 0x10ffff)))
                return 0;
        return len;
}

void cli_out_json_string(CliOut *o, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";

        cli_out_char(o, '"');
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char) s[i];
                size_t len;

                if (c == '"' || c == '\\') {
                        cli_out_char(o, '\\');
                        cli_out_char(o, (char) c);
                        i++;
                } else if (c < 0x20 || c == 0x7f) {
                        char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        cli_out_write(o, esc, sizeof(esc));
                        i++;
                } else if ((len = cli_utf8_char(s + i, n - i)) > 0) {
                        cli_out_write(o, s + i, len);
                        i += len;
                } else {
                        /* A byte that is not UTF-8 (JSON is): the replacement character, as
                         * a decoder would show it. */
                        cli_out_write(o, "\\ufffd", 6);
                        i++;
                }
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

