/* SPDX-License-Identifier: MIT */
#pragma once

/* A skimming reader of Perfetto traces (a concatenation of Trace.packet entries): it decodes only
 * what places timestamps (perfetto-proto.h) and skips every other field by its length, over the
 * caller's bytes, inflating compressed_packets (zlib) and zstd_compressed_packets blocks into one
 * reused buffer of bounded size. It keeps what trace_processor keeps per sequence and per clock:
 *   - clock ids 64..127 belong to the trusted_packet_sequence_id of the packet that names them,
 *     ids of a packet with machine_id N != 0 to that machine;
 *   - a clock's unit_multiplier_ns and is_incremental are fixed by its first snapshot; a packet
 *     timestamp on an incremental clock is a delta against the clock's last value (the last
 *     snapshot's or the last packet's);
 *   - a packet's clock: its timestamp_clock_id, else its sequence's trace_packet_defaults (reset
 *     when the sequence's incremental state is cleared), else the trace clock (BOOTTIME unless a
 *     snapshot's primary_trace_clock names another);
 *   - RemoteClockSync: each client snapshot is a snapshot of its machine; each host snapshot,
 *     taken between two client snapshots less than 30 s apart, is a bracket: the client's clocks
 *     at the middle of the two, give or take half their distance.
 * It reports snapshots and timestamped packets through callbacks, in file order. Malformed input
 * stops the scan with -EBADMSG and a message that names the byte offset. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PF_MAX_CLOCKS 4096
#define PF_MAX_SNAPSHOT_CLOCKS 64
#define PF_MAX_SYNCED_CLOCKS 4096
#define PF_INFLATE_MAX_BYTES (64u * 1024u * 1024u)
#define PF_CLOCK_NAME_MAX 64
#define PF_MESSAGE_MAX 256
#define PF_NO_CLOCK SIZE_MAX

typedef struct PfClock {
        uint32_t machine;
        uint32_t sequence;              /* 0 unless the id is sequence-scoped (64..127) */
        uint32_t id;
        int64_t unit_multiplier_ns;     /* >= 1 */
        bool incremental;
        int64_t last_ts;                /* in the clock's units, absolute */
        uint64_t snapshots;
        int64_t min_ts, max_ts;         /* of its snapshot readings, in its units */
} PfClock;

typedef struct PfReading {
        size_t clock;                   /* index into the reader's clocks */
        int64_t ts;                     /* absolute, in the clock's units */
        int64_t uncertainty_ns;         /* 0 but for a bracket's client clocks */
} PfReading;

typedef struct PfSnapshot {
        uint64_t offset;                /* of the packet */
        const PfReading *readings;
        size_t n;
} PfSnapshot;

typedef struct PfPacket {
        uint64_t index;                 /* in file order, packets of a compressed block in place */
        uint64_t offset;                /* of the packet, in the file (of its block if inflated) */
        uint32_t sequence;
        uint32_t machine;
        uint32_t clock_id;
        uint32_t clock_sequence;        /* the sequence for a scoped id, else 0 */
        int64_t ts;                     /* as stamped, after defaults and increments */
        size_t clock;                   /* index into the reader's clocks, PF_NO_CLOCK if none */
        const char *skip_reason;        /* non-NULL: ts is meaningless, the packet is not placed */
} PfPacket;

typedef struct PfReader PfReader;

typedef struct PfScanOps {
        int (*snapshot)(PfReader *r, const PfSnapshot *s, void *userdata);
        int (*packet)(PfReader *r, const PfPacket *p, void *userdata);
} PfScanOps;

int pf_reader_new(PfReader **ret);
PfReader *pf_reader_free(PfReader *r);

/* Scans the whole of data (the reader's state starts afresh). ops' members may be NULL. */
int pf_reader_scan(PfReader *r, const uint8_t *data, size_t size, const PfScanOps *ops, void *userdata);

/* The trace clock from the start of the next scans (0: BOOTTIME until a snapshot names one), so
 * that a second pass places the packets before the first primary_trace_clock as the first did. */
void pf_reader_set_trace_clock(PfReader *r, uint32_t id);

/* What the last scan found. */
size_t pf_reader_count_clocks(const PfReader *r);
const PfClock *pf_reader_clock(const PfReader *r, size_t index);
uint32_t pf_reader_trace_clock_id(const PfReader *r);
uint64_t pf_reader_count_packets(const PfReader *r);
const char *pf_reader_message(const PfReader *r);

/* For a callback: stops the scan with -EBADMSG and "byte OFFSET: message". */
int pf_reader_fail(PfReader *r, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The name of a clock: "boottime" (builtin ids), "x11_us" (an id timeconv hashes from one of
 * its domain names), "128", "64@2" (sequence 2), "m1:boottime" (machine 1). buf holds
 * PF_CLOCK_NAME_MAX bytes. */
const char *pf_clock_name(uint32_t machine, uint32_t sequence, uint32_t id, char *buf);
