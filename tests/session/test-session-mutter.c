/* SPDX-License-Identifier: MIT */

/* timeconvd never starts Xwayland, against the real thing: mutter 43 --wayland --headless in a
 * cgroup that looks like a systemd user unit (…/user@UID.service/app.slice/NAME.service under
 * the cgroup2 mount), where mutter listens on its X display itself and starts Xwayland only
 * when an X client connects. The user manager (fake-systemd1) has the session's environment
 * (XDG_SESSION_TYPE=wayland, WAYLAND_DISPLAY, DISPLAY=:N). Over several of the daemon's X
 * sources' attempts no Xwayland appears; an X client of the test's connects, mutter starts
 * Xwayland, the daemon follows it onto the display (x11 available). Xwayland is ended: the daemon
 * withdraws the display, and over several attempts no Xwayland comes back while mutter runs.
 * usage: test-session-mutter TIMECONVD FAKE_SYSTEMD1 */

#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include "compositor.h"
#include "harness-proc.h"
#include "harness.h"
#include "tap.h"
#include "x11-bus.h"

#define MANAGER "org.freedesktop.systemd1"
#define WAIT_MS 60000
#define ATTEMPTS 3

/* The Xwayland serving :n, read from /proc here as the test's own check: its pid, 0 for none. */
static pid_t xwayland_on(unsigned n) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        char want[16];
        pid_t found = 0;

        snprintf(want, sizeof(want), ":%u", n);
        while (d && !found && (e = readdir(d))) {
                char path[300], *text = NULL;
                size_t size = 0;

                if (!isdigit((unsigned char) e->d_name[0]))
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
                if (proc_read_file(path, &text, &size) >= 0 && strcmp(text, "Xwayland\n") == 0) {
                        free(text);
                        text = NULL;
                        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
                        if (proc_read_file(path, &text, &size) >= 0)
                                for (size_t i = 0; i < size; i += strlen(text + i) + 1)
                                        if (strcmp(text + i, want) == 0)
                                                found = (pid_t) atoi(e->d_name);
                }
                free(text);
        }
        if (d)
                closedir(d);
        return found;
}

/* The cgroup2 mount point, from mountinfo. */
static int cgroup2_mount(char *ret, size_t size) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[1024];
        int r = -ENOENT;

        while (f && fgets(line, sizeof(line), f)) {
                char mount[512];

                if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %511s", mount) == 1) {
                        snprintf(ret, size, "%s", mount);
                        r = 0;
                        break;
                }
        }
        if (f)
                fclose(f);
        return r;
}

