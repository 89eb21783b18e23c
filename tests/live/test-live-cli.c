/* SPDX-License-Identifier: MIT */

/* The timeconv CLI end to end against the real timeconvd on a private bus: every command, its
 * JSON parsed (jansson) and checked against the kernel's clocks read here, bad input answered
 * with named errors in place, an export that loads back offline, and exit status 69 without a
 * daemon or a bus.
 * usage: test-live-cli TIMECONVD TIMECONV */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "clock-client.h"
#include "harness.h"
#include "tap.h"

#define RUN_MS 60000
/* Offsets of POSIX clocks are known to a few µs; a millisecond still fails a wrong answer. */
#define LOOSE_NS INT64_C(1000000)

static const Harness *h;
static const char *tc_path;
static char *out, *err;

static void diag_lines(const char *what, const char *text) {
        for (const char *p = text; *p;) {
                size_t n = strcspn(p, "\n");

                diag("%s: %.*s", what, (int) n, p);
                p += n + (p[n] == '\n');
        }
}

/* Runs timeconv with args (NULL-terminated); its exit status, -1 if it did not exit. */
static int run_env(const char *env_assignment, const char *const *args) {
        const char *argv[32];
        size_t n = 0;
        int status = 0, r;

        if (env_assignment) {
                argv[n++] = "env";
                argv[n++] = env_assignment;
        }
        argv[n++] = tc_path;
        for (; *args && n < 31; args++)
                argv[n++] = *args;
        argv[n] = NULL;
        free(out);
        free(err);
        out = err = NULL;
        r = harness_run(h, argv, NULL, RUN_MS, &out, &err, &status);
        if (r < 0 || !WIFEXITED(status)) {
                diag("running timeconv %s failed: %d", args[0] ? args[0] : "", r);
                return -1;
        }
        if (WEXITSTATUS(status) != 0 && err && *err)
                diag_lines("stderr", err);
        return WEXITSTATUS(status);
}

#define RUN(...) run_env(NULL, (const char *const[]) { __VA_ARGS__, NULL })

/* A shell pipeline (stdin for the CLI); its exit status. */
static int run_sh(const char *script) {
        const char *argv[] = { "sh", "-c", script, NULL };
        int status = 0;

        free(out);
        free(err);
        out = err = NULL;
        if (harness_run(h, argv, NULL, RUN_MS, &out, &err, &status) < 0 || !WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status);
}

static size_t count_lines(const char *s) {
        size_t n = 0;

        for (; s && *s; s++)
                n += *s == '\n';
        return n;
}

/* Line i (0-based) of s as a JSON object, or NULL. */
static json_t *json_line(const char *s, size_t i) {
        const char *start = s, *end;

        for (; i > 0 && start; i--)
                start = (start = strchr(start, '\n')) ? start + 1 : NULL;
        if (!start)
                return NULL;
        end = strchrnul(start, '\n');
        return json_loadb(start, (size_t) (end - start), 0, NULL);
}

static int64_t boottime_offset(int64_t *ret_hi) {
        Bracket b;

        bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
        *ret_hi = b.to_hi_ns - b.from_ns;
        return b.to_lo_ns - b.from_ns;
}

static void check_domains(void) {
        json_t *list, *mono = NULL, *boot = NULL, *e;
        int64_t off_lo, off_hi;
        bool fields = true;
        size_t i;

        is_int(RUN("domains"), 0, "domains: exit 0");
        ok(out && strncmp(out, "DOMAIN ", 7) == 0 && strstr(out, "\nmonotonic ") && strstr(out, "\nboottime "),
           "domains: a header and a row per domain");
        is_int(RUN("domains", "--json"), 0, "domains --json: exit 0");
        list = json_loads(out ? out : "", 0, NULL);
        ok(json_is_array(list) && json_array_size(list) >= 5, "domains --json: a JSON array of the domains");
        json_array_foreach(list, i, e) {
                fields &= json_is_string(json_object_get(e, "name")) && json_is_string(json_object_get(e, "unit")) &&
                          json_is_boolean(json_object_get(e, "available")) && json_object_get(e, "verdict") &&
                          json_object_get(e, "offset_ns") && json_object_get(e, "rate_ppb") &&
                          json_object_get(e, "uncertainty_ns") &&
                          json_is_integer(json_object_get(e, "last_calibrated_ns"));
                if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "monotonic") == 0)
                        mono = e;
                if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "boottime") == 0)
                        boot = e;
        }
        ok(fields, "each: name, unit, available, verdict, offset, rate, uncertainty, last calibration");
        ok(mono && json_integer_value(json_object_get(mono, "offset_ns")) == 0 &&
           json_integer_value(json_object_get(mono, "rate_ppb")) == 0,
           "monotonic against itself: offset 0, rate 0");
        off_lo = boottime_offset(&off_hi);
        ok(boot && json_is_integer(json_object_get(boot, "offset_ns")) &&
           bracket_holds(json_integer_value(json_object_get(boot, "offset_ns")),
                         (uint64_t) json_integer_value(json_object_get(boot, "offset_uncertainty_ns")), off_lo, off_hi),
           "boottime's offset to monotonic holds the kernel's, within its bound");
        json_decref(list);
}

