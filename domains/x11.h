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
