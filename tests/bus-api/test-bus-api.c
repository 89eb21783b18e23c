/* SPDX-License-Identifier: MIT */

/* Unit test of the org.timeconv.Clock1 vtable: a server thread serves bus-api over one end of a
 * socketpair with a stub core of known answers; the main thread is the client. Every method,
 * error name, signal and property is checked, and the introspection is compared with the XML
 * contract (argv[1]). */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bus-api.h"
#include "harness-tap.h"
#include "tap.h"
#include "test-bus-api-client.h"
#include "test-bus-api-server.h"

/* ---- helpers for the client side ---- */

/* ---- the constructor, on a bus that never connects ---- */

static void test_new(void) {
        sd_bus *bus = NULL;
        BusApi *api = NULL;
        BusCoreOps partial = stub_ops;

        ok(sd_bus_new(&bus) >= 0, "sd_bus_new");
        partial.convert = NULL;
        is_int(bus_api_new(bus, &partial, NULL, &api), -EINVAL, "bus_api_new refuses missing callbacks");
        partial = stub_ops;
        partial.client_activity = NULL;
        is_int(bus_api_new(bus, &partial, NULL, &api), 0, "client_activity is optional");
        api = bus_api_free(api);
        partial = stub_ops;
        partial.shared_table_fd = NULL;
        is_int(bus_api_new(bus, &partial, NULL, &api), 0, "shared_table_fd is optional");
        api = bus_api_free(api);
        partial = stub_ops;
        partial.push_snapshot = NULL;
        is_int(bus_api_new(bus, &partial, NULL, &api), 0, "push_snapshot is optional");
        ok(bus_api_free(api) == NULL && bus_api_free(NULL) == NULL, "bus_api_free returns NULL");
        is_int(bus_api_emit_domains_changed(NULL), -EINVAL, "emitting on NULL fails");
        sd_bus_unref(bus);
}

/* ---- properties and ListDomains ---- */

static void test_properties(sd_bus *c) {
        static const struct { const char *name, *want; } props[] = {
                { "Version", "9.8.7-test" },
                { "ReferenceDomain", "alpha" },
        };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        for (size_t i = 0; i < 2; i++) {
                sd_bus_message *reply = NULL;
                const char *s = NULL;

                r = sd_bus_get_property(c, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, props[i].name,
                                        &e, &reply, "s");
                if (r >= 0)
                        r = sd_bus_message_read(reply, "s", &s);
                ok(r >= 0 && s && strcmp(s, props[i].want) == 0, "property %s is '%s'", props[i].name,
                   props[i].want);
                sd_bus_message_unref(reply);
                sd_bus_error_free(&e);
        }

        r = sd_bus_set_property(c, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "Version", &e, "s", "1");
        check_error("setting Version", r, &e, SD_BUS_ERROR_PROPERTY_READ_ONLY, EROFS, NULL);
        sd_bus_error_free(&e);
}