static void check_now(void) {
        int64_t lo, hi, v;
        json_t *o;

        lo = clock_now_ns(CLOCK_MONOTONIC);
        is_int(RUN("now", "--json", "monotonic"), 0, "now --json monotonic: exit 0");
        hi = clock_now_ns(CLOCK_MONOTONIC);
        o = json_loads(out ? out : "", 0, NULL);
        ok(o && bracket_holds(json_integer_value(json_object_get(o, "value")),
                              (uint64_t) json_integer_value(json_object_get(o, "uncertainty_ns")), lo, hi) &&
           json_is_string(json_object_get(o, "path")),
           "its value lies within its bound of the test's own reading, and it names the path");
        json_decref(o);

        lo = clock_now_ns(CLOCK_MONOTONIC);
        is_int(RUN("now", "monotonic"), 0, "now monotonic: exit 0");
        hi = clock_now_ns(CLOCK_MONOTONIC);
        ok(out && sscanf(out, "%" SCNi64, &v) == 1 && v >= lo - LOOSE_NS && v <= hi + LOOSE_NS &&
           count_lines(out) == 1, "now monotonic: one number, the time");
        is_int(RUN("now", "nope"), 1, "now nope: exit 1");
        ok(err && strstr(err, "nope: unknown domain"), "and says the domain is unknown");
        is_int(RUN("now"), 2, "now without a domain: usage, exit 2");
}

static void check_convert(void) {
        char v1[32], script[512];
        int64_t in, off_lo, off_hi, got;
        json_t *o;

        in = clock_now_ns(CLOCK_MONOTONIC);
        snprintf(v1, sizeof(v1), "%" PRIi64, in);
        is_int(RUN("convert", "--json", "--from", "monotonic", "--to", "boottime", "--", v1, "abc",
                   "99999999999999999999", "-5"), 1, "convert --json with bad values: exit 1");
        off_lo = boottime_offset(&off_hi);
        ok(count_lines(out) == 4, "one line per input, in order");
        o = json_line(out, 0);
        ok(o && json_integer_value(json_object_get(o, "in")) == in &&
           bracket_holds(json_integer_value(json_object_get(o, "out")),
                         (uint64_t) json_integer_value(json_object_get(o, "uncertainty_ns")), in + off_lo, in + off_hi),
           "line 1: {in, out, uncertainty_ns}, the truth within the bound");
        json_decref(o);
        o = json_line(out, 1);
        ok(o && strcmp(json_string_value(json_object_get(o, "in")) ?: "", "abc") == 0 &&
           strcmp(json_string_value(json_object_get(o, "error")) ?: "", "not an integer") == 0,
           "line 2: {\"in\":\"abc\",\"error\":\"not an integer\"}");
        json_decref(o);
        o = json_line(out, 2);
        ok(o && strcmp(json_string_value(json_object_get(o, "error")) ?: "", "value out of range") == 0,
           "line 3: value out of range");
        json_decref(o);
        o = json_line(out, 3);
        ok(o && json_integer_value(json_object_get(o, "in")) == -5 && json_object_get(o, "out"),
           "line 4: a negative value after -- converts");
        json_decref(o);

        snprintf(script, sizeof(script), "printf '%" PRIi64 "\\nx\\n\\n%" PRIi64 "\\n' | '%s' convert --from monotonic "
                 "--to boottime", in, in, tc_path);
        is_int(run_sh(script), 1, "values on standard input, two bad: exit 1");
        ok(out && sscanf(out, "%" SCNi64, &got) == 1 && got >= in + off_lo - LOOSE_NS &&
           got <= in + off_hi + LOOSE_NS && strstr(out, "\nerror: not an integer\nerror: not an integer\n") && count_lines(out) == 4,
           "stdin: value, error, error, value, in order");

        is_int(RUN("convert", "--from", "monotonic", "--to", "nope", "1", "2"), 1, "an unknown target: exit 1");
        ok(out && strcmp(out, "error: unknown domain\nerror: unknown domain\n") == 0,
           "each value says \"error: unknown domain\"");
        is_int(RUN("convert", "--from", "monotonic", "--to", "BAD NAME", "1"), 1, "a malformed name: exit 1");
        ok(out && strcmp(out, "error: invalid argument\n") == 0, "and says it is invalid");
        is_int(RUN("convert", "--from", "monotonic", "--to", "boottime", "--mode", "nearest", "1"), 2,
               "--mode without --snapshots: usage, exit 2");
        is_int(RUN("convert", "--from", "monotonic", "1"), 2, "no --to: usage, exit 2");
}

