/* SPDX-License-Identifier: MIT */

/* The shared table: layout, writer, reader. See shared-table.h for the protocol. */

#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "shared-table.h"

/* The copies go word by word: the structs must be whole words at word offsets. */
_Static_assert(sizeof(ConvRecord) % sizeof(uint64_t) == 0, "ConvRecord is not whole words");
_Static_assert(offsetof(SharedTableEntry, copy) % sizeof(uint64_t) == 0, "copy is not word aligned");
_Static_assert(sizeof(SharedTableNode) % sizeof(uint64_t) == 0, "SharedTableNode is not whole words");
_Static_assert(sizeof(SharedTableHeader) % alignof(SharedTableEntry) == 0, "nodes are misaligned");
_Static_assert((SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode)) % alignof(SharedTableEntry) == 0,
               "entries are misaligned");

static SharedTableHeader *header(void *mem) {
        return mem;
}

static const SharedTableHeader *header_const(const void *mem) {
        return mem;
}

static SharedTableNode *node_at(void *mem, size_t index) {
        return (SharedTableNode *) ((char *) mem + sizeof(SharedTableHeader)) + index;
}

static const SharedTableNode *node_at_const(const void *mem, size_t index) {
        return (const SharedTableNode *) ((const char *) mem + sizeof(SharedTableHeader)) + index;
}

static SharedTableEntry *entry(void *mem, size_t from, size_t to) {
        return (SharedTableEntry *) shared_table_entry_(mem, from * SHARED_TABLE_CAPACITY_MAX + to);
}

size_t shared_table_size(size_t n_nodes) {
        if (n_nodes == 0 || n_nodes > SHARED_TABLE_CAPACITY_MAX)
                return n_nodes == 0 ? sizeof(SharedTableHeader) + SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode) :
                                      SIZE_MAX;
        /* up to pair (n - 1, n - 1) */
        return sizeof(SharedTableHeader) + SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode) +
               ((n_nodes - 1) * SHARED_TABLE_CAPACITY_MAX + n_nodes) * sizeof(SharedTableEntry);
}

size_t shared_table_capacity(size_t size) {
        size_t n = SHARED_TABLE_CAPACITY_MAX;

        while (n > 0 && shared_table_size(n) > size)
                n--;
        return n;
}

/* ---- writer ---- */

int shared_table_init(void *mem, size_t size, size_t n_nodes) {
        SharedTableHeader *h = mem;

        if (!mem || (uintptr_t) mem % alignof(SharedTableHeader) != 0 || n_nodes == 0 ||
            n_nodes > SHARED_TABLE_CAPACITY_MAX || size < shared_table_size(n_nodes))
                return -EINVAL;

        memset(mem, 0, shared_table_size(n_nodes));
        h->layout_version = SHARED_TABLE_LAYOUT_VERSION;
        h->header_size = sizeof(SharedTableHeader);
        h->entry_size = sizeof(SharedTableEntry);
        h->node_size = sizeof(SharedTableNode);
        h->record_version = CONV_RECORD_WIRE_VERSION;
        h->size = size;
        h->capacity = (uint32_t) n_nodes;
        h->generation = 1;
        /* Last: a reader that sees the magic sees the rest. */
        __atomic_store_n(&h->magic, SHARED_TABLE_MAGIC, __ATOMIC_RELEASE);
        return 0;
}

static int writer_check(void *mem, size_t size) {
        const SharedTableHeader *h = mem;

        if (!mem || (uintptr_t) mem % alignof(SharedTableHeader) != 0 || size < sizeof(SharedTableHeader))
                return -EINVAL;
        if (h->magic != SHARED_TABLE_MAGIC || h->layout_version != SHARED_TABLE_LAYOUT_VERSION ||
            h->capacity == 0 || h->capacity > SHARED_TABLE_CAPACITY_MAX || size < shared_table_size(h->capacity))
                return -EBADMSG;
        return 0;
}

/* One half of an update: copy i of the entry. Only the writer stores here. */
static void copy_store(SharedTableEntry *e, unsigned i, const ConvRecord *rec) {
        uint64_t *dst = (uint64_t *) &e->copy[i], words[sizeof(*rec) / sizeof(uint64_t)];

        memcpy(words, rec, sizeof(words));
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
                __atomic_store_n(&dst[k], words[k], __ATOMIC_RELAXED);
}

/* The latch: odd, write copy 0 (readers are on copy 1); even, write copy 1 (readers are on copy
 * 0). Each release fence pairs with the reader's acquire fence: a reader that sees any new word
 * of a copy sees the counter that sent readers away from it. The writer is the only one that
 * stores here, so it may read its own entries plainly. */
static void entry_write(SharedTableEntry *e, const ConvRecord *rec) {
        uint64_t seq = e->seq;

        if (memcmp(&e->copy[0], rec, sizeof(*rec)) == 0 && memcmp(&e->copy[1], rec, sizeof(*rec)) == 0)
                return;
        __atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        copy_store(e, 0, rec);
        __atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        copy_store(e, 1, rec);
}

