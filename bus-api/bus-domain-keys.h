/* SPDX-License-Identifier: MIT */
#pragma once

/* The keys of ListDomains' per-domain a{sv}: each key's D-Bus signature and meaning, once.
 * Compiled into the small bus_api_errors library with the error map, so that the daemon writes
 * and the client library reads through the same table; tests/bus-api/test-bus-domain-keys.c
 * holds it to the list in org.timeconv.Clock1.xml. A key never changes its type. */

#include <stdbool.h>
#include <stddef.h>

typedef struct BusDomainKey {
        const char *name;
        char signature;                 /* 'b', 's', 't', 'u', 'x' or 'd' */
        const char *meaning;
} BusDomainKey;

/* Indexes into bus_domain_keys[] of the keys every domain may carry (the ten always present, then
 * those present when they apply), so that the daemon writes and the library reads them by index,
 * never by a key spelled out again. The source-specific keys follow in the table unnamed. */
typedef enum BusDomainKeyId {
        BUS_DOMAIN_KEY_AVAILABLE,
        BUS_DOMAIN_KEY_REFERENCE,
        BUS_DOMAIN_KEY_RESOLUTION_NS,
        BUS_DOMAIN_KEY_WRAP_BITS,
        BUS_DOMAIN_KEY_MONOTONIC,
        BUS_DOMAIN_KEY_RATE_PPB,
        BUS_DOMAIN_KEY_UNCERTAINTY_NS,
        BUS_DOMAIN_KEY_RATE_UNCERTAINTY_PPB,
        BUS_DOMAIN_KEY_LAST_CALIBRATED_NS,
        BUS_DOMAIN_KEY_PERFETTO_ID,
        _BUS_DOMAIN_KEY_ALWAYS_MAX,             /* the first ten are in every entry */
        BUS_DOMAIN_KEY_VERDICT = _BUS_DOMAIN_KEY_ALWAYS_MAX,
        BUS_DOMAIN_KEY_REASON,
        BUS_DOMAIN_KEY_DEVICE_NAME,
        BUS_DOMAIN_KEY_DRIVER,
        BUS_DOMAIN_KEY_PERIOD_NS,
        BUS_DOMAIN_KEY_OFFSET_NS,
        _BUS_DOMAIN_KEY_COMMON_MAX,
} BusDomainKeyId;

extern const BusDomainKey bus_domain_keys[];
extern const size_t bus_domain_keys_count;

/* The key called name; NULL for one the contract does not list. */
const BusDomainKey *bus_domain_key_find(const char *name);

/* The index of k, an entry of bus_domain_keys[]. */
static inline size_t bus_domain_key_index(const BusDomainKey *k) {
        return (size_t) (k - bus_domain_keys);
}

/* Whether the contract lists name with signature (a key it does not list may be sent as a
 * string only, so that a newer source's entry reaches the clients). */
bool bus_domain_key_allows(const char *name, char signature);
