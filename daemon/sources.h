/* SPDX-License-Identifier: MIT */
#pragma once

/* Which clock sources the daemon opens at start-up, and with what configuration. */

#include "core.h"
#include "log.h"
#include "options.h"
#include "x11-display.h"

/* Adds to core every domain of every enabled source. A source or domain that fails is logged
 * and left out; returns the number of domains added (the hub included), or -errno when not even
 * the POSIX clocks could be listed. x11_display (NULL with --display or --no-x11) is the session's
 * display the X sources follow; it must outlive the core's domains. */
int sources_open(Core *core, const Options *options, X11Display *x11_display, const Log *log);
