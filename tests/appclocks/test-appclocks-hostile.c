/* SPDX-License-Identifier: MIT */

/* Forged bus-driver signals. dbus-daemon delivers a unicast signal whatever
 * the receiver's match rules say, and sd-bus matches a well-known sender ('org.freedesktop.DBus')
 * against any unique name: a client could tell timeconvd that another client left, and tell
 * libtimeconv that the daemon went away. Here client B forges NameOwnerChanged to the daemon
 * (through sd-bus, and with dbus-send as the report did) and to a libtimeconv handle: A keeps
 * its domain, B cannot take the name, the handle hears of no restart.
 * usage: test-appclocks-hostile TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "appclocks-client.h"
#include "bus-errors.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"
#include "timeconv.h"

#define WAIT_MS 10000
#define SNAPSHOT_STEP_NS INT64_C(50000000)
#define DRIVER "org.freedesktop.DBus"
#define DRIVER_PATH "/org/freedesktop/DBus"

/* Client B's forgery: NameOwnerChanged(name, old_owner, new_owner) sent to dest only. */
static int forge_owner_changed(sd_bus *b, const char *dest, const char *name, const char *old_owner,
                               const char *new_owner) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_signal(b, &m, DRIVER_PATH, DRIVER, "NameOwnerChanged");
        if (r >= 0)
                r = sd_bus_message_set_destination(m, dest);
        if (r >= 0)
                r = sd_bus_message_append(m, "sss", name, old_owner, new_owner);
        if (r >= 0)
                r = sd_bus_send(b, m, NULL);
        return r < 0 ? r : 0;
}

/* A call from b to dest that dest answers after everything b sent it before (the bus keeps the
 * order of one sender's messages to one receiver): the forgery has been handled. */
static int barrier_daemon(sd_bus *b) {
        AcDomain d;

        return ac_domain(b, "monotonic", &d);
}

/* Counts clients that leave the bus (unique names whose owner becomes ""). */
static int on_departure(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name, *old_owner, *new_owner;

        if (strcmp(sd_bus_message_get_sender(m) ?: "", DRIVER) == 0 &&
            sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 && name[0] == ':' && !new_owner[0])
                (*(unsigned *) userdata)++;
        return 0;
}

static int wait_departures(sd_bus *bus, const unsigned *counter, unsigned want) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
        int r;

        while (*counter < want) {
                int64_t left_us = (deadline_ns - clock_now_ns(CLOCK_MONOTONIC)) / 1000;

                if (left_us <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r == 0 && sd_bus_wait(bus, (uint64_t) left_us) < 0)
                        return -EIO;
        }
        return 0;
}

static void check_owner(sd_bus *observer, const char *name, const char *unique, const char *what) {
        AcDomain d = {};
        int r = ac_domain(observer, name, &d);

        ok(r >= 0 && d.found && d.available && strcmp(d.owner, unique) == 0,
           "%s: '%s' is listed, available, owner %s (%s)", what, name, unique, d.found ? d.owner : "not listed");
}

static void check_name_taken(sd_bus *b, int64_t r_ns, const char *what) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = ac_push2(b, "monotonic_raw", r_ns, "audio0", 0, &e);

        ok(r == -EEXIST && sd_bus_error_has_name(&e, BUS_ERROR_NAME_TAKEN), "%s: B's PushSnapshot to 'audio0' "
           "gets NameTaken (%d %s)", what, r, e.name ? e.name : "no error");
        sd_bus_error_free(&e);
}

