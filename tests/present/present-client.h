/* SPDX-License-Identifier: MIT */
#pragma once

/* What the msc tests and bench-msc do as a Present client of their own (the truth they compare
 * the domain with), and the model's prediction of a vblank on CLOCK_MONOTONIC. */

#include <stdint.h>
#include <xcb/xcb.h>

#include "model.h"
#include "units.h"

typedef struct PresentClient {
        xcb_connection_t *xcb;
        xcb_window_t window;
        uint32_t eid;
        uint8_t opcode;
        uint32_t serial;
} PresentClient;

/* -ENOTCONN, -EOPNOTSUPP without Present. */
int present_client_open(PresentClient *c, const char *display);
void present_client_close(PresentClient *c);

/* PresentNotifyMSC(target_msc) (0: now) and its PresentCompleteNotify within timeout_ms: the
 * UST in µs of CLOCK_MONOTONIC and the msc the server reports. -ETIMEDOUT. */
int present_client_notify(PresentClient *c, uint64_t target_msc, int timeout_ms, uint64_t *ret_ust_us,
                          uint64_t *ret_msc);

/* When the model m of a domain in unit, lagging by 0..lag_ns (DomainInfo.lag_ns), says vblank
 * msc is, on CLOCK_MONOTONIC: the reference time from the model, moved by a bracketed offset
 * (CLOCK_MONOTONIC_RAW around CLOCK_MONOTONIC) taken now, widened by that bracket and 500 ppm of
 * slew to the instant. */
int present_client_predict(const Model *m, const DomainUnit *unit, int64_t lag_ns, uint64_t msc,
                           int64_t *ret_mono_ns, int64_t *ret_bound_ns);
