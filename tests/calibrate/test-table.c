/* SPDX-License-Identifier: MIT */

/* The shared table's layout and its single-threaded behaviour: validation with named errors,
 * publishing and generations, conversions that equal the graph's (fast path and general path),
 * CONV_RECORD_MISS where only the daemon can answer, copies that make no sense, retirement. */

#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "fake-history.h"
#include "fake.h"
#include "shared-table.h"
#include "tap.h"

#define CAPACITY 8

typedef struct Fixture {
        History h_mono, h_boot, h_step, h_x11;
        ClockGraph g;
        size_t mono, boot, step, x11, x11_us;
} Fixture;

/* The hub, two ns clocks, one with a step 15 s in (two segments), X time in ms and µs. */
static void fixture_init(Fixture *f) {
        static const FakeStep step = { .at_r_ns = INT64_C(15000000000), .step_ns = 5000000 };
        FakeConfig c_mono = { .offset_ns = 1000000000, .rate_ppm = 30, .deviation_min_ns = 30,
                              .deviation_max_ns = 300, .seed = 1 };
        FakeConfig c_boot = { .offset_ns = 7000000000, .rate_ppm = -40, .deviation_min_ns = 30,
                              .deviation_max_ns = 300, .seed = 2 };
        FakeConfig c_step = { .offset_ns = 1000, .deviation_min_ns = 30, .deviation_max_ns = 300, .seed = 3,
                              .steps = &step, .n_steps = 1 };
        FakeConfig c_x11 = { .unit = { 1e6, 32, true, UNIT_ENCODING_PLAIN }, .offset_ns = 1000000000,
                             .rate_ppm = 30, .deviation_min_ns = 5000, .deviation_max_ns = 20000,
                             .interval_ns = 300000, .seed = 4 };

        fake_history_calibrate("monotonic", &c_mono, &f->h_mono);
        fake_history_calibrate("boottime", &c_boot, &f->h_boot);
        fake_history_calibrate("stepper", &c_step, &f->h_step);
        fake_history_calibrate("x11", &c_x11, &f->h_x11);
        graph_init(&f->g, "monotonic_raw");
        graph_add(&f->g, "monotonic", &UNIT_NS, &f->h_mono, &f->mono);
        graph_add(&f->g, "boottime", &UNIT_NS, &f->h_boot, &f->boot);
        graph_add(&f->g, "stepper", &UNIT_NS, &f->h_step, &f->step);
        graph_add(&f->g, "x11", &UNIT_MS_X11, &f->h_x11, &f->x11);
        graph_add(&f->g, "x11_us", &UNIT_US_X11, &f->h_x11, &f->x11_us);
}

static void *table_new(size_t capacity, size_t *ret_size) {
        size_t size = shared_table_size(capacity);
        /* aligned_alloc() wants a multiple of the alignment. */
        void *mem = aligned_alloc(64, (size + 63) / 64 * 64);

        if (mem && shared_table_init(mem, size, capacity) < 0) {
                free(mem);
                return NULL;
        }
        *ret_size = size;
        return mem;
}

static void test_layout(void) {
        size_t size = shared_table_size(CAPACITY);
        alignas(64) static char buf[sizeof(SharedTableHeader) + SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode) +
                                    (SHARED_TABLE_CAPACITY_MAX + 2) * sizeof(SharedTableEntry) + 64];

        is_int(size, sizeof(SharedTableHeader) + SHARED_TABLE_CAPACITY_MAX * sizeof(SharedTableNode) +
                             ((CAPACITY - 1) * SHARED_TABLE_CAPACITY_MAX + CAPACITY) * sizeof(SharedTableEntry),
               "the size of a table: the nodes, then rows of pairs up to the last node's");
        ok(sizeof(SharedTableEntry) == 16 + 2 * sizeof(ConvRecord) && offsetof(SharedTableEntry, copy) == 16,
           "an entry is its counter and two copies of a record");
        is_int(shared_table_init(NULL, size, 1), -EINVAL, "init: NULL");
        is_int(shared_table_init(buf, sizeof(buf), 0), -EINVAL, "init: no capacity");
        is_int(shared_table_init(buf, sizeof(buf), 3), -EINVAL, "init: too small for the capacity");
        is_int(shared_table_init(buf + 8, sizeof(buf) - 8, 1), -EINVAL, "init: misaligned");
        is_int(shared_table_init(buf, sizeof(buf), 2), 0, "init: two entries");
        is_int(shared_table_validate(buf, sizeof(buf)), 0, "a fresh table validates");
        is_int(shared_table_generation(buf), 1, "its generation is 1");
        is_int(shared_table_count(buf, sizeof(buf)), 0, "it has no nodes");
        ok(!shared_table_alive(buf, 1000), "it has no heartbeat yet");
}

