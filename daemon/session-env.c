/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "session-env.h"
#include "xwayland.h"

/* A manager that does not answer in this time is as good as absent: the next attempt asks again. */
#define SESSION_ENV_CALL_USEC (UINT64_C(5) * 1000000)

struct SessionEnv {
        sd_event *event;
        sd_bus *bus;
        const Log *log;
        X11Display *display;
        char *fallback;                 /* $DISPLAY at start; NULL: none */
        sd_bus_slot *changed_slot;      /* the manager's PropertiesChanged: a cue, never a value */
        sd_bus_slot *call_slot;         /* a Get of Environment in flight */
        bool again;                     /* asked again while it was in flight */
        uint64_t last_read_usec;        /* CLOCK_MONOTONIC when the latest Get was sent; 0: never */
        sd_event_source *spacing_source;        /* a read held back until SESSION_ENV_READ_SPACING_USEC */
        sd_event_source *want_source;
        /* The display the session names (the manager's DISPLAY, else the fallback), and whether
         * it is a Wayland session (our own environment or the manager's): the sources get it
         * only as xwayland_display_set() allows. */
        char *candidate;
        bool candidate_from_manager;
        bool wayland_own, wayland_manager;
        pid_t xwayland_pid;             /* the Xwayland whose display the sources have; 0: none */
        sd_event_source *xwayland_source;       /* its pidfd */
};

static int session_env_publish(SessionEnv *s);

static int session_env_on_xwayland_exit(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        SessionEnv *s = userdata;

        log_info(s->log, "Xwayland (pid %d) on %s exited", (int) s->xwayland_pid, s->candidate ?: "?");
        s->xwayland_source = sd_event_source_disable_unref(s->xwayland_source);
        s->xwayland_pid = 0;
        /* At once, before a source reconnects: a connection now would start it again. */
        (void) session_env_publish(s);
        return 0;
}

