/* SPDX-License-Identifier: MIT */

/* An X server that accepts connections and never answers (silent-x.h: a socket where display
 * :A's would be, held open) must not hold X for the rest of the process. With x11 and msc
 * waiting on :A, the same sources on a real Xvfb :B connect; the attempts on :A are given up
 * after their timeout (the silent server sees its connections closed) with the reason "does
 * not answer"; closing a source gives its pending attempt up at once; a source following the
 * session's display, stuck on :A, asks for the display again and takes :B as soon as it is set.
 * Every wait is on an event (the silent server's counts, a burst's outcome) with a deadline. */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "domain.h"
#include "present.h"
#include "silent-x.h"
#include "tap.h"
#include "time-util.h"
#include "x11-display.h"
#include "x11.h"
#include "xvfb.h"

#define BURST 8
#define WAIT_MS 20000
#define TIMEOUT_NS ((int64_t) WAIT_MS * 1000000)
/* Between bursts of a loop: a daemon's pace (its cadence), not a synchronisation. */
#define PACE_MS 10

static const char *reason(const DomainOps *ops, Domain *d) {
        DomainStatus s = {};

        return ops->status(d, &s) == 0 && s.unavailable_reason ? s.unavailable_reason : "";
}

/* Bursts until one has samples: true, or false at the deadline. */
static bool burst_until_samples(const DomainOps *ops, Domain *d) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS;
        Sample s[BURST];
        size_t n = 0;

        do {
                if (ops->sample_burst(d, s, BURST, &n) >= 0)
                        return true;
                (void) poll(NULL, 0, PACE_MS);
        } while (clock_now_ns(CLOCK_MONOTONIC) < deadline_ns);
        return false;
}

/* Bursts d (which looks at its pending attempt each time) until the silent server counts at
 * least accepted_min connections and closed_min closed: 0 or -ETIMEDOUT. */
static int burst_until_server(const DomainOps *ops, Domain *d, SilentX *sx, unsigned accepted_min,
                              unsigned closed_min, unsigned *ret_accepted, unsigned *ret_closed) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS;
        Sample s[BURST];
        size_t n;
        int r;

        do {
                (void) ops->sample_burst(d, s, BURST, &n);
                r = silent_x_wait(sx, accepted_min, closed_min, PACE_MS, ret_accepted, ret_closed);
        } while (r < 0 && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns);
        return r;
}

/* x11 and msc stuck on :A; the same on :B connect; :A's attempts time out, and a closed source
 * leaves nothing open on :A. */
static void test_others_connect(SilentX *sx, const Xvfb *live) {
        const X11Config config_a = { .display = sx->name }, config_b = { .display = live->name };
        Domain *clock_a = NULL, *msc_a = NULL, *clock_b = NULL, *msc_b = NULL;
        unsigned accepted = 0, closed = 0;
        int64_t start_ns;
        int r;

        ok(domain_x11_ops.open("x11", &config_a, &clock_a) == 0, "x11 opens on the silent %s", sx->name);
        is_int(domain_present_ops.open("msc", &config_a, &msc_a), 0, "msc too");
        if (!clock_a || !msc_a)
                goto finish;
        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        r = silent_x_wait(sx, 2, 0, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "  the silent server accepted both (%u accepted, %u closed)", accepted, closed);
        ok(strstr(reason(&domain_x11_ops, clock_a), "does not answer") &&
           strstr(reason(&domain_x11_ops, clock_a), sx->name), "  x11's reason: %s", reason(&domain_x11_ops, clock_a));

        /* Before this change, both waited here for ever: the attempts on :A held xcb_connect()'s
         * process-wide lock while reading a reply that never came. */
        ok(domain_x11_ops.open("x11", &config_b, &clock_b) == 0, "x11 opens on the live %s", live->name);
        is_int(domain_present_ops.open("msc", &config_b, &msc_b), 0, "msc too");
        if (!clock_b || !msc_b)
                goto finish;
        ok(burst_until_samples(&domain_x11_ops, clock_b), "x11 on %s reads its server while %s's attempts wait",
           live->name, sx->name);
        ok(burst_until_samples(&domain_present_ops, msc_b), "msc on %s too", live->name);
        diag("%s connected %.3f s after the attempts on %s started", live->name,
             (double) (clock_now_ns(CLOCK_MONOTONIC) - start_ns) / 1e9, sx->name);

        /* The timeout: each attempt is given up at its source's first look past it. */
        r = burst_until_server(&domain_x11_ops, clock_a, sx, 0, 1, &accepted, &closed);
        ok(r >= 0, "x11's attempt on %s is given up after its timeout: the server sees it closed (%u of %u)",
           sx->name, closed, accepted);
        ok(strstr(reason(&domain_x11_ops, clock_a), "does not answer"), "  reason: %s",
           reason(&domain_x11_ops, clock_a));
        r = burst_until_server(&domain_present_ops, msc_a, sx, 0, 2, &accepted, &closed);
        ok(r >= 0, "msc's too (%u of %u closed)", closed, accepted);
        ok(strstr(reason(&domain_present_ops, msc_a), "does not answer"), "  reason: %s",
           reason(&domain_present_ops, msc_a));

        /* A new attempt (after the source's backoff), then the source closes while it waits. */
        r = burst_until_server(&domain_x11_ops, clock_a, sx, accepted + 1, 0, &accepted, &closed);
        ok(r >= 0, "x11 tries %s again (%u accepted)", sx->name, accepted);
        clock_a = domain_x11_ops.close(clock_a);
        msc_a = domain_present_ops.close(msc_a);
        r = silent_x_wait(sx, 0, accepted, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "closing the sources gives their attempts up at once: %u of %u connections closed", closed,
           accepted);

finish:
        domain_present_ops.close(msc_b);
        domain_x11_ops.close(clock_b);
        domain_present_ops.close(msc_a);
        domain_x11_ops.close(clock_a);
}

