/* SPDX-License-Identifier: MIT */

/* The live handle: one bus connection, the choice between the shared table and D-Bus for each
 * request, and the signals that tell the handle the daemon restarted (NameOwnerChanged), its
 * domains changed, or a clock stepped. */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "cleanup.h"
#include "live-internal.h"
#include "time-util.h"
#include "timeconv-internal.h"

#define MATCH_OWNER \
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus'," \
        "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" BUS_API_SERVICE "'"
#define MATCH_DAEMON \
        "type='signal',sender='" BUS_API_SERVICE "',path='" BUS_API_OBJECT "',interface='" BUS_API_INTERFACE "'"

void live_emit(struct timeconv *tc, const struct timeconv_event *event) {
        if (tc->handler)
                tc->handler(event, tc->userdata);
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct timeconv *tc = userdata;
        const char *name, *old_owner, *new_owner, *sender = sd_bus_message_get_sender(m);

        /* sd-bus lets any unique name match sender='org.freedesktop.DBus', and a client can send
         * us this signal unicast: believe the driver only. */
        if (!sender || strcmp(sender, "org.freedesktop.DBus") != 0 ||
            sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 ||
            strcmp(name, BUS_API_SERVICE) != 0)
                return 0;
        /* Whatever the old daemon published is no one's any more. */
        live_table_drop(tc);
        snprintf(tc->daemon_owner, sizeof(tc->daemon_owner), "%s", new_owner);
        tc->daemon_owner_known = strlen(new_owner) < sizeof(tc->daemon_owner);
        tc->owner_changes++;
        live_emit(tc, &(struct timeconv_event) { .type = TIMECONV_EVENT_DAEMON_CHANGED,
                                                 .daemon_running = new_owner[0] != 0 });
        return 0;
}

/* Whether m comes from the daemon itself. The match names org.timeconv.Clock1, but a well-known
 * name in a match does not stop a client from sending us a signal of that interface unicast:
 * only the unique name that owns the name is believed. */
static bool from_daemon(struct timeconv *tc, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m);

        if (!sender)
                return false;
        if (!tc->daemon_owner_known) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const char *owner = "";
                int r;

                r = sd_bus_call_method(tc->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner", &error, &reply, "s",
                                       BUS_API_SERVICE);

                if (r >= 0 && sd_bus_message_read(reply, "s", &owner) < 0)
                        return false;
                if (r < 0 && !sd_bus_error_has_name(&error, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                        return false;   /* unknown yet: ask again at the next signal */
                if (strlen(owner) >= sizeof(tc->daemon_owner))
                        return false;
                strcpy(tc->daemon_owner, owner);
                tc->daemon_owner_known = true;
        }
        return tc->daemon_owner[0] && strcmp(sender, tc->daemon_owner) == 0;
}

/* sd_bus_message_read_strv()'s lists. */
static void strv_freep(char ***p) {
        for (char **s = *p; s && *s; s++)
                free(*s);
        free(*p);
}

static int on_daemon_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(strv_freep) char **added = NULL, **removed = NULL, **changed = NULL;
        struct timeconv *tc = userdata;
        struct timeconv_event event = {};
        const char *domain;

        if (!from_daemon(tc, m))
                return 0;
        if (sd_bus_message_is_signal(m, BUS_API_INTERFACE, "Discontinuity")) {
                if (sd_bus_message_read(m, "sxx", &domain, &event.monotonic_ns, &event.step_ns) < 0)
                        return 0;
                /* An older daemon sent no kind. */
                if (sd_bus_message_read(m, "s", &event.kind) <= 0)
                        event.kind = NULL;
                event.type = TIMECONV_EVENT_DISCONTINUITY;
                event.domain = domain;
        } else if (sd_bus_message_is_signal(m, BUS_API_INTERFACE, "DomainsChanged")) {
                /* The daemon may hand out a new table for the new set: ask again. */
                live_table_drop(tc);
                event.type = TIMECONV_EVENT_DOMAINS_CHANGED;
                /* An older daemon said nothing of what changed; an empty list reads as NULL. */
                if (sd_bus_message_read_strv(m, &added) > 0 && sd_bus_message_read_strv(m, &removed) > 0 &&
                    sd_bus_message_read_strv(m, &changed) > 0) {
                        static const char *const none[] = { NULL };

                        event.added = added ? (const char *const *) added : none;
                        event.removed = removed ? (const char *const *) removed : none;
                        event.changed = changed ? (const char *const *) changed : none;
                }
        } else
                return 0;
        live_emit(tc, &event);
        return 0;
}

static void timeconv_freep(struct timeconv **tc) {
        timeconv_free(*tc);
}

