/* SPDX-License-Identifier: MIT */
#pragma once

/* What daemon and clients share of the org.timeconv.Clock1 contract (org.timeconv.Clock1.xml),
 * compiled into the small bus_api_errors library: names, limits, the domain-name rule, and the
 * named errors with their errno values.
 *
 * sd-bus turns an errno into a generic name (System.Error.ENOENT, ...) and never consults error
 * maps in that direction, so the daemon sets our names itself with bus_timeconv_error_setf().
 * A client registers the map once with bus_timeconv_errors_register(); then
 * sd_bus_error_get_errno() and sd_bus_call()'s return value give back the errno below. */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#define BUS_API_SERVICE   "org.timeconv.Clock1"
#define BUS_API_OBJECT    "/org/timeconv/Clock1"
#define BUS_API_INTERFACE "org.timeconv.Clock1"

/* A domain name is 1..63 bytes of [a-z0-9_.:-]. */
#define BUS_API_DOMAIN_NAME_MAX 63

/* ConvertMany answers InvalidArgs beyond this many values: 4 KiB in, 8 KiB out. The bus
 * daemon reads our connection a few KiB per pass of its loop, so every byte of a reply on it is
 * a wait for the small answers behind it: a stream of calls at 16384 values (256 KiB replies)
 * made the others' p99 6-13 times their unloaded one (bench-hostile, attack 4), at 512 0.4-1.2
 * times in the same minutes. A larger batch goes in a memfd (ConvertManyMemfd), whose bytes the
 * bus never carries. */
#define BUS_API_CONVERT_MANY_MAX 512

/* ConvertManyMemfd: at most this many values a call (a memfd of 1.5 MiB): the daemon's munmap()
 * of a call's memfd is work it cannot slice, 0.2-0.3 ms at 1.5 MiB here, 5-11 ms at 24 MiB
 * (2^20 values), every page of the mapping dropped. The caller's memfd
 * holds its count values (int64) at offset 0; the daemon writes the answers (int64) at 8 * count
 * and their bounds in ns (uint64) at 16 * count. It must be sealed against shrinking and growing
 * (F_SEAL_SHRINK | F_SEAL_GROW), so that the daemon's mapping can never fault, and at least
 * BUS_API_MEMFD_BYTES(count) long. */
#define BUS_API_CONVERT_MANY_MEMFD_MAX (1 << 16)
#define BUS_API_MEMFD_BYTES(count) ((count) * 3 * sizeof(int64_t))

/* PushSnapshot's limits (the XML says what each means). Memory stays bounded whatever clients
 * do: one client's snapshots land in a fixed-size history, and domains are capped. */
#define BUS_API_SNAPSHOT_CLOCKS_MIN 2
#define BUS_API_SNAPSHOT_CLOCKS_MAX 16                  /* InvalidArgs beyond */
#define BUS_API_SNAPSHOT_SPREAD_MAX_NS 1000000000LL     /* between its known readings */
#define BUS_API_APP_DOMAINS_PER_CLIENT_MAX 8            /* QuotaExceeded beyond */
#define BUS_API_APP_DOMAINS_MAX 48                      /* all clients together */
#define BUS_API_SNAPSHOTS_PER_S 100                     /* per client, sustained */
#define BUS_API_SNAPSHOTS_BURST 20                      /* per client, at once */

typedef enum BusNameProblem {
        BUS_NAME_OK,
        BUS_NAME_EMPTY,
        BUS_NAME_TOO_LONG,
        BUS_NAME_BAD_CHAR,
} BusNameProblem;

/* Checks a domain name. On BUS_NAME_BAD_CHAR, *ret_offset (if not NULL) is the index of the
 * first offending byte. */
BusNameProblem bus_domain_name_check(const char *name, size_t *ret_offset);

static inline bool bus_domain_name_is_valid(const char *name) {
        return bus_domain_name_check(name, NULL) == BUS_NAME_OK;
}

#define BUS_ERROR_UNKNOWN_DOMAIN    "org.timeconv.Clock1.Error.UnknownDomain"    /* ENOENT */
#define BUS_ERROR_NO_PATH           "org.timeconv.Clock1.Error.NoPath"           /* ENOLINK */
#define BUS_ERROR_UNAVAILABLE       "org.timeconv.Clock1.Error.Unavailable"      /* ENODEV, ENODATA */
#define BUS_ERROR_OUT_OF_RANGE      "org.timeconv.Clock1.Error.OutOfRange"       /* ERANGE */
/* A malformed argument is the standard name, as timedated answers it: sd-bus gives the same name
 * to a call of the wrong signature, so one name means EINVAL whichever layer refused. */
#define BUS_ERROR_INVALID_ARGUMENT  SD_BUS_ERROR_INVALID_ARGS                     /* EINVAL */
#define BUS_ERROR_QUOTA_EXCEEDED    "org.timeconv.Clock1.Error.QuotaExceeded"    /* EDQUOT */
#define BUS_ERROR_NAME_TAKEN        "org.timeconv.Clock1.Error.NameTaken"        /* EEXIST */

/* Name -> errno, for sd_bus_error_add_map(). */
extern const sd_bus_error_map bus_timeconv_errors[];

/* Registers bus_timeconv_errors with sd-bus (process-wide, idempotent). Returns 0 or -errno. */
int bus_timeconv_errors_register(void);

/* Our error name for an errno (either sign), or NULL when it has none. */
const char *bus_timeconv_error_name(int error);

/* Sets *error to our name for the errno r with a formatted message, or, for an errno that has
 * no name of ours (ENOMEM, ...), to sd-bus's own translation with the same message. Returns
 * -|r|, ready for a method handler to return. */
int bus_timeconv_error_setf(sd_bus_error *error, int r, const char *format, ...)
        __attribute__((format(printf, 3, 4)));
