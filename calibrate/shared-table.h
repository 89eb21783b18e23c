/* SPDX-License-Identifier: MIT */
#pragma once

/* The layout of the daemon's shared table and the functions that write and read it. Pure: no
 * I/O, no allocation; the daemon owns the memfd (daemon/table-publish.c), the client maps it
 * read-only. Its entries ARE the graph's conversion records (conv-record.h), one per ordered pair
 * of nodes, so a conversion through the table is one record read and conv_record_convert(): the
 * daemon's own answer, by the one implementation of the math.
 *
 * Layout (version SHARED_TABLE_LAYOUT_VERSION, records of CONV_RECORD_WIRE_VERSION): a header;
 * SHARED_TABLE_CAPACITY_MAX node descriptors (name, flags), each written once before the count
 * that makes it visible and never changed in the table's life; then the pair entries, pair
 * (from, to) at index from * SHARED_TABLE_CAPACITY_MAX + to. A table laid out for capacity c holds
 * the entries up to (c - 1, c - 1). Within one table an index always names the same domain: the
 * writer only appends (the generation changes when it does); a graph it cannot describe that way
 * needs a new table. Each pair entry is guarded by a sequence counter over two copies of the
 * record (a latch, Linux's seqcount_latch): the writer makes the counter odd and writes copy 0,
 * makes it even and writes copy 1. A reader copies copy (counter & 1), the one the writer is not
 * touching, and keeps it when the counter is unchanged around the copy; so a reader never waits
 * for a writer, and retries only when the writer got through a whole half during its copy. This
 * is the table's one read loop (shared_table_read_pair()). Every shared word is read and written
 * with atomics (relaxed for the data, fences and acquire/release on the counter).
 *
 * A reader validates the table once after mapping (shared_table_validate()) and then uses
 * indices from shared_table_find(). It trusts no word of shared memory after that: every index
 * is bounded by the size of the reader's own mapping, and conv_record_convert() has no undefined
 * behaviour whatever a record holds (a hostile writer gets garbage answers, never a crash). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv-record.h"
#include "graph.h"

#define SHARED_TABLE_MAGIC UINT64_C(0x31454c4241544354)         /* "TCTABLE1" little-endian */
#define SHARED_TABLE_MAGIC_RETIRED UINT64_C(0x44455249544552ff) /* the writer is gone */
/* Bump on any change of the structs below; ConvRecord has its own CONV_RECORD_WIRE_VERSION. */
/* 4: a retired table has moved every pair's counter, so that a kept copy is current on its
 * counter alone (shared_table_copy_current()). */
#define SHARED_TABLE_LAYOUT_VERSION 4
#define SHARED_TABLE_CAPACITY_MAX GRAPH_NODES_MAX
#define SHARED_TABLE_NAME_MAX GRAPH_NAME_MAX
/* Tries of a copy before -EAGAIN: each failed try means the writer finished half an update
 * during the copy, which takes a few ns; running out means the reader was descheduled again
 * and again. The caller then asks the daemon. */
#define SHARED_TABLE_READ_TRIES 64

#define SHARED_TABLE_NODE_HUB (UINT32_C(1) << 0)        /* the reference (monotonic_raw) */
#define SHARED_TABLE_UNIT_TRUNCATES (UINT32_C(1) << 0)
#define SHARED_TABLE_UNIT_X11_US (UINT32_C(1) << 1)
#define SHARED_TABLE_UNIT_EVENTS (UINT32_C(1) << 2)    /* DomainUnit.events */

