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
#include "timeconv.h"

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
                          json_object_get(e, "offset_ns") && json_object_get(e, "rate_to_monotonic_ppb") &&
                          json_object_get(e, "uncertainty_ns") &&
                          json_is_integer(json_object_get(e, "last_calibrated_ns"));
                if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "monotonic") == 0)
                        mono = e;
                if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "boottime") == 0)
                        boot = e;
        }
        ok(fields, "each: name, unit, available, verdict, offset, rate, uncertainty, last calibration");
        {
                size_t same = 0;

                json_array_foreach(list, i, e)
                        same += json_integer_value(json_object_get(e, "perfetto_id")) ==
                                (json_int_t) timeconv_perfetto_clock_id(json_string_value(json_object_get(e, "name")));
                ok(same == json_array_size(list), "each perfetto_id is timeconv_perfetto_clock_id() of its name "
                   "(%zu of %zu)", same, json_array_size(list));
        }
        {
                json_t *rt = NULL, *tai = NULL;

                json_array_foreach(list, i, e) {
                        if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "realtime") == 0)
                                rt = e;
                        if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "tai") == 0)
                                tai = e;
                }
                ok(rt && json_is_boolean(json_object_get(rt, "synchronised")), "realtime: \"synchronised\", a boolean");
                ok(tai && json_is_integer(json_object_get(tai, "tai_offset_s")) &&
                   json_is_boolean(json_object_get(tai, "equals_realtime")) &&
                   json_is_true(json_object_get(tai, "equals_realtime")) ==
                   (json_integer_value(json_object_get(tai, "tai_offset_s")) == 0),
                   "tai: \"tai_offset_s\" and \"equals_realtime\", which holds when the offset is 0");
        }
        ok(mono && json_integer_value(json_object_get(mono, "offset_ns")) == 0 &&
           json_is_integer(json_object_get(mono, "rate_to_monotonic_ppb")) &&
           json_integer_value(json_object_get(mono, "rate_to_monotonic_ppb")) == 0,
           "monotonic against itself: offset 0, rate 0");
        off_lo = boottime_offset(&off_hi);
        ok(boot && json_is_integer(json_object_get(boot, "offset_ns")) &&
           bracket_holds(json_integer_value(json_object_get(boot, "offset_ns")),
                         (uint64_t) json_integer_value(json_object_get(boot, "offset_uncertainty_ns")), off_lo, off_hi),
           "boottime's offset to monotonic holds the kernel's, within its bound");
        json_decref(list);
}

/* The column where the second field of line starts (after the first run of spaces). */
static size_t second_column(const char *line) {
        size_t i = strcspn(line, " \n");

        return i + strspn(line + i, " ");
}

