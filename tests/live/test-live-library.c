/* SPDX-License-Identifier: MIT */

/* libtimeconv against the real timeconvd on a private bus: the domain list, conversions and
 * now() against the truth read from the kernel here (the target clock before and after the
 * source), convert_many, ids, the named errors, and the two paths: each answers, and the
 * shared table and D-Bus agree within their bounds; a handle whose daemon, then bus, went away
 * gets a named error from every call.
 * usage: test-live-library TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "timeconv.h"

#define CALLS 2000
#define MANY 5000
/* Attempts at a comparison no publication falls into (one is enough unless the daemon publishes). */
#define MANY_TRIES 20

static const struct timeconv_domain *find(struct timeconv_domain **list, const char *name) {
        for (struct timeconv_domain **d = list; *d; d++)
                if (strcmp(timeconv_domain_get_name(*d), name) == 0)
                        return *d;
        return NULL;
}

static void check_domains(struct timeconv *tc) {
        struct timeconv_domain **list = NULL;
        const struct timeconv_domain *mono, *raw, *boot;
        Bracket b;
        int r;

        r = timeconv_list_domains(tc, &list);
        is_int(r, 0, "timeconv_list_domains() answers");
        if (r < 0)
                return;
        mono = find(list, "monotonic");
        raw = find(list, "monotonic_raw");
        boot = find(list, "boottime");
        ok(mono && raw && boot, "it lists monotonic, monotonic_raw and boottime");
        if (mono && raw && boot) {
                ok(strcmp(timeconv_domain_get_unit(mono), "ns") == 0 && strcmp(timeconv_domain_get_reference(mono), "monotonic_raw") == 0 &&
                   (timeconv_domain_get_flags(mono) & TIMECONV_DOMAIN_AVAILABLE) && (timeconv_domain_get_flags(mono) & TIMECONV_DOMAIN_MONOTONIC) &&
                   timeconv_domain_get_perfetto_id(mono) == 3 && timeconv_domain_get_wrap_bits(mono) == 64 && timeconv_domain_get_last_calibrated_ns(mono) > 0,
                   "monotonic: ns, against monotonic_raw, available, monotonic, Perfetto id 3, calibrated");
                ok(strcmp(timeconv_domain_get_reference(raw), "monotonic_raw") == 0 && timeconv_domain_get_uncertainty_ns(raw) == 0 &&
                   timeconv_domain_get_perfetto_id(raw) == 5, "monotonic_raw is its own reference, exactly");
                ok((timeconv_domain_get_flags(mono) & TIMECONV_DOMAIN_HAS_OFFSET) && timeconv_domain_get_offset_ns(mono) == 0,
                   "monotonic's offset to CLOCK_MONOTONIC is 0");
                /* boottime - monotonic is constant while nothing suspends: the kernel's own figure
                 * must lie within the two bounds. */
                bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
                ok((timeconv_domain_get_flags(boot) & TIMECONV_DOMAIN_HAS_OFFSET) &&
                   bracket_holds(timeconv_domain_get_offset_ns(boot), timeconv_domain_get_uncertainty_ns(boot) + timeconv_domain_get_uncertainty_ns(mono),
                                 b.to_lo_ns - b.from_ns, b.to_hi_ns - b.from_ns),
                   "boottime's offset %" PRIi64 " +- %" PRIu64 " ns holds the kernel's [%" PRIi64 ", %" PRIi64 "]",
                   timeconv_domain_get_offset_ns(boot), timeconv_domain_get_uncertainty_ns(boot) + timeconv_domain_get_uncertainty_ns(mono), b.to_lo_ns - b.from_ns,
                   b.to_hi_ns - b.from_ns);
        }
        list = timeconv_domains_free(list);
        ok(!list, "timeconv_domains_free() returns NULL");
}

