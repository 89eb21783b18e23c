/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "steps.h"
#include "tap.h"

static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Steps *s = userdata;
        const char *domain, *kind;
        int64_t monotonic_ns, step_ns;
        StepEvent *e;

        if (sd_bus_message_read(m, "sxxs", &domain, &monotonic_ns, &step_ns, &kind) < 0)
                return 0;
        if (s->n_events == STEPS_EVENTS_MAX) {
                s->n_dropped++;
                return 0;
        }
        e = &s->events[s->n_events++];
        *e = (StepEvent) {
                .monotonic_ns = monotonic_ns,
                .step_ns = step_ns,
                .received_ns = clock_now_ns(CLOCK_MONOTONIC),
        };
        snprintf(e->domain, sizeof(e->domain), "%s", domain);
        snprintf(e->kind, sizeof(e->kind), "%s", kind);
        return 0;
}

/* Sets name to value for the daemon we are about to start; the old value goes to *ret_old. */
static int env_push(const char *name, const char *value, char **ret_old) {
        const char *old = getenv(name);

        *ret_old = old ? strdup(old) : NULL;
        if (old && !*ret_old)
                return -ENOMEM;
        return setenv(name, value, 1) < 0 ? -errno : 0;
}

static void env_pop(const char *name, char *old) {
        if (old)
                setenv(name, old, 1);
        else
                unsetenv(name);
        free(old);
}

static int start_daemon(Steps *s, const char *daemon, const char *shim, const char *const *args,
                        const char *socket_path) {
        _cleanup_free_ char *preload = NULL, *asan = NULL;
        char *old_preload = NULL, *old_socket = NULL, *old_asan = NULL;
        const char *p = getenv("LD_PRELOAD"), *a = getenv("ASAN_OPTIONS");
        int r;

        /* A sanitized daemon wants its runtime first in the list; the shim is not it. */
        if (asprintf(&preload, "%s%s%s", p && *p ? p : "", p && *p ? ":" : "", shim) < 0 ||
            asprintf(&asan, "%s%sverify_asan_link_order=0", a && *a ? a : "", a && *a ? ":" : "") < 0)
                return -ENOMEM;
        r = env_push("LD_PRELOAD", preload, &old_preload);
        if (r >= 0)
                r = env_push("TIMECONV_SHIM_SOCKET", socket_path, &old_socket);
        if (r >= 0)
                r = env_push("ASAN_OPTIONS", asan, &old_asan);
        if (r >= 0)
                r = harness_start_daemon(s->harness, daemon, args, HARNESS_READY_TIMEOUT_MS);
        env_pop("ASAN_OPTIONS", old_asan);
        env_pop("TIMECONV_SHIM_SOCKET", old_socket);
        env_pop("LD_PRELOAD", old_preload);
        return r;
}

int steps_start(const char *daemon, const char *shim, const char *const *args, Steps **ret) {
        _cleanup_(steps_freep) Steps *s = NULL;
        _cleanup_free_ char *socket_path = NULL;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->shim_fd = -1;
        r = harness_new(NULL, &s->harness);
        if (r < 0)
                return r;
        if (asprintf(&socket_path, "%s/shim.sock", s->harness->dir) < 0)
                return -ENOMEM;
        r = start_daemon(s, daemon, shim, args, socket_path);
        if (r < 0)
                return r;
        /* The shim listens from before main(): it is there once the daemon is ready. */
        r = shim_connect(socket_path, &s->shim_fd);
        if (r < 0)
                return r;
        r = harness_connect(s->harness, &s->bus);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(s->bus, &s->slot, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                "Discontinuity", on_discontinuity, s);
        if (r < 0)
                return r;

        *ret = s;
        s = NULL;
        return 0;
}

Steps *steps_free(Steps *s) {
        if (!s)
                return NULL;
        sd_bus_slot_unref(s->slot);
        sd_bus_flush_close_unref(s->bus);
        if (s->shim_fd >= 0)
                close(s->shim_fd);
        harness_free(s->harness);
        free(s);
        return NULL;
}

int steps_shim(Steps *s, ShimReply *ret, const char *fmt, ...) {
        _cleanup_free_ char *command = NULL;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&command, fmt, ap);
        va_end(ap);
        if (k < 0) {
                command = NULL;
                return -ENOMEM;
        }
        return shim_command(s->shim_fd, command, ret);
}

