/* SPDX-License-Identifier: MIT */

/* timeconvd on an X server that another client grabs (xcb_grab_server): the daemon's X sources
 * (x11, msc) get no answer for as long as the grab lasts, and that must cost the other domains'
 * clients nothing. With a burst every 10 ms, a loop that waited for the server would be held
 * most of the time (a burst's budget, 100 ms per X source, every 10 ms), and a client calling
 * at any moment would most likely wait for it: here Convert calls between POSIX domains made one
 * after the other during the grab spend less than half of it in calls slower than SLOW_CALL_MS,
 * whatever the load (a loaded machine delays some calls, not half of the time). Held until
 * the daemon has given x11 up (unavailable: three bursts ran into the grab and the source drops
 * its connection), released, and once x11 is back no Discontinuity says "restart": the server
 * never restarted, a reconnection to it is not a new clock.
 * usage: test-x11-grab TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "x11-bus.h"
#include "xvfb.h"

#define WAIT_MS 20000
/* The grab lasts until x11 is unavailable and at least this long, so that bursts and a
 * reconnection attempt run into it. */
#define GRAB_MIN_MS 2000
/* A call behind a held loop waits for the most part of a burst's 100 ms. */
#define SLOW_CALL_MS 50
#define CALLS_MAX 200000

typedef struct Discontinuities {
        unsigned restarts;              /* of x11, x11_us or msc */
        unsigned total;
} Discontinuities;

static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Discontinuities *d = userdata;
        const char *domain, *kind;
        int64_t monotonic_ns, step_ns;

        if (sd_bus_message_read(m, "sxxs", &domain, &monotonic_ns, &step_ns, &kind) < 0)
                return 0;
        diag("Discontinuity: %s %s step %lld ns", domain, kind, (long long) step_ns);
        d->total++;
        if (strcmp(kind, "restart") == 0 &&
            (strcmp(domain, "x11") == 0 || strcmp(domain, "x11_us") == 0 || strcmp(domain, "msc") == 0))
                d->restarts++;
        return 0;
}

static bool is_available(const X11BusDomain *d, void *userdata) {
        return d->available;
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return x < y ? -1 : x > y;
}

/* The grab, in effect once the server answered a request made after it. */
static xcb_connection_t *grab(const char *display) {
        xcb_connection_t *xcb = xcb_connect(display, NULL);
        xcb_get_input_focus_reply_t *reply;

        if (xcb_connection_has_error(xcb)) {
                xcb_disconnect(xcb);
                return NULL;
        }
        xcb_grab_server(xcb);
        reply = xcb_get_input_focus_reply(xcb, xcb_get_input_focus(xcb), NULL);
        if (!reply) {
                xcb_disconnect(xcb);
                return NULL;
        }
        free(reply);
        return xcb;
}

static void test_grab(sd_bus *bus, const char *display) {
        static int64_t latency_ns[CALLS_MAX];
        xcb_connection_t *grabber;
        X11BusDomain d = {};
        size_t n = 0, n_failed = 0;
        bool gave_up = false;
        int64_t start_ns, held_ns, slow_ns = 0;

        grabber = grab(display);
        ok(grabber, "another client grabs the server");
        if (!grabber)
                return;

        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        while (n < CALLS_MAX) {
                int64_t t0_ns = clock_now_ns(CLOCK_MONOTONIC), value;
                uint64_t unc;

                if (clock_convert(bus, "monotonic", "boottime", t0_ns, NULL, &value, &unc) < 0)
                        n_failed++;
                latency_ns[n++] = clock_now_ns(CLOCK_MONOTONIC) - t0_ns;
                /* ListDomains is a call like any other; every 64th, so most are Convert. */
                if (!gave_up && n % 64 == 0 && x11_bus_domain(bus, "x11", &d) == 0 && !d.available)
                        gave_up = true;
                if (gave_up && clock_now_ns(CLOCK_MONOTONIC) - start_ns >= (int64_t) GRAB_MIN_MS * 1000000)
                        break;
                if (clock_now_ns(CLOCK_MONOTONIC) - start_ns >= (int64_t) WAIT_MS * 1000000)
                        break;
        }
        held_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        xcb_ungrab_server(grabber);
        xcb_flush(grabber);

        ok(gave_up, "the daemon gave x11 up during the grab (%.1f s): its bursts ran into it", (double) held_ns / 1e9);
        for (size_t i = 0; i < n; i++)
                if (latency_ns[i] > (int64_t) SLOW_CALL_MS * 1000000)
                        slow_ns += latency_ns[i];
        qsort(latency_ns, n, sizeof(latency_ns[0]), cmp_i64);
        ok(n_failed == 0, "every Convert during the grab answered (%zu calls, %zu failed)", n, n_failed);
        ok(n > 0 && slow_ns < held_ns / 2,
           "calls slower than %d ms took %.1f %% of the grab, not half: the loop never waits for the server "
           "(p50 %.3f ms, p99 %.3f ms, max %.3f ms)", SLOW_CALL_MS, 100.0 * (double) slow_ns / (double) held_ns,
           n ? (double) latency_ns[n / 2] / 1e6 : 0.0, n ? (double) latency_ns[n * 99 / 100] / 1e6 : 0.0,
           n ? (double) latency_ns[n - 1] / 1e6 : 0.0);
        xcb_disconnect(grabber);
}

int main(int argc, char **argv) {
        const char *args[] = { "--display", NULL, "--no-gpu", "--cadence", "0.01", NULL };
        Discontinuities disc = {};
        sd_bus_slot *slot = NULL;
        Harness *h = NULL;
        sd_bus *bus = NULL;
        X11BusDomain d = {};
        Xvfb x = {};

        if (argc < 2) {
                fprintf(stderr, "usage: %s TIMECONVD\n", argv[0]);
                return 2;
        }
        /* .ci/run installs Xvfb and dbus-daemon: missing is a failure, not a skip. */
        if (xvfb_start(-1, &x) < 0) {
                ok(false, "Xvfb starts");
                return done_testing();
        }
        args[1] = x.name;
        if (harness_new_started(argv[1], args, &h, &bus) < 0) {
                ok(false, "timeconvd on %s with a private bus", x.name);
                goto finish;
        }
        ok(sd_bus_match_signal(bus, &slot, NULL, "/org/timeconv/Clock1", "org.timeconv.Clock1", "Discontinuity",
                               on_discontinuity, &disc) >= 0, "listening for Discontinuity");
        ok(x11_bus_wait_for(bus, "x11", is_available, NULL, WAIT_MS, &d) == 0, "x11 available on %s", x.name);

        test_grab(bus, x.name);

        /* x11 back means its reconnection and a burst on it are over; their signals came before
         * the ListDomains reply that says so, and are dispatched here. */
        ok(x11_bus_wait_for(bus, "x11", is_available, NULL, WAIT_MS, &d) == 0, "x11 available again after the grab");
        while (sd_bus_process(bus, NULL) > 0)
                ;
        ok(disc.restarts == 0, "no restart announced for x11 or msc: a grab is not a new server (%u Discontinuity)",
           disc.total);
        ok(harness_daemon_alive(h), "the daemon still runs");

finish:
        sd_bus_slot_unref(slot);
        sd_bus_flush_close_unref(bus);
        harness_free(h);
        xvfb_stop(&x);
        return done_testing();
}
