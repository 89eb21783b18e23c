/* SPDX-License-Identifier: MIT */
#pragma once

/* The running daemon: everything hangs off one Daemon created in run(), in the order run()
 * sets it up (event loop and signals, core and sources, bus and API, scheduler, watchdog). */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "app-clocks.h"
#include "bus-api.h"
#include "core.h"
#include "core-bus.h"
#include "log.h"
#include "options.h"
#include "scheduler.h"
#include "session-env.h"
#include "x11-display.h"

/* Exit status of the process. */
enum {
        DAEMON_EXIT_OK = 0,
        DAEMON_EXIT_FAILURE = 1,        /* cannot run: no bus, name taken, bus lost */
        DAEMON_EXIT_USAGE = 64,         /* bad command line: EX_USAGE, as timeconv's */
};

typedef struct Daemon {
        const Log *log;
        const Options *options;
        sd_event *event;
        sd_event_source *sigterm_source;
        sd_event_source *sigint_source;
        sd_event_source *watchdog_source;
        uint64_t watchdog_usec;
        Core *core;
        /* The clients' own clocks: nodes of the core, owned by bus names of this bus. */
        AppClocks *apps;
        CoreBusApplications bus_apps;   /* lent to the core's bus side */
        sd_bus *bus;
        BusApi *bus_api;
        Scheduler *scheduler;
        char *state_dir;                /* where state.json lives; NULL: nowhere */
        sd_event_source *state_source;  /* saves it every DAEMON_STATE_SAVE_USEC */
        /* The session's X display, which the X sources follow unless --display or --no-x11
         * (NULL then), and what keeps it up to date from the user manager. */
        X11Display *x11_display;
        SessionEnv *session_env;
} Daemon;

/* The learned rates are saved this often (and at exit): a crash loses at most this much. */
#define DAEMON_STATE_SAVE_USEC (UINT64_C(300) * 1000000)

/* The event loop with SIGTERM and SIGINT blocked and handled (exit status 0). */
int daemon_new(const Log *log, const Options *options, Daemon **ret);
Daemon *daemon_free(Daemon *d);

static inline void daemon_freep(Daemon **d) {
        daemon_free(*d);
}

/* The core with every domain of every enabled source; returns the number of domains. */
int daemon_open_domains(Daemon *d);

/* Session bus, error map, the org.timeconv.Clock1 object, the name, attached to the loop. */
int daemon_connect_bus(Daemon *d);

/* First burst of every domain (synchronously), then the timers, the watchdog, READY=1 and the
 * readiness line on stderr. */
int daemon_start(Daemon *d);

/* Runs the loop; returns the process's exit status. */
int daemon_loop(Daemon *d);