/* Follows pid's exit (0: nothing to follow). */
static int session_env_watch_xwayland(SessionEnv *s, pid_t pid) {
        int fd, r;

        if (pid == s->xwayland_pid)
                return 0;
        if (s->xwayland_source) {
                /* A look at /proc (a source's attempt reads the session again) may find it gone
                 * before its pidfd's event is dispatched: its exit is said all the same. */
                struct pollfd p = { .fd = sd_event_source_get_io_fd(s->xwayland_source), .events = POLLIN };

                if (p.fd >= 0 && poll(&p, 1, 0) > 0)
                        log_info(s->log, "Xwayland (pid %d) on %s exited", (int) s->xwayland_pid,
                                 s->candidate ?: "?");
        }
        s->xwayland_source = sd_event_source_disable_unref(s->xwayland_source);
        s->xwayland_pid = 0;
        if (pid == 0)
                return 0;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
                return -errno;
        r = sd_event_add_io(s->event, &s->xwayland_source, fd, EPOLLIN, session_env_on_xwayland_exit, s);
        if (r < 0) {
                close(fd);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(s->xwayland_source, true);
        (void) sd_event_source_set_description(s->xwayland_source, "xwayland-exit");
        s->xwayland_pid = pid;
        return 0;
}

/* The candidate to the sources, as a Wayland session allows (xwayland.h). */
static int session_env_publish(SessionEnv *s) {
        bool wayland = s->wayland_own || s->wayland_manager;
        pid_t pid = 0;
        int r;

        r = xwayland_display_set(s->display, s->candidate, wayland, SESSION_ENV_NO_DISPLAY, &pid);
        if (r < 0)
                return log_warning_errno(s->log, r, "cannot take the X display: %m");
        if (session_env_watch_xwayland(s, pid) < 0) {
                /* Without its exit followed, a reconnection could start it again: not taken. */
                log_warning(s->log, "cannot follow Xwayland (pid %d): not using %s", (int) pid, s->candidate);
                (void) x11_display_set(s->display, NULL, "Wayland session: Xwayland's exit cannot be followed");
                return 0;
        }
        if (r == 0) {
                if (pid == 0 && wayland && s->candidate &&
                    xwayland_display_number(s->candidate, &(unsigned) { 0 }) >= 0)
                        log_debug(s->log, "Wayland session: still no Xwayland on %s", s->candidate);
                return 0;
        }
        if (pid > 0)
                log_info(s->log, "X display %s (from %s), served by Xwayland (pid %d)", s->candidate,
                         s->candidate_from_manager ? "the user manager's environment" : "timeconvd's own environment",
                         (int) pid);
        else if (s->candidate && wayland && xwayland_display_number(s->candidate, &(unsigned) { 0 }) >= 0)
                log_info(s->log, "Wayland session: not connecting to X display %s while no Xwayland runs on it",
                         s->candidate);
        else if (s->candidate)
                log_info(s->log, "X display %s (from %s)", s->candidate,
                         s->candidate_from_manager ? "the user manager's environment" : "timeconvd's own environment");
        else
                log_info(s->log, "no X display any more: DISPLAY left the user manager's environment");
        return 0;
}

/* The session's display and kind, then what the sources get. */
static int session_env_take(SessionEnv *s, const char *name, bool from_manager, bool wayland_manager) {
        char *copy = NULL;

        if (name && name[0]) {
                copy = strdup(name);
                if (!copy)
                        return log_warning_errno(s->log, -ENOMEM, "cannot take the X display: %m");
        }
        free(s->candidate);
        s->candidate = copy;
        s->candidate_from_manager = from_manager;
        s->wayland_manager = wayland_manager;
        return session_env_publish(s);
}

/* The manager's DISPLAY (or the fallback, or none) becomes the display the sources follow. m is
 * the reply to Get, at the variant that holds Environment (as). */
static int session_env_apply(SessionEnv *s, sd_bus_message *m) {
        const char *manager = NULL, *wayland_display = NULL, *session_type = NULL, *entry;
        int r;

        r = sd_bus_message_enter_container(m, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "s");
        while (r > 0) {
                r = sd_bus_message_read(m, "s", &entry);
                if (r > 0 && strncmp(entry, "DISPLAY=", 8) == 0 && entry[8])
                        manager = entry + 8;
                else if (r > 0 && strncmp(entry, "WAYLAND_DISPLAY=", 16) == 0)
                        wayland_display = entry + 16;
                else if (r > 0 && strncmp(entry, "XDG_SESSION_TYPE=", 17) == 0)
                        session_type = entry + 17;
        }
        if (r < 0)
                return log_warning_errno(s->log, r, "the user manager's Environment cannot be parsed: %m");
        return session_env_take(s, manager ?: s->fallback, manager, xwayland_session_is_wayland(wayland_display,
                                                                                                  session_type));
}

static int session_env_read(SessionEnv *s);

static int session_env_on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SessionEnv *s = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        s->call_slot = sd_bus_slot_unref(s->call_slot);
        if (e)
                /* No user manager on this bus (a test bus, a session without systemd): keep
                 * what we have. */
                log_debug(s->log, "the user manager's environment cannot be read: %s", e->message ?: e->name);
        else
                (void) session_env_apply(s, m);

        if (s->again) {
                s->again = false;
                (void) session_env_read(s);
        }
        return 0;
}

static int session_env_on_spacing(sd_event_source *source, uint64_t usec, void *userdata) {
        (void) session_env_read(userdata);
        return 0;
}

/* Asks for Environment, without starting a manager that is not there. One call at a time, and
 * at most one every SESSION_ENV_READ_SPACING_USEC: a request meanwhile is made once, as soon as
 * both allow, however many came. */
