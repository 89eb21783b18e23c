/* SPDX-License-Identifier: MIT */

/* timeconvd never starts Xwayland. A Wayland compositor listens on the X socket itself and
 * starts Xwayland for the first client that connects, so on a Wayland session the daemon must
 * not be that client. Here the user manager (fake-systemd1) has a Wayland session's environment,
 * as GNOME's is once mutter runs: XDG_SESSION_TYPE=wayland, WAYLAND_DISPLAY and DISPLAY=:N. The
 * X socket of :N is ours: a listener that records each connection (and closes it), standing in
 * for the compositor's socket. With no Xwayland process, the daemon lists x11 and msc
 * unavailable with the Wayland reason and, over several of its X sources' attempts (its debug
 * log says each), never connects. Then a process named Xwayland with ":N" among its arguments
 * starts (this test's own binary under that name, as the compositor would start Xwayland): the
 * daemon connects. It exits: the daemon withdraws the display at once (its log says so) and,
 * over several more attempts, connects no more.
 * What this does not prove: that mutter itself would have started Xwayland for the connection
 * (the listener stands in for mutter); the process check is the daemon's, against real /proc.
 * usage: test-session-xwayland TIMECONVD FAKE_SYSTEMD1 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness-proc.h"
#include "harness.h"
#include "tap.h"
#include "x11-bus.h"

#define MANAGER "org.freedesktop.systemd1"
#define WAIT_MS 30000
/* What timeconvd logs (daemon/session-env.c), at debug level for each attempt. */
#define LOG_STILL "Wayland session: still no Xwayland on"
#define ATTEMPTS 3

typedef struct Listener {
        int fd, stop_fd, counted_fd;
        atomic_uint connections;
        pthread_t thread;
} Listener;

static void *listener_run(void *userdata) {
        Listener *l = userdata;

        for (;;) {
                struct pollfd p[2] = { { .fd = l->fd, .events = POLLIN }, { .fd = l->stop_fd, .events = POLLIN } };
                int c;

                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return NULL;
                if (p[1].revents)
                        return NULL;
                c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                atomic_fetch_add(&l->connections, 1);
                (void) !write(l->counted_fd, &(uint64_t) { 1 }, sizeof(uint64_t));
                close(c);
        }
}

/* An X display's socket nobody else has: the abstract one (libxcb's first choice) of the
 * first free number from 600 on, with its lock file, as an X server takes a display. */
static int listener_start(Listener *l, unsigned *ret_display, char *lock, size_t lock_size) {
        for (unsigned n = 600; n < 1000; n++) {
                struct sockaddr_un a = { .sun_family = AF_UNIX };
                socklen_t len;
                char pid[16];
                int fd, lock_fd;

                snprintf(lock, lock_size, "/tmp/.X%u-lock", n);
                lock_fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
                if (lock_fd < 0)
                        continue;
                snprintf(pid, sizeof(pid), "%10d\n", (int) getpid());
                (void) !write(lock_fd, pid, strlen(pid));
                close(lock_fd);
                len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 +
                                   (size_t) snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "/tmp/.X11-unix/X%u", n));
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 && bind(fd, (struct sockaddr *) &a, len) == 0 && listen(fd, 16) == 0) {
                        l->fd = fd;
                        l->stop_fd = eventfd(0, EFD_CLOEXEC);
                        l->counted_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                        *ret_display = n;
                        return -pthread_create(&l->thread, NULL, listener_run, l);
                }
                if (fd >= 0)
                        close(fd);
                unlink(lock);
        }
        return -EADDRINUSE;
}

static void listener_stop(Listener *l) {
        (void) !write(l->stop_fd, &(uint64_t) { 1 }, sizeof(uint64_t));
        pthread_join(l->thread, NULL);
        close(l->fd);
        close(l->stop_fd);
        close(l->counted_fd);
}

/* Waits up to timeout_ms for the listener to record a connection. */
static bool wait_connection(Listener *l, int timeout_ms) {
        return atomic_load(&l->connections) > 0 ||
               poll(&(struct pollfd) { .fd = l->counted_fd, .events = POLLIN }, 1, timeout_ms) > 0;
}

static bool is_unavailable_because(const X11BusDomain *d, void *userdata) {
        return d->listed && !d->available && strstr(d->reason, (const char *) userdata);
}

