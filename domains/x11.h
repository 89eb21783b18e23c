/* SPDX-License-Identifier: MIT */
#pragma once

/* The X server's clock (domains x11, x11_us): what domain_x11_ops takes as config. */

#include <stdbool.h>

typedef struct X11Config {
        const char *display;            /* NULL: $DISPLAY; no display at all: no X domains */
        bool force_tracked;             /* never publish "identity" (benchmarks, tests) */
} X11Config;