int steps_drain(Steps *s) {
        int r;

        do
                r = sd_bus_process(s->bus, NULL);
        while (r > 0);
        return r;
}

static bool find(const Steps *s, const char *domain, size_t since, size_t *ret_index) {
        for (size_t i = since; i < s->n_events; i++)
                if (strcmp(s->events[i].domain, domain) == 0) {
                        *ret_index = i;
                        return true;
                }
        return false;
}

int steps_wait(Steps *s, const char *domain, size_t since, int timeout_ms, size_t *ret_index) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        int r;

        for (;;) {
                int64_t left_ns;

                r = steps_drain(s);
                if (r < 0)
                        return r;
                if (find(s, domain, since, ret_index))
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_wait(s->bus, (uint64_t) left_ns / 1000);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

size_t steps_count(const Steps *s, const char *domain, size_t since) {
        size_t n = 0;

        for (size_t i = since; i < s->n_events; i++)
                n += !domain || strcmp(s->events[i].domain, domain) == 0;
        return n;
}

int steps_convert_check(Steps *s, const char *from, const char *to, int64_t value, int64_t lo, int64_t hi,
                        int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        int64_t v;
        uint64_t u;
        int r;

        r = clock_convert(s->bus, from, to, value, NULL, &v, &u);
        if (r < 0)
                return r;
        *ret_value = v;
        *ret_uncertainty_ns = u;
        return bracket_holds(v, u, lo, hi) ? 0 : -EDOM;
}

void steps_era_read(clockid_t id, int64_t offset_ns, StepsEra *ret) {
        StepsEra e = { .id = id, .offset_ns = offset_ns };

        bracket_read(CLOCK_MONOTONIC, id, &e.mono);
        bracket_read(id, CLOCK_MONOTONIC, &e.x);
        *ret = e;
}

bool steps_era_forward_holds(Steps *s, const char *domain, const StepsEra *e, uint64_t max_uncertainty_ns) {
        int64_t v, lo = e->mono.to_lo_ns + e->offset_ns, hi = e->mono.to_hi_ns + e->offset_ns;
        uint64_t u = 0;
        int r;

        r = steps_convert_check(s, "monotonic", domain, e->mono.from_ns, lo, hi, &v, &u);
        if (r == 0 && u <= max_uncertainty_ns)
                return true;
        if (r < 0 && r != -EDOM)
                diag("Convert(monotonic, %s, %" PRIi64 "): %s", domain, e->mono.from_ns, strerror(-r));
        else
                diag("Convert(monotonic, %s, %" PRIi64 ") = %" PRIi64 " +- %" PRIu64 ", truth in [%" PRIi64
                     ", %" PRIi64 "] (%+" PRIi64 " ns off), uncertainty allowed %" PRIu64, domain,
                     e->mono.from_ns, v, u, lo, hi, v < lo ? v - lo : v > hi ? v - hi : 0, max_uncertainty_ns);
        return false;
}

bool steps_era_inverse_holds(Steps *s, const char *domain, const StepsEra *e, int64_t later_ns,
                             uint64_t max_uncertainty_ns) {
        int64_t v, value = e->x.from_ns + e->offset_ns;
        int64_t lo = e->x.to_lo_ns + later_ns, hi = e->x.to_hi_ns + later_ns;
        uint64_t u = 0;
        int r;

        r = steps_convert_check(s, domain, "monotonic", value, lo, hi, &v, &u);
        if (r == 0 && u <= max_uncertainty_ns)
                return true;
        if (r < 0 && r != -EDOM)
                diag("Convert(%s, monotonic, %" PRIi64 "): %s", domain, value, strerror(-r));
        else
                diag("Convert(%s, monotonic, %" PRIi64 ") = %" PRIi64 " +- %" PRIu64 ", truth in [%" PRIi64
                     ", %" PRIi64 "] (%+" PRIi64 " ns off), uncertainty allowed %" PRIu64, domain, value, v,
                     u, lo, hi, v < lo ? v - lo : v > hi ? v - hi : 0, max_uncertainty_ns);
        return false;
}