/* Copies good (a valid table) into a scratch table, lets mutate() break it, validates. */
static void check_invalid(const void *good, size_t size, const char *what, int want,
                          void (*mutate)(SharedTableHeader *h, size_t *size)) {
        void *mem = aligned_alloc(64, size);
        size_t size_given = size;

        memcpy(mem, good, size);
        mutate(mem, &size_given);
        is_int(shared_table_validate(mem, size_given), want, what);
        free(mem);
}

static void bad_magic(SharedTableHeader *h, size_t *size) { h->magic ^= 1; }
static void bad_version(SharedTableHeader *h, size_t *size) { h->layout_version++; }
static void bad_entry_size(SharedTableHeader *h, size_t *size) { h->entry_size += 64; }
static void bad_node_size(SharedTableHeader *h, size_t *size) { h->node_size -= 8; }
static void bad_record_version(SharedTableHeader *h, size_t *size) { h->record_version++; }
static void short_map(SharedTableHeader *h, size_t *size) { *size -= 1; }
static void tiny_map(SharedTableHeader *h, size_t *size) { *size = 4; }
static void no_header(SharedTableHeader *h, size_t *size) { *size = sizeof(*h) - 8; }
static void no_capacity(SharedTableHeader *h, size_t *size) { h->capacity = 0; }
static void huge_capacity(SharedTableHeader *h, size_t *size) { h->capacity = SHARED_TABLE_CAPACITY_MAX + 1; }
static void capacity_beyond(SharedTableHeader *h, size_t *size) { h->capacity++; }
static void too_many(SharedTableHeader *h, size_t *size) { h->n_nodes = h->capacity + 1; }
static void bad_hub(SharedTableHeader *h, size_t *size) { h->hub = h->n_nodes; }
static void retired(SharedTableHeader *h, size_t *size) { shared_table_retire(h); }

static void test_validate(const Fixture *f) {
        size_t size;
        void *mem = table_new(CAPACITY, &size);

        is_int(shared_table_publish(mem, size, &f->g), 0, "publish the fixture");
        is_int(shared_table_validate(mem, size), 0, "the published table validates");
        is_int(shared_table_validate(NULL, size), -EINVAL, "NULL: -EINVAL");
        is_int(shared_table_validate((char *) mem + 8, size - 8), -EINVAL, "misaligned: -EINVAL");
        check_invalid(mem, size, "bad magic: -EBADMSG", -EBADMSG, bad_magic);
        check_invalid(mem, size, "another layout version: -EPROTO", -EPROTO, bad_version);
        check_invalid(mem, size, "another entry size: -EPROTO", -EPROTO, bad_entry_size);
        check_invalid(mem, size, "another node size: -EPROTO", -EPROTO, bad_node_size);
        check_invalid(mem, size, "another record version: -EPROTO", -EPROTO, bad_record_version);
        check_invalid(mem, size, "a mapping shorter than the table: -EBADMSG", -EBADMSG, short_map);
        check_invalid(mem, size, "a mapping of 4 bytes: -EBADMSG", -EBADMSG, tiny_map);
        check_invalid(mem, size, "a mapping shorter than the header: -EBADMSG", -EBADMSG, no_header);
        check_invalid(mem, size, "capacity 0: -EBADMSG", -EBADMSG, no_capacity);
        check_invalid(mem, size, "capacity beyond the maximum: -EBADMSG", -EBADMSG, huge_capacity);
        check_invalid(mem, size, "capacity beyond the size: -EBADMSG", -EBADMSG, capacity_beyond);
        check_invalid(mem, size, "more nodes than capacity: -EBADMSG", -EBADMSG, too_many);
        check_invalid(mem, size, "a hub beyond the nodes: -EBADMSG", -EBADMSG, bad_hub);
        check_invalid(mem, size, "a retired table: -ESTALE", -ESTALE, retired);
        free(mem);
}

