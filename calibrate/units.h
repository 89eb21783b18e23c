/* SPDX-License-Identifier: MIT */
#pragma once

/* A domain's unit: how its values map to nanoseconds, how they wrap, whether they truncate. */

#include <stdbool.h>
#include <stdint.h>

typedef enum UnitEncoding {
        UNIT_ENCODING_PLAIN,   /* value = count of units, wrapping at wrap_bits */
        UNIT_ENCODING_X11_US,  /* value = ((us / 1000) & 0xffffffff) * 1000 + us % 1000 */
} UnitEncoding;

typedef struct DomainUnit {
        double period_ns;       /* ns per unit: 1 (ns), 1000 (µs), 1e6 (ms), any > 0 for ticks */
        unsigned wrap_bits;     /* 0 or 64: no wrap; else values are taken mod 2^wrap_bits */
        bool truncates;         /* a reading x means the true time is in [x, x + 1) units */
        UnitEncoding encoding;
        /* A count names an event (a vblank counter: msc = n is the vblank at which it became n):
         * its time is a point, so converting from it carries no reading uncertainty, and a time
         * converts to the last event at or before it (floor), as for a truncating unit. */
        bool events;
} DomainUnit;

/* Ready-made units. */
extern const DomainUnit UNIT_NS;
extern const DomainUnit UNIT_MS_X11;    /* X server time: ms, 32-bit, truncated */
extern const DomainUnit UNIT_US_X11;    /* high-precision X time, ms part 32-bit, truncated to µs */

int unit_validate(const DomainUnit *u);          /* -EINVAL for period <= 0, NaN, wrap_bits > 64 */

/* The unwrapped integer count nearest to hint (hint is an unwrapped count in the same unit).
 * For UNIT_ENCODING_X11_US the ms part is unwrapped at 32 bits and hint is in µs. */
int unit_unwrap(const DomainUnit *u, int64_t raw, int64_t hint, int64_t *ret);

/* The wire form of an unwrapped count (mod 2^wrap_bits, or the X11 µs encoding). */
int unit_wrap(const DomainUnit *u, int64_t unwrapped, int64_t *ret);

/* Unwrapped count -> ns. For a truncating unit this is the start of the interval. */
int unit_to_ns(const DomainUnit *u, int64_t count, int64_t *ret_ns);

/* Whether a time converts to a count by floor (truncating units and event counters) rather than
 * to the nearest count. */
static inline bool unit_floors(const DomainUnit *u) {
        return u->truncates || u->events;
}

/* ns -> unwrapped count: floor for truncating units (what the clock would have read) and event
 * counters (the last event at or before), else nearest. ret_error_ns (optional) is
 * |count * period - ns|, the rounding error, >= 0. */
int unit_from_ns(const DomainUnit *u, int64_t ns, int64_t *ret_count, int64_t *ret_error_ns);

/* The signed step of smallest magnitude from hint to the occurrence of raw (a count modulo
 * 2^bits, 0 < bits < 64, raw already in [0, 2^bits)): (raw - hint) mod 2^bits in unsigned
 * arithmetic, a tie (exactly half the wrap) going to the later occurrence. Whatever unwraps a
 * wrapping count unwraps it with this. */
static inline int64_t unit_wrap_step(uint64_t raw, int64_t hint, unsigned bits) {
        uint64_t m = UINT64_C(1) << (bits & 63), d = (raw - (uint64_t) hint) & (m - 1);

        return d > m / 2 ? -(int64_t) (m - d) : (int64_t) d;
}
