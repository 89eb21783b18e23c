/* SPDX-License-Identifier: MIT */
#pragma once

/* Connecting to an X server without ever blocking the caller, for every source that talks to
 * one (x11-conn.c's X time, present-conn.c's vblank counter). xcb_connect() waits for the
 * server's setup reply with no deadline (and xcb's reads poll() with no timeout): a server that
 * accepts but never answers (stopped, wedged) would hold the caller for ever. So an attempt runs
 * xcb_connect() in a thread of its own and the caller looks at its result without blocking. At
 * most one thread per attempt, and an abandoned attempt's thread cleans up after itself whenever
 * xcb_connect() returns. A caller that keeps one attempt across its calls (instead of abandoning
 * and starting anew) never has more than one thread waiting on a server that never answers. */

#include <stdint.h>
#include <xcb/xcb.h>

typedef struct X11Connect X11Connect;

/* The name of an attempt's thread (its comm, at most 15 characters). */
#define X11_CONNECT_THREAD_NAME "x11-connect"

/* Starts connecting to display (NULL: $DISPLAY) in a new thread. */
int x11_connect_start(const char *display, X11Connect **ret);

/* Waits up to deadline_ns (CLOCK_MONOTONIC; 0: only looks) for the attempt to end. -EINPROGRESS:
 * still connecting, the attempt stays the caller's. Otherwise the attempt is over and freed: 0
 * with the connection (the caller's now) and its screen, or -ENOTCONN. */
int x11_connect_finish(X11Connect *a, int64_t deadline_ns, xcb_connection_t **ret_xcb, int *ret_screen);

/* Gives the attempt up without waiting. Accepts NULL; returns NULL. */
X11Connect *x11_connect_abandon(X11Connect *a);