static void test_daemon(const Harness *h, sd_bus *observer) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *a = NULL, *b = NULL;
        int64_t r_first_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) - INT64_C(1000000000);
        const AcTruth audio = { r_first_ns, INT64_C(7000000000000), 1000 };
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        const char *a_name = NULL;
        unsigned departures = 0;
        int r;

        r = harness_connect(h, &a);
        if (r >= 0)
                r = harness_connect(h, &b);
        if (r >= 0)
                r = sd_bus_get_unique_name(a, &a_name);
        is_int(r, 0, "clients A and B connect");
        if (r < 0)
                return;
        is_int(ac_push_series(a, "monotonic_raw", "audio0", &audio, r_first_ns, SNAPSHOT_STEP_NS, 10), 10,
               "A makes 'audio0' with 10 snapshots");
        check_owner(observer, "audio0", a_name, "before the forgery");

        r = forge_owner_changed(b, BUS_API_SERVICE, a_name, a_name, "");
        if (r >= 0)
                r = barrier_daemon(b);
        is_int(r, 0, "B sends the daemon a unicast NameOwnerChanged(A, A, \"\") and the daemon answers B next");
        check_owner(observer, "audio0", a_name, "after B's forged signal");
        check_name_taken(b, r_first_ns + 20 * SNAPSHOT_STEP_NS, "after the forged signal");

        /* The same with dbus-send, as reported. */
        {
                char arg_name[300], arg_old[300];
                const char *const argv[] = {
                        "dbus-send", "--session", "--type=signal", "--dest=" BUS_API_SERVICE, DRIVER_PATH,
                        DRIVER ".NameOwnerChanged", NULL, NULL, "string:", NULL,
                };
                const char *run[sizeof(argv) / sizeof(argv[0])];
                int status = -1;

                memcpy(run, argv, sizeof(argv));
                snprintf(arg_name, sizeof(arg_name), "string:%s", a_name);
                snprintf(arg_old, sizeof(arg_old), "string:%s", a_name);
                run[6] = arg_name;
                run[7] = arg_old;
                r = sd_bus_match_signal(observer, &slot, DRIVER, DRIVER_PATH, DRIVER, "NameOwnerChanged",
                                        on_departure, &departures);
                if (r >= 0)
                        r = harness_run(h, run, NULL, WAIT_MS, NULL, NULL, &status);
                ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "dbus-send forges the signal (%d, "
                   "status %d)", r, status);
        }
        /* The bus hands on what dbus-send wrote before it announces that dbus-send left: once
         * the observer hears of that, its calls reach the daemon after the forgery. */
        is_int(wait_departures(observer, &departures, 1), 0, "the observer hears dbus-send leave the bus");
        is_int(ac_push2(a, "monotonic_raw", r_first_ns + 30 * SNAPSHOT_STEP_NS, "audio0",
                        ac_truth_x(&audio, r_first_ns + 30 * SNAPSHOT_STEP_NS), NULL), 0,
               "A still feeds 'audio0'");
        check_owner(observer, "audio0", a_name, "after dbus-send's forged signal");
        check_name_taken(b, r_first_ns + 40 * SNAPSHOT_STEP_NS, "after dbus-send");

        /* The driver itself is still believed: A really leaves, and its domain goes. */
        {
                AcSignals sig = {};

                r = ac_signals_watch(observer, &sig);
                a = sd_bus_flush_close_unref(a);
                if (r >= 0)
                        r = ac_wait_listed(observer, &sig, "audio0", false, WAIT_MS);
                is_int(r, 0, "A leaves the bus: 'audio0' goes");
                ac_signals_unwatch(&sig);
        }
        ok(harness_daemon_alive((Harness *) h), "the daemon runs");
}

typedef struct Seen {
        unsigned daemon_changed;
} Seen;

static void on_event(const struct timeconv_event *e, void *userdata) {
        Seen *s = userdata;

        if (e->type == TIMECONV_EVENT_DAEMON_CHANGED)
                s->daemon_changed++;
}

/* The unique names on the bus that are not in before (a NULL-terminated list). */
static int list_names(sd_bus *bus, char ***ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, DRIVER, DRIVER_PATH, DRIVER, "ListNames", NULL, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read_strv(reply, ret);
        return r < 0 ? r : 0;
}

