/* SPDX-License-Identifier: MIT */

/* timeconvd over sd-bus on a private bus: conversions against the truth the test reads from
 * the kernel itself (the target clock read before and after the source), Now() against the
 * test's own bracket, and the named errors with the errno the shared map gives them.
 * usage: test-daemon-convert TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"

#define CALLS 1000
#define MANY BUS_API_CONVERT_MANY_MAX      /* one call at the limit */
/* A bound this loose still fails a daemon that hides its ignorance behind a huge
 * uncertainty: two kernel clocks read microseconds apart are known much better. */
#define SANE_UNCERTAINTY_NS INT64_C(1000000)

/* Pairs of POSIX domains with their own clocks; the first one gets CALLS calls. */
static const struct {
        const char *from, *to;
        int calls;
} pairs[] = {
        { "monotonic", "boottime", CALLS },
        { "boottime", "monotonic", 200 },
        { "monotonic", "realtime", 200 },
        { "realtime", "monotonic", 200 },
        { "monotonic_raw", "monotonic", 200 },
        { "monotonic", "monotonic_raw", 200 },
        { "boottime", "realtime", 200 },
        { "monotonic", "tai", 200 },
};

static void check_pair(sd_bus *bus, char **domains, const char *from, const char *to, int calls) {
        clockid_t from_id, to_id;
        int failed_calls = 0, outside = 0;
        uint64_t max_u = 0;
        int64_t worst_ns = 0;

        if (!clock_strv_contains(domains, from) || !clock_strv_contains(domains, to) ||
            clock_id_of_domain(from, &from_id) < 0 || clock_id_of_domain(to, &to_id) < 0) {
                skip("a domain of the pair is not listed (not on this kernel)");
                return;
        }
        for (int i = 0; i < calls; i++) {
                Bracket b;
                int64_t v;
                uint64_t u;

                bracket_read(from_id, to_id, &b);
                if (clock_convert(bus, from, to, b.from_ns, NULL, &v, &u) < 0) {
                        failed_calls++;
                        continue;
                }
                if (!bracket_holds(v, u, b.to_lo_ns, b.to_hi_ns)) {
                        if (outside++ < 3)
                                diag("%s %" PRIi64 " -> %s %" PRIi64 " +- %" PRIu64 ", truth in [%" PRIi64
                                     ", %" PRIi64 "]", from, b.from_ns, to, v, u, b.to_lo_ns, b.to_hi_ns);
                }
                if (u > max_u)
                        max_u = u;
                if (v < b.to_lo_ns && b.to_lo_ns - v > worst_ns)
                        worst_ns = b.to_lo_ns - v;
                if (v > b.to_hi_ns && v - b.to_hi_ns > worst_ns)
                        worst_ns = v - b.to_hi_ns;
        }
        diag("%s -> %s: largest uncertainty %" PRIu64 " ns, farthest from the truth %" PRIi64 " ns",
             from, to, max_u, worst_ns);
        is_int(failed_calls, 0, "every Convert call succeeds");
        ok(outside == 0, "Convert(%s, %s, now): the truth lies within the bound, %d of %d times", from, to,
           calls - failed_calls - outside, calls - failed_calls);
        ok(max_u <= SANE_UNCERTAINTY_NS, "Convert(%s, %s): uncertainty at most %" PRIi64 " ns", from, to,
           SANE_UNCERTAINTY_NS);
}

static void check_many(sd_bus *bus) {
        Bracket *b = calloc(MANY, sizeof(*b));
        int64_t *in = calloc(MANY, sizeof(*in)), *out = calloc(MANY, sizeof(*out));
        uint64_t *u = calloc(MANY, sizeof(*u));
        size_t n = 0, outside = 0;
        int r;

        if (!b || !in || !out || !u) {
                ok(false, "ConvertMany: out of memory");
                goto finish;
        }
        for (size_t i = 0; i < MANY; i++) {
                bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b[i]);
                in[i] = b[i].from_ns;
        }
        r = clock_convert_many(bus, "monotonic", "boottime", in, MANY, NULL, out, u, &n);
        is_int(r, 0, "ConvertMany of as many values as a call takes succeeds");
        is_int(n, MANY, "ConvertMany answers every value");
        for (size_t i = 0; i < n; i++)
                outside += !bracket_holds(out[i], u[i], b[i].to_lo_ns, b[i].to_hi_ns);
        ok(r >= 0 && outside == 0, "ConvertMany: each truth lies within its bound (%zu outside)", outside);

        r = clock_convert_many(bus, "monotonic", "boottime", NULL, 0, NULL, NULL, NULL, &n);
        ok(r >= 0 && n == 0, "ConvertMany of no values answers no values");
