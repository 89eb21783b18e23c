/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "appclocks-client.h"
#include "clock-client.h"
#include "harness.h"

int ac_push(sd_bus *bus, const BusClockReading *clocks, size_t n, sd_bus_error *e) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                           "PushSnapshot");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sx)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "(sx)", clocks[i].name, clocks[i].value);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(bus, m, 30 * UINT64_C(1000000), e, &reply);
        return r < 0 ? r : 0;
}

int ac_push2(sd_bus *bus, const char *known, int64_t known_value, const char *app, int64_t app_value,
             sd_bus_error *e) {
        const BusClockReading clocks[] = { { known, known_value }, { app, app_value } };

        return ac_push(bus, clocks, 2, e);
}

/* One property of a ListDomains entry into an AcDomain. */
static int read_property(sd_bus_message *m, const char *key, const char *contents, void *userdata) {
        AcDomain *d = userdata;
        const char *s;
        int b, r;

        if (strcmp(key, "available") == 0 || strcmp(key, "monotonic") == 0) {
                r = sd_bus_message_read(m, "v", "b", &b);
                if (strcmp(key, "available") == 0)
                        d->available = b;
                else
                        d->monotonic = b;
        } else if (strcmp(key, "owner") == 0) {
                r = sd_bus_message_read(m, "v", "s", &s);
                if (r >= 0)
                        snprintf(d->owner, sizeof(d->owner), "%s", s);
        } else
                r = sd_bus_message_skip(m, "v");
        return r;
}

/* Calls f(name, properties, userdata) for each entry of ListDomains. */
static int list_domains(sd_bus *bus, void (*f)(const char *, const AcDomain *, void *), void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ListDomains", NULL,
                               &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(ssa{sv})");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "ssa{sv}")) > 0) {
                AcDomain d = { .found = true };
                const char *name, *unit;

                r = sd_bus_message_read(reply, "ss", &name, &unit);
                if (r >= 0)
                        r = clock_read_properties(reply, read_property, &d);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        f(name, &d, userdata);
        }
        return r < 0 ? r : 0;
}

typedef struct Lookup {
        const char *name;
        AcDomain *found;
        size_t n_owned;
} Lookup;

static void on_entry(const char *name, const AcDomain *d, void *userdata) {
        Lookup *l = userdata;

        if (l->name && strcmp(name, l->name) == 0)
                *l->found = *d;
        if (d->owner[0])
                l->n_owned++;
}

int ac_domain(sd_bus *bus, const char *name, AcDomain *ret) {
        Lookup l = { .name = name, .found = ret };

        *ret = (AcDomain) {};
        return list_domains(bus, on_entry, &l);
}

int ac_count_owned(sd_bus *bus, size_t *ret) {
        AcDomain unused;
        Lookup l = { .found = &unused };
        int r;

        r = list_domains(bus, on_entry, &l);
        if (r < 0)
                return r;
        *ret = l.n_owned;
        return 0;
}

static int on_domains_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        AcSignals *s = userdata;

        s->domains_changed++;
        return 0;
}

static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        AcSignals *s = userdata;
        const char *domain;
        int64_t monotonic_ns, step_ns;

        if (sd_bus_message_read(m, "sxx", &domain, &monotonic_ns, &step_ns) < 0)
                return 0;
        snprintf(s->last_domain, sizeof(s->last_domain), "%s", domain);
        s->last_step_ns = step_ns;
        s->discontinuities++;
        return 0;
}

int ac_signals_watch(sd_bus *bus, AcSignals *s) {
        int r;

        *s = (AcSignals) {};
        r = sd_bus_match_signal(bus, &s->slots[0], BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                "DomainsChanged", on_domains_changed, s);
        if (r >= 0)
                r = sd_bus_match_signal(bus, &s->slots[1], BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                        "Discontinuity", on_discontinuity, s);
        return r < 0 ? r : 0;
}

void ac_signals_unwatch(AcSignals *s) {
        for (size_t i = 0; i < 2; i++)
                s->slots[i] = sd_bus_slot_unref(s->slots[i]);
}

int ac_wait(sd_bus *bus, const unsigned *counter, unsigned above, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        for (;;) {
                int64_t left_ns;
                int r;

                while ((r = sd_bus_process(bus, NULL)) > 0)
                        if (*counter > above)
                                return 0;
                if (r < 0)
                        return r;
                if (*counter > above)
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_wait(bus, (uint64_t) left_ns / 1000 + 1);
                if (r < 0)
                        return r;
        }
}

int64_t ac_truth_x(const AcTruth *t, int64_t r_ns) {
        __int128 d = (__int128) r_ns - t->r0_ns;

        return (int64_t) (t->x0_ns + d + d * t->ppb / 1000000000);
}

int64_t ac_truth_r(const AcTruth *t, int64_t x_ns) {
        __int128 d = (__int128) x_ns - t->x0_ns;

        return (int64_t) (t->r0_ns + d * 1000000000 / (1000000000 + t->ppb));
}

bool ac_holds(int64_t value, uint64_t uncertainty_ns, int64_t truth) {
        __int128 v = value, u = uncertainty_ns;

        return v + u >= (__int128) truth - 2 && v - u <= (__int128) truth + 2;
}

int ac_push_series(sd_bus *bus, const char *known, const char *app, const AcTruth *t, int64_t r_first_ns,
                   int64_t step_ns, int n) {
        int n_ok = 0;

        for (int i = 0; i < n; i++) {
                int64_t r_ns = r_first_ns + i * step_ns;

                if (ac_push2(bus, known, r_ns, app, ac_truth_x(t, r_ns), NULL) >= 0)
                        n_ok++;
        }
        return n_ok;
}

int ac_wait_listed(sd_bus *bus, AcSignals *s, const char *name, bool listed, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        for (;;) {
                unsigned changes = s->domains_changed;
                int64_t left_ns;
                AcDomain d;
                int r;

                /* A DomainsChanged from before may still be queued: look, then wait for the next. */
                r = ac_domain(bus, name, &d);
                if (r < 0)
                        return r;
                if (d.found == listed)
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = ac_wait(bus, &s->domains_changed, changes, (int) (left_ns / 1000000) + 1);
                if (r < 0)
                        return r;
        }
}

int ac_wait_owned(sd_bus *bus, AcSignals *s, size_t n, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        for (;;) {
                unsigned changes = s->domains_changed;
                int64_t left_ns;
                size_t owned;
                int r;

                r = ac_count_owned(bus, &owned);
                if (r < 0)
                        return r;
                if (owned == n)
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = ac_wait(bus, &s->domains_changed, changes, (int) (left_ns / 1000000) + 1);
                if (r < 0)
                        return r;
        }
}
