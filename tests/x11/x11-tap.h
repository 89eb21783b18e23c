/* SPDX-License-Identifier: MIT */
#pragma once

/* The opening of the tests of timeconvd on a real X server (a header: tap.h keeps its counters
 * per program). */

#include "harness-tap.h"
#include "tap.h"
#include "xvfb.h"

/* Xvfb on a free display (one TAP line), then timeconvd --display on it, a private bus and a
 * client connection (harness_tap_start()'s lines). 0 or the first error. */
static inline int x11_tap_start(const char *daemon_path, Xvfb *x, Harness **ret_h, sd_bus **ret_bus) {
        int r;

        tap_require_program("Xvfb", "xvfb");
        r = xvfb_start(-1, x);
        ok(r == 0, "Xvfb started (%s)", x->name);
        if (r < 0)
                return r;
        return harness_tap_start(daemon_path, (const char *const[]) { "--display", x->name, NULL }, ret_h, ret_bus);
}
