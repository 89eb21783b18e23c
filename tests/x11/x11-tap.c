/* SPDX-License-Identifier: MIT */

#include "x11-tap.h"

int x11_tap_start(const char *daemon_path, Xvfb *x, Harness **ret_h, sd_bus **ret_bus) {
        int r;

        tap_require_program("Xvfb", "xvfb");
        r = xvfb_start(-1, x);
        ok(r == 0, "Xvfb started (%s)", x->name);
        if (r < 0)
                return r;
        return harness_tap_start(daemon_path, (const char *const[]) { "--display", x->name, NULL }, ret_h, ret_bus);
}
