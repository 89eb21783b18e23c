/* SPDX-License-Identifier: MIT */

/* libtimeconv's offline path through the public API only: the snapshot file loader on good
 * and malformed files (each refusal names the element and its line and column), and Perfetto's
 * documented examples. argv[1] is tests/client-lib/data. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "tap.h"
#include "timeconv.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NEAREST TIMECONV_MODE_NEAREST
#define DRIFT TIMECONV_MODE_DRIFT
#define ANY UINT_MAX    /* a column jansson computes, any but 0 */

typedef struct Case {
        int mode;
        const char *from, *to;
        int64_t value;
        int r;
        int64_t want, want_unc;
} Case;

static struct timeconv_snapshots *load(const char *what, const char *json) {
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error e = { 0 };
        int r = timeconv_snapshots_load_buffer(json, strlen(json), &s, &e);

        ok(r == 0 && s, "%s: loads", what);
        if (r < 0)
                diag("%d, %u:%u: %s", r, e.line, e.column, e.message);
        return s;
}

/* The by-pair form answers as the by-name form, error for error (an unknown name at resolution). */
static void check_pair(const struct timeconv_snapshots *s, const Case *c, int r, int64_t got, int64_t unc) {
        struct timeconv_snapshots_pair pair;
        int64_t pair_got = -7, pair_unc = -7;
        int rp = timeconv_snapshots_pair(s, c->mode, c->from, c->to, &pair);

        if (rp >= 0)
                rp = timeconv_snapshots_pair_convert(&pair, c->value, &pair_got, &pair_unc);
        ok(rp == r && (r < 0 || (pair_got == got && pair_unc == unc)), "  by pair the same (%d)", rp);
}

static void check_cases(const char *what, const struct timeconv_snapshots *s, const Case *cases,
                        size_t n) {
        for (size_t i = 0; i < n; i++) {
                const Case *c = &cases[i];
                int64_t got = -7, unc = -7;
                int r = timeconv_snapshots_convert(s, c->mode, c->from, c->to, c->value, &got, &unc);
                bool pass = r == c->r && (r < 0 ? got == -7 && unc == -7 :
                                          got == c->want && unc == c->want_unc);

                ok(pass, "%s: %s %s %" PRId64 " -> %s = %" PRId64 " (%d) +- %" PRId64, what,
                   c->mode == DRIFT ? "drift" : "nearest", c->from, c->value, c->to, c->want, c->r,
                   c->want_unc);
                if (!pass)
                        diag("got %" PRId64 " (%d) +- %" PRId64, got, r, unc);
                check_pair(s, c, r, got, unc);
        }
}

/* perfetto.dev/docs/concepts/clock-sync, the tables of tests/calibrate/test-snapshot-graph.c. */
static void test_perfetto_examples(void) {
        static const char one[] = "{\"snapshots\":["
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1000},{\"domain\":\"boottime\",\"ts\":2000}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1100},{\"domain\":\"boottime\",\"ts\":2100}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1200},{\"domain\":\"boottime\",\"ts\":2200}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1900},{\"domain\":\"boottime\",\"ts\":2900}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":2000},{\"domain\":\"boottime\",\"ts\":3500}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":2100},{\"domain\":\"boottime\",\"ts\":3600}]}]}";
        static const Case one_cases[] = {
                { NEAREST, "monotonic", "boottime", 1104, 0, 2104, 1 },
                { NEAREST, "monotonic", "boottime", 1950, 0, 2950, 1 },
                { DRIFT, "monotonic", "boottime", 1950, 0, 2950, 1 },
                { NEAREST, "monotonic", "boottime", 2000, 0, 3500, 0 },
                { NEAREST, "monotonic", "boottime", 900, 0, 1900, 1 },
                { NEAREST, "boottime", "monotonic", 3499, 0, 2499, 1 },
        };
        static const char two[] = "{\"snapshots\":["
                "{\"clocks\":[{\"domain\":\"custom\",\"ts\":1000},{\"domain\":\"monotonic\",\"ts\":1100}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1200},{\"domain\":\"boottime\",\"ts\":5200}]},"
                "{\"clocks\":[{\"domain\":\"custom\",\"ts\":3000},{\"domain\":\"monotonic\",\"ts\":3200}]},"
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":4000},{\"domain\":\"boottime\",\"ts\":9000}]}]}";
        static const Case two_cases[] = {
                { NEAREST, "custom", "monotonic", 3503, 0, 3703, 1 },
                { NEAREST, "custom", "boottime", 3503, 0, 7703, 4 },
                { DRIFT, "custom", "boottime", 3503, 0, 7703, 4 },
                { NEAREST, "custom", "boottime", 0, 0, 4100, 3 },
                { NEAREST, "boottime", "custom", 9500, 0, 4300, 3 },
                { NEAREST, "custom", "nope", 1, -ENOENT, 0, 0 },
                { NEAREST, "nope", "custom", 1, -ENOENT, 0, 0 },
                { 7, "custom", "boottime", 1, -EINVAL, 0, 0 },
        };
        struct timeconv_snapshots *s = load("doc example 1", one);

        check_cases("doc example 1", s, one_cases, N(one_cases));
        timeconv_snapshots_free(s);
        s = load("doc example 2", two);
        check_cases("doc example 2", s, two_cases, N(two_cases));
        is_int(timeconv_snapshots_count_domains(s), 3, "example 2 has three domains");
        ok(strcmp(timeconv_snapshots_domain_name(s, 0), "custom") == 0 &&
           strcmp(timeconv_snapshots_domain_name(s, 2), "boottime") == 0, "in the order first seen");
        ok(!timeconv_snapshots_domain_name(s, 3), "no name past the end");
        timeconv_snapshots_free(s);
}

