/* SPDX-License-Identifier: MIT */

/* The seqlock under a writer that never stops: no torn read, ever. A writer thread publishes
 * nodes whose every changing field derives from one counter k; reader processes (forked, as the
 * clients are other processes) read the table in shared memory millions of times and check the
 * relation on every copy, and check that each conversion equals the one computed from some
 * consistent k the writer published during the call. */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared-table.h"
#include "tap.h"

#define READERS 2
#define ITERATIONS 1000000
#define WINDOW_MAX 64           /* beyond this many publishes during one call, skip its check */

typedef struct ReaderResult {
        uint64_t reads, torn, backwards, wrong_answers, failed, checked_answers, skipped, versions_seen;
        uint64_t raw_torn;      /* copies made without the seqlock that tore (the control) */
} ReaderResult;

typedef struct Shared {
        atomic_uint_fast64_t published; /* the last k whose publish completed */
        atomic_int stop;
        ReaderResult results[READERS];
        alignas(64) unsigned char table[];
} Shared;

static void expected_node(uint64_t k, int64_t mult, GraphNode *n) {
        int64_t km = (int64_t) k * mult;
        Model m = { .r_c_ns = km, .x_c_ns = 3 * km, .rate = (double) km * 1e-12, .half_ns = (double) km,
                    .rate_half = (double) km * 1e-15 };

        (void) model_prepare(&m, &n->current);
        n->current_r_begin_ns = -km;
        n->current_x_begin_ns = -3 * km;
        n->hint_count = 5 * km;
}

/* k of a copy whose fields all agree, else 0. */
static uint64_t node_k(const GraphNode *n, int64_t mult) {
        GraphNode want = *n;
        int64_t km = n->current.m.r_c_ns;

        if (km <= 0 || km % mult != 0)
                return 0;
        expected_node((uint64_t) (km / mult), mult, &want);
        if (memcmp(&want.current, &n->current, sizeof(n->current)) != 0 ||
            want.current_r_begin_ns != n->current_r_begin_ns || want.current_x_begin_ns != n->current_x_begin_ns ||
            want.hint_count != n->hint_count)
                return 0;
        return (uint64_t) (km / mult);
}

static void *writer_main(void *userdata) {
        Shared *s = userdata;
        size_t size = shared_table_size(3);
        static History dummy;
        ClockGraph g;

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "a", &UNIT_NS, &dummy, NULL);
        graph_add(&g, "b", &UNIT_NS, &dummy, NULL);
        for (size_t i = 1; i < 3; i++) {
                g.nodes[i].calibrated = true;
                g.nodes[i].fast = true;
        }
        for (uint64_t k = 1; !atomic_load(&s->stop); k++) {
                expected_node(k, 1, &g.nodes[1]);
                expected_node(k, 2, &g.nodes[2]);
                if (shared_table_publish(s->table, size, &g) < 0)
                        break;
                atomic_store_explicit(&s->published, k, memory_order_release);
        }
        return NULL;
}

/* Whether (v, unc) is what a -> b gives for some ka, kb in [lo, hi]. */
static bool answer_in_window(uint64_t lo, uint64_t hi, int64_t value, int64_t v, int64_t unc) {
        for (uint64_t ka = lo; ka <= hi; ka++)
                for (uint64_t kb = lo; kb <= hi; kb++) {
                        GraphNode a, b;
                        int64_t r_ns, r_unc_ns, w, w_unc;

                        expected_node(ka, 1, &a);
                        expected_node(kb, 2, &b);
                        if (prepared_inverse(&a.current, value, 0, &r_ns, &r_unc_ns) == 0 &&
                            prepared_forward(&b.current, r_ns, r_unc_ns, &w, &w_unc) == 0 && w == v && w_unc == unc)
                                return true;
                }
        return false;
}