static bool is_other_reason(const X11BusDomain *d, void *userdata) {
        return d->listed && !strstr(d->reason, (const char *) userdata);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *daemon_args[] = { "--no-gpu", "--log-level=debug", NULL };
        char lock[64], display_env[32], display[16], fake[128], log[256], why[64], exited[64];
        HarnessNameWatch manager_watch = {};
        Listener l = { .fd = -1 };
        X11BusDomain d = {};
        pid_t manager_pid = 0, xwayland_pid = 0;
        int manager_pidfd = -1, xwayland_pidfd = -1, r;
        unsigned n = 0, before;
        size_t offset = 0;

        /* Started as "Xwayland": the stand-in for one, until killed. */
        if (strcmp(basename(argv[0]), "Xwayland") == 0) {
                for (;;)
                        pause();
        }
        tap_args(argc, argv, 2, "TIMECONVD FAKE_SYSTEMD1");

        r = listener_start(&l, &n, lock, sizeof(lock));
        if (r < 0)
                bail_out("an X socket of our own: %s", strerror(-r));
        snprintf(display, sizeof(display), ":%u", n);
        snprintf(display_env, sizeof(display_env), "DISPLAY=%s", display);
        snprintf(why, sizeof(why), "no Xwayland runs on %s", display);
        snprintf(exited, sizeof(exited), ") on %s exited", display);

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = harness_name_watch(bus, MANAGER, &manager_watch);
        if (r < 0)
                bail_out("a private bus: %s", strerror(-r));
        {
                const char *manager_argv[] = { argv[2], "XDG_SESSION_TYPE=wayland", "WAYLAND_DISPLAY=wayland-0",
                                               display_env, NULL };

                r = harness_spawn_owner(h, manager_argv, &manager_watch, WAIT_MS, &manager_pid, &manager_pidfd);
                ok(r >= 0, "the user manager has a Wayland session's environment, %s among it", display_env);
        }
        r = harness_start_daemon(h, argv[1], daemon_args, HARNESS_READY_TIMEOUT_MS);
        ok(r >= 0, "timeconvd runs (its X sources on, following the session)");
        snprintf(log, sizeof(log), "%s/daemon.log", h->dir);

        /* No Xwayland: unavailable, and several attempts that do not connect. */
        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, why, WAIT_MS, &d);
        ok(r >= 0, "x11 unavailable: \"%s\"", d.reason);
        r = x11_bus_wait_for(bus, "msc", is_unavailable_because, why, WAIT_MS, &d);
        ok(r >= 0, "msc unavailable: \"%s\"", d.reason);
        r = proc_wait_log(log, 0, LOG_STILL, ATTEMPTS, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon looked for Xwayland at %d of its X sources' attempts", ATTEMPTS);
        is_int(atomic_load(&l.connections), 0, "no connection to the X socket while no Xwayland runs");

        /* Xwayland appears: the daemon connects. */
        snprintf(fake, sizeof(fake), "%s/Xwayland", h->dir);
        {
                char self[4096];
                ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

                r = k > 0 ? (self[k] = 0, symlink(self, fake) < 0 ? -errno : 0) : -EIO;
        }
        if (r >= 0)
                r = proc_spawn(&(ProcSpawn) { .argv = (const char *[]) { fake, display, "-rootless", NULL },
                                              .stdout_fd = -1, .stderr_fd = -1, .fd3 = -1 },
                               &xwayland_pid, &xwayland_pidfd);
        ok(r >= 0, "a process named Xwayland runs with %s (pid %d)", display, (int) xwayland_pid);
        r = wait_connection(&l, WAIT_MS);
        ok(r, "with Xwayland running, the daemon connects to %s (%u connections)", display,
           atomic_load(&l.connections));
        r = x11_bus_wait_for(bus, "x11", is_other_reason, why, WAIT_MS, &d);
        ok(r >= 0, "x11's reason is no longer the Wayland one: \"%s\"", d.reason);

        /* It goes: withdrawn at once, and no more connections over several attempts. */
        if (xwayland_pid > 0) {
                proc_signal(xwayland_pidfd, SIGTERM);
                proc_wait(xwayland_pidfd, xwayland_pid, true, WAIT_MS, NULL);
                close(xwayland_pidfd);
        }
        r = proc_wait_log(log, offset, exited, 1, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon saw Xwayland exit");
        r = x11_bus_wait_for(bus, "x11", is_unavailable_because, why, WAIT_MS, &d);
        ok(r >= 0, "x11 unavailable again: \"%s\"", d.reason);
        before = atomic_load(&l.connections);
        r = proc_wait_log(log, offset, LOG_STILL, ATTEMPTS, WAIT_MS, &offset, NULL);
        ok(r >= 0, "the daemon looked for Xwayland at %d more attempts", ATTEMPTS);
        is_int(atomic_load(&l.connections), before, "no connection once Xwayland is gone");

        harness_name_unwatch(&manager_watch);
        harness_stop_owner(manager_pid, manager_pidfd, WAIT_MS);
        h = harness_free(h);
        listener_stop(&l);
        unlink(lock);
        return done_testing();
}
