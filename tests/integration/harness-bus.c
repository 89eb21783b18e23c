/* SPDX-License-Identifier: MIT */

/* The client side of the private bus: connections, who owns a name, waiting for a name to
 * change hands. */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "harness.h"

int harness_connect(const Harness *h, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, h->bus_address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

int harness_stand_in(const Harness *h, const sd_bus_vtable *vtable, void *userdata, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = harness_connect(h, &bus);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(bus, NULL, "/org/timeconv/Clock1", "org.timeconv.Clock1", vtable, userdata);
        if (r >= 0)
                r = sd_bus_request_name(bus, "org.timeconv.Clock1", 0);
        if (r < 0) {
                sd_bus_flush_close_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

int harness_stand_in_convert(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *from, *to;
        int64_t value;
        int r;

        r = sd_bus_message_read(m, "ssx", &from, &to, &value);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "xt", value + HARNESS_STAND_IN_OFFSET_NS,
                                          (uint64_t) HARNESS_STAND_IN_UNCERTAINTY_NS);
}

/* Serves until the caller writes to stop_fd. */
static void *stand_in_serve(void *userdata) {
        HarnessStandIn *s = userdata;

        for (;;) {
                struct pollfd p[2] = { { .fd = sd_bus_get_fd(s->bus) }, { .fd = s->stop_fd, .events = POLLIN } };
                int r;

                do
                        r = sd_bus_process(s->bus, NULL);
                while (r > 0);
                if (r < 0)
                        break;
                p[0].events = (short) sd_bus_get_events(s->bus);
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        break;
                if (p[1].revents)
                        break;
        }
        sd_bus_flush(s->bus);
        return NULL;
}

int harness_stand_in_start(const Harness *h, const sd_bus_vtable *vtable, void *userdata, HarnessStandIn *ret) {
        int r;

        *ret = (HarnessStandIn) { .stop_fd = eventfd(0, EFD_CLOEXEC) };
        if (ret->stop_fd < 0)
                return -errno;
        r = harness_stand_in(h, vtable, userdata, &ret->bus);
        if (r >= 0)
                r = -pthread_create(&ret->thread, NULL, stand_in_serve, ret);
        if (r < 0) {
                ret->bus = sd_bus_flush_close_unref(ret->bus);
                close(ret->stop_fd);
                ret->stop_fd = -1;
        }
        return r;
}

void harness_stand_in_stop(HarnessStandIn *s) {
        (void) !write(s->stop_fd, &(uint64_t) { 1 }, sizeof(uint64_t));
        pthread_join(s->thread, NULL);
        s->bus = sd_bus_flush_close_unref(s->bus);
        close(s->stop_fd);
        s->stop_fd = -1;
}

int harness_name_pid(sd_bus *bus, const char *name, pid_t *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t pid;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionUnixProcessID", &error, &reply, "s", name);
        if (r < 0)
                return sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner") ? -ENXIO : r;
        r = sd_bus_message_read(reply, "u", &pid);
        if (r < 0)
                return r;
        *ret = (pid_t) pid;
        return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        HarnessNameWatch *w = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || strcmp(name, w->name) != 0)
                return 0;
        w->owned = *new_owner != 0;
        w->changes++;
        return 0;
}

int harness_name_watch(sd_bus *bus, const char *name, HarnessNameWatch *w) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int owned, r;

        *w = (HarnessNameWatch) { .bus = bus, .name = name };
        /* The match first, then the question: no change can fall between the two. */
        r = sd_bus_match_signal(bus, &w->slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "NameOwnerChanged", on_name_owner_changed, w);
        if (r < 0)
                return r;
        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", &error, &reply, "s", name);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &owned);
        if (r < 0) {
                w->slot = sd_bus_slot_unref(w->slot);
                return r;
        }
        w->owned = owned;
        return 0;
}

int harness_name_wait(HarnessNameWatch *w, bool owned, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        for (;;) {
                int64_t left_ns;
                int r;

                /* Dispatch everything queued first: a signal may wait in the queue since a
                 * method call read past it. */
                r = sd_bus_process(w->bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (w->owned == owned)
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_wait(w->bus, (uint64_t) left_ns / 1000);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

void harness_name_unwatch(HarnessNameWatch *w) {
        w->slot = sd_bus_slot_unref(w->slot);
}

int harness_pump(sd_bus *bus, const unsigned *replies, unsigned want, int64_t timeout_ns) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + timeout_ns;

        while (*replies < want) {
                int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                int r;

                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r == 0)
                        (void) sd_bus_wait(bus, (uint64_t) left_ns / 1000);
        }
        return 0;
}
