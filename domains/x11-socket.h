/* SPDX-License-Identifier: MIT */
#pragma once

/* The two halves of xcb_connect() that come before the X protocol, done by us so that neither
 * can hold the process: the socket of a display, opened with a deadline (xcb_connect() would
 * block in connect() for as long as the kernel lets it), and its authorization, looked up with
 * libXau under the process's one lock (XauFileName() keeps the file's name in a static buffer),
 * held for that lookup only, never while a server is waited for. What is left, the setup
 * exchange, is xcb_connect_to_fd()'s (xcb-connect.c). */

#include <stdint.h>
#include <xcb/xcb.h>

/* The display's socket (display NULL: $DISPLAY's), connected, as xcb_connect() finds it: for
 * ":N" (or "unix:N") the abstract socket "/tmp/.X11-unix/XN", else the file of that name; for
 * "host:N" (or "tcp/:N"), TCP to port 6000 + N. screen is the ".S" of the name (0 without). Blocking (xcb makes it non-blocking
 * itself), close-on-exec. -EINVAL for a name that is no display, -ETIMEDOUT when the server
 * does not take the connection by deadline_ns (CLOCK_MONOTONIC), -errno of connect(). */
int x11_socket_open(const char *display, int64_t deadline_ns, int *ret_fd, int *ret_display, int *ret_screen);

/* The authorization for display number `display` over the connected fd, as xcb_connect() would
 * send it: the best MIT-MAGIC-COOKIE-1 entry of the authority file ($XAUTHORITY, else
 * ~/.Xauthority) for the peer's address (this host's name for a local connection). 0 with
 * *ret (free it with x11_auth_done()), -ENOENT when the file has none (connect without). */
int x11_auth_lookup(int fd, int display, xcb_auth_info_t *ret);

void x11_auth_done(xcb_auth_info_t *auth);