static void check_table(void) {
        size_t unit_column;
        bool aligned = true, rows = false;

        is_int(RUN("domains"), 0, "domains: exit 0");
        unit_column = out ? second_column(out) : 0;
        for (const char *line = out ? strchr(out, '\n') : NULL; line && line[1] && line[1] != '\n';
             line = strchr(line + 1, '\n')) {
                rows = true;
                aligned &= second_column(line + 1) == unit_column;
        }
        ok(rows && aligned, "every row's UNIT starts under the header's (column %zu)", unit_column);
        ok(out && strstr(out, " \xc2\xb1") && strstr(out, " ns ") && strstr(out, " ppb"),
           "offsets and rates with their bounds");
        ok(out && strstr(out, "\n\nrealtime: ") && (strstr(out, "realtime: synchronised, says the kernel") ||
                                                    strstr(out, "realtime: not synchronised, says the kernel")),
           "under the table, what the kernel says of realtime's synchronisation");
        ok(out && (strstr(out, "\ntai: equals realtime (the kernel's TAI offset is 0: no NTP daemon set it;\n"
                               "     tai is not true TAI)\n") ||
                   strstr(out, "\ntai: realtime +")), "and of tai: its offset, or that it equals realtime");
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
        ok(out && strstr(out, " ns \xc2\xb1") && strstr(out, " ns\n"),
           "with its unit and its bound: VALUE ns \xc2\xb1" "BOUND ns (the value's unit said, not only the bound's)");
        is_int(RUN("now", "--json", "monotonic"), 0, "now --json monotonic: exit 0");
        o = json_loads(out ? out : "", 0, NULL);
        ok(o && strcmp(json_string_value(json_object_get(o, "unit")) ?: "", "ns") == 0, "with \"unit\":\"ns\"");
        json_decref(o);
        is_int(RUN("now", "nope"), 65, "now nope: exit 65 (bad data)");
        ok(err && strstr(err, "unknown domain 'nope'; timeconvd has: ") && strstr(err, "monotonic_raw") &&
           strstr(err, "boottime"), "and says the domain is unknown, with the domains there are");
        is_int(RUN("now", "BAD"), 65, "now BAD: exit 65");
        ok(err && strstr(err, "invalid byte 0x42 at offset 0"), "with the daemon's own words");
        is_int(RUN("now"), 64, "now without a domain: usage, exit 64");
        /* Names the library cannot even send: said as clearly as the daemon would. */
        is_int(RUN("now", ""), 65, "now '': exit 65");
        ok(err && strstr(err, "'': empty domain name"), "and says the name is empty");
        is_int(RUN("now", "a\xff"), 65, "now with a name that is not UTF-8: exit 65");
        ok(err && strstr(err, "domain name not valid UTF-8 (allowed: a-z 0-9 _ . : -)"), "and says so");
}