typedef struct SharedTableHeader {
        /* Constant once laid out: */
        uint64_t magic;                 /* SHARED_TABLE_MAGIC; _RETIRED once the writer left */
        uint32_t layout_version;
        uint32_t header_size;           /* sizeof(SharedTableHeader) */
        uint32_t entry_size;            /* sizeof(SharedTableEntry) */
        uint32_t node_size;             /* sizeof(SharedTableNode) */
        uint64_t size;                  /* bytes laid out: >= shared_table_size(capacity) */
        uint32_t capacity;              /* nodes */
        uint32_t hub;                   /* index of the hub, valid once n_nodes > 0 */
        /* Changed by the writer (atomics): */
        uint64_t generation;            /* changes when the set of nodes changes; never 0 */
        uint32_t n_nodes;               /* nodes in use; 0 in a retired table */
        uint32_t record_version;        /* CONV_RECORD_WIRE_VERSION */
        int64_t heartbeat_ns;           /* CLOCK_MONOTONIC of the last publish; 0: none yet */
        int64_t heartbeat_max_ns;       /* the longest gap the writer means to leave between them */
} __attribute__((aligned(64))) SharedTableHeader;

typedef struct SharedTableNode {
        char name[SHARED_TABLE_NAME_MAX];       /* NUL-terminated */
        uint32_t flags;                         /* SHARED_TABLE_NODE_* */
        uint32_t wrap_bits;                     /* 0: none */
        int64_t period_q32;                     /* ns per unit, Q32, rounded to nearest */
        uint32_t unit_flags;                    /* SHARED_TABLE_UNIT_* */
        uint32_t reserved;
} SharedTableNode;

typedef struct SharedTableEntry {
        uint64_t seq;                   /* the latch: readers use copy seq & 1 */
        uint64_t reserved;
        ConvRecord copy[2];
} __attribute__((aligned(16))) SharedTableEntry;

/* Bytes a table of capacity n_nodes needs (page-rounded is the caller's business). */
size_t shared_table_size(size_t n_nodes);

/* ---- writer (the daemon) ---- */

/* Lays out an empty table of capacity n_nodes in mem (64-byte aligned, size bytes). -EINVAL for
 * a bad argument or too small a size. */
int shared_table_init(void *mem, size_t size, size_t n_nodes);

/* What shared_table_publish() answers for a graph that is not this table's plus new nodes (fewer
 * nodes, a node renamed or the hub changed): an expected outcome, which its caller handles by
 * publishing a new table and retiring this one. */
#define SHARED_TABLE_REPLACE 1

/* Publishes the graph's pair records, each under its latch (unchanged ones are not rewritten, so
 * readers rarely retry); bumps the generation when nodes were added. 0, SHARED_TABLE_REPLACE
 * (nothing written), -ENOSPC beyond the capacity, -EBADMSG: mem is no table. */
int shared_table_publish(void *mem, size_t size, const ClockGraph *g);

/* Records a publish at CLOCK_MONOTONIC now_ns; the next comes within max_gap_ns. */
void shared_table_heartbeat(void *mem, int64_t now_ns, int64_t max_gap_ns);

/* The writer is leaving: readers get -ESTALE from now on. */
void shared_table_retire(void *mem);

/* ---- reader (libtimeconv) ---- */

/* 0 for a table it can read; -EINVAL NULL or misaligned mem; -EBADMSG not a table, bad sizes
 * or counts; -EPROTO another layout or record version (or a build with other struct sizes);
 * -ESTALE a retired table. */
int shared_table_validate(const void *mem, size_t size);
/* The nodes a mapping of size bytes holds whole, rows of pairs included. */
size_t shared_table_capacity(size_t size);
uint64_t shared_table_generation(const void *mem);
/* Nodes in use, at most the mapping's capacity. */
size_t shared_table_count(const void *mem, size_t size);
/* Whether the writer published within its promised gap of now_ns (CLOCK_MONOTONIC) and has not
 * retired the table: a false means the daemon is dead or stuck, ask the bus. */
bool shared_table_alive(const void *mem, int64_t now_ns);
/* -ENOENT: no node of that name; -ESTALE a retired table. */
int shared_table_find(const void *mem, size_t size, const char *name, size_t *ret_index);
/* Node index's descriptor; -ENOENT out of range, -EBADMSG a name without its NUL or empty,
 * -ESTALE a retired table. */
int shared_table_read_node(const void *mem, size_t size, size_t index, SharedTableNode *ret);

