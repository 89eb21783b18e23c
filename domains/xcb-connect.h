/* SPDX-License-Identifier: MIT */
#pragma once

/* Connecting to an X server without ever blocking the caller, for every source that talks to
 * one (x11-conn.c's X time, present-conn.c's vblank counter). An attempt runs in a thread of its
 * own: the socket opened with a deadline and the authorization looked up (x11-socket.h), then
 * xcb_connect_to_fd(), whose setup exchange waits for the server's reply with no deadline of its
 * own (xcb's reads poll() with no timeout). A server that accepts but never answers (stopped,
 * wedged, or a socket nobody serves) is given X11_CONNECT_TIMEOUT_NS from the attempt's start;
 * then, or when its owner gives it up (a new display), the attempt's socket is shut down, which
 * ends xcb's wait: the thread cleans up and ends at once, and nothing of it holds anything
 * another attempt needs. At most one thread per attempt, and it never outlives its timeout by
 * more than a name lookup (TCP displays) or the authority file's read. */

#include <stdint.h>
#include <xcb/xcb.h>

typedef struct X11Connect X11Connect;

/* The name of an attempt's thread (its comm, at most 15 characters). */
#define X11_CONNECT_THREAD_NAME "x11-connect"

/* Starts connecting to display (NULL: $DISPLAY) in a new thread. */
int x11_connect_start(const char *display, X11Connect **ret);

/* How long a server may take to accept and answer the setup: a live one answers in a ms, a loaded
 * machine's in a few hundred. */
#define X11_CONNECT_TIMEOUT_NS (INT64_C(3) * 1000000000)

/* Waits up to deadline_ns (CLOCK_MONOTONIC; 0: only looks) for the attempt to end. -EINPROGRESS:
 * still connecting, the attempt stays the caller's. Otherwise the attempt is over and freed: 0
 * with the connection (the caller's now) and its screen, -ETIMEDOUT when the server did not
 * answer within X11_CONNECT_TIMEOUT_NS of the start (its socket is shut down), or -ENOTCONN. */
int x11_connect_finish(X11Connect *a, int64_t deadline_ns, xcb_connection_t **ret_xcb, int *ret_screen);

/* Gives the attempt up without waiting: its socket is shut down, so its thread ends as soon as
 * it is past the connect() and the authority file. Accepts NULL; returns NULL. */
X11Connect *x11_connect_abandon(X11Connect *a);
