/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/xcbext.h>

#include "source-time.h"
#include "x11-conn.h"

/* Waits until the connection's fd is readable or deadline_ns passes: 0, -ETIMEDOUT, -errno. */
static int wait_readable(xcb_connection_t *xcb, int64_t deadline_ns) {
        struct pollfd pfd = { .fd = xcb_get_file_descriptor(xcb), .events = POLLIN };
        int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
        struct timespec ts;
        int r;

        if (left_ns <= 0)
                return -ETIMEDOUT;
        ts = (struct timespec) { .tv_sec = left_ns / 1000000000, .tv_nsec = left_ns % 1000000000 };
        r = ppoll(&pfd, 1, &ts, NULL);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        return r == 0 ? -ETIMEDOUT : 0;
}

static xcb_window_t screen_root(xcb_connection_t *xcb, int screen) {
        xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(xcb));

        for (; it.rem > 0; xcb_screen_next(&it), screen--)
                if (screen <= 0)
                        return it.data->root;
        return XCB_NONE;
}

/* The reply to request sequence (flushed first), without ever blocking past deadline_ns: 0 and
 * the reply (the caller frees it), -EIO when the server answered with an error, -ETIMEDOUT,
 * -ENOTCONN. */
static int wait_reply(xcb_connection_t *xcb, unsigned sequence, int64_t deadline_ns, void **ret) {
        if (xcb_flush(xcb) <= 0)
                return -ENOTCONN;
        for (;;) {
                xcb_generic_error_t *error = NULL;
                void *reply = NULL;
                int r;

                if (xcb_poll_for_reply(xcb, sequence, &reply, &error)) {
                        free(error);
                        if (!reply)
                                return xcb_connection_has_error(xcb) ? -ENOTCONN : -EIO;
                        *ret = reply;
                        return 0;
                }
                if (xcb_connection_has_error(xcb))
                        return -ENOTCONN;
                r = wait_readable(xcb, deadline_ns);
                if (r < 0)
                        return r;
        }
}

/* The atom's reply, without ever blocking past deadline_ns. */
static int intern_atom(xcb_connection_t *xcb, const char *name, int64_t deadline_ns, xcb_atom_t *ret) {
        xcb_intern_atom_reply_t *reply = NULL;
        xcb_atom_t atom;
        int r;

        r = wait_reply(xcb, xcb_intern_atom(xcb, 0, strlen(name), name).sequence, deadline_ns, (void **) &reply);
        if (r < 0)
                return r;
        atom = reply->atom;
        free(reply);
        if (atom == XCB_NONE)
                return -EIO;
        *ret = atom;
        return 0;
}

/* The first two 32-bit items of the root's server id property: 0 and the id, -ENOENT when the
 * property holds none (absent, or of another type), or as wait_reply(). */
static int read_server_id(X11Conn *c, xcb_atom_t atom, int64_t deadline_ns, uint64_t *ret) {
        xcb_get_property_reply_t *reply = NULL;
        const uint32_t *v;
        int r;

        r = wait_reply(c->xcb, xcb_get_property(c->xcb, 0, c->root, atom, XCB_ATOM_INTEGER, 0, 2).sequence,
                       deadline_ns, (void **) &reply);
        if (r < 0)
                return r;
        if (reply->type != XCB_ATOM_INTEGER || reply->format != 32 || xcb_get_property_value_length(reply) < 8) {
                free(reply);
                return -ENOENT;
        }
        v = xcb_get_property_value(reply);
        *ret = (uint64_t) v[0] | (uint64_t) v[1] << 32;
        free(reply);
        return 0;
}

int x11_conn_server_id(X11Conn *c, uint64_t token, int64_t deadline_ns, uint64_t *ret_id) {
        const uint32_t words[2] = { (uint32_t) token, (uint32_t) (token >> 32) };
        xcb_atom_t atom;
        int r;

        if (!c->xcb || !ret_id)
                return -EINVAL;
        r = intern_atom(c->xcb, X11_SERVER_ID_ATOM, deadline_ns, &atom);
        if (r < 0)
                return r;
        r = read_server_id(c, atom, deadline_ns, ret_id);
        if (r != -ENOENT)
                return r;
        /* Appended, never replaced: of clients racing at a new server, the first to be served
         * names it for all. */
        xcb_change_property(c->xcb, XCB_PROP_MODE_APPEND, c->root, atom, XCB_ATOM_INTEGER, 32, 2, words);
        r = read_server_id(c, atom, deadline_ns, ret_id);
        /* Still none: another client keeps something else there; the server cannot be told. */
        return r == -ENOENT ? -EIO : r;
}

/* Never mapped, InputOnly, override-redirect: invisible to the user and to a window manager;
 * its only purpose is to receive our own PropertyNotify events. */
