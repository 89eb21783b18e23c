/* SPDX-License-Identifier: MIT */

/* A daemon restart under a running handle: the handle is told (DAEMON_CHANGED), fails with
 * -EHOSTDOWN while no daemon runs, and converts again, right, with the new one, the caller doing
 * nothing; once more with the daemon stopped and started between two conversions, where only
 * the library's own bus checks can notice.
 * usage: test-live-restart TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "live-wait.h"
#include "tap.h"
#include "timeconv.h"

#define CALLS 3000
#define WAIT_MS 10000

typedef struct Seen {
        unsigned started, stopped;
} Seen;

static void on_event(const struct timeconv_event *e, void *userdata) {
        Seen *s = userdata;

        if (e->type == TIMECONV_EVENT_DAEMON_CHANGED) {
                if (e->daemon_running)
                        s->started++;
                else
                        s->stopped++;
        }
}

/* CALLS conversions monotonic -> boottime of now: how many failed and how many missed. */
static void convert_now(struct timeconv *tc, const char *label) {
        int failed = 0, outside = 0, last_r = 0, table = 0;

        for (int i = 0; i < CALLS; i++) {
                int64_t v, u;
                Bracket b;
                int r;

                bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
                r = timeconv_convert(tc, "monotonic", "boottime", b.from_ns, &v, &u);
                if (r < 0) {
                        failed++;
                        last_r = r;
                        continue;
                }
                table += timeconv_last_path(tc) == TIMECONV_PATH_TABLE;
                outside += !bracket_holds(v, (uint64_t) u, b.to_lo_ns, b.to_hi_ns);
        }
        diag("%s: %d of %d answered by the table", label, table, CALLS);
        ok(failed == 0 && outside == 0, "%s: %d conversions succeed and hold the truth (%d failed, last %d; "
           "%d outside)", label, CALLS, failed, last_r, outside);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        struct timeconv *tc = NULL;
        Seen seen = {};
        unsigned mono, boot;
        int64_t v, u;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_tap_start(argv[1], NULL, &h, NULL);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &tc);
        is_int(r, 0, "a handle opens");
        if (r < 0)
                return done_testing();
        timeconv_set_event_handler(tc, on_event, &seen);
        convert_now(tc, "first daemon");
        /* The pair is kept in the handle now; a daemon that stops retires its table, which moves
         * every latch: the kept copy must not answer for a daemon that is gone, even before the
         * handle hears of it (nothing here reads the bus). */
        is_int(timeconv_domain_id(tc, "monotonic", &mono), 0, "monotonic's id");
        is_int(timeconv_domain_id(tc, "boottime", &boot), 0, "boottime's id");
        timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        is_int(timeconv_convert_id(tc, mono, boot, clock_now_ns(CLOCK_MONOTONIC), &v, &u), 0,
               "the table answers by id");

        /* 1: stopped, noticed, then a new one. */
        r = harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, NULL, NULL);
        is_int(r, 0, "the daemon stops");
        r = timeconv_convert_id(tc, mono, boot, clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        ok(r < 0, "the kept pair of its retired table does not answer (%d, %s)", r, timeconv_strerror(r));
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
        is_int(live_wait(tc, &seen.stopped, 1, WAIT_MS), 0, "the handle reports the daemon gone (DAEMON_CHANGED)");
        r = timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        is_int(r, -EHOSTDOWN, "without a daemon a conversion fails with -EHOSTDOWN");
        r = harness_start_timeconvd(h, argv[1], NULL);
        is_int(r, 0, "a second daemon starts");
        convert_now(tc, "second daemon, same handle");
        is_int(live_wait(tc, &seen.started, 1, WAIT_MS), 0, "the handle reports the new daemon");

        /* 2: stopped and started between two conversions; nobody tells the handle. */
        r = harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, NULL, NULL);
        if (r >= 0)
                r = harness_start_timeconvd(h, argv[1], NULL);
        is_int(r, 0, "a third daemon replaces the second at once");
        convert_now(tc, "third daemon, same handle");
        /* The signals reach the handle whenever the bus delivers them; conversions alone must
         * pick them up, within a bounded time. */
        for (int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
             (seen.stopped < 2 || seen.started < 2) && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns;)
                (void) timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        ok(seen.stopped >= 2 && seen.started >= 2,
           "the library noticed the restart by itself while converting (stopped %u, started %u)",
           seen.stopped, seen.started);
        convert_now(tc, "third daemon, after the restart was noticed");

        tc = timeconv_free(tc);
        ok(harness_daemon_alive(h), "the third daemon still runs");
        return done_testing();
}
