/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "arith.h"
#include "vulkan-ticks.h"

int gpu_ticks_init(GpuTicks *t, double period_ns, unsigned valid_bits) {
        DomainUnit unit = {
                .period_ns = period_ns,
                .wrap_bits = valid_bits < 64 ? valid_bits : 0,
                .truncates = false,
                .encoding = UNIT_ENCODING_PLAIN,
        };
        int r;

        if (!t || valid_bits == 0 || valid_bits > 64)
                return -EINVAL;
        r = unit_validate(&unit);
        if (r < 0)
                return r;

        *t = (GpuTicks) { .unit = unit };
        return 0;
}

void gpu_ticks_reset(GpuTicks *t) {
        t->have_last = false;
        t->last_count = 0;
        t->last_r_ns = 0;
}

int gpu_ticks_unwrap(GpuTicks *t, uint64_t raw, int64_t r_ns, int64_t *ret_count) {
        int64_t hint, count;
        int r;

        if (!t || !ret_count)
                return -EINVAL;

        if (t->unit.wrap_bits > 0)
                raw &= (UINT64_C(1) << t->unit.wrap_bits) - 1;
        else if (raw > (uint64_t) INT64_MAX)
                return -ERANGE;

        if (t->have_last) {
                /* Where the counter should be now: past the latest reading by the time since. */
                long double predicted = (long double) t->last_count +
                                        ((long double) r_ns - (long double) t->last_r_ns) / t->unit.period_ns;

                if (!(predicted > -0x1p62L && predicted < 0x1p62L))
                        return -ERANGE;
                hint = (int64_t) predicted;
        } else
                hint = (int64_t) raw;   /* the first reading: the counter as it is */

        r = unit_unwrap(&t->unit, (int64_t) raw, hint, &count);
        if (r < 0)
                return r;

        t->have_last = true;
        t->last_count = count;
        t->last_r_ns = r_ns;
        *ret_count = count;
        return 0;
}

int gpu_ticks_interval(const DomainUnit *unit, int64_t count, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        int64_t centre_ns, half_ns, lo, hi;
        int r;

        if (!unit || !ret_lo_ns || !ret_hi_ns)
                return -EINVAL;

        /* unit_to_ns() rounds count * period to the nearest ns (error <= 1/2), so half a tick
         * plus that rounding, rounded up, covers [count - 1/2, count + 1/2] ticks. */
        r = unit_to_ns(unit, count, &centre_ns);
        if (r < 0)
                return r;
        r = arith_ceil_from_double(0.5 + unit->period_ns / 2.0, &half_ns);
        if (r < 0)
                return r;
        r = arith_sub(centre_ns, half_ns, &lo);
        if (r < 0)
                return r;
        r = arith_add(centre_ns, half_ns, &hi);
        if (r < 0)
                return r;

        *ret_lo_ns = lo;
        *ret_hi_ns = hi;
        return 0;
}

void gpu_read_window(int64_t r0_ns, int64_t r1_ns, bool host_is_reference, uint64_t host_ns,
                     uint64_t max_deviation_ns, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        int64_t lo = r0_ns, hi = r1_ns;

        if (host_is_reference && host_ns <= (uint64_t) INT64_MAX && max_deviation_ns <= (uint64_t) INT64_MAX) {
                int64_t h = (int64_t) host_ns, dev = (int64_t) max_deviation_ns, a, b;

                if (arith_sub(h, dev, &a) < 0)
                        a = INT64_MIN;
                if (arith_add(h, dev, &b) < 0)
                        b = INT64_MAX;
                if (a <= r1_ns && b >= r0_ns) {
                        lo = a > r0_ns ? a : r0_ns;
                        hi = b < r1_ns ? b : r1_ns;
                }
        }

        *ret_lo_ns = lo;
        *ret_hi_ns = hi;
}

int64_t gpu_threshold_good_ns(const GpuThreshold *t) {
        if (t->floor_ns <= 0 || t->floor_ns > INT64_MAX / 2)
                return INT64_MAX;       /* nothing known yet: every reading is good */
        return 2 * t->floor_ns;
}

void gpu_threshold_update(GpuThreshold *t, int64_t best_deviation_ns) {
        int64_t ceiling_ns;

        if (best_deviation_ns < 0)
                return;
        if (best_deviation_ns == 0)
                best_deviation_ns = 1;  /* a floor of 0 would mean "unknown" */

        if (t->floor_ns <= 0 || best_deviation_ns <= t->floor_ns) {
                t->floor_ns = best_deviation_ns;
                return;
        }

        /* Worse than before: follow, but slowly, so one bad burst does not loosen it for long. */
        ceiling_ns = t->floor_ns > INT64_MAX / 2 ? INT64_MAX : t->floor_ns + t->floor_ns / 8 + 1;
        t->floor_ns = best_deviation_ns < ceiling_ns ? best_deviation_ns : ceiling_ns;
}
