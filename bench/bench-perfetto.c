/* SPDX-License-Identifier: MIT */

/* Figures of the Perfetto trace reader, as one JSON object on stdout, on a trace made here: 10M
 * packets of ~60 bytes (a timestamp, a sequence, a clock id on half of them, a 40-byte payload
 * the reader skips), a ClockSnapshot every 10,000 packets.
 *   - scan: pf_reader_scan() extracting every snapshot and timestamp, in GB/s, against the floor
 *     of reading the same bytes (a sum of 64-bit words);
 *   - compressed: the same packets in zlib and in zstd blocks of 256 KiB, the scan against the
 *     decompressor alone inflating the same blocks, and against the two in turn (the least a
 *     reader of compressed packets can cost: zstd inflates faster than anything scans its output);
 *   - placing: timeconv_trace_place() over the 10M packets, per packet, against the scan alone
 *     and the offline engine's own conversion (snapshot_graph_convert() by index, the same
 *     values). The best of ROUNDS rounds counts. Errors go to stderr and exit 1. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "bench-util.h"
#include "perfetto-read.h"
#include "timeconv-internal.h"

#define PACKETS 10000000
#define SNAPSHOT_EVERY 10000
#define PAYLOAD_BYTES 40
#define BLOCK_BYTES (256 * 1024)
#define ROUNDS 5

typedef struct Buf {
        uint8_t *data;
        size_t n, allocated;
} Buf;

static void put(Buf *b, const void *data, size_t n) {
        if (b->n + n > b->allocated) {
                b->allocated = 2 * (b->n + n) + 4096;
                b->data = realloc(b->data, b->allocated);
                if (!b->data)
                        abort();
        }
        memcpy(b->data + b->n, data, n);
        b->n += n;
}

static void varint(Buf *b, uint64_t v) {
        uint8_t c[10];
        size_t n = 0;

        do {
                c[n++] = (uint8_t) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
                v >>= 7;
        } while (v);
        put(b, c, n);
}

static void key(Buf *b, unsigned field, unsigned wire) {
        varint(b, (uint64_t) field << 3 | wire);
}

static void put_len(Buf *out, unsigned field, const Buf *m) {
        key(out, field, 2);
        varint(out, m->n);
        put(out, m->data, m->n);
}

/* Snapshot i: boottime, monotonic (boottime - 1 s + i µs of suspend), realtime. */
static void put_snapshot(Buf *out, uint64_t boot_ns, uint64_t i) {
        const uint64_t values[3][2] = {
                { 6, boot_ns }, { 3, boot_ns - 1000000000 - i * 1000 }, { 1, boot_ns + UINT64_C(1700000000000000000) },
        };
        Buf snap = { 0 }, packet = { 0 };

        for (size_t c = 0; c < 3; c++) {
                Buf clock = { 0 };

                key(&clock, 1, 0);
                varint(&clock, values[c][0]);
                key(&clock, 2, 0);
                varint(&clock, values[c][1]);
                put_len(&snap, 1, &clock);
                free(clock.data);
        }
        key(&packet, 10, 0);
        varint(&packet, 1);
        put_len(&packet, 6, &snap);
        put_len(out, 1, &packet);
        free(snap.data);
        free(packet.data);
}

static void put_packet(Buf *out, uint64_t boot_ns, uint64_t i) {
        static const uint8_t payload[PAYLOAD_BYTES] = { 0x08, 0x01 };
        uint8_t buf[128];
        Buf packet = { .data = buf, .allocated = sizeof(buf) };

        key(&packet, 8, 0);
        if (i % 2) {
                varint(&packet, boot_ns - 1000000000 - (i / SNAPSHOT_EVERY) * 1000);
                key(&packet, 58, 0);
                varint(&packet, 3);
        } else
                varint(&packet, boot_ns);
        key(&packet, 10, 0);
        varint(&packet, 2 + i % 8);
        key(&packet, 11, 2);
        varint(&packet, sizeof(payload));
        put(&packet, payload, sizeof(payload));
        key(out, 1, 2);
        varint(out, packet.n);
        put(out, packet.data, packet.n);
}

/* The trace, plain; and its packets after the first snapshot in compressed blocks of field 50
 * (zlib) or 133 (zstd), with the blocks alone in *ret_blocks for the decompressor's own time. */
static void make_trace(Buf *plain) {
        uint64_t boot_ns = UINT64_C(1000000000000);

        for (uint64_t i = 0; i < PACKETS; i++) {
                if (i % SNAPSHOT_EVERY == 0)
                        put_snapshot(plain, boot_ns, i / SNAPSHOT_EVERY);
                put_packet(plain, boot_ns, i);
                boot_ns += 1000 + i % 7;
        }
}

