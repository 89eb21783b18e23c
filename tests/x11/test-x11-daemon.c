/* SPDX-License-Identifier: MIT */

/* timeconvd with a real Xvfb (-displayfd) on a private bus: the verdict is identity,
 * monotonic -> x11_us is the encoding of the truth, an X timestamp the test takes itself converts
 * back into its own bracket, killing Xvfb makes the domains unavailable (the daemon lives on),
 * and a new Xvfb on the same display brings them back. --x11-tracked keeps the bound honest.
 * usage: test-x11-daemon TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "x11-tap.h"
#include "x11-bus.h"
#include "xtime.h"
#include "xvfb.h"

#define WAIT_MS 20000

static bool is_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

static bool is_calibrated(const X11BusDomain *d, void *userdata) {
        return d->available && d->last_calibrated_ns > 0;
}

static bool is_available(const X11BusDomain *d, void *userdata) {
        return d->available == *(bool *) userdata;
}

/* A PropertyNotify time of our own, bracketed by CLOCK_MONOTONIC: the server stamped it with
 * the monotonic time somewhere in [*ret_lo_ns, *ret_hi_ns]. */
static int own_timestamp(const char *display, uint32_t *ret_ms, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
        xcb_intern_atom_reply_t *atom;
        xcb_connection_t *c;
        xcb_window_t win;
        int64_t lo_ns, hi_ns = 0;
        int r = -EIO;

        c = xcb_connect(display, NULL);
        if (xcb_connection_has_error(c)) {
                xcb_disconnect(c);
                return -ENOTCONN;
        }
        win = xcb_generate_id(c);
        xcb_create_window(c, 0, win, xcb_setup_roots_iterator(xcb_get_setup(c)).data->root, 0, 0, 1, 1, 0,
                          XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, XCB_CW_EVENT_MASK, &mask);
        atom = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, 9, "TEST_TIME"), NULL);
        if (!atom) {
                xcb_disconnect(c);
                return -EIO;
        }
        xcb_change_property(c, XCB_PROP_MODE_APPEND, win, atom->atom, XCB_ATOM_STRING, 8, 0, NULL);
        lo_ns = clock_now_ns(CLOCK_MONOTONIC);
        xcb_flush(c);
        for (;;) {
                xcb_generic_event_t *ev = xcb_wait_for_event(c);

                hi_ns = clock_now_ns(CLOCK_MONOTONIC);
                if (!ev)
                        break;
                if ((ev->response_type & 0x7f) == XCB_PROPERTY_NOTIFY) {
                        *ret_ms = ((xcb_property_notify_event_t *) ev)->time;
                        r = 0;
                }
                free(ev);
                if (r == 0)
                        break;
        }
        free(atom);
        xcb_disconnect(c);
        *ret_lo_ns = lo_ns;
        *ret_hi_ns = hi_ns;
        return r;
}

static void test_identity(sd_bus *bus, const char *display) {
        X11BusDomain d;
        int64_t t, v, dec, lo = 0, hi = 0;
        uint64_t unc, want;
        uint32_t ms = 0;
        bool exact = true, holds = true;
        int r;

        ok(x11_bus_wait_for(bus, "x11", is_identity, NULL, WAIT_MS, &d) == 0, "x11: available, verdict identity");
        ok(strcmp(d.same_as, "monotonic") == 0 || strcmp(d.same_as, "monotonic_coarse") == 0,
           "same_as a monotonic clock (%s)", d.same_as);
        ok(x11_bus_domain(bus, "x11_us", &d) == 0 && d.available, "x11_us: available");

        for (int i = 0; i < 20; i++) {
                t = clock_now_ns(CLOCK_MONOTONIC) - i * INT64_C(123456789);
                if (clock_convert(bus, "monotonic", "x11_us", t, NULL, &v, &unc) < 0 ||
                    xtime_encode_us(t / 1000, &want) < 0 || xtime_decode_us((uint64_t) v, t / 1000, &dec) < 0) {
                        holds = exact = false;
                        continue;
                }
                holds &= (uint64_t) llabs(dec - t / 1000) * 1000 <= unc + 1000;
                exact &= (uint64_t) v == want;
                if (i == 0)
                        diag("monotonic %lld -> x11_us %lld +- %llu ns (encoding %llu)", (long long) t,
                             (long long) v, (unsigned long long) unc, (unsigned long long) want);
        }
        ok(holds, "monotonic -> x11_us: the encoding of t within the bound");
        ok(exact, "identity: it is the encoding of t exactly");

        ok(own_timestamp(display, &ms, &lo, &hi) == 0, "a PropertyNotify of our own");
        r = clock_convert(bus, "x11", "monotonic", ms, NULL, &v, &unc);
        ok(r == 0 && bracket_holds(v, unc, lo, hi),
           "x11 -> monotonic: %u ms is %lld +- %llu, meets our bracket [%lld, %lld]",
           ms, (long long) v, (unsigned long long) unc, (long long) lo, (long long) hi);
}

