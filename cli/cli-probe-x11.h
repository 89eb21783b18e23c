/* SPDX-License-Identifier: MIT */
#pragma once

/* The probe's X client (cli-probe-x11.c): a window under the running compositor that speaks
 * extended frame synchronisation, draws frames at a pace, and records per frame when it began
 * and ended it and what the compositor's messages said and when they came. No conversion
 * here: cli-probe.c converts through libtimeconv, as each message comes (on_message), so that
 * the frames measured before the X server goes are not lost with its calibration. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeconv.h"

struct ProbeFrame;

typedef struct ProbeOptions {
        const char *display;            /* NULL: $DISPLAY */
        unsigned n_frames;
        double rate_hz;                 /* 0: the next frame right after _NET_WM_FRAME_DRAWN */
        bool urgent;                    /* every frame urgent (the window manager waits for it) */
        int64_t wait_ns;                /* the compositor's silence (no message at all) before giving up on it */
        /* timeconvd's X server: the token it keeps on the root window (x11_conn_server_id() in
         * domains/), and its display name for people. No token: not checked. */
        bool has_server_id;
        uint64_t server_id;
        const char *daemon_display;
        /* Called when a frame's message has come (f->drawn, and f->timed when it has). */
        void (*on_message)(void *userdata, struct ProbeFrame *f);
        void *userdata;
} ProbeOptions;

typedef struct ProbeFrame {
        uint64_t counter;               /* the frame's end value */
        int64_t begin_ns, end_ns;       /* CLOCK_MONOTONIC, just before the counter request left */
        bool drawn, timed;
        struct timeconv_frame_drawn drawn_message;
        struct timeconv_frame_timings timings_message;
        int64_t drawn_received_ns, timings_received_ns;
        /* cli-probe.c's conversion of the messages (converted: of those that have come). */
        bool converted, converted_timed;
        struct timeconv_frame_times times;
} ProbeFrame;

typedef struct ProbeRun {
        char wm_name[128];
        bool wm_timings;                /* _NET_WM_FRAME_TIMINGS in _NET_SUPPORTED */
        uint32_t window;
        ProbeFrame *frames;
        size_t n_frames;
        unsigned sync_requests;         /* _NET_WM_SYNC_REQUEST answered */
        int64_t cpu_ns, wall_ns;        /* the probe's own CPU time over the frames, and their span */
        /* Why the frames stopped before the last: 0 they did not; -ESHUTDOWN the window manager
         * went away, -ETIME it sent no _NET_WM_FRAME_DRAWN for ProbeOptions.wait_ns (or longer),
         * -ECONNRESET the X connection broke, another -errno the probe's own failure. The frames
         * until then are in frames; stop_message says what happened, for people. */
        int stopped;
        char stop_message[320];
} ProbeRun;

/* Runs the probe: 0 once frames were drawn, even if they stopped early (ret->stopped says why).
 * Else, and nothing measured: -ENXIO the display cannot be opened, -EXDEV it is not timeconvd's
 * X server, -ENOENT no EWMH window manager, -EOPNOTSUPP one without _NET_WM_FRAME_DRAWN,
 * -ENOTSUP no XSync, -ECONNRESET the connection broke, -ETIMEDOUT the window was not mapped,
 * -ENOMEM; message (size bytes) then says what happened, for people. */
int probe_x11_run(const ProbeOptions *o, ProbeRun *ret, char *message, size_t size);

void probe_run_done(ProbeRun *run);
