/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "silent-x.h"
#include "time-util.h"

#define DISPLAY_FIRST 70
#define DISPLAY_LAST 199

static void *serve(void *userdata) {
        SilentX *s = userdata;
        struct pollfd pfd[2 + SILENT_X_CONNECTIONS_MAX];
        size_t n_conn = 0;
        char buf[4096];

        pfd[0] = (struct pollfd) { .fd = s->stop_fd, .events = POLLIN };
        pfd[1] = (struct pollfd) { .fd = s->listen_fd, .events = POLLIN };
        for (;;) {
                unsigned accepted = 0, closed = 0;

                if (poll(pfd, 2 + n_conn, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (pfd[0].revents)
                        break;
                if (pfd[1].revents) {
                        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

                        if (fd >= 0) {
                                accepted++;
                                if (n_conn < SILENT_X_CONNECTIONS_MAX)
                                        pfd[2 + n_conn++] = (struct pollfd) { .fd = fd, .events = POLLIN };
                                else {
                                        /* Full: as if its client had gone at once. */
                                        close(fd);
                                        closed++;
                                }
                        }
                }
                for (size_t i = 0; i < n_conn; i++) {
                        ssize_t n;

                        if (!pfd[2 + i].revents)
                                continue;
                        /* Read and dropped: the setup request is never answered. */
                        n = read(pfd[2 + i].fd, buf, sizeof(buf));
                        if (n > 0 || (n < 0 && errno == EAGAIN))
                                continue;
                        close(pfd[2 + i].fd);
                        pfd[2 + i] = pfd[2 + --n_conn];
                        i--;
                        closed++;
                }
                if (accepted || closed) {
                        pthread_mutex_lock(&s->lock);
                        s->accepted += accepted;
                        s->closed += closed;
                        pthread_cond_broadcast(&s->changed);
                        pthread_mutex_unlock(&s->lock);
                }
        }
        for (size_t i = 0; i < n_conn; i++)
                close(pfd[2 + i].fd);
        return NULL;
}

/* Claims :n with its lock file, as an X server does: -EEXIST when another has it. */
static int claim(SilentX *s, int n) {
        char path[sizeof(s->lock_path)], pid[16];
        int fd, k;

        snprintf(path, sizeof(path), "/tmp/.X%d-lock", n);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd < 0)
                return -errno;
        k = snprintf(pid, sizeof(pid), "%10d\n", (int) getpid());
        (void) !write(fd, pid, (size_t) k);
        close(fd);
        strcpy(s->lock_path, path);
        s->display = n;
        snprintf(s->name, sizeof(s->name), ":%d", n);
        snprintf(s->socket_path, sizeof(s->socket_path), "/tmp/.X11-unix/X%d", n);
        return 0;
}

static int listen_on(SilentX *s) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        (void) mkdir("/tmp/.X11-unix", 01777);
        /* Ours now (the lock file is): whatever is there is stale. */
        (void) unlink(s->socket_path);
        s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s->listen_fd < 0)
                return -errno;
        strcpy(sa.sun_path, s->socket_path);
        if (bind(s->listen_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(s->listen_fd, 64) < 0)
                return -errno;
        return 0;
}

int silent_x_start(SilentX *s) {
        pthread_condattr_t attr;
        int r = -EADDRINUSE;

        *s = (SilentX) { .listen_fd = -1, .stop_fd = -1 };
        for (int n = DISPLAY_FIRST; n <= DISPLAY_LAST && r < 0; n++) {
                r = claim(s, n);
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        if (r < 0)
                return -EADDRINUSE;
        pthread_mutex_init(&s->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&s->changed, &attr);
        pthread_condattr_destroy(&attr);

        r = listen_on(s);
        if (r >= 0) {
                s->stop_fd = eventfd(0, EFD_CLOEXEC);
                r = s->stop_fd < 0 ? -errno : -pthread_create(&s->thread, NULL, serve, s);
        }
        if (r < 0) {
                silent_x_stop(s);
                return r;
        }
        s->running = true;
        return 0;
}

int silent_x_wait(SilentX *s, unsigned accepted_min, unsigned closed_min, int timeout_ms, unsigned *ret_accepted,
                  unsigned *ret_closed) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        struct timespec ts = { .tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000 };
        int r = 0;

        pthread_mutex_lock(&s->lock);
        while (s->accepted < accepted_min || s->closed < closed_min)
                if (pthread_cond_timedwait(&s->changed, &s->lock, &ts) == ETIMEDOUT) {
                        r = s->accepted >= accepted_min && s->closed >= closed_min ? 0 : -ETIMEDOUT;
                        break;
                }
        if (ret_accepted)
                *ret_accepted = s->accepted;
        if (ret_closed)
                *ret_closed = s->closed;
        pthread_mutex_unlock(&s->lock);
        return r;
}

void silent_x_stop(SilentX *s) {
        /* Nothing claimed: nothing to undo (a zeroed s included). */
        if (!s->lock_path[0])
                return;
        if (s->running) {
                (void) !write(s->stop_fd, &(uint64_t) { 1 }, sizeof(uint64_t));
                pthread_join(s->thread, NULL);
                s->running = false;
        }
        if (s->stop_fd >= 0)
                close(s->stop_fd);
        if (s->listen_fd >= 0)
                close(s->listen_fd);
        s->stop_fd = s->listen_fd = -1;
        if (s->socket_path[0])
                (void) unlink(s->socket_path);
        if (s->lock_path[0])
                (void) unlink(s->lock_path);
        s->socket_path[0] = s->lock_path[0] = '\0';
        pthread_cond_destroy(&s->changed);
        pthread_mutex_destroy(&s->lock);
}
