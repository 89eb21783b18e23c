/* SPDX-License-Identifier: MIT */
#pragma once

/* The arithmetic of GPU device time, apart from Vulkan so that it can be tested with known
 * answers: unwrapping a counter of timestampValidBits, turning a tick count into an interval of
 * ns (the period may be fractional), the reference window of one calibrated reading, and the
 * threshold that decides which readings of a burst are good enough. */

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"
#include "units.h"

typedef struct GpuTicks {
        DomainUnit unit;                /* period_ns, wrap_bits (0: 64 valid bits) */
        bool have_last;
        int64_t last_count;             /* unwrapped count of the latest reading */
        int64_t last_r_ns;              /* reference time of the same */
} GpuTicks;

/* -EINVAL for a period that is not > 0 or valid_bits outside 1..64. */
int gpu_ticks_init(GpuTicks *t, double period_ns, unsigned valid_bits);

/* Forgets the latest reading (a new device: its counter starts anew). */
void gpu_ticks_reset(GpuTicks *t);

/* The unwrapped count of raw (bits above the valid ones are ignored), read at reference time
 * r_ns: the occurrence nearest to where the latest reading and the time since then put it, so
 * a gap of up to half a wrap between bursts is fine whatever the wrap width. */
int gpu_ticks_unwrap(GpuTicks *t, uint64_t raw, int64_t r_ns, int64_t *ret_count);

/* The device time a count stands for, in ns: count * period within half a tick either way
 * (the quantisation), widened to whole ns. */
int gpu_ticks_interval(const DomainUnit *unit, int64_t count, int64_t *ret_lo_ns, int64_t *ret_hi_ns);

/* When the device was read, in reference ns: our bracket [r0, r1], intersected with the host
 * reading +- max_deviation when the host domain is the reference itself (CLOCK_MONOTONIC_RAW).
 * A driver whose window misses our bracket is not believed: the bracket alone then. */
void gpu_read_window(int64_t r0_ns, int64_t r1_ns, bool host_is_reference, uint64_t host_ns,
                     uint64_t max_deviation_ns, int64_t *ret_lo_ns, int64_t *ret_hi_ns);

/* The "good" deviation of a burst: twice the floor of recent bursts. The floor follows a better
 * burst at once and a worse one by at most 1/8 per burst, so a machine under load still gets a
 * threshold it can meet, and a burst that meets none falls back to its best (burst_collect). */
typedef struct GpuThreshold {
        int64_t floor_ns;               /* 0: nothing seen yet */
} GpuThreshold;

int64_t gpu_threshold_good_ns(const GpuThreshold *t);
void gpu_threshold_update(GpuThreshold *t, int64_t best_deviation_ns);