/* Declared units, the built-in X time units, custom names, and the file in tests/client-lib/data. */
static void test_good_files(const char *data_dir) {
        static const char units[] =
                "{ \"domains\": [ { \"name\": \"frames_ms\", \"unit\": \"ms\" },\n"
                "                 { \"name\": \"gpu0\", \"unit\": \"ticks\", \"period_ns\": 52.083,\n"
                "                   \"wrap_bits\": 64, \"truncates\": false } ],\n"
                "  \"snapshots\": [\n"
                "    { \"clocks\": [ { \"domain\": \"frames_ms\", \"ts\": 5000 },\n"
                "                    { \"domain\": \"monotonic\", \"ts\": 5000250000 } ] },\n"
                "    { \"clocks\": [ { \"domain\": \"gpu0\", \"ts\": 100000 },\n"
                "                    { \"domain\": \"monotonic\", \"ts\": 7000000 } ] },\n"
                "    { \"clocks\": [ { \"domain\": \"x11\", \"ts\": 7 },\n"
                "                    { \"domain\": \"monotonic\", \"ts\": 7000000 },\n"
                "                    { \"domain\": \"clock128 \\u00e9\", \"ts\": -5 } ] } ] }\n";
        static const Case cases[] = {
                { NEAREST, "frames_ms", "monotonic", 5001, 0, 5001250000, 1000 },
                { NEAREST, "gpu0", "monotonic", 100100, 0, 7005208, 6 + 1 + 1 },
                /* A truncated ms reading is [x, x + 1) ms, read as its middle +-0.5 ms (as live reads
                 * it): x11 7 at monotonic 7000000 puts X's 7.5 ms at 7000000 +-0.5 ms. So 8 (8.5 ms)
                 * is 8000000 +- (0.5 ms of its own + 0.5 ms of the reading + 1 ms at 1000 ppm); it
                 * was +-2001000 when each truncation counted a whole ms. */
                { NEAREST, "x11", "monotonic", 8, 0, 8000000, 1001000 },
                /* monotonic 8999999 is X time 9.499999 ms +-0.5 ms +- 999 ns: x11 9, which means
                 * [9, 10) ms, as live answers; the bound is the instant's (it was 8 +-2001999) */
                { NEAREST, "monotonic", "x11", 8999999, 0, 9, 502000 },
                { NEAREST, "clock128 \xc3\xa9", "monotonic", 0, 0, 7000005, 1 },
        };
        struct timeconv_snapshots *s = load("units", units);
        char path[4096];
        struct timeconv_error e = { .line = 99 };
        int64_t v;
        int r;

        check_cases("units", s, cases, N(cases));
        timeconv_snapshots_free(s);

        s = NULL;
        snprintf(path, sizeof(path), "%s/client-snapshots.json", data_dir);
        r = timeconv_snapshots_load(path, &s, &e);
        is_int(r, 0, "tests/client-lib/data/client-snapshots.json loads");
        is_int(e.line, 99, "and the error is not written on success");
        r = timeconv_snapshots_convert(s, NEAREST, "custom", "boottime", 3503, &v, NULL);
        ok(r == 0 && v == 7703, "its custom 3503 is boottime 7703 (%d, %" PRId64 ")", r, v);
        is_int(timeconv_snapshots_convert(s, NEAREST, "custom", "island_a", 1, &v, NULL), -ENOLINK,
               "an island has no path");
        timeconv_snapshots_free(s);

        s = load("no snapshots at all", "{\"snapshots\": []}");
        is_int(timeconv_snapshots_count_domains(s), 0, "has no domain");
        is_int(timeconv_snapshots_convert(s, NEAREST, "a", "b", 1, &v, NULL), -ENOENT,
               "and converts nothing");
        timeconv_snapshots_free(s);
}

