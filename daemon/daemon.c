/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "bus-errors.h"
#include "daemon.h"
#include "sources.h"
#include "state.h"
#include "xwayland.h"
#include "cleanup.h"
#include "time-util.h"

static int daemon_on_signal(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;

        log_info(d->log, "received %s, exiting", si->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
        (void) sd_notify(false, "STOPPING=1");
        return sd_event_exit(d->event, DAEMON_EXIT_OK);
}

int daemon_new(const Log *log, const Options *options, Daemon **ret) {
        _cleanup_(daemon_freep) Daemon *d = NULL;
        sigset_t mask;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return log_error_errno(log, ENOMEM, "out of memory");
        d->log = log;
        d->options = options;

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(log, r, "cannot create the event loop: %m");

        /* Signals arrive through the loop (signalfd), so they must not be delivered the old way.
         * A shell starts background jobs with SIGINT ignored, and an ignored signal is dropped
         * even when blocked: take the default disposition back first. */
        (void) signal(SIGTERM, SIG_DFL);
        (void) signal(SIGINT, SIG_DFL);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(log, errno, "cannot block SIGTERM and SIGINT: %m");
        r = sd_event_add_signal(d->event, &d->sigterm_source, SIGTERM, daemon_on_signal, d);
        if (r >= 0)
                r = sd_event_add_signal(d->event, &d->sigint_source, SIGINT, daemon_on_signal, d);
        if (r < 0)
                return log_error_errno(log, r, "cannot watch SIGTERM and SIGINT: %m");

        r = core_new(log, &d->core);
        if (r < 0)
                return log_error_errno(log, r, "cannot create the core: %m");
        r = app_clocks_new(d->core, &d->apps);
        if (r < 0)
                return log_error_errno(log, r, "cannot create the application clocks: %m");
        /* The table promises an update at least this often; a tick can be a whole idle cadence
         * late when a burst blocks, hence twice and a second. */
        if (d->core->table)
                (void) table_publisher_set_max_gap(d->core->table,
                                                   (int64_t) (2 * options->idle_cadence_usec + USEC_PER_SEC) *
                                                           NSEC_PER_USEC);

        *ret = TAKE_PTR(d);
        return 0;
}

Daemon *daemon_free(Daemon *d) {
        if (!d)
                return NULL;
        /* Reverse order of creation: nothing may point at what is already gone. */
        sd_event_source_disable_unref(d->state_source);
        free(d->state_dir);
        scheduler_free(d->scheduler);
        session_env_free(d->session_env);
        bus_api_free(d->bus_api);
        sd_bus_flush_close_unref(d->bus);
        app_clocks_free(d->apps);
        core_free(d->core);
        /* After the core: its X sources read it until they are closed. */
        x11_display_free(d->x11_display);
        sd_event_source_disable_unref(d->watchdog_source);
        sd_event_source_disable_unref(d->sigint_source);
        sd_event_source_disable_unref(d->sigterm_source);
        sd_event_unref(d->event);
        free(d);
        return NULL;
}

int daemon_open_domains(Daemon *d) {
        int r;

        /* Without --display the X sources follow the session's display: the one we were started
         * with until the user manager says otherwise (daemon_connect_bus()). */
        if (!d->options->no_x11 && !d->options->display) {
                r = x11_display_new(SESSION_ENV_NO_DISPLAY, &d->x11_display);
                /* On Wayland, only a display that Xwayland already serves (xwayland.h). */
                if (r >= 0)
                        r = xwayland_display_set(d->x11_display, getenv("DISPLAY"),
                                                 xwayland_session_is_wayland(getenv("WAYLAND_DISPLAY"),
                                                                             getenv("XDG_SESSION_TYPE")),
                                                 SESSION_ENV_NO_DISPLAY, &(pid_t) { 0 });
                if (r < 0)
                        return log_error_errno(d->log, r, "cannot keep the X display: %m");
        }

        r = sources_open(d->core, d->options, d->x11_display, d->log);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot list the clock domains of this machine: %m");
        /* Before the first burst, so that it already starts from the remembered rates. */
        state_restore(d->core, d->log, &d->state_dir);
        return r;
}

/* What the application clocks changed: the one place that publishes (publish.h) does the rest. */
static void daemon_on_apps_changed(void *userdata, const DaemonChange *ch) {
        Daemon *d = userdata;

        (void) daemon_publish(d->core, d->bus_api, d->log, ch);
}

static const char *daemon_app_owner(const void *userdata, size_t index) {
        return app_clocks_owner(userdata, index);
}

static int daemon_app_push(void *userdata, const char *sender, const BusClockReading *clocks, size_t n,
                           BusPushFailure *ret_failure) {
        return app_clocks_push(userdata, sender, clocks, n, ret_failure);
}

static int daemon_on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;

        log_error(d->log, "the bus connection went away, exiting");
        return sd_event_exit(d->event, DAEMON_EXIT_FAILURE);
}

