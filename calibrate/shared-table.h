/* SPDX-License-Identifier: MIT */
#pragma once

/* The layout of the daemon's shared table and the functions that write and read it. Pure: no
 * I/O, no allocation; the daemon owns the memfd (daemon/table-publish.c), the client maps it
 * read-only. The conversion on it is the graph's: the fast path below is graph_convert()'s on
 * the few fields it needs, the rest is graph_node_convert() on nodes copied under their
 * seqlocks. One implementation of the math.
 *
 * The table is a header and one entry per graph node, node i in entry i. Within one table an
 * index always names the same domain: the writer only appends (the generation changes when it
 * does); a graph it cannot describe that way needs a new table. Each entry is guarded by a
 * sequence counter over two copies of the node (a latch, Linux's seqcount_latch): the writer
 * makes the counter odd and writes copy 0, makes it even and writes copy 1. A reader copies
 * copy (counter & 1), the one the writer is not touching, and keeps it when the counter is
 * unchanged around the copy; so a reader never waits for a writer, not even one descheduled
 * mid-write, and retries only when the writer got through a whole half during its copy. The
 * readers are other processes: every shared word is read and written with atomics (relaxed for
 * the data, fences and acquire/release on the counter), so the compiler neither tears nor
 * caches them.
 *
 * A reader validates the table once after mapping (shared_table_validate()) and then uses
 * indices from shared_table_find(). It trusts no word of shared memory after that: the writer
 * may change any of them (the counts and the hub included), so every index is bounded by the
 * size of the reader's own mapping (shared_table_capacity()), which every reader call takes, and
 * every copy is checked before use. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "model.h"

#define SHARED_TABLE_MAGIC UINT64_C(0x31454c4241544354)         /* "TCTABLE1" little-endian */
#define SHARED_TABLE_MAGIC_RETIRED UINT64_C(0x44455249544552ff) /* the writer is gone */
/* Bump on any change of the structs below, GraphNode and what it holds included. */
#define SHARED_TABLE_LAYOUT_VERSION 2
#define SHARED_TABLE_CAPACITY_MAX 4096
/* Tries of a copy before -EAGAIN: each failed try means the writer finished half an update
 * during the copy, which takes a few ns; running out means the reader was descheduled again
 * and again. The caller then asks the daemon. */
#define SHARED_TABLE_READ_TRIES 64

#define SHARED_TABLE_FAST_ENABLED (UINT32_C(1) << 0)    /* GraphNode.fast */
#define SHARED_TABLE_FAST_HUB (UINT32_C(1) << 1)        /* GraphNode.hub */

typedef struct SharedTableHeader {
        /* Constant once laid out: */
        uint64_t magic;                 /* SHARED_TABLE_MAGIC; _RETIRED once the writer left */
        uint32_t layout_version;
        uint32_t header_size;           /* sizeof(SharedTableHeader) */
        uint32_t entry_size;            /* sizeof(SharedTableEntry) */
        uint32_t node_size;             /* sizeof(GraphNode) */
        uint64_t size;                  /* bytes laid out: >= shared_table_size(capacity) */
        uint32_t capacity;              /* entries */
        uint32_t hub;                   /* index of the hub, valid once n_nodes > 0 */
        /* Changed by the writer (atomics): */
        uint64_t generation;            /* changes when the set of nodes changes; never 0 */
        uint32_t n_nodes;               /* entries in use; 0 in a retired table */
        uint32_t reserved;
        int64_t heartbeat_ns;           /* CLOCK_MONOTONIC of the last publish; 0: none yet */
        int64_t heartbeat_max_ns;       /* the longest gap the writer means to leave between them */
} __attribute__((aligned(64))) SharedTableHeader;

/* What the two-hop fast path needs of a node, first in its entry so that it shares the
 * counter's cache lines. Derived from node: a writer writes both. */
typedef struct SharedTableFast {
        PreparedModel current;
        int64_t current_r_begin_ns;
        int64_t current_x_begin_ns;
        uint32_t model_id;
        uint32_t flags;                 /* SHARED_TABLE_FAST_* */
} SharedTableFast;

typedef struct SharedTableEntry {
        uint64_t seq;                   /* the latch: readers use copy seq & 1 */
        SharedTableFast fast[2];
        GraphNode node[2];              /* history always NULL */
} __attribute__((aligned(64))) SharedTableEntry;

/* Bytes a table of n_nodes needs (page-rounded is the caller's business). */
size_t shared_table_size(size_t n_nodes);

/* ---- writer (the daemon) ---- */

/* Lays out an empty table of capacity n_nodes in mem (64-byte aligned, size bytes). -EINVAL for
 * a bad argument or too small a size. */
int shared_table_init(void *mem, size_t size, size_t n_nodes);

/* Publishes the graph's nodes, each under its seqlock (unchanged ones are not rewritten, so
 * readers rarely retry); bumps the generation when nodes were added. -ENOSPC beyond the
 * capacity; -ESTALE when the graph is not this table's plus new nodes (fewer nodes, a node
 * renamed or its unit or the hub changed): it needs a new table. -EBADMSG: mem is no table. */
