/* SPDX-License-Identifier: MIT */
#pragma once

/* A small TAP producer: ok/not ok lines, a plan at the end, exit status 1 on any failure,
 * 0 with the plan "1..0 # SKIP" when the whole test is skipped, "Bail out!" and 1 when it
 * cannot run at all: wrong arguments, or a program .ci/run installs is missing. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program-path.h"

static int tap_count_;
static int tap_failed_;

static inline void tap_ok_(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A description or a diagnostic is one TAP line: a newline or carriage return inside it (a
 * value a test echoes) would start a line that is not TAP. */
static inline void tap_vprint_line_(const char *fmt, va_list ap) {
        char line[4096];
        int n = vsnprintf(line, sizeof(line), fmt, ap);

        for (int i = 0; i < n && i < (int) sizeof(line) - 1; i++)
                if (line[i] == '\n' || line[i] == '\r')
                        line[i] = ' ';
        fputs(n < 0 ? fmt : line, stdout);
}

static inline void tap_ok_(int pass, const char *fmt, ...) {
        va_list ap;
        tap_count_++;
        if (!pass)
                tap_failed_++;
        printf("%sok %d - ", pass ? "" : "not ", tap_count_);
        va_start(ap, fmt);
        tap_vprint_line_(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

#define ok(cond, ...) tap_ok_(!!(cond), __VA_ARGS__)

#define is_int(got, want, name)                                                              \
        do {                                                                                 \
                long long got_ = (long long) (got), want_ = (long long) (want);              \
                tap_ok_(got_ == want_, "%s", name);                                          \
                if (got_ != want_)                                                           \
                        printf("#   got %lld, want %lld\n", got_, want_);                    \
        } while (0)

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...) {
        va_list ap;
        fputs("# ", stdout);
        va_start(ap, fmt);
        tap_vprint_line_(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static inline void skip(const char *why) {
        tap_count_++;
        printf("ok %d # SKIP %s\n", tap_count_, why);
}

/* The whole program cannot run here, for a reason no package can fix (what the kernel or the
 * hardware lacks). meson's TAP protocol reads the skip from the plan and counts any non-zero
 * status (77 included) as an ERROR, so exit 0. */
static inline __attribute__((noreturn)) void skip_all(const char *why) {
        printf("1..0 # SKIP %s\n", why);
        exit(0);
}

/* The program cannot go on, and that is a failure: meson reads "Bail out!" and the status. */
static inline void bail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void bail_out(const char *fmt, ...) {
        va_list ap;
        fputs("Bail out! ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        exit(1);
}

/* meson.build passes a test its arguments: a wrong count is broken wiring, never a reason to
 * skip. usage names the arguments, e.g. "TIMECONVD VERSION". */
static inline void tap_args_range(int argc, char **argv, int n_min, int n_max, const char *usage) {
        if (argc - 1 < n_min || argc - 1 > n_max)
                bail_out("usage: %s %s (given %d arguments)", argv[0], usage, argc - 1);
}

static inline void tap_args(int argc, char **argv, int n, const char *usage) {
        tap_args_range(argc, argv, n, n, usage);
}

/* .ci/run installs every program and file the tests use: one that is missing is a broken
 * machine, a failure, never a skip. package is the Debian package that holds it. */
static inline void tap_require_program(const char *program, const char *package) {
        if (!program_in_path(program))
                bail_out("%s is not in PATH (Debian package %s, which .ci/run installs)", program, package);
}

static inline void tap_require_file(const char *path, const char *package) {
        if (access(path, R_OK) < 0)
                bail_out("%s cannot be read: %s (Debian package %s, which .ci/run installs)", path,
                         strerror(errno), package);
}

static inline int done_testing(void) {
        printf("1..%d\n", tap_count_);
        if (tap_failed_)
                printf("# failed %d of %d\n", tap_failed_, tap_count_);
        return tap_failed_ ? 1 : 0;
}
