/* SPDX-License-Identifier: MIT */

/* The method handlers. Each does, in order: note the client, read the arguments, validate
 * them (named error), ask the core, reply. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bus-api-internal.h"
#include "bus-api-jobs.h"
#include "bus-domain-keys.h"
#include "time-util.h"

/* What an export costs at the least: a few domains' snapshots. */
#define BUS_API_EXPORT_BYTES_MIN (64u << 10)

/* One source-specific entry with the type it carries, which must be its key's in the key table
 * (bus-domain-keys.h): one without a key or value, or of another type, is left out rather than
 * sent against the contract. */
static int append_extra(sd_bus_message *reply, const BusDomainExtra *e) {
        if (!e->key || !bus_domain_key_allows(e->key, e->type ? e->type : 's'))
                return 0;
        switch (e->type) {
        case 'b':
                return sd_bus_message_append(reply, "{sv}", e->key, "b", (int) e->b);
        case 'u':
                return sd_bus_message_append(reply, "{sv}", e->key, "u", e->u);
        case 't':
                return sd_bus_message_append(reply, "{sv}", e->key, "t", e->t);
        case 'x':
                return sd_bus_message_append(reply, "{sv}", e->key, "x", e->x);
        case 'd':
                return sd_bus_message_append(reply, "{sv}", e->key, "d", e->d);
        case 0:
        case 's':
                return e->value ? sd_bus_message_append(reply, "{sv}", e->key, "s", e->value) : 0;
        default:
                return 0;
        }
}

/* One entry of a key of the table (bus-domain-keys.h), named and typed by the table: value points
 * to the type the table gives (int for 'b'), and a handler passing another type is refused rather
 * than sent against the contract. */
static int append_key(sd_bus_message *reply, BusDomainKeyId id, char signature, const void *value) {
        const BusDomainKey *k = &bus_domain_keys[id];
        const char contents[2] = { k->signature, 0 };
        int r;

        if (k->signature != signature)
                return -EINVAL;
        r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', k->name);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', contents);
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, k->signature, value);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int append_bool(sd_bus_message *reply, BusDomainKeyId id, bool value) {
        int b = value;

        return append_key(reply, id, 'b', &b);
}

static int append_string(sd_bus_message *reply, BusDomainKeyId id, const char *value) {
        return append_key(reply, id, 's', value);
}

static int append_u32(sd_bus_message *reply, BusDomainKeyId id, uint32_t value) {
        return append_key(reply, id, 'u', &value);
}

static int append_u64(sd_bus_message *reply, BusDomainKeyId id, uint64_t value) {
        return append_key(reply, id, 't', &value);
}

static int append_i64(sd_bus_message *reply, BusDomainKeyId id, int64_t value) {
        return append_key(reply, id, 'x', &value);
}

static int append_double(sd_bus_message *reply, BusDomainKeyId id, double value) {
        return append_key(reply, id, 'd', &value);
}

static int append_entries(sd_bus_message *reply, const BusDomainInfo *d) {
        int r;

        /* The ten of every entry, in the table's order (the reply's order is part of the wire format
         * clients may have come to rely on). */
        r = append_bool(reply, BUS_DOMAIN_KEY_AVAILABLE, d->available);
        if (r >= 0)
                r = append_string(reply, BUS_DOMAIN_KEY_REFERENCE, d->reference ? d->reference : "");
        if (r >= 0)
                r = append_u64(reply, BUS_DOMAIN_KEY_RESOLUTION_NS, d->resolution_ns);
        if (r >= 0)
                r = append_u32(reply, BUS_DOMAIN_KEY_WRAP_BITS, d->wrap_bits);
        if (r >= 0)
                r = append_bool(reply, BUS_DOMAIN_KEY_MONOTONIC, d->monotonic);
        if (r >= 0)
                r = append_i64(reply, BUS_DOMAIN_KEY_RATE_PPB, d->rate_ppb);
        if (r >= 0)
                r = append_u64(reply, BUS_DOMAIN_KEY_UNCERTAINTY_NS, d->uncertainty_ns);
        if (r >= 0)
                r = append_u64(reply, BUS_DOMAIN_KEY_RATE_UNCERTAINTY_PPB, d->rate_uncertainty_ppb);
        if (r >= 0)
                r = append_i64(reply, BUS_DOMAIN_KEY_LAST_CALIBRATED_NS, d->last_calibrated_ns);
        if (r >= 0)
                r = append_u32(reply, BUS_DOMAIN_KEY_PERFETTO_ID, d->perfetto_id);
        if (r >= 0 && d->verdict)
                r = append_string(reply, BUS_DOMAIN_KEY_VERDICT, d->verdict);
        if (r >= 0 && d->reason && !d->available)
                r = append_string(reply, BUS_DOMAIN_KEY_REASON, d->reason);
        if (r >= 0 && d->device_name)
                r = append_string(reply, BUS_DOMAIN_KEY_DEVICE_NAME, d->device_name);
        if (r >= 0 && d->driver)
                r = append_string(reply, BUS_DOMAIN_KEY_DRIVER, d->driver);
        if (r >= 0 && d->period_ns > 0)
                r = append_double(reply, BUS_DOMAIN_KEY_PERIOD_NS, d->period_ns);
        if (r >= 0 && d->has_offset_ns)
                r = append_i64(reply, BUS_DOMAIN_KEY_OFFSET_NS, d->offset_ns);
        for (size_t i = 0; r >= 0 && i < d->n_extras && i < BUS_DOMAIN_EXTRAS_MAX; i++)
                r = append_extra(reply, &d->extras[i]);
        return r;
}

