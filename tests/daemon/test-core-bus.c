/* SPDX-License-Identifier: MIT */

/* The core's answers to the bus (daemon/core-bus.c), on a core of fake clocks: resolve() finds
 * each name once and says -ENOENT for one that names no domain; convert() and now() go by the
 * indices it gave and refuse an index that names nothing; and through the real vtable on a
 * socketpair, every error names the side at fault: an unknown from, an unknown to, both, a
 * value out of range, an unavailable or uncalibrated domain. */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core.h"
#include "core-bus.h"
#include "fake.h"
#include "harness-tap.h"
#include "tap.h"

#define PUMP_IDLE_ROUNDS_MAX 64
#define BURSTS 6

/* ---- the core ---- */

/* A fake clock of unit ns: the truth is offset_ns + r (1 + rate_ppm 1e-6). */
static int add_fake(Core *c, const char *name, int64_t offset_ns, double rate_ppm, uint64_t seed) {
        const FakeConfig config = {
                .unit = UNIT_NS,
                .offset_ns = offset_ns,
                .rate_ppm = rate_ppm,
                .deviation_min_ns = 30,
                .deviation_max_ns = 90,
                .r_start_ns = INT64_C(1000000000),
                .interval_ns = 300000,
                .seed = seed,
        };
        DomainInfo info = { .unit = UNIT_NS, .resolution_ns = 1, .monotonic = true };

        strncpy(info.name, name, sizeof(info.name) - 1);
        return core_add_domain(c, &domain_fake_ops, &info, &config);
}

static size_t index_of(const Core *c, const char *name) {
        size_t index = SIZE_MAX;

        (void) core_find(c, name, &index);
        return index;
}

/* monotonic and fast calibrated; dead calibrated, then unavailable; fresh never calibrated. */
static int core_setup(const Log *log, Core **ret) {
        static const struct {
                const char *name;
                int64_t offset_ns;
                double rate_ppm;
        } clocks[] = {
                { "monotonic", 0, 0 },
                { "fast", INT64_C(5000000000), 50 },
                { "dead", -INT64_C(7000000), -20 },
                { "fresh", 1000, 0 },
        };
        Core *c = NULL;
        CoreBurst burst;
        int r;

        r = core_new(log, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]) && r >= 0; i++)
                r = add_fake(c, clocks[i].name, clocks[i].offset_ns, clocks[i].rate_ppm, i + 1);
        for (int b = 0; b < BURSTS && r >= 0; b++) {
                r = core_calibrate(c, index_of(c, "monotonic"), &burst);
                if (r >= 0)
                        r = core_calibrate(c, index_of(c, "fast"), &burst);
                if (r >= 0)
                        r = core_calibrate(c, index_of(c, "dead"), &burst);
        }
        if (r >= 0)
                graph_set_available(&c->graph, index_of(c, "dead"), false);
        if (r < 0) {
                core_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

static void test_resolve(Core *c) {
        static const char *const known[] = { CORE_HUB, "monotonic", "fast", "dead", "fresh" };
        static const char *const unknown[] = { "nope", "Monotonic", "monotonic ", "fas", "fastest", "" };
        size_t index;
        int r;

        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
                index = SIZE_MAX;
                r = core_bus_ops.resolve(c, known[i], &index);
                ok(r == 0 && index < core_count(c) && strcmp(core_domain_name(c, index), known[i]) == 0,
                   "resolve '%s' gives its index (%zu)", known[i], index);
        }
        ok(index_of(c, CORE_HUB) == c->graph.hub, "the hub resolves to the graph's hub");

        for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
                index = 12345;
                r = core_bus_ops.resolve(c, unknown[i], &index);
                ok(r == -ENOENT && index == 12345, "resolve '%s': -ENOENT, the index left alone", unknown[i]);
        }
        is_int(core_bus_ops.resolve(c, NULL, &index), -ENOENT, "resolve NULL: -ENOENT");
}