finish:
        free(b);
        free(in);
        free(out);
        free(u);
}

static void check_now(sd_bus *bus, const char *domain, clockid_t id) {
        int outside = 0, failed_calls = 0;

        for (int i = 0; i < 100; i++) {
                int64_t lo = clock_now_ns(id), v, hi;
                uint64_t u;

                if (clock_now(bus, domain, NULL, &v, &u) < 0) {
                        failed_calls++;
                        continue;
                }
                hi = clock_now_ns(id);
                if (!bracket_holds(v, u, lo, hi) && outside++ < 3)
                        diag("Now(%s) = %" PRIi64 " +- %" PRIu64 ", read in [%" PRIi64 ", %" PRIi64 "]",
                             domain, v, u, lo, hi);
        }
        ok(failed_calls == 0 && outside == 0, "Now(%s) lies within its bound of the test's reading", domain);
}

static void check_identity_and_round_trip(sd_bus *bus) {
        int64_t m = clock_now_ns(CLOCK_MONOTONIC), v = 0, back = 0;
        uint64_t u1 = 0, u2 = 0;
        int r;

        r = clock_convert(bus, "monotonic", "monotonic", m, NULL, &v, &u1);
        ok(r >= 0 && v == m, "Convert(monotonic, monotonic, v) is v");

        r = clock_convert(bus, "monotonic", "realtime", m, NULL, &v, &u1);
        if (r >= 0)
                r = clock_convert(bus, "realtime", "monotonic", v, NULL, &back, &u2);
        ok(r >= 0 && bracket_holds(back, u1 + u2 + 1, m, m),
           "monotonic -> realtime -> monotonic comes back within the two bounds");
}

/* Errors: method, arguments, the name and the errno the map gives. */
enum { CALL_CONVERT, CALL_NOW, CALL_MANY };