typedef struct Blocks {
        uint8_t **data;
        size_t *size;
        size_t n;
} Blocks;

/* Cuts plain into blocks of whole packets of about BLOCK_BYTES and compresses each. */
static void compress_trace(const Buf *plain, bool zstd, Buf *out, Blocks *blocks) {
        size_t at = 0;

        memset(blocks, 0, sizeof(*blocks));
        while (at < plain->n) {
                size_t end = at, size;
                uint8_t *z;
                Buf packet = { 0 };

                while (end < plain->n && end - at < BLOCK_BYTES) {
                        const uint8_t *p = plain->data + end + 1;
                        uint64_t len = 0;
                        unsigned shift = 0;

                        while (*p & 0x80)
                                len |= (uint64_t) (*p++ & 0x7f) << shift, shift += 7;
                        len |= (uint64_t) *p++ << shift;
                        end = (size_t) (p - plain->data) + len;
                }
                size = zstd ? ZSTD_compressBound(end - at) : compressBound(end - at);
                z = malloc(size);
                if (!z)
                        abort();
                if (zstd) {
                        size = ZSTD_compress(z, size, plain->data + at, end - at, 1);
                        if (ZSTD_isError(size))
                                abort();
                } else {
                        uLongf zsize = size;

                        if (compress2(z, &zsize, plain->data + at, end - at, 1) != Z_OK)
                                abort();
                        size = zsize;
                }
                blocks->data = realloc(blocks->data, (blocks->n + 1) * sizeof(*blocks->data));
                blocks->size = realloc(blocks->size, (blocks->n + 1) * sizeof(*blocks->size));
                if (!blocks->data || !blocks->size)
                        abort();
                blocks->data[blocks->n] = z;
                blocks->size[blocks->n++] = size;
                key(&packet, zstd ? 133 : 50, 2);
                varint(&packet, size);
                put(&packet, z, size);
                put_len(out, 1, &packet);
                free(packet.data);
                at = end;
        }
}

typedef struct Sums {
        uint64_t ts, snapshots, packets;
} Sums;

static int sum_snapshot(PfReader *r, const PfSnapshot *s, void *userdata) {
        Sums *sums = userdata;

        (void) r;
        sums->snapshots += s->n;
        return 0;
}

static int sum_packet(PfReader *r, const PfPacket *p, void *userdata) {
        Sums *sums = userdata;

        (void) r;
        sums->ts += (uint64_t) p->ts;
        sums->packets++;
        return 0;
}

/* One scan of data, its time; its sums in *ret. */
static int64_t time_scan(PfReader *reader, const Buf *b, Sums *ret) {
        static const PfScanOps ops = { .snapshot = sum_snapshot, .packet = sum_packet };
        int64_t best = INT64_MAX;

        for (int round = 0; round < 1; round++) {
                Sums sums = { 0 };
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
                int r = pf_reader_scan(reader, b->data, b->n, &ops, &sums);
                int64_t t = clock_now_ns(CLOCK_MONOTONIC) - t0;

                if (r < 0) {
                        fprintf(stderr, "bench-perfetto: scan: %s\n", pf_reader_message(reader));
                        exit(1);
                }
                best = t < best ? t : best;
                *ret = sums;
        }
        return best;
}

static int64_t time_floor(const Buf *b, volatile uint64_t *sink) {
        int64_t best = INT64_MAX;

        for (int round = 0; round < 1; round++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), t;
                uint64_t sum = 0;

                for (size_t i = 0; i + 8 <= b->n; i += 8) {
                        uint64_t w;

                        memcpy(&w, b->data + i, 8);
                        sum += w;
                }
                *sink = sum;
                t = clock_now_ns(CLOCK_MONOTONIC) - t0;
                best = t < best ? t : best;
        }
        return best;
}

/* The decompressor alone over the same blocks, into one reused buffer. */
static int64_t time_decompress(const Blocks *blocks, bool zstd, volatile uint64_t *sink) {
        uint8_t *out = malloc(2 * BLOCK_BYTES + 4096);
        ZSTD_DCtx *dctx = ZSTD_createDCtx();
        int64_t best = INT64_MAX;

        if (!out || !dctx)
                abort();
        for (int round = 0; round < 1; round++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), t;
                uint64_t total = 0;

                for (size_t i = 0; i < blocks->n; i++) {
                        if (zstd)
                                total += ZSTD_decompressDCtx(dctx, out, 2 * BLOCK_BYTES + 4096, blocks->data[i],
                                                             blocks->size[i]);
                        else {
                                uLongf n = 2 * BLOCK_BYTES + 4096;

                                if (uncompress(out, &n, blocks->data[i], blocks->size[i]) != Z_OK)
                                        abort();
                                total += n;
                        }
                }
                *sink = total + out[0];
                t = clock_now_ns(CLOCK_MONOTONIC) - t0;
                best = t < best ? t : best;
        }
        ZSTD_freeDCtx(dctx);
        free(out);
        return best;
}

