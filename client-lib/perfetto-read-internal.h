/* SPDX-License-Identifier: MIT */
#pragma once

/* What the files of the Perfetto reader share (perfetto-read.h is its interface): the reader's
 * state, the wire format's field, and the functions one file gives another. perfetto-read.c:
 * the tables, the packet loop, the scan; perfetto-wire.c: fields and the errors that name their
 * byte; perfetto-sync.c: ClockSnapshot and RemoteClockSync; perfetto-inflate.c: the blocks. */

#include <errno.h>
#include <stdarg.h>

#include "perfetto-proto.h"
#include "perfetto-read.h"

#define PF_NO_BLOCK UINT64_MAX
#define PF_CLOCK_SLOTS (2 * PF_MAX_CLOCKS)
#define PF_SYNC_SIDE_MAX 16

typedef struct SeqState {
        uint64_t key;                   /* sequence + 1; 0: a free slot */
        uint32_t default_clock_id;
        bool valid;                     /* its incremental state was cleared once */
        /* The clock its last packet used: id, machine, index, and n_clocks then (a clock
         * added since may be the one a miss missed). */
        uint32_t cached_id, cached_machine;
        size_t cached_clock, cached_n_clocks;
} SeqState;

typedef struct RawClock {
        uint32_t id;
        uint64_t ts;
        uint64_t unit_multiplier_ns;
        bool incremental;
} RawClock;

typedef struct SyncEntry {
        RawClock client[PF_SYNC_SIDE_MAX], host[PF_SYNC_SIDE_MAX];
        size_t n_client, n_host;
} SyncEntry;

typedef struct Field {
        uint32_t number;
        unsigned wire;
        uint64_t value;                 /* varint and fixed */
        const uint8_t *data;            /* length-delimited */
        size_t size;
        const uint8_t *start;
} Field;

struct PfReader {
        PfClock clocks[PF_MAX_CLOCKS];
        size_t n_clocks;
        uint32_t clock_slots[PF_CLOCK_SLOTS];      /* index + 1; 0: free */

        SeqState *seqs;
        size_t seq_capacity, n_seqs;
        SeqState *last_seq;             /* the last one found (packets come in runs) */

        uint32_t trace_clock_id;
        bool trace_clock_set;
        uint32_t initial_trace_clock_id;        /* 0: BOOTTIME until a snapshot says */
        uint64_t n_packets;

        const uint8_t *base;            /* the buffer that offsets count from */
        uint64_t block_offset;          /* the file offset of the block being read, or PF_NO_BLOCK */
        uint8_t *inflated;
        size_t inflated_allocated;
        struct ZSTD_DCtx_s *zstd;
        SyncEntry *sync;
        size_t sync_allocated;

        const PfScanOps *ops;
        void *userdata;
        PfReading readings[PF_MAX_SNAPSHOT_CLOCKS];
        char message[PF_MESSAGE_MAX];
};

/* Errors: "byte N: ..." (N in the file, or in the block being read and the block's offset). */
int pf_fail_at(PfReader *r, const uint8_t *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
uint64_t pf_file_offset(const PfReader *r, const uint8_t *p);

/* The field at *pp: 1 when one was read, 0 at the end, or an error (-EBADMSG). */
int pf_next_field(PfReader *r, const uint8_t **pp, const uint8_t *end, Field *f);
int pf_expect_wire(PfReader *r, const Field *f, unsigned wire);

size_t pf_clock_find(const PfReader *r, uint32_t machine, uint32_t sequence, uint32_t id);
size_t pf_clock_add(PfReader *r, uint32_t machine, uint32_t sequence, uint32_t id, int64_t mult, bool incremental);
bool pf_sequence_scoped(uint32_t id);

/* A packet's clock_snapshot and remote_clock_sync fields. */
int pf_clock_snapshot(PfReader *r, const Field *f, uint32_t machine, uint32_t sequence);
int pf_remote_clock_sync(PfReader *r, const Field *remote, uint32_t machine);

/* A compressed_packets or zstd_compressed_packets field: inflates it and scans what it holds. */
int pf_compressed(PfReader *r, const Field *f);
int pf_scan_buffer(PfReader *r, const uint8_t *p, const uint8_t *end);

/* 0, -EPIPE (the input ends inside it) or -EOVERFLOW (more than 64 bits, or an 11th byte). */
static inline int pf_read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *ret) {
        const uint8_t *p = *pp;
        uint64_t v = 0;

        if (p < end && *p < 0x80) {
                *ret = *p;
                *pp = p + 1;
                return 0;
        }
        if (end - p >= 10) {
                /* Far from the end: no bounds check per byte. */
                for (unsigned i = 0; i < 10; i++) {
                        uint8_t b = p[i];

                        v |= (uint64_t) (b & 0x7f) << (7 * i);
                        if (b < 0x80) {
                                if (i == 9 && b > 1)
                                        return -EOVERFLOW;
                                *ret = v;
                                *pp = p + i + 1;
                                return 0;
                        }
                }
                return -EOVERFLOW;
        }
        for (unsigned shift = 0; shift < 64; shift += 7) {
                uint8_t b;

                if (p >= end)
                        return -EPIPE;
                b = *p++;
                if (shift == 63 && b > 1)
                        return -EOVERFLOW;
                v |= (uint64_t) (b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        *pp = p;
                        return 0;
                }
        }
        return -EOVERFLOW;
}