typedef struct Bad {
        const char *json;
        unsigned line, column;
        const char *message;
} Bad;

static void check_bad(const char *json, size_t size, unsigned line, unsigned column,
                      const char *message) {
        struct timeconv_snapshots *s = (struct timeconv_snapshots *) 1;
        struct timeconv_error e = { 0 };
        int r = timeconv_snapshots_load_buffer(json, size, &s, &e);
        bool pass = r == -EBADMSG && s == (struct timeconv_snapshots *) 1 && e.line == line &&
                    (column == ANY ? e.column > 0 : e.column == column) && strncmp(e.message, message, strlen(message)) == 0;

        ok(pass, "refused at %u:%u: %s", line, column, message);
        if (!pass)
                diag("got %d, %u:%u: %s", r, e.line, e.column, e.message);
}

static void test_malformed(void) {
        static const Bad bad[] = {
                { "{\"snapshots\": [\n  {\"clocks\": [}\n]}", 2, 15, "invalid JSON" },
                { "", 1, 0, "invalid JSON" },
                { "{\"snapshots\": [], \"snapshots\": []}", 1, ANY, "invalid JSON: duplicate object key" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 99999999999999999999}]}]}",
                  1, ANY, "invalid JSON: too big integer" },
                { "[]", 1, 1, "not a JSON object" },
                { "{}", 1, 1, "missing \"snapshots\"" },
                { "{\"snapshots\": [], \"extra\": 1}", 1, 28, "extra: unknown key" },
                { "{\"snapshots\": {}}", 1, 15, "snapshots: not an array" },
                { "{\"snapshots\": [\n  7\n]}", 2, 3, "snapshots[0]: not an object" },
                { "{\"snapshots\": [ {} ]}", 1, 17, "snapshots[0]: missing \"clocks\"" },
                { "{\"snapshots\": [ {\"clocks\": [{\"domain\": \"a\", \"ts\": 1}]} ]}", 1, 28,
                  "snapshots[0].clocks: not an array of two clocks or more" },
                { "{\"snapshots\": [ {\"clocks\": [{\"domain\": \"a\", \"ts\": 1}, 5]} ]}", 1, 55,
                  "snapshots[0].clocks[1]: not an object" },
                { "{ \"snapshots\": [\n"
                  "  { \"clocks\": [ { \"domain\": \"a\", \"ts\": 1 }, { \"domain\": \"b\", \"ts\": 2 } ] },\n"
                  "  { \"clocks\": [ { \"domain\": \"a\", \"ts\": 1 },\n"
                  "                  { \"domain\": \"b\", \"ts\": \"2\" } ] } ] }",
                  4, 42, "snapshots[1].clocks[1].ts: not an integer" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 1.5}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 50, "snapshots[0].clocks[0].ts: not an integer" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\"}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 28, "snapshots[0].clocks[0]: missing \"ts\"" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 1, \"unc_ns\": -1}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, ANY, "snapshots[0].clocks[0].unc_ns: not an integer from 0 to 2^58" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 1, \"unc_ns\": 1.5}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, ANY, "snapshots[0].clocks[0].unc_ns: not an integer from 0 to 2^58" },
                { "{\"snapshots\": [{\"clocks\": [{\"ts\": 1}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 28, "snapshots[0].clocks[0]: missing \"domain\"" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": 3, \"ts\": 1}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 39, "snapshots[0].clocks[0].domain: not a string" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"\", \"ts\": 1}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 39, "snapshots[0].clocks[0].domain: empty domain name" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\\nb\", \"ts\": 1}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 39, "snapshots[0].clocks[0].domain: control character" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 1}, {\"domain\": \"a\", \"ts\": 2}]}]}",
                  1, 54, "snapshots[0].clocks[1]: domain \"a\" twice in one snapshot" },
                { "{\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 1, \"x\": 0}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  1, 58, "snapshots[0].clocks[0].x: unknown key" },
                { "{\"domains\": 1, \"snapshots\": []}", 1, 13, "domains: not an array" },
                { "{\"domains\": [{\"unit\": \"ms\"}], \"snapshots\": []}", 1, 14, "domains[0]: missing \"name\"" },
                { "{\"domains\": [{\"name\": \"g\", \"unit\": \"furlong\"}], \"snapshots\": []}", 1, 36,
                  "domains[0].unit: unknown unit" },
                { "{\"domains\": [{\"name\": \"g\", \"unit\": \"ticks\"}], \"snapshots\": []}", 1, 14,
                  "domains[0]: unit \"ticks\" needs \"period_ns\"" },
                { "{\"domains\": [{\"name\": \"g\", \"unit\": \"ms\", \"period_ns\": 1000}], \"snapshots\": []}",
                  1, 55, "domains[0].period_ns: contradicts the unit \"ms\"" },
                { "{\"domains\": [{\"name\": \"g\", \"period_ns\": -1}], \"snapshots\": []}", 1, 41,
                  "domains[0].period_ns: not a number > 0" },
                { "{\"domains\": [{\"name\": \"g\", \"wrap_bits\": 65}], \"snapshots\": []}", 1, 41,
                  "domains[0].wrap_bits: not an integer from 0 to 64" },
                { "{\"domains\": [{\"name\": \"g\"}, {\"name\": \"g\"}], \"snapshots\": []}", 1, 29,
                  "domains[1]: domain \"g\" declared twice" },
                { "{\"domains\": [{\"name\": \"m\", \"unit\": \"ms\"}], \"snapshots\": [\n"
                  "  {\"clocks\": [{\"domain\": \"m\", \"ts\": 9223372036854775}, {\"domain\": \"b\", \"ts\": 1}]}]}",
                  2, 37, "snapshots[0].clocks[0].ts: out of range for the domain's unit" },
        };
        char name64[256], *big;
        size_t n;

        for (size_t i = 0; i < N(bad); i++)
                check_bad(bad[i].json, strlen(bad[i].json), bad[i].line, bad[i].column, bad[i].message);

        snprintf(name64, sizeof(name64), "{\"snapshots\": [{\"clocks\": [{\"domain\": \"%064d\", "
                 "\"ts\": 1}, {\"domain\": \"b\", \"ts\": 1}]}]}", 0);
        check_bad(name64, strlen(name64), 1, 39,
                  "snapshots[0].clocks[0].domain: domain name longer than 63 bytes");

        /* 257 domains, declared; then 1,000,001 snapshots (cheap ones: the count is checked
         * before any element). */
        big = malloc(4 * 1000 * 1000 + 100);
        if (!big)
                return;
        n = (size_t) sprintf(big, "{\"domains\": [");
        for (int i = 0; i < 257; i++)
                n += (size_t) sprintf(big + n, "%s{\"name\": \"d%03d\"}", i ? "," : "", i);
        n += (size_t) sprintf(big + n, "], \"snapshots\": []}");
        check_bad(big, n, 1, 14 + 256 * 17, "domains[256]: more than 256 domains");
        n = (size_t) sprintf(big, "{\"snapshots\": [0");
        for (int i = 0; i < 1000000; i++)
                n += (size_t) sprintf(big + n, ",0");
        n += (size_t) sprintf(big + n, "]}");
        check_bad(big, n, 1, 15, "snapshots: more than 1000000 snapshots");
        free(big);
}

