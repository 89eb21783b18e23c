/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/present.h>
#include <xcb/randr.h>
#include <xcb/xcbext.h>

#include "cleanup.h"
#include "present-conn.h"
#include "source-time.h"

int present_conn_wait(PresentConn *c, int64_t deadline_ns) {
        struct pollfd pfd;
        int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
        struct timespec ts;
        int r;

        if (!c->xcb)
                return -ENOTCONN;
        if (left_ns <= 0)
                return -ETIMEDOUT;
        pfd = (struct pollfd) { .fd = xcb_get_file_descriptor(c->xcb), .events = POLLIN };
        ts = (struct timespec) { .tv_sec = left_ns / 1000000000, .tv_nsec = left_ns % 1000000000 };
        r = ppoll(&pfd, 1, &ts, NULL);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        return r == 0 ? -ETIMEDOUT : 0;
}

/* The reply to sequence, without ever blocking past deadline_ns; -EIO for an X error. */
static int wait_reply(PresentConn *c, unsigned sequence, int64_t deadline_ns, void **ret) {
        xcb_flush(c->xcb);
        for (;;) {
                xcb_generic_error_t *error = NULL;
                void *reply = NULL;
                int r;

                if (xcb_poll_for_reply(c->xcb, sequence, &reply, &error)) {
                        free(error);
                        if (!reply)
                                return xcb_connection_has_error(c->xcb) ? -ENOTCONN : -EIO;
                        *ret = reply;
                        return 0;
                }
                if (xcb_connection_has_error(c->xcb))
                        return -ENOTCONN;
                r = present_conn_wait(c, deadline_ns);
                if (r < 0)
                        return r;
        }
}

/* Present and RandR: their opcodes without a blocking round trip (the prefetched answers are in
 * once a later request is answered), and the versions we speak. */
static int check_extensions(PresentConn *c, int64_t deadline_ns) {
        _cleanup_free_ xcb_get_input_focus_reply_t *sync = NULL;
        _cleanup_free_ xcb_present_query_version_reply_t *present_version = NULL;
        _cleanup_free_ xcb_randr_query_version_reply_t *randr_version = NULL;
        const xcb_query_extension_reply_t *present, *randr;
        xcb_present_query_version_cookie_t pc;
        xcb_randr_query_version_cookie_t rc;
        int r;

        xcb_prefetch_extension_data(c->xcb, &xcb_present_id);
        xcb_prefetch_extension_data(c->xcb, &xcb_randr_id);
        r = wait_reply(c, xcb_get_input_focus(c->xcb).sequence, deadline_ns, (void **) &sync);
        if (r < 0)
                return r;
        present = xcb_get_extension_data(c->xcb, &xcb_present_id);
        randr = xcb_get_extension_data(c->xcb, &xcb_randr_id);
        if (!present || !present->present || !randr || !randr->present)
                return -EOPNOTSUPP;
        c->present_opcode = present->major_opcode;

        pc = xcb_present_query_version(c->xcb, 1, 0);
        rc = xcb_randr_query_version(c->xcb, 1, 3);
        r = wait_reply(c, pc.sequence, deadline_ns, (void **) &present_version);
        if (r >= 0)
                r = wait_reply(c, rc.sequence, deadline_ns, (void **) &randr_version);
        if (r < 0)
                return r;
        /* GetScreenResourcesCurrent is RandR 1.3. */
        if (randr_version->major_version < 1 || (randr_version->major_version == 1 && randr_version->minor_version < 3))
                return -EOPNOTSUPP;
        return 0;
}

/* Names the CRTC after itself and its first output ("crtc-63 HDMI-1"). */
static int name_crtc(PresentConn *c, const xcb_randr_get_crtc_info_reply_t *info, xcb_timestamp_t config,
                     int64_t deadline_ns) {
        _cleanup_free_ xcb_randr_get_output_info_reply_t *output = NULL;
        int r;

        snprintf(c->crtc_name, sizeof(c->crtc_name), "crtc-%u", c->crtc);
        if (info->num_outputs == 0)
                return 0;
        r = wait_reply(c, xcb_randr_get_output_info(c->xcb, xcb_randr_get_crtc_info_outputs(info)[0], config).sequence,
                       deadline_ns, (void **) &output);
        if (r == -EIO)
                return 0;
        if (r < 0)
                return r;
        snprintf(c->crtc_name, sizeof(c->crtc_name), "crtc-%u %.*s", c->crtc,
                 xcb_randr_get_output_info_name_length(output), (const char *) xcb_randr_get_output_info_name(output));
        return 0;
}