static void test_restart(Harness *h, sd_bus *bus, Xvfb *x) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        bool want;
        X11BusWatch w;
        X11BusDomain d;
        int64_t v, t;
        uint64_t unc;
        unsigned since;
        int display = x->display, r;

        ok(x11_bus_watch(bus, &w) >= 0, "watching DomainsChanged");
        since = w.changes;
        ok(xvfb_stop(x) == 0, "Xvfb killed");
        ok(x11_bus_wait_changed(bus, &w, since, WAIT_MS) == 0, "DomainsChanged");
        want = false;
        ok(x11_bus_wait_for(bus, "x11", is_available, &want, WAIT_MS, &d) == 0, "x11 unavailable");
        ok(x11_bus_domain(bus, "x11_us", &d) == 0 && !d.available, "x11_us unavailable");
        ok(harness_daemon_alive(h), "the daemon lives on");
        {
                _cleanup_free_ char *log = NULL;
                char line[512];

                /* A user reads the log or ListDomains: both give x11's reason in the same words. */
                ok(x11_bus_domain(bus, "x11", &d) == 0 && d.reason[0], "ListDomains gives x11's reason: %s", d.reason);
                snprintf(line, sizeof(line), "domain 'x11' is unavailable: %s", d.reason);
                ok(harness_daemon_log(h, &log) >= 0 && strstr(log, line),
                   "the daemon's log says x11 is unavailable in the same words");
                if (log && !strstr(log, line))
                        diag("log: %s", log);
        }
        t = clock_now_ns(CLOCK_MONOTONIC);
        r = clock_convert(bus, "monotonic", "x11_us", t, &error, &v, &unc);
        ok(r < 0 && sd_bus_error_has_name(&error, BUS_ERROR_UNAVAILABLE), "Convert to x11_us: Unavailable (%s)",
           error.name ?: "no error");
        sd_bus_error_free(&error);
        ok(clock_convert(bus, "monotonic", "boottime", t, NULL, &v, &unc) == 0, "other domains still convert");

        since = w.changes;
        ok(xvfb_start(display, x) == 0, "a new Xvfb on the same display :%d", display);
        ok(x11_bus_wait_changed(bus, &w, since, WAIT_MS) == 0, "DomainsChanged");
        want = true;
        ok(x11_bus_wait_for(bus, "x11", is_available, &want, WAIT_MS, &d) == 0, "x11 available again");
        ok(x11_bus_wait_for(bus, "x11", is_identity, NULL, WAIT_MS, &d) == 0, "identity again with the new server");
        t = clock_now_ns(CLOCK_MONOTONIC);
        ok(clock_convert(bus, "monotonic", "x11_us", t, NULL, &v, &unc) == 0, "Convert to x11_us works again");
        {
                _cleanup_free_ char *log = NULL;

                /* A new server is announced as a restart (Discontinuity kind "restart"): the log
                 * calls it so, never a step. */
                ok(harness_daemon_log(h, &log) >= 0 && !strstr(log, "'x11' stepped by") &&
                   !strstr(log, "'x11_us' stepped by"), "the log calls no step of x11 what the signal calls a restart");
        }
        x11_bus_unwatch(&w);
}

/* --x11-tracked: the model of its own, with a bound that holds CLOCK_MONOTONIC's encoding. */
static void test_tracked(const char *daemon, const char *display) {
        const char *args[] = { "--display", display, "--x11-tracked", NULL };
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        X11BusDomain d;
        bool holds = true;

        if (harness_new_started(daemon, args, &h, &bus) < 0) {
                ok(false, "a second daemon, --x11-tracked");
                return;
        }
        ok(x11_bus_wait_for(bus, "x11", is_calibrated, NULL, WAIT_MS, &d) == 0, "tracked: x11 calibrated");
        ok(strcmp(d.verdict, "tracked") == 0 && d.same_as[0] == '\0', "tracked: verdict tracked, same as nothing");
        for (int i = 0; i < 20; i++) {
                Bracket b;
                int64_t v, dec;
                uint64_t unc;

                /* The truth: CLOCK_MONOTONIC (Xvfb's clock) at a monotonic_raw instant. */
                bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &b);
                if (clock_convert(bus, "monotonic_raw", "x11_us", b.from_ns, NULL, &v, &unc) < 0 ||
                    xtime_decode_us((uint64_t) v, b.to_lo_ns / 1000, &dec) < 0) {
                        holds = false;
                        continue;
                }
                holds &= bracket_holds(dec * 1000, unc + 1000, b.to_lo_ns, b.to_hi_ns);
        }
        ok(holds, "tracked: monotonic_raw -> x11_us holds CLOCK_MONOTONIC within the bound (%llu ns)",
           (unsigned long long) d.uncertainty_ns);
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        Xvfb x = {};

        tap_args(argc, argv, 1, "TIMECONVD");
        is_int(x11_tap_start(argv[1], &x, &h, &bus), 0, "connected");
        if (tap_failed_)
                return done_testing();

        test_identity(bus, x.name);
        test_tracked(argv[1], x.name);
        test_restart(h, bus, &x);

        xvfb_stop(&x);
        return done_testing();
}