static void test_api(void) {
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error e = { 0 };
        int64_t v;

        ok(timeconv_snapshots_free(NULL) == NULL, "free(NULL) is NULL");
        ok(strcmp(timeconv_version(), TIMECONV_VERSION) == 0, "version is %s", TIMECONV_VERSION);
        is_int(timeconv_snapshots_load("/nonexistent/file.json", &s, &e), -ENOENT,
               "a missing file is -ENOENT");
        ok(e.line == 0 && strstr(e.message, "cannot open"), "with a message and no position (%s)",
           e.message);
        is_int(timeconv_snapshots_load(NULL, &s, NULL), -EINVAL, "NULL path");
        is_int(timeconv_snapshots_load_buffer("{}", 2, NULL, NULL), -EINVAL, "NULL ret");
        is_int(timeconv_snapshots_load_buffer("{}", 2, &s, NULL), -EBADMSG, "a NULL ret_error is fine");
        ok(!s, "and nothing was returned");
        is_int(timeconv_snapshots_convert(NULL, NEAREST, "a", "b", 1, &v, NULL), -EINVAL,
               "converting with NULL snapshots");
        ok(strcmp(timeconv_strerror(-ENOLINK), "no path between the domains") == 0 &&
           strcmp(timeconv_strerror(-ENOENT), "unknown domain") == 0 &&
           strcmp(timeconv_strerror(-EPERM), "unexpected error") == 0, "strerror texts");
}

