/* SPDX-License-Identifier: MIT */
#pragma once

/* The X server's clock (domains x11, x11_us): what domain_x11_ops takes as config. */

#include <stdbool.h>

#include "source-time.h"
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

/* What an X source (x11, present) keeps of its server besides the connection: the display it
 * uses and the one it follows, the wait between connection attempts, and why it cannot read. */
typedef struct X11Link {
        X11DisplaySeen display;         /* name NULL: none (following the session's, which has none) */
        X11Display *follow;             /* X11Config.follow, borrowed; NULL: display is fixed */
        Backoff backoff;                /* between connection attempts */
        char reason[X11_DISPLAY_REASON_MAX + 64];       /* why it cannot be read; "": it can */
} X11Link;

/* An X source's start: the fixed display, or none yet when following (the first
 * x11_link_follow() takes the session's), and no wait before the first attempt. -ENXIO when
 * there is neither: no X domains. */
int x11_link_init(X11Link *l, const X11Config *config);

/* Following the session: true when a new display (or none) replaced the old one; the caller
 * drops what it has of the old one, and the new one is tried at once. */
bool x11_link_follow(X11Link *l);

/* The server went away: why, and a wait before the next attempt. */
void x11_link_lost(X11Link *l);

/* Why the source cannot read now, NULL when it can (DomainStatus.unavailable_reason). */
const char *x11_link_reason(const X11Link *l);

void x11_link_done(X11Link *l);
