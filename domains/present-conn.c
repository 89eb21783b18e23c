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
        c->randr_event_base = randr->first_event;

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

/* The output's name, and whether it says it can vary its refresh (the kernel's vrr_capable
 * connector property, which Xorg's modesetting and amdgpu drivers show). */
static int read_output(PresentConn *c, xcb_randr_output_t output, xcb_timestamp_t config, int64_t deadline_ns,
                       PresentCrtc *crtc) {
        _cleanup_free_ xcb_randr_get_output_info_reply_t *info = NULL;
        _cleanup_free_ xcb_randr_get_output_property_reply_t *vrr = NULL;
        _cleanup_free_ xcb_intern_atom_reply_t *atom = NULL;
        xcb_intern_atom_cookie_t ac;
        int r;

        ac = xcb_intern_atom(c->xcb, 1, strlen("vrr_capable"), "vrr_capable");
        r = wait_reply(c, xcb_randr_get_output_info(c->xcb, output, config).sequence, deadline_ns, (void **) &info);
        if (r < 0)
                return r;
        snprintf(crtc->output, sizeof(crtc->output), "%.*s", xcb_randr_get_output_info_name_length(info),
                 (const char *) xcb_randr_get_output_info_name(info));
        r = wait_reply(c, ac.sequence, deadline_ns, (void **) &atom);
        if (r < 0)
                return r == -EIO ? 0 : r;
        if (atom->atom == XCB_NONE)
                return 0;
        r = wait_reply(c, xcb_randr_get_output_property(c->xcb, output, atom->atom, XCB_ATOM_ANY, 0, 1, 0, 0).sequence,
                       deadline_ns, (void **) &vrr);
        if (r < 0)
                return r == -EIO ? 0 : r;
        crtc->variable_refresh = vrr->format == 32 && xcb_randr_get_output_property_data_length(vrr) >= 4 &&
                                 *(const uint32_t *) xcb_randr_get_output_property_data(vrr) != 0;
        return 0;
}

int present_conn_crtcs(PresentConn *c, int64_t deadline_ns) {
        _cleanup_free_ xcb_randr_get_screen_resources_current_reply_t *res = NULL;
        const xcb_randr_mode_info_t *modes;
        const xcb_randr_crtc_t *crtcs;
        size_t n = 0;
        int r;

        if (!c->xcb)
                return -ENOTCONN;
        c->randr_changed = false;
        r = wait_reply(c, xcb_randr_get_screen_resources_current(c->xcb, c->root).sequence, deadline_ns,
                       (void **) &res);
        if (r < 0)
                return r;
        crtcs = xcb_randr_get_screen_resources_current_crtcs(res);
        modes = xcb_randr_get_screen_resources_current_modes(res);

        for (int i = 0; i < xcb_randr_get_screen_resources_current_crtcs_length(res) && n < PRESENT_CRTCS_MAX; i++) {
                _cleanup_free_ xcb_randr_get_crtc_info_reply_t *info = NULL;
                PresentCrtc *crtc = &c->crtcs[n];

                r = wait_reply(c, xcb_randr_get_crtc_info(c->xcb, crtcs[i], res->config_timestamp).sequence,
                               deadline_ns, (void **) &info);
                if (r == -EIO)
                        continue;       /* gone since the resources were read */
                if (r < 0)
                        return r;
                if (info->mode == XCB_NONE)
                        continue;
                *crtc = (PresentCrtc) {
                        .crtc = crtcs[i],
                        .x = info->x,
                        .y = info->y,
                        .width = info->width,
                        .height = info->height,
                };
                snprintf(crtc->output, sizeof(crtc->output), "crtc-%u", crtcs[i]);
                for (int k = 0; k < xcb_randr_get_screen_resources_current_modes_length(res); k++)
                        if (modes[k].id == info->mode &&
                            present_mode_interval_ns(modes[k].dot_clock, modes[k].htotal, modes[k].vtotal,
                                                     modes[k].mode_flags, &crtc->mode_interval_ns) < 0)
                                crtc->mode_interval_ns = 0;
                if (info->num_outputs > 0) {
                        r = read_output(c, xcb_randr_get_crtc_info_outputs(info)[0], res->config_timestamp,
                                        deadline_ns, crtc);
                        if (r < 0 && r != -EIO)
                                return r;
                }
                n++;
        }
        c->n_crtcs = n;
        return 0;
}