int shared_table_publish(void *mem, size_t size, const ClockGraph *g);

/* Records a publish at CLOCK_MONOTONIC now_ns; the next comes within max_gap_ns. */
void shared_table_heartbeat(void *mem, int64_t now_ns, int64_t max_gap_ns);

/* The writer is leaving: readers get -ESTALE from now on (validate, convert, read_node). */
void shared_table_retire(void *mem);

/* ---- reader (libtimeconv) ---- */

/* 0 for a table it can read; -EINVAL NULL or misaligned mem; -EBADMSG not a table, bad sizes
 * or counts; -EPROTO another layout version (or a build with other struct sizes); -ESTALE a
 * retired table. */
int shared_table_validate(const void *mem, size_t size);
/* The reader calls below take the size of the reader's mapping that validate() accepted. */
static inline size_t shared_table_capacity(size_t size);
uint64_t shared_table_generation(const void *mem);
/* Nodes in use, at most the mapping's capacity. */
size_t shared_table_count(const void *mem, size_t size);
/* Whether the writer published within its promised gap of now_ns (CLOCK_MONOTONIC) and has not
 * retired the table: a false means the daemon is dead or stuck, ask the bus. */
bool shared_table_alive(const void *mem, int64_t now_ns);
/* -ENOENT: no node of that name (-EAGAIN, -EBADMSG as read_node). */
int shared_table_find(const void *mem, size_t size, const char *name, size_t *ret_index);
/* A consistent copy of node index (its history pointer NULL); -ENOENT index out of range,
 * -EAGAIN if a writer held it busy through every retry, -EBADMSG a copy that makes no sense
 * (bad name, unit, model_id), -ESTALE a retired table. */
int shared_table_read_node(const void *mem, size_t size, size_t index, GraphNode *ret);

/* graph_node_convert() on two consistent copies, with the errors of read_node(); -ESTALE also
 * when the table cannot answer (a value before a node's open segment): ask the daemon. */
static inline int shared_table_convert(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                       int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns);
int shared_table_convert_general(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                 int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* The same from the hub's time r_ns to node to: "now" of a domain is this on a reading of the
 * hub's clock. It reads one entry, not two. */
static inline int shared_table_from_hub(const void *mem, size_t size, size_t to, int64_t r_ns,
                                        int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* ---- inline: the fast path ---- */

static inline size_t shared_table_capacity(size_t size) {
        size_t n;

        if (size < sizeof(SharedTableHeader))
                return 0;
        n = (size - sizeof(SharedTableHeader)) / sizeof(SharedTableEntry);
        return n < SHARED_TABLE_CAPACITY_MAX ? n : SHARED_TABLE_CAPACITY_MAX;
}

/* Whether entry index lies wholly within a mapping of size bytes: shared_table_capacity() without
 * its division, for the fast path. index is below a 32-bit count, so in 64 bits nothing overflows. */
static inline bool shared_table_mapped_(size_t size, size_t index) {
        return sizeof(SharedTableHeader) + ((uint64_t) index + 1) * sizeof(SharedTableEntry) <= (uint64_t) size;
}

/* The writer's count, bounded by what the reader mapped. */
static inline size_t shared_table_nodes_(const void *mem, size_t size) {
        size_t n = __atomic_load_n(&((const SharedTableHeader *) mem)->n_nodes, __ATOMIC_ACQUIRE);
        size_t capacity = shared_table_capacity(size);

        return n < capacity ? n : capacity;
}

static inline const SharedTableEntry *shared_table_entry_(const void *mem, size_t index) {
        return (const SharedTableEntry *) ((const char *) mem + sizeof(SharedTableHeader)) + index;
}

static inline void shared_table_relax_(void) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
}

/* A consistent copy of the entry's fast part: word by word, relaxed, between an acquire load of
 * the counter and an acquire fence before its second load (the writer's release fences after
 * each step of the counter pair with that fence). */
static inline int shared_table_read_fast_(const SharedTableEntry *e, SharedTableFast *ret) {
        for (unsigned t = 0; t < SHARED_TABLE_READ_TRIES; t++) {
                uint64_t words[sizeof(SharedTableFast) / sizeof(uint64_t)];
                uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
                const uint64_t *src = (const uint64_t *) &e->fast[seq & 1];

                for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
                        words[k] = __atomic_load_n(&src[k], __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__builtin_expect(__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq, 1)) {
                        __builtin_memcpy(ret, words, sizeof(*ret));
                        return 0;
                }
                shared_table_relax_();
        }
        return -EAGAIN;
}

/* A relaxed load straight into a floating-point register (an aligned 8-byte load is single-copy
 * atomic on every 64-bit target; __atomic_load_n takes integers only and would go through a
 * general register, which the fast path runs short of). */
static inline double shared_table_load_double_(const double *p) {
        return *(const volatile double *) p;
}

/* One hop of the fast path, with only what it reads: the whole fast part is twelve words, a
 * hop needs eight or nine, and named loads stay in registers where a copied array goes
 * through the stack. */
typedef struct SharedTableHop_ {
        PreparedModel current;          /* the fields the hop's direction uses, the rest unset */
        int64_t begin_ns;               /* current_x_begin_ns (inverse) or current_r_begin_ns */
        uint32_t model_id, flags;
} SharedTableHop_;

/* Inlined by force: called twice, GCC would keep it out of line and pass the hop on the stack. */
static inline __attribute__((always_inline)) int shared_table_read_hop_(const SharedTableEntry *e, bool inverse,
                                                                        SharedTableHop_ *ret) {
        for (unsigned t = 0; t < SHARED_TABLE_READ_TRIES; t++) {
                uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
                const SharedTableFast *f = &e->fast[seq & 1];
                SharedTableHop_ hop;

                hop.model_id = __atomic_load_n(&f->model_id, __ATOMIC_RELAXED);
                hop.flags = __atomic_load_n(&f->flags, __ATOMIC_RELAXED);
                hop.current.m.r_c_ns = __atomic_load_n(&f->current.m.r_c_ns, __ATOMIC_RELAXED);
                hop.current.m.x_c_ns = __atomic_load_n(&f->current.m.x_c_ns, __ATOMIC_RELAXED);
                hop.current.m.half_ns = shared_table_load_double_(&f->current.m.half_ns);
                hop.current.m.rate_half = shared_table_load_double_(&f->current.m.rate_half);
                if (inverse) {
                        hop.begin_ns = __atomic_load_n(&f->current_x_begin_ns, __ATOMIC_RELAXED);
                        hop.current.inverse_rate = shared_table_load_double_(&f->current.inverse_rate);
                        hop.current.rate_half_inverse = shared_table_load_double_(&f->current.rate_half_inverse);
                        hop.current.inverse_gain = shared_table_load_double_(&f->current.inverse_gain);
                } else {
                        hop.begin_ns = __atomic_load_n(&f->current_r_begin_ns, __ATOMIC_RELAXED);
                        hop.current.m.rate = shared_table_load_double_(&f->current.m.rate);
                        hop.current.forward_gain = shared_table_load_double_(&f->current.forward_gain);
                }
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__builtin_expect(__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq, 1)) {
                        *ret = hop;
                        return 0;
                }
                shared_table_relax_();
        }
        return -EAGAIN;
}

