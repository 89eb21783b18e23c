/* SPDX-License-Identifier: MIT */

/* The shared table: layout, writer, reader. See shared-table.h for the protocol. */

#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "shared-table.h"

/* The copies go word by word: the structs must be whole words at word offsets. */
_Static_assert(sizeof(SharedTableFast) % sizeof(uint64_t) == 0, "SharedTableFast is not whole words");
_Static_assert(offsetof(SharedTableEntry, fast) % sizeof(uint64_t) == 0, "fast is not word aligned");
_Static_assert(sizeof(GraphNode) % sizeof(uint32_t) == 0, "GraphNode is not whole words");
_Static_assert(sizeof(GraphNode) % alignof(GraphNode) == 0, "GraphNode copies are misaligned");
_Static_assert(offsetof(SharedTableEntry, node) % sizeof(uint32_t) == 0, "node is not word aligned");
_Static_assert(sizeof(SharedTableHeader) % alignof(SharedTableEntry) == 0, "entries are misaligned");

static SharedTableHeader *header(void *mem) {
        return mem;
}

static const SharedTableHeader *header_const(const void *mem) {
        return mem;
}

static SharedTableEntry *entry(void *mem, size_t index) {
        return (SharedTableEntry *) ((char *) mem + sizeof(SharedTableHeader)) + index;
}

size_t shared_table_size(size_t n_nodes) {
        if (n_nodes > SHARED_TABLE_CAPACITY_MAX)
                return SIZE_MAX;
        return sizeof(SharedTableHeader) + n_nodes * sizeof(SharedTableEntry);
}

/* ---- writer ---- */

int shared_table_init(void *mem, size_t size, size_t n_nodes) {
        SharedTableHeader *h = mem;

        if (!mem || (uintptr_t) mem % alignof(SharedTableEntry) != 0 || n_nodes == 0 ||
            n_nodes > SHARED_TABLE_CAPACITY_MAX || size < shared_table_size(n_nodes))
                return -EINVAL;

        memset(mem, 0, shared_table_size(n_nodes));
        h->layout_version = SHARED_TABLE_LAYOUT_VERSION;
        h->header_size = sizeof(SharedTableHeader);
        h->entry_size = sizeof(SharedTableEntry);
        h->node_size = sizeof(GraphNode);
        h->size = size;
        h->capacity = (uint32_t) n_nodes;
        h->generation = 1;
        /* Last: a reader that sees the magic sees the rest. */
        __atomic_store_n(&h->magic, SHARED_TABLE_MAGIC, __ATOMIC_RELEASE);
        return 0;
}

static int writer_check(void *mem, size_t size) {
        const SharedTableHeader *h = mem;

        if (!mem || (uintptr_t) mem % alignof(SharedTableEntry) != 0 || size < sizeof(SharedTableHeader))
                return -EINVAL;
        if (h->magic != SHARED_TABLE_MAGIC || h->layout_version != SHARED_TABLE_LAYOUT_VERSION ||
            h->capacity == 0 || h->capacity > SHARED_TABLE_CAPACITY_MAX || size < shared_table_size(h->capacity))
                return -EBADMSG;
        return 0;
}

static void fast_from_node(const GraphNode *node, SharedTableFast *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->current = node->current;
        ret->current_r_begin_ns = node->current_r_begin_ns;
        ret->current_x_begin_ns = node->current_x_begin_ns;
        ret->model_id = node->model_id;
        ret->flags = (node->fast ? SHARED_TABLE_FAST_ENABLED : 0) | (node->hub ? SHARED_TABLE_FAST_HUB : 0);
}

/* One half of an update: copy i of the entry. Only the writer stores here. */
static void copy_store(SharedTableEntry *e, unsigned i, const SharedTableFast *fast, const GraphNode *node) {
        uint64_t *fast_dst = (uint64_t *) &e->fast[i], words64[sizeof(*fast) / sizeof(uint64_t)];
        uint32_t *node_dst = (uint32_t *) &e->node[i], words32[sizeof(*node) / sizeof(uint32_t)];

        memcpy(words64, fast, sizeof(words64));
        memcpy(words32, node, sizeof(words32));
        for (size_t k = 0; k < sizeof(words64) / sizeof(words64[0]); k++)
                __atomic_store_n(&fast_dst[k], words64[k], __ATOMIC_RELAXED);
        for (size_t k = 0; k < sizeof(words32) / sizeof(words32[0]); k++)
                __atomic_store_n(&node_dst[k], words32[k], __ATOMIC_RELAXED);
}

/* The latch: odd, write copy 0 (readers are on copy 1); even, write copy 1 (readers are on copy
 * 0). Each release fence pairs with the reader's acquire fence: a reader that sees any new word
 * of a copy sees the counter that sent readers away from it. The writer is the only one that
 * stores here, so it may read its own entries plainly. */
static void entry_write(SharedTableEntry *e, const SharedTableFast *fast, const GraphNode *node) {
        uint64_t seq = e->seq;

        if (memcmp(&e->fast[0], fast, sizeof(*fast)) == 0 && memcmp(&e->node[0], node, sizeof(*node)) == 0 &&
            memcmp(&e->fast[1], fast, sizeof(*fast)) == 0 && memcmp(&e->node[1], node, sizeof(*node)) == 0)
                return;

        /* The counter is even between updates. Release: readers sent to copy 1 see the last
         * update's writes to it whole. */
        __atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        copy_store(e, 0, fast, node);
        __atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        copy_store(e, 1, fast, node);
}