/* The unit names timeconvd writes (export, ListDomains: "tick", "frame") load, with a period. */
static void test_unit_names(void) {
        static const char json[] =
                "{ \"domains\": [ { \"name\": \"gpu0\", \"unit\": \"tick\", \"period_ns\": 52.083, \"wrap_bits\": 0 },\n"
                "               { \"name\": \"msc\", \"unit\": \"frame\", \"period_ns\": 16666666.5, \"truncates\": true } ],\n"
                "  \"snapshots\": [ { \"clocks\": [ { \"domain\": \"gpu0\", \"ts\": 1000 }, { \"domain\": \"monotonic\", \"ts\": 5000000 },\n"
                "                                { \"domain\": \"msc\", \"ts\": 10 } ] } ] }";
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error e;
        int64_t v, u;

        is_int(timeconv_snapshots_load_buffer(json, sizeof(json) - 1, &s, &e), 0, "units \"tick\" and \"frame\" load");
        ok(timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "gpu0", "monotonic", 1000, &v, &u) == 0 && v == 5000000,
           "gpu0 -> monotonic at the snapshot (%" PRId64 ")", v);
        ok(timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "monotonic", "msc", 5000000, &v, &u) == 0 && v == 10,
           "monotonic -> msc at the snapshot");
        timeconv_snapshots_free(s);
}

/* "unc_ns", as timeconvd exports it: every answer through the snapshot carries it. */
static void test_reading_uncertainty(void) {
        static const char text[] = "{\"snapshots\":["
                "{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1000,\"unc_ns\":40},"
                "{\"domain\":\"boottime\",\"ts\":2000,\"unc_ns\":2}]}]}";
        static const Case cases[] = {
                { NEAREST, "monotonic", "boottime", 1000, 0, 2000, 42 },
                { NEAREST, "boottime", "monotonic", 3000, 0, 2000, 43 },
        };
        struct timeconv_snapshots *s = load("unc_ns", text);

        check_cases("unc_ns", s, cases, sizeof(cases) / sizeof(cases[0]));
        timeconv_snapshots_free(s);
}

/* Two machines' exports related through realtime, which both keep on UTC within 1 ms of each
 * other: machine 0's realtime is UTC, machine 1's is 0.3 ms ahead of it. An answer across the
 * machines holds the truth and carries the stated bound; without a shared reading there is no path. */
