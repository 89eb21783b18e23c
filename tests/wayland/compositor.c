/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "compositor.h"
#include "harness-proc.h"
#include "time-util.h"

static int try_connect(const Compositor *c) {
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        int fd, r;

        snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", c->dir, c->socket);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        r = connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0 ? -errno : 0;
        close(fd);
        return r;
}

/* Until the socket accepts: its creation from inotify, the compositor's end from its pidfd. A
 * socket is bound before it listens: a refused connection waits for the next event, at most
 * 5 ms at a time (the two calls are next to each other in libwayland-server). */
static int wait_socket(Compositor *c) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) COMPOSITOR_READY_TIMEOUT_MS * 1000000;
        int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK), r = -ETIMEDOUT;
        char buf[4096];

        if (fd < 0)
                return -errno;
        if (inotify_add_watch(fd, c->dir, IN_CREATE) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = c->pidfd, .events = POLLIN } };
                int k = try_connect(c), timeout_ms;

                if (k == 0) {
                        r = 0;
                        break;
                }
                timeout_ms = proc_ms_left(deadline_ns);
                if (timeout_ms == 0)
                        break;
                if (k == -ECONNREFUSED && timeout_ms > 5)
                        timeout_ms = 5;
                if (poll(p, 2, timeout_ms) < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                if (p[1].revents) {
                        r = -ECHILD;
                        break;
                }
                while (read(fd, buf, sizeof(buf)) > 0)
                        ;
        }
        close(fd);
        return r;
}

static int start(Compositor *c, const char *const *argv, const char *bus_address) {
        const char *unset[] = { "WAYLAND_DISPLAY", "DISPLAY", "SESSION_MANAGER", NULL };
        char bus[512], home[96];
        const char *env[] = { bus, home, c->env_runtime, "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1", NULL };
        ProcSpawn s;
        int log_fd, r;

        snprintf(c->log, sizeof(c->log), "%s/compositor.log", c->dir);
        snprintf(bus, sizeof(bus), "DBUS_SESSION_BUS_ADDRESS=%s", bus_address);
        snprintf(home, sizeof(home), "HOME=%s", c->dir);
        snprintf(c->env_runtime, sizeof(c->env_runtime), "XDG_RUNTIME_DIR=%s", c->dir);
        snprintf(c->env_display, sizeof(c->env_display), "WAYLAND_DISPLAY=%s", c->socket);
        log_fd = open(c->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (log_fd < 0)
                return -errno;
        s = (ProcSpawn) { .argv = argv, .env_set = env, .env_unset = unset, .stdout_fd = log_fd, .stderr_fd = log_fd,
                          .fd3 = -1 };
        r = proc_spawn(&s, &c->pid, &c->pidfd);
        close(log_fd);
        if (r < 0) {
                c->pid = 0;
                return r;
        }
        return wait_socket(c);
}

static int make_dir(Compositor *c) {
        snprintf(c->dir, sizeof(c->dir), "/tmp/test-wayland-XXXXXX");
        /* mkdtemp() makes it 0700, as XDG_RUNTIME_DIR must be. */
        return mkdtemp(c->dir) ? 0 : -errno;
}

int compositor_start_weston(Compositor *c, const char *bus_address) {
        char ini[128], config[160], socket_arg[64];
        const char *argv[] = { "weston", "--backend=headless-backend.so", socket_arg, config, "--idle-time=0", NULL };
        int r;

        *c = (Compositor) { .pidfd = -1 };
        r = make_dir(c);
        if (r < 0)
                return r;
        snprintf(c->socket, sizeof(c->socket), "wl-weston");
        snprintf(socket_arg, sizeof(socket_arg), "--socket=%s", c->socket);
        snprintf(ini, sizeof(ini), "%s/weston.ini", c->dir);
        snprintf(config, sizeof(config), "--config=%s", ini);
        r = proc_write_file(ini, "[core]\nrepaint-window=16\n");
        if (r < 0)
                return r;
        return start(c, argv, bus_address);
}

int compositor_start_mutter(Compositor *c, const char *bus_address) {
        char display_arg[64];
        const char *argv[] = { "mutter", "--wayland", "--headless", "--no-x11", "--sm-disable", display_arg,
                               "--virtual-monitor", "800x600", "--virtual-monitor", "800x600@144", NULL };
        int r;

        *c = (Compositor) { .pidfd = -1 };
        r = make_dir(c);
        if (r < 0)
                return r;
        snprintf(c->socket, sizeof(c->socket), "wl-mutter");
        snprintf(display_arg, sizeof(display_arg), "--wayland-display=%s", c->socket);
        return start(c, argv, bus_address);
}

int compositor_start_mutter_xwayland(Compositor *c, const char *bus_address, const char *cgroup_procs) {
        char script[512];
        const char *argv[] = { "sh", "-c", script, NULL };
        int r;

        *c = (Compositor) { .pidfd = -1 };
        r = make_dir(c);
        if (r < 0)
                return r;
        snprintf(c->socket, sizeof(c->socket), "wl-mutter");
        snprintf(script, sizeof(script),
                 "echo $$ > '%s' && exec mutter --wayland --headless --sm-disable --wayland-display=%s "
                 "--virtual-monitor 800x600", cgroup_procs, c->socket);
        return start(c, argv, bus_address);
}

void compositor_stop(Compositor *c, bool show_log) {
        if (c->pid > 0) {
                proc_signal(c->pidfd, SIGTERM);
                if (proc_wait(c->pidfd, c->pid, true, 5000, NULL) == -ETIMEDOUT) {
                        proc_signal(c->pidfd, SIGKILL);
                        proc_wait(c->pidfd, c->pid, true, -1, NULL);
                }
                close(c->pidfd);
                c->pid = 0;
        }
        if (show_log && *c->log) {
                char *text = NULL;

                if (proc_read_file(c->log, &text, NULL) >= 0)
                        fprintf(stderr, "# compositor log:\n%s\n", text);
                free(text);
        }
        if (*c->dir)
                proc_rm_rf(c->dir);
        *c->dir = 0;
}