int daemon_connect_bus(Daemon *d) {
        int r;

        r = sd_bus_open_user(&d->bus);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot connect to the session bus: %m "
                                       "(is DBUS_SESSION_BUS_ADDRESS or XDG_RUNTIME_DIR set?)");
        (void) sd_bus_set_description(d->bus, "timeconvd");

        /* Our errno values travel as our error names, and back. */
        r = bus_timeconv_errors_register();
        if (r < 0)
                return log_error_errno(d->log, r, "cannot register the error map: %m");

        r = bus_api_new(d->bus, &core_bus_ops, d->core, &d->bus_api);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot add the %s object: %m", BUS_API_OBJECT);
        /* Application clocks belong to bus names: their owners are tracked on this bus. */
        r = app_clocks_attach(d->apps, d->bus, &(const AppClocksDriver) {
                .changed = daemon_on_apps_changed,
                .userdata = d,
        });
        if (r < 0)
                return log_error_errno(d->log, r, "cannot take application clocks: %m");
        d->bus_apps = (CoreBusApplications) {
                .owner = daemon_app_owner,
                .push = daemon_app_push,
                .userdata = d->apps,
        };
        core_bus_set_applications(d->core, &d->bus_apps);

        /* sd-bus synthesises Disconnected locally: say why we stop, then stop. */
        r = sd_bus_match_signal(d->bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", daemon_on_disconnected, d);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot watch the bus connection: %m");

        r = sd_bus_request_name(d->bus, BUS_API_SERVICE, 0);
        if (r == -EEXIST || r == -EALREADY)
                return log_error_errno(d->log, r, "the name %s is already taken on the session bus: "
                                       "is another timeconvd running?", BUS_API_SERVICE);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot acquire the name %s: %m", BUS_API_SERVICE);

        r = sd_bus_attach_event(d->bus, d->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot attach the bus to the event loop: %m");

        /* A display that comes later (or goes) reaches the X sources without a restart. */
        if (d->x11_display) {
                r = session_env_new(d->event, d->bus, d->x11_display, getenv("DISPLAY"), d->log, &d->session_env);
                if (r < 0)
                        log_warning_errno(d->log, r, "cannot follow the session's X display, keeping the one "
                                          "at start: %m");
        }
        return 0;
}

static int daemon_on_watchdog(sd_event_source *source, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        int r;

        (void) sd_notify(false, "WATCHDOG=1");
        r = sd_event_source_set_time_relative(source, d->watchdog_usec / 2);
        if (r >= 0)
                r = sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        if (r < 0)
                /* Without pings systemd would kill us anyway: go now, and say why. */
                return log_error_errno(d->log, r, "cannot re-arm the watchdog timer: %m");
        return 0;
}

/* WATCHDOG=1 at half the interval the unit asked for (WatchdogSec=), when it asked. */
static int daemon_setup_watchdog(Daemon *d) {
        int r;

        r = sd_watchdog_enabled(false, &d->watchdog_usec);
        if (r < 0) {
                log_warning_errno(d->log, r, "ignoring the watchdog settings: %m");
                return 0;
        }
        if (r == 0 || d->watchdog_usec == 0)
                return 0;

        /* Accuracy 0 would mean sd-event's default of 250 ms: too loose for a short WatchdogSec=. */
        r = sd_event_add_time_relative(d->event, &d->watchdog_source, CLOCK_MONOTONIC, d->watchdog_usec / 2,
                                       d->watchdog_usec / 20 + 1, daemon_on_watchdog, d);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot add the watchdog timer: %m");
        (void) sd_event_source_set_description(d->watchdog_source, "watchdog");
        (void) sd_event_source_set_exit_on_failure(d->watchdog_source, true);
        log_debug(d->log, "pinging the watchdog every %.3g s", (double) d->watchdog_usec / 2e6);
        return 0;
}

static int daemon_on_state_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        state_store(d->core, d->state_dir, d->log);
        if (sd_event_source_set_time_relative(source, DAEMON_STATE_SAVE_USEC) < 0 ||
            sd_event_source_set_enabled(source, SD_EVENT_ONESHOT) < 0)
                log_warning(d->log, "state: cannot re-arm the save timer; saving at exit only");
        return 0;
}

int daemon_start(Daemon *d) {
        const SchedulerConfig config = {
                .cadence_usec = d->options->cadence_usec,
                .idle_cadence_usec = d->options->idle_cadence_usec,
                .idle_after_usec = d->options->idle_after_usec,
        };
        size_t n_domains = core_count(d->core);
        int r;

        r = scheduler_new(d->event, d->core, d->bus_api, d->log, &config, &d->scheduler);
        if (r < 0)
                return log_error_errno(d->log, r, "cannot create the scheduler: %m");
        r = scheduler_start(d->scheduler);
        if (r < 0)
                return r;

        r = daemon_setup_watchdog(d);
        if (r < 0)
                return r;

        if (d->state_dir) {
                r = sd_event_add_time_relative(d->event, &d->state_source, CLOCK_MONOTONIC, DAEMON_STATE_SAVE_USEC,
                                               USEC_PER_SEC, daemon_on_state_timer, d);
                if (r < 0)
                        log_warning_errno(d->log, r, "state: cannot add the save timer, saving at exit only: %m");
        }

        (void) sd_notifyf(false, "READY=1\nSTATUS=Active: %zu domains calibrated against %s",
                          n_domains, CORE_HUB);
        log_info(d->log, "ready, %zu domains", n_domains);
        return 0;
}

int daemon_loop(Daemon *d) {
        int r;

        r = sd_event_loop(d->event);
        /* However the loop ended, what was learned is worth keeping. */
        state_store(d->core, d->state_dir, d->log);
        if (r < 0) {
                log_error_errno(d->log, r, "event loop failed: %m");
                return DAEMON_EXIT_FAILURE;
        }
        return r;
}
