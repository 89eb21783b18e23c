/* SPDX-License-Identifier: MIT */
#pragma once

/* A small TAP producer: ok/not ok lines, a plan at the end, exit status 1 on any failure,
 * 0 with the plan "1..0 # SKIP" when the whole test is skipped. */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count_;
static int tap_failed_;

static inline void tap_ok_(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tap_ok_(int pass, const char *fmt, ...) {
        va_list ap;
        tap_count_++;
        if (!pass)
                tap_failed_++;
        printf("%sok %d - ", pass ? "" : "not ", tap_count_);
        va_start(ap, fmt);
        vprintf(fmt, ap);
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
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static inline void skip(const char *why) {
        tap_count_++;
        printf("ok %d # SKIP %s\n", tap_count_, why);
}

/* The whole program cannot run here. meson's TAP protocol reads the skip from the plan and
 * counts any non-zero status (77 included) as an ERROR, so exit 0. */
static inline __attribute__((noreturn)) void skip_all(const char *why) {
        printf("1..0 # SKIP %s\n", why);
        exit(0);
}

static inline int done_testing(void) {
        printf("1..%d\n", tap_count_);
        if (tap_failed_)
                printf("# failed %d of %d\n", tap_failed_, tap_count_);
        return tap_failed_ ? 1 : 0;
}