static bool same_identity(const GraphNode *a, const GraphNode *b) {
        return strncmp(a->name, b->name, GRAPH_NAME_MAX) == 0 && a->unit.period_ns == b->unit.period_ns &&
               a->unit.wrap_bits == b->unit.wrap_bits && a->unit.truncates == b->unit.truncates &&
               a->unit.encoding == b->unit.encoding;
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
                return -ESTALE;
        for (size_t i = 0; i < n_old; i++)
                if (!same_identity(&entry(mem, i)->node[0], &g->nodes[i]))
                        return -ESTALE;

        for (size_t i = 0; i < g->n_nodes; i++) {
                SharedTableFast fast;
                GraphNode node;

                /* memcpy, not assignment: the padding too, so an unchanged node compares equal. */
                memcpy(&node, &g->nodes[i], sizeof(node));
                node.history = NULL;
                fast_from_node(&node, &fast);
                entry_write(entry(mem, i), &fast, &node);
        }

        if (g->n_nodes != n_old) {
                __atomic_store_n(&h->hub, (uint32_t) g->hub, __ATOMIC_RELAXED);
                /* Release: a reader that sees the count sees the entries. */
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

        /* n_nodes 0 sends every fast-path call to the general path, which sees the magic. */
        __atomic_store_n(&h->magic, SHARED_TABLE_MAGIC_RETIRED, __ATOMIC_RELAXED);
        __atomic_store_n(&h->n_nodes, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&h->heartbeat_ns, 0, __ATOMIC_RELEASE);
}

/* ---- reader ---- */

int shared_table_validate(const void *mem, size_t size) {
        const SharedTableHeader *h = mem;
        uint64_t magic;
        uint32_t capacity, n, hub;

        if (!mem || (uintptr_t) mem % alignof(SharedTableEntry) != 0)
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
            h->node_size != sizeof(GraphNode))
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
        return shared_table_nodes_(mem, size);
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

static bool copy_valid(const GraphNode *node, size_t n_nodes) {
        unsigned char flags[6];

        /* A bool that is neither 0 nor 1 must not be loaded as a bool. */
        memcpy(&flags[0], &node->hub, 1);
        memcpy(&flags[1], &node->available, 1);
        memcpy(&flags[2], &node->calibrated, 1);
        memcpy(&flags[3], &node->plain_ns, 1);
        memcpy(&flags[4], &node->fast, 1);
        memcpy(&flags[5], &node->target_only, 1);
        for (size_t i = 0; i < sizeof(flags); i++)
                if (flags[i] > 1)
                        return false;
        return node->name[0] != '\0' && memchr(node->name, '\0', GRAPH_NAME_MAX) &&
               unit_validate(&node->unit) == 0 && node->model_id < n_nodes;
}

int shared_table_read_node(const void *mem, size_t size, size_t index, GraphNode *ret) {
        const SharedTableHeader *h = mem;
        const SharedTableEntry *e;
        size_t n;

        if (!mem || !ret)
                return -EINVAL;
        n = shared_table_nodes_(mem, size);
        if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) == SHARED_TABLE_MAGIC_RETIRED)
                return -ESTALE;
        if (index >= n)
                return -ENOENT;
        e = shared_table_entry_(mem, index);

        for (unsigned t = 0; t < SHARED_TABLE_READ_TRIES; t++) {
                uint32_t words[sizeof(GraphNode) / sizeof(uint32_t)];
                uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
                const uint32_t *src = (const uint32_t *) &e->node[seq & 1];
                GraphNode copy;

                for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
                        words[k] = __atomic_load_n(&src[k], __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq) {
                        shared_table_relax_();
                        continue;
                }

                memcpy(&copy, words, sizeof(copy));
                if (!copy_valid(&copy, n))
                        return -EBADMSG;
                copy.history = NULL;
                *ret = copy;
                return 0;
        }
        return -EAGAIN;
}

int shared_table_find(const void *mem, size_t size, const char *name, size_t *ret_index) {
        size_t n;

        if (!mem || !name || !ret_index)
                return -EINVAL;
        n = shared_table_count(mem, size);
        for (size_t i = 0; i < n; i++) {
                GraphNode node;
                int r = shared_table_read_node(mem, size, i, &node);

                if (r < 0)
                        return r;
                if (strcmp(node.name, name) == 0) {
                        *ret_index = i;
                        return 0;
                }
        }
        if (__atomic_load_n(&header_const(mem)->magic, __ATOMIC_RELAXED) == SHARED_TABLE_MAGIC_RETIRED)
                return -ESTALE;
        return -ENOENT;
}

int shared_table_convert_general(const void *mem, size_t size, size_t from, size_t to, int64_t value,
                                 int64_t hint_r_ns, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        GraphNode src, dst;
        int r;

        r = shared_table_read_node(mem, size, from, &src);
        if (r < 0)
                return r;
        r = shared_table_read_node(mem, size, to, &dst);
        if (r < 0)
                return r;
        return graph_node_convert(&src, &dst, value, hint_r_ns, ret_value, ret_uncertainty_ns);
}
