/* SPDX-License-Identifier: MIT */

/* libtimeconv's application clocks and what a handle hears, against the real timeconvd on a
 * private bus: the daemon's message kept per handle (timeconv_last_error_message()), a domain
 * pushed with timeconv_push_snapshot() that another handle sees appear (DomainsChanged names
 * it), lists with its owner (a typed property) and converts with the truth inside the bound,
 * refusals with their reasons, the domain gone with the handle that owns it; and the daemon's
 * signals forged by another client (unicast Discontinuity and DomainsChanged), which the
 * handle ignores because they do not come from the daemon's unique name.
 * usage: test-live-appclock TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness-tap.h"
#include "live-wait.h"
#include "tap.h"
#include "timeconv.h"

#define WAIT_MS 10000
#define APP_OFFSET_NS INT64_C(1000000000)

typedef struct Seen {
        unsigned discontinuities;
        unsigned domains_changed;
        unsigned added, removed;        /* audio0 in DomainsChanged, 0 or 1 */
        bool forged;
} Seen;

static bool in_list(const char *const *list, const char *name) {
        for (; list && *list; list++)
                if (strcmp(*list, name) == 0)
                        return true;
        return false;
}

static void on_event(const struct timeconv_event *e, void *userdata) {
        Seen *s = userdata;

        if (e->type == TIMECONV_EVENT_DISCONTINUITY) {
                s->discontinuities++;
                s->forged |= e->domain && strcmp(e->domain, "forged") == 0;
        } else if (e->type == TIMECONV_EVENT_DOMAINS_CHANGED) {
                s->domains_changed++;
                s->added |= in_list(e->added, "audio0");
                s->removed |= in_list(e->removed, "audio0");
                s->forged |= in_list(e->added, "forged");
        }
}

static const struct timeconv_domain *find(struct timeconv_domain **list, const char *name) {
        for (struct timeconv_domain **d = list; d && *d; d++)
                if (strcmp(timeconv_domain_get_name(*d), name) == 0)
                        return *d;
        return NULL;
}


static void check_messages(struct timeconv *e, struct timeconv *other) {
        struct timeconv_domain **list = NULL;
        const char *m;
        int64_t v, u;

        ok(timeconv_last_error_message(e) == NULL, "a new handle has no message");
        is_int(timeconv_now(e, "REALTIME", &v, &u), -EINVAL, "now(\"REALTIME\"): -EINVAL");
        m = timeconv_last_error_message(e);
        ok(m && strstr(m, "invalid byte 0x52 at offset 0") && strstr(m, "(allowed: a-z 0-9 _ . : -)"),
           "and the daemon's message says which byte: %s", m ?: "(none)");
        ok(timeconv_last_error_message(other) == NULL, "another handle's message is its own (none)");
        is_int(timeconv_convert(e, "monotonic", "nope", 1, &v, &u), -ENOENT, "convert to \"nope\": -ENOENT");
        m = timeconv_last_error_message(e);
        ok(m && strstr(m, "unknown domain 'nope'"), "the message names the domain: %s", m ?: "(none)");
        is_int(timeconv_list_domains(e, &list), 0, "a call that succeeds");
        ok(timeconv_last_error_message(e) == NULL, "clears the message");
        timeconv_domains_free(list);
        ok(timeconv_last_error_message(NULL) == NULL, "NULL handle: NULL");
}

/* One bracketed snapshot of audio0 = monotonic + APP_OFFSET_NS. */
static int push_audio(struct timeconv *tc) {
        struct timeconv_reading r[3];

        r[0] = (struct timeconv_reading) { "monotonic", clock_now_ns(CLOCK_MONOTONIC) };
        r[1] = (struct timeconv_reading) { "audio0", clock_now_ns(CLOCK_MONOTONIC) + APP_OFFSET_NS };
        r[2] = (struct timeconv_reading) { "monotonic", clock_now_ns(CLOCK_MONOTONIC) };
        return timeconv_push_snapshot(tc, r, 3);
}

