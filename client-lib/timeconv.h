/* SPDX-License-Identifier: MIT */
#ifndef TIMECONV_H
#define TIMECONV_H

/* libtimeconv: convert timestamps between clock domains.
 *
 * This header is C89-clean (it is compiled with -std=c89 -pedantic -Werror in the test suite).
 * Values are int64_t, from <stdint.h>, which every C89 toolchain still in use provides; a
 * caller's own int64_t then passes by pointer without a cast.
 *
 * Every function that can fail returns 0 or a negative errno:
 *   -ENOENT   unknown domain (or, when loading, no such file)
 *   -ENOLINK  no path between the two domains
 *   -ERANGE   the result does not fit in 64 bits, or the value is outside the domain's range
 *   -EINVAL   a bad argument (NULL, unknown mode)
 *   -EBADMSG  a malformed snapshot file (details in struct timeconv_error)
 *   -ENOMEM   out of memory
 * Out-parameters named ret_* are written only on success, except ret_error, which is written
 * only on failure. The library keeps no global state and never prints. */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Offline conversion modes (see timeconv_snapshots_convert()). */
enum {
        /* Perfetto trace processor's semantics: the latest snapshot at or before the value,
         * else the first; each hop a constant offset; the path with the fewest hops. */
        TIMECONV_MODE_NEAREST = 0,
        /* Interpolates between the snapshots around the value when the rate between them is
         * plausible; NEAREST across a discontinuity. */
        TIMECONV_MODE_DRIFT = 1
};

#define TIMECONV_ERROR_MESSAGE_MAX 256

/* Where and why a snapshot file was refused. line and column are 1-based; 0 when unknown
 * (an I/O error). The message names the element, e.g. "snapshots[3].clocks[1].ts: not an
 * integer", and is always NUL-terminated. */
struct timeconv_error {
        unsigned line;
        unsigned column;
        char message[TIMECONV_ERROR_MESSAGE_MAX];
};

/* A set of clock snapshots loaded from a JSON snapshot file, immutable once loaded: any number
 * of threads may convert through one at the same time. */
struct timeconv_snapshots;

/* The library's version, e.g. "0.1.0". */
const char *timeconv_version(void);

/* Loads a JSON snapshot file:
 *   { "snapshots": [ { "clocks": [ { "domain": "boottime", "ts": 2000 },
 *                                  { "domain": "monotonic", "ts": 1000 } ] } ],
 *     "domains": [ { "name": "gpu0", "unit": "ticks", "period_ns": 52.083, "wrap_bits": 0 } ] }
 * "domains" is optional. Domain names are up to 63 bytes; up to 256 domains and 1,000,000
 * snapshots. Errors: -EBADMSG (malformed, see *ret_error), -errno of the read, -ENOMEM. */
int timeconv_snapshots_load(const char *path, struct timeconv_snapshots **ret,
                            struct timeconv_error *ret_error);

/* The same, from size bytes in memory (no NUL needed). */
int timeconv_snapshots_load_buffer(const char *data, size_t size, struct timeconv_snapshots **ret,
                                   struct timeconv_error *ret_error);

/* Accepts NULL; returns NULL. */
struct timeconv_snapshots *timeconv_snapshots_free(struct timeconv_snapshots *snapshots);

/* The number of domains in the file, and the name of each (NULL past the end). */
size_t timeconv_snapshots_count_domains(const struct timeconv_snapshots *snapshots);
const char *timeconv_snapshots_domain_name(const struct timeconv_snapshots *snapshots,
                                           size_t index);

/* Converts value, in the unit of domain from, to domain to. ret_uncertainty_ns (may be NULL)
 * bounds the error of the result, in ns. Does not allocate. */
int timeconv_snapshots_convert(const struct timeconv_snapshots *snapshots, int mode,
                               const char *from, const char *to, int64_t value,
                               int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* A short English text for a negative errno returned by this library ("unknown domain",
 * "no path between the domains", ...); never NULL. */
const char *timeconv_strerror(int error);

#ifdef __cplusplus
}
#endif

#endif
