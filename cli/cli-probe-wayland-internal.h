/* SPDX-License-Identifier: MIT */
#pragma once

/* What the probe's Wayland client (cli-probe-wayland.c) and its globals
 * (cli-probe-wayland-globals.c: the registry, the outputs and their names, the presentation
 * clock) share. */

#include <stdbool.h>
#include <stddef.h>
#include <wayland-client.h>

#include "cli-probe-wayland.h"

#define N_BUFFERS 3

typedef struct Probe Probe;

typedef struct Output {
        Probe *probe;
        struct wl_output *output;
        struct zxdg_output_v1 *xdg_output;
        WaylandOutputInfo *info;
} Output;

typedef struct Buffer {
        struct wl_buffer *buffer;
        uint32_t *pixels;
        bool busy;
} Buffer;

/* A feedback and the frame it is for. */
typedef struct Feedback {
        Probe *probe;
        struct wp_presentation_feedback *feedback;
        WaylandFrame *frame;
} Feedback;

struct Probe {
        struct wl_display *display;
        struct wl_registry *registry;
        struct wl_compositor *compositor;
        struct wl_shm *shm;
        struct xdg_wm_base *wm_base;
        struct wp_presentation *presentation;
        struct zxdg_output_manager_v1 *output_manager;
        Output outputs[16];
        size_t n_outputs;
        bool have_clock;
        struct wl_surface *surface;
        struct xdg_surface *xdg_surface;
        struct xdg_toplevel *toplevel;
        bool configured, closed;
        struct wl_callback *frame_callback;
        Buffer buffers[N_BUFFERS];
        void *pool_memory;
        Feedback *feedbacks;
        size_t n_outstanding;           /* feedbacks not answered yet */
        size_t n_answered;              /* feedbacks that came */
        size_t oldest_pending;          /* the first frame whose feedback has not come (or n_frames) */
        int64_t last_answer_ns;         /* CLOCK_MONOTONIC: the last frame callback or feedback, 0 none */
        const WaylandProbeOptions *o;
        WaylandProbeRun *run;
};

/* Writes the message (size bytes) and returns r. */
int probe_wayland_fail(char *message, size_t size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Connects to $WAYLAND_DISPLAY and binds the globals; the outputs' names and the presentation
 * clock known on return. 0, or -ENXIO, -ECONNRESET, -EOPNOTSUPP with the message. */
int probe_wayland_setup(Probe *p, char *message, size_t size);

/* What probe_wayland_setup() made, and the connection. */
void probe_wayland_globals_destroy(Probe *p);
