/* SPDX-License-Identifier: MIT */
#pragma once

/* The TAP checks the application-clock tests share (a header: tap.h keeps its counters per
 * program). */

#include <stdbool.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "tap.h"

/* One line: r is -errno_want and e the named error, its message holding substr (NULL: any);
 * what it was otherwise. Frees e, so that the next call may reuse it. */
static inline void check_error(const char *what, int r, sd_bus_error *e, const char *name, int errno_want,
                               const char *substr) {
        bool good = r == -errno_want && sd_bus_error_has_name(e, name) &&
                    (!substr || (e->message && strstr(e->message, substr)));

        ok(good, "%s: %s", what, name);
        if (!good)
                diag("got r=%d %s: %s", r, e->name ? e->name : "(none)", e->message ? e->message : "(none)");
        sd_bus_error_free(e);
}