static void test_by_index(Core *c) {
        size_t mono = index_of(c, "monotonic"), fast = index_of(c, "fast"), n = core_count(c);
        int64_t v = 77, v2, back;
        uint64_t u = 77, u2;

        is_int(core_bus_ops.convert(c, mono, fast, INT64_C(2000000000), &v, &u), 0, "convert monotonic -> fast");
        ok(v > INT64_C(6999000000) && v < INT64_C(7001000000), "  the fast clock's offset and rate (%" PRId64 ")", v);
        is_int(core_bus_ops.convert(c, fast, mono, v, &back, &u2), 0, "convert back");
        ok(back >= INT64_C(2000000000) - (int64_t) (u + u2) && back <= INT64_C(2000000000) + (int64_t) (u + u2),
           "  within the bounds of both ways (%" PRId64 " +- %" PRIu64 ")", back, u + u2);

        v = 77;
        u = 77;
        is_int(core_bus_ops.convert(c, n, mono, 1, &v, &u), -ENOENT, "convert from an index past the end: -ENOENT");
        is_int(core_bus_ops.convert(c, mono, n, 1, &v, &u), -ENOENT, "convert to an index past the end: -ENOENT");
        is_int(core_bus_ops.convert(c, SIZE_MAX, SIZE_MAX, 1, &v, &u), -ENOENT, "convert SIZE_MAX: -ENOENT");
        ok(v == 77 && u == 77, "  the results are left alone");
        is_int(core_bus_ops.now(c, n, &v, &u), -ENOENT, "now of an index past the end: -ENOENT");
        is_int(core_bus_ops.now(c, fast, &v2, &u2), 0, "now of fast");

        is_int(core_bus_ops.convert(c, mono, fast, INT64_MAX, &v, &u), -ERANGE,
               "a value whose answer does not fit: -ERANGE");
        is_int(core_bus_ops.convert(c, fast, mono, INT64_MIN, &v, &u), -ERANGE, "nor the other way");
        ok(v == 77 && u == 77, "  the results are left alone");
        is_int(core_bus_ops.convert(c, mono, index_of(c, "dead"), 1, &v, &u), -ENODEV, "to an unavailable domain: -ENODEV");
        is_int(core_bus_ops.convert(c, index_of(c, "fresh"), mono, 1, &v, &u), -ENODEV,
               "from a domain never calibrated: -ENODEV");
}

/* ---- the same through the vtable ---- */

typedef struct Bus {
        sd_bus *server, *client;
        BusApi *api;
        sd_bus_message *reply;
} Bus;

static int bus_setup(Core *c, Bus *b) {
        sd_id128_t id;
        int fds[2], r;

        *b = (Bus) {};
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) < 0)
                return -errno;
        r = sd_id128_randomize(&id);
        if (r >= 0)
                r = sd_bus_new(&b->server);
        if (r >= 0)
                r = sd_bus_new(&b->client);
        if (r < 0) {
                close(fds[0]);
                close(fds[1]);
                return r;
        }
        r = sd_bus_set_fd(b->server, fds[0], fds[0]);
        if (r >= 0)
                r = sd_bus_set_fd(b->client, fds[1], fds[1]);
        if (r >= 0)
                r = sd_bus_set_server(b->server, 1, id);
        if (r >= 0)
                r = sd_bus_start(b->server);
        if (r >= 0)
                r = sd_bus_start(b->client);
        if (r >= 0)
                r = bus_api_new(b->server, &core_bus_ops, c, &b->api);
        return r;
}

static void bus_teardown(Bus *b) {
        b->reply = sd_bus_message_unref(b->reply);
        b->api = bus_api_free(b->api);
        sd_bus_flush_close_unref(b->client);
        sd_bus_flush_close_unref(b->server);
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;

        b->reply = sd_bus_message_ref(m);
        return 0;
}

/* Sends m, then runs both ends in turn until the reply is in. An error reply goes to *ret_error
 * and its errno is returned. */
static int call(Bus *b, sd_bus_message *m, sd_bus_error *ret_error) {
        int r;

        b->reply = sd_bus_message_unref(b->reply);
        r = sd_bus_call_async(b->client, NULL, m, on_reply, b, 0);
        sd_bus_message_unref(m);
        for (unsigned idle = 0; r >= 0 && !b->reply;) {
                int s = sd_bus_process(b->server, NULL), k = sd_bus_process(b->client, NULL);

                if (s < 0 || k < 0)
                        return s < 0 ? s : k;
                idle = s == 0 && k == 0 ? idle + 1 : 0;
                if (idle >= PUMP_IDLE_ROUNDS_MAX)
                        return -ETIMEDOUT;
        }
        if (r < 0)
                return r;
        if (sd_bus_message_is_method_error(b->reply, NULL))
                return sd_bus_error_copy(ret_error, sd_bus_message_get_error(b->reply));
        return 0;
}

