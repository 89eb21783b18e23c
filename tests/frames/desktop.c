/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include "desktop.h"
#include "harness-proc.h"
#include "time-util.h"

int desktop_start_x(Desktop *d) {
        int r;

        *d = (Desktop) { .wm_pidfd = -1 };
        r = xvfb_start_screen(-1, "640x480x24", &d->xvfb);
        if (r < 0)
                return r;
        snprintf(d->display, sizeof(d->display), "%s", d->xvfb.name);
        return 0;
}

static xcb_atom_t intern(xcb_connection_t *c, const char *name) {
        xcb_intern_atom_reply_t *reply = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, strlen(name), name), NULL);
        xcb_atom_t atom = reply ? reply->atom : XCB_ATOM_NONE;

        free(reply);
        return atom;
}

static uint32_t property32(xcb_connection_t *c, xcb_window_t w, xcb_atom_t property, uint32_t *values, int max) {
        xcb_get_property_reply_t *reply =
                xcb_get_property_reply(c, xcb_get_property(c, 0, w, property, XCB_ATOM_ANY, 0, 4096), NULL);
        int n = 0;

        if (reply && reply->format == 32) {
                n = xcb_get_property_value_length(reply) / 4;
                n = n < max ? n : max;
                memcpy(values, xcb_get_property_value(reply), (size_t) n * 4);
        }
        free(reply);
        return (uint32_t) n;
}

/* The window manager is there: a valid check window, and _NET_WM_FRAME_DRAWN supported. */
static bool wm_ready(xcb_connection_t *c, xcb_window_t root, xcb_atom_t check, xcb_atom_t supported,
                     xcb_atom_t frame_drawn) {
        uint32_t w = 0, self = 0, atoms[512];
        uint32_t n;

        if (property32(c, root, check, &w, 1) != 1 || property32(c, w, check, &self, 1) != 1 || self != w)
                return false;
        n = property32(c, root, supported, atoms, 512);
        for (uint32_t i = 0; i < n; i++)
                if (atoms[i] == frame_drawn)
                        return true;
        return false;
}

static int wait_ready(Desktop *d) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) DESKTOP_READY_TIMEOUT_MS * 1000000;
        xcb_connection_t *c = xcb_connect(d->display, NULL);
        xcb_atom_t check, supported, frame_drawn;
        xcb_window_t root;
        int r = -ETIMEDOUT;

        if (xcb_connection_has_error(c)) {
                xcb_disconnect(c);
                return -ENOTCONN;
        }
        root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
        check = intern(c, "_NET_SUPPORTING_WM_CHECK");
        supported = intern(c, "_NET_SUPPORTED");
        frame_drawn = intern(c, "_NET_WM_FRAME_DRAWN");
        /* Events first, then the check: a change between the two is not missed. */
        xcb_change_window_attributes(c, root, XCB_CW_EVENT_MASK, (uint32_t[]) { XCB_EVENT_MASK_PROPERTY_CHANGE });
        xcb_flush(c);
        for (;;) {
                struct pollfd pfd[2] = { { .fd = xcb_get_file_descriptor(c), .events = POLLIN },
                                         { .fd = d->wm_pidfd, .events = POLLIN } };
                xcb_generic_event_t *ev;

                if (wm_ready(c, root, check, supported, frame_drawn)) {
                        r = 0;
                        break;
                }
                if (xcb_connection_has_error(c)) {
                        r = -ECONNRESET;
                        break;
                }
                if (poll(pfd, 2, proc_ms_left(deadline_ns)) == 0)
                        break;
                if (pfd[1].revents) {
                        r = -ECHILD;
                        break;
                }
                /* Whatever arrived: drained and the properties read again above. */
                while ((ev = xcb_poll_for_event(c)))
                        free(ev);
        }
        xcb_disconnect(c);
        return r;
}