/* The engine alone: the same conversions as the placing (half of them monotonic -> boottime,
 * the others boottime to itself), by index, on the trace's own graph. */
static int64_t time_engine(const SnapshotGraph *graph, size_t mono, size_t boot, volatile uint64_t *sink) {
        uint64_t boot_ns = UINT64_C(1000000000000), sum = 0;
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);

        for (uint64_t i = 0; i < PACKETS; i++) {
                int64_t v = (int64_t) boot_ns, out = 0, unc = 0;

                if (i % 2)
                        snapshot_graph_convert(graph, SNAPSHOT_MODE_NEAREST, mono, boot,
                                               v - 1000000000 - (int64_t) (i / SNAPSHOT_EVERY) * 1000, &out, &unc);
                else
                        snapshot_graph_convert(graph, SNAPSHOT_MODE_NEAREST, boot, boot, v, &out, &unc);
                sum += (uint64_t) out + (uint64_t) unc;
                boot_ns += 1000 + i % 7;
        }
        *sink = sum;
        return clock_now_ns(CLOCK_MONOTONIC) - t0;
}

static int count_placed(const struct timeconv_trace_packet *p, void *userdata) {
        uint64_t *n = userdata;

        *n += p->error == 0 && p->uncertainty_ns >= 0;
        return 0;
}

