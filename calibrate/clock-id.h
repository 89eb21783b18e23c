/* SPDX-License-Identifier: MIT */
#pragma once

/* Perfetto clock ids: the builtin ids for the POSIX clocks, FNV-1a(name) | 0x80000000 else. */

#include <stdint.h>

enum {
        CLOCK_ID_REALTIME = 1,
        CLOCK_ID_REALTIME_COARSE = 2,
        CLOCK_ID_MONOTONIC = 3,
        CLOCK_ID_MONOTONIC_COARSE = 4,
        CLOCK_ID_MONOTONIC_RAW = 5,
        CLOCK_ID_BOOTTIME = 6,
};

uint32_t clock_id_fnv1a32(const char *s);
uint32_t clock_id_for_name(const char *name);

/* The builtin name for a Perfetto builtin id, or NULL. */
const char *clock_id_builtin_name(uint32_t id);
