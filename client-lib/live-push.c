/* SPDX-License-Identifier: MIT */

/* Application clocks: PushSnapshot from a handle. The daemon ties an application domain to the
 * unique bus name that pushed it first, which is this handle's connection: the domain lives as
 * long as the handle (timeconv_free() ends it) and only this handle may push to it. The
 * handle never reconnects on its own, so that the domain cannot silently change hands. */

#include <errno.h>
#include <string.h>

#include "bus-errors.h"
#include "cleanup.h"
#include "live-internal.h"
#include "timeconv-internal.h"

TIMECONV_EXPORT int timeconv_push_snapshot(struct timeconv *tc, const struct timeconv_reading *readings,
                                           size_t n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!readings || n < BUS_API_SNAPSHOT_CLOCKS_MIN || n > BUS_API_SNAPSHOT_CLOCKS_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!readings[i].domain)
                        return -EINVAL;

        r = sd_bus_message_new_method_call(tc->bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                           "PushSnapshot");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sx)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "(sx)", readings[i].domain, readings[i].value);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;
        return live_bus_call_message(tc, m, NULL);
}
