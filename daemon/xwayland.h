/* SPDX-License-Identifier: MIT */
#pragma once

/* Never start Xwayland. A Wayland compositor (GNOME's mutter, KDE's KWin) listens on the X
 * socket itself and starts Xwayland when the first X client connects: a timeconvd that simply
 * connected to DISPLAY would start it (tens of MB) in every session. So on a Wayland session
 * the X sources are given the display only while an Xwayland process serves it: one whose name
 * (comm) is "Xwayland" with ":N" among its arguments, as mutter and KWin start it. Its exit is
 * followed by a pidfd, so that the display is withdrawn before a source reconnects (which
 * would start it again). Without a Wayland session, nothing changes. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A Wayland session: WAYLAND_DISPLAY set, or XDG_SESSION_TYPE=wayland (either may be NULL). */
bool xwayland_session_is_wayland(const char *wayland_display, const char *session_type);

/* The display number of an X display name (":0", ":1.0", "unix:2"); -EINVAL for a name that
 * has none, or that names another host (not this machine's Xwayland). */
int xwayland_display_number(const char *display, unsigned *ret);

/* An Xwayland process serving display number n, among the processes of proc ("/proc"): its
 * pid, or -ESRCH when there is none. A process that exited (a zombie) has no arguments left,
 * so it is not one. */
int xwayland_find(const char *proc, unsigned display_number, pid_t *ret_pid);

/* Why there is no display for the X sources: written to reason (size bytes). */
void xwayland_reason(const char *display, char *reason, size_t size);

typedef struct X11Display X11Display;

/* The X sources' display becomes name, unless wayland, name is this machine's, and no Xwayland
 * serves it: then none,
 * with xwayland_reason() (no name: SESSION_ENV_NO_DISPLAY's reason, no_display). *ret_pid gets
 * the Xwayland found, 0 when none was looked for or found. x11_display_set()'s 1 (changed) or
 * 0, or -errno. */
int xwayland_display_set(X11Display *x, const char *name, bool wayland, const char *no_display, pid_t *ret_pid);