int desktop_start_mutter(Desktop *d, const char *bus_address) {
        const char *argv[] = { "mutter", "--x11", "--replace", "--sm-disable", NULL };
        const char *unset[] = { "WAYLAND_DISPLAY", "SESSION_MANAGER", NULL };
        char display[32], bus[512], home[96], runtime[96];
        const char *env[] = { display, bus, home, runtime, "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1", NULL };
        int log_fd, r;
        ProcSpawn s;

        snprintf(d->dir, sizeof(d->dir), "/tmp/test-desktop-XXXXXX");
        if (!mkdtemp(d->dir))
                return -errno;
        snprintf(d->wm_log, sizeof(d->wm_log), "%s/mutter.log", d->dir);
        snprintf(display, sizeof(display), "DISPLAY=%s", d->display);
        snprintf(bus, sizeof(bus), "DBUS_SESSION_BUS_ADDRESS=%s", bus_address);
        /* Its own HOME and XDG_RUNTIME_DIR (0700, as the runtime dir must be): nothing of the
         * machine's session, and nothing left behind. */
        snprintf(home, sizeof(home), "HOME=%s", d->dir);
        snprintf(runtime, sizeof(runtime), "XDG_RUNTIME_DIR=%s", d->dir);
        log_fd = open(d->wm_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (log_fd < 0)
                return -errno;
        s = (ProcSpawn) { .argv = argv, .env_set = env, .env_unset = unset, .stdout_fd = log_fd, .stderr_fd = log_fd,
                          .fd3 = -1 };
        r = proc_spawn(&s, &d->wm_pid, &d->wm_pidfd);
        close(log_fd);
        if (r < 0)
                return r;
        return wait_ready(d);
}

int desktop_fake_wm(Desktop *d, DesktopFake fake) {
        xcb_connection_t *c = d->fake;
        xcb_atom_t check, supported, name, utf8, frame_drawn;
        xcb_window_t root;

        if (fake == DESKTOP_FAKE_NONE) {
                if (c) {
                        root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
                        xcb_delete_property(c, root, intern(c, "_NET_SUPPORTING_WM_CHECK"));
                        xcb_delete_property(c, root, intern(c, "_NET_SUPPORTED"));
                        xcb_destroy_window(c, d->fake_window);
                        /* A round trip: gone before the next client looks. */
                        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
                        xcb_disconnect(c);
                }
                d->fake = NULL;
                return 0;
        }
        c = xcb_connect(d->display, NULL);
        if (xcb_connection_has_error(c)) {
                xcb_disconnect(c);
                return -ENOTCONN;
        }
        root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
        check = intern(c, "_NET_SUPPORTING_WM_CHECK");
        supported = intern(c, "_NET_SUPPORTED");
        name = intern(c, "_NET_WM_NAME");
        utf8 = intern(c, "UTF8_STRING");
        frame_drawn = intern(c, "_NET_WM_FRAME_DRAWN");
        d->fake_window = xcb_generate_id(c);
        xcb_create_window(c, 0, d->fake_window, root, -1, -1, 1, 1, 0, XCB_WINDOW_CLASS_INPUT_ONLY,
                          XCB_COPY_FROM_PARENT, 0, NULL);
        xcb_change_property(c, XCB_PROP_MODE_REPLACE, d->fake_window, check, XCB_ATOM_WINDOW, 32, 1, &d->fake_window);
        xcb_change_property(c, XCB_PROP_MODE_REPLACE, d->fake_window, name, utf8, 8, 7, "fake-wm");
        xcb_change_property(c, XCB_PROP_MODE_REPLACE, root, check, XCB_ATOM_WINDOW, 32, 1, &d->fake_window);
        xcb_change_property(c, XCB_PROP_MODE_REPLACE, root, supported, XCB_ATOM_ATOM, 32,
                            fake == DESKTOP_FAKE_SILENT ? 3 : 2, (xcb_atom_t[]) { check, name, frame_drawn });
        /* A round trip: the properties are there for the next client. */
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
        d->fake = c;
        return 0;
}

static void end(pid_t *pid, int *pidfd) {
        if (*pid == 0)
                return;
        proc_signal(*pidfd, SIGTERM);
        if (proc_wait(*pidfd, *pid, true, 10000, NULL) == -ETIMEDOUT) {
                proc_signal(*pidfd, SIGKILL);
                proc_wait(*pidfd, *pid, true, 5000, NULL);
        }
        close(*pidfd);
        *pid = 0;
        *pidfd = -1;
}

int desktop_kill_wm(Desktop *d) {
        int r;

        if (d->wm_pid == 0)
                return -ESRCH;
        r = proc_signal(d->wm_pidfd, SIGKILL);
        if (r >= 0)
                r = proc_wait(d->wm_pidfd, d->wm_pid, true, 10000, NULL);
        close(d->wm_pidfd);
        d->wm_pid = 0;
        d->wm_pidfd = -1;
        if (d->dir[0]) {
                proc_rm_rf(d->dir);
                d->dir[0] = '\0';
        }
        return r;
}

void desktop_stop(Desktop *d) {
        desktop_fake_wm(d, DESKTOP_FAKE_NONE);
        end(&d->wm_pid, &d->wm_pidfd);
        (void) xvfb_stop(&d->xvfb);
        d->xvfb = (Xvfb) {};
        if (d->dir[0]) {
                proc_rm_rf(d->dir);
                d->dir[0] = '\0';
        }
}
