/* SPDX-License-Identifier: MIT */
#pragma once

/* The D-Bus floors of a method call to timeconvd, for bench-bus and bench-client:
 *   bench_ping(): org.freedesktop.DBus.Peer.Ping to the daemon, which sd-bus answers without
 *     running any of ours: the call and its reply each routed through the bus daemon, as a
 *     Convert's are, so Convert's round trip against it is what the daemon's work adds;
 *   bench_get_id(): org.freedesktop.DBus.GetId, answered by the bus daemon itself: one routing,
 *     what the bus daemon alone costs, not a floor of Convert (which takes two).
 * Header-only: each benchmark is one program. */

#include <systemd/sd-bus.h>

#include "bus-errors.h"

static inline int bench_ping(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, "org.freedesktop.DBus.Peer", "Ping", NULL,
                               &reply, "");
        sd_bus_message_unref(reply);
        return r;
}

static inline int bench_get_id(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        const char *id;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId",
                               NULL, &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &id);
        sd_bus_message_unref(reply);
        return r;
}