static void check_push(struct timeconv *app, struct timeconv *observer, Seen *seen) {
        struct timeconv_domain **list = NULL;
        const char *owner = NULL;
        int64_t not_int;
        struct timeconv_reading bad[2];
        int64_t x, v, u, lo, hi;
        int r = 0;

        is_int(push_audio(app), 0, "timeconv_push_snapshot(): monotonic, audio0, monotonic");
        is_int(live_wait(observer, &seen->added, 1, WAIT_MS), 0,
               "another handle hears DomainsChanged with audio0 added");
        for (int i = 0; i < 3 && r >= 0; i++)
                r = push_audio(app);
        is_int(r, 0, "three more snapshots");

        is_int(timeconv_list_domains(observer, &list), 0, "the observer lists the domains");
        r = timeconv_domain_get_property_string(find(list, "audio0"), "owner", &owner);
        ok(r == 0 && owner && owner[0] == ':', "audio0's \"owner\" is a typed string, a unique name (%s)",
           owner ? owner : "none");
        ok(timeconv_domain_get_property_int(find(list, "audio0"), "owner", &not_int) == -EINVAL &&
           timeconv_domain_get_property_string(find(list, "audio0"), "no_such_key", &owner) == -ENOENT,
           "a property read as another type: -EINVAL; one the domain lacks: -ENOENT");
        r = 0;
        timeconv_domains_free(list);

        x = clock_now_ns(CLOCK_MONOTONIC) + APP_OFFSET_NS;
        lo = x - APP_OFFSET_NS;
        r = timeconv_convert(observer, "audio0", "monotonic", x, &v, &u);
        hi = clock_now_ns(CLOCK_MONOTONIC);
        is_int(r, 0, "the observer converts audio0 to monotonic");
        ok(r == 0 && v + u >= lo - 1000000 && v - u <= hi, "the truth (%" PRIi64 ") lies within %" PRIi64 " \xc2\xb1%"
           PRIi64, lo, v, u);

        bad[0] = (struct timeconv_reading) { "monotonic", clock_now_ns(CLOCK_MONOTONIC) };
        bad[1] = (struct timeconv_reading) { "audio0", 5 };
        is_int(timeconv_push_snapshot(observer, bad, 2), -EEXIST, "another handle pushing to audio0: -EEXIST");
        ok(timeconv_last_error_message(observer) != NULL, "with the daemon's reason: %s",
           timeconv_last_error_message(observer) ?: "(none)");
        bad[0] = (struct timeconv_reading) { "nope1", 1 };
        bad[1] = (struct timeconv_reading) { "nope2", 2 };
        is_int(timeconv_push_snapshot(app, bad, 2), -EINVAL, "a snapshot without a known domain: -EINVAL");
        ok(timeconv_last_error_message(app) != NULL, "with the daemon's reason: %s",
           timeconv_last_error_message(app) ?: "(none)");
        is_int(timeconv_push_snapshot(app, bad, 1), -EINVAL, "one reading: -EINVAL");
        is_int(timeconv_push_snapshot(NULL, bad, 2), -EINVAL, "NULL handle: -EINVAL");
}

/* The unique names on the bus. */
static int list_names(sd_bus *bus, char ***ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "ListNames", NULL, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read_strv(reply, ret);
        return r < 0 ? r : 0;
}

static void strv_free(char **list) {
        for (size_t i = 0; list && list[i]; i++)
                free(list[i]);
        free(list);
}

static int on_pong(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(bool *) userdata = true;
        return 0;
}

/* Forgeries of the daemon's signals, sent by b to dest alone, then a Ping: the bus keeps the
 * order of one sender's messages to one receiver, so the handle has seen them by the Pong. */
