/* SPDX-License-Identifier: MIT */
#pragma once

/* The CLI's own buffered input and output: one conversion costs tens of ns, so a printf or a
 * scanf per value would be most of the time. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse-util.h"

#define CLI_OUT_SIZE (64 * 1024)
#define CLI_IN_SIZE (1024 * 1024)

typedef struct CliOut {
        int fd;
        int error;              /* the first write error, as -errno */
        size_t n;
        char buf[CLI_OUT_SIZE];
} CliOut;

void cli_out_init(CliOut *o, int fd);
void cli_out_write(CliOut *o, const char *s, size_t n);
void cli_out_str(CliOut *o, const char *s);
void cli_out_char(CliOut *o, char c);
void cli_out_int(CliOut *o, int64_t v);
void cli_out_uint(CliOut *o, uint64_t v);
/* The length of the UTF-8 character at s (of n bytes), or 0 when s does not start with one. */
size_t cli_utf8_char(const char *s, size_t n);
/* s as a JSON string, quotes included; a byte that is not UTF-8 becomes \ufffd. */
void cli_out_json_string(CliOut *o, const char *s, size_t n);
/* Writes what is buffered; 0 or the first write error. */
int cli_out_flush(CliOut *o);

typedef struct CliLines {
        int fd;
        size_t start, end;
        bool eof, overlong;
        char buf[CLI_IN_SIZE];
} CliLines;

enum {
        CLI_LINE_EOF = 0,
        CLI_LINE = 1,
        CLI_LINE_TOO_LONG = 2,  /* longer than the buffer; its text is dropped */
};

void cli_lines_init(CliLines *l, int fd);
/* The next line, without its newline (LF or CRLF) (valid until the next call): CLI_LINE, CLI_LINE_TOO_LONG,
 * CLI_LINE_EOF, or -errno of the read. */
int cli_lines_next(CliLines *l, const char **ret_line, size_t *ret_size);
