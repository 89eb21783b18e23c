/* SPDX-License-Identifier: MIT */

/* The session's display is an X server that accepts connections and never answers (silent-x.h,
 * held open for the whole test), then moves to a live Xvfb: timeconvd (following the session
 * through fake-systemd1, the user manager's stand-in) says x11 is unavailable because the server
 * on the silent display does not answer, and once the manager's DISPLAY names the live server,
 * x11 comes up on it without a restart, and every connection the daemon had opened to the silent
 * one is closed. Then back to the silent display (the live server stops), and on to a new live
 * one while the daemon still waits for the silent one: the pending attempt is dropped for it. Every wait is on
 * the bus (ListDomains, re-read when DomainsChanged comes) or the silent server's counts.
 * usage: test-session-silent TIMECONVD FAKE_SYSTEMD1 */

#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness-proc.h"
#include "harness.h"
#include "silent-x.h"
#include "tap.h"
#include "x11-bus.h"
#include "xvfb.h"

#define MANAGER "org.freedesktop.systemd1"
#define MANAGER_PATH "/org/freedesktop/systemd1"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
/* Generous for a loaded 2-core machine: each wait ends as soon as its condition holds. */
#define WAIT_MS 30000

static bool is_available_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

/* Unavailable, with a reason that holds the text given. */
static bool is_unavailable_because(const X11BusDomain *d, void *userdata) {
        return d->listed && !d->available && strstr(d->reason, (const char *) userdata);
}

static int set_display(sd_bus *bus, const char *display) {
        _cleanup_free_ char *assignment = NULL;

        if (asprintf(&assignment, "DISPLAY=%s", display) < 0)
                return -ENOMEM;
        return sd_bus_call_method(bus, MANAGER, MANAGER_PATH, MANAGER_INTERFACE, "SetEnvironment", NULL, NULL, "as",
                                  1, assignment);
}

/* x11 unavailable because the silent server does not answer. */
static void expect_silent(sd_bus *bus, SilentX *sx, unsigned accepted_min) {
        _cleanup_free_ char *why = NULL;
        unsigned accepted = 0, closed = 0;
        X11BusDomain d = {};
        int r;

        if (asprintf(&why, "the X server on %s does not answer", sx->name) < 0)
                abort();
        r = silent_x_wait(sx, accepted_min, 0, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "the daemon connects to the silent %s (%u connections accepted)", sx->name, accepted);
        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, why, WAIT_MS, &d);
        ok(r >= 0, "x11 is unavailable: \"%s\"", d.reason);
}

/* The session moves to the live server: x11 comes up on it, DomainsChanged says so, and the
 * daemon keeps no connection to the silent one. */
static void expect_live(sd_bus *bus, X11BusWatch *w, SilentX *sx, const Xvfb *live) {
        unsigned changes = w->changes, accepted = 0, closed = 0;
        X11BusDomain d = {};
        int r;

        int64_t start_ns = clock_now_ns(CLOCK_MONOTONIC);

        r = set_display(bus, live->name);
        ok(r >= 0, "the user manager's DISPLAY is %s now", live->name);
        r = x11_bus_wait_for(bus, "x11_us", is_available_identity, NULL, WAIT_MS, &d);
        ok(r >= 0, "x11_us comes up on %s, without a restart (available %d, verdict \"%s\", reason \"%s\")",
           live->name, d.available, d.verdict, d.reason);
        diag("%.3f s from the new DISPLAY to x11_us with the identity verdict",
             (double) (clock_now_ns(CLOCK_MONOTONIC) - start_ns) / 1e9);
        /* The signal may still be queued behind ListDomains' reply: processed, not just looked at. */
        r = x11_bus_wait_changed(bus, w, changes, WAIT_MS);
        ok(r >= 0, "DomainsChanged came (%u)", w->changes - changes);
        (void) silent_x_wait(sx, 0, 0, 0, &accepted, NULL);
        r = silent_x_wait(sx, 0, accepted, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "every connection to %s is closed (%u of %u)", sx->name, closed, accepted);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *display_env = NULL;
        const char *daemon_args[] = { "--no-gpu", "--cadence=0.05", "--idle-cadence=0.05", NULL };
        HarnessNameWatch manager_watch = {};
        X11BusWatch watch = {};
        SilentX sx = {};
        Xvfb live = {};
        pid_t manager_pid = 0;
        unsigned accepted = 0;
        int manager_pidfd = -1, status = -1, r;

        tap_args(argc, argv, 2, "TIMECONVD FAKE_SYSTEMD1");
        tap_require_program("Xvfb", "xvfb");
        /* No authority file of the machine's: the test's servers ask for none. */
        setenv("XAUTHORITY", "/dev/null", 1);

        r = silent_x_start(&sx);
        ok(r >= 0, "a silent X server on %s: it accepts, never answers", sx.name);
        if (r >= 0)
                r = xvfb_start(-1, &live);
        ok(r >= 0, "a live Xvfb on %s", live.name);
        if (r >= 0)
                r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = harness_name_watch(bus, MANAGER, &manager_watch);
        ok(r >= 0, "a private bus");
        if (r < 0)
                goto finish;

        /* The user manager, whose environment names the silent display. */
        if (asprintf(&display_env, "DISPLAY=%s", sx.name) < 0)
                abort();
        {
                const char *manager_argv[] = { argv[2], "XDG_SESSION_TYPE=x11", display_env, NULL };

                r = harness_spawn_owner(h, manager_argv, &manager_watch, WAIT_MS, &manager_pid, &manager_pidfd);
                ok(r >= 0, "fake-systemd1 owns %s, with %s", MANAGER, display_env);
                if (r < 0)
                        goto finish;
        }
        r = x11_bus_watch(bus, &watch);
        ok(r >= 0, "watching DomainsChanged");

        r = harness_start_daemon(h, argv[1], daemon_args, WAIT_MS);
        ok(r >= 0, "timeconvd is ready");
        if (r < 0)
                goto finish;

        expect_silent(bus, &sx, 1);
        /* Before this change, x11 stayed there for good: the attempt on the silent display held
         * the process-wide xcb_connect() lock, and a source waiting for it never asked for the
         * session's display again. */
        expect_live(bus, &watch, &sx, &live);

        /* Back to the silent one (the daemon asks the manager again when it loses its server:
         * systemd announces no change of its environment), and away again while the daemon
         * still waits for it. */
        (void) silent_x_wait(&sx, 0, 0, 0, &accepted, NULL);
        r = set_display(bus, sx.name);
        ok(r >= 0, "the user manager's DISPLAY is %s again", sx.name);
        ok(xvfb_stop(&live) == 0, "%s stops", live.name);
        expect_silent(bus, &sx, accepted + 1);
        r = xvfb_start(-1, &live);
        ok(r >= 0, "a new live Xvfb on %s", live.name);
        if (r >= 0)
                expect_live(bus, &watch, &sx, &live);

        ok(harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, &status, NULL) == 0 && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0, "SIGTERM: exit status 0");

finish:
        x11_bus_unwatch(&watch);
        harness_name_unwatch(&manager_watch);
        harness_stop_owner(manager_pid, manager_pidfd, HARNESS_STOP_TIMEOUT_MS);
        bus = sd_bus_flush_close_unref(bus);
        h = harness_free(h);
        if (live.pid > 0)
                (void) xvfb_stop(&live);
        silent_x_stop(&sx);
        return done_testing();
}