/* The unit's cgroup, every level made: 0, or -errno of the first that could not be. */
static int make_unit_cgroup(char *path, size_t size) {
        char mount[512], *slash;
        int r;

        r = cgroup2_mount(mount, sizeof(mount));
        if (r < 0)
                return r;
        snprintf(path, size, "%s/user.slice/user-%u.slice/user@%u.service/app.slice/timeconv-test-%d.service", mount,
                 (unsigned) getuid(), (unsigned) getuid(), (int) getpid());
        for (slash = path + strlen(mount) + 1; (slash = strchr(slash, '/')); slash++) {
                *slash = 0;
                r = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
                *slash = '/';
                if (r < 0)
                        return r;
        }
        return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* mutter's Xwayland authority file, made at its start in its runtime directory. */
static int find_authority(const Compositor *c, char *ret, size_t size) {
        DIR *d = opendir(c->dir);
        struct dirent *e;
        int r = -ENOENT;

        while (d && (e = readdir(d)))
                if (strncmp(e->d_name, ".mutter-Xwaylandauth.", 21) == 0) {
                        snprintf(ret, size, "%s/%s", c->dir, e->d_name);
                        r = 0;
                        break;
                }
        if (d)
                closedir(d);
        return r;
}

static bool is_unavailable_because(const X11BusDomain *d, void *userdata) {
        return d->listed && !d->available && strstr(d->reason, (const char *) userdata);
}

static bool is_available(const X11BusDomain *d, void *userdata) {
        return d->available;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *daemon_args[] = { "--no-gpu", "--log-level=debug", NULL };
        char cgroup[768], procs[800], display[16], display_env[32], authority[512], log[256], why[64],
                still[64], exited[64], served[64];
        HarnessNameWatch manager_watch = {};
        Compositor c = { .pidfd = -1 };
        xcb_connection_t *client = NULL;
        X11BusDomain d = {};
        pid_t manager_pid = 0, xwayland;
        int manager_pidfd = -1, r;
        unsigned n = 0;
        size_t offset = 0, size = 0;
        char *text = NULL, *at;

        tap_args(argc, argv, 2, "TIMECONVD FAKE_SYSTEMD1");
        tap_require_program("mutter", "mutter");
        tap_require_program("Xwayland", "xwayland");
        r = make_unit_cgroup(cgroup, sizeof(cgroup));
        if (r < 0)
                skip_all("no cgroup2 where a cgroup can be made (not root?): mutter cannot be put in a user unit");
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = harness_name_watch(bus, MANAGER, &manager_watch);
        if (r < 0)
                bail_out("a private bus: %s", strerror(-r));

        r = compositor_start_mutter_xwayland(&c, h->bus_address, procs);
        ok(r >= 0, "mutter --wayland --headless runs in %s", cgroup);
        r = r >= 0 ? proc_wait_log(c.log, 0, "Using public X11 display :", 1, WAIT_MS, &size, &text) : r;
        at = text ? strstr(text, "Using public X11 display :") : NULL;
        if (r >= 0)
                r = at && sscanf(at, "Using public X11 display :%u", &n) == 1 ? 0 : -EBADMSG;
        ok(r >= 0, "mutter listens on X display :%u", n);
        free(text);
        snprintf(display, sizeof(display), ":%u", n);
        snprintf(display_env, sizeof(display_env), "DISPLAY=%s", display);
        snprintf(why, sizeof(why), "no Xwayland runs on %s", display);
        snprintf(still, sizeof(still), "still no Xwayland on %s", display);
        snprintf(exited, sizeof(exited), ") on %s exited", display);
        snprintf(served, sizeof(served), "X display %s (from", display);
        ok(xwayland_on(n) == 0, "no Xwayland on %s yet: mutter starts it on demand", display);
        r = find_authority(&c, authority, sizeof(authority));
        ok(r >= 0, "mutter's Xwayland authority: %s", r >= 0 ? authority : "none");
        /* Ours and the daemon's (it inherits our environment): the session's XAUTHORITY. */
        if (r >= 0)
                setenv("XAUTHORITY", authority, 1);

        {
                _cleanup_free_ char *wayland_env = NULL;
                const char *manager_argv[] = { argv[2], "XDG_SESSION_TYPE=wayland", NULL, display_env, NULL };

                r = asprintf(&wayland_env, "WAYLAND_DISPLAY=%s", c.socket) < 0 ? -ENOMEM : 0;
                manager_argv[2] = wayland_env;
                if (r >= 0)
                        r = harness_spawn_owner(h, manager_argv, &manager_watch, WAIT_MS, &manager_pid,
                                                &manager_pidfd);
                ok(r >= 0, "the user manager has the Wayland session's environment, %s among it", display_env);
        }
        r = harness_start_daemon(h, argv[1], daemon_args, HARNESS_READY_TIMEOUT_MS);
        ok(r >= 0, "timeconvd runs (its X sources on, following the session)");
        snprintf(log, sizeof(log), "%s/daemon.log", h->dir);

        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, why, WAIT_MS, &d);
        ok(r >= 0, "x11 unavailable: \"%s\"", d.reason);
        r = proc_wait_log(log, 0, still, ATTEMPTS, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon looked for Xwayland at %d of its X sources' attempts", ATTEMPTS);
        xwayland = xwayland_on(n);
        ok(xwayland == 0, "still no Xwayland: timeconvd did not start it (pid %d)", (int) xwayland);

        /* An X client: mutter starts Xwayland, and the daemon follows. */
        client = xcb_connect(display, NULL);
        ok(!xcb_connection_has_error(client), "an X client of ours connects to %s", display);
        xwayland = xwayland_on(n);
        ok(xwayland > 0, "mutter started Xwayland for it (pid %d)", (int) xwayland);
        r = proc_wait_log(log, offset, served, 1, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon takes %s once Xwayland serves it", display);
        r = x11_bus_wait_for(bus, "x11", is_available, NULL, WAIT_MS, &d);
        ok(r >= 0, "x11 available on Xwayland (verdict %s)", d.verdict);
        xcb_disconnect(client);

        /* Xwayland goes: the daemon lets go and does not bring it back. */
        if (xwayland > 0)
                kill(xwayland, SIGTERM);
        r = proc_wait_log(log, offset, exited, 1, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon saw Xwayland exit");
        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, why, WAIT_MS, &d);
        ok(r >= 0, "x11 unavailable again: \"%s\"", d.reason);
        r = proc_wait_log(log, offset, still, ATTEMPTS, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon looked for Xwayland at %d more attempts", ATTEMPTS);
        ok(poll(&(struct pollfd) { .fd = c.pidfd, .events = POLLIN }, 1, 0) == 0, "mutter still runs");
        xwayland = xwayland_on(n);
        ok(xwayland == 0, "no Xwayland again: timeconvd did not restart it (pid %d)", (int) xwayland);

        harness_name_unwatch(&manager_watch);
        harness_stop_owner(manager_pid, manager_pidfd, WAIT_MS);
        h = harness_free(h);
        compositor_stop(&c, tap_failed_ > 0);
        /* Anything mutter left in the unit (an Xwayland) goes with it. */
        snprintf(procs, sizeof(procs), "%s/cgroup.kill", cgroup);
        (void) proc_write_file(procs, "1");
        (void) rmdir(cgroup);
        return done_testing();
}
