/* SPDX-License-Identifier: MIT */

/* The display appears after the daemon, as in a real session: a private bus activates timeconvd
 * (its activation file, Exec= the built daemon, SystemdService=timeconvd.service, in a services
 * directory of ours) with no DISPLAY anywhere; fake-systemd1 stands in for the user manager.
 * x11, x11_us and msc are listed unavailable with the reason, and Convert says it. Xvfb starts;
 * dbus-update-activation-environment --systemd DISPLAY=:N publishes it, as a session manager
 * does; x11_us becomes available with the identity verdict, without a restart. Xvfb stops: x11
 * is unavailable with a reason naming the display. DISPLAY leaves the manager's environment:
 * the reason is "no X display" again. Before that, with Xvfb up but DISPLAY not yet published,
 * another client sends the daemon PropertiesChanged signals that claim the manager's DISPLAY is
 * the new server: the daemon takes none of it, only asks the manager again (a few times at
 * most, however many came). Like systemd, the stand-in emits no PropertiesChanged for
 * Environment: the daemon finds DISPLAY by asking at its X sources' attempts. Every wait is on
 * the bus or the daemon's log, with a deadline.
 * usage: test-session-display TIMECONVD FAKE_SYSTEMD1 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness-proc.h"
#include "harness.h"
#include "tap.h"
#include "x11-bus.h"
#include "xvfb.h"

#define MANAGER "org.freedesktop.systemd1"
#define MANAGER_PATH "/org/freedesktop/systemd1"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
/* Generous for a loaded 2-core machine: each wait ends as soon as its condition holds. */
#define WAIT_MS 30000
#define FORGED_SIGNALS 50
/* What timeconvd logs (daemon/session-env.c) at debug level, as its activation file asks. */
#define LOG_CUE "PropertiesChanged of the user manager"
#define LOG_READ "asking the user manager for its environment"
/* As daemon/session-env.h: no more reads than one every this. */
#define READ_SPACING_NS (INT64_C(100) * 1000000)

static bool is_available_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

/* Unavailable, with a reason that holds the text given. */
static bool is_unavailable_because(const X11BusDomain *d, void *userdata) {
        return d->listed && !d->available && strstr(d->reason, (const char *) userdata);
}

/* The daemon's log (stderr of the services the bus activated) from offset on. */
static int read_log(const char *path, size_t offset, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        r = proc_read_file(path, &text, &size);
        if (r < 0)
                return r;
        *ret = strdup(offset <= size ? text + offset : "");
        return *ret ? 0 : -ENOMEM;
}

/* Waits until the log from offset on holds what, waking when the file is written (inotify_fd
 * watches it), up to timeout_ms. *ret gets the log from offset on, as last read. */
static int wait_log(const char *path, int inotify_fd, size_t offset, const char *what, int timeout_ms, char **ret) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        char events[4096];
        int r;

        for (;;) {
                free(*ret);
                *ret = NULL;
                r = read_log(path, offset, ret);
                if (r < 0)
                        return r;
                if (strstr(*ret, what))
                        return 0;
                r = poll(&(struct pollfd) { .fd = inotify_fd, .events = POLLIN }, 1, proc_ms_left(deadline_ns));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                while (read(inotify_fd, events, sizeof(events)) > 0)
                        ;
        }
}

/* PropertiesChanged of the manager's interface, Environment holding DISPLAY=display, from us,
 * unicast to destination: what any client on the bus can send. */
static int send_forged(sd_bus *bus, const char *destination, const char *display) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *assignment = NULL;
        int r;

        if (asprintf(&assignment, "DISPLAY=%s", display) < 0)
                return -ENOMEM;
        r = sd_bus_message_new_signal(bus, &m, MANAGER_PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged");
        if (r >= 0)
                r = sd_bus_message_set_destination(m, destination);
        if (r >= 0)
                r = sd_bus_message_append(m, "sa{sv}as", MANAGER_INTERFACE, 1, "Environment", "as", 1, assignment, 0);
        if (r >= 0)
                r = sd_bus_send(bus, m, NULL);
        return r;
}