static bool in_list(char **list, const char *s) {
        for (size_t i = 0; list && list[i]; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

static void strv_free(char **list) {
        for (size_t i = 0; list && list[i]; i++)
                free(list[i]);
        free(list);
}

static int on_pong(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(int *) userdata = sd_bus_message_is_method_error(m, NULL) ? -EIO : 1;
        return 0;
}

/* Pings the handle's connection from b and runs both until the answer: the handle has handled
 * everything b sent it before. */
static int barrier_handle(sd_bus *b, const char *handle_name, struct timeconv *tc) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
        int done = 0, r;

        r = sd_bus_call_method_async(b, NULL, handle_name, "/", "org.freedesktop.DBus.Peer", "Ping", on_pong,
                                     &done, NULL);
        if (r < 0)
                return r;
        while (done == 0) {
                struct pollfd p[2] = {
                        { .fd = timeconv_get_fd(tc), .events = POLLIN },
                        { .fd = sd_bus_get_fd(b), .events = sd_bus_get_events(b) },
                };
                int64_t left_ms = (deadline_ns - clock_now_ns(CLOCK_MONOTONIC)) / 1000000;

                if (left_ms <= 0)
                        return -ETIMEDOUT;
                if (timeconv_process(tc) < 0)
                        return -EIO;
                while ((r = sd_bus_process(b, NULL)) > 0)
                        ;
                if (r < 0)
                        return r;
                if (done != 0)
                        break;
                if (poll(p, 2, (int) (left_ms < 100 ? left_ms : 100)) < 0 && errno != EINTR)
                        return -errno;
        }
        return done < 0 ? done : 0;
}

static void test_library(const Harness *h, sd_bus *observer) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
        char **before = NULL, **after = NULL;
        const char *handle_name = NULL, *daemon_name = NULL;
        struct timeconv *tc = NULL;
        Seen seen = {};
        int64_t v, u;
        int r;

        r = harness_connect(h, &b);
        if (r >= 0)
                r = list_names(observer, &before);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &tc);
        if (r >= 0)
                r = timeconv_set_event_handler(tc, on_event, &seen);
        if (r >= 0)
                r = timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u);
        if (r >= 0)
                r = list_names(observer, &after);
        is_int(r, 0, "a libtimeconv handle opens and converts");
        for (size_t i = 0; r >= 0 && after[i]; i++)
                if (after[i][0] == ':' && !in_list(before, after[i]))
                        handle_name = after[i];
        {
                _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;

                if (sd_bus_get_name_creds(observer, BUS_API_SERVICE, SD_BUS_CREDS_UNIQUE_NAME, &creds) >= 0)
                        (void) sd_bus_creds_get_unique_name(creds, &daemon_name);
                ok(handle_name && daemon_name, "the handle's bus name (%s) and the daemon's (%s) are known",
                   handle_name ? handle_name : "?", daemon_name ? daemon_name : "?");
                if (handle_name && daemon_name) {
                        r = forge_owner_changed(b, handle_name, BUS_API_SERVICE, daemon_name, "");
                        if (r >= 0)
                                r = barrier_handle(b, handle_name, tc);
                        is_int(r, 0, "B sends the handle a unicast NameOwnerChanged(" BUS_API_SERVICE ", daemon, "
                               "\"\"), and the handle answers B's Ping next");
                }
        }
        is_int(seen.daemon_changed, 0, "the handle reports no daemon change");
        is_int(timeconv_convert(tc, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), &v, &u), 0,
               "and converts as before");
        timeconv_free(tc);
        strv_free(before);
        strv_free(after);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *observer = NULL;
        int r;

        /* No skip: .ci/run installs dbus-daemon, so without it the test fails. */
        if (argc < 2) {
                ok(false, "usage: test-appclocks-hostile TIMECONVD");
                return done_testing();
        }
        is_int(bus_timeconv_errors_register(), 0, "the error map registers");
        r = harness_tap_start(argv[1], NULL, &h, &observer);
        is_int(r, 0, "an observer connects");
        if (r < 0)
                return done_testing();

        test_daemon(h, observer);
        test_library(h, observer);
        return done_testing();
}
