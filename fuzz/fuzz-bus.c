/* SPDX-License-Identifier: MIT */

/* The bus method handlers (bus-api/) as a client reaches them: a real sd-bus server connection
 * with the real vtable (bus_api_new()) over a socketpair, a stub core (fuzz-bus-core.c), and
 * method calls built from the fuzz input with sd_bus_message_new_method_call() on the client
 * end, right or wrong signatures, hostile names, arrays past the limits, and failures the
 * core injects. Every call must get exactly one reply, and the reply must be the one the
 * contract (org.timeconv.Clock1.xml) says: the stub's answer, or the named error. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz-bus-args.h"
#include "fuzz-bus-core.h"

#define PUMP_IDLE_ROUNDS_MAX 64

typedef struct Method {
        const char *interface;
        const char *member;
        const char *signature;
        bool ours;              /* a method of our vtable: its reply is checked */
} Method;

static const Method methods[] = {
        { BUS_API_INTERFACE, "ListDomains", "", true },
        { BUS_API_INTERFACE, "Convert", "ssx", true },
        { BUS_API_INTERFACE, "ConvertMany", "ssax", true },
        { BUS_API_INTERFACE, "ConvertManyMemfd", "ssht", true },
        { BUS_API_INTERFACE, "Now", "s", true },
        { BUS_API_INTERFACE, "ExportSnapshots", "", true },
        { BUS_API_INTERFACE, "GetSharedTable", "", true },
        { BUS_API_INTERFACE, "PushSnapshot", "a(sx)", true },
        { "org.freedesktop.DBus.Properties", "Get", "ss", false },
        { "org.freedesktop.DBus.Properties", "GetAll", "s", false },
        { "org.freedesktop.DBus.Introspectable", "Introspect", "", false },
        { BUS_API_INTERFACE, "NoSuchMethod", "", false },
};

#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

static const int injected_errors[] = {
        0, ENOENT, ENOLINK, ENODEV, ENODATA, ERANGE, EINVAL, EDQUOT, EEXIST, EIO, EPERM, EOPNOTSUPP,
};

/* One server and one client connection for the whole run, as a daemon keeps its bus. */
typedef struct Fuzz {
        sd_bus *server, *client;
        BusApi *api;
        FuzzCore core;
        sd_bus_message *reply;
} Fuzz;

static Fuzz *fuzz_get(void) {
        static Fuzz f;
        sd_id128_t id;
        int fds[2];

        if (f.server)
                return &f;

        fuzz_check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) == 0, "socketpair");
        fuzz_check(sd_id128_randomize(&id) >= 0, "id");
        fuzz_check(sd_bus_new(&f.server) >= 0 && sd_bus_new(&f.client) >= 0, "sd_bus_new");
        fuzz_check(sd_bus_set_fd(f.server, fds[0], fds[0]) >= 0 && sd_bus_set_server(f.server, 1, id) >= 0 &&
                   sd_bus_negotiate_fds(f.server, 1) >= 0 && sd_bus_start(f.server) >= 0, "server");
        fuzz_check(sd_bus_set_fd(f.client, fds[1], fds[1]) >= 0 && sd_bus_negotiate_fds(f.client, 1) >= 0 &&
                   sd_bus_start(f.client) >= 0, "client");

        f.core.table_fd = memfd_create("fuzz-table", MFD_CLOEXEC);
        fuzz_check(f.core.table_fd >= 0, "memfd");
        fuzz_check(bus_api_new(f.server, &fuzz_core_ops, &f.core, &f.api) >= 0, "bus_api_new");
        return &f;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Fuzz *f = userdata;

        fuzz_check(!f->reply, "a second reply");
        f->reply = sd_bus_message_ref(m);
        return 0;
}

/* Both ends in turn until the reply is in; a call left unanswered is a finding. */
static void pump(Fuzz *f) {
        for (unsigned idle = 0; !f->reply;) {
                int a = sd_bus_process(f->server, NULL), b = sd_bus_process(f->client, NULL);

                fuzz_check(a >= 0 && b >= 0, "process: %d %d", a, b);
                idle = a == 0 && b == 0 ? idle + 1 : 0;
                fuzz_check(idle < PUMP_IDLE_ROUNDS_MAX, "no reply");
        }
}

/* The name a handler's errno turns into: ours, else sd-bus's own. */
static const char *error_name_of(int error) {
        const char *name = bus_timeconv_error_name(error);
        static sd_bus_error e = SD_BUS_ERROR_NULL;

        if (name)
                return name;
        sd_bus_error_free(&e);
        (void) sd_bus_error_set_errno(&e, error);
        return e.name;
}

static bool name_is_ours(const char *name) {
        for (const sd_bus_error_map *e = bus_timeconv_errors; e->name; e++)
                if (strcmp(e->name, name) == 0)
                        return true;
        return false;
}

