/* SPDX-License-Identifier: MIT */

/* ListDomains' key table (bus-api/bus-domain-keys.c) against the contract: every key the XML's
 * ListDomains comment lists ("key" followed by its signature) is in the table with that
 * signature, and every key of the table is in the XML; the table's own rules (unique names, D-Bus
 * basic signatures) and bus_domain_key_allows(). */

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-domain-keys.h"
#include "cleanup.h"
#include "tap.h"

#define XML_KEYS_MAX 128

typedef struct XmlKey {
        char name[64];
        char signature;
} XmlKey;

static char *slurp(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t size = 0;

        if (!f)
                return NULL;
        text = calloc(1, 1 << 20);
        if (text)
                size = fread(text, 1, (1 << 20) - 1, f);
        if (text && (ferror(f) || size == 0)) {
                free(text);
                return NULL;
        }
        return text;
}

/* The "key" signature pairs of ListDomains' comment; -1 when the comment is not there. */
static int xml_keys(const char *xml, XmlKey *keys, size_t max) {
        const char *start = strstr(xml, "ListDomains:"), *end;
        regmatch_t m[3];
        regex_t re;
        int n = 0;

        if (!start || !(end = strstr(start, "-->")))
                return -1;
        if (regcomp(&re, "\"([a-z0-9_]+)\"[ ]+([bstuxd])[ ,:\n]", REG_EXTENDED) != 0)
                return -1;
        for (const char *p = start; p < end && (size_t) n < max && regexec(&re, p, 3, m, 0) == 0; p += m[0].rm_eo) {
                size_t len = (size_t) (m[1].rm_eo - m[1].rm_so);

                if (p + m[0].rm_so >= end)
                        break;
                if (len >= sizeof(keys[n].name))
                        continue;
                memcpy(keys[n].name, p + m[1].rm_so, len);
                keys[n].name[len] = 0;
                keys[n].signature = p[m[2].rm_so];
                n++;
        }
        regfree(&re);
        return n;
}

static const XmlKey *xml_find(const XmlKey *keys, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(keys[i].name, name) == 0)
                        return &keys[i];
        return NULL;
}

static void test_table(void) {
        bool unique = true, typed = true, meant = true;

        for (size_t i = 0; i < bus_domain_keys_count; i++) {
                const BusDomainKey *k = &bus_domain_keys[i];

                typed &= k->signature && strchr("bstuxd", k->signature) != NULL;
                meant &= k->meaning && k->meaning[0];
                for (size_t j = 0; j < i; j++)
                        unique &= strcmp(bus_domain_keys[j].name, k->name) != 0;
        }
        ok(bus_domain_keys_count >= 16, "the table has the 16 keys of every domain and more (%zu)",
           bus_domain_keys_count);
        ok(unique, "every key once");
        ok(typed, "every key a D-Bus basic signature of bstuxd");
        ok(meant, "every key says what it means");

        ok(strcmp(bus_domain_keys[BUS_DOMAIN_KEY_AVAILABLE].name, "available") == 0 &&
           strcmp(bus_domain_keys[BUS_DOMAIN_KEY_PERFETTO_ID].name, "perfetto_id") == 0 &&
           strcmp(bus_domain_keys[BUS_DOMAIN_KEY_VERDICT].name, "verdict") == 0 &&
           strcmp(bus_domain_keys[BUS_DOMAIN_KEY_OFFSET_NS].name, "offset_ns") == 0,
           "the BusDomainKeyId indexes name their keys");
        ok(_BUS_DOMAIN_KEY_ALWAYS_MAX == 10 && bus_domain_key_index(bus_domain_key_find("reason")) ==
           BUS_DOMAIN_KEY_REASON, "ten keys always present; an index found by name is the enum's");
        ok(bus_domain_key_find("probes") && bus_domain_key_find("probes")->signature == 't', "probes is t");
        ok(bus_domain_key_find("nonesuch") == NULL && bus_domain_key_find(NULL) == NULL, "no such key, no NULL key");
        ok(bus_domain_key_allows("connected", 'b'), "connected may be sent as b");
        ok(!bus_domain_key_allows("connected", 's'), "  not as text");
        ok(bus_domain_key_allows("screen", 's'), "a key the contract does not list may be sent as a string");
        ok(!bus_domain_key_allows("screen", 't'), "  only as a string");
        ok(!bus_domain_key_allows(NULL, 's'), "no key, nothing sent");
}

static void test_against_xml(const char *path) {
        _cleanup_free_ char *xml = slurp(path);
        XmlKey keys[XML_KEYS_MAX];
        bool all_listed = true, all_in_table = true;
        int n;

        ok(xml != NULL, "read the XML contract %s", path);
        if (!xml)
                return;
        n = xml_keys(xml, keys, XML_KEYS_MAX);
        ok(n >= 16, "the XML's ListDomains comment lists keys (%d)", n);
        if (n < 0)
                return;
        for (int i = 0; i < n; i++) {
                const BusDomainKey *k = bus_domain_key_find(keys[i].name);

                if (!k || k->signature != keys[i].signature) {
                        diag("XML: \"%s\" %c, table: %c", keys[i].name, keys[i].signature, k ? k->signature : '-');
                        all_in_table = false;
                }
        }
        ok(all_in_table, "every key of the XML is in the table with the XML's signature");
        for (size_t i = 0; i < bus_domain_keys_count; i++)
                if (!xml_find(keys, (size_t) n, bus_domain_keys[i].name)) {
                        diag("table: \"%s\" is not in the XML", bus_domain_keys[i].name);
                        all_listed = false;
                }
        ok(all_listed, "every key of the table is in the XML");

        /* The daemon writes and the library reads the common keys by BusDomainKeyId: the XML's first
         * sixteen, in its order, must sit at those indexes. */
        bool in_order = n >= _BUS_DOMAIN_KEY_COMMON_MAX;
        for (int i = 0; in_order && i < _BUS_DOMAIN_KEY_COMMON_MAX; i++)
                if (strcmp(keys[i].name, bus_domain_keys[i].name) != 0) {
                        diag("XML key %d is \"%s\", table's is \"%s\"", i, keys[i].name, bus_domain_keys[i].name);
                        in_order = false;
                }
        ok(in_order, "the XML's first %d keys are the table's, in the BusDomainKeyId order",
           _BUS_DOMAIN_KEY_COMMON_MAX);

        /* The check can fail: a key retyped in the XML is caught. */
        {
                char *probes = strstr(xml, "\"probes\"             t");

                ok(probes != NULL, "the XML lists probes as t");
                if (probes) {
                        probes[strlen("\"probes\"             ")] = 's';
                        n = xml_keys(xml, keys, XML_KEYS_MAX);
                        ok(n > 0 && xml_find(keys, (size_t) n, "probes") &&
                           xml_find(keys, (size_t) n, "probes")->signature != bus_domain_key_find("probes")->signature,
                           "a key retyped in the XML differs from the table");
                }
        }
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 1, "CLOCK1_XML");
        test_table();
        test_against_xml(argv[1]);
        return done_testing();
}
