/* SPDX-License-Identifier: MIT */
#pragma once

/* A stub of the daemon's core behind the bus handlers (bus-api.h: BusCoreOps): a fixed set of
 * domains, answers that follow from the arguments, and a failure the fuzz input injects. It
 * checks what the handlers promise the core (valid names, bounded snapshots) and counts the
 * calls, so that the fuzzer can tell what each reply should have been. */

#include <stdbool.h>
#include <stdint.h>

#include "bus-api.h"

#define FUZZ_NOW_VALUE 42
#define FUZZ_NOW_UNCERTAINTY_NS 3
#define FUZZ_CONVERT_UNCERTAINTY_NS 7
#define FUZZ_VERSION "fuzz-0"
#define FUZZ_REFERENCE "monotonic_raw"
#define FUZZ_EXPORT_JSON "{ \"snapshots\": [] }"

typedef struct FuzzCore {
        /* Injected: the errno (positive, 0: none) that the fail_at-th conversion of a call,
         * or its single other core call, fails with; and what a refused snapshot blames. */
        int error;
        unsigned fail_at;
        size_t push_failure_index;
        bool push_failure_reason;

        unsigned converts;              /* conversions asked in the current call */
        unsigned activity;              /* client_activity() calls */
        int table_fd;                   /* a memfd, for GetSharedTable */
} FuzzCore;

extern const BusCoreOps fuzz_core_ops;

/* The stub converts value to this: no overflow, and not the value itself. */
static inline int64_t fuzz_core_converted(int64_t value) {
        return value ^ 0x5a;
}

/* Whether name is one of the stub's domains (the departed one is not). */
bool fuzz_core_knows(const char *name);

/* The stub's domains as ListDomains reports them. */
unsigned fuzz_core_listed(void);