static const struct {
        int call;
        const char *from, *to;
        int64_t value;
        const char *error;
        int errno_;
} errors[] = {
        { CALL_CONVERT, "nosuchclock", "boottime", 0, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT },
        { CALL_CONVERT, "monotonic", "nosuchclock", 0, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT },
        { CALL_CONVERT, "monotonic", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0,
          BUS_ERROR_UNKNOWN_DOMAIN, ENOENT },
        { CALL_NOW, "nosuchclock", NULL, 0, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT },
        { CALL_MANY, "nosuchclock", "monotonic", 0, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT },
        { CALL_CONVERT, "monotonic", "realtime", INT64_MAX, BUS_ERROR_OUT_OF_RANGE, ERANGE },
        { CALL_CONVERT, "realtime", "monotonic", INT64_MIN, BUS_ERROR_OUT_OF_RANGE, ERANGE },
        { CALL_MANY, "monotonic", "realtime", INT64_MAX, BUS_ERROR_OUT_OF_RANGE, ERANGE },
        { CALL_CONVERT, "", "boottime", 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_CONVERT, "monotonic", "", 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_CONVERT, "Monotonic", "boottime", 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_CONVERT, "mono tonic", "boottime", 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_CONVERT, "monotonic", "b\xc3\xb6ottime", 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_CONVERT, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "boottime", 0,
          BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_NOW, "", NULL, 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_NOW, "now/", NULL, 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
        { CALL_MANY, "monotonic", "BOOTTIME", 0, BUS_ERROR_INVALID_ARGUMENT, EINVAL },
};

static void check_errors(sd_bus *bus) {
        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                int64_t v, many[2] = { 0, errors[i].value };
                uint64_t u, many_u[2];
                char call[256];
                size_t n;
                int r;

                if (errors[i].call == CALL_CONVERT)
                        r = clock_convert(bus, errors[i].from, errors[i].to, errors[i].value, &error, &v, &u);
                else if (errors[i].call == CALL_NOW)
                        r = clock_now(bus, errors[i].from, &error, &v, &u);
                else
                        r = clock_convert_many(bus, errors[i].from, errors[i].to, many, 2, &error, many, many_u, &n);
                if (errors[i].call == CALL_NOW)
                        snprintf(call, sizeof(call), "Now(\"%s\")", errors[i].from);
                else
                        snprintf(call, sizeof(call), "%s(\"%s\", \"%s\", %s%" PRIi64 "%s)",
                                 errors[i].call == CALL_CONVERT ? "Convert" : "ConvertMany", errors[i].from,
                                 errors[i].to, errors[i].call == CALL_MANY ? "[0, " : "", errors[i].value,
                                 errors[i].call == CALL_MANY ? "]" : "");
                ok(sd_bus_error_has_name(&error, errors[i].error) && r == -errors[i].errno_ &&
                   sd_bus_error_get_errno(&error) == errors[i].errno_,
                   "%s fails with %s, errno %s", call, errors[i].error, strerror(errors[i].errno_));
                if (!sd_bus_error_has_name(&error, errors[i].error))
                        diag("got r=%d %s: %s", r, error.name ? error.name : "(no error)",
                             error.message ? error.message : "");
        }
}

/* ConvertMany fails whole and says which value failed: the message differs with the index. */
static void check_many_index(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error e1 = SD_BUS_ERROR_NULL, e2 = SD_BUS_ERROR_NULL;
        int64_t a[3] = { 0, INT64_MAX, 0 }, b[3] = { 0, 0, INT64_MAX }, out[3];
        uint64_t u[3];
        size_t n;

        clock_convert_many(bus, "monotonic", "realtime", a, 3, &e1, out, u, &n);
        clock_convert_many(bus, "monotonic", "realtime", b, 3, &e2, out, u, &n);
        ok(e1.message && e2.message && strcmp(e1.message, e2.message) != 0,
           "ConvertMany's error names the failing index (\"%s\" / \"%s\")", e1.message ? e1.message : "",
           e2.message ? e2.message : "");

        {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                size_t big = BUS_API_CONVERT_MANY_MAX + 1;
                int64_t *v = calloc(big, sizeof(int64_t));
                int r = v ? clock_convert_many(bus, "monotonic", "boottime", v, big, &e, v, NULL, &n) : -ENOMEM;

                ok(r == -EINVAL && sd_bus_error_has_name(&e, BUS_ERROR_INVALID_ARGUMENT),
                   "ConvertMany of %zu values fails with InvalidArgs", big);
                free(v);
        }
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(clock_strv_freep) char **domains = NULL;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_tap_start(argv[1], NULL, &h, &bus);
        if (r >= 0)
                r = clock_list_domains(bus, &domains);
        is_int(r, 0, "ListDomains answers");
        if (r < 0)
                return done_testing();
        ok(clock_strv_contains(domains, "monotonic") && clock_strv_contains(domains, "monotonic_raw") &&
           clock_strv_contains(domains, "boottime") && clock_strv_contains(domains, "realtime"),
           "ListDomains lists monotonic, monotonic_raw, boottime and realtime");

        for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
                check_pair(bus, domains, pairs[i].from, pairs[i].to, pairs[i].calls);
        check_many(bus);
        check_now(bus, "monotonic", CLOCK_MONOTONIC);
        check_now(bus, "boottime", CLOCK_BOOTTIME);
        check_now(bus, "realtime", CLOCK_REALTIME);
        check_identity_and_round_trip(bus);
        check_errors(bus);
        check_many_index(bus);
        ok(harness_daemon_alive(h), "the daemon still runs");
        return done_testing();
}