static void test_list_domains(sd_bus *c) {
        static const struct { const char *name, *unit, *dict; } want[] = {
                { "alpha", "ns", "available=b:1;reference=s:alpha;resolution_ns=t:1;wrap_bits=u:64;"
                  "monotonic=b:1;rate_ppb=x:0;uncertainty_ns=t:0;rate_uncertainty_ppb=t:0;last_calibrated_ns=x:1000;"
                  "perfetto_id=u:6;" },
                { "beta", "ms", "available=b:1;reference=s:alpha;resolution_ns=t:1000000;wrap_bits=u:32;"
                  "monotonic=b:1;rate_ppb=x:-250;uncertainty_ns=t:500000;rate_uncertainty_ppb=t:40;last_calibrated_ns=x:2000;"
                  "perfetto_id=u:2147488308;verdict=s:identity;offset_ns=x:-5;screen=s:0;" },
                { "gpu0", "tick", "available=b:0;reference=s:alpha;resolution_ns=t:52;wrap_bits=u:36;"
                  "monotonic=b:1;rate_ppb=x:0;uncertainty_ns=t:0;rate_uncertainty_ppb=t:0;last_calibrated_ns=x:0;"
                  "perfetto_id=u:2147483714;device_name=s:llvmpipe (LLVM 15.0.6, 256 bits);"
                  "driver=s:llvmpipe;period_ns=d:1.5;uuid=s:00ff;" },
                { "island", "ns", "available=b:1;reference=s:;resolution_ns=t:1;wrap_bits=u:64;"
                  "monotonic=b:0;rate_ppb=x:0;uncertainty_ns=t:0;rate_uncertainty_ppb=t:0;last_calibrated_ns=x:0;"
                  "perfetto_id=u:2147483715;" },
        };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        size_t n = 0;
        int r;

        r = call(c, "ListDomains", &e, &reply, NULL);
        is_int(r, 1, "ListDomains answers");
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(ssa{sv})");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "ssa{sv}")) > 0) {
                const char *name, *unit;
                char dict[1024];

                r = sd_bus_message_read(reply, "ss", &name, &unit);
                if (r >= 0)
                        r = render_dict(reply, dict, sizeof(dict));
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        break;
                if (n < sizeof(want) / sizeof(want[0])) {
                        ok(strcmp(name, want[n].name) == 0 && strcmp(unit, want[n].unit) == 0,
                           "domain %zu is %s in %s", n, want[n].name, want[n].unit);
                        ok(strcmp(dict, want[n].dict) == 0, "%s's properties", want[n].name);
                        if (strcmp(dict, want[n].dict) != 0)
                                diag("got  %s\n#   want %s", dict, want[n].dict);
                }
                n++;
        }
        ok(r >= 0, "the reply parses as a(ssa{sv})");
        is_int(n, 4, "four domains listed");
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
}

/* ---- Convert, Now, bad calls ---- */

#define LONG_NAME "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" /* 64 */

