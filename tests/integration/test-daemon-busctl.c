/* SPDX-License-Identifier: MIT */

/* timeconvd through busctl, a client nobody here wrote, on a private bus: ListDomains,
 * introspection with argument names, a Convert checked against the truth read here, an
 * unknown domain's error name as busctl sees it on the wire, the properties.
 * usage: test-daemon-busctl TIMECONVD VERSION */

#define _GNU_SOURCE
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"

#define BUSCTL_TIMEOUT_MS 30000
#define SERVICE_ARGS BUS_API_SERVICE, BUS_API_OBJECT

/* The contract (org.timeconv.Clock1.xml): each member, busctl's table columns, and the
 * arguments as "direction:type:name" ("-" for a signal's direction). */
static const struct {
        const char *member, *kind, *signature, *result;
        const char *args[6];
} api[] = {
        { "ListDomains", "method", "-", "a(ssa{sv})", { "out:a(ssa{sv}):domains" } },
        { "Convert", "method", "ssx", "xt",
          { "in:s:from", "in:s:to", "in:x:value", "out:x:value", "out:t:uncertainty_ns" } },
        { "ConvertMany", "method", "ssax", "axat",
          { "in:s:from", "in:s:to", "in:ax:values", "out:ax:values", "out:at:uncertainty_ns" } },
        { "ConvertManyMemfd", "method", "ssht", "-", { "in:s:from", "in:s:to", "in:h:memfd", "in:t:count" } },
        { "Now", "method", "s", "xt", { "in:s:domain", "out:x:value", "out:t:uncertainty_ns" } },
        { "ExportSnapshots", "method", "-", "s", { "out:s:json" } },
        { "Discontinuity", "signal", "sxxs", "-",
          { "-:s:domain", "-:x:monotonic_ns", "-:x:step_ns", "-:s:kind" } },
        { "DomainsChanged", "signal", "asasas", "-", { "-:as:added", "-:as:removed", "-:as:changed" } },
        { "Version", "property", "s", NULL, { NULL } },
        { "ReferenceDomain", "property", "s", "\"monotonic_raw\"", { NULL } },
};

/* What ListDomains must say of the POSIX domains (DESIGN.md: Perfetto's builtin ids). */
static const struct {
        const char *name;
        int perfetto_id;
        bool reference;
} posix_domains[] = {
        { "monotonic", 3, false },
        { "boottime", 6, false },
        { "monotonic_raw", 5, true },
        { "realtime", 1, false },
};

static const struct {
        const char *key, *type;
} always_present[] = {
        { "available", "b" }, { "reference", "s" }, { "resolution_ns", "t" }, { "wrap_bits", "u" },
        { "monotonic", "b" }, { "rate_ppb", "x" }, { "uncertainty_ns", "t" },
        { "last_calibrated_ns", "x" }, { "perfetto_id", "u" },
};

