/* SPDX-License-Identifier: MIT */

/* Every call that reaches the daemon passes here first, before sd-bus dispatches it: the method
 * handlers of our vtable, and what sd-bus answers by itself (Introspect, Properties, Peer), which
 * no handler of ours sees. Each call takes the estimated bytes of its answer from its client's
 * budget of replies (bus-clients.h); over it, QuotaExceeded at once, and nothing else is done.
 * Without this, a client that sent 20,000 ListDomains calls and read nothing had the daemon queue
 * 156 MB of answers on its bus connection, ahead of every other client's Convert (7-12 s). */

#include <errno.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "bus-api-internal.h"
#include "bus-api-jobs.h"
#include "time-util.h"

static bool is_call(sd_bus_message *m, const char *interface, const char *member) {
        const char *i = sd_bus_message_get_interface(m), *mm = sd_bus_message_get_member(m);

        /* A call may leave its interface out: sd-bus then dispatches it by member alone. */
        return mm && strcmp(mm, member) == 0 && (!i || strcmp(i, interface) == 0);
}

/* What the answer to m will weigh on the bus, about: the answers that can be large by their
 * listed domains or sd-bus's XML, the rest a small message. ConvertMany and ExportSnapshots are
 * counted again, exactly, against the budget of large replies by their handlers. */
static uint64_t reply_estimate_bytes(BusApi *a, sd_bus_message *m) {
        if (is_call(m, BUS_API_INTERFACE, "ListDomains"))
                return BUS_API_REPLY_BYTES_MIN + a->ops->count_domains(a->core) * BUS_API_LIST_DOMAIN_BYTES;
        if (is_call(m, "org.freedesktop.DBus.Introspectable", "Introspect"))
                return BUS_API_INTROSPECT_BYTES;
        return BUS_API_REPLY_BYTES_MIN;
}

/* How many messages the daemon has queued to the bus daemon and not written yet. */
static uint64_t queued_write(BusApi *a) {
        uint64_t n = 0;

        return sd_bus_get_n_queued_write(a->bus, &n) >= 0 ? n : 0;
}

/* Once the long queue is sent: the memory back, else look again later. */
static int on_release(sd_event_source *s, uint64_t usec, void *userdata) {
        BusApi *a = userdata;

        if (!a->release_pending)
                return 0;
        if (queued_write(a) > 0) {
                (void) sd_event_source_set_time_relative(s, BUS_API_RELEASE_CHECK_USEC);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                return 0;
        }
        a->release_pending = false;
        a->ops->release_memory(a->core);
        return 0;
}

void bus_api_release_arm(BusApi *a) {
        sd_event *e = sd_bus_get_event(a->bus);
        int enabled = SD_EVENT_OFF;

        if (!a->ops->release_memory || !e)
                return;
        a->release_pending = true;
        if (!a->release_source) {
                if (sd_event_add_time_relative(e, &a->release_source, CLOCK_MONOTONIC, BUS_API_RELEASE_CHECK_USEC,
                                               BUS_API_RELEASE_CHECK_USEC / 10, on_release, a) < 0)
                        return;
                (void) sd_event_source_set_description(a->release_source, "bus-release-memory");
                return;
        }
        if (sd_event_source_get_enabled(a->release_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        (void) sd_event_source_set_time_relative(a->release_source, BUS_API_RELEASE_CHECK_USEC);
        (void) sd_event_source_set_enabled(a->release_source, SD_EVENT_ONESHOT);
}

static int on_call(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        const char *sender = sd_bus_message_get_sender(m);
        uint64_t bytes, queued;
        BusClient *cl;
        int r;

        /* A peer of our own (no bus: nobody else to protect), the bus driver, and what is not a
         * call (replies to our own calls, signals) pass. */
        if (!sender || strcmp(sender, BUS_DRIVER_NAME) == 0 || !sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        queued = queued_write(a);
        if (queued >= BUS_API_RELEASE_AFTER_QUEUED)
                bus_api_release_arm(a);
        else if (a->release_pending && queued == 0) {
                /* The next call after a client left, with nothing waiting: at once, rather than
                 * when the timer comes. */
                a->release_pending = false;
                a->ops->release_memory(a->core);
        }

        r = bus_api_client(a, m, &cl, error);
        if (r < 0)
                return r;
        bytes = reply_estimate_bytes(a, m);
        if (!bus_client_take_replies(cl, bytes, clock_now_ns(CLOCK_MONOTONIC)))
                return bus_timeconv_error_setf(error, -EDQUOT, "the answers to a client are limited to %u KiB at "
                                               "once and %u KiB/s (this one: about %llu bytes): read them, "
                                               "and ask again later", BUS_CLIENT_REPLIES_BURST_BYTES >> 10,
                                               BUS_CLIENT_REPLIES_BYTES_PER_S >> 10, (unsigned long long) bytes);

        /* sd-bus sends its introspection at once, where ListDomains' answer waits its turn
         * (bus-api-jobs.h): it goes only when nothing else waits to be sent, so that it is never
         * queued ahead of someone's small answer. */
        if (is_call(m, "org.freedesktop.DBus.Introspectable", "Introspect") && bus_api_sending(a, 0))
                return bus_timeconv_error_setf(error, -EDQUOT, "the daemon is sending other answers: "
                                               "introspect again later");
        /* Each GetSharedTable answer holds a copy of the table's fd until the bus daemon takes it:
         * a bus daemon that reads the daemon slowly must not make it hold hundreds. */
        if (is_call(m, BUS_API_INTERFACE, "GetSharedTable") && queued_write(a) >= BUS_API_FD_REPLIES_QUEUED_MAX)
                return bus_timeconv_error_setf(error, -EDQUOT, "the daemon has %d answers waiting to be sent: "
                                               "ask for the shared table again later",
                                               BUS_API_FD_REPLIES_QUEUED_MAX);
        return 0;
}

int bus_api_filter_add(BusApi *a) {
        return sd_bus_add_filter(a->bus, &a->filter_slot, on_call, a);
}

void bus_api_filter_done(BusApi *a) {
        a->release_source = sd_event_source_disable_unref(a->release_source);
        a->filter_slot = sd_bus_slot_unref(a->filter_slot);
}