/* Every pair, values around the calibration: the table answers as the graph does, except before
 * a node's open segment, where it misses (CONV_RECORD_MISS) and the graph uses the history. */
static void test_convert(const Fixture *f) {
        size_t size, index = 99;
        void *mem = table_new(CAPACITY, &size);
        const ClockGraph *g = &f->g;
        int differ = 0, stale = 0, stale_wrong = 0, answered = 0;
        SharedTableNode node;
        ConvRecord rec;

        shared_table_publish(mem, size, g);
        is_int(shared_table_count(mem, size), g->n_nodes, "every node is in the table");
        is_int(shared_table_generation(mem), 2, "adding the nodes bumped the generation");
        ok(shared_table_find(mem, size, "x11_us", &index) == 0 && index == f->x11_us, "find x11_us");
        is_int(shared_table_find(mem, size, "nope", &index), -ENOENT, "find an unknown name: -ENOENT");
        is_int(shared_table_read_node(mem, size, g->n_nodes, &node), -ENOENT, "read beyond the nodes: -ENOENT");
        ok(shared_table_read_node(mem, size, f->x11, &node) == 0 && strcmp(node.name, "x11") == 0 &&
           node.wrap_bits == 32 && (node.unit_flags & SHARED_TABLE_UNIT_TRUNCATES), "read x11: its name and unit");
        ok(shared_table_read_pair(mem, size, f->x11, f->mono, &rec) == 0 &&
           memcmp(&rec, &g->pairs[f->x11][f->mono], sizeof(rec)) == 0, "the entry is the graph's record");
        is_int(shared_table_read_pair(mem, size, f->x11, g->n_nodes, &rec), -ENOENT, "a pair beyond the nodes: -ENOENT");

        for (size_t from = 0; from < g->n_nodes; from++)
                for (size_t to = 0; to < g->n_nodes; to++)
                        for (int64_t r = 0; r < INT64_C(32000000000); r += 999999937) {
                                int64_t value, hint = r, v_g, unc_g, v_t = 0, unc_t = 0;
                                int r_g, r_t;

                                if (graph_convert(g, g->hub, from, r, hint, &value, &unc_g) < 0)
                                        continue;
                                r_g = graph_convert(g, from, to, value, hint, &v_g, &unc_g);
                                r_t = shared_table_convert(mem, size, from, to, value, hint, &v_t, &unc_t);
                                if (r_t == CONV_RECORD_MISS) {
                                        stale++;
                                        if (from != f->step && to != f->step)
                                                stale_wrong++;
                                } else if (r_t != r_g || (r_g == 0 && (v_t != v_g || unc_t != unc_g)))
                                        differ++;
                                else if (r_g == 0)
                                        answered++;
                        }
        is_int(differ, 0, "the table's answers equal the graph's, for every pair");
        ok(answered > 1000, "%d conversions answered", answered);
        ok(stale > 0 && stale_wrong == 0, "a miss only before the stepped clock's open segment (%d)", stale);

        differ = 0;
        for (size_t to = 0; to < g->n_nodes; to++)
                for (int64_t r = 0; r < INT64_C(32000000000); r += 999999937) {
                        int64_t v_g, unc_g, v_t, unc_t;
                        int r_g = graph_convert(g, g->hub, to, r, r, &v_g, &unc_g);
                        int r_t = shared_table_from_hub(mem, size, to, r, &v_t, &unc_t);

                        if (r_t == CONV_RECORD_MISS ? to != f->step :
                                                      (r_t != r_g || (r_g == 0 && (v_t != v_g || unc_t != unc_g))))
                                differ++;
                }
        is_int(differ, 0, "from_hub equals the graph's hub -> node");
        free(mem);
}

