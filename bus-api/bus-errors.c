/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bus-errors.h"

/* One entry per name: name -> errno is a function. ENODATA also becomes Unavailable on the
 * wire (see bus_timeconv_error_name()) and comes back to clients as ENODEV. */
const sd_bus_error_map bus_timeconv_errors[] = {
        SD_BUS_ERROR_MAP(BUS_ERROR_UNKNOWN_DOMAIN,   ENOENT),
        SD_BUS_ERROR_MAP(BUS_ERROR_NO_PATH,          ENOLINK),
        SD_BUS_ERROR_MAP(BUS_ERROR_UNAVAILABLE,      ENODEV),
        SD_BUS_ERROR_MAP(BUS_ERROR_OUT_OF_RANGE,     ERANGE),
        SD_BUS_ERROR_MAP(BUS_ERROR_INVALID_ARGUMENT, EINVAL),
        SD_BUS_ERROR_MAP(BUS_ERROR_QUOTA_EXCEEDED,   EDQUOT),
        SD_BUS_ERROR_MAP(BUS_ERROR_NAME_TAKEN,       EEXIST),
        SD_BUS_ERROR_MAP_END
};

int bus_timeconv_errors_register(void) {
        int r;

        r = sd_bus_error_add_map(bus_timeconv_errors);
        return r < 0 ? r : 0;
}

const char *bus_timeconv_error_name(int error) {
        switch (error < 0 ? -error : error) {
        case ENOENT:
                return BUS_ERROR_UNKNOWN_DOMAIN;
        case ENOLINK:
                return BUS_ERROR_NO_PATH;
        case ENODEV:
        case ENODATA:
                return BUS_ERROR_UNAVAILABLE;
        case ERANGE:
                return BUS_ERROR_OUT_OF_RANGE;
        case EINVAL:
                return BUS_ERROR_INVALID_ARGUMENT;
        case EDQUOT:
                return BUS_ERROR_QUOTA_EXCEEDED;
        case EEXIST:
                return BUS_ERROR_NAME_TAKEN;
        default:
                return NULL;
        }
}

int bus_timeconv_error_setf(sd_bus_error *error, int r, const char *format, ...) {
        const char *name;
        va_list ap;

        if (r < 0)
                r = -r;
        if (r == 0)
                r = EIO;        /* a failure without a cause is still a failure */

        name = bus_timeconv_error_name(r);
        va_start(ap, format);
        if (name) {
                /* Messages name at most a few valid domain names: a truncated one still reads. */
                char message[256];

                (void) vsnprintf(message, sizeof(message), format, ap);
                (void) sd_bus_error_set(error, name, message);
        } else
                (void) sd_bus_error_set_errnofv(error, r, format, ap);
        va_end(ap);

        /* sd_bus_error_set() answers -EIO unless the map is registered: return ours. */
        return -r;
}

static bool domain_name_char_ok(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == ':' || c == '-';
}

BusNameProblem bus_domain_name_check(const char *name, size_t *ret_offset) {
        size_t n;

        if (!name || name[0] == '\0')
                return BUS_NAME_EMPTY;

        n = strnlen(name, BUS_API_DOMAIN_NAME_MAX + 1);
        if (n > BUS_API_DOMAIN_NAME_MAX)
                return BUS_NAME_TOO_LONG;

        for (size_t i = 0; i < n; i++)
                if (!domain_name_char_ok(name[i])) {
                        if (ret_offset)
                                *ret_offset = i;
                        return BUS_NAME_BAD_CHAR;
                }

        return BUS_NAME_OK;
}