/* Another client claims DISPLAY is the server that just started; the manager has none. */
static void test_forged_display(Harness *h, sd_bus *bus, const char *display) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *log_path = NULL, *text = NULL, *switched = NULL;
        _cleanup_close_ int inotify_fd = -EBADF;
        const char *daemon_name = NULL;
        int64_t start_ns, elapsed_ns;
        size_t offset, reads;
        X11BusDomain d = {};
        int r;

        if (asprintf(&log_path, "%s/bus.log", h->dir) < 0 || asprintf(&switched, "X display %s ", display) < 0)
                bail_out("out of memory");
        inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (inotify_fd < 0 || inotify_add_watch(inotify_fd, log_path, IN_MODIFY) < 0)
                bail_out("inotify on %s: %m", log_path);
        r = read_log(log_path, 0, &text);
        if (r < 0)
                bail_out("reading %s: %s", log_path, strerror(-r));
        offset = strlen(text);

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetNameOwner", NULL, &reply, "s", BUS_API_SERVICE);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &daemon_name);
        ok(r >= 0, "timeconvd is %s on the bus", daemon_name ?: "?");
        if (r < 0)
                return;

        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        for (int i = 0; r >= 0 && i < FORGED_SIGNALS; i++)
                r = send_forged(bus, daemon_name, display);
        ok(r >= 0, "another client sends timeconvd %d PropertiesChanged with DISPLAY=%s in Environment",
           FORGED_SIGNALS, display);
        /* Our signals and this call come in order on one connection: when it is answered, the
         * daemon has handled them all. */
        r = x11_bus_domain(bus, "x11", &d);
        ok(r >= 0, "timeconvd answers after them");

        r = wait_log(log_path, inotify_fd, offset, LOG_READ, WAIT_MS, &text);
        elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        ok(r >= 0 && strstr(text, LOG_CUE), "they only make it ask the user manager again (%s)",
           r < 0 ? strerror(-r) : "logged");
        ok(!strstr(text, switched), "it takes no display from them");
        reads = proc_count_in(text, LOG_READ);
        ok(reads <= (size_t) (3 + elapsed_ns / READ_SPACING_NS),
           "  and asks at most once every %" PRIi64 " ms, however many came: %zu reads in %" PRIi64 " ms",
           READ_SPACING_NS / 1000000, reads, elapsed_ns / 1000000);

        r = x11_bus_domain(bus, "x11", &d);
        ok(r >= 0 && !d.available && strstr(d.reason, "no X display"), "x11 still has no display: \"%s\"",
           d.reason);
        if (strstr(text, switched))
                diag("the daemon's log since: %s", text);
}

static int on_domains_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        unsigned *count = userdata;

        (*count)++;
        return 0;
}

/* The activation file: the built daemon with a short cadence, no GPU (not this test's business). */
static int write_activation_file(const char *dir, const char *daemon) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        char real[PATH_MAX];

        if (!realpath(daemon, real))
                return -errno;
        if (asprintf(&path, "%s/" BUS_API_SERVICE ".service", dir) < 0 ||
            asprintf(&text, "[D-BUS Service]\nName=" BUS_API_SERVICE "\n"
                            "Exec=%s --no-gpu --cadence=0.05 --idle-cadence=0.05 --log-level=debug\n"
                            "SystemdService=timeconvd.service\n", real) < 0)
                return -ENOMEM;
        return proc_write_file(path, text);
}

static int manager_environment_has(sd_bus *bus, const char *assignment) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *s;
        int r, found = 0;

        r = sd_bus_get_property(bus, MANAGER, MANAGER_PATH, MANAGER_INTERFACE, "Environment", NULL, &reply, "as");
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "s");
        while (r > 0 && (r = sd_bus_message_read(reply, "s", &s)) > 0)
                found = found || strcmp(s, assignment) == 0;
        return r < 0 ? r : found;
}