/* The CRTC showing (0, 0), else the first that shows anything, and its mode's interval. */
static int find_crtc(PresentConn *c, xcb_window_t root, int64_t deadline_ns) {
        _cleanup_free_ xcb_randr_get_screen_resources_current_reply_t *res = NULL;
        _cleanup_free_ xcb_randr_get_crtc_info_reply_t *chosen = NULL;
        const xcb_randr_mode_info_t *modes;
        const xcb_randr_crtc_t *crtcs;
        int r;

        r = wait_reply(c, xcb_randr_get_screen_resources_current(c->xcb, root).sequence, deadline_ns, (void **) &res);
        if (r < 0)
                return r;
        crtcs = xcb_randr_get_screen_resources_current_crtcs(res);
        modes = xcb_randr_get_screen_resources_current_modes(res);

        for (int i = 0; i < xcb_randr_get_screen_resources_current_crtcs_length(res); i++) {
                _cleanup_free_ xcb_randr_get_crtc_info_reply_t *info = NULL;
                bool at_origin;

                r = wait_reply(c, xcb_randr_get_crtc_info(c->xcb, crtcs[i], res->config_timestamp).sequence,
                               deadline_ns, (void **) &info);
                if (r == -EIO)
                        continue;       /* gone since the resources were read */
                if (r < 0)
                        return r;
                if (info->mode == XCB_NONE)
                        continue;
                at_origin = info->x <= 0 && info->y <= 0 && info->x + info->width > 0 && info->y + info->height > 0;
                if (!chosen || at_origin) {
                        free(chosen);
                        chosen = info;
                        info = NULL;
                        c->crtc = crtcs[i];
                        if (at_origin)
                                break;
                }
        }
        if (!chosen)
                return -ENODEV;

        c->mode_interval_ns = 0;
        for (int i = 0; i < xcb_randr_get_screen_resources_current_modes_length(res); i++)
                if (modes[i].id == chosen->mode &&
                    present_mode_interval_ns(modes[i].dot_clock, modes[i].htotal, modes[i].vtotal,
                                             modes[i].mode_flags, &c->mode_interval_ns) < 0)
                        c->mode_interval_ns = 0;
        return name_crtc(c, chosen, res->config_timestamp, deadline_ns);
}

double present_conn_interval_ns(const PresentConn *c) {
        return c->emulated || c->mode_interval_ns <= 0 ? PRESENT_FAKE_INTERVAL_US * 1000.0 : c->mode_interval_ns;
}

/* Whether the server has the XWAYLAND extension (Xwayland 21 and later). */
static int has_xwayland_extension(PresentConn *c, int64_t deadline_ns, bool *ret) {
        _cleanup_free_ xcb_query_extension_reply_t *reply = NULL;
        int r;

        r = wait_reply(c, xcb_query_extension(c->xcb, strlen("XWAYLAND"), "XWAYLAND").sequence, deadline_ns,
                       (void **) &reply);
        if (r < 0)
                return r;
        *ret = reply->present;
        return 0;
}

/* Tells Present's fake timer from a display's vblank: Xwayland says what it is (the extension,
 * or outputs named XWAYLAND<n>), Xvfb's modes have no timing, and a fake's counter is
 * CLOCK_MONOTONIC in fake intervals (one PresentNotifyMSC for the current msc says where it
 * stands). domains/present-vblank.c goes on testing the last against every event. */
static int detect_emulated(PresentConn *c, int64_t deadline_ns) {
        bool xwayland = false;
        int r;

        c->emulated = false;
        c->emulated_reason[0] = '\0';
        r = has_xwayland_extension(c, deadline_ns, &xwayland);
        if (r < 0 && r != -EIO)
                return r;
        if (xwayland || strstr(c->crtc_name, " XWAYLAND")) {
                snprintf(c->emulated_reason, sizeof(c->emulated_reason), "the X server is Xwayland (%s): its Present "
                         "runs on a timer for a window it does not show", xwayland ? "XWAYLAND extension" :
                                                                                   "XWAYLAND outputs");
                c->emulated = true;
                return 0;
        }
        if (c->mode_interval_ns <= 0) {
                snprintf(c->emulated_reason, sizeof(c->emulated_reason), "the CRTC's mode has no timing (Xvfb): "
                         "Present runs on a timer");
                c->emulated = true;
                return 0;
        }
        r = present_conn_notify(c, 0, 0);
        while (r >= 0) {
                PresentEvent e;
                uint32_t serial;

                r = present_conn_read(c, &serial, &e);
                if (r == 0)
                        r = present_conn_wait(c, deadline_ns);
                else if (r > 0 && serial == 0) {
                        if (present_fake_grid_fits(e.ust_us, e.msc)) {
                                snprintf(c->emulated_reason, sizeof(c->emulated_reason), "msc follows "
                                         "CLOCK_MONOTONIC in %u us steps, not the mode's %.3f Hz: Present runs on "
                                         "a timer", PRESENT_FAKE_INTERVAL_US, 1e9 / c->mode_interval_ns);
                                c->emulated = true;
                        }
                        return 0;
                }
        }
        return r;
}