/* CALLS conversions of now from -> to; the truth within the bound every time. */
static void check_truth(struct timeconv *tc, const char *from, clockid_t from_id, const char *to,
                        clockid_t to_id, const char *label) {
        int failed = 0, outside = 0, last_r = 0;

        for (int i = 0; i < CALLS; i++) {
                int64_t v, u;
                Bracket b;
                int r;

                bracket_read(from_id, to_id, &b);
                r = timeconv_convert(tc, from, to, b.from_ns, &v, &u);
                if (r < 0) {
                        failed++;
                        last_r = r;
                        continue;
                }
                if (u < 0 || !bracket_holds(v, (uint64_t) u, b.to_lo_ns, b.to_hi_ns))
                        if (outside++ < 3)
                                diag("%s %" PRIi64 " -> %s %" PRIi64 " +- %" PRIi64 ", truth in [%" PRIi64
                                     ", %" PRIi64 "]", from, b.from_ns, to, v, u, b.to_lo_ns, b.to_hi_ns);
        }
        ok(failed == 0, "%s: every conversion %s -> %s succeeds (last error %d)", label, from, to, last_r);
        ok(outside == 0, "%s: %s -> %s: the truth lies within the bound %d of %d times", label, from, to,
           CALLS - failed - outside, CALLS - failed);
}

static void check_now(struct timeconv *tc, const char *label) {
        int outside = 0, failed = 0;

        for (int i = 0; i < CALLS; i++) {
                int64_t lo = clock_now_ns(CLOCK_MONOTONIC), v, u, hi;

                if (timeconv_now(tc, "monotonic", &v, &u) < 0) {
                        failed++;
                        continue;
                }
                hi = clock_now_ns(CLOCK_MONOTONIC);
                outside += !bracket_holds(v, (uint64_t) u, lo, hi);
        }
        ok(failed == 0 && outside == 0, "%s: now(monotonic) lies within its bound of the test's reading "
           "(%d failed, %d outside)", label, failed, outside);
}

static void check_many(struct timeconv *tc, int64_t start_ns) {
        int64_t *values = calloc(MANY, sizeof(int64_t)), *out = calloc(MANY, sizeof(int64_t));
        int64_t *u = calloc(MANY, sizeof(int64_t)), end_ns, off_lo, off_hi, v1 = 0, v2, u1;
        int outside = 0, r, r2, tries;
        bool same;
        Bracket b;

        if (!values || !out || !u)
                abort();
        end_ns = clock_now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < MANY; i++)
                values[i] = start_ns + (end_ns - start_ns) * i / MANY;
        bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
        off_lo = b.to_lo_ns - b.from_ns;
        off_hi = b.to_hi_ns - b.from_ns;

        r = timeconv_convert_many(tc, "monotonic", "boottime", values, MANY, out, u);
        is_int(r, 0, "convert_many() of 5000 past values answers");
        for (int i = 0; r >= 0 && i < MANY; i++)
                outside += !bracket_holds(out[i], (uint64_t) u[i], values[i] + off_lo, values[i] + off_hi);
        ok(r >= 0 && outside == 0, "each within its bound of the kernel's boottime (%d outside)", outside);
        /* The daemon may publish a new record at any time (it recalibrates as it likes): the
         * answers are compared when convert() gave the same one just before and just after. */
        for (tries = 1, same = false; tries <= MANY_TRIES && !same; tries++) {
                r = timeconv_convert(tc, "monotonic", "boottime", values[MANY / 2], &v1, &u1);
                r2 = timeconv_convert_many(tc, "monotonic", "boottime", values, MANY, out, u);
                same = timeconv_convert(tc, "monotonic", "boottime", values[MANY / 2], &v2, &u1) >= 0 &&
                       r >= 0 && r2 >= 0 && v1 == v2;
        }
        ok(same && out[MANY / 2] == v1, "convert_many() and convert() give the same answer (%lld and %lld, "
           "after %d tries)", (long long) out[MANY / 2], (long long) v1, tries - 1);

        memcpy(out, values, MANY * sizeof(int64_t));
        r = timeconv_convert_many(tc, "monotonic", "boottime", out, MANY, out, NULL);
        r2 = timeconv_convert(tc, "monotonic", "boottime", values[MANY / 2], &v1, &u1);
        ok(r >= 0 && r2 >= 0 && (out[MANY / 2] == v2 || out[MANY / 2] == v1),
           "convert_many() in place, without uncertainties");
        is_int(timeconv_convert_many(tc, "monotonic", "boottime", NULL, 0, NULL, NULL), 0,
               "convert_many() of nothing is fine");
        is_int(timeconv_convert_many(tc, "monotonic", "nope", values, 3, out, u), -ENOENT,
               "convert_many() to an unknown domain: -ENOENT");
        free(values);
        free(out);
        free(u);
}