/* What a node is for the table's life: its name, whether it is the hub, its unit. */
static void node_describe(const ClockGraph *g, size_t i, SharedTableNode *ret) {
        const GraphNode *n = &g->nodes[i];

        memset(ret, 0, sizeof(*ret));
        strncpy(ret->name, n->name, sizeof(ret->name) - 1);
        ret->flags = i == g->hub ? SHARED_TABLE_NODE_HUB : 0;
        ret->wrap_bits = n->unit.wrap_bits;
        ret->period_q32 = (int64_t) (n->unit.period_ns * 4294967296.0 + 0.5);
        ret->unit_flags = (n->unit.truncates ? SHARED_TABLE_UNIT_TRUNCATES : 0) |
                          (n->unit.encoding == UNIT_ENCODING_X11_US ? SHARED_TABLE_UNIT_X11_US : 0) |
                          (n->unit.events ? SHARED_TABLE_UNIT_EVENTS : 0);
}

int shared_table_publish(void *mem, size_t size, const ClockGraph *g) {
        SharedTableHeader *h = mem;
        size_t n_old;
        int r;

        r = writer_check(mem, size);
        if (r < 0)
                return r;
        if (!g || g->n_nodes == 0 || g->hub >= g->n_nodes)
                return -EINVAL;
        if (g->n_nodes > h->capacity)
                return -ENOSPC;

        /* Check everything before writing anything: an index must keep naming its domain. */
        n_old = h->n_nodes;
        if (g->n_nodes < n_old || (n_old > 0 && h->hub != g->hub))
                return SHARED_TABLE_REPLACE;
        for (size_t i = 0; i < n_old; i++) {
                SharedTableNode node;

                node_describe(g, i, &node);
                if (memcmp(node_at(mem, i), &node, sizeof(node)) != 0)
                        return SHARED_TABLE_REPLACE;
        }

        /* New nodes: written once, before the count that shows them. */
        for (size_t i = n_old; i < g->n_nodes; i++) {
                SharedTableNode node;

                node_describe(g, i, &node);
                memcpy(node_at(mem, i), &node, sizeof(node));
        }
        for (size_t i = 0; i < g->n_nodes; i++)
                for (size_t j = 0; j < g->n_nodes; j++) {
                        ConvRecord rec;

                        /* memcpy: the padding too, so an unchanged record compares equal. */
                        memcpy(&rec, &g->pairs[i][j], sizeof(rec));
                        entry_write(entry(mem, i, j), &rec);
                }

        if (g->n_nodes != n_old) {
                __atomic_store_n(&h->hub, (uint32_t) g->hub, __ATOMIC_RELAXED);
                /* Release: a reader that sees the count sees the nodes and entries. */
                __atomic_store_n(&h->n_nodes, (uint32_t) g->n_nodes, __ATOMIC_RELEASE);
                __atomic_store_n(&h->generation, h->generation + 1, __ATOMIC_RELEASE);
        }
        return 0;
}

void shared_table_heartbeat(void *mem, int64_t now_ns, int64_t max_gap_ns) {
        SharedTableHeader *h = header(mem);

        __atomic_store_n(&h->heartbeat_max_ns, max_gap_ns, __ATOMIC_RELAXED);
        __atomic_store_n(&h->heartbeat_ns, now_ns, __ATOMIC_RELEASE);
}

void shared_table_retire(void *mem) {
        SharedTableHeader *h = header(mem);

        uint32_t n = h->n_nodes;

        /* n_nodes 0 sends every read to its error path, which sees the magic. */
        __atomic_store_n(&h->magic, SHARED_TABLE_MAGIC_RETIRED, __ATOMIC_RELAXED);
        __atomic_store_n(&h->n_nodes, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&h->heartbeat_ns, 0, __ATOMIC_RELEASE);
        /* Every counter moved by 2 (the same copy, unchanged): no kept copy stays current. */
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                        SharedTableEntry *e = entry(mem, i, j);

                        __atomic_store_n(&e->seq, e->seq + 2, __ATOMIC_RELEASE);
                }
}

/* ---- reader ---- */

