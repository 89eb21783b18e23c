/* SPDX-License-Identifier: MIT */

/* Application clocks on the real timeconvd, with several client connections on a private bus:
 * a client pushes snapshots of a synthetic clock whose truth the test knows; anyone converts to
 * and from it within the bound (D-Bus and libtimeconv's shared table); another client can
 * neither push to it nor take its name; it disappears when its owner leaves, and its name is
 * free again; a series that goes backwards makes a target only (Perfetto's rule).
 * usage: test-appclocks-daemon TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "appclocks-client.h"
#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"
#include "timeconv.h"

#define WAIT_MS 10000
#define SNAPSHOT_STEP_NS INT64_C(50000000)

/* Both ways at n points step_ns apart from r_from_ns (the known domain's time): the truth lies
 * within every bound; within the snapshots' span the bound is at most max_in_span_ns. */
static void check_both_ways(sd_bus *bus, const char *known, const char *app, const AcTruth *t, int64_t r_from_ns,
                            int64_t span_end_ns, uint64_t max_in_span_ns, const char *what) {
        int failed = 0, outside = 0;
        uint64_t max_u = 0;

        for (int i = 0; i < 40; i++) {
                int64_t r_ns = r_from_ns + i * (SNAPSHOT_STEP_NS / 2), x_ns = ac_truth_x(t, r_ns), v;
                uint64_t u, u_back;

                if (clock_convert(bus, known, app, r_ns, NULL, &v, &u) < 0) {
                        failed++;
                        continue;
                }
                if (!ac_holds(v, u, x_ns) && outside++ < 3)
                        diag("%s %" PRIi64 " -> %s %" PRIi64 " +- %" PRIu64 ", truth %" PRIi64, known, r_ns, app, v,
                             u, x_ns);
                if (clock_convert(bus, app, known, x_ns, NULL, &v, &u_back) < 0) {
                        failed++;
                        continue;
                }
                if (!ac_holds(v, u_back, r_ns) && outside++ < 3)
                        diag("%s %" PRIi64 " -> %s %" PRIi64 " +- %" PRIu64 ", truth %" PRIi64, app, x_ns, known, v,
                             u_back, r_ns);
                if (r_ns <= span_end_ns && (u > max_u || u_back > max_u))
                        max_u = u > u_back ? u : u_back;
        }
        ok(failed == 0 && outside == 0, "%s: %s <-> %s, 80 conversions, the truth within every bound "
           "(%d failed, %d outside)", what, known, app, failed, outside);
        ok(max_u <= max_in_span_ns, "%s: within the snapshots the bound is %" PRIu64 " ns (at most %" PRIu64 ")",
           what, max_u, max_in_span_ns);
}

static void check_owner(sd_bus *observer, const char *name, sd_bus *owner_bus, const char *what) {
        const char *unique = NULL;
        AcDomain d;

        (void) sd_bus_get_unique_name(owner_bus, &unique);
        ok(ac_domain(observer, name, &d) >= 0 && d.found && d.available && d.monotonic && unique &&
           strcmp(d.owner, unique) == 0, "%s: ListDomains shows '%s', available, monotonic, owner %s (%s)", what,
           name, unique ? unique : "?", d.owner);
}