static int forge(sd_bus *b, const char *dest, struct timeconv *tc, bool *pong) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *d = NULL, *c = NULL;
        const char *added[] = { "forged", NULL }, *none[] = { NULL };
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
        int r;

        r = sd_bus_message_new_signal(b, &d, "/org/timeconv/Clock1", "org.timeconv.Clock1", "Discontinuity");
        if (r >= 0)
                r = sd_bus_message_set_destination(d, dest);
        if (r >= 0)
                r = sd_bus_message_append(d, "sxxs", "forged", INT64_C(1), INT64_C(2), "step");
        if (r >= 0)
                r = sd_bus_send(b, d, NULL);
        if (r >= 0)
                r = sd_bus_message_new_signal(b, &c, "/org/timeconv/Clock1", "org.timeconv.Clock1", "DomainsChanged");
        if (r >= 0)
                r = sd_bus_message_set_destination(c, dest);
        if (r >= 0)
                r = sd_bus_message_append_strv(c, (char **) added);
        if (r >= 0)
                r = sd_bus_message_append_strv(c, (char **) none);
        if (r >= 0)
                r = sd_bus_message_append_strv(c, (char **) none);
        if (r >= 0)
                r = sd_bus_send(b, c, NULL);
        if (r >= 0)
                r = sd_bus_call_method_async(b, NULL, dest, "/", "org.freedesktop.DBus.Peer", "Ping", on_pong, pong,
                                             NULL);
        while (r >= 0 && !*pong) {
                struct pollfd p[2] = {
                        { .fd = timeconv_get_fd(tc), .events = POLLIN },
                        { .fd = sd_bus_get_fd(b), .events = sd_bus_get_events(b) },
                };

                if (clock_now_ns(CLOCK_MONOTONIC) > deadline_ns)
                        return -ETIMEDOUT;
                if (timeconv_process(tc) < 0)
                        return -EIO;
                while ((r = sd_bus_process(b, NULL)) > 0)
                        ;
                if (r >= 0 && !*pong && poll(p, 2, 100) < 0 && errno != EINTR)
                        r = -errno;
        }
        return r < 0 ? r : 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
        struct timeconv *app = NULL, *observer = NULL, *errors = NULL;
        struct timeconv_domain **list = NULL;
        char **before = NULL, **after = NULL;
        const char *observer_name = NULL;
        bool pong = false;
        Seen seen = {};
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        r = harness_tap_start(argv[1], NULL, &h, &b);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &app);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &errors);
        if (r >= 0)
                r = list_names(b, &before);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &observer);
        if (r >= 0)
                r = timeconv_set_event_handler(observer, on_event, &seen);
        if (r >= 0)
                r = timeconv_list_domains(observer, &list);
        if (r >= 0)
                r = list_names(b, &after);
        is_int(r, 0, "three handles and a raw client connect");
        if (r < 0)
                return done_testing();
        timeconv_domains_free(list);
        for (size_t i = 0; after[i]; i++)
                if (after[i][0] == ':' && !in_list((const char *const *) before, after[i]))
                        observer_name = after[i];

        check_messages(errors, observer);
        check_push(app, observer, &seen);

        ok(observer_name != NULL, "the observer's unique name is known (%s)", observer_name ?: "?");
        if (observer_name) {
                unsigned discontinuities = seen.discontinuities, changes = seen.domains_changed;

                is_int(forge(b, observer_name, observer, &pong), 0,
                       "a client sends the observer a unicast Discontinuity and DomainsChanged, then a Ping");
                ok(!seen.forged && seen.discontinuities == discontinuities && seen.domains_changed == changes,
                   "the handle reports neither: they do not come from the daemon's unique name");
        }

        app = timeconv_free(app);
        is_int(live_wait(observer, &seen.removed, 1, WAIT_MS), 0,
               "the owner's handle closes: DomainsChanged with audio0 removed");

        strv_free(before);
        strv_free(after);
        timeconv_free(observer);
        timeconv_free(errors);
        return done_testing();
}