static void check_convert(void) {
        char v1[32], script[512];
        int64_t in, off_lo, off_hi, got, bound;
        json_t *o;

        in = clock_now_ns(CLOCK_MONOTONIC);
        snprintf(v1, sizeof(v1), "%" PRIi64, in);
        is_int(RUN("convert", "--json", "--from", "monotonic", "--to", "boottime", "--", v1, "abc",
                   "99999999999999999999", "-5"), 65, "convert --json with bad values: exit 65 (bad data)");
        off_lo = boottime_offset(&off_hi);
        ok(count_lines(out) == 4, "one line per input, in order");
        o = json_line(out, 0);
        ok(o && strcmp(json_string_value(json_object_get(o, "in")) ?: "", v1) == 0 &&
           bracket_holds(json_integer_value(json_object_get(o, "out")),
                         (uint64_t) json_integer_value(json_object_get(o, "uncertainty_ns")), in + off_lo, in + off_hi),
           "line 1: {in (the input as given), out, uncertainty_ns}, the truth within the bound");
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
        ok(o && strcmp(json_string_value(json_object_get(o, "in")) ?: "", "-5") == 0 && json_object_get(o, "out"),
           "line 4: a negative value after -- converts");
        json_decref(o);

        snprintf(script, sizeof(script), "printf '%" PRIi64 "\\nx\\n\\n%" PRIi64 "\\n' | '%s' convert --from monotonic "
                 "--to boottime", in, in, tc_path);
        is_int(run_sh(script), 65, "values on standard input, two bad: exit 65");
        ok(out && sscanf(out, "%" SCNi64 " \xc2\xb1%" SCNi64 " ns", &got, &bound) == 2 && bound >= 0 &&
           got >= in + off_lo - LOOSE_NS &&
           got <= in + off_hi + LOOSE_NS && strstr(out, "\nerror: not an integer\nerror: not an integer\n") && count_lines(out) == 4,
           "stdin: value with its bound, error, error, value, in order");

        is_int(RUN("convert", "--from", "monotonic", "--to", "nope", "1", "2"), 65, "an unknown target: exit 65");
        ok(out && !*out, "nothing on standard output");
        ok(err && strstr(err, "unknown domain 'nope'; timeconvd has: ") && strstr(err, "monotonic_raw") &&
           !strstr(strstr(err, "unknown domain") + 1, "unknown domain"),
           "said once on standard error, with the domains there are");
        is_int(RUN("convert", "--from", "nope", "--to", "monotonic", "1"), 65, "an unknown source: exit 65");
        ok(err && strstr(err, "unknown domain 'nope'"), "and names it");
        is_int(RUN("convert", "--from", "monotonic", "--to", "REALTIME", "1"), 65, "a malformed name: exit 65");
        ok(err && strstr(err, "argument 'to': invalid byte 0x52 at offset 0") &&
           strstr(err, "(allowed: a-z 0-9 _ . : -)"), "and says why, in the daemon's words");
        is_int(RUN("convert", "--from", "monotonic", "--to", "boottime", "--mode", "nearest", "1"), 64,
               "--mode without --snapshots: usage, exit 64");
        is_int(RUN("convert", "--from", "monotonic", "1"), 64, "no --to: usage, exit 64");
        is_int(RUN("convert", "--from", "\xc0\x80", "--to", "monotonic", "1"), 65, "an overlong UTF-8 name: exit 65");
        ok(err && strstr(err, "--from '") && strstr(err, "not valid UTF-8"), "said of --from");
        is_int(RUN("convert", "--from", "monotonic", "--to", "", "1"), 65, "an empty --to: exit 65");
        ok(err && strstr(err, "empty domain name"), "said as the daemon says it");

        /* "in" is the input as given, spaces and all (the CRLF of a line is its end, not input). */
        is_int(RUN("convert", "--json", "--from", "monotonic", "--to", "boottime", " 5 ", "x "), 65,
               "convert --json ' 5 ' 'x ': exit 65");
        o = json_line(out, 0);
        ok(o && strcmp(json_string_value(json_object_get(o, "in")) ?: "", " 5 ") == 0 && json_object_get(o, "out"),
           "\"in\" keeps the spaces of a value that converts");
        json_decref(o);
        o = json_line(out, 1);
        ok(o && strcmp(json_string_value(json_object_get(o, "in")) ?: "", "x ") == 0, "and of one that does not");
        json_decref(o);
        snprintf(script, sizeof(script), "printf ' 7\\r\\n8\\r\\n' | '%s' convert --json --from monotonic --to boottime",
                 tc_path);
        is_int(run_sh(script), 0, "CRLF lines on standard input: exit 0");
        o = json_line(out, 0);
        ok(o && strcmp(json_string_value(json_object_get(o, "in")) ?: "", " 7") == 0, "\"in\" is the line without its CRLF");
        json_decref(o);
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

/* export --format perfetto: protoc --decode_raw reads it (.ci/run installs protobuf-compiler),
 * with the fields Perfetto's ClockSnapshot packets have; --follow ends on SIGTERM with exit 0
 * and a trace that decodes. */
static void check_export_perfetto(void) {
        char *script = NULL, want[64];
        const char *p;
        size_t packets = 0;

        if (asprintf(&script, "set -e; \"%s\" export --format perfetto > '%s/e.pftrace'; "
                     "protoc --decode_raw < '%s/e.pftrace'", tc_path, h->dir, h->dir) < 0)
                abort();
        is_int(run_sh(script), 0, "export --format perfetto | protoc --decode_raw: exit 0");
        free(script);
        for (p = out ? out : ""; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
                packets += strncmp(p, "1 {\n", 4) == 0;
        ok(packets > 0, "a Trace of TracePackets (%zu)", packets);
        ok(out && strstr(out, "  6 {\n    1 {\n      1: "), "each a clock_snapshot (6) of clocks (1) with an id (1)");
        ok(out && strstr(out, "    2: 6\n"), "primary_trace_clock BOOTTIME (6)");
        ok(out && strstr(out, "  10: 1952645121\n"), "on a sequence of its own (10)");
        snprintf(want, sizeof(want), "      1: %" PRIu32 "\n", timeconv_perfetto_clock_id("tai"));
        ok(out && strstr(out, want) && strstr(out, "      1: 3\n") && strstr(out, "      1: 5\n"),
           "monotonic (3), monotonic_raw (5) and tai by its hashed id (%" PRIu32 ")",
           timeconv_perfetto_clock_id("tai"));
        is_int(RUN("export", "--follow"), 64, "--follow without --format perfetto: usage, exit 64");
        is_int(RUN("export", "--format", "xml"), 64, "an unknown format: usage, exit 64");

        if (asprintf(&script, "set -e; d='%s'; mkfifo \"$d/fifo\"; \"%s\" export --format perfetto --follow > "
                     "\"$d/fifo\" & pid=$!; exec 3< \"$d/fifo\"; dd bs=1 count=1 <&3 > \"$d/f.pftrace\" 2>/dev/null; "
                     "cat <&3 >> \"$d/f.pftrace\" & cat_pid=$!; kill -TERM $pid; status=0; wait $pid || status=$?; "
                     "wait $cat_pid; echo \"status $status\"; protoc --decode_raw < \"$d/f.pftrace\" | grep -c '^1 {'",
                     h->dir, tc_path) < 0)
                abort();
        is_int(run_sh(script), 0, "export --format perfetto --follow, SIGTERM once it wrote");
        free(script);
        ok(out && strncmp(out, "status 0\n", 9) == 0 && atoi(out + 9) > 0,
           "exits 0, its output a whole trace of packets (%s)", out ? out : "");
}

static void check_monitor_json(void) {
        char script[2048];
        bool good = true;
        json_t *o;

        is_int(RUN("monitor", "--json", "--count", "2", "--interval", "0.05"), 0, "monitor --json --count 2: exit 0");
        ok(count_lines(out) >= 2, "at least two lines");
        for (size_t i = 0; i < count_lines(out); i++) {
                o = json_line(out, i);
                good &= json_is_object(o) && json_is_string(json_object_get(o, "event")) &&
                        json_is_integer(json_object_get(o, "monotonic_now_ns"));
                if (o && strcmp(json_string_value(json_object_get(o, "event")) ?: "", "domains") == 0)
                        good &= json_array_size(json_object_get(o, "domains")) >= 5;
                json_decref(o);
        }
        ok(good, "each line one JSON object with its \"event\"; a refresh lists the domains");

        /* A domain comes and goes while monitor runs: it says which, without a refresh. */
        snprintf(script, sizeof(script),
                 "set -e\n"
                 "tc='%s'; dir='%s'\n"
                 "rm -f \"$dir/mon.fifo\"; mkfifo \"$dir/mon.fifo\"\n"
                 "\"$tc\" monitor --json --interval 3600 > \"$dir/mon.fifo\" &\n"
                 "pid=$!\n"
                 "exec 3< \"$dir/mon.fifo\"\n"
                 "read -r first <&3\n"
                 "m=$(\"$tc\" now monotonic | cut -d ' ' -f 1)\n"
                 "after=$(\"$tc\" now monotonic | cut -d ' ' -f 1)\n"
                 "printf '%%s %%s %%s\\n' $((m + 1)) \"$m\" \"$after\" | \"$tc\" push audio9 --against monotonic >/dev/null\n"
                 "while read -r line <&3; do\n"
                 "        case \"$line\" in\n"
                 "        *'\"added\":[\"audio9\"]'*) echo \"$line\" ;;\n"
                 "        *'\"removed\":[\"audio9\"]'*) echo \"$line\"; break ;;\n"
                 "        esac\n"
                 "done\n"
                 "kill \"$pid\"\n",
                 tc_path, h->dir);
        is_int(run_sh(script), 0, "monitor --json while push makes audio9 and ends");
        o = json_line(out, 0);
        ok(o && strcmp(json_string_value(json_object_get(o, "event")) ?: "", "domains_changed") == 0 &&
           json_array_size(json_object_get(o, "added")) == 1 && json_is_array(json_object_get(o, "changed")),
           "a line says audio9 was added");
        json_decref(o);
        o = json_line(out, 1);
        ok(o && json_array_size(json_object_get(o, "removed")) == 1, "then one says it was removed");
        json_decref(o);
}

/* Every entry the daemon lists (ListDomains, read raw here) is in `timeconv domains --json`, at
 * the top (rate_ppb and rate_uncertainty_ppb as rate_to_reference_ppb and
 * rate_to_reference_uncertainty_ppb: the top's rate is rate_to_monotonic_ppb) or under
 * "properties", with a JSON type that fits its D-Bus type. An application domain this test
 * holds brings its owner. */
static bool d_count_ok(size_t domains, json_t *list) {
        return domains > 0 && domains == json_array_size(list);
}

static void check_every_entry(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        struct timeconv *tc = NULL;
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
        struct timeconv_reading readings[2] = { { "monotonic", now_ns }, { "audio7", now_ns + 5000 } };
        size_t entries = 0, missing = 0, mistyped = 0, domains = 0;
        bool saw_owner = false;
        json_t *list = NULL;
        const char *name, *unit;
        int r;

        ok(timeconv_open_address(h->bus_address, &tc) == 0 && timeconv_push_snapshot(tc, readings, 2) == 0,
           "an application domain, audio7, held by this test");
        is_int(RUN("domains", "--json"), 0, "domains --json: exit 0");
        list = json_loads(out ? out : "", 0, NULL);
        r = harness_connect(h, &bus);
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.timeconv.Clock1", "/org/timeconv/Clock1", "org.timeconv.Clock1",
                                       "ListDomains", NULL, &reply, "");
        is_int(r >= 0, 1, "ListDomains, raw");
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(ssa{sv})");
        while (r >= 0 && sd_bus_message_enter_container(reply, 'r', "ssa{sv}") > 0) {
                json_t *e, *d = NULL;
                size_t i;

                if (sd_bus_message_read(reply, "ss", &name, &unit) < 0 ||
                    sd_bus_message_enter_container(reply, 'a', "{sv}") < 0)
                        break;
                json_array_foreach(list, i, e)
                        if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", name) == 0)
                                d = e;
                domains += d != NULL;
                while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
                        const char *key, *contents;
                        char type;
                        json_t *v;

                        if (sd_bus_message_read(reply, "s", &key) < 0 ||
                            sd_bus_message_peek_type(reply, &type, &contents) < 0 ||
                            sd_bus_message_skip(reply, "v") < 0 || sd_bus_message_exit_container(reply) < 0)
                                break;
                        entries++;
                        v = json_object_get(d, strcmp(key, "rate_ppb") == 0 ? "rate_to_reference_ppb" :
                                               strcmp(key, "rate_uncertainty_ppb") == 0 ?
                                                       "rate_to_reference_uncertainty_ppb" : key) ?:
                            json_object_get(json_object_get(d, "properties"), key);
                        if (!v) {
                                diag("%s: \"%s\" (%s) is not in domains --json", name, key, contents);
                                missing++;
                        } else if (!(json_is_null(v) || (contents[0] == 'b' && json_is_boolean(v)) ||
                                     (contents[0] == 's' && json_is_string(v)) ||
                                     (strchr("tuxy", contents[0]) && json_is_integer(v)) ||
                                     (contents[0] == 'd' && json_is_number(v)))) {
                                diag("%s: \"%s\" (%s) has another JSON type", name, key, contents);
                                mistyped++;
                        }
                        saw_owner |= strcmp(name, "audio7") == 0 && strcmp(key, "owner") == 0 && json_is_string(v);
                }
                sd_bus_message_exit_container(reply);
                sd_bus_message_exit_container(reply);
        }
        ok(d_count_ok(domains, list), "every domain the daemon lists is in domains --json (%zu)", domains);
        ok(entries > 50 && missing == 0, "and every one of their %zu entries (%zu missing)", entries, missing);
        is_int(mistyped, 0, "each with a JSON type that fits its D-Bus type");
        ok(saw_owner, "audio7's owner among them");
        json_decref(list);
        timeconv_free(tc);
}

