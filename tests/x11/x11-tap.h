/* SPDX-License-Identifier: MIT */
#pragma once

/* The opening of the tests of timeconvd on a real X server. */

#include "harness-tap.h"
#include "tap.h"
#include "xvfb.h"

/* Xvfb on a free display (one TAP line), then timeconvd --display on it, a private bus and a
 * client connection (harness_tap_start()'s lines). 0 or the first error. */
int x11_tap_start(const char *daemon_path, Xvfb *x, Harness **ret_h, sd_bus **ret_bus);