/* A consistent copy of the record of from -> to: -ENOENT an index out of range (or beyond the
 * mapping), -EAGAIN if a writer held it busy through every retry, -ESTALE a retired table. */
static inline int shared_table_read_pair(const void *mem, size_t size, size_t from, size_t to, ConvRecord *ret);

/* The same, with the pair's latch counter at the copy and the counter's address, for
 * shared_table_copy_current(). */
static inline int shared_table_read_pair_latched(const void *mem, size_t size, size_t from, size_t to,
                                                 ConvRecord *ret, uint64_t *ret_seq, const uint64_t **ret_latch);

/* conv_record_convert() on the pair's record, with the errors of read_pair(); CONV_RECORD_MISS
 * when the record does not answer (a value before a node's open segment): ask the daemon. hint_r_ns:
 * the reference time near which a short-wrapping value unwraps (INT64_MIN: the calibration's). */
static inline int shared_table_convert(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                       int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns);
int shared_table_convert_general(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                 int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* The same from the hub's time r_ns to node to: "now" of a domain is this on a reading of the
 * hub's clock. One record. */
static inline int shared_table_from_hub(const void *mem, size_t size, size_t to, int64_t r_ns,
                                        int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* ---- inline: the fast path ---- */

static inline const SharedTableEntry *shared_table_entry_(const void *mem, size_t index) {
        return (const SharedTableEntry *) ((const char *) mem + sizeof(SharedTableHeader) +
                                           SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode)) + index;
}

/* Whether entry index lies wholly within a mapping of size bytes. */
static inline bool shared_table_mapped_(size_t size, size_t index) {
        return sizeof(SharedTableHeader) + SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode) +
               ((uint64_t) index + 1) * sizeof(SharedTableEntry) <= (uint64_t) size;
}

static inline void shared_table_relax_(void) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
}

/* The one read loop: the record field by field, relaxed, between an acquire load of the counter
 * and an acquire fence before its second load (the writer's release fences after each step of
 * the counter pair with that fence). Named loads into a local record, not a word copy: inlined,
 * the record then lives in registers, where a copied array goes through the stack. */
#define SHARED_TABLE_LOAD_(field) rec.field = __atomic_load_n(&src->field, __ATOMIC_RELAXED)
static inline __attribute__((always_inline)) int shared_table_read_entry_(const SharedTableEntry *e, ConvRecord *ret,
                                                                         uint64_t *ret_seq) {
        for (unsigned t = 0; t < SHARED_TABLE_READ_TRIES; t++) {
                uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
                const ConvRecord *src = &e->copy[seq & 1];
                ConvRecord rec;

                SHARED_TABLE_LOAD_(in_lo);
                SHARED_TABLE_LOAD_(in_hi);
                SHARED_TABLE_LOAD_(in_c);
                SHARED_TABLE_LOAD_(out_c);
                SHARED_TABLE_LOAD_(out_frac);
                SHARED_TABLE_LOAD_(slope);
                SHARED_TABLE_LOAD_(slope_neg);
                SHARED_TABLE_LOAD_(bound_c_ns);
                SHARED_TABLE_LOAD_(bound_slope);
                SHARED_TABLE_LOAD_(in_hint);
                SHARED_TABLE_LOAD_(out_period_q32);
                SHARED_TABLE_LOAD_(gain_q32);
                SHARED_TABLE_LOAD_(status);
                SHARED_TABLE_LOAD_(flags);
                SHARED_TABLE_LOAD_(shift);
                SHARED_TABLE_LOAD_(bound_shift);
                SHARED_TABLE_LOAD_(in_coding);
                SHARED_TABLE_LOAD_(in_wrap_bits);
                SHARED_TABLE_LOAD_(out_coding);
                SHARED_TABLE_LOAD_(out_wrap_bits);
                rec.reserved = 0;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__builtin_expect(__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq, 1)) {
                        /* Callers return the status as it is: whatever a hostile writer stored,
                         * it must read as 0, CONV_RECORD_MISS or a negative errno. */
                        if (__builtin_expect(rec.status != 0 && rec.status != CONV_RECORD_MISS &&
                                             (rec.status > 0 || rec.status < -4095), 0))
                                rec.status = -EBADMSG;
                        *ret = rec;
                        if (ret_seq)
                                *ret_seq = seq;
                        return 0;
                }
                shared_table_relax_();
        }
        return -EAGAIN;
}
#undef SHARED_TABLE_LOAD_

