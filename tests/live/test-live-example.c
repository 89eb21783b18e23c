/* SPDX-License-Identifier: MIT */

/* The example program of libtimeconv(3), taken from the page itself (between its
 * `.\" example begin` and `.\" example end` marks), compiled as a user would (C99, pedantic,
 * warnings as errors, the public header alone) and run against the real timeconvd on a private
 * bus: it must build, exit 0, and print answers whose bounds hold the truth.
 * usage: test-live-example TIMECONVD MAN_PAGE CC INCLUDE_DIR LIB_DIR */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "tap.h"

#define RUN_MS 60000
#define APP_OFFSET_NS INT64_C(1000000000)

/* The program between the marks, unescaped (\e and \- are all groff needs in it); -EBADMSG for
 * marks not found or another escape, which the test would not know how to read. */
static int extract(const char *page, char **ret) {
        _cleanup_free_ char *text = NULL;
        char *begin, *end, *code, *o;
        size_t size = 0;
        FILE *f;

        f = fopen(page, "re");
        if (!f)
                return -errno;
        if (getdelim(&text, &size, '\0', f) < 0) {
                fclose(f);
                return -EIO;
        }
        fclose(f);
        begin = strstr(text, ".\\\" example begin");
        end = begin ? strstr(begin, ".\\\" example end") : NULL;
        begin = begin ? strstr(begin, "\n.EX\n") : NULL;
        if (!begin || !end || begin > end || end - begin < 9 || strncmp(end - 4, ".EE\n", 4) != 0)
                return -EBADMSG;
        begin += 5;
        end -= 4;
        code = o = malloc((size_t) (end - begin) + 1);
        if (!code)
                return -ENOMEM;
        for (const char *p = begin; p < end; p++) {
                if (*p != '\\') {
                        *o++ = *p;
                        continue;
                }
                p++;
                if (p < end && (*p == 'e' || *p == '-'))
                        *o++ = *p == 'e' ? '\\' : '-';
                else {
                        free(code);
                        return -EBADMSG;
                }
        }
        *o = 0;
        *ret = code;
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *code = NULL, *source = NULL, *program = NULL, *inc = NULL, *libdir = NULL,
                            *rpath = NULL, *out = NULL, *err = NULL;
        long long dac = 0, mono = 0, bound = -1, rt = 0, rt_bound = -1;
        int status = 0, r;
        const char *line;
        FILE *f;

        tap_args(argc, argv, 5, "TIMECONVD MAN_PAGE CC INCLUDE_DIR LIB_DIR");
        r = extract(argv[2], &code);
        is_int(r, 0, "the example is between the page's marks, in .EX/.EE");
        if (r < 0)
                return done_testing();
        ok(strstr(code, "timeconv_push_snapshot(") && strstr(code, "timeconv_last_error_message("),
           "it pushes an application clock and reads the daemon's message");

        r = harness_new(NULL, &h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return done_testing();
        if (asprintf(&source, "%s/example.c", h->dir) < 0 || asprintf(&program, "%s/example", h->dir) < 0 ||
            asprintf(&inc, "-I%s", argv[4]) < 0 || asprintf(&libdir, "-L%s", argv[5]) < 0 ||
            asprintf(&rpath, "-Wl,-rpath,%s", argv[5]) < 0)
                abort();
        f = fopen(source, "we");
        if (!f || fputs(code, f) < 0 || fclose(f) != 0)
                abort();

        {
                const char *cc[] = { argv[3], "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", inc, source,
                                     libdir, "-ltimeconv", rpath, "-o", program, NULL };

                r = harness_run(h, cc, NULL, RUN_MS, &out, &err, &status);
                ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                   "it compiles as C99 with -pedantic -Werror against timeconv.h alone");
                if (err && *err)
                        diag("cc: %s", err);
        }

        r = harness_start_timeconvd(h, argv[1], NULL);
        is_int(r, 0, "timeconvd starts");
        if (r < 0)
                return done_testing();
        {
                const char *run[] = { program, NULL };

                free(out);
                free(err);
                out = err = NULL;
                r = harness_run(h, run, NULL, RUN_MS, &out, &err, &status);
                ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "it runs and exits 0");
                if (err && *err)
                        diag("stderr: %s", err);
        }
        line = out ? strstr(out, "realtime ") : NULL;
        ok(line && sscanf(line, "realtime %lld +- %lld ns", &rt, &rt_bound) == 2 && rt > 0 && rt_bound >= 0,
           "it prints the realtime answer with its bound");
        line = out ? strstr(out, "dac0 ") : NULL;
        ok(line && sscanf(line, "dac0 %lld is monotonic %lld +- %lld ns", &dac, &mono, &bound) == 3 && bound >= 0,
           "and its own clock converted to monotonic, with its bound");
        ok(bound >= 0 && llabs(mono - (dac - APP_OFFSET_NS)) <= bound,
           "which holds the truth: dac0 - 1 s (%lld within %lld \xc2\xb1%lld)", dac - APP_OFFSET_NS, mono, bound);
        return done_testing();
}