void present_output_key(const char *output, char *ret, size_t size) {
        size_t i;

        for (i = 0; output[i] && i + 1 < size; i++) {
                char ch = output[i];

                if (ch >= 'A' && ch <= 'Z')
                        ch = (char) (ch - 'A' + 'a');
                else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
                           ch == ':' || ch == '-'))
                        ch = '_';
                ret[i] = ch;
        }
        if (size > 0)
                ret[i] = '\0';
}

const PresentCrtc *present_conn_find(const PresentConn *c, const char *output) {
        const PresentCrtc *chosen = NULL;

        for (size_t i = 0; i < c->n_crtcs; i++) {
                const PresentCrtc *crtc = &c->crtcs[i];

                if (output[0]) {
                        char key[PRESENT_OUTPUT_NAME_MAX];

                        present_output_key(crtc->output, key, sizeof(key));
                        if (strcmp(key, output) == 0)
                                return crtc;
                        continue;
                }
                if (crtc->x <= 0 && crtc->y <= 0 && crtc->x + crtc->width > 0 && crtc->y + crtc->height > 0)
                        return crtc;
                if (!chosen)
                        chosen = crtc;
        }
        return chosen;
}

/* The CRTC of c->output and its mode's interval. */
static int find_crtc(PresentConn *c, int64_t deadline_ns) {
        const PresentCrtc *crtc;
        int r;

        r = present_conn_crtcs(c, deadline_ns);
        if (r < 0)
                return r;
        crtc = present_conn_find(c, c->output);
        if (!crtc)
                return -ENODEV;
        c->crtc = crtc->crtc;
        c->mode_interval_ns = crtc->mode_interval_ns;
        c->variable_refresh = crtc->variable_refresh;
        snprintf(c->crtc_name, sizeof(c->crtc_name), "crtc-%u %s", crtc->crtc, crtc->output);
        return 0;
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

        char output[PRESENT_OUTPUT_NAME_MAX];
        const PresentCrtc *crtc;

        /* memset, not a compound literal: no copy of the whole struct on a burst thread's stack. */
        memcpy(output, c->output, sizeof(output));
        memset(c, 0, sizeof(*c));
        c->xcb = xcb;
        memcpy(c->output, output, sizeof(output));
        for (it = xcb_setup_roots_iterator(xcb_get_setup(xcb)); it.rem > 0 && screen > 0; xcb_screen_next(&it))
                screen--;
        if (it.rem == 0) {
                present_conn_close(c);
                return -ENOTCONN;
        }
        c->root = it.data->root;

        r = check_extensions(c, deadline_ns);
        if (r >= 0)
                r = find_crtc(c, deadline_ns);
        if (r < 0) {
                present_conn_close(c);
                return r == -EIO ? -ENOTCONN : r;
        }

        /* Never mapped, override-redirect: invisible to the user and to a window manager; on
         * the CRTC found above, so that Present times it by that CRTC. RandR's notifies say when
         * the screen's CRTCs change. */
        crtc = present_conn_find(c, c->output);
        c->window = xcb_generate_id(xcb);
        c->eid = xcb_generate_id(xcb);
        xcb_randr_select_input(xcb, c->root, XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE | XCB_RANDR_NOTIFY_MASK_CRTC_CHANGE |
                                                     XCB_RANDR_NOTIFY_MASK_OUTPUT_CHANGE);
        xcb_create_window(xcb, XCB_COPY_FROM_PARENT, c->window, it.data->root, crtc ? crtc->x : 0, crtc ? crtc->y : 0,
                          1, 1, 0,
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
        char output[PRESENT_OUTPUT_NAME_MAX];

        if (c->xcb)
                xcb_disconnect(c->xcb);
        /* A thread still waiting on a server that does not answer ends (and frees) on its own. */
        (void) x11_connect_abandon(c->connecting);
        memcpy(output, c->output, sizeof(output));
        memset(c, 0, sizeof(*c));
        memcpy(c->output, output, sizeof(output));
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
                if ((ev->response_type & 0x7f) == c->randr_event_base + XCB_RANDR_SCREEN_CHANGE_NOTIFY ||
                    (ev->response_type & 0x7f) == c->randr_event_base + XCB_RANDR_NOTIFY)
                        c->randr_changed = true;
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