static void test_convert(sd_bus *c) {
        static const struct {
                const char *from, *to;
                int64_t value;
                const char *error;      /* NULL: success */
                int errno_want;
                int64_t want_value;
                uint64_t want_uncertainty_ns;
                const char *substr;
        } cases[] = {
                { "alpha", "beta", 5000000, NULL, 0, 12, 500000, NULL },
                { "beta", "alpha", 12, NULL, 0, 5000000, 500000, NULL },
                { "alpha", "alpha", -42, NULL, 0, -42, 0, NULL },
                { "alpha", "beta", STUB_VALUE_MAX, NULL, 0, STUB_VALUE_MAX / 1000000 + 7, 500000, NULL },
                { "nope", "alpha", 1, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT, 0, 0, "unknown domain 'nope'" },
                { "alpha", "nope", 1, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT, 0, 0, "unknown domain 'nope'" },
                { LONG_NAME + 1, "alpha", 1, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT, 0, 0, "unknown domain 'aaa" },
                { "ok_.:-9", "alpha", 1, BUS_ERROR_UNKNOWN_DOMAIN, ENOENT, 0, 0, "unknown domain 'ok_.:-9'" },
                { "island", "alpha", 1, BUS_ERROR_NO_PATH, ENOLINK, 0, 0,
                  "no conversion path from 'island' to 'alpha'" },
                { "alpha", "gpu0", 1, BUS_ERROR_UNAVAILABLE, ENODEV, 0, 0, "domain 'gpu0' is unavailable" },
                { "alpha", "beta", STUB_VALUE_MAX + 1, BUS_ERROR_OUT_OF_RANGE, ERANGE, 0, 0,
                  "value 1000000000000001 of 'alpha' is out of range for 'beta'" },
                /* the source's fault, named as such (it once said "out of range for 'alpha'") */
                { "beta", "alpha", INT64_C(4294967296), BUS_ERROR_OUT_OF_RANGE, ERANGE, 0, 0,
                  "value 4294967296 is out of range for 'beta' (32-bit values: 0 to 2^32 - 1)" },
                { "beta", "alpha", 0, BUS_ERROR_UNAVAILABLE, ENODEV, 0, 0,
                  "no calibration yet between 'beta' and 'alpha'" },
                { "beta", "alpha", -1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0,
                  "invalid value -1 of 'beta'" },
                { "", "alpha", 1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0, "argument 'from': empty" },
                { "alpha", "", 1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0, "argument 'to': empty" },
                { LONG_NAME, "alpha", 1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0,
                  "argument 'from': domain name longer than 63 bytes" },
                { "alpha", "Beta", 1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0,
                  "argument 'to': invalid byte 0x42 at offset 0" },
                { "x11 us", "alpha", 1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0,
                  "argument 'from': invalid byte 0x20 at offset 3" },
                { "alpha", "a/b", 1, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0,
                  "argument 'to': invalid byte 0x2f at offset 1" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                sd_bus_error e = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;
                int64_t value = 0;
                uint64_t uncertainty_ns = 0;
                char what[160];
                int r;

                snprintf(what, sizeof(what), "Convert(%.20s, %.20s, %" PRId64 ")", cases[i].from,
                         cases[i].to, cases[i].value);
                r = call(c, "Convert", &e, &reply, "ssx", cases[i].from, cases[i].to, cases[i].value);
                if (cases[i].error)
                        check_error(what, r, &e, cases[i].error, cases[i].errno_want, cases[i].substr);
                else {
                        if (r >= 0)
                                r = sd_bus_message_read(reply, "xt", &value, &uncertainty_ns);
                        ok(r >= 0 && value == cases[i].want_value &&
                           uncertainty_ns == cases[i].want_uncertainty_ns,
                           "%s = %" PRId64 " +- %" PRIu64, what, cases[i].want_value,
                           cases[i].want_uncertainty_ns);
                }
                sd_bus_message_unref(reply);
                sd_bus_error_free(&e);
        }
}

static void test_now(sd_bus *c) {
        static const struct {
                const char *domain, *error;
                int errno_want;
                int64_t want_value;
                uint64_t want_uncertainty_ns;
                const char *substr;
        } cases[] = {
                { "alpha", NULL, 0, 123456789, 0, NULL },
                { "beta", NULL, 0, 130, 500000, NULL },
                { "island", BUS_ERROR_UNAVAILABLE, ENODEV, 0, 0, "domain 'island' is not calibrated yet" },
                { "gpu0", BUS_ERROR_UNAVAILABLE, ENODEV, 0, 0, "domain 'gpu0' is unavailable" },
                { "nope", BUS_ERROR_UNKNOWN_DOMAIN, ENOENT, 0, 0, "unknown domain 'nope'" },
                { "", BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0, "argument 'domain': empty domain name" },
                { LONG_NAME, BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0,
                  "argument 'domain': domain name longer" },
                { "Alpha", BUS_ERROR_INVALID_ARGUMENT, EINVAL, 0, 0, "argument 'domain': invalid byte 0x41" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                sd_bus_error e = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;
                int64_t value = 0;
                uint64_t uncertainty_ns = 0;
                char what[96];
                int r;

                snprintf(what, sizeof(what), "Now(%.20s)", cases[i].domain);
                r = call(c, "Now", &e, &reply, "s", cases[i].domain);
                if (cases[i].error)
                        check_error(what, r, &e, cases[i].error, cases[i].errno_want, cases[i].substr);
                else {
                        if (r >= 0)
                                r = sd_bus_message_read(reply, "xt", &value, &uncertainty_ns);
                        ok(r >= 0 && value == cases[i].want_value &&
                           uncertainty_ns == cases[i].want_uncertainty_ns, "%s = %" PRId64 " +- %" PRIu64,
                           what, cases[i].want_value, cases[i].want_uncertainty_ns);
                }
                sd_bus_message_unref(reply);
                sd_bus_error_free(&e);
        }
}

static void test_bad_calls(sd_bus *c) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = call(c, "Convert", &e, NULL, "ss", "alpha", "beta");
        check_error("Convert with signature ss", r, &e, SD_BUS_ERROR_INVALID_ARGS, EINVAL, "'ssx'");
        sd_bus_error_free(&e);

        r = call(c, "Now", &e, NULL, "x", (int64_t) 1);
        check_error("Now with signature x", r, &e, SD_BUS_ERROR_INVALID_ARGS, EINVAL, "'s'");
        sd_bus_error_free(&e);

        r = call(c, "ConvertMany", &e, NULL, "ssat", "alpha", "beta", 1, (uint64_t) 1);
        check_error("ConvertMany with signature ssat", r, &e, SD_BUS_ERROR_INVALID_ARGS, EINVAL, "'ssax'");
        sd_bus_error_free(&e);

        r = call(c, "ListDomains", &e, NULL, "s", "alpha");
        check_error("ListDomains with an argument", r, &e, SD_BUS_ERROR_INVALID_ARGS, EINVAL, NULL);
        sd_bus_error_free(&e);

        r = call(c, "Frobnicate", &e, NULL, NULL);
        check_error("an unknown method", r, &e, SD_BUS_ERROR_UNKNOWN_METHOD, EBADR, NULL);
        sd_bus_error_free(&e);
}

/* ---- ConvertMany ---- */

static void test_convert_many(sd_bus *c) {
        static const size_t sizes[] = { 0, 1, 100, BUS_API_CONVERT_MANY_MAX };
        const size_t n_max = BUS_API_CONVERT_MANY_MAX + 1;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t *values = calloc(n_max, sizeof(int64_t));
        int r;

        if (!values) {
                skip("ConvertMany: out of memory");
                return;
        }
        for (size_t i = 0; i < n_max; i++)
                values[i] = (int64_t) i * 1000000;

        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                sd_bus_message *reply = NULL;
                const int64_t *out = NULL;
                const uint64_t *unc = NULL;
                size_t n = 0, bad = 0;

                r = convert_many(c, "alpha", "beta", values, sizes[k], &e, &reply, &out, &unc, &n);
                for (size_t i = 0; r >= 0 && i < n; i++)
                        if (out[i] != (int64_t) i + 7 || unc[i] != 500000)
                                bad++;
                ok(r >= 0 && n == sizes[k] && bad == 0, "ConvertMany of %zu values: all converted", sizes[k]);
                if (r < 0 || bad)
                        diag("r=%d n=%zu bad=%zu %s", r, n, bad, e.message ? e.message : "");
                sd_bus_message_unref(reply);
                sd_bus_error_free(&e);
        }

        {
                sd_bus_message *reply = NULL;
                const int64_t *out;
                const uint64_t *unc;
                size_t n;

                r = convert_many(c, "alpha", "beta", values, n_max, &e, &reply, &out, &unc, &n);
                check_error("ConvertMany of the maximum + 1", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                            "argument 'values': 513 values, at most 512 a call: a larger batch goes in "
                            "a memfd (ConvertManyMemfd)");
                sd_bus_error_free(&e);

                /* It fails whole at the first bad value and says which. */
                values[3] = STUB_VALUE_MAX + 1;
                values[5] = -STUB_VALUE_MAX - 1;
                r = convert_many(c, "alpha", "beta", values, 10, &e, &reply, &out, &unc, &n);
                check_error("ConvertMany with a bad values[3]", r, &e, BUS_ERROR_OUT_OF_RANGE, ERANGE,
                            "values[3]: value 1000000000000001 of 'alpha' is out of range");
                sd_bus_error_free(&e);

                r = convert_many(c, "alpha", "gpu0", values, 2, &e, &reply, &out, &unc, &n);
                check_error("ConvertMany to gpu0", r, &e, BUS_ERROR_UNAVAILABLE, ENODEV,
                            "values[0]: domain 'gpu0' is unavailable");
                sd_bus_error_free(&e);

                r = convert_many(c, "alpha", "x y", values, 2, &e, &reply, &out, &unc, &n);
                check_error("ConvertMany to 'x y'", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                            "argument 'to': invalid byte 0x20 at offset 1");
                sd_bus_error_free(&e);
        }
        free(values);
}

