/* SPDX-License-Identifier: MIT */

/* D-Bus activation: the build tree's activation file (Exec= the built timeconvd) is in the
 * services directories of a private bus; nobody starts the daemon, a Convert does. Then SIGTERM,
 * and the next call activates a fresh daemon.
 * usage: test-daemon-activation TIMECONVD BUILD_TREE_SERVICES_DIR */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness-proc.h"
#include "harness.h"
#include "tap.h"

#define ACTIVATION_FILE BUS_API_SERVICE ".service"

/* The build tree's activation file: our name, and Exec= the daemon under test. */
static void check_activation_file(const char *services_dir, const char *daemon) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        char exec_path[PATH_MAX] = "", want[PATH_MAX] = "";
        const char *exec;

        if (asprintf(&path, "%s/%s", services_dir, ACTIVATION_FILE) < 0 || proc_read_file(path, &text, NULL) < 0) {
                ok(false, "the build-tree activation file %s/%s can be read", services_dir, ACTIVATION_FILE);
                return;
        }
        exec = strstr(text, "\nExec=");
        if (exec)
                snprintf(exec_path, sizeof(exec_path), "%.*s", (int) strcspn(exec + 6, "\n"), exec + 6);
        ok(strstr(text, "\nName=" BUS_API_SERVICE "\n") && realpath(daemon, want) && strcmp(exec_path, want) == 0,
           "the build-tree activation file names %s and runs %s (Exec=%s)", BUS_API_SERVICE, daemon, exec_path);
}

static bool exe_is(pid_t pid, const char *daemon) {
        char link[64], exe[PATH_MAX], want[PATH_MAX];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/%d/exe", (int) pid);
        n = readlink(link, exe, sizeof(exe) - 1);
        if (n < 0 || !realpath(daemon, want))
                return false;
        exe[n] = 0;
        return strcmp(exe, want) == 0;
}

static bool activatable(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *name;
        bool found = false;

        if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "ListActivatableNames", NULL, &reply, "") < 0 ||
            sd_bus_message_enter_container(reply, 'a', "s") < 0)
                return false;
        while (sd_bus_message_read(reply, "s", &name) > 0)
                found = found || strcmp(name, BUS_API_SERVICE) == 0;
        return found;
}

/* One Convert through activation, checked against the truth; the pid that answered. */
static int convert_activating(sd_bus *bus, const char *daemon, const char *what, pid_t *ret_pid) {
        Bracket b;
        int64_t v = 0;
        uint64_t u = 0;
        pid_t pid = 0;
        int r;

        bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
        r = clock_convert(bus, "monotonic", "boottime", b.from_ns, NULL, &v, &u);
        is_int(r, 0, what);
        ok(r >= 0 && bracket_holds(v, u, b.to_lo_ns, b.to_hi_ns),
           "the answer lies within its bound of the truth (%" PRIi64 " +- %" PRIu64 ")", v, u);
        r = harness_name_pid(bus, BUS_API_SERVICE, &pid);
        ok(r >= 0 && pid > 0 && pid != getpid() && exe_is(pid, daemon),
           "%s is now owned by the built timeconvd (pid %d)", BUS_API_SERVICE, (int) pid);
        if (r < 0)
                return r;
        *ret_pid = pid;
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        HarnessNameWatch watch = {};
        pid_t first = 0, second = 0;
        int r;

        tap_args(argc, argv, 2, "TIMECONVD BUILD_TREE_SERVICES_DIR");

        /* The activation file's directory is a <servicedir> from the start: a file copied in
         * later would race with the bus's reload. */
        check_activation_file(argv[2], argv[1]);
        r = harness_new(argv[2], &h);
        is_int(r, 0, "a private dbus-daemon starts, the build tree's activation file in its services");
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = harness_name_watch(bus, BUS_API_SERVICE, &watch);
        is_int(r, 0, "a client is connected and watches the name");
        if (r < 0)
                return done_testing();

        ok(activatable(bus), "the bus lists %s as activatable", BUS_API_SERVICE);
        ok(!watch.owned, "nobody owns %s before the first call", BUS_API_SERVICE);

        if (convert_activating(bus, argv[1], "the first Convert activates timeconvd and succeeds", &first) >= 0 &&
            harness_adopt_daemon(h, first) >= 0) {
                int64_t elapsed_ns = 0;

                r = harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, NULL, &elapsed_ns);
                ok(r >= 0, "the activated daemon ends on SIGTERM (%.3f s)", elapsed_ns / 1e9);
                r = harness_name_wait(&watch, false, HARNESS_STOP_TIMEOUT_MS);
                ok(r >= 0, "and its name leaves the bus");

                /* The name is free for certain now: the next call must start a new daemon. */
                if (convert_activating(bus, argv[1], "the next Convert activates it again", &second) >= 0) {
                        ok(second != first, "a new process (%d, was %d)", (int) second, (int) first);
                        r = harness_adopt_daemon(h, second);
                        is_int(r, 0, "the test can end it");
                }
        }
        harness_name_unwatch(&watch);
        return done_testing();
}
