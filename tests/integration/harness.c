/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bus-errors.h"
#include "harness-proc.h"
#include "harness.h"

/* Variables a test must not inherit: a real session, a display, a service manager. */
static const char *const unset_for_children[] = {
        "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE", "NOTIFY_SOCKET", "WATCHDOG_USEC",
        "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "DISPLAY",
        "WAYLAND_DISPLAY", NULL,
};

static void close_fd(int *fd) {
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static int open_log(const Harness *h, const char *name, int *ret_fd) {
        _cleanup_free_ char *path = NULL;
        int fd;

        if (asprintf(&path, "%s/%s", h->dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

static int write_config(const Harness *h, const char *extra_servicedir) {
        _cleanup_free_ char *path = NULL, *text = NULL, *extra = NULL;

        if (extra_servicedir && asprintf(&extra, "  <servicedir>%s</servicedir>\n", extra_servicedir) < 0)
                return -ENOMEM;
        if (asprintf(&text,
                     "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                     " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                     "<busconfig>\n"
                     "  <type>session</type>\n"
                     "  <listen>unix:dir=%s</listen>\n"
                     "  <auth>EXTERNAL</auth>\n"
                     "  <servicedir>%s/services</servicedir>\n"
                     "%s"
                     /* A desktop's session bus (Debian's session.conf): limits no client reaches,
                      * so that it is the daemon's own limits that a hostile client meets. */
                     "  <limit name=\"max_incoming_bytes\">1000000000</limit>\n"
                     "  <limit name=\"max_outgoing_bytes\">1000000000</limit>\n"
                     "  <limit name=\"max_message_size\">1000000000</limit>\n"
                     "  <limit name=\"max_incoming_unix_fds\">250000000</limit>\n"
                     "  <limit name=\"max_outgoing_unix_fds\">250000000</limit>\n"
                     "  <limit name=\"max_replies_per_connection\">50000</limit>\n"
                     "  <policy context=\"default\">\n"
                     "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                     "    <allow eavesdrop=\"true\"/>\n"
                     "    <allow own=\"*\"/>\n"
                     "  </policy>\n"
                     "</busconfig>\n",
                     h->dir, h->dir, extra ? extra : "") < 0 ||
            asprintf(&path, "%s/bus.conf", h->dir) < 0)
                return -ENOMEM;
        return proc_write_file(path, text);
}

/* Waits until fd has something to read (0) or the process behind pidfd ends (-ECHILD); -ETIMEDOUT
 * at deadline_ns. */
static int wait_fd_or_exit(int fd, int pidfd, int64_t deadline_ns) {
        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
                int k = poll(p, 2, proc_ms_left(deadline_ns));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -ETIMEDOUT;
                return p[0].revents & (POLLIN | POLLHUP) ? 0 : -ECHILD;
        }
}

/* Reads dbus-daemon's --print-address line, giving up if it dies or stays silent. */
static int read_address(Harness *h, int fd, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        char buf[1024];
        size_t len = 0;

        for (;;) {
                char *nl;
                ssize_t n;
                int r = wait_fd_or_exit(fd, h->bus_pidfd, deadline_ns);

                if (r < 0)
                        return r;
                n = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -ECHILD;
                len += (size_t) n;
                buf[len] = 0;
                nl = strchr(buf, '\n');
                if (nl) {
                        *nl = 0;
                        h->bus_address = strdup(buf);
                        return h->bus_address ? 0 : -ENOMEM;
                }
                if (len == sizeof(buf) - 1)
                        return -E2BIG;
        }
}

static const char *tmp_root(void) {
        const char *t = getenv("TMPDIR");

        /* A unix socket path has 108 bytes: keep ours short. */
        return t && *t == '/' && strlen(t) < 48 ? t : "/tmp";
}

int harness_new(const char *extra_servicedir, Harness **ret) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *config_arg = NULL, *services = NULL, *state = NULL;
        int pipe_fd[2], log_fd = -1, r;

        if (!program_in_path("dbus-daemon")) {
                fprintf(stderr, "harness: dbus-daemon is not in PATH "
                        "(Debian package dbus-daemon, which .ci/run installs)\n");
                return -ENOENT;
        }
        r = bus_timeconv_errors_register();
        if (r < 0)
                return r;

        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->bus_pidfd = h->daemon_pidfd = -1;
        if (asprintf(&h->dir, "%s/timeconv-it-XXXXXX", tmp_root()) < 0) {
                h->dir = NULL;
                return -ENOMEM;
        }
        if (!mkdtemp(h->dir)) {
                r = -errno;
                free(h->dir);
                h->dir = NULL;
                return r;
        }
        if (asprintf(&services, "%s/services", h->dir) < 0 || asprintf(&state, "%s/state", h->dir) < 0 ||
            asprintf(&config_arg, "--config-file=%s/bus.conf", h->dir) < 0)
                return -ENOMEM;
        if (mkdir(services, 0755) < 0 || mkdir(state, 0755) < 0)
                return -errno;
        r = write_config(h, extra_servicedir);
        if (r < 0)
                return r;
        r = open_log(h, "bus.log", &log_fd);
        if (r < 0)
                return r;
        if (pipe2(pipe_fd, O_CLOEXEC) < 0) {
                r = -errno;
                close(log_fd);
                return r;
        }

        {
                _cleanup_free_ char *state_env = NULL, *xdg_env = NULL;
                const char *argv[] = { "dbus-daemon", config_arg, "--nofork", "--print-address=3", NULL };
                const char *env[3] = {};

                /* A daemon the bus activates inherits this: keep its state in our directory. */
                if (asprintf(&state_env, "STATE_DIRECTORY=%s", state) < 0 ||
                    asprintf(&xdg_env, "XDG_STATE_HOME=%s", state) < 0)
                        r = -ENOMEM;
                else {
                        env[0] = state_env;
                        env[1] = xdg_env;
                        r = proc_spawn(&(ProcSpawn) { .argv = argv, .env_set = env,
                                                      .env_unset = unset_for_children,
                                                      .stdout_fd = log_fd, .stderr_fd = log_fd,
                                                      .fd3 = pipe_fd[1] },
                                       &h->bus_pid, &h->bus_pidfd);
                }
        }
        close(log_fd);
        close(pipe_fd[1]);
        if (r >= 0)
                r = read_address(h, pipe_fd[0], HARNESS_READY_TIMEOUT_MS);
        close(pipe_fd[0]);
        if (r < 0)
                return r;

        *ret = h;
        h = NULL;
        return 0;
}

static void dump_log(const Harness *h, const char *name, const char *title) {
        _cleanup_free_ char *path = NULL, *text = NULL;

        if (asprintf(&path, "%s/%s", h->dir, name) < 0 || proc_read_file(path, &text, NULL) < 0 || !*text)
                return;
        fprintf(stderr, "---- %s ----\n%s%s---- end of %s ----\n", title, text,
                text[strlen(text) - 1] == '\n' ? "" : "\n", title);
}

Harness *harness_free(Harness *h) {
        if (!h)
                return NULL;

        if (harness_daemon_alive(h) &&
            harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, NULL, NULL) == -ETIMEDOUT) {
                proc_signal(h->daemon_pidfd, SIGKILL);
                proc_wait(h->daemon_pidfd, h->daemon_pid, h->daemon_is_child, -1, NULL);
        }
        close_fd(&h->daemon_pidfd);

        if (h->bus_pidfd >= 0) {
                proc_signal(h->bus_pidfd, SIGTERM);
                if (proc_wait(h->bus_pidfd, h->bus_pid, true, HARNESS_STOP_TIMEOUT_MS, NULL) == -ETIMEDOUT) {
                        proc_signal(h->bus_pidfd, SIGKILL);
                        proc_wait(h->bus_pidfd, h->bus_pid, true, -1, NULL);
                }
                close_fd(&h->bus_pidfd);
        }

        if (h->dir) {
                dump_log(h, "daemon.log", "timeconvd stderr");
                dump_log(h, "bus.log", "dbus-daemon and activated services");
                proc_rm_rf(h->dir);
        }
        free(h->dir);
        free(h->bus_address);
        free(h);
        return NULL;
}

/* Waits for READY=1 on the notify socket, or for the daemon to die. */
static int wait_ready(Harness *h, int notify_fd, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        for (;;) {
                char buf[4096];
                ssize_t n;
                int r = wait_fd_or_exit(notify_fd, h->daemon_pidfd, deadline_ns);

                if (r == -ETIMEDOUT)
                        fprintf(stderr, "harness: no READY=1 from the daemon within %d ms\n", timeout_ms);
                if (r == -ECHILD) {
                        proc_wait(h->daemon_pidfd, h->daemon_pid, true, -1, &h->daemon_status);
                        h->daemon_reaped = true;
                        fprintf(stderr, "harness: the daemon ended (wait status 0x%x) before READY=1\n",
                                (unsigned) h->daemon_status);
                }
                if (r < 0)
                        return r;
                n = recv(notify_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (n > 0) {
                        /* One datagram holds newline-separated assignments. */
                        buf[n] = 0;
                        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                                if (strcmp(line, "READY=1") == 0)
                                        return 0;
                }
        }
}

int harness_start_daemon(Harness *h, const char *daemon_path, const char *const *args, int timeout_ms) {
        _cleanup_free_ char *notify_path = NULL, *bus_env = NULL, *notify_env = NULL, *state_env = NULL;
        const char *argv[64] = { daemon_path };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n_args = 1;
        int notify_fd, log_fd = -1, r;

        /* A daemon that ended (stopped, or killed by the test) may be replaced by the next one. */
        if (harness_daemon_alive(h))
                return -EBUSY;
        close_fd(&h->daemon_pidfd);
        for (const char *const *a = args; a && *a; a++) {
                if (n_args >= sizeof(argv) / sizeof(argv[0]) - 1)
                        return -E2BIG;
                argv[n_args++] = *a;
        }
        if (asprintf(&notify_path, "%s/notify", h->dir) < 0 ||
            asprintf(&bus_env, "DBUS_SESSION_BUS_ADDRESS=%s", h->bus_address) < 0 ||
            asprintf(&notify_env, "NOTIFY_SOCKET=%s", notify_path) < 0 ||
            asprintf(&state_env, "STATE_DIRECTORY=%s/state", h->dir) < 0)
                return -ENOMEM;
        if (strlen(notify_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, notify_path);

        notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (notify_fd < 0)
                return -errno;
        unlink(notify_path);
        if (bind(notify_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = -errno;
                close(notify_fd);
                return r;
        }
        r = open_log(h, "daemon.log", &log_fd);
        if (r >= 0) {
                const char *env[] = { bus_env, notify_env, state_env, NULL };

                h->daemon_started_ns = clock_now_ns(CLOCK_MONOTONIC);
                r = proc_spawn(&(ProcSpawn) { .argv = argv, .env_set = env, .env_unset = unset_for_children,
                                              .stdout_fd = log_fd, .stderr_fd = log_fd, .fd3 = -1 },
                               &h->daemon_pid, &h->daemon_pidfd);
                close(log_fd);
        }
        if (r >= 0) {
                h->daemon_is_child = true;
                h->daemon_reaped = false;
                r = wait_ready(h, notify_fd, timeout_ms);
        }
        /* Gone, so that a later sd_notify() fails at once instead of filling a buffer nobody
         * reads and blocking the daemon. */
        close(notify_fd);
        unlink(notify_path);
        return r;
}

int harness_adopt_daemon(Harness *h, pid_t pid) {
        int r;

        /* A daemon that ended (and was waited for) may be replaced by the next one. */
        if (harness_daemon_alive(h))
                return -EBUSY;
        close_fd(&h->daemon_pidfd);
        r = proc_pidfd_open(pid, &h->daemon_pidfd);
        if (r < 0)
                return r;
        h->daemon_pid = pid;
        h->daemon_is_child = false;
        h->daemon_reaped = false;
        return 0;
}

bool harness_daemon_alive(Harness *h) {
        struct pollfd p = { .fd = h->daemon_pidfd, .events = POLLIN };

        if (h->daemon_pidfd < 0 || h->daemon_reaped)
                return false;
        if (poll(&p, 1, 0) == 0)
                return true;
        if (proc_wait(h->daemon_pidfd, h->daemon_pid, h->daemon_is_child, -1, &h->daemon_status) >= 0)
                h->daemon_reaped = true;
        return false;
}

int harness_stop_daemon(Harness *h, int timeout_ms, int *ret_status, int64_t *ret_elapsed_ns) {
        int64_t start_ns = clock_now_ns(CLOCK_MONOTONIC);
        int r;

        if (h->daemon_pidfd < 0)
                return -ESRCH;
        if (!h->daemon_reaped) {
                r = proc_signal(h->daemon_pidfd, SIGTERM);
                if (r < 0 && r != -ESRCH)
                        return r;
                r = proc_wait(h->daemon_pidfd, h->daemon_pid, h->daemon_is_child, timeout_ms, &h->daemon_status);
                if (r < 0)
                        return r;
                h->daemon_reaped = true;
        }
        if (ret_status)
                *ret_status = h->daemon_status;
        if (ret_elapsed_ns)
                *ret_elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        return 0;
}

int harness_daemon_log(const Harness *h, char **ret) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/daemon.log", h->dir) < 0)
                return -ENOMEM;
        return proc_read_file(path, ret, NULL);
}
