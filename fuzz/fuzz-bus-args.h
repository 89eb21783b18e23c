/* SPDX-License-Identifier: MIT */
#pragma once

/* Method-call arguments from fuzz input: values of any D-Bus signature appended to a message,
 * with a record of the strings and int64s in the order they were appended, so that the fuzzer
 * can work out what the reply should be. An 'h' is a memfd as ConvertManyMemfd takes it, of a
 * few values, sized and sealed right or not; a 't' after it is a count near its values. */

#include <systemd/sd-bus.h>

#include "fuzz-input.h"

#define FUZZ_ARGS_STRINGS_MAX 64
#define FUZZ_ARGS_INTS_MAX 64
#define FUZZ_ARGS_POOL 8192
/* Arrays get up to this many elements: past PushSnapshot's 16 readings. */
#define FUZZ_ARGS_ARRAY_MAX 20

typedef struct FuzzArgs {
        const char *strings[FUZZ_ARGS_STRINGS_MAX];     /* every 's', in order */
        size_t n_strings;
        int64_t ints[FUZZ_ARGS_INTS_MAX];               /* every 'x', in order */
        size_t n_ints;
        size_t n_elements;      /* of the first array at the top level */
        bool seen_array;
        int memfd;              /* the first 'h' (the message holds a copy); -1: none */
        size_t memfd_values;    /* values written into it, recorded in ints */
        uint64_t memfd_size;
        int memfd_seals;
        uint64_t count;         /* the first 't' after the memfd */
        bool seen_count;
        char pool[FUZZ_ARGS_POOL];
        size_t pool_used;
} FuzzArgs;

/* Appends values of signature (complete types) to m. 0, or a negative errno from sd-bus or
 * -E2BIG when the record is full: the case is then not worth running. */
int fuzz_args_append(sd_bus_message *m, const char *signature, FuzzInput *in, FuzzArgs *args);

/* A new, empty record (no memfd); args_free() closes its memfd. */
void fuzz_args_init(FuzzArgs *args);
void fuzz_args_done(FuzzArgs *args);

/* A signature to send instead of the method's own: the fuzz input picks one that is close to
 * ours (a missing, extra or mistyped argument) or anything else. */
const char *fuzz_args_wrong_signature(FuzzInput *in);
