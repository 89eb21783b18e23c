/* SPDX-License-Identifier: MIT */

/* The Perfetto trace reader (client-lib/perfetto-read.c, perfetto-load.c) on traces written by
 * Debian's protoc from tests/client-lib/perfetto/trace.proto: trace_processor's placements computed by hand
 * (scoping, multipliers, incremental clocks, defaults, both kinds of compression, concatenation),
 * RemoteClockSync brackets against a known truth, and malformed input refused with its offset. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "program-path.h"
#include "tap.h"
#include "timeconv.h"

#define MAX_PLACED 4096

/* is_int() with a formatted name. */
#define IS(got, want, ...)                                                                       \
        do {                                                                                     \
                long long got_ = (got), want_ = (want);                                          \
                ok(got_ == want_, __VA_ARGS__);                                                  \
                if (got_ != want_)                                                               \
                        diag("got %lld, want %lld", got_, want_);                                \
        } while (0)

typedef struct Buf {
        uint8_t *data;
        size_t n, allocated;
} Buf;

typedef struct Placed {
        uint64_t index;
        uint32_t machine;
        char clock[64];
        int64_t ts;
        int error;
        char reason[96];
        int64_t trace_ts;
        int64_t uncertainty_ns;
} Placed;

typedef struct Placements {
        Placed p[MAX_PLACED];
        size_t n;
} Placements;

static const char *proto_dir;
static char tmpdir[] = "/tmp/test-perfetto-XXXXXX";

static void buf_put(Buf *b, const void *data, size_t n) {
        if (n == 0)
                return;
        if (b->n + n > b->allocated) {
                b->allocated = 2 * (b->n + n) + 64;
                b->data = realloc(b->data, b->allocated);
                if (!b->data)
                        abort();
        }
        memcpy(b->data + b->n, data, n);
        b->n += n;
}

static void buf_varint(Buf *b, uint64_t v) {
        do {
                uint8_t c = (uint8_t) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));

                buf_put(b, &c, 1);
                v >>= 7;
        } while (v);
}