static void check_errors_and_ids(struct timeconv *tc) {
        int64_t v = 12345, u, v2;
        unsigned a, b, a2;

        is_int(timeconv_convert(tc, "monotonic", "nope", 1, &v, &u), -ENOENT, "an unknown domain: -ENOENT");
        is_int(v, 12345, "and ret_value is untouched");
        is_int(timeconv_convert(tc, "Not A Name", "monotonic", 1, &v, &u), -EINVAL,
               "a malformed name: -EINVAL (InvalidArgs)");
        ok(timeconv_last_error_message(tc) && strstr(timeconv_last_error_message(tc), "argument 'from'"),
           "with the daemon's words: %s", timeconv_last_error_message(tc) ?: "(none)");
        is_int(timeconv_now(tc, "nope", &v, &u), -ENOENT, "now() of an unknown domain: -ENOENT");
        ok(timeconv_last_error_message(tc) && strstr(timeconv_last_error_message(tc), "nope") &&
           !strstr(timeconv_last_error_message(tc), "argument 'from'"),
           "a failure after a failure: its own words, not the earlier ones (%s)",
           timeconv_last_error_message(tc) ?: "(none)");
        is_int(timeconv_convert(tc, "monotonic", NULL, 1, &v, &u), -EINVAL, "a NULL name: -EINVAL");
        ok(!timeconv_last_error_message(tc),
           "a failure found in this process after one of the daemon's: no stale message (%s)",
           timeconv_last_error_message(tc) ?: "(none)");
        is_int(timeconv_convert(NULL, "monotonic", "boottime", 1, &v, &u), -EINVAL, "a NULL handle: -EINVAL");
        ok(strcmp(timeconv_strerror(-EHOSTDOWN), "timeconvd is not running") == 0,
           "timeconv_strerror() names -EHOSTDOWN");

        ok(timeconv_domain_id(tc, "monotonic", &a) == 0 && timeconv_domain_id(tc, "boottime", &b) == 0 &&
           timeconv_domain_id(tc, "monotonic", &a2) == 0 && a == a2 && a != b,
           "domain ids: one per name");
        ok(timeconv_convert_id(tc, a, b, 1000000000, &v, &u) == 0 &&
           timeconv_convert(tc, "monotonic", "boottime", 1000000000, &v2, &u) == 0 && v == v2,
           "convert_id() answers as convert() does");
        is_int(timeconv_convert_id(tc, a, 9999, 1, &v, &u), -EINVAL, "an id never given: -EINVAL");
        is_int(timeconv_domain_id(tc, "0123456789012345678901234567890123456789012345678901234567890123", &a),
               -EINVAL, "a name of 64 bytes: -EINVAL");
        ok(timeconv_now_id(tc, b, &v, &u) == 0 && v > 0, "now_id() answers");
        {
                struct timeconv_pair pair;
                int64_t v3 = 0, u2 = 0, u3 = 0;

                ok(timeconv_pair_get(tc, "monotonic", "boottime", &pair) == 0 && pair.tc == tc &&
                   pair.from == a2 && pair.to == b, "pair_get(): the two ids");
                ok(timeconv_pair_convert(&pair, 1000000000, &v, &u) == 0 &&
                   (timeconv_pair_convert)(&pair, 1000000000, &v2, &u2) == 0 &&
                   timeconv_convert_id(tc, a2, b, 1000000000, &v3, &u3) == 0 && v == v3 && v2 == v3 &&
                   u == u3 && u2 == u3, "pair_convert(), inline and out of line, answers as convert_id()");
                is_int((timeconv_pair_convert)(NULL, 1, &v, &u), -EINVAL, "a NULL pair: -EINVAL");
                is_int(timeconv_pair_convert(NULL, 1, &v, &u), -EINVAL, "inline too");
                is_int(timeconv_pair_get(tc, "monotonic", NULL, &pair), -EINVAL, "pair_get() of a NULL name: -EINVAL");
        }
}

