/* SPDX-License-Identifier: MIT */
#pragma once

/* Random D-Bus payloads for the robustness test: a seeded generator (the same seed gives the
 * same calls), random complete signatures and random values of any signature. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct Rng {
        uint64_t state;
} Rng;

static inline uint64_t rng_next(Rng *rng) {
        /* xorshift64*: plenty for test inputs, and reproducible. */
        rng->state ^= rng->state >> 12;
        rng->state ^= rng->state << 25;
        rng->state ^= rng->state >> 27;
        return rng->state * UINT64_C(2685821657736338717);
}

/* In [0, n). */
static inline size_t rng_below(Rng *rng, size_t n) {
        return n ? (size_t) (rng_next(rng) % n) : 0;
}

#define GARBAGE_SIGNATURE_MAX 64

/* A random signature of 1 to max_types complete types, NUL-terminated in buf (which holds
 * GARBAGE_SIGNATURE_MAX + 1 bytes). with_fds allows 'h'. */
void garbage_signature(Rng *rng, size_t max_types, bool with_fds, char *buf);

/* Appends a random value for each complete type of signature. fd (may be -1 when the
 * signature has no 'h') is what an 'h' carries. Returns 0 or -errno. */
int garbage_append(sd_bus_message *m, const char *signature, Rng *rng, int fd);

/* A random string of length bytes from alphabet (NUL-terminated, malloc'ed). */
char *garbage_string(Rng *rng, size_t length, const char *alphabet);
