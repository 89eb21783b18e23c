/* SPDX-License-Identifier: MIT */
#pragma once

/* Perfetto clock ids: the builtin ids for the POSIX clocks, FNV-1a("org.timeconv." + name) |
 * 0x80000000 else (32-bit FNV-1a). */

#include <stddef.h>
#include <stdint.h>

enum {
        CLOCK_ID_REALTIME = 1,
        CLOCK_ID_REALTIME_COARSE = 2,
        CLOCK_ID_MONOTONIC = 3,
        CLOCK_ID_MONOTONIC_COARSE = 4,
        CLOCK_ID_MONOTONIC_RAW = 5,
        CLOCK_ID_BOOTTIME = 6,
};

#define CLOCK_ID_NAMESPACE "org.timeconv."

uint32_t clock_id_fnv1a32(const char *s);
uint32_t clock_id_for_name(const char *name);

/* The builtin name for a Perfetto builtin id, or NULL. */
const char *clock_id_builtin_name(uint32_t id);

/* GPUs gpu0 .. gpu(N - 1) are named back from their ids. */
#define CLOCK_ID_KNOWN_GPUS 16

/* The name of a clock id timeconv gives: a builtin one's, or one of timeconvd's domain names
 * (tai, x11, x11_us, msc, gpu0..gpu15, each also + ".ns") whose hashed id it is; written to buf
 * (size bytes). NULL for an id of no name we know. */
const char *clock_id_known_name(uint32_t id, char *buf, size_t size);