int bus_api_method_list_domains(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        BusApi *a = userdata;
        BusClient *cl;
        size_t n;
        int r;

        bus_api_touch(a);

        r = bus_api_client(a, m, &cl, error);
        if (r < 0)
                return r;
        /* Refused before the answer is built, not after. */
        r = bus_api_jobs_room(cl, "read your answers", error);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssa{sv})");
        if (r < 0)
                return r;

        n = a->ops->count_domains(a->core);
        for (size_t i = 0; i < n; i++) {
                BusDomainInfo d = {};

                r = a->ops->get_domain(a->core, i, &d);
                if (r == -ESRCH)
                        continue;       /* a departed client's domain: gone */
                if (r < 0)
                        return bus_timeconv_error_setf(error, r, "cannot describe domain %zu of %zu", i, n);
                if (!d.name || !d.unit)
                        return bus_timeconv_error_setf(error, -EIO, "domain %zu of %zu has no name or unit",
                                                       i, n);

                r = sd_bus_message_open_container(reply, 'r', "ssa{sv}");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "ss", d.name, d.unit);
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'a', "{sv}");
                if (r >= 0)
                        r = append_entries(reply, &d);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r < 0)
                        return r;
        }

        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        /* A few KiB: sent in turn with the other large answers, never ahead of a small one
         * (bus-api-jobs.h). */
        return bus_api_jobs_submit_reply(a, m, cl, reply, error);
}

int bus_api_read_pair_names(sd_bus_message *m, const char **ret_from, const char **ret_to, sd_bus_error *error) {
        const char *from, *to;
        int r;

        r = sd_bus_message_read(m, "ss", &from, &to);
        if (r < 0)
                return r;
        r = bus_api_validate_domain("from", from, error);
        if (r < 0)
                return r;
        r = bus_api_validate_domain("to", to, error);
        if (r < 0)
                return r;
        *ret_from = from;
        *ret_to = to;
        return 0;
}

int bus_api_method_convert(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        const char *from, *to;
        int64_t value, result;
        uint64_t uncertainty_ns;
        BusPair p;
        int r;

        bus_api_touch(a);

        r = bus_api_read_pair_names(m, &from, &to, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "x", &value);
        if (r < 0)
                return r;
        r = bus_api_resolve(a, from, to, &p, error);
        if (r < 0)
                return r;

        r = a->ops->convert(a->core, p.from_index, p.to_index, value, &result, &uncertainty_ns);
        if (r < 0)
                return bus_api_domain_error(a, error, r, "", &p, value);

        return sd_bus_reply_method_return(m, "xt", result, uncertainty_ns);
}

int bus_api_method_convert_many(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        const char *from, *to;
        const void *values;
        BusClient *cl;
        size_t size, n;
        BusPair p = {};
        int r;

        bus_api_touch(a);

        r = bus_api_read_pair_names(m, &from, &to, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read_array(m, 'x', &values, &size);
        if (r < 0)
                return r;
        n = size / sizeof(int64_t);

        if (n > BUS_API_CONVERT_MANY_MAX)
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'values': %zu values, at most %d a "
                                               "call: a larger batch goes in a memfd (ConvertManyMemfd), as "
                                               "libtimeconv's timeconv_convert_many() sends it",
                                               n, BUS_API_CONVERT_MANY_MAX);
        /* The pair is looked up once for all values. An empty batch asks the core nothing, as it
         * always has: it answers empty arrays whatever the names. */
        if (n == 0)
                return sd_bus_reply_method_return(m, "axat", 0, 0);
        r = bus_api_batch_open(a, m, from, to, &p, &cl, error);
        if (r < 0)
                return r;
        /* Answered from the event loop, a slice at a time (bus-api-jobs.h). */
        return bus_api_jobs_submit(a, m, cl, &p, values, n, error);
}

int bus_api_method_now(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        const char *domain;
        int64_t value;
        uint64_t uncertainty_ns;
        BusPair p;
        int r;

        bus_api_touch(a);

        r = sd_bus_message_read(m, "s", &domain);
        if (r < 0)
                return r;

        r = bus_api_validate_domain("domain", domain, error);
        if (r < 0)
                return r;

        r = bus_api_resolve(a, domain, NULL, &p, error);
        if (r < 0)
                return r;

        r = a->ops->now(a->core, p.from_index, &value, &uncertainty_ns);
        if (r < 0)
                return bus_api_domain_error(a, error, r, "", &p, 0);

        return sd_bus_reply_method_return(m, "xt", value, uncertainty_ns);
}

