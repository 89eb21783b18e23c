/* SPDX-License-Identifier: MIT */
#pragma once

/* The probe's X client (cli-probe-x11.c): a window under the running compositor that speaks
 * extended frame synchronisation, draws frames at a pace, and records per frame when it began
 * and ended it and what the compositor's messages said and when they came. No conversion
 * here: cli-probe.c converts through libtimeconv. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeconv.h"

typedef struct ProbeOptions {
        const char *display;            /* NULL: $DISPLAY */
        unsigned n_frames;
        double rate_hz;                 /* 0: the next frame right after _NET_WM_FRAME_DRAWN */
        bool urgent;                    /* every frame urgent (the window manager waits for it) */
        int64_t wait_ns;                /* for a message before giving up on it */
} ProbeOptions;

typedef struct ProbeFrame {
        uint64_t counter;               /* the frame's end value */
        int64_t begin_ns, end_ns;       /* CLOCK_MONOTONIC, just before the counter request left */
        bool drawn, timed;
        struct timeconv_frame_drawn drawn_message;
        struct timeconv_frame_timings timings_message;
        int64_t drawn_received_ns, timings_received_ns;
} ProbeFrame;

typedef struct ProbeRun {
        char wm_name[128];
        bool wm_timings;                /* _NET_WM_FRAME_TIMINGS in _NET_SUPPORTED */
        uint32_t window;
        ProbeFrame *frames;
        size_t n_frames;
        unsigned sync_requests;         /* _NET_WM_SYNC_REQUEST answered */
        int64_t cpu_ns, wall_ns;        /* the probe's own CPU time over the frames, and their span */
} ProbeRun;

/* Runs the probe. 0, or: -ENXIO the display cannot be opened, -ENOENT no EWMH window manager,
 * -EOPNOTSUPP one without _NET_WM_FRAME_DRAWN, -ENOTSUP no XSync, -ECONNRESET the connection
 * broke, -ENOMEM; message (size bytes) then says what happened, for people. */
int probe_x11_run(const ProbeOptions *o, ProbeRun *ret, char *message, size_t size);

void probe_run_done(ProbeRun *run);