/* The latch of the node's record to the hub. */
static uint64_t entry_seq(const void *mem, size_t i) {
        return shared_table_entry_(mem, i * SHARED_TABLE_CAPACITY_MAX)->seq;
}

static void test_publish(Fixture *f) {
        size_t size, small_size;
        void *mem = table_new(CAPACITY, &size), *small = table_new(2, &small_size);
        uint64_t seq_mono, seq_boot;
        ClockGraph renamed;

        const uint64_t *latch = NULL;
        ConvRecord kept = {};
        uint64_t kept_seq = 0;

        shared_table_publish(mem, size, &f->g);
        seq_mono = entry_seq(mem, f->mono);
        seq_boot = entry_seq(mem, f->boot);
        is_int(shared_table_read_pair_latched(mem, size, f->mono, f->boot, &kept, &kept_seq, &latch), 0,
               "a copy with its latch counter");
        ok(latch && *latch == kept_seq && kept_seq % 2 == 0, "the counter the copy was taken at");
        ok(shared_table_copy_current(latch, kept_seq), "a kept copy is current while nothing changed");
        ok(seq_mono % 2 == 0 && seq_mono > 0, "a written entry's counter is even and moved");
        is_int(shared_table_publish(mem, size, &f->g), 0, "publish the same graph again");
        ok(entry_seq(mem, f->mono) == seq_mono && shared_table_generation(mem) == 2,
           "an unchanged node is not rewritten, the generation stays");
        ok(shared_table_copy_current(latch, kept_seq), "a kept copy is current after a same publish");

        graph_set_available(&f->g, f->boot, false);
        shared_table_publish(mem, size, &f->g);
        is_int(entry_seq(mem, f->boot), seq_boot + 2, "a changed node is rewritten once");
        ok(entry_seq(mem, f->mono) == seq_mono, "the others are not");
        ok(!shared_table_copy_current(latch, kept_seq), "a kept copy of a changed pair is not current");
        is_int(shared_table_read_pair_latched(mem, size, f->mono, f->boot, &kept, &kept_seq, &latch), 0,
               "a new copy");
        {
                int64_t v, unc;

                is_int(shared_table_convert(mem, size, f->mono, f->boot, 5, 5, &v, &unc), -ENODEV,
                       "an unavailable node: -ENODEV, as in the graph");
        }
        graph_set_available(&f->g, f->boot, true);

        graph_add(&f->g, "late", &UNIT_NS, &f->h_boot, NULL);
        is_int(shared_table_publish(mem, size, &f->g), 0, "publish with a node added");
        ok(shared_table_generation(mem) == 3 && shared_table_count(mem, size) == f->g.n_nodes,
           "the generation changed, the count grew");

        renamed = f->g;
        strcpy(renamed.nodes[f->boot].name, "boottime2");
        is_int(shared_table_publish(mem, size, &renamed), SHARED_TABLE_REPLACE, "a renamed node: a new table");
        renamed = f->g;
        renamed.nodes[f->x11].unit = UNIT_US_X11;
        is_int(shared_table_publish(mem, size, &renamed), SHARED_TABLE_REPLACE,
               "a node with another unit: a new table");
        renamed = f->g;
        renamed.n_nodes--;
        is_int(shared_table_publish(mem, size, &renamed), SHARED_TABLE_REPLACE, "fewer nodes: a new table");
        ok(shared_table_generation(mem) == 3 && shared_table_count(mem, size) == f->g.n_nodes,
           "a refused publish changed nothing");
        is_int(shared_table_publish(small, small_size, &f->g), -ENOSPC, "beyond the capacity: -ENOSPC");
        is_int(shared_table_publish(mem, size - 1, &f->g), -EBADMSG, "a size short of the table: -EBADMSG");

        shared_table_heartbeat(mem, 1000000, 500000);
        ok(shared_table_alive(mem, 1200000), "alive within the gap");
        ok(!shared_table_alive(mem, 1600000), "dead beyond it");
        ok(!shared_table_alive(mem, 900000), "not alive for a beat from the future");

        is_int(shared_table_read_pair_latched(mem, size, f->mono, f->boot, &kept, &kept_seq, &latch), 0,
               "a fresh copy before the table retires");
        ok(shared_table_copy_current(latch, kept_seq), "  current");
        shared_table_retire(mem);
        {
                SharedTableNode node;
                size_t index;
                int64_t v, unc;

                ok(!shared_table_alive(mem, 1200000), "a retired table is not alive");
                ok(!shared_table_copy_current(latch, kept_seq), "a kept copy of a retired table is not current");
                is_int(shared_table_convert(mem, size, f->mono, f->boot, 5, 5, &v, &unc), -ESTALE, "convert: -ESTALE");
                is_int(shared_table_from_hub(mem, size, f->mono, 5, &v, &unc), -ESTALE, "from_hub: -ESTALE");
                is_int(shared_table_read_node(mem, size, 0, &node), -ESTALE, "read_node: -ESTALE");
                is_int(shared_table_find(mem, size, "monotonic", &index), -ESTALE, "find: -ESTALE");
        }
        free(mem);
        free(small);
}