/* A Trace in protobuf text format, encoded by protoc. */
static Buf encode(const char *text) {
        char in[256], out[256], cmd[1024];
        Buf b = { 0 };
        FILE *f;
        uint8_t chunk[4096];
        size_t n;

        snprintf(in, sizeof(in), "%s/in.txtpb", tmpdir);
        snprintf(out, sizeof(out), "%s/out.pb", tmpdir);
        f = fopen(in, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                abort();
        snprintf(cmd, sizeof(cmd), "protoc --encode=perfetto.protos.Trace -I '%s' '%s/trace.proto' < '%s' > '%s'",
                 proto_dir, proto_dir, in, out);
        if (system(cmd) != 0) {
                diag("protoc failed on: %s", text);
                abort();
        }
        f = fopen(out, "r");
        if (!f)
                abort();
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                buf_put(&b, chunk, n);
        fclose(f);
        return b;
}

/* One Trace.packet holding field (compressed_packets 50, zstd 133) of bytes. */
static void put_block(Buf *out, unsigned field, const uint8_t *data, size_t n) {
        Buf packet = { 0 };

        buf_varint(&packet, (uint64_t) field << 3 | 2);
        buf_varint(&packet, n);
        buf_put(&packet, data, n);
        buf_varint(out, 0x0a);
        buf_varint(out, packet.n);
        buf_put(out, packet.data, packet.n);
        free(packet.data);
}

static void put_zlib(Buf *out, const uint8_t *data, size_t n) {
        uLongf size = compressBound(n);
        uint8_t *z = malloc(size);

        if (!z || compress2(z, &size, data, n, 6) != Z_OK)
                abort();
        put_block(out, 50, z, size);
        free(z);
}

static void put_zstd(Buf *out, const uint8_t *data, size_t n) {
        size_t size = ZSTD_compressBound(n);
        uint8_t *z = malloc(size);

        if (!z)
                abort();
        size = ZSTD_compress(z, size, data, n, 3);
        if (ZSTD_isError(size))
                abort();
        put_block(out, 133, z, size);
        free(z);
}

/* total zeros, deflated (zlib) or zstd-compressed a chunk at a time: a block that inflates far
 * past the reader's bound without anyone holding it whole. */
static void put_bomb(Buf *out, bool zstd, size_t total) {
        static const uint8_t zeros[1 << 16];
        Buf z = { 0 };
        uint8_t chunk[1 << 16];

        if (!zstd) {
                z_stream zs = { 0 };
                int flush;

                if (deflateInit(&zs, 9) != Z_OK)
                        abort();
                do {
                        size_t n = total > sizeof(zeros) ? sizeof(zeros) : total;

                        total -= n;
                        flush = total == 0 ? Z_FINISH : Z_NO_FLUSH;
                        zs.next_in = (Bytef *) zeros;
                        zs.avail_in = (uInt) n;
                        do {
                                zs.next_out = chunk;
                                zs.avail_out = sizeof(chunk);
                                deflate(&zs, flush);
                                buf_put(&z, chunk, sizeof(chunk) - zs.avail_out);
                        } while (zs.avail_out == 0);
                } while (flush != Z_FINISH);
                deflateEnd(&zs);
        } else {
                ZSTD_CCtx *c = ZSTD_createCCtx();
                size_t left;

                do {
                        size_t n = total > sizeof(zeros) ? sizeof(zeros) : total;
                        ZSTD_inBuffer in = { zeros, n, 0 };
                        ZSTD_EndDirective end;

                        total -= n;
                        end = total == 0 ? ZSTD_e_end : ZSTD_e_continue;
                        do {
                                ZSTD_outBuffer o = { chunk, sizeof(chunk), 0 };

                                left = ZSTD_compressStream2(c, &o, &in, end);
                                buf_put(&z, chunk, o.pos);
                        } while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
                } while (total > 0);
                ZSTD_freeCCtx(c);
        }
        put_block(out, zstd ? 133 : 50, z.data, z.n);
        free(z.data);
}

static int collect(const struct timeconv_trace_packet *p, void *userdata) {
        Placements *pl = userdata;
        Placed *q;

        if (pl->n == MAX_PLACED)
                return -ENOSPC;
        q = &pl->p[pl->n++];
        *q = (Placed) { .index = p->index, .machine = p->machine, .ts = p->ts, .error = p->error,
                        .trace_ts = p->trace_ts, .uncertainty_ns = p->uncertainty_ns };
        snprintf(q->clock, sizeof(q->clock), "%s", p->clock);
        if (p->reason)
                snprintf(q->reason, sizeof(q->reason), "%s", p->reason);
        return 0;
}

/* Loads b and places its packets on to (NULL: the trace clock) in mode. */
static int place(const Buf *b, int mode, const char *to, Placements *pl, struct timeconv_error *error) {
        struct timeconv_trace *t = NULL;
        int r;

        pl->n = 0;
        r = timeconv_trace_load_buffer(b->data, b->n, &t, error);
        if (r < 0)
                return r;
        r = timeconv_trace_place(t, mode, to, collect, pl, error);
        timeconv_trace_free(t);
        return r;
}

static const Placed *find(const Placements *pl, uint64_t index) {
        for (size_t i = 0; i < pl->n; i++)
                if (pl->p[i].index == index)
                        return &pl->p[i];
        return NULL;
}

/* The snapshot, the packets of sequence 1 to 4 and the second snapshot: see expect_a. */
static const char trace_a_snapshot[] =
        "packet { trusted_packet_sequence_id: 1 clock_snapshot {"
        " clocks { clock_id: 6 timestamp: 1000000 } clocks { clock_id: 3 timestamp: 500000 }"
        " clocks { clock_id: 64 timestamp: 100 unit_multiplier_ns: 1000 }"
        " clocks { clock_id: 128 timestamp: 10 unit_multiplier_ns: 1000000 }"
        " clocks { clock_id: 65 timestamp: 2000 is_incremental: true } primary_trace_clock: 6 } }\n";
static const char trace_a_packets[] =
        "packet { trusted_packet_sequence_id: 1 timestamp: 600000 timestamp_clock_id: 3 }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 150 timestamp_clock_id: 64 }\n"
        "packet { trusted_packet_sequence_id: 2 timestamp: 150 timestamp_clock_id: 64 }\n"
        "packet { trusted_packet_sequence_id: 1 trace_packet_defaults { timestamp_clock_id: 128 } timestamp: 12 }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 13 }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 5 timestamp_clock_id: 65 }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 10 timestamp_clock_id: 65 }\n"
        "packet { trusted_packet_sequence_id: 3 timestamp: 777 }\n"
        "packet { trusted_packet_sequence_id: 1 sequence_flags: 1 timestamp: 700000 }\n"
        "packet { trusted_packet_sequence_id: 4 sequence_flags: 2 timestamp: 5 }\n"
        "packet { trusted_packet_sequence_id: 1 payload: \"no timestamp\" }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 400000 timestamp_clock_id: 3 }\n"
        "packet { trusted_packet_sequence_id: 1 clock_snapshot {"
        " clocks { clock_id: 6 timestamp: 2000000 } clocks { clock_id: 3 timestamp: 1400000 }"
        " clocks { clock_id: 64 timestamp: 1100 unit_multiplier_ns: 1000 }"
        " clocks { clock_id: 128 timestamp: 11 unit_multiplier_ns: 1000000 }"
        " clocks { clock_id: 65 timestamp: 3000 is_incremental: true } } }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 1500000 timestamp_clock_id: 3 }\n"
        "packet { trusted_packet_sequence_id: 1 timestamp: 7 timestamp_clock_id: 65 }\n";

/* trace_processor's answers, by hand: index, clock, ts as stamped (after defaults and deltas),
 * trace_ts or an error. */
static const struct {
        uint64_t index;
        const char *clock;
        int64_t ts;
        int64_t trace_ts;
        int error;
} expect_a[] = {
        { 1, "monotonic", 600000, 1100000, 0 },         /* + (1000000 - 500000) */
        { 2, "64@1", 150, 1050000, 0 },                 /* 150 µs - 100 µs after the snapshot */
        { 3, "64@2", 150, 0, -ENOENT },                 /* id 64 of sequence 2: in no snapshot */
        { 4, "128", 12, 3000000, 0 },                   /* the packet's own defaults: 12 ms */
        { 5, "128", 13, 4000000, 0 },                   /* the sequence's defaults */
        { 6, "65@1", 2005, 1000005, 0 },                /* a delta of 5 on 2000 */
        { 7, "65@1", 2015, 1000015, 0 },                /* a delta of 10 on 2005 */
        { 8, "boottime", 777, 777, 0 },                 /* no clock, no defaults: the trace clock */
        { 9, "boottime", 700000, 700000, 0 },           /* defaults cleared with the state */
        { 10, "boottime", 5, 0, -EINVAL },              /* needs incremental state never cleared */
        { 12, "monotonic", 400000, 900000, 0 },         /* before every snapshot: the first */
        { 14, "monotonic", 1500000, 2100000, 0 },       /* the second snapshot */
        { 15, "65@1", 3007, 2000007, 0 },               /* a delta on the second snapshot's 3000 */
};

static void check_a(const char *what, const Placements *pl, uint64_t index_base) {
        size_t bad = 0;

        IS((int64_t) pl->n, (int64_t) (sizeof(expect_a) / sizeof(expect_a[0])),
           "%s: every timestamped packet reported", what);
        for (size_t i = 0; i < sizeof(expect_a) / sizeof(expect_a[0]); i++) {
                const Placed *p = find(pl, expect_a[i].index + index_base);

                if (!p || strcmp(p->clock, expect_a[i].clock) != 0 || p->ts != expect_a[i].ts ||
                    p->error != expect_a[i].error || (p->error == 0 && p->trace_ts != expect_a[i].trace_ts) ||
                    p->uncertainty_ns < 0) {
                        bad++;
                        diag("%s: packet %llu: got %s %lld -> %lld (error %d %s), want %s %lld -> %lld (%d)", what,
                             (unsigned long long) (expect_a[i].index + index_base), p ? p->clock : "none",
                             p ? (long long) p->ts : 0, p ? (long long) p->trace_ts : 0, p ? p->error : 0,
                             p ? p->reason : "", expect_a[i].clock, (long long) expect_a[i].ts,
                             (long long) expect_a[i].trace_ts, expect_a[i].error);
                }
        }
        ok(bad == 0, "%s: trace_processor's placements (scoping, multipliers, deltas, defaults)", what);
}

static void test_semantics(void) {
        char text[8192];
        Placements *pl = calloc(1, sizeof(*pl));
        struct timeconv_error error;
        Buf a, packets, snapshot, b, z = { 0 }, s = { 0 };
        const Placed *p;
        int r;

        snprintf(text, sizeof(text), "%s%s", trace_a_snapshot, trace_a_packets);
        a = encode(text);
        r = place(&a, TIMECONV_MODE_NEAREST, NULL, pl, &error);
        IS(r, 0, "trace A places (%s)", r < 0 ? error.message : "");
        check_a("plain", pl, 0);
        p = find(pl, 1);
        ok(p && p->uncertainty_ns == 100, "1000 ppm of the 100 µs from the snapshot: ±100 ns (got %lld)",
           p ? (long long) p->uncertainty_ns : -1);

        /* The same packets in a zlib block, then in a zstd block: the same answers, in place. */
        snapshot = encode(trace_a_snapshot);
        packets = encode(trace_a_packets);
        buf_put(&z, snapshot.data, snapshot.n);
        put_zlib(&z, packets.data, packets.n);
        r = place(&z, TIMECONV_MODE_NEAREST, NULL, pl, &error);
        IS(r, 0, "zlib block places (%s)", r < 0 ? error.message : "");
        check_a("compressed_packets", pl, 0);
        buf_put(&s, snapshot.data, snapshot.n);
        put_zstd(&s, packets.data, packets.n);
        r = place(&s, TIMECONV_MODE_NEAREST, NULL, pl, &error);
        IS(r, 0, "zstd block places (%s)", r < 0 ? error.message : "");
        check_a("zstd_compressed_packets", pl, 0);

        /* cat a.pftrace b.pftrace: B's packets use A's snapshots, and count after A's. */
        b = encode("packet { trusted_packet_sequence_id: 9 timestamp: 1450000 timestamp_clock_id: 3 }\n");
        buf_put(&z, b.data, b.n);       /* cat a-compressed.pftrace b.pftrace */
        r = place(&z, TIMECONV_MODE_NEAREST, NULL, pl, &error);
        IS(r, 0, "concatenated traces place (%s)", r < 0 ? error.message : "");
        IS(pl->n, sizeof(expect_a) / sizeof(expect_a[0]) + 1, "concatenated: the packets of both");
        p = find(pl, 16);
        ok(p && p->error == 0 && p->trace_ts == 2050000 && strcmp(p->clock, "monotonic") == 0,
           "concatenated: the second file's packet (index 16) placed through the first's snapshots (%lld)",
           p ? (long long) p->trace_ts : -1);
        /* The same file twice: its clocks go back in time, as trace_processor, no path through them. */
        {
                Buf copy = { 0 };

                buf_put(&copy, s.data, s.n);
                buf_put(&s, copy.data, copy.n);
                free(copy.data);
        }
        r = place(&s, TIMECONV_MODE_NEAREST, NULL, pl, &error);
        p = find(pl, 17);
        ok(r == 0 && p && p->error == -ENOLINK, "a trace concatenated with itself: clocks that go back are no source");

        /* --to another clock, and drift mode never fails where nearest places. */
        r = place(&snapshot, TIMECONV_MODE_NEAREST, "monotonic", pl, &error);
        IS(r, 0, "placing on monotonic");
        r = place(&a, TIMECONV_MODE_NEAREST, "monotonic", pl, &error);
        p = find(pl, 1);
        ok(r == 0 && p && p->trace_ts == 600000 && p->uncertainty_ns == 0, "--to the packet's own clock: itself");
        p = find(pl, 2);
        ok(p && p->trace_ts == 550000, "64@1 150 µs -> monotonic 550000 (got %lld)", p ? (long long) p->trace_ts : -1);
        r = place(&a, TIMECONV_MODE_NEAREST, "no-such-clock", pl, &error);
        IS(r, -ENOENT, "--to an unknown clock: -ENOENT");

        free(a.data);
        free(b.data);
        free(z.data);
        free(s.data);
        free(snapshot.data);
        free(packets.data);
        free(pl);
}

/* The library's snapshot API takes a trace by its content, JSON as before. */
static void test_snapshots_api(void) {
        static const char json[] = "\n  {\"snapshots\": [{\"clocks\": [{\"domain\": \"a\", \"ts\": 1}, "
                                   "{\"domain\": \"b\", \"ts\": 5}]}]}";
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error error;
        char text[8192];
        int64_t v = 0, u = -1;
        bool names = true;
        Buf a;
        int r;

        snprintf(text, sizeof(text), "%s%s", trace_a_snapshot, trace_a_packets);
        a = encode(text);
        r = timeconv_snapshots_load_buffer((const char *) a.data, a.n, &s, &error);
        IS(r, 0, "timeconv_snapshots_load_buffer takes a Perfetto trace (%s)", r < 0 ? error.message : "");
        if (r == 0) {
                static const char *const want[] = { "boottime", "monotonic", "64@1", "128", "65@1", NULL };

                for (const char *const *n = want; *n; n++) {
                        bool found = false;

                        for (size_t i = 0; i < timeconv_snapshots_count_domains(s); i++)
                                found |= strcmp(timeconv_snapshots_domain_name(s, i), *n) == 0;
                        if (!found)
                                diag("no domain %s", *n);
                        names &= found;
                }
                ok(names, "its clocks are boottime, monotonic, 64@1, 128, 65@1");
                r = timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "128", "boottime", 12, &v, &u);
                ok(r == 0 && v == 3000000, "128 (ms) 12 -> boottime 3000000 (got %lld)", (long long) v);
                s = timeconv_snapshots_free(s);
        }
        r = timeconv_snapshots_load_buffer(json, sizeof(json) - 1, &s, &error);
        ok(r == 0, "JSON that starts with a newline is still JSON (%s)", r < 0 ? error.message : "");
        s = timeconv_snapshots_free(s);
        free(a.data);
}

