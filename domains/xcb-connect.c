/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "time-util.h"
#include "x11-socket.h"
#include "xcb-connect.h"

struct X11Connect {
        pthread_mutex_t lock;
        pthread_cond_t done_cond;       /* on CLOCK_MONOTONIC */
        bool done;                      /* the thread is through ... */
        bool abandoned;                 /* ... the owner left: whoever sees both frees */
        int64_t deadline_ns;            /* CLOCK_MONOTONIC: the start + X11_CONNECT_TIMEOUT_NS */
        /* Our own reference to the socket xcb reads (a dup, so that its number stays ours until
         * connect_free() however xcb closes its own): shutting it down ends xcb's wait. -1
         * until the thread has connected. */
        int socket_fd;
        int error;                      /* with done: 0, or why there is no connection */
        xcb_connection_t *xcb;
        int screen;
        char *display;
};

static void connect_free(X11Connect *a) {
        if (a->xcb)
                xcb_disconnect(a->xcb);
        if (a->socket_fd >= 0)
                close(a->socket_fd);
        pthread_cond_destroy(&a->done_cond);
        pthread_mutex_destroy(&a->lock);
        free(a->display);
        free(a);
}

/* Under a->lock: the owner gives the attempt up; a thread in xcb's setup wakes to an EOF. */
static void give_up_locked(X11Connect *a) {
        a->abandoned = true;
        if (!a->done && a->socket_fd >= 0)
                (void) shutdown(a->socket_fd, SHUT_RDWR);
}

/* The socket, its authorization, the setup: 0 and the connection (which may have failed:
 * -ENOTCONN), or -ETIMEDOUT, -ECANCELED (given up before the setup), -ENOTCONN. */
static int connect_run(X11Connect *a, xcb_connection_t **ret, int *ret_screen) {
        xcb_auth_info_t auth = {};
        xcb_connection_t *xcb;
        int fd = -1, number = 0, screen = 0, r;
        bool has_auth;

        r = x11_socket_open(a->display, a->deadline_ns, &fd, &number, &screen);
        if (r < 0)
                return r == -ETIMEDOUT ? r : -ENOTCONN;
        /* None found: try without, as xcb_connect() does (a server may not ask for any). */
        has_auth = x11_auth_lookup(fd, number, &auth) >= 0;

        /* Published before the setup: from here on, giving up ends xcb's wait. */
        pthread_mutex_lock(&a->lock);
        if (a->abandoned)
                r = -ECANCELED;
        else if ((a->socket_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
                r = -errno;
        pthread_mutex_unlock(&a->lock);
        if (r < 0) {
                close(fd);
                x11_auth_done(&auth);
                return r == -ECANCELED ? r : -ENOTCONN;
        }

        /* Takes fd in every case. */
        xcb = xcb_connect_to_fd(fd, has_auth ? &auth : NULL);
        x11_auth_done(&auth);
        *ret = xcb;
        *ret_screen = screen;
        return xcb_connection_has_error(xcb) ? -ENOTCONN : 0;
}

static void *connect_thread(void *userdata) {
        X11Connect *a = userdata;
        xcb_connection_t *xcb = NULL;
        int screen = 0, r;
        bool abandoned;

        r = connect_run(a, &xcb, &screen);

        pthread_mutex_lock(&a->lock);
        a->xcb = xcb;
        a->screen = screen;
        a->error = r;
        a->done = true;
        abandoned = a->abandoned;
        pthread_cond_signal(&a->done_cond);
        pthread_mutex_unlock(&a->lock);
        /* Not abandoned: from the unlock on, a belongs to the owner alone. */
        if (abandoned)
                connect_free(a);
        return NULL;
}

int x11_connect_start(const char *display, X11Connect **ret) {
        pthread_condattr_t cond_attr;
        pthread_attr_t attr;
        sigset_t all, old;
        pthread_t thread;
        X11Connect *a;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->display = display ? strdup(display) : NULL;
        if (display && !a->display) {
                free(a);
                return -ENOMEM;
        }
        a->socket_fd = -1;
        a->deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + X11_CONNECT_TIMEOUT_NS;
        pthread_mutex_init(&a->lock, NULL);
        pthread_condattr_init(&cond_attr);
        pthread_condattr_setclock(&cond_attr, CLOCK_MONOTONIC);
        pthread_cond_init(&a->done_cond, &cond_attr);
        pthread_condattr_destroy(&cond_attr);

        /* Detached: a thread stuck on a dead server is never joined. With every signal blocked:
         * the caller's signals (SIGTERM on a signalfd) stay the caller's. */
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        /* Named, so that one stuck on a server shows in ps -L and a debugger. Under a->lock: the
         * thread cannot end (it takes the lock first) before it has its name. */
        pthread_mutex_lock(&a->lock);
        r = -pthread_create(&thread, &attr, connect_thread, a);
        if (r >= 0)
                (void) pthread_setname_np(thread, X11_CONNECT_THREAD_NAME);
        pthread_mutex_unlock(&a->lock);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                connect_free(a);
                return r;
        }
        *ret = a;
        return 0;
}

int x11_connect_finish(X11Connect *a, int64_t deadline_ns, xcb_connection_t **ret_xcb, int *ret_screen) {
        struct timespec ts;
        xcb_connection_t *xcb;
        int64_t wait_ns;
        bool done, timed_out = false;
        int screen, error;

        if (!a || !ret_xcb || !ret_screen)
                return -EINVAL;
        /* Never past the attempt's own deadline: then it is over, whatever the caller allows. */
        wait_ns = deadline_ns < a->deadline_ns ? deadline_ns : a->deadline_ns;
        ts = (struct timespec) { .tv_sec = wait_ns / 1000000000, .tv_nsec = wait_ns % 1000000000 };
        pthread_mutex_lock(&a->lock);
        while (!a->done && deadline_ns > 0)
                if (pthread_cond_timedwait(&a->done_cond, &a->lock, &ts) == ETIMEDOUT)
                        break;
        done = a->done;
        if (!done && clock_now_ns(CLOCK_MONOTONIC) >= a->deadline_ns) {
                /* The thread ends on the EOF and frees a. */
                give_up_locked(a);
                timed_out = true;
        }
        pthread_mutex_unlock(&a->lock);
        if (timed_out)
                return -ETIMEDOUT;
        if (!done)
                return -EINPROGRESS;

        xcb = a->xcb;
        screen = a->screen;
        error = a->error;
        a->xcb = NULL;
        connect_free(a);
        if (error < 0 || !xcb || xcb_connection_has_error(xcb)) {
                if (xcb)
                        xcb_disconnect(xcb);
                return error == -ETIMEDOUT ? -ETIMEDOUT : -ENOTCONN;
        }
        *ret_xcb = xcb;
        *ret_screen = screen;
        return 0;
}

X11Connect *x11_connect_abandon(X11Connect *a) {
        bool done;

        if (!a)
                return NULL;
        pthread_mutex_lock(&a->lock);
        done = a->done;
        give_up_locked(a);
        pthread_mutex_unlock(&a->lock);
        /* Still connecting: the thread frees a (and what it got) as soon as it is through. */
        if (done)
                connect_free(a);
        return NULL;
}