/* ---- ConvertManyMemfd ---- */

/* A sealed memfd holding n values (values[i] = i * 10^6) and room for the answers, or -errno. */
static int many_memfd(size_t n, size_t size, int seals) {
        int fd = memfd_create("test-bus-api", MFD_CLOEXEC | MFD_ALLOW_SEALING);

        if (fd < 0)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                int64_t v = (int64_t) i * 1000000;

                if (pwrite(fd, &v, sizeof(v), (off_t) (i * sizeof(v))) != sizeof(v))
                        goto fail;
        }
        if (ftruncate(fd, (off_t) size) < 0 || fcntl(fd, F_ADD_SEALS, seals) < 0)
                goto fail;
        return fd;
fail:
        close(fd);
        return -errno;
}

static int call_memfd(sd_bus *c, const char *to, int fd, uint64_t count, sd_bus_error *e) {
        return sd_bus_call_method(c, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "ConvertManyMemfd", e, NULL, "ssht",
                                  "alpha", to, fd, count);
}

static void test_convert_many_memfd(sd_bus *c) {
        const int sealed = F_SEAL_SHRINK | F_SEAL_GROW;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        size_t n = 1000, bad = 0;
        int fd, r;

        fd = many_memfd(n, BUS_API_MEMFD_BYTES(n), sealed);
        r = fd < 0 ? fd : call_memfd(c, "beta", fd, n, &e);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int64_t out;
                uint64_t unc;

                if (pread(fd, &out, sizeof(out), (off_t) ((n + i) * sizeof(out))) != sizeof(out) ||
                    pread(fd, &unc, sizeof(unc), (off_t) ((2 * n + i) * sizeof(unc))) != sizeof(unc) ||
                    out != (int64_t) i + 7 || unc != 500000)
                        bad++;
        }
        ok(r >= 0 && bad == 0, "ConvertManyMemfd of %zu values: all converted into the memfd (%zu wrong)", n, bad);
        sd_bus_error_free(&e);

        r = fd < 0 ? fd : call_memfd(c, "gpu0", fd, n, &e);
        check_error("ConvertManyMemfd to gpu0", r, &e, BUS_ERROR_UNAVAILABLE, ENODEV,
                    "values[0]: domain 'gpu0' is unavailable");
        sd_bus_error_free(&e);
        r = fd < 0 ? fd : call_memfd(c, "beta", fd, n + 1, &e);
        check_error("ConvertManyMemfd of more values than the memfd holds", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "argument 'memfd': 24000 bytes, 1001 values and their answers need 24024");
        sd_bus_error_free(&e);
        if (fd >= 0)
                close(fd);

        fd = many_memfd(n, BUS_API_MEMFD_BYTES(n), F_SEAL_GROW);
        r = fd < 0 ? fd : call_memfd(c, "beta", fd, n, &e);
        check_error("ConvertManyMemfd of a memfd that may shrink", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "argument 'memfd': not sealed against shrinking and growing");
        sd_bus_error_free(&e);
        if (fd >= 0)
                close(fd);

        r = call_memfd(c, "beta", STDERR_FILENO, 1, &e);
        check_error("ConvertManyMemfd of stderr", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "argument 'memfd': not a memfd that takes seals");
        sd_bus_error_free(&e);
}

