/* SPDX-License-Identifier: MIT */
#pragma once

/* The X display the x11 and present sources follow when it is not fixed (--display): the
 * daemon learns it from the session (the user manager's environment) and may change it at any
 * time, while the sources read it from their burst threads. So it is one small object behind a
 * mutex, with a generation that changes with the name, and an eventfd through which a source
 * asks the daemon to look again (it has no display, or cannot reach the one it has). The daemon
 * owns it and frees it after every source that uses it is closed. */

#include <stddef.h>
#include <stdint.h>

typedef struct X11Display X11Display;

#define X11_DISPLAY_REASON_MAX 160

/* No display, with why_none as the reason ("no X display: ..."). */
int x11_display_new(const char *why_none, X11Display **ret);
X11Display *x11_display_free(X11Display *d);

static inline void x11_display_freep(X11Display **d) {
        x11_display_free(*d);
}

/* Sets the display: name NULL or "" means none, for the reason why_none. Returns 1 when the
 * display changed (the generation moved on), 0 when it was already so. */
int x11_display_set(X11Display *d, const char *name, const char *why_none);

/* Copies the display into ret (size bytes) and its generation into *ret_generation (may be
 * NULL). -ENXIO when there is none: ret then holds the reason. -ENOBUFS when it does not fit. */
int x11_display_get(X11Display *d, char *ret, size_t size, uint64_t *ret_generation);

/* A source's view of the display it follows: the name it uses (NULL: none) and its generation. */
typedef struct X11DisplaySeen {
        char *name;
        uint64_t generation;
} X11DisplaySeen;

/* A source's start: the display it was given (strdup'ed), or, with display NULL, none yet: the
 * first x11_display_follow() takes the session's. -ENOMEM. */
int x11_display_seen_init(X11DisplaySeen *seen, const char *display);

/* Brings seen up to date with d. 1 when the display changed (or went): the caller drops its
 * connection and tries the new one at once; 0 when it did not. Either way, with no display,
 * reason (size bytes) says why, at every call. -EINVAL (seen and reason untouched) without d or
 * seen. */
int x11_display_follow(X11Display *d, X11DisplaySeen *seen, char *reason, size_t size);

/* From a source: "look for the display again". Never blocks; wakes x11_display_want_fd(). */
void x11_display_want(X11Display *d);

/* An eventfd (EFD_NONBLOCK), readable after x11_display_want(); the reader drains it. */
int x11_display_want_fd(const X11Display *d);
