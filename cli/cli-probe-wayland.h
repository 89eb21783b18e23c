/* SPDX-License-Identifier: MIT */
#pragma once

/* The probe's Wayland client (cli-probe-wayland.c): an xdg_toplevel with wl_shm buffers that
 * commits frames at a pace and asks wp_presentation for feedback on each: when it was presented
 * in the compositor's clock, the refresh, the sequence, the flags and the output, or that it was
 * discarded. No conversion here: cli-probe-wayland-log.c converts through libtimeconv, as each
 * feedback comes (on_feedback). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WAYLAND_OUTPUT_NAME_MAX 64

struct WaylandFrame;
struct WaylandProbeRun;

typedef struct WaylandProbeOptions {
        unsigned n_frames;
        double rate_hz;                 /* 0: the next frame on the last one's frame callback */
        const char *output;             /* NULL: a window; else fullscreen on this output (xdg-output name) */
        int64_t wait_ns;                /* for feedback (and a configure) before giving up on it */
        /* Called with each frame as its feedback comes (presented or discarded), NULL: not. */
        void (*on_feedback)(void *userdata, const struct WaylandProbeRun *run, struct WaylandFrame *f);
        void *userdata;
} WaylandProbeOptions;

typedef enum WaylandFrameState {
        WAYLAND_FRAME_PENDING,          /* no feedback came */
        WAYLAND_FRAME_PRESENTED,
        WAYLAND_FRAME_DISCARDED,
} WaylandFrameState;

/* wp_presentation_feedback's kind flags, as the protocol numbers them. */
enum {
        WAYLAND_PRESENTED_VSYNC = 1,
        WAYLAND_PRESENTED_HW_CLOCK = 2,
        WAYLAND_PRESENTED_HW_COMPLETION = 4,
        WAYLAND_PRESENTED_ZERO_COPY = 8,
};

typedef struct WaylandFrame {
        int64_t begin_ns, commit_ns;    /* CLOCK_MONOTONIC: before painting, after the commit was flushed */
        WaylandFrameState state;
        char output[WAYLAND_OUTPUT_NAME_MAX];   /* sync_output's, "" when none was named */
        int64_t presented_ns;           /* in the compositor's clock (WaylandProbeRun.clock_id) */
        int64_t refresh_ns;             /* 0: the compositor did not say */
        uint64_t seq;
        uint32_t flags;                 /* WAYLAND_PRESENTED_* */
        int64_t feedback_received_ns;   /* CLOCK_MONOTONIC */
        /* presented_ns in CLOCK_MONOTONIC and the conversion's bound, when converted (by
         * on_feedback's owner). */
        bool converted;
        int64_t presented_mono_ns, presented_uncertainty_ns;
} WaylandFrame;

typedef struct WaylandOutputInfo {
        char name[WAYLAND_OUTPUT_NAME_MAX];
        int32_t refresh_mhz;            /* the current mode's; 0: unknown */
} WaylandOutputInfo;

typedef struct WaylandProbeRun {
        char display[108];              /* the socket's name */
        clockid_t clock_id;             /* wp_presentation.clock_id */
        uint32_t surface;               /* the wl_surface's protocol id */
        char fullscreen_output[WAYLAND_OUTPUT_NAME_MAX]; /* "" for a window */
        WaylandOutputInfo outputs[16];
        size_t n_outputs;
        WaylandFrame *frames;
        size_t n_frames;
        int64_t cpu_ns, wall_ns;        /* the probe's own CPU time over the frames, and their span */
        /* Why the frames stopped before the last: 0 they did not; -ECONNRESET the compositor
         * closed the connection (it went away), -ETIME it went silent (no frame callback, no
         * feedback, no buffer back for the silence limit while frames waited), -ESHUTDOWN it
         * closed the probe's window. The frames until then are in frames; stop_message says what
         * happened, for people. */
        int stopped;
        char stop_message[320];
} WaylandProbeRun;

/* Runs the probe on $WAYLAND_DISPLAY. 0 once the window is up, even if the frames stopped early
 * (ret->stopped says why), or: -ENXIO no compositor to connect to, -EOPNOTSUPP one without
 * xdg_wm_base, wl_shm or wp_presentation, -ENOENT no output o->output, -ETIMEDOUT never
 * configured, -ECONNRESET the connection broke before the frames, -ENOMEM; message (size bytes)
 * then says what happened, for people. */
int probe_wayland_run(const WaylandProbeOptions *o, WaylandProbeRun *ret, char *message, size_t size);

void probe_wayland_run_done(WaylandProbeRun *run);

/* The timeconvd domain of a presentation clock, NULL when timeconvd has none. */
const char *probe_wayland_clock_domain(clockid_t clock_id);
