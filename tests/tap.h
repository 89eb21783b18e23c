/* SPDX-License-Identifier: MIT */
#pragma once

/* A small TAP producer: ok/not ok lines, a plan at the end, exit status 1 on any failure,
 * 0 with the plan "1..0 # SKIP" when the whole test is skipped, "Bail out!" and 1 when it
 * cannot run at all: wrong arguments, or a program .ci/run installs is missing. The counters
 * are in tap.c, one pair per program, so that helpers in other files of a test (its folder's
 * library, the harness) count in the same plan. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program-path.h"

/* The lines printed and the failures among them so far; a test reads tap_failed_ to keep what
 * a failure should leave for a reader (a log, a trace). */
extern int tap_count_;
extern int tap_failed_;

void tap_ok_(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ok(cond, ...) tap_ok_(!!(cond), __VA_ARGS__)

#define is_int(got, want, name)                                                              \
        do {                                                                                 \
                long long got_ = (long long) (got), want_ = (long long) (want);              \
                tap_ok_(got_ == want_, "%s", name);                                          \
                if (got_ != want_)                                                           \
                        printf("#   got %lld, want %lld\n", got_, want_);                    \
        } while (0)

void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void skip(const char *why);

/* The whole program cannot run here, for a reason no package can fix (what the kernel or the
 * hardware lacks). meson's TAP protocol reads the skip from the plan and counts any non-zero
 * status (77 included) as an ERROR, so exit 0. */
__attribute__((noreturn)) void skip_all(const char *why);

/* The program cannot go on, and that is a failure: meson reads "Bail out!" and the status. */
__attribute__((format(printf, 1, 2), noreturn)) void bail_out(const char *fmt, ...);

/* meson.build passes a test its arguments: a wrong count is broken wiring, never a reason to
 * skip. usage names the arguments, e.g. "TIMECONVD VERSION". */
void tap_args_range(int argc, char **argv, int n_min, int n_max, const char *usage);
void tap_args(int argc, char **argv, int n, const char *usage);

/* .ci/run installs every program and file the tests use: one that is missing is a broken
 * machine, a failure, never a skip. package is the Debian package that holds it. */
void tap_require_program(const char *program, const char *package);
void tap_require_file(const char *path, const char *package);

/* The plan; the program's exit status. */
int done_testing(void);
