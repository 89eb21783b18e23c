/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"

static const struct {
        const char *name;
        clockid_t id;
} posix_clocks[] = {
        { "realtime", CLOCK_REALTIME },
        { "realtime_coarse", CLOCK_REALTIME_COARSE },
        { "monotonic", CLOCK_MONOTONIC },
        { "monotonic_coarse", CLOCK_MONOTONIC_COARSE },
        { "monotonic_raw", CLOCK_MONOTONIC_RAW },
        { "boottime", CLOCK_BOOTTIME },
        { "tai", CLOCK_TAI },
};

/* The clock a _COARSE clock follows, or -1. */
static clockid_t fine_of(clockid_t id) {
        return id == CLOCK_MONOTONIC_COARSE ? CLOCK_MONOTONIC : id == CLOCK_REALTIME_COARSE ? CLOCK_REALTIME : -1;
}

void bracket_read(clockid_t from, clockid_t to, Bracket *ret) {
        int64_t lo = clock_now_ns(to);
        int64_t x = clock_now_ns(from);
        int64_t hi = clock_now_ns(to);
        int64_t lag_ns = 0;

        /* Read after: the fine clock has only moved on, so this over-states the lag a little. */
        if (fine_of(from) >= 0)
                lag_ns = clock_now_ns(fine_of(from)) - x;
        if (fine_of(to) >= 0 && clock_now_ns(fine_of(to)) - lo > lag_ns)
                lag_ns = clock_now_ns(fine_of(to)) - lo;
        *ret = (Bracket) { .from_ns = x, .to_lo_ns = lo, .to_hi_ns = hi, .coarse_lag_ns = lag_ns };
}

bool bracket_holds(int64_t value, uint64_t uncertainty_ns, int64_t lo, int64_t hi) {
        /* In __int128 so that an absurd uncertainty cannot wrap around. */
        __int128 v = value, u = uncertainty_ns;

        return v + u >= lo && v - u <= hi;
}

int clock_id_of_domain(const char *name, clockid_t *ret) {
        for (size_t i = 0; i < sizeof(posix_clocks) / sizeof(posix_clocks[0]); i++)
                if (strcmp(posix_clocks[i].name, name) == 0) {
                        *ret = posix_clocks[i].id;
                        return 0;
                }
        return -ENOENT;
}

/* A method that answers (xt), a value and its bound: Convert, Now. */
static int call_value(sd_bus *bus, const char *method, sd_bus_error *error, int64_t *ret_value,
                      uint64_t *ret_uncertainty_ns, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int64_t v;
        uint64_t u;
        va_list ap;
        int r;

        va_start(ap, types);
        r = sd_bus_call_methodv(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, method, error, &reply,
                                types, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "xt", &v, &u);
        if (r < 0)
                return r;
        *ret_value = v;
        *ret_uncertainty_ns = u;
        return 0;
}

int clock_convert(sd_bus *bus, const char *from, const char *to, int64_t value, sd_bus_error *error,
                  int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        return call_value(bus, "Convert", error, ret_value, ret_uncertainty_ns, "ssx", from, to, value);
}

int clock_now(sd_bus *bus, const char *domain, sd_bus_error *error, int64_t *ret_value,
              uint64_t *ret_uncertainty_ns) {
        return call_value(bus, "Now", error, ret_value, ret_uncertainty_ns, "s", domain);
}

int clock_convert_many(sd_bus *bus, const char *from, const char *to, const int64_t *values, size_t n,
                       sd_bus_error *error, int64_t *ret_values, uint64_t *ret_uncertainty_ns, size_t *ret_n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const void *v, *u;
        size_t v_size, u_size;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                           "ConvertMany");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", from, to);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
        if (r >= 0)
                r = sd_bus_call(bus, m, CLOCK_CALL_TIMEOUT_USEC, error, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_read_array(reply, 'x', &v, &v_size);
        if (r >= 0)
                r = sd_bus_message_read_array(reply, 't', &u, &u_size);
        if (r < 0)
                return r;
        if (v_size != u_size || v_size > n * sizeof(int64_t))
                return -EBADMSG;
        if (v_size > 0 && ret_values)
                memcpy(ret_values, v, v_size);
        if (u_size > 0 && ret_uncertainty_ns)
                memcpy(ret_uncertainty_ns, u, u_size);
        *ret_n = v_size / sizeof(int64_t);
        return 0;
}