static int call_convert(Bus *b, const char *from, const char *to, int64_t value, sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(b->client, &m, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert");
        if (r >= 0)
                r = sd_bus_message_append(m, "ssx", from, to, value);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        return call(b, m, ret_error);
}

static int call_convert_many(Bus *b, const char *from, const char *to, const int64_t *values, size_t n,
                             sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(b->client, &m, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "ConvertMany");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", from, to);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        return call(b, m, ret_error);
}

static int call_now(Bus *b, const char *domain, sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(b->client, &m, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "Now");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", domain);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        return call(b, m, ret_error);
}

static void test_bus_errors(Bus *b) {
        static const struct {
                const char *from, *to;
                int64_t value;
                const char *name, *message;
        } cases[] = {
                { "nope", "monotonic", 1, BUS_ERROR_UNKNOWN_DOMAIN, "unknown domain 'nope'" },
                { "monotonic", "nope", 1, BUS_ERROR_UNKNOWN_DOMAIN, "unknown domain 'nope'" },
                { "nope", "nada", 1, BUS_ERROR_UNKNOWN_DOMAIN, "unknown domain 'nope'" },
                { "dead", "nada", 1, BUS_ERROR_UNKNOWN_DOMAIN, "unknown domain 'nada'" },
                { "monotonic", "dead", 1, BUS_ERROR_UNAVAILABLE, "domain 'dead' is unavailable" },
                { "dead", "fast", 1, BUS_ERROR_UNAVAILABLE, "domain 'dead' is unavailable" },
                { "fresh", "monotonic", 1, BUS_ERROR_UNAVAILABLE, "domain 'fresh' is unavailable" },
                { "monotonic", "fast", INT64_MAX, BUS_ERROR_OUT_OF_RANGE,
                  "value 9223372036854775807 of 'monotonic' is out of range for 'fast'" },
                { "fast", "monotonic", INT64_MIN, BUS_ERROR_OUT_OF_RANGE,
                  "value -9223372036854775808 of 'fast' is out of range for 'monotonic'" },
        };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t values[4] = { INT64_C(2000000000), INT64_C(3000000000), INT64_MAX, 4 };
        int r;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char what[96];

                snprintf(what, sizeof(what), "Convert(%s, %s, %" PRId64 ")", cases[i].from, cases[i].to,
                         cases[i].value);
                r = call_convert(b, cases[i].from, cases[i].to, cases[i].value, &e);
                check_error_message(what, r, &e, cases[i].name, cases[i].message);
        }

        is_int(call_convert(b, "monotonic", "fast", INT64_C(2000000000), &e), 0, "Convert(monotonic, fast) answers");
        sd_bus_error_free(&e);

        /* ConvertMany: an unknown name is the name's fault, not that of values[0]. */
        r = call_convert_many(b, "monotonic", "nope", values, 2, &e);
        check_error_message("ConvertMany to an unknown domain", r, &e, BUS_ERROR_UNKNOWN_DOMAIN,
                            "unknown domain 'nope'");
        r = call_convert_many(b, "nope", "nada", values, 2, &e);
        check_error_message("ConvertMany between two unknown domains", r, &e, BUS_ERROR_UNKNOWN_DOMAIN,
                            "unknown domain 'nope'");
        r = call_convert_many(b, "monotonic", "fast", values, 4, &e);
        check_error_message("ConvertMany with values[2] out of range", r, &e, BUS_ERROR_OUT_OF_RANGE,
                            "values[2]: value 9223372036854775807 of 'monotonic' is out of range for 'fast'");
        r = call_convert_many(b, "fast", "dead", values, 2, &e);
        check_error_message("ConvertMany to an unavailable domain", r, &e, BUS_ERROR_UNAVAILABLE,
                            "values[0]: domain 'dead' is unavailable");
        is_int(call_convert_many(b, "monotonic", "fast", values, 2, &e), 0, "ConvertMany of two good values answers");
        sd_bus_error_free(&e);

        r = call_now(b, "nope", &e);
        check_error_message("Now of an unknown domain", r, &e, BUS_ERROR_UNKNOWN_DOMAIN, "unknown domain 'nope'");
        r = call_now(b, "dead", &e);
        check_error_message("Now of an unavailable domain", r, &e, BUS_ERROR_UNAVAILABLE,
                            "domain 'dead' is unavailable");
        is_int(call_now(b, "fast", &e), 0, "Now(fast) answers");
        sd_bus_error_free(&e);
}

int main(void) {
        const Log log = { .max_level = LOG_ERR };
        Core *c = NULL;
        Bus b;
        int r;

        r = core_setup(&log, &c);
        is_int(r, 0, "a core of fake clocks, calibrated");
        if (r < 0)
                return done_testing();

        test_resolve(c);
        test_by_index(c);

        r = bus_setup(c, &b);
        is_int(r, 0, "the vtable on a socketpair");
        if (r >= 0)
                test_bus_errors(&b);
        bus_teardown(&b);

        core_free(c);
        return done_testing();
}