/* ---- PushSnapshot ---- */

/* PushSnapshot(clocks) with n readings named names[i % n_names], values i. */
static int push(sd_bus *c, const char *const *names, size_t n_names, size_t n, sd_bus_error *e) {
        sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(c, &m, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "PushSnapshot");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sx)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "(sx)", names[i % n_names], (int64_t) i);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(c, m, 0, e, &reply);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(m);
        return r < 0 ? r : 0;
}

static void test_push_snapshot(sd_bus *c, StubCore *core) {
        static const char *const good[] = { "alpha", "cam" };
        static const char *const taken[] = { "alpha", "taken" };
        static const char *const full[] = { "full", "alpha" };
        static const char *const bad[] = { "alpha", "Cam" };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        bool names_none;
        int pushes, r;

        r = push(c, good, 2, 2, &e);
        is_int(r, 0, "PushSnapshot of two readings succeeds");
        ok(atomic_load(&core->pushes) == 1 && atomic_load(&core->push_n) == 2,
           "the core got one snapshot of two readings");
        ok(!atomic_load(&core->push_sender_set), "with no sender on a connection without a bus");
        sd_bus_error_free(&e);

        r = push(c, good, 2, BUS_API_SNAPSHOT_CLOCKS_MAX, &e);
        ok(r == 0 && atomic_load(&core->push_n) == BUS_API_SNAPSHOT_CLOCKS_MAX,
           "PushSnapshot of %d readings (the most) succeeds", BUS_API_SNAPSHOT_CLOCKS_MAX);
        sd_bus_error_free(&e);

        pushes = atomic_load(&core->pushes);
        r = push(c, good, 2, 1, &e);
        check_error("PushSnapshot of one reading", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "argument 'clocks': 1 reading, a snapshot needs at least 2");
        sd_bus_error_free(&e);
        r = push(c, good, 2, 0, &e);
        check_error("PushSnapshot of none", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL, "0 readings");
        sd_bus_error_free(&e);
        r = push(c, good, 2, BUS_API_SNAPSHOT_CLOCKS_MAX + 1, &e);
        check_error("PushSnapshot of the maximum + 1", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "argument 'clocks': more than 16 readings");
        sd_bus_error_free(&e);
        r = push(c, good, 2, 100000, &e);
        check_error("PushSnapshot of 100000 readings", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "more than 16 readings");
        sd_bus_error_free(&e);
        r = push(c, bad, 2, 2, &e);
        check_error("PushSnapshot naming 'Cam'", r, &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                    "argument 'clocks[1]': invalid byte 0x43 at offset 0");
        sd_bus_error_free(&e);
        is_int(atomic_load(&core->pushes) - pushes, 0, "no malformed snapshot reached the core");

        r = push(c, taken, 2, 2, &e);
        check_error("PushSnapshot to another client's domain", r, &e, BUS_ERROR_NAME_TAKEN, EEXIST,
                    "clocks[1] 'taken': the domain belongs to another client");
        sd_bus_error_free(&e);
        r = push(c, full, 2, 2, &e);
        names_none = e.message && strstr(e.message, "clocks[") == NULL;
        check_error("PushSnapshot over quota", r, &e, BUS_ERROR_QUOTA_EXCEEDED, EDQUOT, "no room");
        ok(names_none, "a failure of no entry names none");

        r = call(c, "PushSnapshot", &e, NULL, "a(ss)", 2, "alpha", "1", "cam", "2");
        check_error("PushSnapshot with signature a(ss)", r, &e, SD_BUS_ERROR_INVALID_ARGS, EINVAL, NULL);
        sd_bus_error_free(&e);
}

