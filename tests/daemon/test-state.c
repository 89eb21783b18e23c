/* SPDX-License-Identifier: MIT */

/* The state file's text (daemon/state.c): a round trip keeps every field bit for bit, and
 * every damaged or hostile variant is refused whole, with its named error, leaving the
 * caller's state untouched. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "tap.h"

static State *example(void) {
        State *s = calloc(1, sizeof(*s));

        strcpy(s->boot_id, "0b6a3c5e-4a41-4c1e-9d1c-6d2f8a0f9e11");
        s->domains[0] = (StateDomain) { .name = "monotonic", .source = "posix", .unit = UNIT_NS,
                                        .rate_ppb = -12345, .rate_uncertainty_ppb = 3, .span_ns = INT64_C(600000000000) };
        s->domains[1] = (StateDomain) { .name = "x11", .source = "x11", .device = "x11_display=:0;",
                                        .unit = UNIT_MS_X11, .rate_ppb = 7, .rate_uncertainty_ppb = 2000000,
                                        .span_ns = 0, .verdict = "identity" };
        s->domains[2] = (StateDomain) { .name = "gpu0", .source = "vulkan",
                                        .device = "device_name=llvmpipe (LLVM 15.0.6, 256 bits);pci_bus_id=0000:01:00.0;",
                                        .unit = { .period_ns = 1000.0 / 19.2, .wrap_bits = 36 },
                                        .rate_ppb = 2000000, .rate_uncertainty_ppb = 0, .span_ns = INT64_MAX };
        s->n_domains = 3;
        return s;
}

static bool domain_equal(const StateDomain *a, const StateDomain *b) {
        return strcmp(a->name, b->name) == 0 && strcmp(a->source, b->source) == 0 &&
               strcmp(a->device, b->device) == 0 && a->unit.period_ns == b->unit.period_ns &&
               a->unit.wrap_bits == b->unit.wrap_bits && a->unit.truncates == b->unit.truncates &&
               a->unit.events == b->unit.events &&
               a->unit.encoding == b->unit.encoding && a->rate_ppb == b->rate_ppb &&
               a->rate_uncertainty_ppb == b->rate_uncertainty_ppb && a->span_ns == b->span_ns &&
               strcmp(a->verdict, b->verdict) == 0;
}

static void test_round_trip(void) {
        State *s = example(), *back = calloc(1, sizeof(*back));
        StateError error = {};
        char *text = NULL;
        bool same;

        ok(state_format(s, &text) == 0, "a state formats");
        ok(state_parse(text, strlen(text), back, &error) == 0, "and parses back (%s)", error.code ?: "ok");
        same = back->n_domains == s->n_domains && strcmp(back->boot_id, s->boot_id) == 0;
        for (size_t i = 0; same && i < s->n_domains; i++)
                same = domain_equal(&s->domains[i], &back->domains[i]);
        ok(same, "every field comes back, the GPU period bit for bit");

        s->domains[2].unit.period_ns = NAN;
        free(text);
        text = NULL;
        is_int(state_format(s, &text), -EINVAL, "a NaN period is not written");
        s->domains[2].unit.period_ns = 1.0;
        strcpy(s->domains[1].name, "two words");
        is_int(state_format(s, &text), -EINVAL, "nor anything the parser would refuse");
        ok(!text, "and nothing is returned");
        free(s);
        free(back);
}

/* A valid file with one substitution: the text of a domain entry in the middle. */
#define DOMAIN_OK "\"name\": \"monotonic\", \"source\": \"posix\", \"device\": \"\", " \
        "\"unit\": { \"period_ns\": 1.0, \"wrap_bits\": 0, \"truncates\": false, \"encoding\": \"plain\" }, " \
        "\"rate_ppb\": 1234, \"rate_uncertainty_ppb\": 8, \"span_ns\": 600000000000, \"verdict\": \"\""
#define FILE_WITH(domain) "{ \"version\": 1, \"boot_id\": \"b\", \"domains\": [ { " domain " } ] }"
#define UNIT_WITH(unit) FILE_WITH("\"name\": \"m\", \"source\": \"posix\", \"device\": \"\", \"unit\": " unit \
        ", \"rate_ppb\": 1, \"rate_uncertainty_ppb\": 8, \"span_ns\": 6, \"verdict\": \"\"")
#define RATE_WITH(rate) FILE_WITH("\"name\": \"m\", \"source\": \"posix\", \"device\": \"\", " \
        "\"unit\": { \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": false, \"encoding\": \"plain\" }, " \
        "\"rate_ppb\": " rate ", \"rate_uncertainty_ppb\": 8, \"span_ns\": 6, \"verdict\": \"\"")