int main(void) {
        volatile uint64_t sink;
        Buf plain = { 0 }, zlib_trace = { 0 }, zstd_trace = { 0 };
        Blocks zlib_blocks, zstd_blocks;
        PfReader *reader = NULL;
        struct timeconv_trace *trace = NULL;
        struct timeconv_error error;
        SnapshotGraph *graph;
        Sums sums, zsums, ssums;
        int64_t scan_ns, floor_ns, zlib_scan_ns, zlib_alone_ns, zstd_scan_ns, zstd_alone_ns;
        int64_t load_ns = INT64_MAX, place_ns = INT64_MAX, convert_ns = INT64_MAX, t0;
        size_t boot, mono;
        uint64_t placed = 0;

        make_trace(&plain);
        compress_trace(&plain, false, &zlib_trace, &zlib_blocks);
        compress_trace(&plain, true, &zstd_trace, &zstd_blocks);
        if (pf_reader_new(&reader) < 0)
                return 1;

        /* Each figure the best of ROUNDS, the rounds interleaved: on a shared machine the load
         * changes over a run, and each ratio compares figures of the same moments. */
        floor_ns = scan_ns = zlib_scan_ns = zlib_alone_ns = zstd_scan_ns = zstd_alone_ns = INT64_MAX;
        for (int round = 0; round < ROUNDS; round++) {
                int64_t t;

                t = time_floor(&plain, &sink);
                floor_ns = t < floor_ns ? t : floor_ns;
                t = time_scan(reader, &plain, &sums);
                scan_ns = t < scan_ns ? t : scan_ns;
                t = time_scan(reader, &zlib_trace, &zsums);
                zlib_scan_ns = t < zlib_scan_ns ? t : zlib_scan_ns;
                t = time_decompress(&zlib_blocks, false, &sink);
                zlib_alone_ns = t < zlib_alone_ns ? t : zlib_alone_ns;
                t = time_scan(reader, &zstd_trace, &ssums);
                zstd_scan_ns = t < zstd_scan_ns ? t : zstd_scan_ns;
                t = time_decompress(&zstd_blocks, true, &sink);
                zstd_alone_ns = t < zstd_alone_ns ? t : zstd_alone_ns;
        }
        if (sums.packets != PACKETS || zsums.ts != sums.ts || ssums.ts != sums.ts) {
                fprintf(stderr, "bench-perfetto: the scans disagree (%" PRIu64 " packets)\n", sums.packets);
                return 1;
        }

        for (int round = 0; round < ROUNDS; round++) {
                int64_t t;

                trace = timeconv_trace_free(trace);
                t0 = clock_now_ns(CLOCK_MONOTONIC);
                if (timeconv_trace_load_buffer(plain.data, plain.n, &trace, &error) < 0) {
                        fprintf(stderr, "bench-perfetto: load: %s\n", error.message);
                        return 1;
                }
                t = clock_now_ns(CLOCK_MONOTONIC) - t0;
                load_ns = t < load_ns ? t : load_ns;
        }
        graph = timeconv_trace_snapshots(trace)->graph;
        if (snapshot_graph_find(graph, "boottime", &boot) < 0 || snapshot_graph_find(graph, "monotonic", &mono) < 0)
                return 1;
        /* Placing, the plain scan and the engine, interleaved as above. */
        for (int round = 0; round < ROUNDS; round++) {
                int64_t t;

                placed = 0;
                t0 = clock_now_ns(CLOCK_MONOTONIC);
                if (timeconv_trace_place(trace, TIMECONV_MODE_NEAREST, NULL, count_placed, &placed, &error) < 0) {
                        fprintf(stderr, "bench-perfetto: place: %s\n", error.message);
                        return 1;
                }
                t = clock_now_ns(CLOCK_MONOTONIC) - t0;
                place_ns = t < place_ns ? t : place_ns;
                t = time_scan(reader, &plain, &sums);
                scan_ns = t < scan_ns ? t : scan_ns;
                t = time_engine(graph, mono, boot, &sink);
                convert_ns = t < convert_ns ? t : convert_ns;
        }
        if (placed != PACKETS) {
                fprintf(stderr, "bench-perfetto: %" PRIu64 " of %d packets placed\n", placed, PACKETS);
                return 1;
        }

        {
                double scan_gbps = (double) plain.n / (double) scan_ns;
                double floor_gbps = (double) plain.n / (double) floor_ns;
                double zlib_ratio = (double) zlib_scan_ns / (double) zlib_alone_ns;
                double zstd_ratio = (double) zstd_scan_ns / (double) zstd_alone_ns;
                double place_per_ns = (double) place_ns / PACKETS, scan_per_ns = (double) scan_ns / PACKETS;
                double convert_per_ns = (double) convert_ns / PACKETS;
                /* zstd inflates faster than any scan of its output: the most a reader can do is
                 * cost no more than the two in turn. */
                double zstd_sum_ratio = (double) zstd_scan_ns / (double) (zstd_alone_ns + scan_ns);
                double zlib_sum_ratio = (double) zlib_scan_ns / (double) (zlib_alone_ns + scan_ns);

                printf("{\"packets\":%d,\"bytes\":%zu,\"snapshots\":%d,"
                       "\"scan_gbps\":%.3f,\"floor_read_gbps\":%.3f,\"scan_vs_floor\":%.2f,"
                       "\"zlib_bytes\":%zu,\"zlib_scan_ms\":%.1f,\"zlib_alone_ms\":%.1f,\"zlib_scan_vs_alone\":%.3f,"
                       "\"zstd_bytes\":%zu,\"zstd_scan_ms\":%.1f,\"zstd_alone_ms\":%.1f,\"zstd_scan_vs_alone\":%.3f,"
                       "\"load_ms\":%.1f,\"place_ns_per_packet\":%.2f,\"scan_ns_per_packet\":%.2f,"
                       "\"engine_convert_ns\":%.2f,\"placing_beyond_scan_vs_convert\":%.2f,"
                       "\"zlib_scan_vs_alone_plus_plain_scan\":%.3f,\"zstd_scan_vs_alone_plus_plain_scan\":%.3f,"
                       "\"targets\":{\"scan_at_least_1_gbps\":%s,"
                       "\"zlib_no_cost_beyond_decompress_plus_scan\":%s,"
                       "\"zstd_no_cost_beyond_decompress_plus_scan\":%s,"
                       "\"placing_beyond_scan_within_2x_convert\":%s}}\n",
                       PACKETS, plain.n, PACKETS / SNAPSHOT_EVERY, scan_gbps, floor_gbps, floor_gbps / scan_gbps,
                       zlib_trace.n, (double) zlib_scan_ns / 1e6, (double) zlib_alone_ns / 1e6, zlib_ratio,
                       zstd_trace.n, (double) zstd_scan_ns / 1e6, (double) zstd_alone_ns / 1e6, zstd_ratio,
                       (double) load_ns / 1e6, place_per_ns, scan_per_ns, convert_per_ns,
                       (place_per_ns - scan_per_ns) / convert_per_ns, zlib_sum_ratio, zstd_sum_ratio,
                       scan_gbps >= 1.0 ? "true" : "false", zlib_sum_ratio <= 1.25 ? "true" : "false",
                       zstd_sum_ratio <= 1.25 ? "true" : "false",
                       place_per_ns - scan_per_ns <= 2 * convert_per_ns ? "true" : "false");
        }
        timeconv_trace_free(trace);
        pf_reader_free(reader);
        free(plain.data);
        free(zlib_trace.data);
        free(zstd_trace.data);
        for (size_t i = 0; i < zlib_blocks.n; i++)
                free(zlib_blocks.data[i]);
        for (size_t i = 0; i < zstd_blocks.n; i++)
                free(zstd_blocks.data[i]);
        free(zlib_blocks.data);
        free(zlib_blocks.size);
        free(zstd_blocks.data);
        free(zstd_blocks.size);
        return 0;
}
