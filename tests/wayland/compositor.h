/* SPDX-License-Identifier: MIT */
#pragma once

/* A Wayland compositor for the tests: weston's headless backend or mutter 43 --headless, in a
 * directory of its own that is its HOME and XDG_RUNTIME_DIR (mode 0700), on the test's private
 * session bus. Ready when its socket accepts a connection: the socket's creation is waited for
 * with inotify (and the compositor's exit with its pidfd), never by sleeping. */

#include <stdbool.h>
#include <sys/types.h>

#define COMPOSITOR_READY_TIMEOUT_MS 60000

typedef struct Compositor {
        pid_t pid;                      /* 0: not running */
        int pidfd;
        char dir[64];                   /* HOME and XDG_RUNTIME_DIR */
        char socket[32];                /* WAYLAND_DISPLAY */
        char log[96];
        char env_runtime[96];           /* "XDG_RUNTIME_DIR=dir", "WAYLAND_DISPLAY=socket" for clients */
        char env_display[64];
} Compositor;

/* weston --backend=headless-backend.so with a weston.ini of the directory (repaint-window=16:
 * without it the headless output presents at about 40 Hz); one 60 Hz output, "headless". */
int compositor_start_weston(Compositor *c, const char *bus_address);

/* mutter --wayland --headless --no-x11 with two virtual monitors, 800x600 at 60 Hz (Meta-0) and
 * 800x600@144 (Meta-1). */
int compositor_start_mutter(Compositor *c, const char *bus_address);

/* mutter --wayland --headless with Xwayland on demand: started by `sh -c` that first moves itself
 * into the cgroup whose cgroup.procs is given (one that looks like a systemd user unit, which
 * is what makes mutter 43 start Xwayland only when an X client connects). One 800x600 monitor. */
int compositor_start_mutter_xwayland(Compositor *c, const char *bus_address, const char *cgroup_procs);

/* Ends it, removes the directory. Shows its log on stderr when show_log. */
void compositor_stop(Compositor *c, bool show_log);
