/* SPDX-License-Identifier: MIT */
#pragma once

/* A private dbus-daemon and a real timeconvd for the integration tests and bench-bus.
 *
 * harness_new() makes a temporary directory (bus socket, config, services/, the notify socket,
 * the logs) and starts `dbus-daemon --nofork` on a config of our own; the address is read from
 * --print-address, so nothing sleeps. harness_start_daemon() runs timeconvd on that bus with
 * NOTIFY_SOCKET pointing at a datagram socket of ours and waits for READY=1. Every child gets
 * PR_SET_PDEATHSIG, and harness_free() ends them all, so a failing or killed test leaves no
 * process behind. */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "cleanup.h"
#include "program-path.h"
#include "time-util.h"

#define HARNESS_READY_TIMEOUT_MS 20000
#define HARNESS_STOP_TIMEOUT_MS 5000

typedef struct Harness {
        char *dir;              /* the private temporary directory */
        char *bus_address;
        pid_t bus_pid;
        int bus_pidfd;
        pid_t daemon_pid;       /* 0: no daemon known */
        int daemon_pidfd;       /* -1: none */
        bool daemon_is_child;   /* false when the bus activated it */
        int daemon_status;      /* wait status, once reaped */
        bool daemon_reaped;
        int64_t daemon_started_ns; /* CLOCK_MONOTONIC just before the last daemon was spawned */
} Harness;

/* Starts a private bus. extra_servicedir (may be NULL) is listed after <dir>/services. It also
 * registers timeconv's error map in this process (and the children it forks later), so that
 * every test reads the daemon's named errors as the same errnos. -ENOENT, with a line on stderr,
 * when dbus-daemon is not installed: .ci/run installs it, so the test fails, never skips. */
int harness_new(const char *extra_servicedir, Harness **ret);

/* Ends the daemon (SIGTERM, then SIGKILL) and the bus, copies the daemon's log to stderr,
 * removes the directory. Accepts NULL; returns NULL. */
Harness *harness_free(Harness *h);

static inline void harness_freep(Harness **h) {
        harness_free(*h);
}

/* Runs daemon_path with args (NULL-terminated, may be NULL) on the private bus, its stderr
 * in <dir>/daemon.log, and waits up to timeout_ms for READY=1. -ECHILD when it exits first,
 * -ETIMEDOUT when it stays silent. */
int harness_start_daemon(Harness *h, const char *daemon_path, const char *const *args, int timeout_ms);

/* harness_start_daemon() as most tests run timeconvd: the POSIX clocks only (--no-x11
 * --no-gpu, so that no answer depends on the machine's display or GPU), then extra_args
 * (NULL-terminated, may be NULL), waiting HARNESS_READY_TIMEOUT_MS for READY=1. */
int harness_start_timeconvd(Harness *h, const char *daemon_path, const char *const *extra_args);

/* The opening most tests of the real daemon share: a private bus (no extra servicedir), the
 * daemon on it with args (NULL: harness_start_timeconvd()'s POSIX clocks only) and, when
 * ret_bus is not NULL, a client connection. Nothing is left behind on failure. */
int harness_new_started(const char *daemon_path, const char *const *args, Harness **ret_h, sd_bus **ret_bus);

/* A new client connection to the private bus. */
int harness_connect(const Harness *h, sd_bus **ret);

/* A stand-in for timeconvd: a new connection that serves vtable (with userdata) at
 * /org/timeconv/Clock1 and owns org.timeconv.Clock1. */
int harness_stand_in(const Harness *h, const sd_bus_vtable *vtable, void *userdata, sd_bus **ret);

/* The same, served on a thread of its own until harness_stand_in_stop(), which closes the
 * connection (the name goes with it). The thread uses *ret: it stays where it is till then. */