static int busctl(const Harness *h, const char *const *argv, const char *const *env, char **ret_out,
                  char **ret_err) {
        int status = -1, r;

        r = harness_run(h, argv, env, BUSCTL_TIMEOUT_MS, ret_out, ret_err, &status);
        if (r < 0)
                return r;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void check_list_domains(const Harness *h) {
        const char *plain[] = { "busctl", "--user", "call", SERVICE_ARGS, BUS_API_INTERFACE, "ListDomains", NULL };
        const char *json[] = { "busctl", "--user", "--json=short", "call", SERVICE_ARGS, BUS_API_INTERFACE,
                               "ListDomains", NULL };
        _cleanup_free_ char *out = NULL, *out_json = NULL;
        json_t *root, *list;
        size_t n_checked = 0, bad_entries = 0;

        is_int(busctl(h, plain, NULL, &out, NULL), 0, "busctl call ListDomains succeeds");
        ok(out && strncmp(out, "a(ssa{sv}) ", 11) == 0 && strstr(out, "\"monotonic\" \"ns\"") &&
           strstr(out, "\"boottime\" \"ns\""), "busctl's ListDomains lists monotonic and boottime, in ns");

        is_int(busctl(h, json, NULL, &out_json, NULL), 0, "busctl --json call ListDomains succeeds");
        root = json_loads(out_json ? out_json : "", 0, NULL);
        list = json_array_get(json_object_get(root, "data"), 0);
        ok(json_is_array(list) && json_array_size(list) >= 4, "its JSON holds an array of domains");
        for (size_t i = 0; i < json_array_size(list); i++) {
                json_t *d = json_array_get(list, i), *props = json_array_get(d, 2);
                const char *name = json_string_value(json_array_get(d, 0));

                for (size_t k = 0; k < sizeof(always_present) / sizeof(always_present[0]); k++) {
                        json_t *p = json_object_get(props, always_present[k].key);

                        if (!json_is_string(json_object_get(p, "type")) ||
                            strcmp(json_string_value(json_object_get(p, "type")), always_present[k].type) != 0) {
                                if (bad_entries++ < 5)
                                        diag("domain %s: \"%s\" missing or not of type %s", name ? name : "?",
                                             always_present[k].key, always_present[k].type);
                        }
                }
                for (size_t k = 0; name && k < sizeof(posix_domains) / sizeof(posix_domains[0]); k++) {
                        json_t *id = json_object_get(json_object_get(props, "perfetto_id"), "data");
                        json_t *ref = json_object_get(json_object_get(props, "reference"), "data");

                        if (strcmp(name, posix_domains[k].name) != 0)
                                continue;
                        n_checked++;
                        ok(json_integer_value(id) == posix_domains[k].perfetto_id &&
                           strcmp(json_string_value(ref) ?: "", "monotonic_raw") == 0 &&
                           strcmp(json_string_value(json_array_get(d, 1)) ?: "", "ns") == 0,
                           "%s: unit ns, perfetto_id %d, calibrated against monotonic_raw", name,
                           posix_domains[k].perfetto_id);
                }
        }
        is_int(bad_entries, 0, "every domain has every always-present property, with its type");
        is_int(n_checked, sizeof(posix_domains) / sizeof(posix_domains[0]), "all four POSIX domains are listed");
        json_decref(root);
}

/* The value of attribute key in the element [start, end), or "-". */
static void xml_attr(const char *start, const char *end, const char *key, char *buf, size_t size) {
        char pattern[32];
        const char *p, *q;

        snprintf(pattern, sizeof(pattern), " %s=\"", key);
        p = strstr(start, pattern);
        if (!p || p >= end || !(q = strchr(p + strlen(pattern), '"')) || q >= end) {
                snprintf(buf, size, "-");
                return;
        }
        p += strlen(pattern);
        snprintf(buf, size, "%.*s", (int) (q - p), p);
}

/* Whether the <method> or <signal> element named member has exactly the arguments expected. */
static bool xml_member_matches(const char *xml, const char *kind, const char *member, const char *const *args) {
        char open[128], close[32];
        const char *start, *end, *p;
        size_t i = 0;

        snprintf(open, sizeof(open), "<%s name=\"%s\">", kind, member);
        snprintf(close, sizeof(close), "</%s>", kind);
        start = strstr(xml, open);
        end = start ? strstr(start, close) : NULL;
        if (!end) {
                /* A member without arguments may be an empty element. */
                snprintf(open, sizeof(open), "<%s name=\"%s\"/>", kind, member);
                return args[0] == NULL && strstr(xml, open);
        }
        for (p = strstr(start, "<arg "); p && p < end; p = strstr(p + 1, "<arg ")) {
                const char *elem_end = strstr(p, "/>");
                char dir[16], type[32], name[64], got[128];

                if (!elem_end || elem_end > end)
                        return false;
                xml_attr(p, elem_end, "direction", dir, sizeof(dir));
                xml_attr(p, elem_end, "type", type, sizeof(type));
                xml_attr(p, elem_end, "name", name, sizeof(name));
                snprintf(got, sizeof(got), "%s:%s:%s", dir, type, name);
                if (i >= sizeof(api[0].args) / sizeof(api[0].args[0]) || !args[i] || strcmp(args[i], got) != 0) {
                        diag("%s %s: argument %zu is %s, want %s", kind, member, i, got, args[i] ?: "none");
                        return false;
                }
                i++;
        }
        return i == sizeof(api[0].args) / sizeof(api[0].args[0]) || !args[i];
}

/* Whether busctl's table has the line ".member kind signature result ...". */
static bool table_has(const char *table, const char *member, const char *kind, const char *signature,
                      const char *result) {
        for (const char *line = table; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                char m[128], k[32], s[64], v[128];

                if (sscanf(line, "%127s %31s %63s %127s", m, k, s, v) != 4)
                        continue;
                if (m[0] == '.' && strcmp(m + 1, member) == 0)
                        return strcmp(k, kind) == 0 && strcmp(s, signature) == 0 && (!result || strcmp(v, result) == 0);
        }
        return false;
}

static void check_introspect(const Harness *h, const char *version) {
        const char *table_argv[] = { "busctl", "--user", "--no-pager", "introspect", SERVICE_ARGS, NULL };
        const char *xml_argv[] = { "busctl", "--user", "--no-pager", "introspect", "--xml-interface",
                                   SERVICE_ARGS, NULL };
        _cleanup_free_ char *table = NULL, *xml = NULL, *quoted = NULL;

        is_int(busctl(h, table_argv, NULL, &table, NULL), 0, "busctl introspect succeeds");
        is_int(busctl(h, xml_argv, NULL, &xml, NULL), 0, "busctl introspect --xml-interface succeeds");
        if (asprintf(&quoted, "\"%s\"", version) < 0)
                quoted = NULL;
        for (size_t i = 0; i < sizeof(api) / sizeof(api[0]); i++) {
                const char *result = api[i].result ? api[i].result : quoted;

                ok(table && table_has(table, api[i].member, api[i].kind, api[i].signature, result),
                   "busctl introspect lists %s %s %s %s", api[i].kind, api[i].member, api[i].signature,
                   result ? result : "?");
                if (strcmp(api[i].kind, "property") != 0)
                        ok(xml && xml_member_matches(xml, api[i].kind, api[i].member, api[i].args),
                           "the introspection XML gives %s %s its arguments with their names", api[i].kind,
                           api[i].member);
        }
}

static void check_convert(const Harness *h) {
        _cleanup_free_ char *out = NULL, *err = NULL, *err_plain = NULL;
        char value[32];
        Bracket b;
        json_t *root, *data;
        const char *argv[] = { "busctl", "--user", "--json=short", "call", SERVICE_ARGS, BUS_API_INTERFACE,
                               "Convert", "ssx", "monotonic", "boottime", value, NULL };
        const char *bad[] = { "busctl", "--user", "call", SERVICE_ARGS, BUS_API_INTERFACE, "Convert", "ssx",
                              "nosuchclock", "boottime", "0", NULL };
        /* At debug level busctl logs every message it gets, error name included. */
        const char *debug_env[] = { "SYSTEMD_LOG_LEVEL=debug", NULL };

        bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
        snprintf(value, sizeof(value), "%" PRIi64, b.from_ns);
        is_int(busctl(h, argv, NULL, &out, NULL), 0, "busctl call Convert ssx monotonic boottime NOW succeeds");
        root = json_loads(out ? out : "", 0, NULL);
        data = json_object_get(root, "data");
        ok(json_is_integer(json_array_get(data, 0)) && json_is_integer(json_array_get(data, 1)) &&
           bracket_holds(json_integer_value(json_array_get(data, 0)),
                         (uint64_t) json_integer_value(json_array_get(data, 1)), b.to_lo_ns, b.to_hi_ns),
           "busctl's answer lies within its bound of the truth [%" PRIi64 ", %" PRIi64 "]", b.to_lo_ns,
           b.to_hi_ns);
        json_decref(root);

        ok(busctl(h, bad, debug_env, NULL, &err) == 1 && strstr(err, "Call failed:") &&
           strstr(err, "error-name=" BUS_ERROR_UNKNOWN_DOMAIN " "),
           "an unknown domain fails, and busctl receives %s", BUS_ERROR_UNKNOWN_DOMAIN);
        ok(busctl(h, bad, NULL, NULL, &err_plain) == 1 && strstr(err_plain, "nosuchclock"),
           "busctl's error message names the unknown domain");
        if (err_plain)
                diag("busctl said: %s", strtok(err_plain, "\n") ?: "");
}

static void check_properties(const Harness *h, const char *version) {
        const char *get_version[] = { "busctl", "--user", "get-property", SERVICE_ARGS, BUS_API_INTERFACE, "Version",
                                      NULL };
        const char *get_reference[] = { "busctl", "--user", "get-property", SERVICE_ARGS, BUS_API_INTERFACE,
                                        "ReferenceDomain", NULL };
        _cleanup_free_ char *out = NULL, *out_ref = NULL, *want = NULL;

        if (asprintf(&want, "s \"%s\"\n", version) < 0)
                want = NULL;
        is_int(busctl(h, get_version, NULL, &out, NULL), 0, "busctl get-property Version succeeds");
        ok(out && want && strcmp(out, want) == 0, "Version is \"%s\"", version);
        if (out && want && strcmp(out, want) != 0)
                diag("busctl said: %s", out);
        is_int(busctl(h, get_reference, NULL, &out_ref, NULL), 0, "busctl get-property ReferenceDomain succeeds");
        ok(out_ref && strcmp(out_ref, "s \"monotonic_raw\"\n") == 0, "ReferenceDomain is \"monotonic_raw\"");
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        int r;

        tap_args(argc, argv, 2, "TIMECONVD VERSION");
        tap_require_program("busctl", "systemd");

        r = harness_tap_start(argv[1], NULL, &h, NULL);
        if (r < 0)
                return done_testing();

        check_list_domains(h);
        check_introspect(h, argv[2]);
        check_convert(h);
        check_properties(h, argv[2]);
        ok(harness_daemon_alive(h), "the daemon still runs");
        return done_testing();
}
