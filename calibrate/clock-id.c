/* SPDX-License-Identifier: MIT */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* The names timeconvd gives its domains besides the POSIX ones (DESIGN.md "Clock domains and
 * names"), for naming their hashed ids in a trace: tai, the X server's clocks, the vblank
 * counter, the first GPUs, and each of those under ".ns" (how a fractional period is written). */
static const char *const known_names[] = { "tai", "x11", "x11_us", "msc" };

#define N_KNOWN_NAMES (sizeof(known_names) / sizeof(known_names[0]))

/* The hash state after "org.timeconv." + name (+ ".ns" when ns): compared with the id, so that
 * no name is built in a buffer. */
static bool known_matches(uint32_t base, const char *name, unsigned gpu, bool is_gpu, bool ns, uint32_t id) {
        char digits[12];
        uint32_t h = fnv1a32_more(base, name);

        if (is_gpu) {
                snprintf(digits, sizeof(digits), "%u", gpu);
                h = fnv1a32_more(h, digits);
        }
        if (ns)
                h = fnv1a32_more(h, ".ns");
        return (h | UINT32_C(0x80000000)) == id;
}

const char *clock_id_known_name(uint32_t id, char *buf, size_t size) {
        const char *builtin = clock_id_builtin_name(id);
        uint32_t base;

        if (!buf || size == 0)
                return NULL;
        if (builtin) {
                snprintf(buf, size, "%s", builtin);
                return buf;
        }
        if (!(id & UINT32_C(0x80000000)))
                return NULL;            /* not a hashed id: no need to hash anything */
        base = fnv1a32_more(FNV1A32_OFFSET_BASIS, CLOCK_ID_NAMESPACE);
        for (int ns = 0; ns < 2; ns++) {
                for (size_t i = 0; i < N_KNOWN_NAMES; i++)
                        if (known_matches(base, known_names[i], 0, false, ns, id)) {
                                snprintf(buf, size, "%s%s", known_names[i], ns ? ".ns" : "");
                                return buf;
                        }
                for (unsigned gpu = 0; gpu < CLOCK_ID_KNOWN_GPUS; gpu++)
                        if (known_matches(base, "gpu", gpu, true, ns, id)) {
                                snprintf(buf, size, "gpu%u%s", gpu, ns ? ".ns" : "");
                                return buf;
                        }
        }
        return NULL;
}