/* A handle on *bus, which it takes over on success. */
static int handle_new(sd_bus **bus, struct timeconv **ret) {
        _cleanup_(timeconv_freep) struct timeconv *tc = NULL;
        int r;

        /* Aligned as its pair slots are (a cache line each): calloc() promises 16 bytes. */
        tc = aligned_alloc(_Alignof(struct timeconv), sizeof(*tc));
        if (!tc)
                return -ENOMEM;
        memset(tc, 0, sizeof(*tc));
        tc->bus = TAKE_PTR(*bus);
        tc->paths = TIMECONV_PATH_ANY;
        tc->checks_left = LIVE_CHECK_EVERY;
        live_table_drop(tc);

        r = sd_bus_add_match(tc->bus, &tc->owner_slot, MATCH_OWNER, on_owner_changed, tc);
        if (r < 0)
                return r;
        r = sd_bus_add_match(tc->bus, &tc->signal_slot, MATCH_DAEMON, on_daemon_signal, tc);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(tc);
        return 0;
}

TIMECONV_EXPORT int timeconv_open(struct timeconv **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = sd_bus_open_user(&bus);
        if (r < 0)
                return r;
        return handle_new(&bus, ret);
}

TIMECONV_EXPORT int timeconv_open_address(const char *address, struct timeconv **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (!address || !ret)
                return -EINVAL;
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r < 0)
                return r;
        r = sd_bus_set_bus_client(bus, 1);
        if (r < 0)
                return r;
        r = sd_bus_negotiate_fds(bus, 1);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        return handle_new(&bus, ret);
}

TIMECONV_EXPORT struct timeconv *timeconv_free(struct timeconv *tc) {
        if (!tc)
                return NULL;
        live_table_drop(tc);
        sd_bus_slot_unref(tc->owner_slot);
        sd_bus_slot_unref(tc->signal_slot);
        sd_bus_flush_close_unref(tc->bus);
        free(tc);
        return NULL;
}

/* The name of 0.1.0, kept so that its callers still build: the same function. */
TIMECONV_EXPORT struct timeconv *timeconv_close(struct timeconv *tc) {
        return timeconv_free(tc);
}

TIMECONV_EXPORT int timeconv_set_paths(struct timeconv *tc, int paths) {
        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (paths <= 0 || (paths & ~TIMECONV_PATH_ANY) != 0)
                return -EINVAL;
        tc->paths = paths;
        live_pairs_clear(tc);
        return 0;
}

TIMECONV_EXPORT int timeconv_last_path(const struct timeconv *tc) {
        return tc ? tc->last_path : TIMECONV_PATH_NONE;
}

TIMECONV_EXPORT int timeconv_domain_id(struct timeconv *tc, const char *name, unsigned *ret_id) {
        size_t len;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!name || !ret_id)
                return -EINVAL;
        len = strlen(name);
        if (len == 0 || len >= LIVE_NAME_MAX)
                return -EINVAL;
        for (unsigned i = 0; i < tc->n_ids; i++)
                if (strcmp(tc->ids[i].name, name) == 0) {
                        *ret_id = i;
                        return 0;
                }
        if (tc->n_ids >= LIVE_IDS_MAX)
                return -ENOSPC;
        memcpy(tc->ids[tc->n_ids].name, name, len + 1);
        tc->ids[tc->n_ids].table_index = SIZE_MAX;
        tc->ids[tc->n_ids].needs_hint = true;
        live_table_invalidate(tc);
        *ret_id = tc->n_ids++;
        return 0;
}

TIMECONV_EXPORT int timeconv_set_event_handler(struct timeconv *tc, timeconv_event_handler handler,
                                               void *userdata) {
        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        tc->handler = handler;
        tc->userdata = userdata;
        return 0;
}

TIMECONV_EXPORT int timeconv_get_fd(struct timeconv *tc) {
        return tc ? sd_bus_get_fd(tc->bus) : -EINVAL;
}

TIMECONV_EXPORT int timeconv_process(struct timeconv *tc) {
        int r;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        r = live_dispatch(tc);
        return r < 0 ? live_bus_errno(NULL, r) : 0;
}

/* Between table conversions, now and then: has the daemon restarted (the bus says so) or
 * stopped publishing (killed or stuck, the table's heartbeat says so)? */
void live_check_bus(struct timeconv *tc) {
        struct pollfd p = { .fd = sd_bus_get_fd(tc->bus), .events = POLLIN };
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);

        tc->checks_left = LIVE_CHECK_EVERY;
        if (now_ns - tc->polled_ns >= LIVE_POLL_INTERVAL_NS || now_ns < tc->polled_ns) {
                tc->polled_ns = now_ns;
                if (p.fd >= 0 && poll(&p, 1, 0) > 0)
                        (void) live_dispatch(tc);
        }
        if (!live_table_alive(tc, now_ns))
                live_table_drop(tc);
}

TIMECONV_EXPORT int timeconv_list_domains(struct timeconv *tc, struct timeconv_domain ***ret) {
        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!ret)
                return -EINVAL;
        return live_bus_list_domains(tc, ret);
}

TIMECONV_EXPORT int timeconv_export_snapshots(struct timeconv *tc, char **ret_json) {
        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!ret_json)
                return -EINVAL;
        return live_bus_export(tc, ret_json);
}