int clock_list_domains(sd_bus *bus, char ***ret_names) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(clock_strv_freep) char **names = NULL;
        size_t n = 0;
        const char *name, *unit;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ListDomains", NULL,
                               &reply, "");
        if (r < 0)
                return r;
        names = calloc(1, sizeof(char *));
        if (!names)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(ssa{sv})");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "ssa{sv}")) > 0) {
                char **grown;

                r = sd_bus_message_read(reply, "ss", &name, &unit);
                if (r >= 0)
                        r = sd_bus_message_skip(reply, "a{sv}");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
                grown = realloc(names, (n + 2) * sizeof(char *));
                if (!grown)
                        return -ENOMEM;
                names = grown;
                names[n] = strdup(name);
                names[n + 1] = NULL;
                if (!names[n])
                        return -ENOMEM;
                n++;
        }
        if (r < 0)
                return r;
        *ret_names = names;
        names = NULL;
        return 0;
}

bool clock_strv_contains(char *const *names, const char *name) {
        for (; names && *names; names++)
                if (strcmp(*names, name) == 0)
                        return true;
        return false;
}

size_t clock_strv_length(char *const *names) {
        size_t n = 0;

        while (names && names[n])
                n++;
        return n;
}

char **clock_strv_free(char **names) {
        for (char **p = names; p && *p; p++)
                free(*p);
        free(names);
        return NULL;
}

int clock_read_properties(sd_bus_message *reply, ClockPropertyReader read, void *userdata) {
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key, *contents;
                char type;

                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0)
                        r = sd_bus_message_peek_type(reply, &type, &contents);
                if (r >= 0)
                        r = read(reply, key, contents, userdata);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        return r;
}

int clock_domain_properties(sd_bus *bus, const char *name, ClockPropertyReader read, void *userdata,
                            char *ret_unit, size_t unit_size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        bool found = false;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ListDomains", NULL,
                               &reply, "");
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(ssa{sv})");
        while (r >= 0 && !found && (r = sd_bus_message_enter_container(reply, 'r', "ssa{sv}")) > 0) {
                const char *n, *unit;

                r = sd_bus_message_read(reply, "ss", &n, &unit);
                if (r >= 0 && strcmp(n, name) == 0) {
                        found = true;
                        if (ret_unit)
                                snprintf(ret_unit, unit_size, "%s", unit);
                        r = clock_read_properties(reply, read, userdata);
                } else if (r >= 0)
                        r = sd_bus_message_skip(reply, "a{sv}");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                return r;
        return found ? 0 : -ENOENT;
}

typedef struct OneProperty {
        const char *key;
        char type[2];
        void *value;
        bool found;
} OneProperty;

static int read_one(sd_bus_message *m, const char *key, const char *contents, void *userdata) {
        OneProperty *p = userdata;

        if (strcmp(key, p->key) != 0 || strcmp(contents, p->type) != 0)
                return sd_bus_message_skip(m, "v");
        p->found = true;
        return sd_bus_message_read(m, "v", p->type, p->value);
}

int clock_domain_property(sd_bus *bus, const char *name, const char *key, char type, void *ret) {
        OneProperty p = { .key = key, .type = { type }, .value = ret };
        int r;

        r = clock_domain_properties(bus, name, read_one, &p, NULL, 0);
        if (r < 0)
                return r;
        return p.found ? 0 : -ENOENT;
}

int clock_export_snapshots(sd_bus *bus, char **ret_json) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *json;
        char *copy;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ExportSnapshots", NULL,
                               &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &json);
        if (r < 0)
                return r;
        copy = strdup(json);
        if (!copy)
                return -ENOMEM;
        *ret_json = copy;
        return 0;
}