static xcb_window_t create_window(X11Conn *c) {
        uint32_t values[] = { 1, XCB_EVENT_MASK_PROPERTY_CHANGE };
        xcb_window_t window = xcb_generate_id(c->xcb);

        xcb_create_window(c->xcb, 0, window, c->root, -1, -1, 1, 1, 0, XCB_WINDOW_CLASS_INPUT_ONLY,
                          XCB_COPY_FROM_PARENT, XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
        return window;
}

int x11_conn_setup(X11Conn *c, xcb_connection_t *xcb, int screen, int64_t deadline_ns) {
        xcb_window_t root;
        int r;

        root = screen_root(xcb, screen);
        if (root == XCB_NONE) {
                xcb_disconnect(xcb);
                return -ENOTCONN;
        }

        *c = (X11Conn) { .xcb = xcb, .root = root };
        c->window = create_window(c);
        r = intern_atom(xcb, X11_PROBE_ATOM, deadline_ns, &c->atom);
        if (r < 0) {
                x11_conn_close(c);
                return r == -ETIMEDOUT ? r : -ENOTCONN;
        }
        return 0;
}

int x11_conn_open(X11Conn *c, const char *display, int64_t deadline_ns) {
        xcb_connection_t *xcb;
        int screen = 0;

        xcb = xcb_connect(display, &screen);
        if (xcb_connection_has_error(xcb)) {
                xcb_disconnect(xcb);
                return -ENOTCONN;
        }
        return x11_conn_setup(c, xcb, screen, deadline_ns);
}

void x11_conn_close(X11Conn *c) {
        if (c->xcb)
                xcb_disconnect(c->xcb);
        *c = (X11Conn) {};
}

int x11_conn_fd(const X11Conn *c) {
        return c->xcb ? xcb_get_file_descriptor(c->xcb) : -ENOTCONN;
}

/* 1: the pending probe's PropertyNotify; -EAGAIN: the server refused the probe with an error
 * (errors come in the event stream, with the sequence of the request they answer), so its
 * event never comes; 0: anything else (a stale probe's event, another request's error). */
static int probe_answer(X11Conn *c, const xcb_generic_event_t *ev) {
        const xcb_property_notify_event_t *pn = (const xcb_property_notify_event_t *) ev;

        if (!c->pending || ev->full_sequence != c->pending_sequence)
                return 0;
        if (ev->response_type == 0) {
                c->pending = false;
                c->window_lost = true;
                return -EAGAIN;
        }
        if ((ev->response_type & 0x7f) != XCB_PROPERTY_NOTIFY || pn->window != c->window || pn->atom != c->atom)
                return 0;
        c->pending = false;
        return 1;
}

int x11_conn_drain(X11Conn *c) {
        xcb_generic_event_t *ev;

        if (!c->xcb)
                return -ENOTCONN;
        while ((ev = xcb_poll_for_event(c->xcb))) {
                (void) probe_answer(c, ev);
                free(ev);
        }
        return xcb_connection_has_error(c->xcb) ? -ENOTCONN : 0;
}

int x11_conn_probe(X11Conn *c, int64_t deadline_ns, X11Probe *ret) {
        xcb_void_cookie_t cookie;
        X11Probe p = {};
        int r;

        if (!c->xcb)
                return -ENOTCONN;
        if (c->pending)
                return -EBUSY;

        /* The old window is gone or spoiled by another client (destroying a gone one only
         * earns an error nobody waits for); requests run in order, so no round trip. */
        if (c->window_lost) {
                xcb_destroy_window(c->xcb, c->window);
                c->window = create_window(c);
                c->window_lost = false;
        }

        /* PropModeAppend of nothing: the property never grows, the server still stamps it. */
        cookie = xcb_change_property(c->xcb, XCB_PROP_MODE_APPEND, c->window, c->atom, XCB_ATOM_STRING, 8, 0, NULL);
        c->pending = true;
        c->pending_sequence = cookie.sequence;

        /* Innermost last before the flush and first after the event: each pair brackets the
         * server's stamp, the raw pair (the estimator's reference) outermost. */
        p.raw0_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        p.mono0_ns = clock_now_ns(CLOCK_MONOTONIC);
        p.coarse0_ns = clock_now_ns(CLOCK_MONOTONIC_COARSE);
        if (xcb_flush(c->xcb) <= 0)
                return -ENOTCONN;

        for (;;) {
                /* Queued first: an event read along with an earlier one never makes the socket
                 * readable again. Otherwise wait, then read: no read() that can only fail. */
                xcb_generic_event_t *ev = xcb_poll_for_queued_event(c->xcb);

                if (!ev) {
                        r = wait_readable(c->xcb, deadline_ns);
                        if (r < 0)
                                return xcb_connection_has_error(c->xcb) ? -ENOTCONN : r;
                        ev = xcb_poll_for_event(c->xcb);
                }
                if (ev) {
                        int64_t coarse1_ns = clock_now_ns(CLOCK_MONOTONIC_COARSE);
                        int64_t mono1_ns = clock_now_ns(CLOCK_MONOTONIC);
                        int64_t raw1_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);

                        r = probe_answer(c, ev);
                        if (r <= 0) {
                                /* Some other event: never its time. An error: no time at all. */
                                free(ev);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        p.server_ms = ((const xcb_property_notify_event_t *) ev)->time;
                        free(ev);
                        p.coarse1_ns = coarse1_ns;
                        p.mono1_ns = mono1_ns;
                        p.raw1_ns = raw1_ns;
                        *ret = p;
                        return 0;
                }
                if (xcb_connection_has_error(c->xcb))
                        return -ENOTCONN;
        }
}
