/* SPDX-License-Identifier: MIT */

/* timeconvd started on an X display that has no server yet (a session's daemon can start before
 * its display): x11 and msc are listed, unavailable; once an Xvfb takes the display, both become
 * available without a restart of the daemon, and msc converts.
 * usage: test-present-late TIMECONVD */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "x11-bus.h"
#include "xvfb.h"

/* Connection attempts back off up to 5 s; a loaded machine adds to that. */
#define WAIT_MS 30000

static bool is_available(const X11BusDomain *d, void *userdata) {
        return d->available == *(const bool *) userdata;
}

/* A display number no server holds (no lock file, no socket), away from the low numbers that
 * -displayfd hands out to the other tests. */
static int free_display(void) {
        for (int i = 0; i < 400; i++) {
                int n = 300 + (int) ((getpid() + i) % 400);
                char lock[64], sock[64];
                struct stat st;

                snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", n);
                snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", n);
                if (stat(lock, &st) < 0 && stat(sock, &st) < 0)
                        return n;
        }
        return -EBUSY;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *args[] = { "--display", NULL, "--no-gpu", NULL };
        char display_name[16];
        X11BusDomain d = {};
        Xvfb x = {};
        bool want;
        int display, r;
        int64_t v = 0;
        uint64_t u = 0;

        /* No skip: .ci/run installs Xvfb and dbus-daemon, so without them the test fails. */
        if (argc < 2) {
                ok(false, "usage: test-present-late TIMECONVD");
                return done_testing();
        }
        display = free_display();
        ok(display >= 0, "display :%d has no server", display);
        if (display < 0)
                return done_testing();
        snprintf(display_name, sizeof(display_name), ":%d", display);
        args[1] = display_name;

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS);
        if (r >= 0)
                r = harness_connect(h, &bus);
        ok(r == 0, "timeconvd --display %s starts with no X server there (%d)", display_name, r);
        if (r < 0)
                return done_testing();

        ok(x11_bus_domain(bus, "x11", &d) == 0 && !d.available, "x11 is listed, unavailable");
        r = x11_bus_domain(bus, "msc", &d);
        ok(r == 0 && !d.available, "msc is listed, unavailable (%d)", r);

        r = xvfb_start(display, &x);
        ok(r == 0, "an Xvfb takes %s (%d)", display_name, r);
        if (r < 0)
                return done_testing();
        want = true;
        is_int(x11_bus_wait_for(bus, "x11", is_available, &want, WAIT_MS, &d), 0, "x11 becomes available");
        is_int(x11_bus_wait_for(bus, "msc", is_available, &want, WAIT_MS, &d), 0, "msc becomes available");
        /* Listed before there was a server, msc listed no output: its CRTC's domain joins now. */
        is_int(x11_bus_wait_for(bus, "msc-screen", is_available, &want, WAIT_MS, &d), 0,
               "msc-screen, Xvfb's one output, joins and becomes available");
        r = clock_now(bus, "msc", NULL, &v, &u);
        ok(r >= 0 && v > 0, "Now(msc) answers (%d: %lld frames +- %llu)", r, (long long) v, (unsigned long long) u);

        want = false;
        is_int(xvfb_stop(&x), 0, "the Xvfb ends");
        is_int(x11_bus_wait_for(bus, "msc", is_available, &want, WAIT_MS, &d), 0, "msc becomes unavailable");
        want = true;
        r = xvfb_start(display, &x);
        ok(r == 0, "another Xvfb takes %s (%d)", display_name, r);
        if (r >= 0)
                is_int(x11_bus_wait_for(bus, "msc", is_available, &want, WAIT_MS, &d), 0, "msc is available again");
        ok(harness_daemon_alive(h), "the daemon runs");
        xvfb_stop(&x);
        return done_testing();
}