#define NAME_WITH(name) FILE_WITH("\"name\": " name ", \"source\": \"posix\", \"device\": \"\", " \
        "\"unit\": { \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": false, \"encoding\": \"plain\" }, " \
        "\"rate_ppb\": 1, \"rate_uncertainty_ppb\": 8, \"span_ns\": 6, \"verdict\": \"\"")

static const struct {
        const char *what, *text, *code;
} hostile[] = {
        { "an empty file", "", "syntax" },
        { "only whitespace", " \n\t ", "syntax" },
        { "binary junk", "\x7f" "ELF\x02\x01\x01", "syntax" },
        { "a NUL byte", "{\"version\": 1,\0 \"boot_id\": \"\", \"domains\": []}", "syntax" },
        { "an array", "[]", "type" },
        { "a number", "1", "syntax" },
        { "version 2", "{ \"version\": 2, \"boot_id\": \"\", \"domains\": [] }", "version" },
        { "version as a string", "{ \"version\": \"1\", \"boot_id\": \"\", \"domains\": [] }", "type" },
        { "no version", "{ \"boot_id\": \"\", \"domains\": [] }", "type" },
        { "no domains", "{ \"version\": 1, \"boot_id\": \"\" }", "missing" },
        { "an unknown key", "{ \"version\": 1, \"boot_id\": \"\", \"domains\": [], \"x\": 0 }", "unknown-key" },
        { "a duplicate key", "{ \"version\": 1, \"version\": 1, \"boot_id\": \"\", \"domains\": [] }", "syntax" },
        { "domains an object", "{ \"version\": 1, \"boot_id\": \"\", \"domains\": {} }", "type" },
        { "a domain a string", "{ \"version\": 1, \"boot_id\": \"\", \"domains\": [ \"m\" ] }", "type" },
        { "a boot id of 64 bytes", "{ \"version\": 1, \"boot_id\": \""
          "0123456789012345678901234567890123456789012345678901234567890123\", \"domains\": [] }", "range" },
        { "a domain without a rate", FILE_WITH("\"name\": \"m\""), "missing" },
        { "a domain with an extra key", FILE_WITH(DOMAIN_OK ", \"evil\": true"), "unknown-key" },
        { "two domains of one name", "{ \"version\": 1, \"boot_id\": \"\", \"domains\": [ { " DOMAIN_OK " }, { "
          DOMAIN_OK " } ] }", "duplicate" },
        { "a huge rate (integer overflow)", RATE_WITH("99999999999999999999999"), "syntax" },
        { "a huge rate (real overflow)", RATE_WITH("1e400"), "syntax" },
        { "a rate as a real", RATE_WITH("1e30"), "type" },
        { "a rate of 3000 ppm", RATE_WITH("3000000"), "range" },
        { "a rate of INT64_MIN", RATE_WITH("-9223372036854775808"), "range" },
        { "NaN", RATE_WITH("NaN"), "syntax" },
        { "Infinity", RATE_WITH("Infinity"), "syntax" },
        { "\"nan\" as a string", RATE_WITH("\"nan\""), "type" },
        { "a rate of null", RATE_WITH("null"), "type" },
        { "a rate of true", RATE_WITH("true"), "type" },
        { "a negative uncertainty", FILE_WITH("\"name\": \"m\", \"source\": \"posix\", \"device\": \"\", "
          "\"unit\": { \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": false, \"encoding\": \"plain\" }, "
          "\"rate_ppb\": 1, \"rate_uncertainty_ppb\": -8, \"span_ns\": 6, \"verdict\": \"\""), "range" },
        { "a negative span", FILE_WITH("\"name\": \"m\", \"source\": \"posix\", \"device\": \"\", "
          "\"unit\": { \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": false, \"encoding\": \"plain\" }, "
          "\"rate_ppb\": 1, \"rate_uncertainty_ppb\": 8, \"span_ns\": -6, \"verdict\": \"\""), "range" },
        { "a period of 0", UNIT_WITH("{ \"period_ns\": 0, \"wrap_bits\": 0, \"truncates\": false, \"encoding\": \"plain\" }"),
          "range" },
        { "a negative period", UNIT_WITH("{ \"period_ns\": -1.5, \"wrap_bits\": 0, \"truncates\": false, "
          "\"encoding\": \"plain\" }"), "range" },
        { "a period of 1e300", UNIT_WITH("{ \"period_ns\": 1e300, \"wrap_bits\": 0, \"truncates\": false, "
          "\"encoding\": \"plain\" }"), "range" },
        { "a denormal period", UNIT_WITH("{ \"period_ns\": 4e-320, \"wrap_bits\": 0, \"truncates\": false, "
          "\"encoding\": \"plain\" }"), "range" },
        { "a period as a string", UNIT_WITH("{ \"period_ns\": \"1\", \"wrap_bits\": 0, \"truncates\": false, "
          "\"encoding\": \"plain\" }"), "type" },
        { "65 wrap bits", UNIT_WITH("{ \"period_ns\": 1, \"wrap_bits\": 65, \"truncates\": false, "
          "\"encoding\": \"plain\" }"), "range" },
        { "truncates as 1", UNIT_WITH("{ \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": 1, "
          "\"encoding\": \"plain\" }"), "type" },
        { "an unknown encoding", UNIT_WITH("{ \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": false, "
          "\"encoding\": \"ebcdic\" }"), "range" },
        { "a unit as an array", UNIT_WITH("[ 1, 0 ]"), "type" },
        { "an empty name", NAME_WITH("\"\""), "range" },
        { "a name with a space", NAME_WITH("\"a b\""), "name" },
        { "a name with a control byte", NAME_WITH("\"a\\u0001\""), "name" },
        { "a name with a NUL", NAME_WITH("\"a\\u0000b\""), "syntax" },
        { "a name with UTF-8", NAME_WITH("\"\xc3\xa9t\xc3\xa9\""), "name" },
        { "a name with invalid UTF-8", NAME_WITH("\"\xff\xfe\""), "syntax" },
        { "a name of 100 bytes", NAME_WITH("\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""),
          "range" },
        { "a name as a number", NAME_WITH("7"), "type" },
};

static void test_hostile(void) {
        State *s = calloc(1, sizeof(*s));
        char *valid = NULL;

        for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
                StateError error = {};
                size_t len = strlen(hostile[i].text);
                int r;

                /* The NUL case: parse past the NUL. */
                if (strcmp(hostile[i].what, "a NUL byte") == 0)
                        len = sizeof("{\"version\": 1,\0 \"boot_id\": \"\", \"domains\": []}") - 1;
                s->n_domains = 12345;
                r = state_parse(hostile[i].text, len, s, &error);
                ok(r == -EBADMSG && error.code && strcmp(error.code, hostile[i].code) == 0 && s->n_domains == 12345,
                   "%s: refused as \"%s\" (%d, %s: %s)", hostile[i].what, hostile[i].code, r, error.code ?: "-",
                   error.text);
        }

        /* A valid file cut anywhere is never accepted. */
        {
                State *e = example();
                size_t refused = 0, len;

                state_format(e, &valid);
                len = strlen(valid);
                for (size_t cut = 0; cut < len - 1; cut++)
                        refused += state_parse(valid, cut, s, NULL) == -EBADMSG;
                is_int(refused, len - 1, "every truncation of a valid file is refused");
                free(e);
        }
        free(valid);
        free(s);
}

