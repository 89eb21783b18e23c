/* SPDX-License-Identifier: MIT */

/* The bus_api_errors library: the domain-name rule, errno <-> error name in both directions
 * (our switch one way, sd-bus's lookup through the registered map the other), and
 * bus_timeconv_error_setf(). */

#include <errno.h>

#include "bus-errors.h"
#include "tap.h"

static void test_names(void) {
        static const struct { const char *name; BusNameProblem want; size_t offset; } names[] = {
                { "monotonic_raw", BUS_NAME_OK, 0 },
                { "gpu0", BUS_NAME_OK, 0 },
                { "pci-0000:01:00.0", BUS_NAME_OK, 0 },
                { "", BUS_NAME_EMPTY, 0 },
                { "Monotonic", BUS_NAME_BAD_CHAR, 0 },
                { "x11 us", BUS_NAME_BAD_CHAR, 3 },
                { "a/b", BUS_NAME_BAD_CHAR, 1 },
                { "caf\xc3\xa9", BUS_NAME_BAD_CHAR, 3 },
                { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", BUS_NAME_OK, 0 },
                { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", BUS_NAME_TOO_LONG, 0 },
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                size_t offset = 0;
                BusNameProblem p = bus_domain_name_check(names[i].name, &offset);

                ok(p == names[i].want && (p != BUS_NAME_BAD_CHAR || offset == names[i].offset),
                   "domain name '%s' checks as %d", names[i].name, names[i].want);
        }
        ok(bus_domain_name_check(NULL, NULL) == BUS_NAME_EMPTY, "a NULL domain name is empty");
}

static void test_errors(void) {
        static const struct { int error; const char *name; } errors[] = {
                { ENOENT, BUS_ERROR_UNKNOWN_DOMAIN }, { ENOLINK, BUS_ERROR_NO_PATH },
                { ENODEV, BUS_ERROR_UNAVAILABLE }, { ENODATA, BUS_ERROR_UNAVAILABLE },
                { ERANGE, BUS_ERROR_OUT_OF_RANGE }, { EINVAL, BUS_ERROR_INVALID_ARGUMENT },
                { EDQUOT, BUS_ERROR_QUOTA_EXCEEDED }, { EEXIST, BUS_ERROR_NAME_TAKEN },
                { ENOMEM, NULL }, { EIO, NULL },
        };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        size_t n_map = 0;

        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
                const char *got = bus_timeconv_error_name(-errors[i].error);

                ok(got == errors[i].name || (got && errors[i].name && strcmp(got, errors[i].name) == 0),
                   "errno %d is named %s", errors[i].error, errors[i].name ? errors[i].name : "(none)");
        }

        /* Why clients register the map: without it sd-bus knows none of our names. */
        {
                sd_bus_error c = SD_BUS_ERROR_MAKE_CONST(BUS_ERROR_UNKNOWN_DOMAIN, NULL);

                is_int(sd_bus_error_get_errno(&c), EIO, "before registering, UnknownDomain reads as EIO");
        }
        is_int(bus_timeconv_errors_register(), 0, "the error map registers");
        is_int(bus_timeconv_errors_register(), 0, "registering twice is harmless");
        for (const sd_bus_error_map *m = bus_timeconv_errors; m->name; m++, n_map++) {
                sd_bus_error c = SD_BUS_ERROR_MAKE_CONST(m->name, NULL);

                ok(sd_bus_error_get_errno(&c) == m->code && bus_timeconv_error_name(m->code) &&
                   strcmp(bus_timeconv_error_name(m->code), m->name) == 0,
                   "%s <-> errno %d both ways", m->name, m->code);
        }
        is_int(n_map, 7, "the map has our seven names");

        /* QuotaExceeded: no stub method produces it, so through the map only. */
        is_int(bus_timeconv_error_setf(&e, -EDQUOT, "too many clients: %d", 65), -EDQUOT,
               "setf returns the errno");
        ok(sd_bus_error_has_name(&e, BUS_ERROR_QUOTA_EXCEEDED) && e.message &&
           strcmp(e.message, "too many clients: 65") == 0, "setf names QuotaExceeded with the message");
        is_int(sd_bus_error_get_errno(&e), EDQUOT, "QuotaExceeded reads back as EDQUOT");
        sd_bus_error_free(&e);

        is_int(bus_timeconv_error_setf(&e, ENODATA, "no model"), -ENODATA, "setf takes either sign");
        ok(sd_bus_error_has_name(&e, BUS_ERROR_UNAVAILABLE), "ENODATA is Unavailable on the wire");
        is_int(sd_bus_error_get_errno(&e), ENODEV, "... and reads back as ENODEV");
        sd_bus_error_free(&e);

        is_int(bus_timeconv_error_setf(&e, -ENOMEM, "out of %s", "memory"), -ENOMEM, "ENOMEM returns");
        ok(sd_bus_error_has_name(&e, SD_BUS_ERROR_NO_MEMORY), "ENOMEM keeps sd-bus's own name");
        sd_bus_error_free(&e);
        is_int(bus_timeconv_error_setf(&e, 0, "?"), -EIO, "a zero errno becomes EIO");
        sd_bus_error_free(&e);
}

int main(void) {
        test_names();
        test_errors();
        return done_testing();
}
