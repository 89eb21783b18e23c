/* SPDX-License-Identifier: MIT */

/* The x11 and present sources following the session's display (X11Config.follow, an
 * X11Display the daemon keeps up to date), against a real Xvfb, without the daemon: listed and
 * opened with no display at all, unavailable with the reason, asking for a display at each
 * attempt; a display set later is taken at the next burst; a server gone and a display unset
 * each give their reason. */

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
#include "tap.h"
#include "time-util.h"
#include "x11-display.h"
#include "x11.h"
#include "xvfb.h"

#define BURST 8
#define NO_DISPLAY "no X display: test"
#define TIMEOUT_NS (INT64_C(20) * 1000000000)

static const char *reason(const DomainOps *ops, Domain *d) {
        DomainStatus s = {};

        return ops->status(d, &s) == 0 && s.unavailable_reason ? s.unavailable_reason : "";
}

/* Bursts at a daemon's pace (its own backoff decides when it really tries) until want(r):
 * true, or false at the deadline. */
static bool burst_until(const DomainOps *ops, Domain *d, bool samples) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS;
        Sample s[BURST];
        size_t n = 0;
        int r;

        do {
                r = ops->sample_burst(d, s, BURST, &n);
                if ((r >= 0) == samples)
                        return true;
                (void) poll(NULL, 0, 10);
        } while (clock_now_ns(CLOCK_MONOTONIC) < deadline_ns);
        return false;
}

static void test_display_object(void) {
        _cleanup_(x11_display_freep) X11Display *x = NULL;
        struct pollfd pfd = { .events = POLLIN };
        uint64_t g0 = 0, g1 = 0, count;
        char name[64];

        is_int(x11_display_new(NO_DISPLAY, &x), 0, "an X11Display");
        if (!x)
                return;
        is_int(x11_display_get(x, name, sizeof(name), &g0), -ENXIO, "no display at first");
        ok(strcmp(name, NO_DISPLAY) == 0, "  and the reason is given: %s", name);
        is_int(x11_display_set(x, ":7", NULL), 1, "setting one is a change");
        is_int(x11_display_set(x, ":7", NULL), 0, "setting the same one is not");
        ok(x11_display_get(x, name, sizeof(name), &g1) == 0 && strcmp(name, ":7") == 0 && g1 != g0,
           "it reads back, with a new generation");
        is_int(x11_display_get(x, name, 2, NULL), -ENOBUFS, "a buffer too small is -ENOBUFS");
        is_int(x11_display_set(x, "", "no X display: gone"), 1, "\"\" unsets it");
        ok(x11_display_get(x, name, sizeof(name), NULL) == -ENXIO && strcmp(name, "no X display: gone") == 0,
           "  with the new reason");

        pfd.fd = x11_display_want_fd(x);
        is_int(poll(&pfd, 1, 0), 0, "the want fd is quiet");
        x11_display_want(x);
        x11_display_want(x);
        ok(poll(&pfd, 1, 0) == 1 && read(pfd.fd, &count, sizeof(count)) == sizeof(count) && count == 2,
           "x11_display_want() wakes it (twice, one read)");
}

/* x11_display_follow() without a server: a call that cannot read the display changes nothing,
 * and with no display the reason is written at every call, whatever made it so. */