static void test_limits(void) {
        State *s = calloc(1, sizeof(*s));
        size_t big = STATE_FILE_SIZE_MAX + 1, n = 0;
        char *text = malloc(big + 1), *many;
        StateError error = {};

        memset(text, ' ', big);
        text[0] = '{';
        text[big - 1] = '}';
        is_int(state_parse(text, big, s, &error), -EFBIG, "a file over the size limit is -EFBIG");
        ok(error.code && strcmp(error.code, "too-large") == 0, "named too-large");

        /* Deep nesting within the limit: jansson's depth limit, not our stack, ends it. */
        memset(text, '[', STATE_FILE_SIZE_MAX);
        ok(state_parse(text, STATE_FILE_SIZE_MAX, s, &error) == -EBADMSG && strcmp(error.code, "syntax") == 0,
           "256 KiB of '[' is a syntax error, without a crash");

        many = malloc(STATE_FILE_SIZE_MAX);
        n += (size_t) sprintf(many, "{ \"version\": 1, \"boot_id\": \"\", \"domains\": [");
        for (int i = 0; i <= STATE_DOMAINS_MAX; i++)
                n += (size_t) sprintf(many + n, "%s{ \"name\": \"d%d\", \"source\": \"posix\", \"device\": \"\", "
                                      "\"unit\": { \"period_ns\": 1, \"wrap_bits\": 0, \"truncates\": false, "
                                      "\"encoding\": \"plain\" }, \"rate_ppb\": 1, \"rate_uncertainty_ppb\": 8, "
                                      "\"span_ns\": 6, \"verdict\": \"\" }", i ? ", " : "", i);
        n += (size_t) sprintf(many + n, "] }");
        ok(state_parse(many, n, s, &error) == -EBADMSG && strcmp(error.code, "too-many") == 0,
           "%d domains are too many", STATE_DOMAINS_MAX + 1);
        free(many);
        free(text);
        free(s);
}

int main(void) {
        test_round_trip();
        test_hostile();
        test_limits();
        return done_testing();
}