static void test_no_display(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *names[] = { "x11", "x11_us", "msc" };
        int64_t v;
        uint64_t u;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                X11BusDomain d = {};

                r = x11_bus_wait_for(bus, names[i], is_unavailable_because, (char *) "no X display", WAIT_MS, &d);
                ok(r >= 0, "without a display, %s is listed unavailable: \"%s\"", names[i], d.reason);
        }
        r = clock_convert(bus, "x11", "monotonic", 1000, &error, &v, &u);
        ok(r < 0 && sd_bus_error_has_name(&error, BUS_ERROR_UNAVAILABLE) && error.message &&
           strstr(error.message, "no X display"),
           "Convert(x11) answers Unavailable, naming the reason: %s: %s", error.name ?: "(none)",
           error.message ?: "(none)");
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *services = NULL, *display_env = NULL, *display_assignment = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL, *runtime = NULL, *runtime_env = NULL;
        HarnessNameWatch manager_watch = {};
        Xvfb x = {};
        X11BusDomain d = {};
        unsigned changes = 0;
        pid_t manager_pid = 0, daemon_pid = 0;
        int manager_pidfd = -1, status = 0, r;

        tap_args(argc, argv, 2, "TIMECONVD FAKE_SYSTEMD1");
        tap_require_program("Xvfb", "xvfb");
        tap_require_program("dbus-update-activation-environment", "dbus-bin");

        /* Nothing may leak a display to the daemon but the manager's environment. */
        unsetenv("DISPLAY");

        /* Our own services directory, there before the bus starts (no reload race). */
        services = strdup("/tmp/timeconv-session-XXXXXX");
        ok(services && mkdtemp(services), "a services directory");
        r = services ? write_activation_file(services, argv[1]) : -ENOMEM;
        is_int(r, 0, "the activation file runs the built timeconvd");
        /* dbus-update-activation-environment talks to systemd only when $XDG_RUNTIME_DIR/systemd
         * exists (its sign that a user manager runs): give it one, in our directory. */
        r = asprintf(&runtime, "%s/runtime/systemd", services ?: "") < 0 ? -ENOMEM : 0;
        if (r >= 0)
                r = (mkdir(dirname(strdupa(runtime)), 0700) < 0 || mkdir(runtime, 0700) < 0) ? -errno : 0;
        if (r >= 0)
                r = asprintf(&runtime_env, "XDG_RUNTIME_DIR=%s/runtime", services) < 0 ? -ENOMEM : 0;
        is_int(r, 0, "a runtime directory where the user manager seems to run");
        r = harness_new(services, &h);
        is_int(r, 0, "a private dbus-daemon starts with our services directory");
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = harness_name_watch(bus, MANAGER, &manager_watch);
        if (r < 0)
                goto finish;

        /* The stand-in user manager, with a session's environment but no DISPLAY yet. */
        {
                const char *manager_argv[] = { argv[2], "XDG_SESSION_TYPE=x11", "LANG=C.UTF-8", NULL };

                r = harness_spawn_owner(h, manager_argv, &manager_watch, WAIT_MS, &manager_pid, &manager_pidfd);
                ok(r >= 0, "fake-systemd1 owns %s on the bus", MANAGER);
                if (r < 0)
                        goto finish;
        }

        r = sd_bus_match_signal(bus, NULL, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "DomainsChanged",
                                on_domains_changed, &changes);
        ok(r >= 0, "watching DomainsChanged");

        /* The first call activates the daemon. */
        r = x11_bus_domain(bus, "monotonic", &d);
        ok(r >= 0 && d.listed, "ListDomains activates timeconvd");
        r = harness_name_pid(bus, BUS_API_SERVICE, &daemon_pid);
        if (r >= 0)
                r = harness_adopt_daemon(h, daemon_pid);
        ok(r >= 0, "the activated daemon (pid %d) is the test's to end", (int) daemon_pid);
        if (r < 0)
                goto finish;

        test_no_display(bus);

        r = xvfb_start(-1, &x);
        ok(r >= 0, "Xvfb starts on %s", x.name);
        if (r < 0)
                goto finish;
        test_forged_display(h, bus, x.name);

        r = asprintf(&display_env, "DISPLAY=%s", x.name) < 0 ? -ENOMEM : 0;
        /* As a session manager does once its X server is up. */
        if (r >= 0) {
                const char *update[] = { "dbus-update-activation-environment", "--systemd", display_env, NULL };
                const char *env[] = { runtime_env, NULL };

                r = harness_run(h, update, env, WAIT_MS, &out, &err, &status);
        }
        ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "dbus-update-activation-environment --systemd %s succeeds%s%s", display_env ?: "", err && err[0] ? ": " : "",
           err ?: "");
        r = manager_environment_has(bus, display_env ?: "");
        ok(r > 0, "the stand-in user manager has %s in its Environment (%d)", display_env ?: "", r);

        r = x11_bus_wait_for(bus, "x11_us", is_available_identity, NULL, WAIT_MS, &d);
        ok(r >= 0, "x11_us becomes available with the identity verdict, without a restart (available %d, "
           "verdict \"%s\", reason \"%s\")", d.available, d.verdict, d.reason);
        ok(harness_daemon_alive(h) && harness_name_pid(bus, BUS_API_SERVICE, &(pid_t) { 0 }) >= 0,
           "the same daemon runs on");
        ok(changes > 0, "DomainsChanged came (%u)", changes);

        r = xvfb_stop(&x);
        is_int(r, 0, "Xvfb stops");
        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, x.name, WAIT_MS, &d);
        ok(r >= 0, "the server gone, x11 is unavailable with a reason naming %s: \"%s\"", x.name, d.reason);

        /* The session ends: DISPLAY leaves the manager's environment. */
        r = sd_bus_call_method(bus, MANAGER, MANAGER_PATH, MANAGER_INTERFACE, "UnsetEnvironment", NULL, NULL, "as", 1,
                               "DISPLAY");
        ok(r >= 0, "UnsetEnvironment DISPLAY");
        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, (char *) "no X display", WAIT_MS, &d);
        ok(r >= 0, "and the reason is \"no X display\" again: \"%s\"", d.reason);
        ok(harness_daemon_alive(h), "the daemon keeps running");

finish:
        harness_name_unwatch(&manager_watch);
        if (x.pid > 0)
                (void) xvfb_stop(&x);
        harness_stop_owner(manager_pid, manager_pidfd, HARNESS_STOP_TIMEOUT_MS);
        bus = sd_bus_flush_close_unref(bus);
        h = harness_free(h);
        if (services)
                (void) proc_rm_rf(services);
        return done_testing();
}
