/* SPDX-License-Identifier: MIT */

/* struct timeconv_domain, opaque, against a stand-in daemon whose ListDomains says more than
 * 0.1.0's fixed arrays held: a 300-byte device name, a 500-byte string property, a 40-byte key,
 * 24 properties. Every getter gives it back whole; typed lookups refuse another type (-EINVAL)
 * and a missing key (-ENOENT); a known key of the wrong type makes the reply -EPROTO.
 * usage: test-live-domain-object TIMECONVD (the daemon is not used) */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tap.h"
#include "timeconv.h"

#define N_EXTRA 20
#define LONG_KEY "a_key_of_forty_bytes_far_past_thirty_one"

typedef struct Fake {
        HarnessStandIn s;
        int bad_type;           /* answer "wrap_bits" as a string */
} Fake;

static char long_device[301], long_value[501];

static int list_domains(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Fake *f = userdata;
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssa{sv})");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'r', "ssa{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "ss", "gpu0", "tick");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}", "available", "b", 1, "device_name", "s",
                                          long_device, "driver", "s", "lavapipe", "period_ns", "d", 52.083);
        if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}{sv}{sv}", "offset_ns", "x", INT64_C(-5), "perfetto_id", "u",
                                          (uint32_t) 77, LONG_KEY, "s", long_value);
        if (r >= 0 && __atomic_load_n(&f->bad_type, __ATOMIC_ACQUIRE))
                r = sd_bus_message_append(reply, "{sv}", "wrap_bits", "s", "64");
        else if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}", "wrap_bits", "u", (uint32_t) 64);
        for (int i = 0; r >= 0 && i < N_EXTRA; i++) {
                char key[32];

                snprintf(key, sizeof(key), "extra_%02d", i);
                r = sd_bus_message_append(reply, "{sv}", key, "t", (uint64_t) i * 1000);
        }
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_message_close_container(reply);
        (void) error;
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("ListDomains", "", "a(ssa{sv})", list_domains, 0),
        SD_BUS_VTABLE_END
};

static void check_whole(struct timeconv *tc) {
        struct timeconv_domain **list = NULL;
        const struct timeconv_domain *d;
        const char *s = NULL;
        uint64_t u = 0;
        int64_t x = 0;
        size_t extras = 0;
        int b = 0, r;

        r = timeconv_list_domains(tc, &list);
        is_int(r, 0, "ListDomains of a domain with long strings and many properties reads");
        if (r < 0)
                return;
        d = list[0];
        ok(d && !list[1], "one domain");
        ok(strcmp(timeconv_domain_get_name(d), "gpu0") == 0 && strcmp(timeconv_domain_get_unit(d), "tick") == 0,
           "its name and unit");
        ok(strcmp(timeconv_domain_get_device_name(d), long_device) == 0,
           "a 300-byte device name, whole (0.1.0 cut it at 127)");
        ok(strcmp(timeconv_domain_get_driver(d), "lavapipe") == 0 && strcmp(timeconv_domain_get_verdict(d), "") == 0 &&
           strcmp(timeconv_domain_get_reference(d), "") == 0, "the driver; what the daemon did not give is \"\"");
        ok((timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_AVAILABLE) &&
           (timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_HAS_OFFSET) && timeconv_domain_get_offset_ns(d) == -5 &&
           timeconv_domain_get_period_ns(d) == 52.083 && timeconv_domain_get_perfetto_id(d) == 77 &&
           timeconv_domain_get_wrap_bits(d) == 64, "flags, offset, period, Perfetto id, wrap bits");
        is_int(timeconv_domain_count_properties(d), 1 + N_EXTRA, "every other entry is a property (21, 0.1.0 kept 16)");
        ok(timeconv_domain_get_property_string(d, LONG_KEY, &s) == 0 && s && strcmp(s, long_value) == 0,
           "a 40-byte key (0.1.0 dropped it) with a 500-byte value, whole");
        ok(timeconv_domain_get_property_key(d, 0) && strcmp(timeconv_domain_get_property_key(d, 0), LONG_KEY) == 0 &&
           timeconv_domain_get_property_type(d, 0) == 's', "by index: the key and its type, in the daemon's order");
        for (size_t i = 1; i < timeconv_domain_count_properties(d); i++) {
                char key[32];

                snprintf(key, sizeof(key), "extra_%02zu", i - 1);
                extras += timeconv_domain_get_property_type(d, i) == 't' &&
                          strcmp(timeconv_domain_get_property_key(d, i), key) == 0 &&
                          timeconv_domain_get_property_uint(d, key, &u) == 0 && u == (i - 1) * 1000;
        }
        is_int(extras, N_EXTRA, "the 20 others, typed, in order");
        ok(!timeconv_domain_get_property_key(d, 1 + N_EXTRA) && timeconv_domain_get_property_type(d, 1 + N_EXTRA) == 0,
           "past the end: NULL and 0");
        is_int(timeconv_domain_get_property_int(d, "extra_00", &x), -EINVAL, "read as another type: -EINVAL");
        is_int(timeconv_domain_get_property_bool(d, "owner", &b), -ENOENT, "a key the domain lacks: -ENOENT");
        is_int(timeconv_domain_get_property_string(d, NULL, &s), -EINVAL, "a NULL key: -EINVAL");
        ok(timeconv_domain_get_property_uint(d, "extra_03", NULL) == 0, "ret may be NULL: whether it is there");
        ok(strcmp(timeconv_domain_get_name(NULL), "") == 0 && timeconv_domain_get_flags(NULL) == 0 &&
           timeconv_domain_count_properties(NULL) == 0, "a NULL domain reads as an empty one");
        list = timeconv_domains_free(list);
        ok(!list, "timeconv_domains_free() returns NULL");
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        struct timeconv_domain **list = NULL;
        struct timeconv *tc = NULL;
        Fake fake = {};
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        memset(long_device, 'd', sizeof(long_device) - 1);
        memset(long_value, 'v', sizeof(long_value) - 1);

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_stand_in_start(h, fake_vtable, &fake, &fake.s);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &tc);
        is_int(r < 0 ? r : 0, 0, "a stand-in daemon with ListDomains, and a handle to it");
        if (r < 0)
                return done_testing();

        check_whole(tc);

        __atomic_store_n(&fake.bad_type, 1, __ATOMIC_RELEASE);
        is_int(timeconv_list_domains(tc, &list), -EPROTO, "a known key of another type: -EPROTO");
        ok(!list, "and no list");

        timeconv_free(tc);
        harness_stand_in_stop(&fake.s);
        return done_testing();
}
