/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness-proc.h"
#include "time-util.h"
#include "xvfb.h"

bool xvfb_available(void) {
        return access("/usr/bin/Xvfb", X_OK) == 0 || access("/usr/local/bin/Xvfb", X_OK) == 0;
}

/* Reads the display number Xvfb writes to the pipe once it accepts connections. */
static int read_display(int fd, int pidfd, int *ret) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) XVFB_READY_TIMEOUT_MS * 1000000;
        char buf[32] = {};
        size_t len = 0;

        for (;;) {
                struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
                ssize_t n;
                int r;

                r = poll(pfd, 2, proc_ms_left(deadline_ns));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                if (pfd[0].revents) {
                        n = read(fd, buf + len, sizeof(buf) - 1 - len);
                        if (n < 0 && errno != EINTR)
                                return -errno;
                        if (n > 0)
                                len += (size_t) n;
                        if (memchr(buf, '\n', len)) {
                                *ret = atoi(buf);
                                return 0;
                        }
                        if (n == 0 || len == sizeof(buf) - 1)
                                return -ECHILD;
                } else if (pfd[1].revents)
                        return -ECHILD;
        }
}

int xvfb_start(int display, Xvfb *ret) {
        return xvfb_start_screen(display, "64x64x24", ret);
}

/* display -1: a free one; auth NULL: no authority file (anyone may connect). */
static int xvfb_spawn_one(int display, const char *screen, const char *auth, Xvfb *ret) {
        char display_arg[16];
        const char *argv[16] = { "Xvfb" };
        int k = 1;

        snprintf(display_arg, sizeof(display_arg), ":%d", display);
        if (display >= 0)
                argv[k++] = display_arg;
        argv[k++] = "-displayfd";
        argv[k++] = "3";
        argv[k++] = "-nolisten";
        argv[k++] = "tcp";
        argv[k++] = "-screen";
        argv[k++] = "0";
        argv[k++] = screen;
        if (auth) {
                argv[k++] = "-auth";
                argv[k++] = auth;
        }
        return xvfb_start_argv(argv, ret);
}

/* Several tests restart Xvfb on the display number it had, to be the same DISPLAY again. Were
 * "a free one" the lowest free number (Xvfb's own -displayfd choice), the number just freed
 * would be the very one another test starting at that moment takes. So each start picks among
 * :100-:999 from a per-process sequence, skipping numbers whose socket or lock exists, and
 * tries the next when Xvfb exits at once (the number was taken in between). */
static int xvfb_spawn(int display, const char *screen, const char *auth, Xvfb *ret) {
        static const unsigned first = 100, count = 900;
        unsigned seed = (unsigned) getpid() * 2654435761u ^ (unsigned) clock_now_ns(CLOCK_MONOTONIC);
        int r = -EADDRINUSE;

        if (display >= 0)
                return xvfb_spawn_one(display, screen, auth, ret);
        for (unsigned attempt = 0; attempt < 64; attempt++) {
                unsigned n = first + (seed + attempt * 7919u) % count;
                char path[64];

                snprintf(path, sizeof(path), "/tmp/.X11-unix/X%u", n);
                if (access(path, F_OK) == 0)
                        continue;
                snprintf(path, sizeof(path), "/tmp/.X%u-lock", n);
                if (access(path, F_OK) == 0)
                        continue;
                r = xvfb_spawn_one((int) n, screen, auth, ret);
                if (r != -ECHILD)
                        return r;
        }
        return r;
}

int xvfb_start_argv(const char *const *argv, Xvfb *ret) {
        int pipe_fd[2], pidfd, r, n = 0;
        ProcSpawn s;
        pid_t pid;

        if (pipe2(pipe_fd, O_CLOEXEC) < 0)
                return -errno;
        s = (ProcSpawn) {
                .argv = argv,
                .stdout_fd = -1,
                .stderr_fd = -1,
                .fd3 = pipe_fd[1],
        };
        r = proc_spawn(&s, &pid, &pidfd);
        close(pipe_fd[1]);
        if (r < 0) {
                close(pipe_fd[0]);
                return r;
        }
        r = read_display(pipe_fd[0], pidfd, &n);
        close(pipe_fd[0]);
        if (r < 0) {
                proc_signal(pidfd, SIGKILL);
                proc_wait(pidfd, pid, true, 5000, NULL);
                close(pidfd);
                return r;
        }
        *ret = (Xvfb) { .pid = pid, .pidfd = pidfd, .display = n };
        snprintf(ret->name, sizeof(ret->name), ":%d", n);
        return 0;
}

int xvfb_start_screen(int display, const char *screen, Xvfb *ret) {
        return xvfb_spawn(display, screen, NULL, ret);
}

int xvfb_start_auth(const char *auth, Xvfb *ret) {
        return xvfb_spawn(-1, "64x64x24", auth, ret);
}

int xvfb_stop(Xvfb *x) {
        int r;

        if (x->pid == 0)
                return 0;
        proc_signal(x->pidfd, SIGCONT);
        proc_signal(x->pidfd, SIGTERM);
        r = proc_wait(x->pidfd, x->pid, true, 10000, NULL);
        if (r == -ETIMEDOUT) {
                proc_signal(x->pidfd, SIGKILL);
                r = proc_wait(x->pidfd, x->pid, true, 5000, NULL);
        }
        close(x->pidfd);
        x->pid = 0;
        x->pidfd = -1;
        return r;
}

int xvfb_pause(Xvfb *x, bool paused) {
        return proc_signal(x->pidfd, paused ? SIGSTOP : SIGCONT);
}