int bus_api_method_export_snapshots(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(freep) char *json = NULL;
        BusApi *a = userdata;
        BusClient *cl;
        int r;

        bus_api_touch(a);

        /* The budget first, so that a refused client costs no export; its size is known after. */
        r = bus_api_client(a, m, &cl, error);
        if (r < 0)
                return r;
        if (cl && !bus_client_may_reply_bytes(cl, BUS_API_EXPORT_BYTES_MIN, clock_now_ns(CLOCK_MONOTONIC)))
                return bus_api_reply_quota_error(error);

        r = a->ops->export_snapshots(a->core, &json);
        if (r < 0)
                return bus_timeconv_error_setf(error, r, "cannot export the snapshots");
        if (!json)
                return bus_timeconv_error_setf(error, -EIO, "the snapshot export is empty");
        if (cl && !bus_client_take_reply_bytes(cl, strlen(json), clock_now_ns(CLOCK_MONOTONIC)))
                return bus_api_reply_quota_error(error);

        return sd_bus_reply_method_return(m, "s", json);
}

int bus_api_method_get_shared_table(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        BusClient *cl;
        int fd, r;

        bus_api_touch(a);

        fd = a->ops->shared_table_fd ? a->ops->shared_table_fd(a->core) : -ENODEV;
        if (fd == -ENODEV)
                return bus_timeconv_error_setf(error, fd, "the daemon has no shared table: use the methods");
        if (fd < 0)
                return bus_timeconv_error_setf(error, fd, "cannot hand out the shared table");

        /* Each reply not yet read holds an fd in the bus daemon: a client that asked thousands of
         * times could make it drop us at its fd limit. One table per handle is what a client
         * needs; a few more allow for restarts of its own. */
        r = bus_api_client(a, m, &cl, error);
        if (r < 0)
                return r;
        if (cl && !bus_client_take_table(cl, clock_now_ns(CLOCK_MONOTONIC)))
                return bus_timeconv_error_setf(error, -EDQUOT, "this client has asked for the shared table %d "
                                               "times in a row, more than one a second after that: map the "
                                               "one you have", BUS_CLIENT_TABLES_BURST);

        /* sd-bus sends a dup of fd: ours stays open. At the daemon's limit of open files the dup
         * fails: the call is refused like any other beyond a limit, and the daemon goes on. */
        r = sd_bus_reply_method_return(m, "h", fd);
        if (r == -EMFILE || r == -ENFILE) {
                bus_api_out_of_fds(a, -r);
                return bus_timeconv_error_setf(error, -EDQUOT, "the daemon cannot open another file now (%s): "
                                               "ask for the shared table again later", strerror(-r));
        }
        return r;
}

/* Reads the a(sx) into clocks, at most BUS_API_SNAPSHOT_CLOCKS_MAX: the array is walked, never
 * copied whole, so a huge one costs no memory. */
static int read_clocks(sd_bus_message *m, BusClockReading *clocks, size_t *ret_n, sd_bus_error *error) {
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sx)");
        if (r < 0)
                return r;
        for (;;) {
                const char *name;
                int64_t value;

                r = sd_bus_message_read(m, "(sx)", &name, &value);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (n == BUS_API_SNAPSHOT_CLOCKS_MAX)
                        return bus_timeconv_error_setf(error, -EINVAL, "argument 'clocks': more than %d readings",
                                                       BUS_API_SNAPSHOT_CLOCKS_MAX);
                clocks[n++] = (BusClockReading) { .name = name, .value = value };
        }
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret_n = n;
        return 0;
}

int bus_api_method_push_snapshot(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusClockReading clocks[BUS_API_SNAPSHOT_CLOCKS_MAX];
        BusPushFailure failure = { .index = SIZE_MAX };
        BusApi *a = userdata;
        size_t n = 0;
        int r;

        bus_api_touch(a);

        r = read_clocks(m, clocks, &n, error);
        if (r < 0)
                return r;

        if (n < BUS_API_SNAPSHOT_CLOCKS_MIN)
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'clocks': %zu reading%s, a snapshot "
                                               "needs at least %d", n, n == 1 ? "" : "s", BUS_API_SNAPSHOT_CLOCKS_MIN);
        for (size_t i = 0; i < n; i++) {
                char arg[32];

                (void) snprintf(arg, sizeof(arg), "clocks[%zu]", i);
                r = bus_api_validate_domain(arg, clocks[i].name, error);
                if (r < 0)
                        return r;
        }
        if (!a->ops->push_snapshot)
                return bus_timeconv_error_setf(error, -EOPNOTSUPP, "this daemon takes no snapshots");

        r = a->ops->push_snapshot(a->core, sd_bus_message_get_sender(m), clocks, n, &failure);
        if (r < 0) {
                const char *reason = failure.reason ? failure.reason : "the snapshot was refused";

                if (failure.index < n)
                        return bus_timeconv_error_setf(error, r, "clocks[%zu] '%s': %s", failure.index,
                                                       clocks[failure.index].name, reason);
                return bus_timeconv_error_setf(error, r, "%s", reason);
        }

        return sd_bus_reply_method_return(m, NULL);
}