/* Each path on its own, and the two against each other at the same instants. */
static void check_paths(struct timeconv *tc) {
        int r, disagree = 0, outside = 0, failed = 0;
        int64_t v, u;

        is_int(timeconv_set_paths(tc, 0), -EINVAL, "set_paths(0): -EINVAL");
        is_int(timeconv_set_paths(tc, TIMECONV_PATH_DBUS), 0, "set_paths(DBUS)");
        r = timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        ok(r == 0 && timeconv_last_path(tc) == TIMECONV_PATH_DBUS, "D-Bus only: D-Bus answered");
        check_truth(tc, "monotonic", CLOCK_MONOTONIC, "realtime", CLOCK_REALTIME, "D-Bus");

        timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        r = timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        ok(r == 0 && timeconv_last_path(tc) == TIMECONV_PATH_TABLE, "table only: the table answered (%d)", r);
        {
                const char *before, *after;

                /* A refusal in the daemon's words, then a failure the table answers. */
                timeconv_set_paths(tc, TIMECONV_PATH_DBUS);
                r = timeconv_convert(tc, "monotonic", "no_such_domain", 1, &v, &u);
                before = timeconv_last_error_message(tc);
                ok(r == -ENOENT && before && strstr(before, "no_such_domain"),
                   "over D-Bus, an unknown domain comes with the daemon's words (%d, %s)", r, before ?: "(none)");
                timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
                r = timeconv_convert(tc, "monotonic", "no_such_domain", 1, &v, &u);
                after = timeconv_last_error_message(tc);
                ok(r < 0 && !after, "the same failure answered from the table: no stale message (%d, %s)", r,
                   after ?: "(none)");
        }
        check_truth(tc, "monotonic", CLOCK_MONOTONIC, "boottime", CLOCK_BOOTTIME, "table");
        check_truth(tc, "realtime", CLOCK_REALTIME, "monotonic", CLOCK_MONOTONIC, "table");
        check_now(tc, "table");

        for (int i = 0; i < CALLS; i++) {
                int64_t vt, ut, vd, ud;
                Bracket b;

                bracket_read(CLOCK_MONOTONIC, CLOCK_REALTIME, &b);
                timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
                r = timeconv_convert(tc, "monotonic", "realtime", b.from_ns, &vt, &ut);
                timeconv_set_paths(tc, TIMECONV_PATH_DBUS);
                if (r >= 0)
                        r = timeconv_convert(tc, "monotonic", "realtime", b.from_ns, &vd, &ud);
                if (r < 0) {
                        failed++;
                        continue;
                }
                /* Two honest intervals around one truth must meet. */
                disagree += (vt > vd ? vt - vd : vd - vt) > ut + ud;
                outside += !bracket_holds(vt, (uint64_t) ut, b.to_lo_ns, b.to_hi_ns) ||
                           !bracket_holds(vd, (uint64_t) ud, b.to_lo_ns, b.to_hi_ns);
        }
        ok(failed == 0 && disagree == 0 && outside == 0,
           "table and D-Bus agree within their bounds and both hold the truth (%d failed, %d apart, %d outside)",
           failed, disagree, outside);
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
        r = timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        ok(r == 0 && timeconv_last_path(tc) == TIMECONV_PATH_TABLE, "by default the table answers");
}

/* Every call of a handle whose daemon, then whose bus, went away fails with an error that
 * timeconv_strerror() names: -EHOSTDOWN, then -ECONNRESET. Over D-Bus only, so that no table
 * mapped before can answer for a daemon that is gone. */
