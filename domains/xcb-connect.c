/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xcb-connect.h"

struct X11Connect {
        pthread_mutex_t lock;
        pthread_cond_t done_cond;       /* on CLOCK_MONOTONIC */
        bool done;                      /* the thread's xcb_connect() returned ... */
        bool abandoned;                 /* ... the owner left: whoever sees both frees */
        xcb_connection_t *xcb;
        int screen;
        char *display;
};

/* xcb_connect() is not safe against itself: libXau keeps the name of the authority file in a
 * static buffer. All attempts of the process (x11's and msc's for the same display) take turns;
 * only their own threads ever wait for this lock, never a caller: an attempt queued behind one
 * stuck on a stopped server is merely in progress for longer. The one static in this code: it
 * guards a library's static state, which is process-wide too. */
static pthread_mutex_t xcb_connect_lock = PTHREAD_MUTEX_INITIALIZER;

static void connect_free(X11Connect *a) {
        if (a->xcb)
                xcb_disconnect(a->xcb);
        pthread_cond_destroy(&a->done_cond);
        pthread_mutex_destroy(&a->lock);
        free(a->display);
        free(a);
}

static void *connect_thread(void *userdata) {
        X11Connect *a = userdata;
        xcb_connection_t *xcb;
        int screen = 0;
        bool abandoned;

        pthread_mutex_lock(&xcb_connect_lock);
        xcb = xcb_connect(a->display, &screen);
        pthread_mutex_unlock(&xcb_connect_lock);

        pthread_mutex_lock(&a->lock);
        a->xcb = xcb;
        a->screen = screen;
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
        struct timespec ts = { .tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000 };
        xcb_connection_t *xcb;
        int screen;
        bool done;

        if (!a || !ret_xcb || !ret_screen)
                return -EINVAL;
        pthread_mutex_lock(&a->lock);
        while (!a->done && deadline_ns > 0)
                if (pthread_cond_timedwait(&a->done_cond, &a->lock, &ts) == ETIMEDOUT)
                        break;
        done = a->done;
        pthread_mutex_unlock(&a->lock);
        if (!done)
                return -EINPROGRESS;

        xcb = a->xcb;
        screen = a->screen;
        a->xcb = NULL;
        connect_free(a);
        if (xcb_connection_has_error(xcb)) {
                xcb_disconnect(xcb);
                return -ENOTCONN;
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
        a->abandoned = true;
        pthread_mutex_unlock(&a->lock);
        /* Still connecting: the thread frees a (and what it got) when xcb_connect() returns. */
        if (done)
                connect_free(a);
        return NULL;
}
