/* SPDX-License-Identifier: MIT */
#pragma once

/* The X server's clock (domains x11, x11_us): what domain_x11_ops takes as config. */

#include <stdbool.h>

#include "x11-display.h"

typedef struct X11Config {
        /* Fixed (--display). NULL: follow, when set, else $DISPLAY; neither: no X domains. */
        const char *display;
        /* The session's display, which may come, change and go while the domains live: they are
         * listed and opened without one (unavailable, with follow's reason) and take each new
         * one at their next burst. Borrowed: it must outlive the domains. */
        X11Display *follow;
        bool force_tracked;             /* never publish "identity" (benchmarks, tests) */
} X11Config;

/* The fixed display: --display, else $DISPLAY unless the domains follow the session's; NULL:
 * none (or config is NULL and $DISPLAY unset). */
const char *x11_config_display(const X11Config *config);

/* The session's display to follow, or NULL when the display is fixed (or there is neither). */
X11Display *x11_config_follow(const X11Config *config);

/* An X source's start (x11, present): seen gets the fixed display, or none yet when following
 * (*ret_follow: the display to follow, else NULL). -ENXIO when there is neither: no X domains. */
int x11_config_seen_init(const X11Config *config, X11DisplaySeen *seen, X11Display **ret_follow);
