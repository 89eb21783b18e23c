/* SPDX-License-Identifier: MIT */
#pragma once

/* The fuzzers' view of their input: a cursor that hands out bytes and integers, and zeros
 * once the input is used up, so that every input, however short, is a complete test case. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct FuzzInput {
        const uint8_t *data;
        size_t size;
} FuzzInput;

static inline uint8_t fuzz_u8(FuzzInput *in) {
        uint8_t b;

        if (in->size == 0)
                return 0;
        b = in->data[0];
        in->data++;
        in->size--;
        return b;
}

static inline uint64_t fuzz_u64(FuzzInput *in) {
        uint64_t v = 0;

        for (size_t i = 0; i < sizeof(v); i++)
                v = v << 8 | fuzz_u8(in);
        return v;
}

/* Up to max bytes: as many as the next byte says, fewer when the input ends first. */
static inline size_t fuzz_bytes(FuzzInput *in, size_t max, const uint8_t **ret) {
        size_t n = fuzz_u8(in) % (max + 1);

        if (n > in->size)
                n = in->size;
        *ret = in->data;
        in->data += n;
        in->size -= n;
        return n;
}

/* A broken property is a finding: libFuzzer saves the input that broke it. */
#define fuzz_check(cond, ...)                                                           \
        do {                                                                            \
                if (!(cond)) {                                                          \
                        fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                        fprintf(stderr, __VA_ARGS__);                                   \
                        fputc('\n', stderr);                                            \
                        abort();                                                        \
                }                                                                       \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
