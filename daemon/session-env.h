/* SPDX-License-Identifier: MIT */
#pragma once

/* The X display of the session, as the user manager knows it. A session manager puts DISPLAY
 * into the user manager's environment (dbus-update-activation-environment --systemd, or
 * systemctl --user import-environment) once the X server is up, often after timeconvd started:
 * so it is read from org.freedesktop.systemd1.Manager's Environment property at start and again
 * whenever an X source asks (each attempt it makes without a display, or that cannot reach its
 * display). systemd declares Environment without a change signal, so that is what finds a new
 * DISPLAY; a PropertiesChanged of the manager only makes us read it sooner, its payload never
 * taken (any client can send one). Reads are one at a time and at most one every
 * SESSION_ENV_READ_SPACING_USEC, however often asked. What a read finds becomes the X11Display
 * the x11 and present sources follow: the manager's DISPLAY, else the one timeconvd was started
 * with, else none. An unreachable manager changes nothing. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "x11-display.h"

#define SESSION_ENV_MANAGER_SERVICE "org.freedesktop.systemd1"
#define SESSION_ENV_MANAGER_PATH "/org/freedesktop/systemd1"
#define SESSION_ENV_MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
/* The X sources' own backoff starts at 100 ms: no slower than that. */
#define SESSION_ENV_READ_SPACING_USEC (UINT64_C(100) * 1000)

typedef struct SessionEnv SessionEnv;

/* Starts following: the match (installed asynchronously), the first read (answered later, on
 * the loop), the sources' want fd. fallback (may be NULL) is $DISPLAY at start; display, bus, event and log are
 * borrowed and must outlive the SessionEnv. */
int session_env_new(sd_event *event, sd_bus *bus, X11Display *display, const char *fallback, const Log *log,
                    SessionEnv **ret);
SessionEnv *session_env_free(SessionEnv *s);

static inline void session_env_freep(SessionEnv **s) {
        session_env_free(*s);
}

/* The reason for no display, as ListDomains and errors give it. */
#define SESSION_ENV_NO_DISPLAY \
        "no X display: DISPLAY is in neither the user manager's environment nor timeconvd's"