static void test_machines(void) {
        static const char a[] =
                "{ \"snapshots\": [\n"
                "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 1000000000 },\n"
                "                  { \"domain\": \"realtime\", \"ts\": 1000000000000000000 } ] },\n"
                "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 2000000000 },\n"
                "                  { \"domain\": \"realtime\", \"ts\": 1000000001000000000 } ] } ] }\n";
        static const char b[] =
                "{ \"snapshots\": [\n"
                "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 5000000000 },\n"
                "                  { \"domain\": \"realtime\", \"ts\": 1000000000000300000 } ] },\n"
                "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 6000000000 },\n"
                "                  { \"domain\": \"realtime\", \"ts\": 1000000001000300000 } ] } ] }\n";
        const struct timeconv_snapshot_source sources[] = {
                { a, sizeof(a) - 1, 0 }, { b, sizeof(b) - 1, 1 },
        }, two_zero[] = { { a, sizeof(a) - 1, 0 }, { b, sizeof(b) - 1, 0 } };
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error e = { 0 };
        int64_t v = 0, unc = 0;
        bool named = false;
        int r;

        r = timeconv_snapshots_load_machines(sources, 2, "realtime", 1000000, &s, &e);
        ok(r == 0 && s, "machines: two exports load as one set (%s)", e.message);
        for (size_t i = 0; s && i < timeconv_snapshots_count_domains(s); i++)
                named |= strcmp(timeconv_snapshots_domain_name(s, i), "m1:monotonic") == 0;
        ok(named, "machines: machine 1's clocks are m1:NAME");
        for (int mode = 0; s && mode < 2; mode++) {
                /* m1's monotonic 6 s is UTC 1e18 + 1 s, machine 0's monotonic 2 s */
                r = timeconv_snapshots_convert(s, mode, "m1:monotonic", "monotonic", 6000000000, &v, &unc);
                ok(r == 0 && llabs(v - 2000000000) <= unc && unc >= 1000000 && unc <= 1002000,
                   "machines (%s): m1:monotonic 6000000000 -> monotonic %" PRId64 " +-%" PRId64
                   ": holds 2000000000, carries the stated 1 ms", mode ? "drift" : "nearest", v, unc);
                r = timeconv_snapshots_convert(s, mode, "monotonic", "m1:monotonic", 1000000000, &v, &unc);
                ok(r == 0 && llabs(v - 5000000000) <= unc && unc >= 1000000 && unc <= 1002000,
                   "machines (%s): and back, monotonic 1000000000 -> m1:monotonic %" PRId64 " +-%" PRId64,
                   mode ? "drift" : "nearest", v, unc);
        }
        timeconv_snapshots_free(s);
        s = NULL;

        /* the bound from the files: each kernel's maxerror, as timeconvd exports it on realtime;
         * machine 0's nearest reading is 0.3 ms away, grown by 500 us/s: 150 ns */
        {
                static const char a_utc[] =
                        "{ \"snapshots\": [\n"
                        "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 1000000000 },\n"
                        "                  { \"domain\": \"realtime\", \"ts\": 1000000000000000000,\n"
                        "                    \"utc_maxerror_ns\": 400000, \"utc_esterror_ns\": 20000 } ] },\n"
                        "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 2000000000 },\n"
                        "                  { \"domain\": \"realtime\", \"ts\": 1000000001000000000,\n"
                        "                    \"utc_maxerror_ns\": 400000, \"utc_esterror_ns\": 20000 } ] } ] }\n";
                static const char b_utc[] =
                        "{ \"snapshots\": [\n"
                        "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 5000000000 },\n"
                        "                  { \"domain\": \"realtime\", \"ts\": 1000000000000300000,\n"
                        "                    \"utc_maxerror_ns\": 200000, \"utc_esterror_ns\": 10000 } ] },\n"
                        "  { \"clocks\": [ { \"domain\": \"monotonic\", \"ts\": 6000000000 },\n"
                        "                  { \"domain\": \"realtime\", \"ts\": 1000000001000300000,\n"
                        "                    \"utc_maxerror_ns\": 200000, \"utc_esterror_ns\": 10000 } ] } ] }\n";
                /* machine 1 first in the list: machine 0's maxerror is needed first all the same */
                const struct timeconv_snapshot_source utc[] = { { b_utc, sizeof(b_utc) - 1, 1 },
                                                                { a_utc, sizeof(a_utc) - 1, 0 } };

                r = timeconv_snapshots_load_machines(utc, 2, "realtime", TIMECONV_SHARED_BOUND_FROM_FILES, &s, &e);
                if (r == 0)
                        r = timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "m1:monotonic", "monotonic",
                                                       6000000000, &v, &unc);
                ok(r == 0 && llabs(v - 2000000000) <= unc && unc >= 600150 && unc <= 602000,
                   "machines: the bound from the files' maxerror: %" PRId64 " +-%" PRId64 " (0.4 + 0.2 ms)", v, unc);
                timeconv_snapshots_free(s);
                s = NULL;
                r = timeconv_snapshots_load_machines(sources, 2, "realtime", TIMECONV_SHARED_BOUND_FROM_FILES, &s, &e);
                ok(r == 0 && timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "m1:monotonic", "monotonic",
                                                        6000000000, &v, &unc) == -ENOLINK,
                   "machines: files that do not say their maxerror relate nothing by it");
                timeconv_snapshots_free(s);
                s = NULL;
        }

        r = timeconv_snapshots_load_machines(sources, 2, "tai", 1000000, &s, &e);
        ok(r == 0 && timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "m1:monotonic", "monotonic", 6000000000,
                                                &v, &unc) == -ENOLINK,
           "machines: no reading of the shared clock, no path between them");
        timeconv_snapshots_free(s);
        s = NULL;
        r = timeconv_snapshots_load_machines(two_zero, 2, "realtime", 1000000, &s, &e);
        ok(r == -EINVAL, "machines: two files of machine 0 are refused (%s)", e.message);
        is_int(timeconv_snapshots_load_machines(sources, 2, "realtime", -2, &s, &e), -EINVAL,
               "machines: a negative bound is refused");
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 1, "DATA_DIR");
        test_reading_uncertainty();
        test_perfetto_examples();
        test_good_files(argv[1]);
        test_malformed();
        test_api();
        test_unit_names();
        test_machines();
        return done_testing();
}