static bool names_valid(const FuzzArgs *args, size_t from, size_t n) {
        for (size_t i = from; i < from + n; i++)
                if (!bus_domain_name_is_valid(args->strings[i]))
                        return false;
        return true;
}

static bool names_known(const FuzzArgs *args, size_t from, size_t n) {
        for (size_t i = from; i < from + n; i++)
                if (!fuzz_core_knows(args->strings[i]))
                        return false;
        return true;
}

/* The error the call must get, or NULL when it must succeed. */
static const char *expected_error(const Method *m, const FuzzArgs *args, const FuzzCore *c) {
        const char *injected = c->error ? error_name_of(c->error) : NULL;
        size_t n;

        if (strcmp(m->member, "Convert") == 0 || strcmp(m->member, "ConvertMany") == 0) {
                n = strcmp(m->member, "Convert") == 0 ? 1 : args->n_elements;
                if (!names_valid(args, 0, 2))
                        return BUS_ERROR_INVALID_ARGUMENT;
                if (n == 0)
                        return NULL;
                if (!names_known(args, 0, 2))
                        return BUS_ERROR_UNKNOWN_DOMAIN;
                return c->fail_at < n ? injected : NULL;
        }
        if (strcmp(m->member, "ConvertManyMemfd") == 0) {
                /* In the handler's order: names, count, the memfd, then the core. */
                if (!names_valid(args, 0, 2) || args->count > BUS_API_CONVERT_MANY_MEMFD_MAX ||
                    (args->memfd_seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW) ||
                    args->memfd_size < BUS_API_MEMFD_BYTES(args->count))
                        return BUS_ERROR_INVALID_ARGUMENT;
                if (args->count == 0)
                        return NULL;
                if (!names_known(args, 0, 2))
                        return BUS_ERROR_UNKNOWN_DOMAIN;
                if (args->memfd_seals & F_SEAL_WRITE)
                        return BUS_ERROR_INVALID_ARGUMENT;
                return c->fail_at < args->count ? injected : NULL;
        }
        if (strcmp(m->member, "Now") == 0) {
                if (!names_valid(args, 0, 1))
                        return BUS_ERROR_INVALID_ARGUMENT;
                if (!names_known(args, 0, 1))
                        return BUS_ERROR_UNKNOWN_DOMAIN;
        }
        if (strcmp(m->member, "PushSnapshot") == 0) {
                n = args->n_elements;
                if (n < BUS_API_SNAPSHOT_CLOCKS_MIN || n > BUS_API_SNAPSHOT_CLOCKS_MAX ||
                    !names_valid(args, 0, n))
                        return BUS_ERROR_INVALID_ARGUMENT;
        }
        if (strcmp(m->member, "ListDomains") == 0)
                return NULL;
        return c->fail_at == 0 ? injected : NULL;
}

