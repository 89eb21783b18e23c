/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "bus-api-internal.h"
#include "bus-api-jobs.h"

/* Version and ReferenceDomain: strings the core names, constant for its life. */
static int property_get_string(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply,
                               void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        const char *s = strcmp(property, "Version") == 0 ? a->ops->version(a->core) :
                        a->ops->reference_domain(a->core);

        return sd_bus_message_append(reply, "s", s ? s : "");
}

/* The argument names here must match org.timeconv.Clock1.xml: test-bus-api compares them.
 * Any client may call any method (UNPRIVILEGED: no capability check): all but PushSnapshot
 * only read, and PushSnapshot changes only the caller's own domains. */
static const sd_bus_vtable bus_api_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("Version", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ReferenceDomain", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),

        SD_BUS_METHOD_WITH_ARGS("ListDomains",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(ssa{sv})", domains),
                                bus_api_method_list_domains,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Convert",
                                SD_BUS_ARGS("s", from, "s", to, "x", value),
                                SD_BUS_RESULT("x", value, "t", uncertainty_ns),
                                bus_api_method_convert,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ConvertMany",
                                SD_BUS_ARGS("s", from, "s", to, "ax", values),
                                SD_BUS_RESULT("ax", values, "at", uncertainty_ns),
                                bus_api_method_convert_many,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ConvertManyMemfd",
                                SD_BUS_ARGS("s", from, "s", to, "h", memfd, "t", count),
                                SD_BUS_NO_RESULT,
                                bus_api_method_convert_many_memfd,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Now",
                                SD_BUS_ARGS("s", domain),
                                SD_BUS_RESULT("x", value, "t", uncertainty_ns),
                                bus_api_method_now,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ExportSnapshots",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("s", json),
                                bus_api_method_export_snapshots,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSharedTable",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("h", table),
                                bus_api_method_get_shared_table,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_METHOD_WITH_ARGS("PushSnapshot",
                                SD_BUS_ARGS("a(sx)", clocks),
                                SD_BUS_NO_RESULT,
                                bus_api_method_push_snapshot,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_ARGS("Discontinuity",
                                SD_BUS_ARGS("s", domain, "x", monotonic_ns, "x", step_ns, "s", kind),
                                0),
        SD_BUS_SIGNAL_WITH_ARGS("DomainsChanged",
                                SD_BUS_ARGS("as", added, "as", removed, "as", changed),
                                0),

        SD_BUS_VTABLE_END
};

void bus_api_out_of_fds(BusApi *a, int errnum) {
        if (a->ops->out_of_fds)
                a->ops->out_of_fds(a->core, errnum);
}

void bus_api_touch(BusApi *a) {
        if (a->ops->client_activity)
                a->ops->client_activity(a->core);
}

int bus_api_client(BusApi *a, sd_bus_message *m, BusClient **ret, sd_bus_error *error) {
        const char *sender = sd_bus_message_get_sender(m);
        int r;

        /* A connection without a bus (a peer of its own) has no other clients to protect. */
        if (!sender) {
                *ret = NULL;
                return 0;
        }
        r = bus_clients_get(a->clients, sender, ret);

        if (r == -EDQUOT)
                return bus_timeconv_error_setf(error, r, "the daemon serves %d clients with large calls "
                                               "already: try again later", BUS_CLIENTS_MAX);
        return r;
}

int bus_api_reply_quota_error(sd_bus_error *error) {
        return bus_timeconv_error_setf(error, -EDQUOT, "large replies are limited to %u MiB/s per client and "
                                       "%u MiB/s in all: read your replies, ask again later, or convert "
                                       "through the shared table (libtimeconv)",
                                       BUS_CLIENT_REPLY_BYTES_PER_S >> 20, BUS_CLIENTS_REPLY_BYTES_PER_S >> 20);
}

int bus_api_validate_domain(const char *arg, const char *name, sd_bus_error *error) {
        size_t offset = 0;

        switch (bus_domain_name_check(name, &offset)) {
        case BUS_NAME_OK:
                return 0;
        case BUS_NAME_EMPTY:
                return bus_timeconv_error_setf(error, -EINVAL, "argument '%s': empty domain name", arg);
        case BUS_NAME_TOO_LONG:
                return bus_timeconv_error_setf(error, -EINVAL,
                                               "argument '%s': domain name longer than %d bytes",
                                               arg, BUS_API_DOMAIN_NAME_MAX);
        case BUS_NAME_BAD_CHAR:
        default:
                return bus_timeconv_error_setf(error, -EINVAL,
                                               "argument '%s': invalid byte 0x%02x at offset %zu of "
                                               "the domain name (allowed: a-z 0-9 _ . : -)",
                                               arg, (unsigned) (unsigned char) name[offset], offset);
        }
}

int bus_api_resolve(BusApi *a, const char *from, const char *to, BusPair *ret, sd_bus_error *error) {
        BusPair p = { .from = from, .to = to };
        int r;

        r = a->ops->resolve(a->core, from, &p.from_index);
        if (r == -ENOENT)
                return bus_timeconv_error_setf(error, r, "unknown domain '%s'", from);
        if (r < 0)
                return bus_timeconv_error_setf(error, r, "cannot look up domain '%s'", from);
        if (to) {
                r = a->ops->resolve(a->core, to, &p.to_index);
                if (r == -ENOENT)
                        return bus_timeconv_error_setf(error, r, "unknown domain '%s'", to);
                if (r < 0)
                        return bus_timeconv_error_setf(error, r, "cannot look up domain '%s'", to);
        }

        *ret = p;
        return 0;
}

int bus_api_batch_open(BusApi *a, sd_bus_message *m, const char *from, const char *to, BusPair *ret_pair,
                       BusClient **ret_client, sd_bus_error *error) {
        int r;

        r = bus_api_resolve(a, from, to, ret_pair, error);
        if (r < 0)
                return r;
        return bus_api_client(a, m, ret_client, error);
}

/* For error messages only: whether the domain at index is there but unavailable, and why
 * (*ret_reason: "" when the source cannot say; valid until the next call into the core). */
static bool unavailable(BusApi *a, size_t index, const char **ret_reason) {
        BusDomainInfo info = {};

        if (a->ops->get_domain(a->core, index, &info) < 0 || info.available)
                return false;
        *ret_reason = info.reason ?: "";
        return true;
}

/* For error messages only: whether value lies outside the raw range of a domain that wraps
 * (x11: 32 bits), with *ret_wrap_bits its width. */
static bool wrapped_value_out_of_range(BusApi *a, size_t index, int64_t value, unsigned *ret_wrap_bits) {
        BusDomainInfo info = {};

        if (a->ops->get_domain(a->core, index, &info) < 0 || info.wrap_bits == 0 || info.wrap_bits >= 64)
                return false;
        if (value >= 0 && !((uint64_t) value >> info.wrap_bits))
                return false;
        *ret_wrap_bits = info.wrap_bits;
        return true;
}

int bus_api_domain_error(BusApi *a, sd_bus_error *error, int r, const char *where, const BusPair *p,
                         int64_t value) {
        const char *from = p->from, *to = p->to, *who, *reason = "";
        unsigned wrap_bits;

        switch (r) {
        case -ENOLINK:
                if (to)
                        return bus_timeconv_error_setf(error, r, "%sno conversion path from '%s' to '%s'",
                                                       where, from, to);
                break;
        case -ENODEV:
        case -ENODATA:
                /* The core says the conversion cannot be made, not which side stops it. */
                who = unavailable(a, p->from_index, &reason) ? from :
                      to && unavailable(a, p->to_index, &reason) ? to : NULL;
                if (!who && !to)
                        who = from;
                if (who)
                        return bus_timeconv_error_setf(error, r, "%sdomain '%s' is %s%s%s", where, who,
                                                       r == -ENODATA ? "not calibrated yet" : "unavailable",
                                                       reason[0] ? ": " : "", reason);
                if (r == -ENODATA)
                        return bus_timeconv_error_setf(error, r, "%sno calibration yet between '%s' and '%s'",
                                                       where, from, to);
                break;
        case -ERANGE:
                /* A wrapping source refuses a value outside its width before any conversion: the
                 * fault is the source's, not the target's range. */
                if (to && wrapped_value_out_of_range(a, p->from_index, value, &wrap_bits))
                        return bus_timeconv_error_setf(error, r, "%svalue %" PRId64 " is out of range for '%s' "
                                                       "(%u-bit values: 0 to 2^%u - 1)", where, value, from,
                                                       wrap_bits, wrap_bits);
                if (to)
                        return bus_timeconv_error_setf(error, r, "%svalue %" PRId64 " of '%s' is out of "
                                                       "range for '%s'", where, value, from, to);
                return bus_timeconv_error_setf(error, r, "%sthe time of '%s' is out of range", where, from);
        case -EINVAL:
                if (to)
                        return bus_timeconv_error_setf(error, r, "%sinvalid value %" PRId64 " of '%s'",
                                                       where, value, from);
                break;
        }

        if (to)
                return bus_timeconv_error_setf(error, r, "%sconverting %" PRId64 " from '%s' to '%s' failed",
                                               where, value, from, to);
        return bus_timeconv_error_setf(error, r, "%sreading '%s' failed", where, from);
}

/* A client left the bus: what it queued goes unanswered, and the memory it took goes back. */
static void on_client_gone(BusClient *cl, void *userdata) {
        bus_api_jobs_drop_client(userdata, cl);
        bus_api_release_arm(userdata);
}

int bus_api_new(sd_bus *bus, const BusCoreOps *ops, void *core, BusApi **ret) {
        _cleanup_(bus_api_freep) BusApi *a = NULL;
        int r;

        if (!bus || !ops || !ret)
                return -EINVAL;
        if (!ops->count_domains || !ops->get_domain || !ops->resolve || !ops->convert || !ops->now ||
            !ops->export_snapshots || !ops->version || !ops->reference_domain)
                return -EINVAL;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->bus = sd_bus_ref(bus);
        a->ops = ops;
        a->core = core;

        r = bus_clients_new(bus, on_client_gone, a, &a->clients);
        if (r < 0)
                return r;

        r = sd_bus_add_object_vtable(bus, &a->slot, BUS_API_OBJECT, BUS_API_INTERFACE,
                                     bus_api_vtable, a);
        if (r < 0)
                return r;

        r = bus_api_filter_add(a);
        if (r < 0)
                return r;

        r = bus_api_changes_init(a);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(a);
        return 0;
}

BusApi *bus_api_free(BusApi *a) {
        if (!a)
                return NULL;

        sd_bus_slot_unref(a->slot);
        /* Before the filter's sources: each client gone asks for a release (on_client_gone). */
        a->clients = bus_clients_free(a->clients);
        bus_api_filter_done(a);
        bus_api_jobs_done(a);
        bus_api_changes_done(a);
        sd_bus_unref(a->bus);
        free(a);
        return NULL;
}

const char *bus_discontinuity_kind_to_string(BusDiscontinuityKind kind) {
        static const char *const names[] = {
                [BUS_DISCONTINUITY_STEP] = "step",
                [BUS_DISCONTINUITY_RATE] = "rate",
                [BUS_DISCONTINUITY_RESTART] = "restart",
        };

        /* Unsigned: a value below the enum's range is out of the table too. */
        return (size_t) kind < ELEMENTSOF(names) ? names[kind] : NULL;
}

int bus_api_emit_discontinuity(BusApi *a, const char *domain, int64_t monotonic_ns, int64_t step_ns,
                               BusDiscontinuityKind kind) {
        const char *kind_str = bus_discontinuity_kind_to_string(kind);

        if (!a || !bus_domain_name_is_valid(domain) || !kind_str)
                return -EINVAL;

        return sd_bus_emit_signal(a->bus, BUS_API_OBJECT, BUS_API_INTERFACE, "Discontinuity",
                                  "sxxs", domain, monotonic_ns, step_ns, kind_str);
}
