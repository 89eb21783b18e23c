/* SPDX-License-Identifier: MIT */
#pragma once

/* The interface every clock source implements. A source (posix, fake, x11, vulkan) lists the
 * domains it can offer, opens one, reads bursts of bracketed samples into caller-provided
 * memory, and may have an fd for the event loop to watch. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "units.h"

#define DOMAIN_NAME_MAX 64

typedef struct DomainInfo {
        char name[DOMAIN_NAME_MAX];
        DomainUnit unit;
        int64_t resolution_ns;          /* clock_getres() or equivalent */
        bool monotonic;                 /* never goes backwards */
        uint32_t perfetto_id;
} DomainInfo;

typedef struct Domain Domain;

typedef struct DomainOps {
        const char *source;

        /* Lists what this source can open on this machine, up to n_max. */
        int (*enumerate)(DomainInfo *ret_infos, size_t n_max, size_t *ret_n);

        /* Opens the domain called name. config is source-specific (may be NULL). */
        int (*open)(const char *name, const void *config, Domain **ret);

        /* Reads up to n_max samples; samples are in the domain's ns, unwrapped, and the reference
         * is CLOCK_MONOTONIC_RAW (the fake source's is simulated). */
        int (*sample_burst)(Domain *d, Sample *samples, size_t n_max, size_t *ret_n);

        /* An fd for the event loop, or -EOPNOTSUPP. */
        int (*watch_fd)(Domain *d);

        const DomainInfo *(*info)(Domain *d);

        Domain *(*close)(Domain *d);
} DomainOps;

extern const DomainOps domain_posix_ops;
extern const DomainOps domain_fake_ops;