typedef struct HarnessStandIn {
        sd_bus *bus;
        pthread_t thread;
        int stop_fd;            /* an eventfd: the caller is done */
} HarnessStandIn;
int harness_stand_in_start(const Harness *h, const sd_bus_vtable *vtable, void *userdata, HarnessStandIn *ret);
void harness_stand_in_stop(HarnessStandIn *s);

/* A stand-in's Convert (in its vtable, any userdata): every value, whatever the names, answered
 * as value + HARNESS_STAND_IN_OFFSET_NS with a bound of HARNESS_STAND_IN_UNCERTAINTY_NS, so
 * that an answer shows it came from the stand-in. */
#define HARNESS_STAND_IN_OFFSET_NS 111
#define HARNESS_STAND_IN_UNCERTAINTY_NS 7
int harness_stand_in_convert(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* The pid owning name on the bus; -ENXIO when nobody owns it. */
int harness_name_pid(sd_bus *bus, const char *name, pid_t *ret);

/* Follows NameOwnerChanged for name on bus, starting from whether it is owned now. */
typedef struct HarnessNameWatch {
        sd_bus *bus;
        const char *name;
        sd_bus_slot *slot;
        bool owned;
        unsigned changes;
} HarnessNameWatch;

int harness_name_watch(sd_bus *bus, const char *name, HarnessNameWatch *w);

/* Processes bus until the name is (owned) or is not (!owned) owned; -ETIMEDOUT. */
int harness_name_wait(HarnessNameWatch *w, bool owned, int timeout_ms);

void harness_name_unwatch(HarnessNameWatch *w);

/* Runs argv (argv[0] looked up in PATH; a stand-in for a session service such as fake-systemd1)
 * with DBUS_SESSION_BUS_ADDRESS set to the private bus and its stderr on ours, and waits up to
 * timeout_ms for w's name to be owned. On failure the child is killed and reaped. */
int harness_spawn_owner(const Harness *h, const char *const *argv, HarnessNameWatch *w, int timeout_ms,
                        pid_t *ret_pid, int *ret_pidfd);

/* Ends what harness_spawn_owner() started: SIGTERM, waits up to timeout_ms, closes pidfd.
 * Nothing when pidfd < 0 (never started). */
void harness_stop_owner(pid_t pid, int pidfd, int timeout_ms);

/* Processes bus until *replies (which its reply callbacks count) reaches want; -ETIMEDOUT after
 * timeout_ns. */
int harness_pump(sd_bus *bus, const unsigned *replies, unsigned want, int64_t timeout_ns);

/* Takes on a daemon the bus activated (by its pid), so that harness_stop_daemon() and
 * harness_free() can end it. */
int harness_adopt_daemon(Harness *h, pid_t pid);

/* True while the daemon runs. */
bool harness_daemon_alive(Harness *h);

/* Sends SIGTERM and waits up to timeout_ms for the daemon to end. *ret_status (may be NULL)
 * is its wait status when it is our child, else 0. -ETIMEDOUT when it is still running. */
int harness_stop_daemon(Harness *h, int timeout_ms, int *ret_status, int64_t *ret_elapsed_ns);

/* The daemon's stderr so far, NUL-terminated, malloc'ed. */
int harness_daemon_log(const Harness *h, char **ret);

/* Runs argv (argv[0] looked up in PATH) with DBUS_SESSION_BUS_ADDRESS set to the private bus
 * and the extra environment entries env ("NAME=value", NULL-terminated, may be NULL);
 * collects stdout and stderr (each NUL-terminated, either pointer may be NULL) and the wait
 * status. Kills it after timeout_ms. */
int harness_run(const Harness *h, const char *const *argv, const char *const *env, int timeout_ms,
                char **ret_stdout, char **ret_stderr, int *ret_status);

/* Whether program is an executable in PATH (kept for the benchmarks' own checks). */
static inline bool harness_have_program(const char *program) {
        return program_in_path(program);
}

/* One reading of a clock, in ns (clock_now_ns() under its older name). */
static inline int64_t harness_clock_ns(clockid_t id) {
        return clock_now_ns(id);
}
