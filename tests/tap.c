/* SPDX-License-Identifier: MIT */

#include "tap.h"

int tap_count_;
int tap_failed_;

/* A description or a diagnostic is one TAP line: a newline or carriage return inside it (a
 * value a test echoes) would start a line that is not TAP. */
static void tap_vprint_line(const char *fmt, va_list ap) {
        char line[4096];
        int n = vsnprintf(line, sizeof(line), fmt, ap);

        for (int i = 0; i < n && i < (int) sizeof(line) - 1; i++)
                if (line[i] == '\n' || line[i] == '\r')
                        line[i] = ' ';
        fputs(n < 0 ? fmt : line, stdout);
}

void tap_ok_(int pass, const char *fmt, ...) {
        va_list ap;

        tap_count_++;
        if (!pass)
                tap_failed_++;
        printf("%sok %d - ", pass ? "" : "not ", tap_count_);
        va_start(ap, fmt);
        tap_vprint_line(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

void diag(const char *fmt, ...) {
        va_list ap;

        fputs("# ", stdout);
        va_start(ap, fmt);
        tap_vprint_line(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

void skip(const char *why) {
        tap_count_++;
        printf("ok %d # SKIP %s\n", tap_count_, why);
}

void skip_all(const char *why) {
        printf("1..0 # SKIP %s\n", why);
        exit(0);
}

void bail_out(const char *fmt, ...) {
        va_list ap;

        fputs("Bail out! ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        exit(1);
}

void tap_args_range(int argc, char **argv, int n_min, int n_max, const char *usage) {
        if (argc - 1 < n_min || argc - 1 > n_max)
                bail_out("usage: %s %s (given %d arguments)", argv[0], usage, argc - 1);
}

void tap_args(int argc, char **argv, int n, const char *usage) {
        tap_args_range(argc, argv, n, n, usage);
}

void tap_require_program(const char *program, const char *package) {
        if (!program_in_path(program))
                bail_out("%s is not in PATH (Debian package %s, which .ci/run installs)", program, package);
}

void tap_require_file(const char *path, const char *package) {
        if (access(path, R_OK) < 0)
                bail_out("%s cannot be read: %s (Debian package %s, which .ci/run installs)", path,
                         strerror(errno), package);
}

int done_testing(void) {
        printf("1..%d\n", tap_count_);
        if (tap_failed_)
                printf("# failed %d of %d\n", tap_failed_, tap_count_);
        return tap_failed_ ? 1 : 0;
}