/* ---- ExportSnapshots, activity, signals ---- */

static void test_export_snapshots(sd_bus *c) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *json = NULL;
        int r;

        r = call(c, "ExportSnapshots", &e, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &json);
        ok(r >= 0 && json && strcmp(json, "{\"snapshots\":[]}") == 0,
           "ExportSnapshots returns the core's JSON");
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
}

static void test_activity(sd_bus *c, StubCore *core) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int before, after_ok, after_bad, after_get;

        before = atomic_load(&core->activity);
        ok(before > 0, "earlier method calls were reported as client activity (%d)", before);
        (void) call(c, "Now", &e, NULL, "s", "alpha");
        after_ok = atomic_load(&core->activity);
        sd_bus_error_free(&e);
        (void) call(c, "Now", &e, NULL, "s", "");
        after_bad = atomic_load(&core->activity);
        sd_bus_error_free(&e);
        (void) sd_bus_get_property(c, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "Version", &e, &reply, "s");
        after_get = atomic_load(&core->activity);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);

        is_int(after_ok - before, 1, "a method call is one client activity");
        is_int(after_bad - after_ok, 1, "a rejected call counts too");
        is_int(after_get - after_bad, 0, "reading a property does not");
}

static void test_signals(sd_bus *c, Server *srv) {
        SignalsSeen seen = {};

        ok(signals_subscribe(c, &seen) >= 0, "client subscribes to the signals");
        ok(write(srv->cmd_write, "dc", 2) == 2, "server is asked to emit");
        signals_wait(c, &seen, 5000);
        is_int(seen.discontinuity, 1, "Discontinuity received once");
        ok(strcmp(seen.domain, "beta") == 0 && seen.monotonic_ns == 1000 && seen.step_ns == -2000 &&
                   strcmp(seen.kind, "step") == 0,
           "Discontinuity carries (beta, 1000, -2000, step)");
        is_int(seen.domains_changed, 1, "DomainsChanged received once");
        is_int(atomic_load(&srv->emit_bad_rc), -EINVAL, "emitting for an invalid domain name fails");
        signals_unsubscribe(&seen);
}

