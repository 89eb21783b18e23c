/* SPDX-License-Identifier: MIT */
#pragma once

/* The TAP side of the harness: the opening the tests of the real daemon share, and the check of
 * a call that must fail, said once. */

#include <systemd/sd-bus.h>

#include "harness.h"
#include "tap.h"

/* A private dbus-daemon (one TAP line), the daemon on it with args (NULL: the POSIX clocks only,
 * as harness_start_timeconvd() runs it; one TAP line) and, when ret_bus is not NULL, a client
 * connection. Returns 0 or the first error; *ret_h and *ret_bus are set as far as it got, so
 * that the caller's cleanup ends what started. */
int harness_tap_start(const char *daemon_path, const char *const *args, Harness **ret_h, sd_bus **ret_bus);

/* One TAP line: the call failed with r == -errno_want and the error name, its message holding
 * substr (NULL: any message); what came otherwise as a diagnostic. Frees e, so that the next
 * call may reuse it. */
void check_error(const char *what, int r, sd_bus_error *e, const char *name, int errno_want, const char *substr);

/* The same for a call that failed (any r < 0) with the error name and exactly message: where
 * the message's whole wording is what is tested (which argument it blames, say). */
void check_error_message(const char *what, int r, sd_bus_error *e, const char *name, const char *message);