/* Following the session: stuck on :A, x11 asks for the display again; :B set, it connects at
 * its next burst, and :A's attempt is closed. */
static void test_display_change(SilentX *sx, const Xvfb *live) {
        _cleanup_(x11_display_freep) X11Display *x = NULL;
        struct pollfd pfd = { .events = POLLIN };
        unsigned accepted = 0, closed = 0, accepted0 = 0, closed0 = 0;
        Domain *clock = NULL;
        uint64_t count;
        int r;

        (void) silent_x_wait(sx, 0, 0, 0, &accepted0, &closed0);
        if (x11_display_new("no X display: test", &x) < 0)
                return (void) ok(false, "an X11Display");
        const X11Config config = { .follow = x };

        (void) x11_display_set(x, sx->name, NULL);
        ok(domain_x11_ops.open("x11", &config, &clock) == 0, "x11 opens following the session, which has %s",
           sx->name);
        if (!clock)
                return;
        r = silent_x_wait(sx, accepted0 + 1, 0, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "  its attempt is accepted and never answered");
        pfd.fd = x11_display_want_fd(x);
        while (read(pfd.fd, &count, sizeof(count)) > 0)
                ;
        r = burst_until_server(&domain_x11_ops, clock, sx, 0, 0, NULL, NULL);
        ok(poll(&pfd, 1, 0) == 1, "  a burst while it waits asks the daemon to look for the display again");
        ok(strstr(reason(&domain_x11_ops, clock), "does not answer"), "  reason: %s", reason(&domain_x11_ops, clock));

        (void) x11_display_set(x, live->name, NULL);
        ok(burst_until_samples(&domain_x11_ops, clock), "the session moves to %s: x11 reads it at once", live->name);
        r = silent_x_wait(sx, 0, accepted, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "  and the attempt on %s is closed (%u of %u)", sx->name, closed, accepted);
        domain_x11_ops.close(clock);
}

int main(int argc, char *argv[]) {
        SilentX sx = {};
        Xvfb live = {};
        int r;

        tap_require_program("Xvfb", "xvfb");
        unsetenv("DISPLAY");
        /* No authority file of the machine's: the test's servers ask for none. */
        setenv("XAUTHORITY", "/dev/null", 1);

        r = silent_x_start(&sx);
        ok(r >= 0, "a silent X server on %s", sx.name);
        if (r >= 0)
                r = xvfb_start(-1, &live);
        ok(r >= 0, "Xvfb on %s", live.name);
        if (r >= 0) {
                test_others_connect(&sx, &live);
                test_display_change(&sx, &live);
        }
        if (live.pid > 0)
                (void) xvfb_stop(&live);
        silent_x_stop(&sx);
        return done_testing();
}
