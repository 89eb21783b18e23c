/* SPDX-License-Identifier: MIT */

/* libtimeconv's Perfetto writer through the public API: an export of domains of every kind of
 * unit becomes ClockSnapshot packets with the ids, multipliers and values Perfetto expects,
 * decoded here by a wire-format reader of the test's own; a later export adds only its new
 * snapshots. timeconv_perfetto_clock_id() against values worked out separately. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "timeconv.h"

#define MAX_CLOCKS 16
#define MAX_PACKETS 8

typedef struct Clock {
        uint64_t id, ts, multiplier;
} Clock;

typedef struct Packet {
        uint64_t timestamp, sequence_id, primary;
        bool has_timestamp;
        size_t n_clocks;
        Clock clocks[MAX_CLOCKS];
} Packet;

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *ret) {
        uint64_t v = 0;

        for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
                uint8_t b = *(*p)++;

                v |= (uint64_t) (b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        return true;
                }
        }
        return false;
}

/* Calls field(tag, value or length, body) for each field of [p, end); false on a malformed one. */
static bool each_field(const uint8_t *p, const uint8_t *end, void *userdata,
                       bool (*field)(void *userdata, uint64_t number, uint64_t value, const uint8_t *body)) {
        while (p < end) {
                uint64_t key, v;

                if (!get_varint(&p, end, &key) || !get_varint(&p, end, &v))
                        return false;
                if ((key & 7) == 2) {
                        if (v > (uint64_t) (end - p) || !field(userdata, key >> 3, v, p))
                                return false;
                        p += v;
                } else if ((key & 7) != 0 || !field(userdata, key >> 3, v, NULL))
                        return false;
        }
        return true;
}

static bool clock_field(void *userdata, uint64_t number, uint64_t v, const uint8_t *body) {
        Clock *c = userdata;

        if (body)
                return false;
        if (number == 1)
                c->id = v;
        else if (number == 2)
                c->ts = v;
        else if (number == 4)
                c->multiplier = v;
        else
                return false;
        return true;
}

static bool snapshot_field(void *userdata, uint64_t number, uint64_t v, const uint8_t *body) {
        Packet *pk = userdata;

        if (number == 2 && !body) {
                pk->primary = v;
                return true;
        }
        if (number != 1 || !body || pk->n_clocks >= MAX_CLOCKS)
                return false;
        pk->clocks[pk->n_clocks] = (Clock) { .multiplier = 1 };
        return each_field(body, body + v, &pk->clocks[pk->n_clocks++], clock_field);
}

static bool packet_field(void *userdata, uint64_t number, uint64_t v, const uint8_t *body) {
        Packet *pk = userdata;

        if (number == 8 && !body) {
                pk->timestamp = v;
                pk->has_timestamp = true;
        } else if (number == 10 && !body)
                pk->sequence_id = v;
        else if (number == 6 && body)
                return each_field(body, body + v, pk, snapshot_field);
        else
                return false;   /* the writer writes nothing else */
        return true;
}

typedef struct Trace {
        size_t n;
        Packet packets[MAX_PACKETS];
} Trace;

static bool trace_field(void *userdata, uint64_t number, uint64_t v, const uint8_t *body) {
        Trace *t = userdata;

        if (number != 1 || !body || t->n >= MAX_PACKETS)
                return false;
        t->packets[t->n] = (Packet) {};
        return each_field(body, body + v, &t->packets[t->n++], packet_field);
}

static const Clock *find_clock(const Packet *p, uint64_t id) {
        for (size_t i = 0; i < p->n_clocks; i++)
                if (p->clocks[i].id == id)
                        return &p->clocks[i];
        return NULL;
}

static const char domains[] =
        "\"domains\":["
        "{\"name\":\"monotonic_raw\",\"unit\":\"ns\",\"period_ns\":1,\"wrap_bits\":0,\"truncates\":false},"
        "{\"name\":\"boottime\",\"unit\":\"ns\",\"period_ns\":1,\"wrap_bits\":0,\"truncates\":false},"
        "{\"name\":\"x11\",\"unit\":\"ms\",\"period_ns\":1000000,\"wrap_bits\":32,\"truncates\":true},"
        "{\"name\":\"x11_us\",\"unit\":\"us\",\"period_ns\":1000,\"wrap_bits\":0,\"truncates\":true},"
        "{\"name\":\"gpu0\",\"unit\":\"tick\",\"period_ns\":52.5,\"wrap_bits\":64,\"truncates\":false},"
        "{\"name\":\"gpu1\",\"unit\":\"tick\",\"period_ns\":40,\"wrap_bits\":36,\"truncates\":false}]";

#define SNAPSHOT(raw, boot) "{\"clocks\":[{\"domain\":\"monotonic_raw\",\"ts\":" #raw ",\"unc_ns\":0}," \
        "{\"domain\":\"boottime\",\"ts\":" #boot ",\"unc_ns\":3}," \
        "{\"domain\":\"x11\",\"ts\":" #raw "000,\"unc_ns\":500}," \
        "{\"domain\":\"x11_us\",\"ts\":" #raw "000000,\"unc_ns\":40}," \
        "{\"domain\":\"gpu0\",\"ts\":1000,\"unc_ns\":60}," \
        "{\"domain\":\"gpu1\",\"ts\":7,\"unc_ns\":60}]}"