static void reader_main(Shared *s, ReaderResult *res) {
        const void *mem = s->table;
        size_t size = shared_table_size(3);
        uint64_t last_k = 0;

        while (atomic_load_explicit(&s->published, memory_order_acquire) == 0)
                ;       /* the writer's first publish: there is nothing to read before it */

        for (uint64_t i = 0; i < ITERATIONS; i++) {
                GraphNode node = {}, raw;
                SharedTableFast fast;
                uint64_t k, lo, hi;
                int64_t value = 1000000 + (int64_t) (i % 4096) * 1000, v, unc;

                res->reads++;
                if (shared_table_read_node(mem, size, 1, &node) < 0)
                        res->failed++;
                else if (!(k = node_k(&node, 1)))
                        res->torn++;
                else {
                        if (k < last_k)
                                res->backwards++;
                        if (k != last_k)
                                res->versions_seen++;
                        last_k = k;
                }

                res->reads++;
                if (shared_table_read_fast_(shared_table_entry_(mem, 2), &fast) < 0)
                        res->failed++;
                else {
                        node.current = fast.current;
                        node.current_r_begin_ns = fast.current_r_begin_ns;
                        node.current_x_begin_ns = fast.current_x_begin_ns;
                        node.hint_count = 5 * node.current.m.r_c_ns;    /* not in the fast part */
                        if (!node_k(&node, 2) || !(fast.flags & SHARED_TABLE_FAST_ENABLED))
                                res->torn++;
                }

                /* A whole conversion, both entries, through the public inline path. */
                res->reads += 2;
                lo = atomic_load_explicit(&s->published, memory_order_acquire);
                if (shared_table_convert(mem, size, 1, 2, value, INT64_MIN, &v, &unc) < 0)
                        res->failed++;
                else {
                        hi = atomic_load_explicit(&s->published, memory_order_acquire) + 1;
                        if (hi - lo > WINDOW_MAX)
                                res->skipped++;
                        else if (!answer_in_window(lo, hi, value, v, unc))
                                res->wrong_answers++;
                        else
                                res->checked_answers++;
                }

                /* The control: the same copy without the seqlock, racing the writer. */
                if (i % 16 == 0) {
                        __atomic_thread_fence(__ATOMIC_ACQUIRE);
                        memcpy(&raw, &shared_table_entry_(mem, 1)->node[0], sizeof(raw));
                        if (!node_k(&raw, 1))
                                res->raw_torn++;
                }
        }
}

int main(void) {
        size_t size = sizeof(Shared) + shared_table_size(3);
        Shared *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        pid_t pids[READERS];
        pthread_t writer;
        ReaderResult total = {};
        int exited_ok = 0;

        if (s == MAP_FAILED)
                skip_all("no shared anonymous memory");
        is_int(shared_table_init(s->table, shared_table_size(3), 3), 0, "a table in shared memory");

        for (int i = 0; i < READERS; i++) {
                pids[i] = fork();
                if (pids[i] == 0) {
                        reader_main(s, &s->results[i]);
                        _exit(0);
                }
        }
        ok(pthread_create(&writer, NULL, writer_main, s) == 0, "the writer thread runs");
        for (int i = 0; i < READERS; i++) {
                int status = 0;

                if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
                    WEXITSTATUS(status) == 0)
                        exited_ok++;
        }
        atomic_store(&s->stop, 1);
        pthread_join(writer, NULL);
        is_int(exited_ok, READERS, "every reader process ran to the end");

        for (int i = 0; i < READERS; i++) {
                const ReaderResult *r = &s->results[i];

                total.reads += r->reads;
                total.torn += r->torn;
                total.backwards += r->backwards;
                total.wrong_answers += r->wrong_answers;
                total.failed += r->failed;
                total.checked_answers += r->checked_answers;
                total.skipped += r->skipped;
                total.versions_seen += r->versions_seen;
                total.raw_torn += r->raw_torn;
        }
        diag("%" PRIu64 " reads, %" PRIu64 " versions published, %" PRIu64 " seen, %" PRIu64
             " answers checked, %" PRIu64 " skipped (writer far ahead), %" PRIu64 " -EAGAIN",
             total.reads, (uint64_t) atomic_load(&s->published), total.versions_seen, total.checked_answers,
             total.skipped, total.failed);
        diag("control: %" PRIu64 " of %" PRIu64 " copies without the seqlock tore", total.raw_torn,
             total.reads / 4 / 16);
        ok(total.reads >= (uint64_t) READERS * ITERATIONS * 4, "millions of reads (%" PRIu64 ")", total.reads);
        ok(total.versions_seen >= 100, "the readers saw the writer at work (%" PRIu64 " versions)",
           total.versions_seen);
        is_int(total.torn, 0, "no torn copy, ever");
        is_int(total.backwards, 0, "no reader saw a version older than one it had seen");
        is_int(total.wrong_answers, 0, "every conversion is one of a consistent published pair");
        ok(total.checked_answers >= total.reads / 8, "most conversions were checked (%" PRIu64 ")",
           total.checked_answers);
        ok(total.failed <= total.reads / 1000, "-EAGAIN stays rare (%" PRIu64 ")", total.failed);
        munmap(s, size);
        return done_testing();
}