static void check_export(void) {
        char *path = NULL, v1[32];
        int64_t in, off_lo, off_hi, got;
        json_t *doc;
        FILE *f;

        is_int(RUN("export"), 0, "export: exit 0");
        doc = json_loads(out ? out : "", 0, NULL);
        ok(json_array_size(json_object_get(doc, "snapshots")) > 0, "export: a JSON snapshot file with snapshots");
        json_decref(doc);
        if (asprintf(&path, "%s/export.json", h->dir) < 0 || !(f = fopen(path, "w")))
                abort();
        fputs(out ? out : "", f);
        fclose(f);

        in = clock_now_ns(CLOCK_MONOTONIC);
        snprintf(v1, sizeof(v1), "%" PRIi64, in);
        is_int(RUN("convert", "--snapshots", path, "--mode", "nearest", "--from", "monotonic", "--to", "boottime", v1),
               0, "the export loads back offline (--snapshots, nearest)");
        off_lo = boottime_offset(&off_hi);
        ok(out && sscanf(out, "%" SCNi64, &got) == 1 && got >= in + off_lo - LOOSE_NS && got <= in + off_hi + LOOSE_NS,
           "and converts monotonic to boottime with the kernel's offset");
        free(path);
}

static void check_monitor_and_help(void) {
        static const char *const commands[] = { "convert", "domains", "now", "monitor", "export" };

        is_int(RUN("monitor", "--once"), 0, "monitor --once: exit 0");
        ok(out && strncmp(out, "DOMAIN ", 7) == 0 && strstr(out, "\nmonotonic "), "monitor --once: one table");
        is_int(RUN("monitor", "--count", "3", "--interval", "0.05"), 0, "monitor --count 3: exit 0");
        ok(out && strstr(out, "DOMAIN ") && strstr(strstr(strstr(out, "DOMAIN ") + 1, "DOMAIN ") + 1, "DOMAIN "),
           "off a terminal it appends three tables");
        is_int(RUN("monitor", "--interval", "0"), 2, "monitor --interval 0: usage, exit 2");

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                ok(RUN(commands[i], "--help") == 0 && out && strstr(out, "Usage: timeconv"), "%s --help", commands[i]);
                ok(RUN(commands[i], "--version") == 0 && out && strncmp(out, "timeconv ", 9) == 0, "%s --version",
                   commands[i]);
        }
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *harness = NULL;
        int r;

        tap_args(argc, argv, 2, "TIMECONVD TIMECONV");
        tc_path = argv[2];

        r = harness_new(NULL, &harness);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return done_testing();
        h = harness;

        is_int(RUN("now", "monotonic"), 69, "no daemon: now exits 69");
        ok(err && strstr(err, "timeconvd is not running"), "and says timeconvd is not running");
        is_int(run_env("DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus",
                       (const char *const[]) { "domains", NULL }), 69, "no bus: domains exits 69");
        ok(err && strstr(err, "cannot connect to the session bus"), "and says so");

        r = harness_start_timeconvd(harness, argv[1], NULL);
        is_int(r, 0, "timeconvd starts and says READY=1");
        if (r < 0)
                return done_testing();
        check_domains();
        check_now();
        check_convert();
        check_export();
        check_monitor_and_help();

        r = harness_stop_daemon(harness, HARNESS_STOP_TIMEOUT_MS, NULL, NULL);
        is_int(RUN("convert", "--from", "monotonic", "--to", "boottime", "1", "2"), 69,
               "the daemon gone: convert exits 69");
        ok(out && strcmp(out, "error: timeconvd is not running\nerror: timeconvd is not running\n") == 0,
           "with one error line per value");
        is_int(RUN("export"), 69, "the daemon gone: export exits 69");
        free(out);
        free(err);
        return done_testing();
}
