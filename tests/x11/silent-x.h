/* SPDX-License-Identifier: MIT */
#pragma once

/* An X server that is not one: a unix socket listening where display :N's would
 * (/tmp/.X11-unix/XN, the number claimed with the lock file /tmp/.XN-lock as X servers do, so
 * that no Xvfb -displayfd of a test running beside takes it), which accepts every connection,
 * reads what comes and never writes a byte, keeping each connection open until its client
 * closes it. A thread of the test serves it and counts: accepted connections, and those the
 * client closed (or shut down), which a test waits for instead of sleeping. */

#include <pthread.h>
#include <stdbool.h>

#define SILENT_X_CONNECTIONS_MAX 256

typedef struct SilentX {
        int display;                    /* :N */
        char name[16];                  /* ":N" */
        char lock_path[64];
        char socket_path[64];
        int listen_fd;
        int stop_fd;                    /* an eventfd that ends the thread */
        pthread_t thread;
        bool running;
        pthread_mutex_t lock;
        pthread_cond_t changed;         /* on CLOCK_MONOTONIC */
        unsigned accepted;              /* under lock */
        unsigned closed;                /* under lock: by their clients */
} SilentX;

/* Claims the first free display from :70 on and serves it. s must stay where it is until
 * silent_x_stop(). -EADDRINUSE when none is free. */
int silent_x_start(SilentX *s);

/* Waits until at least accepted_min connections were accepted and closed_min of them closed by
 * their clients: 0, or -ETIMEDOUT after timeout_ms. *ret_accepted and *ret_closed (may be NULL)
 * get the counts as last seen. */
int silent_x_wait(SilentX *s, unsigned accepted_min, unsigned closed_min, int timeout_ms, unsigned *ret_accepted,
                  unsigned *ret_closed);

/* Closes every connection still open, the socket and the lock file. Accepts a zeroed s, and one
 * whose silent_x_start() failed. */
void silent_x_stop(SilentX *s);