static inline int shared_table_read_pair_latched(const void *mem, size_t size, size_t from, size_t to,
                                                 ConvRecord *ret, uint64_t *ret_seq, const uint64_t **ret_latch) {
        const SharedTableHeader *h = mem;
        size_t n = __atomic_load_n(&h->n_nodes, __ATOMIC_ACQUIRE), index;
        int r;

        /* n is the writer's: the mapping bounds the index. */
        if (__builtin_expect(from >= n || to >= n || from >= SHARED_TABLE_CAPACITY_MAX ||
                             to >= SHARED_TABLE_CAPACITY_MAX, 0))
                return __atomic_load_n(&h->magic, __ATOMIC_RELAXED) == SHARED_TABLE_MAGIC_RETIRED ? -ESTALE : -ENOENT;
        index = from * SHARED_TABLE_CAPACITY_MAX + to;
        if (__builtin_expect(!shared_table_mapped_(size, index), 0))
                return -ENOENT;
        r = shared_table_read_entry_(shared_table_entry_(mem, index), ret, ret_seq);
        if (r < 0 || !ret_latch)
                return r;
        /* A copy to keep: the table may have retired since n was read, and a counter moved by
         * the retire would then look current for ever. Retiring stores the count before it moves
         * the counters, so a copy taken at a moved counter sees the count at 0 here. */
        if (__builtin_expect(__atomic_load_n(&h->n_nodes, __ATOMIC_ACQUIRE) == 0, 0))
                return -ESTALE;
        *ret_latch = &shared_table_entry_(mem, index)->seq;
        return 0;
}

static inline int shared_table_read_pair(const void *mem, size_t size, size_t from, size_t to, ConvRecord *ret) {
        return shared_table_read_pair_latched(mem, size, from, to, ret, NULL, NULL);
}

/* Whether a copy taken at counter seq of the latch is still the record: the writer moves the
 * counter on every change, and rewrites nothing unchanged, so an equal counter is an equal record.
 * Lets a reader keep a copy of a pair it converts often and pay one load per conversion. Retiring
 * a table moves every counter, so that a kept copy of a retired table is not current either. */
static inline bool shared_table_copy_current(const uint64_t *latch, uint64_t seq) {
        return __atomic_load_n(latch, __ATOMIC_ACQUIRE) == seq;
}

static inline int shared_table_convert(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                       int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        ConvRecord rec = {};            /* written by the read; {} quiets -Wmaybe-uninitialized */
        int r;

        r = shared_table_read_pair(mem, size, from, to, &rec);
        if (__builtin_expect(r < 0, 0))
                return r;
        if (__builtin_expect((rec.flags & CONV_RECORD_HINT_NOW) && hint_r_ns != INT64_MIN, 0))
                return shared_table_convert_general(mem, size, from, to, value, hint_r_ns, ret_value,
                                                    ret_uncertainty_ns);
        return conv_record_convert(&rec, value, ret_value, ret_uncertainty_ns);
}

static inline int shared_table_from_hub(const void *mem, size_t size, size_t to, int64_t r_ns,
                                        int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        const SharedTableHeader *h = mem;
        ConvRecord rec = {};            /* written by the read; {} quiets -Wmaybe-uninitialized */
        int r;

        r = shared_table_read_pair(mem, size, __atomic_load_n(&h->hub, __ATOMIC_RELAXED), to, &rec);
        if (__builtin_expect(r < 0, 0))
                return r;
        return conv_record_convert(&rec, r_ns, ret_value, ret_uncertainty_ns);
}