int shared_table_validate(const void *mem, size_t size) {
        const SharedTableHeader *h = mem;
        uint64_t magic;
        uint32_t capacity, n, hub;

        if (!mem || (uintptr_t) mem % alignof(SharedTableHeader) != 0)
                return -EINVAL;
        if (size < sizeof(uint64_t) + sizeof(uint32_t))
                return -EBADMSG;
        magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
        if (magic == SHARED_TABLE_MAGIC_RETIRED)
                return -ESTALE;
        if (magic != SHARED_TABLE_MAGIC)
                return -EBADMSG;
        /* The version sits right after the magic in every layout: check it before the sizes. */
        if (h->layout_version != SHARED_TABLE_LAYOUT_VERSION)
                return -EPROTO;
        if (size < sizeof(SharedTableHeader))
                return -EBADMSG;
        if (h->header_size != sizeof(SharedTableHeader) || h->entry_size != sizeof(SharedTableEntry) ||
            h->node_size != sizeof(SharedTableNode) || h->record_version != CONV_RECORD_WIRE_VERSION)
                return -EPROTO;
        capacity = h->capacity;
        if (capacity == 0 || capacity > SHARED_TABLE_CAPACITY_MAX || h->size > size ||
            shared_table_size(capacity) > h->size)
                return -EBADMSG;
        n = __atomic_load_n(&h->n_nodes, __ATOMIC_ACQUIRE);
        hub = __atomic_load_n(&h->hub, __ATOMIC_RELAXED);
        if (n > capacity || (n > 0 && hub >= n))
                return -EBADMSG;
        return 0;
}

uint64_t shared_table_generation(const void *mem) {
        return __atomic_load_n(&header_const(mem)->generation, __ATOMIC_ACQUIRE);
}

size_t shared_table_count(const void *mem, size_t size) {
        size_t n = __atomic_load_n(&header_const(mem)->n_nodes, __ATOMIC_ACQUIRE), capacity = shared_table_capacity(size);

        return n < capacity ? n : capacity;
}

bool shared_table_alive(const void *mem, int64_t now_ns) {
        const SharedTableHeader *h = mem;
        int64_t beat_ns = __atomic_load_n(&h->heartbeat_ns, __ATOMIC_ACQUIRE);
        int64_t max_gap_ns = __atomic_load_n(&h->heartbeat_max_ns, __ATOMIC_RELAXED);
        int64_t age_ns;

        if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) != SHARED_TABLE_MAGIC || beat_ns <= 0)
                return false;
        if (__builtin_sub_overflow(now_ns, beat_ns, &age_ns))
                return false;
        /* A beat from the future is another boot's (or a corrupt) clock: not alive either. */
        return age_ns >= 0 && age_ns <= max_gap_ns;
}

static bool retired(const void *mem) {
        return __atomic_load_n(&header_const(mem)->magic, __ATOMIC_RELAXED) == SHARED_TABLE_MAGIC_RETIRED;
}

int shared_table_read_node(const void *mem, size_t size, size_t index, SharedTableNode *ret) {
        uint64_t words[sizeof(SharedTableNode) / sizeof(uint64_t)];
        const uint64_t *src;
        SharedTableNode copy;

        if (!mem || !ret)
                return -EINVAL;
        if (retired(mem))
                return -ESTALE;
        if (index >= shared_table_count(mem, size))
                return -ENOENT;
        /* Written before the count we read: a copy is consistent unless the writer misbehaves. */
        src = (const uint64_t *) node_at_const(mem, index);
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
                words[k] = __atomic_load_n(&src[k], __ATOMIC_RELAXED);
        memcpy(&copy, words, sizeof(copy));
        if (copy.name[0] == '\0' || !memchr(copy.name, '\0', sizeof(copy.name)))
                return -EBADMSG;
        *ret = copy;
        return 0;
}

int shared_table_find(const void *mem, size_t size, const char *name, size_t *ret_index) {
        size_t n;

        if (!mem || !name || !ret_index)
                return -EINVAL;
        n = shared_table_count(mem, size);
        for (size_t i = 0; i < n; i++) {
                SharedTableNode node;
                int r = shared_table_read_node(mem, size, i, &node);

                if (r == -EBADMSG)
                        continue;
                if (r < 0)
                        return r;
                if (strcmp(node.name, name) == 0) {
                        *ret_index = i;
                        return 0;
                }
        }
        return retired(mem) ? -ESTALE : -ENOENT;
}

int shared_table_convert_general(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                 int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        const SharedTableHeader *h = mem;
        ConvRecord rec, to_from;
        int64_t hint, bound;
        int r;

        if (!mem || !ret_value || !ret_uncertainty_ns)
                return -EINVAL;
        r = shared_table_read_pair(mem, size, from, to, &rec);
        if (r < 0)
                return r;
        hint = rec.in_hint;
        /* A short wrap unwraps near the caller's now: from's count then, by the hub's record. */
        if ((rec.flags & CONV_RECORD_HINT_NOW) && hint_r_ns != INT64_MIN) {
                r = shared_table_read_pair(mem, size, __atomic_load_n(&h->hub, __ATOMIC_RELAXED), from, &to_from);
                if (r < 0)
                        return r;
                if (to_from.status == 0 && conv_record_map(&to_from, hint_r_ns, &hint, &bound) != 0)
                        hint = rec.in_hint;
        }
        return conv_record_convert_hint(&rec, value, hint, ret_value, ret_uncertainty_ns);
}