/* timeconv push holds an application domain while it runs: another client sees it, owned. */
static void check_push(void) {
        char script[2048], *path = NULL;
        json_t *list, *e, *audio = NULL;
        size_t i;

        snprintf(script, sizeof(script),
                 "set -e\n"
                 "tc='%s'; dir='%s'\n"
                 "rm -f \"$dir/push.fifo\"; mkfifo \"$dir/push.fifo\"\n"
                 "m=$(\"$tc\" now monotonic | cut -d ' ' -f 1)\n"
                 "after=$(\"$tc\" now monotonic | cut -d ' ' -f 1)\n"
                 "printf '%%s %%s %%s\\n' $((m + 5000000)) \"$m\" \"$after\" |\n"
                 "        \"$tc\" push audio1 --against monotonic --hold > \"$dir/push.fifo\" &\n"
                 "pid=$!\n"
                 "exec 3< \"$dir/push.fifo\"\n"
                 "read -r first <&3\n"
                 "echo \"push: $first\"\n"
                 "\"$tc\" domains --json > \"$dir/domains.json\"\n"
                 "\"$tc\" now audio1\n"
                 "kill \"$pid\"; wait \"$pid\" || true\n",
                 tc_path, h->dir);
        is_int(run_sh(script), 0, "push --hold, then domains and now from other processes");
        ok(out && strncmp(out, "push: ok\n", 9) == 0, "push answers \"ok\" for the bracketed line");
        ok(out && strstr(out, "\n") && strstr(strchr(out, '\n'), " \xc2\xb1"), "now audio1 answers, with its bound");
        if (asprintf(&path, "%s/domains.json", h->dir) < 0)
                abort();
        list = json_load_file(path, 0, NULL);
        json_array_foreach(list, i, e)
                if (strcmp(json_string_value(json_object_get(e, "name")) ?: "", "audio1") == 0)
                        audio = e;
        ok(audio && json_is_string(json_object_get(json_object_get(audio, "properties"), "owner")) &&
           json_string_value(json_object_get(json_object_get(audio, "properties"), "owner"))[0] == ':',
           "domains --json lists audio1 with its owner, a unique bus name");
        json_decref(list);
        free(path);

        snprintf(script, sizeof(script), "printf '5\\n1 2 3 4\\nx y\\n' | '%s' push audio2 --against monotonic",
                 tc_path);
        is_int(run_sh(script), 65, "push with bad lines: exit 65");
        ok(out && strstr(out, "error: a reference value is needed too") &&
           count_lines(out) == 3, "an error line per bad line, saying why");
        is_int(RUN("push", "audio2"), 64, "push without --against: usage, exit 64");
        snprintf(script, sizeof(script), "printf '1 2\\n3 4\\n' | '%s' push '' --against monotonic", tc_path);
        is_int(run_sh(script), 65, "push with an empty DOMAIN: exit 65");
        ok(out && !*out && err && strstr(err, "push: DOMAIN '': empty domain name") && count_lines(err) == 1,
           "said once, before any line");

        /* Names checked before a line is read (a typo found at once, not after stdin ends), each
         * said once. */
        snprintf(script, sizeof(script), "'%s' push dac0 --against nope < /dev/null", tc_path);
        is_int(run_sh(script), 65, "push --against an unknown domain: exit 65");
        ok(err && strstr(err, "unknown domain 'nope'; timeconvd has: ") && strstr(err, "monotonic") &&
           count_lines(err) == 1, "said once, with the domains there are");
        snprintf(script, sizeof(script), "'%s' push monotonic --against boottime < /dev/null", tc_path);
        is_int(run_sh(script), 65, "push of one of timeconvd's own domains: exit 65, not 0 on empty input");
        ok(err && strstr(err, "'monotonic' is one of timeconvd's own domains"), "and says so");
        snprintf(script, sizeof(script), "'%s' push Dac0 --against monotonic < /dev/null", tc_path);
        is_int(run_sh(script), 65, "push of an invalid name (upper case): exit 65");
        ok(err && strstr(err, "push: DOMAIN 'Dac0': ") && strstr(err, "a-z 0-9 _ . : -") && count_lines(err) == 1,
           "and says which characters a name may have");
        {
                struct timeconv *tc = NULL;
                int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
                struct timeconv_reading readings[2] = { { "monotonic", now_ns }, { "audio8", now_ns + 5000 } };

                ok(timeconv_open_address(h->bus_address, &tc) == 0 && timeconv_push_snapshot(tc, readings, 2) == 0,
                   "audio8, held by this test");
                snprintf(script, sizeof(script), "printf '1 2\\n' | '%s' push audio8 --against monotonic", tc_path);
                is_int(run_sh(script), 1, "push of a name another client holds: exit 1, as timeconv(1) says");
                ok(err && strstr(err, "'audio8': the domain belongs to another client") && count_lines(err) == 1 &&
                   !strstr(err, "standard input"), "one message, and no read error after it");
                timeconv_free(tc);
        }
}

