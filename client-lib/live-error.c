/* SPDX-License-Identifier: MIT */

/* The daemon's own words for a refusal. A named D-Bus error maps to an errno, which says what
 * kind of failure it was; the message says which argument, which byte, which domain. Each handle
 * keeps the latest one, so that two handles in two threads never see each other's. */

#include <string.h>

#include "bus-errors.h"
#include "live-internal.h"
#include "timeconv-internal.h"

/* Whether name is one of the contract's errors (the map), whose message says which argument. */
static bool error_is_ours(const char *name) {
        for (const sd_bus_error_map *m = bus_timeconv_errors; m->name; m++)
                if (strcmp(m->name, name) == 0)
                        return true;
        return false;
}

void live_error_save(struct timeconv *tc, const sd_bus_error *error) {
        /* Only the contract's named errors: the bus's own ("not provided by any .service files")
         * say less than timeconv_strerror(-EHOSTDOWN) does. */
        bool ours = error && sd_bus_error_is_set(error) && error->message && error->name &&
                    error_is_ours(error->name);
        const char *message = ours ? error->message : "";
        size_t n = strnlen(message, sizeof(tc->error_message) - 1);

        memcpy(tc->error_message, message, n);
        tc->error_message[n] = 0;
        tc->error_set = n > 0;
}

TIMECONV_EXPORT const char *timeconv_last_error_message(const struct timeconv *tc) {
        if (!tc || !tc->error_set)
                return NULL;
        return tc->error_message;
}
