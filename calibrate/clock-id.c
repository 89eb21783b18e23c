/* SPDX-License-Identifier: MIT */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "clock-id.h"

#define FNV1A32_OFFSET_BASIS UINT32_C(2166136261)
#define FNV1A32_PRIME        UINT32_C(16777619)

/* Perfetto's own ids for the POSIX clocks; TAI has none there, so it gets a hashed id. */
static const struct {
        uint32_t id;
        const char *name;
} builtin_clocks[] = {
        { CLOCK_ID_REALTIME,         "realtime" },
        { CLOCK_ID_REALTIME_COARSE,  "realtime_coarse" },
        { CLOCK_ID_MONOTONIC,        "monotonic" },
        { CLOCK_ID_MONOTONIC_COARSE, "monotonic_coarse" },
        { CLOCK_ID_MONOTONIC_RAW,    "monotonic_raw" },
        { CLOCK_ID_BOOTTIME,         "boottime" },
};

#define N_BUILTIN_CLOCKS (sizeof(builtin_clocks) / sizeof(builtin_clocks[0]))

static uint32_t fnv1a32_more(uint32_t h, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                h ^= *p;
                h *= FNV1A32_PRIME;     /* uint32_t: wraps mod 2^32 by definition */
        }
        return h;
}

/* NULL hashes like the empty string. */
uint32_t clock_id_fnv1a32(const char *s) {
        return s ? fnv1a32_more(FNV1A32_OFFSET_BASIS, s) : FNV1A32_OFFSET_BASIS;
}

/* 0 (no clock in Perfetto) for NULL. Perfetto recommends a global id hashed from a fully
 * qualified name, so ours are "org.timeconv." + name; the top bit keeps them clear of the
 * builtin and sequence-scoped ranges. */
uint32_t clock_id_for_name(const char *name) {
        if (!name)
                return 0;

        for (size_t i = 0; i < N_BUILTIN_CLOCKS; i++)
                if (strcmp(builtin_clocks[i].name, name) == 0)
                        return builtin_clocks[i].id;

        return fnv1a32_more(fnv1a32_more(FNV1A32_OFFSET_BASIS, CLOCK_ID_NAMESPACE), name) | UINT32_C(0x80000000);
}

const char *clock_id_builtin_name(uint32_t id) {
        for (size_t i = 0; i < N_BUILTIN_CLOCKS; i++)
                if (builtin_clocks[i].id == id)
                        return builtin_clocks[i].name;

        return NULL;
}
