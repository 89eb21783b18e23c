/* SPDX-License-Identifier: MIT */
#pragma once

/* A private Xvfb for the x11 tests and bench-x11: started with -displayfd, so that we know it is
 * ready (and which display it took) when it writes the display number, never by sleeping. */

#include <stdbool.h>
#include <sys/types.h>

#define XVFB_READY_TIMEOUT_MS 20000

typedef struct Xvfb {
        pid_t pid;              /* 0: not running */
        int pidfd;
        int display;            /* :N */
        char name[16];          /* ":N" */
} Xvfb;

bool xvfb_available(void);

/* Starts Xvfb on display (-1: a free one among :100-:999, never the lowest free, which another
 * test may have just freed to restart on it; else exactly :display) and waits for it to be
 * ready. -ETIMEDOUT, -ECHILD when it exits first (e.g. the display is taken). */
int xvfb_start(int display, Xvfb *ret);

/* The same with a screen of our choosing ("WxHxD"): xvfb_start()'s is 64x64, too small for a
 * window manager's tests. */
int xvfb_start_screen(int display, const char *screen, Xvfb *ret);

/* xvfb_start(-1, ...) on a server that lets in only the clients that send a cookie of the
 * authority file auth (its -auth). */
int xvfb_start_auth(const char *auth, Xvfb *ret);

/* Any X server that takes -displayfd 3 (Xorg, for one): argv (NULL-terminated) with it. */
int xvfb_start_argv(const char *const *argv, Xvfb *ret);

/* SIGTERM (it removes its lock and socket), then waits for it to end. */
int xvfb_stop(Xvfb *x);

/* SIGSTOP / SIGCONT: a server that is alive but does not answer. */
int xvfb_pause(Xvfb *x, bool paused);