/* ---- the XML contract against the live introspection ---- */

static void test_introspection(sd_bus *c, const char *xml_path) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *got = NULL;
        char *want, *p;
        int r;

        want = xml_path ? read_file(xml_path) : NULL;
        ok(want, "read the XML contract %s", xml_path ? xml_path : "(no path given as argv[1])");
        r = sd_bus_call_method(c, NULL, BUS_API_OBJECT, "org.freedesktop.DBus.Introspectable",
                               "Introspect", &e, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &got);
        ok(r >= 0 && got, "the object introspects");
        if (!want || !got)
                goto finish;

        is_int(xml_compare(want, got, BUS_API_INTERFACE, 12, true), 0,
               "the introspected interface matches the XML contract");

        /* The comparison can fail: rename one argument of the contract. */
        p = strstr(want, "name=\"uncertainty_ns\"");
        if (p)
                memcpy(p, "name=\"uncertainty_us\"", strlen("name=\"uncertainty_us\""));
        is_int(xml_compare(want, got, BUS_API_INTERFACE, 12, false), 1, "a renamed argument is caught");
        if (p)
                memcpy(p, "name=\"uncertainty_ns\"", strlen("name=\"uncertainty_ns\""));
        p = strstr(want, "direction=\"out\"");
        if (p)
                memcpy(p, "direction=\"in\" ", strlen("direction=\"in\" "));
        is_int(xml_compare(want, got, BUS_API_INTERFACE, 12, false), 1, "a changed direction is caught");

finish:
        free(want);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
}

int main(int argc, char **argv) {
        Server srv;
        sd_bus *client = NULL;
        int client_fd, r;

        tap_args(argc, argv, 1, "CLOCK1_XML");
        test_new();
        is_int(bus_timeconv_errors_register(), 0, "the client registers the error map");

        r = server_start_pair(&srv, &stub_ops, &client_fd);
        is_int(r, 0, "the server thread starts on a socketpair");
        if (r < 0)
                return done_testing();

        r = client_new(client_fd, &client);
        is_int(r, 0, "client connects over the socketpair");
        if (r >= 0) {
                test_properties(client);
                test_list_domains(client);
                test_convert(client);
                test_now(client);
                test_bad_calls(client);
                test_convert_many(client);
                test_convert_many_memfd(client);
                test_export_snapshots(client);
                test_push_snapshot(client, &srv.core);
                test_activity(client, &srv.core);
                test_signals(client, &srv);
                test_introspection(client, argv[1]);
        }
        is_int(atomic_load(&srv.setup_rc), 0, "the server thread set up the object");

        sd_bus_flush_close_unref(client);
        server_stop(&srv);
        return done_testing();
}