/* Client clock = host clock + OFFSET + 50 ppm of the time since HOST0; messages take up_ns to the
 * host and down_ns back, unequal: a midpoint is wrong by half the difference, a bracket is not. */
#define OFFSET_NS INT64_C(5000000123)
#define HOST0_NS INT64_C(10000000000)
#define ROUNDS 12

static int64_t client_of(int64_t host) {
        return host + OFFSET_NS + (host - HOST0_NS) / 20000;
}

static double host_of(int64_t client) {
        return ((double) (client - OFFSET_NS) + (double) HOST0_NS / 20000) * 20000.0 / 20001.0;
}

static void test_remote_clock_sync(void) {
        char *text = malloc(1 << 16);
        Placements *pl = calloc(1, sizeof(*pl));
        int64_t packets_client[64];
        size_t n_packets = 0, outside = 0, placed = 0, len = 0;
        double worst_midpoint_error = 0;
        int64_t widest = 0;
        struct timeconv_error error;
        Buf b;
        int r;

        len += (size_t) snprintf(text + len, 65536 - len,
                                 "packet { trusted_packet_sequence_id: 1 clock_snapshot { clocks { clock_id: 6 "
                                 "timestamp: %lld } clocks { clock_id: 3 timestamp: %lld } } }\n",
                                 (long long) HOST0_NS, (long long) (HOST0_NS - 1000));
        len += (size_t) snprintf(text + len, 65536 - len, "packet { machine_id: 1 remote_clock_sync {\n");
        for (int k = 0; k < ROUNDS; k++) {
                int64_t t = HOST0_NS + (int64_t) k * 1000000000 + 12345;
                int64_t up_ns = 40000 + 3000 * k, down_ns = 260000 - 7000 * k;
                int64_t h1 = t + up_ns, h2 = h1 + down_ns + 45000;
                int64_t c1 = client_of(t), c2 = client_of(h1 + down_ns);
                double mid_error = fabs((double) (c1 + c2) / 2 - (double) client_of(h1));

                worst_midpoint_error = mid_error > worst_midpoint_error ? mid_error : worst_midpoint_error;
                /* client monotonic = client boottime - 1 s: the client's second clock */
                len += (size_t) snprintf(text + len, 65536 - len,
                        " synced_clocks { client_clocks { clocks { clock_id: 6 timestamp: %lld } clocks { clock_id: 3 "
                        "timestamp: %lld } } host_clocks { clocks { clock_id: 6 timestamp: %lld } } }\n"
                        " synced_clocks { client_clocks { clocks { clock_id: 6 timestamp: %lld } clocks { clock_id: 3 "
                        "timestamp: %lld } } host_clocks { clocks { clock_id: 6 timestamp: %lld } } }\n",
                        (long long) c1, (long long) (c1 - 1000000000), (long long) h1, (long long) c2,
                        (long long) (c2 - 1000000000), (long long) h2);
                packets_client[n_packets++] = c2 + 1000;
                packets_client[n_packets++] = c2 + 500000000;
        }
        len += (size_t) snprintf(text + len, 65536 - len, "} }\n");
        packets_client[n_packets++] = client_of(HOST0_NS + ROUNDS * INT64_C(1000000000) + 5000000000);
        for (size_t i = 0; i < n_packets; i++)
                len += (size_t) snprintf(text + len, 65536 - len,
                                         "packet { machine_id: 1 trusted_packet_sequence_id: 7 timestamp: %lld }\n"
                                         "packet { machine_id: 1 trusted_packet_sequence_id: 7 timestamp: %lld "
                                         "timestamp_clock_id: 3 }\n",
                                         (long long) packets_client[i], (long long) (packets_client[i] - 1000000000));
        b = encode(text);
        /* drift interpolates between brackets: still no answer outside its bound */
        r = place(&b, TIMECONV_MODE_DRIFT, NULL, pl, &error);
        for (size_t i = 0; i < pl->n; i++) {
                const Placed *p = &pl->p[i];
                double truth = host_of(strcmp(p->clock, "m1:monotonic") == 0 ? p->ts + 1000000000 : p->ts);

                outside += p->error == 0 && fabs((double) p->trace_ts - truth) > (double) p->uncertainty_ns + 1;
                placed += p->error == 0;
        }
        ok(r == 0 && placed == 2 * n_packets && outside == 0, "drift: %zu of %zu placed, %zu outside their bound",
           placed, 2 * n_packets, outside);
        placed = outside = 0;
        r = place(&b, TIMECONV_MODE_NEAREST, NULL, pl, &error);
        IS(r, 0, "a trace with RemoteClockSync places (%s)", r < 0 ? error.message : "");
        for (size_t i = 0; i < pl->n; i++) {
                const Placed *p = &pl->p[i];
                double truth;

                if (p->error < 0) {
                        diag("packet %llu %s: %s", (unsigned long long) p->index, p->clock, p->reason);
                        continue;
                }
                placed++;
                truth = host_of(strcmp(p->clock, "m1:monotonic") == 0 ? p->ts + 1000000000 : p->ts);
                if (fabs((double) p->trace_ts - truth) > (double) p->uncertainty_ns + 1) {
                        outside++;
                        diag("packet %llu %s %lld -> %lld ±%lld, truth %.0f", (unsigned long long) p->index, p->clock,
                             (long long) p->ts, (long long) p->trace_ts, (long long) p->uncertainty_ns, truth);
                }
                if (p->uncertainty_ns > widest && i < 2)
                        widest = p->uncertainty_ns;
        }
        IS((int64_t) placed, (int64_t) (2 * n_packets), "every packet of machine 1 placed on the host's boottime");
        IS((int64_t) outside, 0, "no answer outside its bound (asymmetric delays, 50 ppm drift)");
        ok(pl->n > 0 && pl->p[0].uncertainty_ns < 200000, "just after a round the bound is the bracket's: %lld ns",
           pl->n > 0 ? (long long) pl->p[0].uncertainty_ns : -1);
        ok(worst_midpoint_error > 50000, "where a midpoint alone would be %.0f ns off, and say nothing",
           worst_midpoint_error);
        ok(pl->n > 0 && strcmp(pl->p[0].clock, "m1:boottime") == 0 && pl->p[0].machine == 1,
           "a machine's clock is named m1:boottime");
        free(b.data);
        free(text);
        free(pl);
}

