/* SPDX-License-Identifier: MIT */
#pragma once

/* The calls of org.timeconv.Clock1 as the integration tests and bench-bus make them, and the
 * truth they compare the answers with: readings of the kernel's clocks taken in the test. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-bus.h>

#define CLOCK_CALL_TIMEOUT_USEC (UINT64_C(60) * 1000000)

/* A reading of clock from bracketed by two of clock to (to, from, to): the truth of `to`
 * at from_ns lies in [to_lo_ns, to_hi_ns]. */
typedef struct Bracket {
        int64_t from_ns;
        int64_t to_lo_ns;
        int64_t to_hi_ns;
        /* How far a _COARSE clock of the pair trailed its fine clock at these reads (0 for
         * none): the daemon's bounds hold while the kernel keeps that lag within the domain's
         * lag_ns (ListDomains), and a stalled VM may not. */
        int64_t coarse_lag_ns;
} Bracket;

void bracket_read(clockid_t from, clockid_t to, Bracket *ret);

/* Whether value +- uncertainty_ns meets [lo, hi] (without overflow). */
bool bracket_holds(int64_t value, uint64_t uncertainty_ns, int64_t lo, int64_t hi);

/* The POSIX clock behind a domain name; -ENOENT for others. */
int clock_id_of_domain(const char *name, clockid_t *ret);

/* Each returns 0 or the negative errno sd_bus_call gave; error (may be NULL) gets the D-Bus
 * error. */
int clock_convert(sd_bus *bus, const char *from, const char *to, int64_t value, sd_bus_error *error,
                  int64_t *ret_value, uint64_t *ret_uncertainty_ns);
int clock_now(sd_bus *bus, const char *domain, sd_bus_error *error, int64_t *ret_value,
              uint64_t *ret_uncertainty_ns);

/* ret_values and ret_uncertainty_ns have room for n, or are NULL to drop the answers; *ret_n
 * is the number of answers (the caller checks it is n). */
int clock_convert_many(sd_bus *bus, const char *from, const char *to, const int64_t *values, size_t n,
                       sd_bus_error *error, int64_t *ret_values, uint64_t *ret_uncertainty_ns, size_t *ret_n);

/* Called for each property of a domain's ListDomains entry, the message at its variant (of
 * type contents), which it reads or skips. */
typedef int (*ClockPropertyReader)(sd_bus_message *m, const char *key, const char *contents, void *userdata);

/* Hands read each property of the a{sv} of a ListDomains entry that reply is at. */
int clock_read_properties(sd_bus_message *reply, ClockPropertyReader read, void *userdata);

/* Hands read the properties of name's ListDomains entry; its unit into ret_unit (may be NULL,
 * cut to unit_size). -ENOENT when name is not listed. */
int clock_domain_properties(sd_bus *bus, const char *name, ClockPropertyReader read, void *userdata,
                            char *ret_unit, size_t unit_size);

/* One property of name of the basic D-Bus type `type` into *ret (which has room for it): "b"
 * into an int, "t" into a uint64_t, ... -ENOENT when name or the property is not there (ret
 * untouched). */
int clock_domain_property(sd_bus *bus, const char *name, const char *key, char type, void *ret);

/* ExportSnapshots' JSON, malloc'ed. */
int clock_export_snapshots(sd_bus *bus, char **ret_json);

/* The domain names ListDomains gives, as a NULL-terminated malloc'ed array of malloc'ed
 * strings (free with clock_strv_free()). */
int clock_list_domains(sd_bus *bus, char ***ret_names);
bool clock_strv_contains(char *const *names, const char *name);
size_t clock_strv_length(char *const *names);
char **clock_strv_free(char **names);

static inline void clock_strv_freep(char ***names) {
        clock_strv_free(*names);
}
