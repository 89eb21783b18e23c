/* SPDX-License-Identifier: MIT */
#pragma once

/* struct timeconv_domain, which callers see only through the getters of timeconv.h. Every string
 * is malloc'ed and never NULL; timeconv_domains_free() frees them all, so that a test may build a
 * domain of its own with this layout (tests/cli/test-cli-table.c does). */

#include <stddef.h>
#include <stdint.h>

#include "timeconv.h"

typedef struct LiveProperty {
        char *key;
        char type;                      /* 'b', 'u', 't', 'x', 'd' or 's' */
        int b;
        uint64_t u;                     /* 'u' and 't' */
        int64_t x;
        double d;
        char *s;                        /* 's' only, else NULL */
} LiveProperty;

struct timeconv_domain {
        char *name;
        char *unit;
        char *reference;
        char *verdict;
        char *device_name;
        char *driver;
        unsigned flags;
        unsigned wrap_bits;
        uint32_t perfetto_id;
        uint64_t resolution_ns;
        int64_t rate_ppb;
        uint64_t rate_uncertainty_ppb;
        uint64_t uncertainty_ns;
        int64_t last_calibrated_ns;
        int64_t offset_ns;
        double period_ns;
        size_t n_properties;
        LiveProperty *properties;
};

/* An empty domain: every string "" (malloc'ed), every number 0; NULL when out of memory. */
struct timeconv_domain *live_domain_new(void);