static int session_env_read(SessionEnv *s) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint64_t now_usec = 0;
        int r;

        if (s->call_slot) {
                s->again = true;
                return 0;
        }
        (void) sd_event_now(s->event, CLOCK_MONOTONIC, &now_usec);
        if (s->last_read_usec > 0 && now_usec < s->last_read_usec + SESSION_ENV_READ_SPACING_USEC) {
                r = sd_event_source_set_time(s->spacing_source, s->last_read_usec + SESSION_ENV_READ_SPACING_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s->spacing_source, SD_EVENT_ONESHOT);
                if (r < 0)
                        return log_warning_errno(s->log, r, "cannot hold back a read of the manager's environment: %m");
                return 0;
        }
        (void) sd_event_source_set_enabled(s->spacing_source, SD_EVENT_OFF);

        r = sd_bus_message_new_method_call(s->bus, &m, SESSION_ENV_MANAGER_SERVICE, SESSION_ENV_MANAGER_PATH,
                                           "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", SESSION_ENV_MANAGER_INTERFACE, "Environment");
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0)
                r = sd_bus_call_async(s->bus, &s->call_slot, m, session_env_on_reply, s, SESSION_ENV_CALL_USEC);
        if (r < 0)
                return log_warning_errno(s->log, r, "cannot ask the user manager for its environment: %m");
        s->last_read_usec = now_usec ?: 1;
        log_debug(s->log, "asking the user manager for its environment");
        return 0;
}

/* PropertiesChanged of the manager: any client can send one that passes our match (unicast, or
 * from a unique name, which sd-bus lets through a rule naming a well-known sender), so what it
 * says is never taken; it only makes us ask the manager itself. */
static int session_env_on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SessionEnv *s = userdata;

        log_debug(s->log, "PropertiesChanged of the user manager (from %s): reading its environment again",
                  sd_bus_message_get_sender(m) ?: "?");
        (void) session_env_read(s);
        return 0;
}

static int session_env_on_match_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SessionEnv *s = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        /* Not fatal: the X sources' attempts still make us read it. */
        if (e)
                log_warning(s->log, "cannot follow the user manager's PropertiesChanged: %s", e->message ?: e->name);
        return 0;
}

/* A source had no display, or could not reach its display: look again. */
static int session_env_on_want(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        SessionEnv *s = userdata;
        uint64_t count;

        (void) !read(fd, &count, sizeof(count));
        /* Xwayland may have started since: looked for at once, the manager asked besides. */
        (void) session_env_publish(s);
        (void) session_env_read(s);
        return 0;
}

int session_env_new(sd_event *event, sd_bus *bus, X11Display *display, const char *fallback, const Log *log,
                    SessionEnv **ret) {
        _cleanup_(session_env_freep) SessionEnv *s = NULL;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        s->bus = sd_bus_ref(bus);
        s->log = log;
        s->display = display;
        if (fallback && fallback[0]) {
                s->fallback = strdup(fallback);
                if (!s->fallback)
                        return -ENOMEM;
        }

        r = sd_bus_add_match_async(bus, &s->changed_slot,
                                   "type='signal',sender='" SESSION_ENV_MANAGER_SERVICE "',"
                                   "path='" SESSION_ENV_MANAGER_PATH "',"
                                   "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                                   "arg0='" SESSION_ENV_MANAGER_INTERFACE "'",
                                   session_env_on_changed, session_env_on_match_added, s);
        if (r < 0)
                return r;
        r = sd_event_add_time(event, &s->spacing_source, CLOCK_MONOTONIC, 0, SESSION_ENV_READ_SPACING_USEC / 10,
                              session_env_on_spacing, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->spacing_source, SD_EVENT_OFF);
        (void) sd_event_source_set_description(s->spacing_source, "session-env-spacing");
        r = sd_event_add_io(event, &s->want_source, x11_display_want_fd(display), EPOLLIN, session_env_on_want, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(s->want_source, "x11-display-wanted");
        s->wayland_own = xwayland_session_is_wayland(getenv("WAYLAND_DISPLAY"), getenv("XDG_SESSION_TYPE"));
        r = session_env_take(s, s->fallback, false, false);
        if (r >= 0)
                r = session_env_read(s);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

SessionEnv *session_env_free(SessionEnv *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->xwayland_source);
        sd_event_source_disable_unref(s->want_source);
        sd_event_source_disable_unref(s->spacing_source);
        sd_bus_slot_unref(s->call_slot);
        sd_bus_slot_unref(s->changed_slot);
        sd_bus_unref(s->bus);
        sd_event_unref(s->event);
        free(s->fallback);
        free(s->candidate);
        free(s);
        return NULL;
}