/* A node that makes no sense is refused; a record in a torn or garbage state is never used
 * torn, and garbage never crashes a reader. */
static void test_bad_copies(const Fixture *f) {
        size_t size;
        void *mem = table_new(CAPACITY, &size);
        SharedTableNode *n;
        SharedTableEntry *e;
        SharedTableNode node;
        int64_t v, unc, v0, unc0;
        bool garbage_ok;
        int r;

        shared_table_publish(mem, size, &f->g);
        n = (SharedTableNode *) ((char *) mem + sizeof(SharedTableHeader)) + f->boot;
        memset(n->name, 'a', sizeof(n->name));
        is_int(shared_table_read_node(mem, size, f->boot, &node), -EBADMSG, "a name without its NUL: -EBADMSG");
        n->name[0] = '\0';
        is_int(shared_table_read_node(mem, size, f->boot, &node), -EBADMSG, "an empty name: -EBADMSG");
        strcpy(n->name, "boottime");
        is_int(shared_table_read_node(mem, size, f->boot, &node), 0, "repaired, it reads");

        /* A writer stopped half way (counter odd, copy 0 garbage) does not stall readers: they
         * read copy 1, the whole record. */
        e = (SharedTableEntry *) shared_table_entry_(mem, f->mono * SHARED_TABLE_CAPACITY_MAX + f->boot);
        is_int(shared_table_convert(mem, size, f->mono, f->boot, 5, INT64_MIN, &v0, &unc0), 0, "mono -> boottime");
        memset(&e->copy[0], 0xa5, sizeof(e->copy[0]));
        e->seq++;
        ok(shared_table_convert(mem, size, f->mono, f->boot, 5, INT64_MIN, &v, &unc) == 0 && v == v0 && unc == unc0,
           "a writer stuck mid-write: readers read the other copy");
        /* Garbage in both: an answer or an error, never a crash (conv_record_map() is defined for
         * any contents). */
        memset(&e->copy[1], 0x5a, sizeof(e->copy[1]));
        v = unc = INT64_MIN;
        r = shared_table_convert(mem, size, f->mono, f->boot, 5, INT64_MIN, &v, &unc);
        garbage_ok = r == 0 || ((r < 0 || r == CONV_RECORD_MISS) && v == INT64_MIN && unc == INT64_MIN);
        memset(&e->copy[1], 0xff, sizeof(e->copy[1]));
        v = unc = INT64_MIN;
        r = shared_table_convert(mem, size, f->mono, f->boot, -5, INT64_MIN, &v, &unc);
        garbage_ok = garbage_ok && (r == 0 || ((r < 0 || r == CONV_RECORD_MISS) && v == INT64_MIN &&
                                               unc == INT64_MIN));
        /* A garbage status reads as -EBADMSG (shared_table_read_entry_()): never any other int. */
        ok(garbage_ok, "garbage records read without a crash: an answer, or a failure (-errno or a miss) "
           "that writes nothing");
        free(mem);
}

int main(void) {
        static Fixture f;

        fixture_init(&f);
        test_layout();
        test_validate(&f);
        test_convert(&f);
        test_bad_copies(&f);
        test_publish(&f);
        return done_testing();
}