static void decode(const char *what, const char *data, size_t size, Trace *t) {
        *t = (Trace) {};
        ok(each_field((const uint8_t *) data, (const uint8_t *) data + size, t, trace_field),
           "%s: a well-formed Trace of %zu packets, fields only of TracePacket, ClockSnapshot, Clock", what, t->n);
}

static void test_ids(void) {
        static const struct {
                const char *name;
                uint32_t id;
        } ids[] = {
                { "realtime", 1 }, { "realtime_coarse", 2 }, { "monotonic", 3 }, { "monotonic_coarse", 4 },
                { "monotonic_raw", 5 }, { "boottime", 6 },
                /* FNV-1a-32("org.timeconv." + name) | 0x80000000, worked out separately */
                { "tai", UINT32_C(0xf36e151e) }, { "x11", UINT32_C(0xef53e4ca) },
                { "x11_us", UINT32_C(0x8c4fff47) }, { "gpu0", UINT32_C(0xad762dfe) },
        };

        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
                ok(timeconv_perfetto_clock_id(ids[i].name) == ids[i].id, "perfetto id of %s", ids[i].name);
        is_int(timeconv_perfetto_clock_id(NULL), 0, "perfetto id of NULL is 0");
}

static void test_write(void) {
        char first[4096], second[4096];
        struct timeconv_perfetto_writer *w = NULL;
        char *data = NULL;
        size_t size = 0, n = 99;
        const Packet *p;
        const Clock *c;
        Trace t;

        snprintf(first, sizeof(first), "{\"snapshots\":[%s,%s],%s}", SNAPSHOT(5, 105), SNAPSHOT(6, 106), domains);
        snprintf(second, sizeof(second), "{\"snapshots\":[%s,%s,%s],%s}", SNAPSHOT(5, 105), SNAPSHOT(6, 106),
                 SNAPSHOT(7, 107), domains);

        is_int(timeconv_perfetto_writer_new(&w), 0, "a writer");
        is_int(timeconv_perfetto_writer_add_export(w, first, strlen(first), &data, &size, &n), 0,
               "an export of two snapshots writes");
        is_int(n, 2, "two packets");
        decode("first export", data, size, &t);
        free(data);
        is_int(t.n, 2, "two packets decoded");
        p = &t.packets[0];
        ok(p->has_timestamp && p->timestamp == 105, "the packet's timestamp is BOOTTIME's reading");
        is_int(p->primary, 6, "primary_trace_clock BOOTTIME (6)");
        ok(p->sequence_id != 0 && p->sequence_id == t.packets[1].sequence_id, "one sequence of its own (%" PRIu64 ")",
           p->sequence_id);
        is_int(p->n_clocks, 6, "every domain of the snapshot");
        c = find_clock(p, 5);
        ok(c && c->ts == 5 && c->multiplier == 1, "monotonic_raw: builtin id 5, ns, no multiplier");
        c = find_clock(p, timeconv_perfetto_clock_id("x11"));
        ok(c && c->ts == 5000 && c->multiplier == 1000000, "x11: its hashed id, ms: unit_multiplier_ns 1000000");
        c = find_clock(p, timeconv_perfetto_clock_id("x11_us"));
        ok(c && c->ts == 5000000 && c->multiplier == 1000, "x11_us: its hashed id, us: unit_multiplier_ns 1000");
        c = find_clock(p, timeconv_perfetto_clock_id("gpu1"));
        ok(c && c->ts == 7 && c->multiplier == 40, "a tick of an integral period (40 ns): unit_multiplier_ns 40");
        ok(!find_clock(p, timeconv_perfetto_clock_id("gpu0")), "a tick of a fractional period is not under its id");
        c = find_clock(p, timeconv_perfetto_clock_id("gpu0.ns"));
        ok(c && c->ts == 52500 && c->multiplier == 1, "but in ns (1000 x 52.5) under the id of gpu0.ns");

        is_int(timeconv_perfetto_writer_add_export(w, first, strlen(first), &data, &size, &n), 0,
               "the same export again");
        ok(size == 0 && n == 0, "adds nothing (%zu bytes)", size);
        free(data);
        is_int(timeconv_perfetto_writer_add_export(w, second, strlen(second), &data, &size, &n), 0,
               "a later export with one more snapshot");
        decode("later export", data, size, &t);
        free(data);
        ok(n == 1 && t.n == 1 && t.packets[0].timestamp == 107, "adds that snapshot only");

        data = NULL;
        is_int(timeconv_perfetto_writer_add_export(w, "[1]", 3, &data, &size, &n), -EBADMSG, "not an export: -EBADMSG");
        ok(!data, "nothing returned");
        timeconv_perfetto_writer_free(w);
        ok(!timeconv_perfetto_writer_free(NULL), "free(NULL)");
}

int main(void) {
        test_ids();
        test_write();
        return done_testing();
}
