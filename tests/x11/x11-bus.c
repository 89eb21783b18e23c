/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "time-util.h"
#include "x11-bus.h"

/* Re-read ListDomains at most this often while waiting for a state that sends no signal. */
#define POLL_INTERVAL_USEC (UINT64_C(50) * 1000)

static void copy_string(char *dst, size_t size, const char *src) {
        snprintf(dst, size, "%s", src);
}

/* One a{sv} entry of a domain into d. */
static int read_property(sd_bus_message *m, const char *key, const char *contents, void *userdata) {
        X11BusDomain *d = userdata;
        const char *s;
        int r;

        if (strcmp(key, "available") == 0 && strcmp(contents, "b") == 0) {
                int b;

                r = sd_bus_message_read(m, "v", "b", &b);
                d->available = b;
        } else if (strcmp(key, "uncertainty_ns") == 0 && strcmp(contents, "t") == 0)
                r = sd_bus_message_read(m, "v", "t", &d->uncertainty_ns);
        else if (strcmp(key, "last_calibrated_ns") == 0 && strcmp(contents, "x") == 0)
                r = sd_bus_message_read(m, "v", "x", &d->last_calibrated_ns);
        else if (strcmp(key, "mode_refresh_hz") == 0 && strcmp(contents, "d") == 0)
                r = sd_bus_message_read(m, "v", "d", &d->mode_refresh_hz);
        else if (strcmp(key, "probes") == 0 && strcmp(contents, "t") == 0) {
                uint64_t t;

                /* Typed on the bus (ListDomains' "probes" t); kept as text here. */
                r = sd_bus_message_read(m, "v", "t", &t);
                if (r >= 0)
                        snprintf(d->probes, sizeof(d->probes), "%" PRIu64, t);
        } else if ((strcmp(key, "rtt_min_ns") == 0 || strcmp(key, "probe_cpu_ns") == 0) &&
                   strcmp(contents, "x") == 0) {
                int64_t x;

                r = sd_bus_message_read(m, "v", "x", &x);
                if (r >= 0 && strcmp(key, "rtt_min_ns") == 0)
                        snprintf(d->rtt_min_ns, sizeof(d->rtt_min_ns), "%" PRIi64, x);
                else if (r >= 0)
                        snprintf(d->probe_cpu_ns, sizeof(d->probe_cpu_ns), "%" PRIi64, x);
        } else if (strcmp(contents, "s") == 0) {
                r = sd_bus_message_read(m, "v", "s", &s);
                if (r >= 0 && strcmp(key, "verdict") == 0)
                        copy_string(d->verdict, sizeof(d->verdict), s);
                else if (r >= 0 && strcmp(key, "same_as") == 0)
                        copy_string(d->same_as, sizeof(d->same_as), s);
                else if (r >= 0 && strcmp(key, "reason") == 0)
                        copy_string(d->reason, sizeof(d->reason), s);
                else if (r >= 0 && strcmp(key, "verdict_reason") == 0)
                        copy_string(d->verdict_reason, sizeof(d->verdict_reason), s);
                else if (r >= 0 && strcmp(key, "crtc") == 0)
                        copy_string(d->crtc, sizeof(d->crtc), s);
        } else
                r = sd_bus_message_skip(m, "v");
        return r;
}

int x11_bus_domain(sd_bus *bus, const char *name, X11BusDomain *ret) {
        X11BusDomain d = { .listed = true };
        int r;

        r = clock_domain_properties(bus, name, read_property, &d, NULL, 0);
        if (r < 0)
                return r;
        *ret = d;
        return 0;
}

static int on_domains_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        X11BusWatch *w = userdata;

        w->changes++;
        return 0;
}

int x11_bus_watch(sd_bus *bus, X11BusWatch *w) {
        *w = (X11BusWatch) {};
        return sd_bus_match_signal(bus, &w->slot, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                   "DomainsChanged", on_domains_changed, w);
}

void x11_bus_unwatch(X11BusWatch *w) {
        w->slot = sd_bus_slot_unref(w->slot);
}

/* Processes what is queued, then waits up to timeout_usec for more. */
static int pump(sd_bus *bus, uint64_t timeout_usec) {
        int r;

        while ((r = sd_bus_process(bus, NULL)) > 0)
                ;
        if (r < 0)
                return r;
        r = sd_bus_wait(bus, timeout_usec);
        return r < 0 && r != -EINTR ? r : 0;
}

int x11_bus_wait_changed(sd_bus *bus, X11BusWatch *w, unsigned since, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        for (;;) {
                int64_t left_ns;
                int r;

                while ((r = sd_bus_process(bus, NULL)) > 0)
                        ;
                if (r < 0)
                        return r;
                if (w->changes > since)
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_wait(bus, (uint64_t) left_ns / 1000);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

int x11_bus_wait_for(sd_bus *bus, const char *name, X11BusCondition cond, void *userdata, int timeout_ms,
                     X11BusDomain *ret) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        X11BusDomain d = {};
        int r;

        for (;;) {
                r = x11_bus_domain(bus, name, &d);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (ret)
                        *ret = d;
                if (r >= 0 && cond(&d, userdata))
                        return 0;
                if (clock_now_ns(CLOCK_MONOTONIC) >= deadline_ns)
                        return -ETIMEDOUT;
                r = pump(bus, POLL_INTERVAL_USEC);
                if (r < 0)
                        return r;
        }
}
