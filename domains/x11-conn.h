/* SPDX-License-Identifier: MIT */
#pragma once

/* One connection to an X server for domains/x11.c: a private, never-mapped InputOnly window
 * selecting PropertyChange, a private atom, and the probe itself. Every wait has a deadline
 * (CLOCK_MONOTONIC ns): a stuck or slow server must not hold the caller's event loop. */

#include <stdbool.h>
#include <stdint.h>
#include <xcb/xcb.h>

#include "x11-verdict.h"
#include "xcb-connect.h"

#define X11_PROBE_ATOM "_TIMECONV_CLOCK_PROBE"
/* On the root window: a random 64-bit token that names the server for as long as it runs. */
#define X11_SERVER_ID_ATOM "_TIMECONV_SERVER_ID"

typedef struct X11Conn {
        xcb_connection_t *xcb;          /* NULL: not connected */
        xcb_window_t root;
        xcb_window_t window;
        xcb_atom_t atom;
        bool pending;                   /* a probe's PropertyNotify has not come yet ... */
        uint32_t pending_sequence;      /* ... the full sequence number of its request */
        bool window_lost;               /* a probe got an error: the next one makes a new window */
} X11Conn;

/* Sets up the window and the atom on a connection x11_connect_finish() (xcb-connect.h) made;
 * takes xcb in every case. -ENOTCONN when the server fails, -ETIMEDOUT when it does not answer
 * by deadline_ns. */
int x11_conn_setup(X11Conn *c, xcb_connection_t *xcb, int screen, int64_t deadline_ns);

/* xcb_connect() and x11_conn_setup() in the calling thread: blocks for as long as the server
 * takes to accept, so never on an event loop (bench-x11 uses it). */
int x11_conn_open(X11Conn *c, const char *display, int64_t deadline_ns);

void x11_conn_close(X11Conn *c);

/* Which server this is: the token X11_SERVER_ID_ATOM holds on the root window, put there (token)
 * by the first client of ours that found none. A root window property lives as long as the
 * server: a reconnection to the same one (after a grab, a stop, a wedged connection) reads the
 * same id, a restarted server (or one reset when its last client left) a new one. -EIO when
 * another client keeps something else under that name, -ETIMEDOUT at deadline_ns, -ENOTCONN. */
int x11_conn_server_id(X11Conn *c, uint64_t token, int64_t deadline_ns, uint64_t *ret_id);

static inline bool x11_conn_is_open(const X11Conn *c) {
        return c->xcb;
}

/* The connection's fd for the event loop; -ENOTCONN when closed. */
int x11_conn_fd(const X11Conn *c);

/* Reads and drops whatever is pending without blocking (a late probe's event, or its error,
 * clears pending). -ENOTCONN when the connection has failed (the caller closes it). */
int x11_conn_drain(X11Conn *c);

/* One probe: the zero-length append, flushed between the reads of the three clocks before and
 * after, and the PropertyNotify whose sequence is that request's. -ETIMEDOUT at deadline_ns (the
 * probe stays pending: its event is dropped when it comes), -EBUSY while an earlier probe is
 * still pending, -EAGAIN when the server answered the probe with an error (another client
 * destroyed the window or set the property with another type: the next probe makes a new
 * window), -ENOTCONN when the connection fails. */
int x11_conn_probe(X11Conn *c, int64_t deadline_ns, X11Probe *ret);
