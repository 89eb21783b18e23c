/* SPDX-License-Identifier: MIT */
#pragma once

/* The TAP side of the harness: the opening the tests of the real daemon share, said once.
 * tap.h keeps its counters per program, so this is a header too. */

#include "harness.h"
#include "tap.h"

/* A private dbus-daemon (one TAP line), the daemon on it with args (NULL: the POSIX clocks only,
 * as harness_start_timeconvd() runs it; one TAP line) and, when ret_bus is not NULL, a client
 * connection. Returns 0 or the first error; *ret_h and *ret_bus are set as far as it got, so
 * that the caller's cleanup ends what started. */
static inline int harness_tap_start(const char *daemon_path, const char *const *args, Harness **ret_h,
                                    sd_bus **ret_bus) {
        int r;

        r = harness_new(NULL, ret_h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return r;
        r = args ? harness_start_daemon(*ret_h, daemon_path, args, HARNESS_READY_TIMEOUT_MS) :
                   harness_start_timeconvd(*ret_h, daemon_path, NULL);
        is_int(r, 0, "timeconvd starts and says READY=1");
        if (r >= 0 && ret_bus)
                r = harness_connect(*ret_h, ret_bus);
        return r;
}