static void check_each_call(struct timeconv *tc, int want, const char *when) {
        struct timeconv_reading readings[2] = { { "monotonic", 1 }, { "audio5", 2 } };
        struct timeconv_domain **domains = NULL;
        int64_t v = 0, u = 0, values[2] = { 1, 2 }, outs[2], bounds[2];
        char *json = NULL;
        int r[6];

        r[0] = timeconv_now(tc, "monotonic", &v, &u);
        r[1] = timeconv_convert(tc, "monotonic", "boottime", 1, &v, &u);
        r[2] = timeconv_convert_many(tc, "monotonic", "boottime", values, 2, outs, bounds);
        r[3] = timeconv_list_domains(tc, &domains);
        r[4] = timeconv_export_snapshots(tc, &json);
        r[5] = timeconv_push_snapshot(tc, readings, 2);
        for (size_t i = 0; i < 6; i++)
                ok(r[i] == want && strcmp(timeconv_strerror(r[i]), "unexpected error") != 0,
                   "%s: call %zu fails with %d, \"%s\" (want %d)", when, i, r[i], timeconv_strerror(r[i]), want);
        ok(!domains && !json, "%s: no list, no export", when);
}

static void check_gone(Harness *h) {
        struct timeconv *tc = NULL;
        struct pollfd p = { .fd = h->bus_pidfd, .events = POLLIN };
        int64_t v, u;

        is_int(timeconv_open_address(h->bus_address, &tc), 0, "a handle");
        is_int(timeconv_set_paths(tc, TIMECONV_PATH_DBUS), 0, "over D-Bus");
        is_int(timeconv_now(tc, "monotonic", &v, &u), 0, "it answers");
        is_int(harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, NULL, NULL), 0, "the daemon stops");
        check_each_call(tc, -EHOSTDOWN, "the daemon gone");
        ok(kill(h->bus_pid, SIGTERM) == 0 && poll(&p, 1, HARNESS_STOP_TIMEOUT_MS) == 1, "the bus goes away");
        check_each_call(tc, -ECONNRESET, "the bus gone");
        ok(timeconv_process(tc) == -ECONNRESET, "timeconv_process() too: -ECONNRESET");
        timeconv_free(tc);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        struct timeconv *tc = NULL;
        int64_t start_ns;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        ok(timeconv_open_address("unix:path=/nonexistent/timeconv-test-bus", &tc) < 0 && !tc,
           "opening a bus that is not there fails, *ret untouched");
        ok(timeconv_free(NULL) == NULL, "timeconv_free(NULL) is NULL");

        r = harness_new(NULL, &h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return done_testing();
        r = timeconv_open_address(h->bus_address, &tc);
        is_int(r, 0, "timeconv_open_address() on the private bus");
        if (r < 0)
                return done_testing();
        is_int(timeconv_now(tc, "monotonic", &start_ns, NULL), -EHOSTDOWN, "no daemon yet: -EHOSTDOWN");
        is_int(timeconv_last_path(tc), TIMECONV_PATH_NONE, "no path has answered yet");

        r = harness_start_timeconvd(h, argv[1], NULL);
        is_int(r, 0, "timeconvd starts and says READY=1");
        if (r < 0)
                return done_testing();
        /* Past values from here on: the daemon has a model for them. */
        start_ns = clock_now_ns(CLOCK_MONOTONIC);

        check_domains(tc);
        check_truth(tc, "monotonic", CLOCK_MONOTONIC, "boottime", CLOCK_BOOTTIME, "default");
        check_truth(tc, "realtime", CLOCK_REALTIME, "monotonic_raw", CLOCK_MONOTONIC_RAW, "default");
        ok(timeconv_last_path(tc) != TIMECONV_PATH_NONE, "the handle says which path answered");
        check_now(tc, "default");
        check_many(tc, start_ns);
        check_errors_and_ids(tc);
        check_paths(tc);

        tc = timeconv_free(tc);
        ok(harness_daemon_alive(h), "the daemon still runs");
        check_gone(h);
        return done_testing();
}
