/* SPDX-License-Identifier: MIT */
#pragma once

/* A desktop for the probe's tests: a private Xvfb (-displayfd, a screen a window fits on) and a
 * real compositing window manager, mutter 43 (X11 backend), ready when the root window names it
 * in _NET_SUPPORTING_WM_CHECK and lists _NET_WM_FRAME_DRAWN in _NET_SUPPORTED: read from
 * PropertyNotify events on the root window, never by sleeping. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "xvfb.h"

#define DESKTOP_READY_TIMEOUT_MS 60000

typedef struct Desktop {
        Xvfb xvfb;                      /* pid 0: not running */
        pid_t wm_pid;                   /* 0: not running */
        int wm_pidfd;
        char display[16];               /* ":N" */
        char dir[64];                   /* HOME and XDG_RUNTIME_DIR of the window manager */
        char wm_log[96];
        void *fake;                     /* the fake window manager's xcb connection */
        uint32_t fake_window;
} Desktop;

/* Starts Xvfb with a 640x480 screen; -ECHILD when it exits first, -ETIMEDOUT. */
int desktop_start_x(Desktop *d);

/* Starts `mutter --x11 --replace --sm-disable` on the display, on the session bus at
 * bus_address, and waits until it is ready (see above). -ECHILD when it exits first. */
int desktop_start_mutter(Desktop *d, const char *bus_address);

typedef enum DesktopFake {
        DESKTOP_FAKE_NONE,              /* removes the fake window manager's properties */
        DESKTOP_FAKE_NO_TIMING,         /* _NET_SUPPORTED without _NET_WM_FRAME_DRAWN */
        DESKTOP_FAKE_SILENT,            /* _NET_WM_FRAME_DRAWN listed, never sent */
} DesktopFake;

/* Sets (or with DESKTOP_FAKE_NONE, removes) the properties of a window manager that gives no
 * frame timing: a check window named fake-wm, _NET_SUPPORTED as fake says. */
int desktop_fake_wm(Desktop *d, DesktopFake fake);

/* SIGKILL to the window manager (mutter killed mid-run), reaped; its directory removed. */
int desktop_kill_wm(Desktop *d);

/* Ends the window manager and Xvfb, removes the directory. */
void desktop_stop(Desktop *d);