static inline int shared_table_convert(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                       int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        const SharedTableHeader *h = mem;
        SharedTableHop_ src, dst;
        int64_t r_ns, r_unc_ns;
        size_t n = __atomic_load_n(&h->n_nodes, __ATOMIC_ACQUIRE), last = from > to ? from : to;
        int r;

        /* n is the writer's: the mapping bounds the indices. */
        if (__builtin_expect(last >= n || !shared_table_mapped_(size, last), 0))
                goto general;
        r = shared_table_read_hop_(shared_table_entry_(mem, from), true, &src);
        if (r < 0)
                return r;
        r = shared_table_read_hop_(shared_table_entry_(mem, to), false, &dst);
        if (r < 0)
                return r;
        /* As graph_convert(): two plain-ns nodes in their open segments, different models. */
        if (__builtin_expect(!(src.flags & dst.flags & SHARED_TABLE_FAST_ENABLED) || src.model_id == dst.model_id ||
                             value < src.begin_ns, 0))
                goto general;

        if (!(src.flags & SHARED_TABLE_FAST_HUB)) {
                r = prepared_inverse(&src.current, value, 0, &r_ns, &r_unc_ns);
                if (r < 0)
                        return r;
        } else {
                r_ns = value;
                r_unc_ns = 0;
        }
        if (__builtin_expect(r_ns < dst.begin_ns, 0))
                goto general;
        if (!(dst.flags & SHARED_TABLE_FAST_HUB))
                return prepared_forward(&dst.current, r_ns, r_unc_ns, ret_value, ret_uncertainty_ns);
        *ret_value = r_ns;
        *ret_uncertainty_ns = r_unc_ns;
        return 0;

general:
        return shared_table_convert_general(mem, size, from, to, value, hint_r_ns, ret_value, ret_uncertainty_ns);
}

static inline int shared_table_from_hub(const void *mem, size_t size, size_t to, int64_t r_ns,
                                        int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        const SharedTableHeader *h = mem;
        size_t n = __atomic_load_n(&h->n_nodes, __ATOMIC_ACQUIRE);
        size_t hub = __atomic_load_n(&h->hub, __ATOMIC_RELAXED);
        SharedTableHop_ dst;
        int r;

        /* The hub only names a node here (the general path reads it, bounded): to is read. */
        if (__builtin_expect(to >= n || hub >= n || !shared_table_mapped_(size, to), 0))
                goto general;
        r = shared_table_read_hop_(shared_table_entry_(mem, to), false, &dst);
        if (r < 0)
                return r;
        if (__builtin_expect(!(dst.flags & SHARED_TABLE_FAST_ENABLED) || dst.model_id == hub || r_ns < dst.begin_ns, 0))
                goto general;
        return prepared_forward(&dst.current, r_ns, 0, ret_value, ret_uncertainty_ns);

general:
        return shared_table_convert_general(mem, size, hub, to, r_ns, r_ns, ret_value, ret_uncertainty_ns);
}