static void test_lifecycle(const Harness *h, sd_bus *observer, AcSignals *sig) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *a = NULL, *b = NULL, *c = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t r_first_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) - INT64_C(1000000000);
        const AcTruth cam = { r_first_ns, INT64_C(5000000000000), 20000 };
        const AcTruth reborn = { r_first_ns, INT64_C(9000000000000), -7000 };
        int64_t mono_first_ns = clock_now_ns(CLOCK_MONOTONIC) - INT64_C(1000000000), v, v2, before_ns, after_ns;
        const AcTruth mic = { mono_first_ns, INT64_C(-3000000000), -50000 };
        int64_t span_ns = 9 * SNAPSHOT_STEP_NS;
        unsigned changes = sig->domains_changed;
        uint64_t u, u2;
        int r;

        if (harness_connect(h, &a) < 0 || harness_connect(h, &b) < 0 || harness_connect(h, &c) < 0) {
                ok(false, "three more clients connect");
                return;
        }
        is_int(ac_push_series(a, "monotonic_raw", "cam", &cam, r_first_ns, SNAPSHOT_STEP_NS, 10), 10,
               "client A pushes 10 snapshots of a new domain 'cam' against monotonic_raw");
        is_int(ac_wait(observer, &sig->domains_changed, changes, WAIT_MS), 0, "another client hears DomainsChanged");
        is_int(ac_wait_listed(observer, sig, "cam", true, WAIT_MS), 0, "and finds 'cam' in ListDomains");
        check_owner(observer, "cam", a, "after A's first snapshots");
        check_both_ways(observer, "monotonic_raw", "cam", &cam, r_first_ns - SNAPSHOT_STEP_NS,
                        r_first_ns + span_ns, 100, "cam");

        before_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        r = clock_now(observer, "cam", NULL, &v, &u);
        after_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        ok(r >= 0 && bracket_holds(v, u, ac_truth_x(&cam, before_ns) - 2, ac_truth_x(&cam, after_ns) + 2),
           "Now(cam) +- %" PRIu64 " ns holds the truth of the call's time", u);

        is_int(ac_push_series(b, "monotonic", "mic", &mic, mono_first_ns, SNAPSHOT_STEP_NS, 10), 10,
               "client B pushes 10 snapshots of 'mic' against monotonic");
        /* monotonic's own model, 1 s back, widens the boxes: a looser bound, still honest (on a
         * loaded machine the first second's model of monotonic can be a few ms wide). */
        check_both_ways(observer, "monotonic", "mic", &mic, mono_first_ns - SNAPSHOT_STEP_NS, mono_first_ns + span_ns,
                        10000000, "mic");
        {
                /* monotonic read before and after 'mic': a bracket, the honest form of a snapshot. */
                int64_t m_ns = mono_first_ns + 10 * SNAPSHOT_STEP_NS;
                const BusClockReading clocks[] = {
                        { "monotonic", m_ns - 400 }, { "mic", ac_truth_x(&mic, m_ns) }, { "monotonic", m_ns + 400 },
                };

                is_int(ac_push(b, clocks, 3, NULL), 0, "B pushes a snapshot that brackets 'mic' with monotonic");
        }

        /* Nobody else may touch cam. */
        r = clock_convert(observer, "monotonic_raw", "cam", r_first_ns + 3 * SNAPSHOT_STEP_NS, NULL, &v, &u);
        check_error("B pushes to A's 'cam'", ac_push2(b, "monotonic_raw", r_first_ns + span_ns + 1, "cam", 0, &e), &e,
                    BUS_ERROR_NAME_TAKEN, EEXIST, "clocks[1] 'cam': the domain belongs to another client");
        ok(r >= 0 && clock_convert(observer, "monotonic_raw", "cam", r_first_ns + 3 * SNAPSHOT_STEP_NS, NULL, &v2, &u2) >= 0 &&
           v == v2 && u == u2, "cam converts as before");
        check_owner(observer, "cam", a, "after B's attempt");
        check_error("B names only the daemon's domains", ac_push2(b, "monotonic", 1, "boottime", 2, &e), &e,
                    BUS_ERROR_INVALID_ARGUMENT, EINVAL, "no application domain");

        /* A leaves: cam goes, mic stays. */
        changes = sig->domains_changed;
        a = sd_bus_flush_close_unref(a);
        is_int(ac_wait(observer, &sig->domains_changed, changes, WAIT_MS), 0, "A leaves: DomainsChanged");
        is_int(ac_wait_listed(observer, sig, "cam", false, WAIT_MS), 0, "ListDomains no longer lists 'cam'");
        check_error("Convert from the departed 'cam'", clock_convert(observer, "cam", "monotonic_raw", 1, &e, &v, &u),
                    &e, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT, "unknown domain 'cam'");
        check_error("Now of the departed 'cam'", clock_now(observer, "cam", &e, &v, &u), &e, BUS_ERROR_UNKNOWN_DOMAIN,
                    ENOENT, NULL);
        check_owner(observer, "mic", b, "B's 'mic' stays");

        /* The name is free: C's cam is another clock. */
        is_int(ac_push_series(c, "monotonic_raw", "cam", &reborn, r_first_ns, SNAPSHOT_STEP_NS, 10), 10,
               "client C makes a new 'cam'");
        check_owner(observer, "cam", c, "the new 'cam'");
        check_both_ways(observer, "monotonic_raw", "cam", &reborn, r_first_ns, r_first_ns + span_ns, 100,
                        "the new cam (A's snapshots forgotten)");

        /* The table path: libtimeconv in this process, table only. */
        {
                struct timeconv *tc = NULL;
                int64_t r_ns = r_first_ns + 4 * SNAPSHOT_STEP_NS, tv, tu, failed = 0, outside = 0;

                r = timeconv_open_address(h->bus_address, &tc);
                if (r >= 0)
                        r = timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
                is_int(r, 0, "libtimeconv opens the bus, shared table only");
                for (int i = 0; r >= 0 && i < 20; i++, r_ns += SNAPSHOT_STEP_NS / 4) {
                        if (timeconv_convert(tc, "monotonic_raw", "cam", r_ns, &tv, &tu) < 0 ||
                            timeconv_last_path(tc) != TIMECONV_PATH_TABLE)
                                failed++;
                        else if (!ac_holds(tv, (uint64_t) tu, ac_truth_x(&reborn, r_ns)))
                                outside++;
                        if (timeconv_convert(tc, "cam", "monotonic_raw", ac_truth_x(&reborn, r_ns), &tv, &tu) < 0)
                                failed++;
                        else if (!ac_holds(tv, (uint64_t) tu, r_ns))
                                outside++;
                        if (timeconv_convert(tc, "mic", "monotonic", ac_truth_x(&mic, r_ns - r_first_ns + mono_first_ns),
                                             &tv, &tu) < 0)
                                failed++;
                        else if (!ac_holds(tv, (uint64_t) tu, r_ns - r_first_ns + mono_first_ns))
                                outside++;
                }
                ok(r >= 0 && failed == 0 && outside == 0, "through the table, cam and mic convert within their "
                   "bounds (%" PRIi64 " failed, %" PRIi64 " outside)", failed, outside);

                c = sd_bus_flush_close_unref(c);
                is_int(ac_wait_listed(observer, sig, "cam", false, WAIT_MS), 0, "C leaves, 'cam' goes again");
                r = timeconv_convert(tc, "monotonic_raw", "cam", r_ns, &tv, &tu);
                ok(r == -ENODEV || r == -ENOENT, "C left: the table refuses 'cam' (%d)", r);
                (void) timeconv_set_paths(tc, TIMECONV_PATH_ANY);
                is_int(timeconv_convert(tc, "monotonic_raw", "cam", r_ns, &tv, &tu), -ENOENT,
                       "and the daemon calls it unknown");
                timeconv_free(tc);
        }
}

