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

extern const BusDomainKey bus_domain_keys[];
extern const size_t bus_domain_keys_count;

/* The key called name; NULL for one the contract does not list. */
const BusDomainKey *bus_domain_key_find(const char *name);

/* Whether the contract lists name with signature (a key it does not list may be sent as a
 * string only, so that a newer source's entry reaches the clients). */
bool bus_domain_key_allows(const char *name, char signature);
