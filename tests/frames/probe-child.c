/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness-proc.h"
#include "probe-child.h"
#include "time-util.h"

int probe_child_start(ProbeChild *c, const char *bus_address, const char *const *argv) {
        const char *unset[] = { "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE", NULL };
        char bus[512];
        const char *env[] = { bus, NULL };
        int fd[2], r;
        ProcSpawn s;

        *c = (ProbeChild) { .pidfd = -1, .err_fd = -1 };
        c->err = calloc(1, 1);
        if (!c->err)
                return -ENOMEM;
        if (pipe2(fd, O_CLOEXEC) < 0)
                return -errno;
        snprintf(bus, sizeof(bus), "DBUS_SESSION_BUS_ADDRESS=%s", bus_address);
        s = (ProcSpawn) { .argv = argv, .env_set = env, .env_unset = unset, .stdout_fd = -1, .stderr_fd = fd[1],
                          .fd3 = -1 };
        r = proc_spawn(&s, &c->pid, &c->pidfd);
        close(fd[1]);
        if (r < 0) {
                close(fd[0]);
                return r;
        }
        c->err_fd = fd[0];
        return 0;
}

/* Whatever the pipe holds now: 1 read some, 0 at EOF. */
static int read_some(ProbeChild *c) {
        char buffer[4096], *more;
        ssize_t n = read(c->err_fd, buffer, sizeof(buffer));

        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : -errno;
        if (n == 0) {
                close(c->err_fd);
                c->err_fd = -1;
                return 0;
        }
        more = realloc(c->err, c->err_size + (size_t) n + 1);
        if (!more)
                return -ENOMEM;
        memcpy(more + c->err_size, buffer, (size_t) n);
        c->err = more;
        c->err_size += (size_t) n;
        c->err[c->err_size] = '\0';
        return 1;
}

int probe_child_wait_for(ProbeChild *c, const char *needle, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        while (!strstr(c->err, needle)) {
                struct pollfd p = { .fd = c->err_fd, .events = POLLIN };
                int r;

                if (c->err_fd < 0)
                        return -EPIPE;
                r = poll(&p, 1, proc_ms_left(deadline_ns));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                r = read_some(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

int probe_child_finish(ProbeChild *c, int timeout_ms, int *ret_status) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        int r;

        while (c->err_fd >= 0) {
                struct pollfd p = { .fd = c->err_fd, .events = POLLIN };

                r = poll(&p, 1, proc_ms_left(deadline_ns));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r == 0)
                        break;
                r = read_some(c);
                if (r < 0)
                        return r;
        }
        r = proc_wait(c->pidfd, c->pid, true, proc_ms_left(deadline_ns), ret_status);
        if (r == -ETIMEDOUT) {
                proc_signal(c->pidfd, SIGKILL);
                proc_wait(c->pidfd, c->pid, true, 10000, NULL);
        }
        close(c->pidfd);
        c->pidfd = -1;
        c->pid = 0;
        return r;
}

void probe_child_done(ProbeChild *c) {
        if (c->pid > 0) {
                proc_signal(c->pidfd, SIGKILL);
                proc_wait(c->pidfd, c->pid, true, 10000, NULL);
                close(c->pidfd);
        }
        if (c->err_fd >= 0)
                close(c->err_fd);
        free(c->err);
        *c = (ProbeChild) { .pidfd = -1, .err_fd = -1 };
}

int64_t probe_json_int(json_t *o, const char *key) {
        return json_integer_value(json_object_get(o, key));
}

void *probe_read_log(const char *path, size_t row_size, void (*fill)(json_t *o, void *row), size_t *ret_n) {
        FILE *f = fopen(path, "re");
        char *rows = NULL;
        size_t n = 0;
        char line[4096];

        if (!f)
                return NULL;
        while (fgets(line, sizeof(line), f)) {
                json_t *o = json_loads(line, 0, NULL);
                char *more = reallocarray(rows, n + 1, row_size);

                if (!o || !more) {
                        json_decref(o);
                        free(more ? more : rows);
                        fclose(f);
                        return NULL;
                }
                rows = more;
                memset(rows + n * row_size, 0, row_size);
                fill(o, rows + n * row_size);
                n++;
                json_decref(o);
        }
        fclose(f);
        *ret_n = n;
        return rows;
}

int probe_run_v(const Harness *h, const char *program, const char *const *env, int timeout_ms, char **out,
                char **err, int *status, const char *first, va_list ap) {
        const char *argv[32] = { program, first };
        size_t n = 2;
        int r;

        while (n < 31 && (argv[n] = va_arg(ap, const char *)))
                n++;
        argv[n] = NULL;
        free(*out);
        free(*err);
        *out = *err = NULL;
        r = harness_run(h, argv, env, timeout_ms, out, err, status);
        if (r < 0)
                return r;
        *status = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
        return *status;
}
