/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <xcb/present.h>

#include "present-client.h"
#include "time-util.h"

int present_client_open(PresentClient *c, const char *display) {
        const xcb_query_extension_reply_t *ext;
        xcb_connection_t *xcb;
        xcb_screen_t *screen;
        uint32_t values[] = { 1 };

        xcb = xcb_connect(display, NULL);
        if (xcb_connection_has_error(xcb)) {
                xcb_disconnect(xcb);
                return -ENOTCONN;
        }
        ext = xcb_get_extension_data(xcb, &xcb_present_id);
        if (!ext || !ext->present) {
                xcb_disconnect(xcb);
                return -EOPNOTSUPP;
        }
        screen = xcb_setup_roots_iterator(xcb_get_setup(xcb)).data;
        *c = (PresentClient) { .xcb = xcb, .opcode = ext->major_opcode };
        c->window = xcb_generate_id(xcb);
        c->eid = xcb_generate_id(xcb);
        xcb_create_window(xcb, XCB_COPY_FROM_PARENT, c->window, screen->root, 0, 0, 1, 1, 0,
                          XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT, XCB_CW_OVERRIDE_REDIRECT, values);
        xcb_present_select_input(xcb, c->eid, c->window, XCB_PRESENT_EVENT_MASK_COMPLETE_NOTIFY);
        xcb_flush(xcb);
        return 0;
}

void present_client_close(PresentClient *c) {
        if (c->xcb)
                xcb_disconnect(c->xcb);
        *c = (PresentClient) {};
}

int present_client_notify(PresentClient *c, uint64_t target_msc, int timeout_ms, uint64_t *ret_ust_us,
                          uint64_t *ret_msc) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        uint32_t serial = ++c->serial;

        xcb_present_notify_msc(c->xcb, c->window, serial, target_msc, 0, 0);
        xcb_flush(c->xcb);
        for (;;) {
                xcb_generic_event_t *ev = xcb_poll_for_event(c->xcb);
                const xcb_present_complete_notify_event_t *cn = (const void *) ev;
                struct pollfd pfd = { .fd = xcb_get_file_descriptor(c->xcb), .events = POLLIN };
                int64_t left_ns;

                if (ev && (ev->response_type & 0x7f) == XCB_GE_GENERIC && cn->extension == c->opcode &&
                    cn->event_type == XCB_PRESENT_COMPLETE_NOTIFY && cn->serial == serial) {
                        *ret_ust_us = cn->ust;
                        *ret_msc = cn->msc;
                        free(ev);
                        return 0;
                }
                if (ev) {
                        free(ev);
                        continue;
                }
                if (xcb_connection_has_error(c->xcb))
                        return -ENOTCONN;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0 || poll(&pfd, 1, (int) (left_ns / 1000000) + 1) == 0)
                        return -ETIMEDOUT;
        }
}

int present_client_predict(const Model *m, const DomainUnit *unit, int64_t lag_ns, uint64_t msc,
                           int64_t *ret_mono_ns, int64_t *ret_bound_ns) {
        int64_t x_ns, r_ns, unc_ns, raw0, mono, raw1;
        int r;

        r = unit_to_ns(unit, (int64_t) msc, &x_ns);
        /* A timer's vblank is reported 0..lag after the time the model follows, as the graph says. */
        if (r >= 0)
                r = model_inverse(m, x_ns + lag_ns / 2, lag_ns - lag_ns / 2, &r_ns, &unc_ns);
        if (r < 0)
                return r;
        raw0 = clock_now_ns(CLOCK_MONOTONIC_RAW);
        mono = clock_now_ns(CLOCK_MONOTONIC);
        raw1 = clock_now_ns(CLOCK_MONOTONIC_RAW);
        /* mono - raw is in [mono - raw1, mono - raw0] now, and drifts by at most 500 ppm. */
        *ret_mono_ns = r_ns + mono - (raw0 + raw1) / 2;
        *ret_bound_ns = unc_ns + (raw1 - raw0 + 1) / 2 + 1 + (int64_t) ceil(fabs((double) (r_ns - raw0)) * 500e-6);
        return 0;
}
