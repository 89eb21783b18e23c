/* SPDX-License-Identifier: MIT */

/* Running programs on the private bus: a client (busctl, the daemon with --version) whose
 * output is collected, and timeconvd with the arguments most tests give it. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness-proc.h"
#include "harness.h"

typedef struct Buffer {
        char *data;
        size_t size, allocated;
} Buffer;

/* Reads what is there; returns 0 at EOF, 1 when more may come. */
static int buffer_read(Buffer *b, int fd) {
        ssize_t n;

        if (b->allocated - b->size < 4096) {
                size_t allocated = b->allocated ? b->allocated * 2 : 16384;
                char *d = realloc(b->data, allocated);

                if (!d)
                        return -ENOMEM;
                b->data = d;
                b->allocated = allocated;
        }
        n = read(fd, b->data + b->size, b->allocated - b->size - 1);
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : -errno;
        b->size += (size_t) n;
        b->data[b->size] = 0;
        return n > 0;
}

static int buffer_steal(Buffer *b, char **ret) {
        if (!b->data) {
                b->data = strdup("");
                if (!b->data)
                        return -ENOMEM;
        }
        if (ret) {
                *ret = b->data;
                b->data = NULL;
        }
        return 0;
}

int harness_run(const Harness *h, const char *const *argv, const char *const *env, int timeout_ms,
                char **ret_stdout, char **ret_stderr, int *ret_status) {
        static const char *const unset[] = { "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE", NULL };
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        _cleanup_free_ char *bus_env = NULL;
        _cleanup_close_ int pidfd = -1;
        const char *env_all[32];
        Buffer out = {}, err = {};
        int fd[2][2] = { { -1, -1 }, { -1, -1 } }, status = 0, r = 0;
        size_t n_env = 0;
        pid_t pid;

        if (asprintf(&bus_env, "DBUS_SESSION_BUS_ADDRESS=%s", h->bus_address) < 0)
                return -ENOMEM;
        env_all[n_env++] = bus_env;
        for (const char *const *e = env; e && *e; e++) {
                if (n_env >= sizeof(env_all) / sizeof(env_all[0]) - 1)
                        return -E2BIG;
                env_all[n_env++] = *e;
        }
        env_all[n_env] = NULL;

        if (pipe2(fd[0], O_CLOEXEC) < 0 || pipe2(fd[1], O_CLOEXEC) < 0) {
                r = -errno;
                goto finish;
        }
        r = proc_spawn(&(ProcSpawn) { .argv = argv, .env_set = env_all, .env_unset = unset,
                                      .stdout_fd = fd[0][1], .stderr_fd = fd[1][1], .fd3 = -1 },
                       &pid, &pidfd);
        close(fd[0][1]);
        close(fd[1][1]);
        fd[0][1] = fd[1][1] = -1;
        if (r < 0)
                goto finish;

        /* Read both pipes to their ends, so that a chatty child never blocks on a full pipe. */
        while (fd[0][0] >= 0 || fd[1][0] >= 0) {
                struct pollfd p[2] = { { .fd = fd[0][0], .events = POLLIN }, { .fd = fd[1][0], .events = POLLIN } };
                int k = poll(p, 2, proc_ms_left(deadline_ns));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : -ETIMEDOUT;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        if (p[i].fd < 0 || !p[i].revents)
                                continue;
                        r = buffer_read(i == 0 ? &out : &err, p[i].fd);
                        if (r < 0)
                                break;
                        if (r == 0) {
                                close(fd[i][0]);
                                fd[i][0] = -1;
                        }
                }
                if (r < 0)
                        break;
        }
        if (r >= 0)
                r = proc_wait(pidfd, pid, true, proc_ms_left(deadline_ns), &status);
        if (r < 0) {
                proc_signal(pidfd, SIGKILL);
                proc_wait(pidfd, pid, true, -1, NULL);
        }

finish:
        for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                        if (fd[i][j] >= 0)
                                close(fd[i][j]);
        if (r >= 0)
                r = buffer_steal(&out, ret_stdout);
        if (r >= 0)
                r = buffer_steal(&err, ret_stderr);
        free(out.data);
        free(err.data);
        if (r < 0)
                return r;
        if (ret_status)
                *ret_status = status;
        return 0;
}

int harness_start_timeconvd(Harness *h, const char *daemon_path, const char *const *extra_args) {
        const char *args[32] = { "--no-x11", "--no-gpu" };
        size_t n = 2;

        for (const char *const *a = extra_args; a && *a; a++) {
                if (n >= ELEMENTSOF(args) - 1)
                        return -E2BIG;
                args[n++] = *a;
        }
        args[n] = NULL;
        return harness_start_daemon(h, daemon_path, args, HARNESS_READY_TIMEOUT_MS);
}

int harness_new_started(const char *daemon_path, const char *const *args, Harness **ret_h, sd_bus **ret_bus) {
        _cleanup_(harness_freep) Harness *h = NULL;
        sd_bus *bus = NULL;
        int r;

        r = harness_new(NULL, &h);
        if (r < 0)
                return r;
        r = args ? harness_start_daemon(h, daemon_path, args, HARNESS_READY_TIMEOUT_MS) :
                   harness_start_timeconvd(h, daemon_path, NULL);
        if (r >= 0 && ret_bus)
                r = harness_connect(h, &bus);
        if (r < 0)
                return r;
        *ret_h = TAKE_PTR(h);
        if (ret_bus)
                *ret_bus = bus;
        return 0;
}

int harness_spawn_owner(const Harness *h, const char *const *argv, HarnessNameWatch *w, int timeout_ms,
                        pid_t *ret_pid, int *ret_pidfd) {
        _cleanup_free_ char *bus_env = NULL;
        const char *env[2] = {};
        pid_t pid;
        int pidfd, r;

        if (asprintf(&bus_env, "DBUS_SESSION_BUS_ADDRESS=%s", h->bus_address) < 0)
                return -ENOMEM;
        env[0] = bus_env;
        r = proc_spawn(&(ProcSpawn) { .argv = argv, .env_set = env, .stdout_fd = -1, .stderr_fd = STDERR_FILENO,
                                      .fd3 = -1 },
                       &pid, &pidfd);
        if (r < 0)
                return r;
        r = harness_name_wait(w, true, timeout_ms);
        if (r < 0) {
                (void) proc_signal(pidfd, SIGKILL);
                (void) proc_wait(pidfd, pid, true, -1, NULL);
                close(pidfd);
                return r;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

void harness_stop_owner(pid_t pid, int pidfd, int timeout_ms) {
        if (pidfd < 0)
                return;
        (void) proc_signal(pidfd, SIGTERM);
        (void) proc_wait(pidfd, pid, true, timeout_ms, NULL);
        close(pidfd);
}