/* data must be refused with -EBADMSG, a message naming the byte (want: its start) and saying
 * what (want_text), *ret untouched. */
static void refused(const char *what, const uint8_t *data, size_t n, const char *want, const char *want_text) {
        struct timeconv_trace *t = (struct timeconv_trace *) &n;
        struct timeconv_snapshots *s = (struct timeconv_snapshots *) &n;
        struct timeconv_error error = { 0 };
        int r;

        r = timeconv_trace_load_buffer(data, n, &t, &error);
        ok(r == -EBADMSG && t == (struct timeconv_trace *) &n && strstr(error.message, want) &&
           strstr(error.message, want_text), "%s: refused: \"%s\"", what, error.message);
        r = timeconv_snapshots_load_buffer((const char *) data, n, &s, &error);
        ok(r == -EBADMSG && s == (struct timeconv_snapshots *) &n, "%s: refused as snapshots too", what);
}

/* "byte N:" of a block field: after the packet's key and its length. */
static const char *block_at(const Buf *b, char *buf) {
        size_t n = 2;

        while (b->data[n - 1] & 0x80)
                n++;
        snprintf(buf, 32, "byte %zu:", n);
        return buf;
}

static void test_bad_input(void) {
        static const uint8_t overlong[] = { 0x0a, 0x0c, 0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0x01 };
        static const uint8_t past_end[] = { 0x0a, 0x7f, 0x00 };
        static const uint8_t wrong_wire[] = { 0x0a, 0x03, 0x42, 0x01, 0x00 };
        static const uint8_t group[] = { 0x0a, 0x01, 0x0b };
        static const uint8_t bad_zlib[] = { 0x0a, 0x05, 0x92, 0x03, 0x02, 0x78, 0x00 };
        char text[8192], at[32];
        Buf a, twice, bomb = { 0 }, zbomb = { 0 }, nested = { 0 }, inner = { 0 };

        snprintf(text, sizeof(text), "%s%s", trace_a_snapshot, trace_a_packets);
        a = encode(text);
        refused("truncated packet", a.data, a.n - 3, "byte ", "past the end");
        refused("over-long varint", overlong, sizeof(overlong), "byte 2:", "over-long varint");
        refused("length past the end", past_end, sizeof(past_end), "byte 0:", "length 127 past the end");
        refused("wrong wire type", wrong_wire, sizeof(wrong_wire), "byte 2:", "field 8: wire type length-delimited");
        refused("a group", group, sizeof(group), "byte 2:", "wire type 3");
        twice = encode("packet { clock_snapshot { clocks { clock_id: 6 timestamp: 1 } clocks { clock_id: 3 "
                       "timestamp: 1 } clocks { clock_id: 6 timestamp: 2 } } }\n");
        refused("a clock twice in one snapshot", twice.data, twice.n, "byte 2:", "boottime twice in one snapshot");
        put_bomb(&bomb, false, (size_t) 200 << 20);
        diag("a zlib block of %zu bytes that inflates to 200 MiB", bomb.n);
        refused("zlib bomb", bomb.data, bomb.n, block_at(&bomb, at), "inflates past 64 MiB");
        put_bomb(&zbomb, true, (size_t) 200 << 20);
        diag("a zstd block of %zu bytes that inflates to 200 MiB", zbomb.n);
        refused("zstd bomb", zbomb.data, zbomb.n, block_at(&zbomb, at), "inflates past 64 MiB");
        refused("corrupt zlib", bad_zlib, sizeof(bad_zlib), "byte 2:", "compressed block");
        put_zlib(&inner, twice.data, 2);
        put_zlib(&nested, inner.data, inner.n);
        refused("a block in a block", nested.data, nested.n, "of the block compressed at byte 2",
                "inside a compressed block");

        free(a.data);
        free(twice.data);
        free(bomb.data);
        free(zbomb.data);
        free(nested.data);
        free(inner.data);
}

