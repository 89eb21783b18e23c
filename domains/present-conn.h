/* SPDX-License-Identifier: MIT */
#pragma once

/* One connection to an X server for domains/present.c: the Present extension on a private,
 * never-mapped 1x1 window at the screen's origin (so the server times it with the CRTC that
 * shows (0, 0), as it would a client's window there), the RandR CRTC that covers it, and the
 * PresentNotifyMSC requests and their PresentCompleteNotify events. Every wait has a deadline
 * (CLOCK_MONOTONIC ns): a stuck or slow server must not hold the caller's event loop. */

#include <stdbool.h>
#include <stdint.h>
#include <xcb/xcb.h>

#include "present-box.h"
#include "xcb-connect.h"

#define PRESENT_CRTCS_MAX 16
#define PRESENT_OUTPUT_NAME_MAX 32

/* One CRTC that shows something, as RandR describes it. */
typedef struct PresentCrtc {
        uint32_t crtc;
        int16_t x, y;
        uint16_t width, height;
        double mode_interval_ns;        /* 0 when the mode has no timing */
        char output[PRESENT_OUTPUT_NAME_MAX];   /* its first output's name, e.g. "DP-1" */
        bool variable_refresh;          /* its output says vrr_capable */
} PresentCrtc;

typedef struct PresentConn {
        xcb_connection_t *xcb;          /* NULL: not connected */
        X11Connect *connecting;         /* while not connected: an attempt under way, or NULL */
        xcb_window_t window;
        uint32_t eid;                   /* our Present event selection */
        uint8_t present_opcode;         /* the extension's major opcode: its events carry it */
        /* The output to count the vblanks of (its CRTC's); "": the CRTC covering (0, 0). Set
         * before connecting, kept across reconnections. */
        char output[PRESENT_OUTPUT_NAME_MAX];
        uint8_t randr_event_base;       /* RandR's first event: its notifies say the screen changed */
        bool randr_changed;             /* a RandR notify came since the last present_conn_crtcs() */
        xcb_window_t root;
        PresentCrtc crtcs[PRESENT_CRTCS_MAX];   /* the screen's lit CRTCs at set-up */
        size_t n_crtcs;
        bool variable_refresh;          /* the chosen CRTC's output */
        uint32_t crtc;                  /* the RandR CRTC chosen */
        char crtc_name[48];             /* e.g. "crtc-59 screen": the CRTC and its first output */
        double mode_interval_ns;        /* of the CRTC's mode; 0 when the mode has no timing */
        /* Present counts a timer, not this CRTC's vblanks (Xvfb, Xorg's dummy driver, Xwayland),
         * and why: seen at set-up, from the server and from where its counter stands. */
        bool emulated;
        char emulated_reason[128];
} PresentConn;

/* The interval Present counts at: the fake timer's when emulated or when the mode has no
 * timing, else the CRTC's mode's. */
double present_conn_interval_ns(const PresentConn *c);

/* Reads the screen's lit CRTCs again (after a RandR notify) into c->crtcs, clearing
 * randr_changed, never blocking past deadline_ns. -ENOTCONN, -ETIMEDOUT. */
int present_conn_crtcs(PresentConn *c, int64_t deadline_ns);

/* output as a domain name may spell it: lower case, '_' for what a name may not hold. */
void present_output_key(const char *output, char *ret, size_t size);

/* The CRTC of c->crtcs whose output's key (present_output_key()) is output ("": the one covering
 * (0, 0), else the first), or NULL. */
const PresentCrtc *present_conn_find(const PresentConn *c, const char *output);

/* Connects a closed c ({} or closed but for c->output; -EALREADY when open) to display (NULL:
 * $DISPLAY), checks Present and RandR, finds the CRTC of c->output (-ENODEV when it shows
 * nothing), selects RandR's notifies, selects PresentCompleteNotify on a private window and asks
 * once where the counter stands (to tell a timer from a display: emulated), never
 * blocking past wait_until_ns and then setup_budget_ns. xcb_connect() runs in a thread
 * (xcb-connect.h) whose attempt stays c's across calls: the call that starts it waits for it
 * until wait_until_ns, later calls only look, so a server that never answers holds one thread,
 * not one per call. -EINPROGRESS while it has not answered (present_conn_close() gives the
 * attempt up), -ENOTCONN when the server cannot be reached, -ETIMEDOUT when it does not answer
 * the set-up in time, -EOPNOTSUPP without Present or RandR, -ENODEV when no CRTC shows anything. */
int present_conn_connect(PresentConn *c, const char *display, int64_t wait_until_ns, int64_t setup_budget_ns);

static inline bool present_conn_is_connecting(const PresentConn *c) {
        return c->connecting;
}

/* Closes the connection, or gives up the attempt under way. */
void present_conn_close(PresentConn *c);

static inline bool present_conn_is_open(const PresentConn *c) {
        return c->xcb;
}

/* The connection's fd for the event loop; -ENOTCONN when closed. */
int present_conn_fd(const PresentConn *c);

/* Sends PresentNotifyMSC(serial, target_msc) and flushes; target 0 asks for the current
 * (ust, msc) at once. -ENOTCONN when the connection fails. */
int present_conn_notify(PresentConn *c, uint32_t serial, uint64_t target_msc);

/* One PresentCompleteNotify of ours, without blocking: 1 and *ret_serial, *ret (the bracket
 * read as it was taken off the connection), 0 when none is pending, -ENOTCONN when the connection
 * has failed. Other events and errors are dropped. */
int present_conn_read(PresentConn *c, uint32_t *ret_serial, PresentEvent *ret);

/* Waits until the connection has input or deadline_ns passes: 0, -ETIMEDOUT, -errno. */
int present_conn_wait(PresentConn *c, int64_t deadline_ns);