static void check_monitor_and_help(void) {
        static const char *const commands[] = { "convert", "domains", "now", "monitor", "push", "export", "frames" };
        char script[1024];
        int r;

        is_int(RUN("monitor", "--once"), 0, "monitor --once: exit 0");
        ok(out && strncmp(out, "DOMAIN ", 7) == 0 && strstr(out, "\nmonotonic "), "monitor --once: one table");
        is_int(RUN("monitor", "--count", "3", "--interval", "0.05"), 0, "monitor --count 3: exit 0");
        ok(out && strstr(out, "DOMAIN ") && strstr(strstr(strstr(out, "DOMAIN ") + 1, "DOMAIN ") + 1, "DOMAIN "),
           "off a terminal it appends three tables");
        is_int(RUN("monitor", "--interval", "0"), 64, "monitor --interval 0: usage, exit 64");
        is_int(RUN("monitor", "--count", "-1"), 64, "monitor --count -1: usage, exit 64 (not a monitor that never ends)");
        is_int(RUN("monitor", "--count", "99999999999999999999"), 64, "monitor --count past 2^64: usage, exit 64");

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                ok(RUN(commands[i], "--help") == 0 && out && strncmp(out, "Usage: timeconv ", 16) == 0 &&
                   strncmp(out + 16, commands[i], strlen(commands[i])) == 0, "%s --help: its own help", commands[i]);
                ok(RUN(commands[i], "--version") == 0 && out && strncmp(out, "timeconv ", 9) == 0, "%s --version",
                   commands[i]);
                r = RUN(commands[i], "--no-such-option");
                ok(r == 64, "%s --no-such-option: usage, exit 64 (got %d)", commands[i], r);
                snprintf(script, sizeof(script), "'%s' %s --help > /dev/full", tc_path, commands[i]);
                r = run_sh(script);
                ok(r == 74, "%s --help to a full disk: exit 74, not a silent 0 (got %d)", commands[i], r);
        }
        is_int(RUN("no-such-command"), 64, "an unknown command: usage, exit 64");
        is_int(RUN("domains", "extra"), 64, "domains with an argument: usage, exit 64");
        is_int(RUN("export", "extra"), 64, "export with an argument: usage, exit 64");
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
        check_table();
        check_now();
        check_convert();
        check_export();
        check_export_perfetto();
        check_monitor_json();
        check_push();
        check_every_entry();
        check_monitor_and_help();

        r = harness_stop_daemon(harness, HARNESS_STOP_TIMEOUT_MS, NULL, NULL);
        is_int(RUN("convert", "--from", "monotonic", "--to", "boottime", "1", "2"), 69,
               "the daemon gone: convert exits 69");
        ok(out && strcmp(out, "error: timeconvd is not running\nerror: timeconvd is not running\n") == 0,
           "with one error line per value");
        is_int(RUN("export"), 69, "the daemon gone: export exits 69");
        is_int(RUN("domains"), 69, "the daemon gone: domains exits 69");
        ok(err && strstr(err, "timeconvd is not running"), "and says why");
        is_int(RUN("now", "monotonic"), 69, "the daemon gone: now exits 69");
        is_int(RUN("monitor", "--once"), 69, "the daemon gone: monitor --once exits 69");
        is_int(RUN("monitor", "--json", "--once"), 69, "the daemon gone: monitor --json --once exits 69");
        {
                char script[1024];

                snprintf(script, sizeof(script), "echo '1 2' | '%s' push audio3 --against monotonic", tc_path);
                is_int(run_sh(script), 69, "the daemon gone: push exits 69");
                ok(out && !*out && err && strstr(err, "timeconvd is not running") && count_lines(err) == 1,
                   "said once, before any line is read");
        }
        free(out);
        free(err);
        return done_testing();
}