static void test_follow_reason(void) {
        _cleanup_(x11_display_freep) X11Display *x = NULL;
        X11DisplaySeen seen = { .name = strdup(":1"), .generation = 5 };
        char reason[X11_DISPLAY_REASON_MAX + 64] = "untouched", long_name[X11_DISPLAY_REASON_MAX + 40];

        is_int(x11_display_follow(NULL, &seen, reason, sizeof(reason)), -EINVAL, "following no X11Display: -EINVAL");
        ok(seen.name && strcmp(seen.name, ":1") == 0 && seen.generation == 5 && strcmp(reason, "untouched") == 0,
           "  what the source saw and its reason are untouched");
        free(seen.name);
        seen = (X11DisplaySeen) {};

        is_int(x11_display_new(NO_DISPLAY, &x), 0, "an X11Display");
        if (!x)
                return;
        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[0] = ':';
        long_name[sizeof(long_name) - 1] = '\0';
        is_int(x11_display_set(x, long_name, NULL), 1, "a display whose name does not fit");
        is_int(x11_display_follow(x, &seen, reason, sizeof(reason)), 1, "  is a change for the source");
        ok(!seen.name && strstr(reason, "too long"), "  which has no display, because: %s", reason);
        snprintf(reason, sizeof(reason), "the X server on :1 went away");
        is_int(x11_display_follow(x, &seen, reason, sizeof(reason)), 0, "  following again is no change");
        ok(strstr(reason, "too long"), "  and the reason is current again, not the source's since: %s", reason);

        is_int(x11_display_set(x, NULL, "no X display: first"), 1, "no display");
        is_int(x11_display_follow(x, &seen, reason, sizeof(reason)), 1, "  is a change");
        is_int(x11_display_set(x, NULL, "no X display: second"), 0, "still none, for another reason");
        is_int(x11_display_follow(x, &seen, reason, sizeof(reason)), 0, "  is no change");
        ok(strcmp(reason, "no X display: second") == 0, "  but the reason is the new one: %s", reason);
        free(seen.name);
}

static void test_follow(void) {
        _cleanup_(x11_display_freep) X11Display *x = NULL;
        DomainInfo infos[4];
        Domain *clock = NULL, *msc = NULL;
        struct pollfd pfd = { .events = POLLIN };
        Xvfb server = {};
        size_t n = 0;
        int r;

        unsetenv("DISPLAY");
        if (x11_display_new(NO_DISPLAY, &x) < 0) {
                ok(false, "an X11Display");
                return;
        }
        const X11Config config = { .follow = x };

        ok(domain_x11_ops.enumerate(&config, infos, 4, &n) == 0 && n == 2 && strcmp(infos[0].name, "x11") == 0 &&
           strcmp(infos[1].name, "x11_us") == 0, "following, with no display: x11 and x11_us are listed");
        ok(domain_present_ops.enumerate(&config, infos, 4, &n) == 0 && n == 1 && strcmp(infos[0].name, "msc") == 0,
           "  and msc");
        is_int(domain_x11_ops.open("x11", &config, &clock), 0, "x11 opens without a display");
        is_int(domain_present_ops.open("msc", &config, &msc), 0, "msc too");
        if (!clock || !msc)
                goto finish;
        ok(strcmp(reason(&domain_x11_ops, clock), NO_DISPLAY) == 0, "x11's reason: %s", reason(&domain_x11_ops, clock));
        ok(strcmp(reason(&domain_present_ops, msc), NO_DISPLAY) == 0, "msc's reason: %s",
           reason(&domain_present_ops, msc));
        pfd.fd = x11_display_want_fd(x);
        ok(poll(&pfd, 1, 0) == 1, "x11 asked for a display");

        r = xvfb_start(-1, &server);
        ok(r >= 0, "Xvfb starts (%s)", server.name);
        if (r < 0)
                goto finish;
        ok(x11_display_set(x, server.name, NULL) == 1, "the session has %s now", server.name);
        ok(burst_until(&domain_x11_ops, clock, true), "x11 takes it at a burst, without being reopened");
        ok(burst_until(&domain_present_ops, msc, true), "msc too");
        ok(!reason(&domain_x11_ops, clock)[0] && !reason(&domain_present_ops, msc)[0], "no reasons any more");

        (void) xvfb_stop(&server);
        /* Each burst first, then the reason it left (argument order is the compiler's). */
        r = burst_until(&domain_x11_ops, clock, false);
        ok(r && strstr(reason(&domain_x11_ops, clock), server.name), "the server gone, x11's reason names it: %s",
           reason(&domain_x11_ops, clock));
        (void) x11_display_set(x, NULL, NO_DISPLAY);
        (void) burst_until(&domain_x11_ops, clock, false);
        ok(strcmp(reason(&domain_x11_ops, clock), NO_DISPLAY) == 0, "the display unset: %s",
           reason(&domain_x11_ops, clock));

finish:
        domain_present_ops.close(msc);
        domain_x11_ops.close(clock);
        if (server.pid > 0)
                (void) xvfb_stop(&server);
}

int main(int argc, char *argv[]) {
        tap_require_program("Xvfb", "xvfb");
        test_display_object();
        test_follow_reason();
        test_follow();
        return done_testing();
}