/* The .proto of the tests has Perfetto's numbers, as protoc itself decodes them raw. */
static void test_decode_raw(void) {
        char path[256], cmd[512], out[4096] = "";
        Buf a = encode("packet { trusted_packet_sequence_id: 2 timestamp: 5 timestamp_clock_id: 64 "
                       "trace_packet_defaults { timestamp_clock_id: 128 } machine_id: 1 }\n");
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/raw.pb", tmpdir);
        f = fopen(path, "w");
        if (!f || fwrite(a.data, 1, a.n, f) != a.n || fclose(f) != 0)
                abort();
        snprintf(cmd, sizeof(cmd), "protoc --decode_raw < '%s'", path);
        f = popen(cmd, "r");
        n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
        out[n] = 0;
        if (f)
                pclose(f);
        ok(strstr(out, "8: 5") && strstr(out, "10: 2") && strstr(out, "58: 64") && strstr(out, "59 {") &&
           strstr(out, "98: 1"), "protoc --decode_raw shows fields 8, 10, 58, 59, 98");
        free(a.data);
}

int main(int argc, char **argv) {
        char cmd[300];

        if (argc < 2) {
                fprintf(stderr, "usage: test-perfetto PROTO_DIR\n");
                return 2;
        }
        proto_dir = argv[1];
        if (!program_in_path("protoc")) {
                /* .ci/run installs protobuf-compiler: without it this is a broken setup. */
                fprintf(stderr, "protoc not found (apt-get install protobuf-compiler)\n");
                return 1;
        }
        if (!mkdtemp(tmpdir))
                return 1;

        test_decode_raw();
        test_semantics();
        test_snapshots_api();
        test_remote_clock_sync();
        test_bad_input();

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                diag("could not remove %s", tmpdir);
        return done_testing();
}