static void check_success(const Method *m, const FuzzArgs *args, sd_bus_message *reply) {
        const char *json;
        int64_t value;
        uint64_t uncertainty_ns;
        const void *values, *uncertainties;
        size_t n_values, n_uncertainties;
        unsigned listed = 0;
        int fd;

        if (strcmp(m->member, "Convert") == 0) {
                fuzz_check(sd_bus_message_read(reply, "xt", &value, &uncertainty_ns) > 0, "Convert reply");
                fuzz_check(value == fuzz_core_converted(args->ints[0]) &&
                           uncertainty_ns == FUZZ_CONVERT_UNCERTAINTY_NS, "Convert answered %lld",
                           (long long) value);
        } else if (strcmp(m->member, "ConvertMany") == 0) {
                fuzz_check(sd_bus_message_read_array(reply, 'x', &values, &n_values) >= 0 &&
                           sd_bus_message_read_array(reply, 't', &uncertainties, &n_uncertainties) >= 0,
                           "ConvertMany reply");
                fuzz_check(n_values == args->n_elements * 8 && n_uncertainties == n_values,
                           "ConvertMany: %zu values in, %zu and %zu bytes out", args->n_elements, n_values,
                           n_uncertainties);
                for (size_t i = 0; i < args->n_elements; i++) {
                        memcpy(&value, (const char *) values + 8 * i, 8);
                        fuzz_check(value == fuzz_core_converted(args->ints[i]), "ConvertMany value %zu", i);
                }
        } else if (strcmp(m->member, "ConvertManyMemfd") == 0) {
                fuzz_check(sd_bus_message_at_end(reply, true) > 0, "ConvertManyMemfd answers nothing");
                for (size_t i = 0; i < args->count; i++) {
                        uint64_t u;

                        fuzz_check(pread(args->memfd, &value, 8, (off_t) (8 * (args->count + i))) == 8 &&
                                   pread(args->memfd, &u, 8, (off_t) (8 * (2 * args->count + i))) == 8,
                                   "ConvertManyMemfd: answer %zu not in the memfd", i);
                        fuzz_check(value == fuzz_core_converted(args->ints[i]) && u == FUZZ_CONVERT_UNCERTAINTY_NS,
                                   "ConvertManyMemfd value %zu", i);
                }
        } else if (strcmp(m->member, "Now") == 0) {
                fuzz_check(sd_bus_message_read(reply, "xt", &value, &uncertainty_ns) > 0 &&
                           value == FUZZ_NOW_VALUE && uncertainty_ns == FUZZ_NOW_UNCERTAINTY_NS, "Now reply");
        } else if (strcmp(m->member, "ExportSnapshots") == 0) {
                fuzz_check(sd_bus_message_read(reply, "s", &json) > 0 && strcmp(json, FUZZ_EXPORT_JSON) == 0,
                           "ExportSnapshots reply");
        } else if (strcmp(m->member, "GetSharedTable") == 0) {
                fuzz_check(sd_bus_message_read(reply, "h", &fd) > 0 && fd >= 0, "GetSharedTable reply");
        } else if (strcmp(m->member, "PushSnapshot") == 0) {
                fuzz_check(sd_bus_message_at_end(reply, true) > 0, "PushSnapshot answers nothing");
        } else if (strcmp(m->member, "ListDomains") == 0) {
                fuzz_check(sd_bus_message_enter_container(reply, 'a', "(ssa{sv})") > 0, "ListDomains reply");
                while (sd_bus_message_skip(reply, "(ssa{sv})") > 0)
                        listed++;
                fuzz_check(listed == fuzz_core_listed(), "%u domains listed", listed);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FuzzInput in = { data, size };
        Fuzz *f = fuzz_get();
        sd_bus_message *call = NULL;
        const Method *m;
        const sd_bus_error *e;
        const char *signature, *want;
        bool right_signature;
        unsigned activity;
        FuzzArgs *args;
        uint8_t how;
        int r;

        /* The first bytes say which method (0), how it is sent (1: 0x80 a wrong signature,
         * 0x40 without 0x20 a wrong object path, 0x10 a refused snapshot says why), which errno
         * the core injects (2) into which of its calls (3), and which reading a refused snapshot
         * blames (4). The arguments follow (fuzz-bus-args.c). */
        m = &methods[fuzz_u8(&in) % N_METHODS];
        how = fuzz_u8(&in);
        f->core.error = injected_errors[fuzz_u8(&in) % (sizeof(injected_errors) / sizeof(injected_errors[0]))];
        f->core.fail_at = fuzz_u8(&in) % 4;
        f->core.push_failure_index = fuzz_u8(&in) % 24;
        f->core.push_failure_reason = how & 0x10;
        f->core.converts = 0;
        signature = how & 0x80 ? fuzz_args_wrong_signature(&in) : m->signature;
        right_signature = strcmp(signature, m->signature) == 0;

        args = calloc(1, sizeof(*args));
        if (!args)
                return 0;
        fuzz_args_init(args);
        r = sd_bus_message_new_method_call(f->client, &call, NULL,
                                           how & 0x40 && !(how & 0x20) ? "/org/timeconv/Other" : BUS_API_OBJECT,
                                           m->interface, m->member);
        fuzz_check(r >= 0, "new_method_call: %d", r);
        r = fuzz_args_append(call, signature, &in, args);
        if (r < 0) {
                /* Nothing a client could send (a record full, a nesting too deep). */
                sd_bus_message_unref(call);
                fuzz_args_done(args);
                free(args);
                return 0;
        }

        activity = f->core.activity;
        r = sd_bus_call_async(f->client, NULL, call, on_reply, f, 0);
        fuzz_check(r >= 0, "call_async: %d", r);
        pump(f);

        e = sd_bus_message_get_error(f->reply);
        fuzz_check(!e || sd_bus_error_is_set(e), "an error reply without a name");
        if (e && strncmp(e->name, "org.timeconv.Clock1.Error.", 26) == 0)
                fuzz_check(name_is_ours(e->name), "a name of ours that is not in the map: %s", e->name);

        if (m->ours && strcmp(sd_bus_message_get_path(call), BUS_API_OBJECT) == 0) {
                if (!right_signature) {
                        fuzz_check(e && strcmp(e->name, SD_BUS_ERROR_INVALID_ARGS) == 0,
                                   "%s(%s): %s instead of InvalidArgs", m->member, signature,
                                   e ? e->name : "success");
                } else {
                        fuzz_check(f->core.activity == activity + 1, "%s: activity noted %u times",
                                   m->member, f->core.activity - activity);
                        want = expected_error(m, args, &f->core);
                        fuzz_check(want ? e && strcmp(e->name, want) == 0 : !e, "%s: %s (%s) instead of %s",
                                   m->member, e ? e->name : "success", e ? e->message : "",
                                   want ? want : "success");
                        if (!e)
                                check_success(m, args, f->reply);
                }
        }

        f->reply = sd_bus_message_unref(f->reply);
        sd_bus_message_unref(call);
        fuzz_args_done(args);
        free(args);
        return 0;
}