/* A series that goes back by a second: a step, then a target only. */
static void test_backwards(const Harness *h, sd_bus *observer, AcSignals *sig) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *d = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t r_first_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) - INT64_C(2000000000), v, tv, tu;
        const AcTruth before = { r_first_ns, INT64_C(100000000000), 10000 };
        AcTruth after = before;
        unsigned steps = sig->discontinuities;
        struct timeconv *tc = NULL;
        uint64_t u;
        AcDomain dom;
        int r;

        after.x0_ns -= INT64_C(1000000000);
        if (harness_connect(h, &d) < 0) {
                ok(false, "a client connects");
                return;
        }
        is_int(ac_push_series(d, "monotonic_raw", "rewind", &before, r_first_ns, SNAPSHOT_STEP_NS, 6), 6,
               "'rewind': 6 snapshots forward");
        ok(ac_domain(observer, "rewind", &dom) >= 0 && dom.found && dom.monotonic, "monotonic so far");
        ok(clock_convert(observer, "rewind", "monotonic_raw", ac_truth_x(&before, r_first_ns), NULL, &v, &u) >= 0,
           "a source so far");
        is_int(ac_push_series(d, "monotonic_raw", "rewind", &after, r_first_ns + 6 * SNAPSHOT_STEP_NS,
                              SNAPSHOT_STEP_NS, 6), 6, "then 6 more, a second behind");
        is_int(ac_wait(observer, &sig->discontinuities, steps, WAIT_MS), 0, "Discontinuity is emitted");
        ok(strcmp(sig->last_domain, "rewind") == 0 && sig->last_step_ns < -999000000 && sig->last_step_ns > -1001000000,
           "for 'rewind', a step of %" PRIi64 " ns", sig->last_step_ns);
        ok(ac_domain(observer, "rewind", &dom) >= 0 && dom.found && !dom.monotonic, "ListDomains: not monotonic");
        check_error("Convert from it", clock_convert(observer, "rewind", "monotonic_raw", ac_truth_x(&after, r_first_ns),
                                                     &e, &v, &u),
                    &e, BUS_ERROR_NO_PATH, ENOLINK, "no conversion path from 'rewind'");
        check_error("Convert from it to monotonic", clock_convert(observer, "rewind", "monotonic", 0, &e, &v, &u),
                    &e, BUS_ERROR_NO_PATH, ENOLINK, NULL);
        r = clock_convert(observer, "monotonic_raw", "rewind", r_first_ns + 9 * SNAPSHOT_STEP_NS, NULL, &v, &u);
        ok(r >= 0 && ac_holds(v, u, ac_truth_x(&after, r_first_ns + 9 * SNAPSHOT_STEP_NS)),
           "to it after the step: the new line, within %" PRIu64 " ns", u);
        r = clock_convert(observer, "monotonic_raw", "rewind", r_first_ns + 2 * SNAPSHOT_STEP_NS, NULL, &v, &u);
        ok(r >= 0 && ac_holds(v, u, ac_truth_x(&before, r_first_ns + 2 * SNAPSHOT_STEP_NS)),
           "to it before the step: the model of its time, within %" PRIu64 " ns", u);

        r = timeconv_open_address(h->bus_address, &tc);
        if (r >= 0)
                r = timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        if (r >= 0)
                r = timeconv_convert(tc, "rewind", "monotonic_raw", ac_truth_x(&after, r_first_ns), &tv, &tu);
        is_int(r, -ENOLINK, "through the table, from it: -ENOLINK");
        r = timeconv_convert(tc, "monotonic_raw", "rewind", r_first_ns + 9 * SNAPSHOT_STEP_NS, &tv, &tu);
        ok(r >= 0 && ac_holds(tv, (uint64_t) tu, ac_truth_x(&after, r_first_ns + 9 * SNAPSHOT_STEP_NS)),
           "through the table, to it: within the bound");
        timeconv_free(tc);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *observer = NULL;
        AcSignals sig = {};
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        r = harness_tap_start(argv[1], NULL, &h, &observer);
        if (r >= 0)
                r = ac_signals_watch(observer, &sig);
        is_int(r, 0, "an observer connects and listens");
        if (r < 0)
                return done_testing();

        test_lifecycle(h, observer, &sig);
        test_backwards(h, observer, &sig);

        ok(harness_daemon_alive(h), "the daemon is still running");
        ac_signals_unwatch(&sig);
        return done_testing();
}
