/* SPDX-License-Identifier: MIT */

/* timeconvd started on an X server that accepts connections but never answers (a SIGSTOPped
 * Xvfb): connecting must not hold its event loop. It gets ready, ends at once on SIGTERM, and
 * once the server answers the x11 domain comes up by itself.
 * usage: test-x11-stopped TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "tap.h"
#include "x11-bus.h"
#include "xvfb.h"

#define READY_MS 10000
#define WAIT_MS 20000
/* SIGTERM to exit: the loop answers at once; this leaves room for a loaded machine. */
#define STOP_MS 3000

static bool is_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

/* Starts timeconvd on the stopped server: ready, x11 listed but unavailable and not identity. */
static int start_on_stopped(const char *daemon, const char *display, Harness **ret_h, sd_bus **ret_bus) {
        const char *args[] = { "--display", display, "--no-gpu", NULL };
        Harness *h = NULL;
        sd_bus *bus = NULL;
        X11BusDomain d;
        int64_t t0;
        int r;

        if (harness_new(NULL, &h) < 0) {
                ok(false, "private bus");
                return -EIO;
        }
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = harness_start_daemon(h, daemon, args, READY_MS);
        ok(r == 0, "ready with the X server stopped (%lld ms)",
           (long long) (clock_now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
        if (r < 0 || harness_connect(h, &bus) < 0) {
                harness_free(h);
                return -EIO;
        }
        r = x11_bus_domain(bus, "x11", &d);
        ok(r == 0 && !d.available && strcmp(d.verdict, "identity") != 0 && d.same_as[0] == '\0',
           "x11 listed, unavailable, same as nothing");
        *ret_h = h;
        *ret_bus = bus;
        return 0;
}

static int test_sigterm(const char *daemon, const char *display) {
        Harness *h = NULL;
        sd_bus *bus = NULL;
        int64_t elapsed_ns = 0;
        int status = -1, r;

        r = start_on_stopped(daemon, display, &h, &bus);
        if (r < 0)
                return r;
        sd_bus_flush_close_unref(bus);
        r = harness_stop_daemon(h, STOP_MS, &status, &elapsed_ns);
        ok(r == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "SIGTERM ends it cleanly while it still connects (%lld ms)", (long long) elapsed_ns / 1000000);
        harness_free(h);
        return 0;
}

static void test_comes_up(const char *daemon, Xvfb *x) {
        Harness *h = NULL;
        sd_bus *bus = NULL;
        X11BusDomain d;
        int64_t elapsed_ns = 0;
        int status = -1;

        if (start_on_stopped(daemon, x->name, &h, &bus) < 0)
                return;
        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        ok(x11_bus_wait_for(bus, "x11", is_identity, NULL, WAIT_MS, &d) == 0,
           "x11 comes up by itself: available, identity");
        ok(xvfb_pause(x, true) == 0, "Xvfb stopped again");
        ok(harness_stop_daemon(h, STOP_MS, &status, &elapsed_ns) == 0 && WIFEXITED(status),
           "SIGTERM ends it with the server stopped (%lld ms)", (long long) elapsed_ns / 1000000);
        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        sd_bus_flush_close_unref(bus);
        harness_free(h);
}

int main(int argc, char **argv) {
        Xvfb x = {};

        tap_args(argc, argv, 1, "TIMECONVD");
        tap_require_program("Xvfb", "xvfb");

        if (xvfb_start(-1, &x) < 0) {
                ok(false, "Xvfb starts");
                return done_testing();
        }
        ok(xvfb_pause(&x, true) == 0, "Xvfb %s stopped: it accepts, never answers", x.name);
        /* Never ready: the second daemon would only wait as long again. */
        if (test_sigterm(argv[1], x.name) >= 0)
                test_comes_up(argv[1], &x);
        xvfb_stop(&x);
        return done_testing();
}