/* On a connection xcb_connect() made; takes xcb in every case. */
static int setup(PresentConn *c, xcb_connection_t *xcb, int screen, int64_t deadline_ns) {
        uint32_t values[] = { 1 };
        xcb_screen_iterator_t it;
        int r;

        *c = (PresentConn) { .xcb = xcb };
        for (it = xcb_setup_roots_iterator(xcb_get_setup(xcb)); it.rem > 0 && screen > 0; xcb_screen_next(&it))
                screen--;
        if (it.rem == 0) {
                present_conn_close(c);
                return -ENOTCONN;
        }

        r = check_extensions(c, deadline_ns);
        if (r >= 0)
                r = find_crtc(c, it.data->root, deadline_ns);
        if (r < 0) {
                present_conn_close(c);
                return r == -EIO ? -ENOTCONN : r;
        }

        /* Never mapped, override-redirect: invisible to the user and to a window manager; at
         * the origin, so that Present times it by the CRTC found above. */
        c->window = xcb_generate_id(xcb);
        c->eid = xcb_generate_id(xcb);
        xcb_create_window(xcb, XCB_COPY_FROM_PARENT, c->window, it.data->root, 0, 0, 1, 1, 0,
                          XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT, XCB_CW_OVERRIDE_REDIRECT, values);
        xcb_present_select_input(xcb, c->eid, c->window, XCB_PRESENT_EVENT_MASK_COMPLETE_NOTIFY);
        if (xcb_flush(xcb) <= 0) {
                present_conn_close(c);
                return -ENOTCONN;
        }
        r = detect_emulated(c, deadline_ns);
        if (r < 0) {
                present_conn_close(c);
                return r == -EIO ? -ENOTCONN : r;
        }
        return 0;
}

int present_conn_connect(PresentConn *c, const char *display, int64_t wait_until_ns, int64_t setup_budget_ns) {
        xcb_connection_t *xcb;
        int screen, r;

        if (c->xcb)
                return -EALREADY;
        if (!c->connecting) {
                r = x11_connect_start(display, &c->connecting);
                if (r < 0)
                        return r;
        } else
                wait_until_ns = 0;
        r = x11_connect_finish(c->connecting, wait_until_ns, &xcb, &screen);
        if (r == -EINPROGRESS)
                return r;
        c->connecting = NULL;
        if (r < 0)
                return r;
        return setup(c, xcb, screen, clock_now_ns(CLOCK_MONOTONIC) + setup_budget_ns);
}

void present_conn_close(PresentConn *c) {
        if (c->xcb)
                xcb_disconnect(c->xcb);
        /* A thread still waiting on a server that does not answer ends (and frees) on its own. */
        (void) x11_connect_abandon(c->connecting);
        *c = (PresentConn) {};
}

int present_conn_fd(const PresentConn *c) {
        return c->xcb ? xcb_get_file_descriptor(c->xcb) : -ENOTCONN;
}

int present_conn_notify(PresentConn *c, uint32_t serial, uint64_t target_msc) {
        if (!c->xcb)
                return -ENOTCONN;
        xcb_present_notify_msc(c->xcb, c->window, serial, target_msc, 0, 0);
        return xcb_flush(c->xcb) > 0 ? 0 : -ENOTCONN;
}

static bool is_our_notify(const PresentConn *c, const xcb_generic_event_t *ev) {
        const xcb_present_complete_notify_event_t *cn = (const xcb_present_complete_notify_event_t *) ev;

        return (ev->response_type & 0x7f) == XCB_GE_GENERIC && cn->extension == c->present_opcode &&
               cn->event_type == XCB_PRESENT_COMPLETE_NOTIFY && cn->kind == XCB_PRESENT_COMPLETE_KIND_NOTIFY_MSC &&
               cn->event == c->eid && cn->window == c->window;
}

int present_conn_read(PresentConn *c, uint32_t *ret_serial, PresentEvent *ret) {
        if (!c->xcb)
                return -ENOTCONN;
        for (;;) {
                /* Queued first: events read along with an earlier one never make the fd readable. */
                xcb_generic_event_t *ev = xcb_poll_for_queued_event(c->xcb);
                const xcb_present_complete_notify_event_t *cn;
                int64_t raw0_ns, mono_ns, raw1_ns;

                if (!ev)
                        ev = xcb_poll_for_event(c->xcb);
                if (!ev)
                        return xcb_connection_has_error(c->xcb) ? -ENOTCONN : 0;
                /* The bracket that relates CLOCK_MONOTONIC (the UST's clock) to the reference. */
                raw0_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
                mono_ns = clock_now_ns(CLOCK_MONOTONIC);
                raw1_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
                if (!is_our_notify(c, ev)) {
                        free(ev);
                        continue;
                }
                cn = (const xcb_present_complete_notify_event_t *) ev;
                *ret_serial = cn->serial;
                *ret = (PresentEvent) {
                        .ust_us = cn->ust,
                        .msc = cn->msc,
                        .raw0_ns = raw0_ns,
                        .mono_ns = mono_ns,
                        .raw1_ns = raw1_ns,
                };
                free(ev);
                return 1;
        }
}
