/* SPDX-License-Identifier: MIT */

/* The probe's Wayland globals: what the compositor offers (bound at the versions the probe
 * speaks), each output's name (xdg-output's, else "wl_output-N") and current refresh, and the
 * clock wp_presentation stamps with. */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-probe-wayland-internal.h"
#include "presentation-time-client-protocol.h"
#include "xdg-output-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

int probe_wayland_fail(char *message, size_t size, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, size, fmt, ap);
        va_end(ap);
        return r;
}

const char *probe_wayland_clock_domain(clockid_t clock_id) {
        switch (clock_id) {
        case CLOCK_REALTIME:
                return "realtime";
        case CLOCK_MONOTONIC:
                return "monotonic";
        case CLOCK_MONOTONIC_RAW:
                return "monotonic_raw";
        case CLOCK_REALTIME_COARSE:
                return "realtime_coarse";
        case CLOCK_MONOTONIC_COARSE:
                return "monotonic_coarse";
        case CLOCK_BOOTTIME:
                return "boottime";
        case CLOCK_TAI:
                return "tai";
        default:
                return NULL;
        }
}

static void output_mode(void *data, struct wl_output *o, uint32_t flags, int32_t width, int32_t height,
                        int32_t refresh_mhz) {
        Output *out = data;

        if (flags & WL_OUTPUT_MODE_CURRENT)
                out->info->refresh_mhz = refresh_mhz;
}

static void output_geometry(void *data, struct wl_output *o, int32_t x, int32_t y, int32_t w_mm, int32_t h_mm,
                            int32_t subpixel, const char *make, const char *model, int32_t transform) {
}

static void output_done(void *data, struct wl_output *o) {
}

static void output_scale(void *data, struct wl_output *o, int32_t factor) {
}

static const struct wl_output_listener output_listener = {
        .geometry = output_geometry,
        .mode = output_mode,
        .done = output_done,
        .scale = output_scale,
};

static void xdg_output_name(void *data, struct zxdg_output_v1 *x, const char *name) {
        Output *out = data;

        snprintf(out->info->name, sizeof(out->info->name), "%s", name);
}

static void xdg_output_position(void *data, struct zxdg_output_v1 *x, int32_t a, int32_t b) {
}

static void xdg_output_done(void *data, struct zxdg_output_v1 *x) {
}

static void xdg_output_description(void *data, struct zxdg_output_v1 *x, const char *description) {
}

static const struct zxdg_output_v1_listener xdg_output_listener = {
        .logical_position = xdg_output_position,
        .logical_size = xdg_output_position,
        .done = xdg_output_done,
        .name = xdg_output_name,
        .description = xdg_output_description,
};

static void presentation_clock(void *data, struct wp_presentation *presentation, uint32_t clock_id) {
        Probe *p = data;

        p->run->clock_id = (clockid_t) clock_id;
        p->have_clock = true;
}

static const struct wp_presentation_listener presentation_listener = {
        .clock_id = presentation_clock,
};

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial) {
        xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = {
        .ping = wm_base_ping,
};

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                   uint32_t version) {
        Probe *p = data;

        if (strcmp(interface, wl_compositor_interface.name) == 0 && !p->compositor)
                p->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
        else if (strcmp(interface, wl_shm_interface.name) == 0 && !p->shm)
                p->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
        else if (strcmp(interface, xdg_wm_base_interface.name) == 0 && !p->wm_base) {
                p->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
                xdg_wm_base_add_listener(p->wm_base, &wm_base_listener, p);
        } else if (strcmp(interface, wp_presentation_interface.name) == 0 && !p->presentation) {
                p->presentation = wl_registry_bind(registry, name, &wp_presentation_interface, 1);
                wp_presentation_add_listener(p->presentation, &presentation_listener, p);
        } else if (strcmp(interface, zxdg_output_manager_v1_interface.name) == 0 && version >= 2 &&
                   !p->output_manager)
                p->output_manager = wl_registry_bind(registry, name, &zxdg_output_manager_v1_interface, 2);
        else if (strcmp(interface, wl_output_interface.name) == 0 && version >= 2 &&
                 p->n_outputs < sizeof(p->outputs) / sizeof(p->outputs[0])) {
                Output *out = &p->outputs[p->n_outputs];

                *out = (Output) {
                        .probe = p,
                        .output = wl_registry_bind(registry, name, &wl_output_interface, 2),
                        .info = &p->run->outputs[p->n_outputs],
                };
                snprintf(out->info->name, sizeof(out->info->name), "wl_output-%" PRIu32, name);
                wl_output_add_listener(out->output, &output_listener, out);
                p->n_outputs++;
                p->run->n_outputs = p->n_outputs;
        }
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {
}

static const struct wl_registry_listener registry_listener = {
        .global = global,
        .global_remove = global_remove,
};

static int roundtrip(Probe *p) {
        return wl_display_roundtrip(p->display) < 0 ? -ECONNRESET : 0;
}

/* The globals, the outputs' names, the presentation clock. */
int probe_wayland_setup(Probe *p, char *message, size_t size) {
        const char *name = getenv("WAYLAND_DISPLAY");
        int r;

        snprintf(p->run->display, sizeof(p->run->display), "%s", name && *name ? name : "wayland-0");
        p->display = wl_display_connect(NULL);
        if (!p->display)
                return probe_wayland_fail(message, size, -ENXIO, "cannot connect to the Wayland compositor '%s': %m",
                            p->run->display);
        p->registry = wl_display_get_registry(p->display);
        wl_registry_add_listener(p->registry, &registry_listener, p);
        /* The globals, then what binding them announced (clock id, modes, xdg-output names). */
        r = roundtrip(p);
        if (r >= 0 && p->output_manager)
                for (size_t i = 0; i < p->n_outputs; i++) {
                        Output *out = &p->outputs[i];

                        out->xdg_output = zxdg_output_manager_v1_get_xdg_output(p->output_manager, out->output);
                        zxdg_output_v1_add_listener(out->xdg_output, &xdg_output_listener, out);
                }
        if (r >= 0)
                r = roundtrip(p);
        if (r < 0)
                return probe_wayland_fail(message, size, r, "the Wayland compositor '%s' closed the connection",
                                          p->run->display);
        if (!p->compositor || !p->shm || !p->wm_base || !p->presentation)
                return probe_wayland_fail(message, size, -EOPNOTSUPP, "the Wayland compositor '%s' lacks %s",
                                          p->run->display, !p->compositor ? "wl_compositor" : !p->shm ? "wl_shm" :
                                          !p->wm_base ? "xdg_wm_base" : "wp_presentation (presentation-time)");
        if (!p->have_clock)
                return probe_wayland_fail(message, size, -EOPNOTSUPP, "the Wayland compositor '%s' announced no "
                                          "presentation clock", p->run->display);
        return 0;
}

void probe_wayland_globals_destroy(Probe *p) {
        for (size_t i = 0; i < p->n_outputs; i++) {
                if (p->outputs[i].xdg_output)
                        zxdg_output_v1_destroy(p->outputs[i].xdg_output);
                wl_output_destroy(p->outputs[i].output);
        }
        if (p->output_manager)
                zxdg_output_manager_v1_destroy(p->output_manager);
        if (p->presentation)
                wp_presentation_destroy(p->presentation);
        if (p->wm_base)
                xdg_wm_base_destroy(p->wm_base);
        if (p->shm)
                wl_shm_destroy(p->shm);
        if (p->compositor)
                wl_compositor_destroy(p->compositor);
        if (p->registry)
                wl_registry_destroy(p->registry);
        if (p->display)
                wl_display_disconnect(p->display);
}
