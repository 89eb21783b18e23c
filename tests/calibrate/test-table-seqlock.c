/* SPDX-License-Identifier: MIT */

/* The seqlock under a writer that never stops: no torn read, ever. A writer thread publishes
 * records whose every word derives from one counter k; reader processes (forked, as the
 * clients are other processes) read the table in shared memory millions of times and check the
 * relation on every copy, and check that each conversion equals the one computed from some
 * consistent k the writer published during the call.
 *
 * Every assertion is a property that a loaded machine cannot flip: the readers go on past
 * ITERATIONS until each has seen the writer at work (VERSIONS_MIN versions) and checked
 * CHECKED_MIN conversions, however little CPU the writer gets; only a writer that makes no
 * progress for RUN_MAX_NS fails those. With --one-cpu the writer and the readers share one CPU,
 * as on a loaded machine: a reader sees a new version only when the scheduler switches.
 * usage: test-table-seqlock [--one-cpu] */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
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
#define VERSIONS_MIN 50         /* per reader */
#define CHECKED_MIN 10000       /* per reader */
#define RUN_MAX_NS (INT64_C(120) * 1000000000)

typedef struct ReaderResult {
        uint64_t reads, torn, backwards, wrong_answers, failed, checked_answers, skipped, versions_seen;
        uint64_t other_errors;  /* failures other than -EAGAIN (the writer busy through every try) */
        uint64_t raw_torn;      /* copies made without the seqlock that tore (the control) */
} ReaderResult;

typedef struct Shared {
        atomic_uint_fast64_t published; /* the last k whose publish completed */
        atomic_int stop;
        ReaderResult results[READERS];
        alignas(64) unsigned char table[];
} Shared;

/* A record whose every word derives from k·mult (and answers for the values the readers use). */
static void expected_record(uint64_t k, int64_t mult, ConvRecord *rec) {
        int64_t km = (int64_t) k * mult;

        *rec = (ConvRecord) {
                .in_lo = -km, .in_hi = km * 1000000000 + 100000000, .in_c = km, .out_c = 3 * km,
                .slope = (INT64_C(1) << 62) + km, .slope_neg = (INT64_C(1) << 62) + km, .shift = 62,
                .bound_c_ns = km, .bound_slope = km, .bound_shift = 40, .in_hint = 5 * km, .gain_q32 = (uint64_t) km,
        };
}

/* k of a copy whose words all agree, else 0. */
static uint64_t record_k(const ConvRecord *rec, int64_t mult) {
        ConvRecord want;
        int64_t km = rec->in_c;

        if (km <= 0 || km % mult != 0)
                return 0;
        expected_record((uint64_t) (km / mult), mult, &want);
        if (memcmp(&want, rec, sizeof(want)) != 0)
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
        for (uint64_t k = 1; !atomic_load(&s->stop); k++) {
                expected_record(k, 1, &g.pairs[1][0]);
                expected_record(k, 2, &g.pairs[2][0]);
                expected_record(k, 3, &g.pairs[1][2]);
                if (shared_table_publish(s->table, size, &g) < 0)
                        break;
                atomic_store_explicit(&s->published, k, memory_order_release);
        }
        return NULL;
}

/* Whether (v, unc) is what a -> b gives for some k in [lo, hi]. */
static bool answer_in_window(uint64_t lo, uint64_t hi, int64_t value, int64_t v, int64_t unc) {
        for (uint64_t k = lo; k <= hi; k++) {
                ConvRecord rec;
                int64_t w, w_unc;

                expected_record(k, 3, &rec);
                if (conv_record_convert(&rec, value, &w, &w_unc) == 0 && w == v && w_unc == unc)
                        return true;
        }
        return false;
}

static int64_t monotonic_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void count_failure(ReaderResult *res, int r) {
        res->failed++;
        res->other_errors += r != -EAGAIN;
}

static void reader_main(Shared *s, ReaderResult *res) {
        const void *mem = s->table;
        size_t size = shared_table_size(3);
        uint64_t last_k = 0;

        while (atomic_load_explicit(&s->published, memory_order_acquire) == 0)
                ;       /* the writer's first publish: there is nothing to read before it */

        int64_t deadline_ns = monotonic_ns() + RUN_MAX_NS;

        for (uint64_t i = 0;
             i < ITERATIONS || ((res->versions_seen < VERSIONS_MIN || res->checked_answers < CHECKED_MIN) &&
                                (i % 4096 != 0 || monotonic_ns() < deadline_ns));
             i++) {
                ConvRecord rec, raw;
                uint64_t k, lo, hi;
                int64_t value = 1000000 + (int64_t) (i % 4096) * 1000, v = 0, unc = 0;
                int r;

                res->reads++;
                r = shared_table_read_pair(mem, size, 1, 0, &rec);
                if (r < 0)
                        count_failure(res, r);
                else if (!(k = record_k(&rec, 1)))
                        res->torn++;
                else {
                        if (k < last_k)
                                res->backwards++;
                        if (k != last_k)
                                res->versions_seen++;
                        last_k = k;
                }

                res->reads++;
                r = shared_table_read_pair(mem, size, 2, 0, &rec);
                if (r < 0)
                        count_failure(res, r);
                else if (!record_k(&rec, 2))
                        res->torn++;

                /* A whole conversion, through the public inline path. */
                res->reads++;
                lo = atomic_load_explicit(&s->published, memory_order_acquire);
                r = shared_table_convert(mem, size, 1, 2, value, INT64_MIN, &v, &unc);
                if (r < 0)
                        count_failure(res, r);
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
                        memcpy(&raw, &shared_table_entry_(mem, 1 * SHARED_TABLE_CAPACITY_MAX + 0)->copy[0], sizeof(raw));
                        if (!record_k(&raw, 1))
                                res->raw_torn++;
                }
        }
}

int main(int argc, char *argv[]) {
        size_t size = sizeof(Shared) + shared_table_size(3);
        Shared *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        pid_t pids[READERS];
        pthread_t writer;
        ReaderResult total = {};
        int exited_ok = 0, readers_done = 0;

        if (s == MAP_FAILED)
                skip_all("no shared anonymous memory");
        if (argc > 1 && strcmp(argv[1], "--one-cpu") == 0) {
                cpu_set_t one;
                int cpu = sched_getcpu();

                CPU_ZERO(&one);
                CPU_SET(cpu < 0 ? 0 : cpu, &one);
                is_int(sched_setaffinity(0, sizeof(one), &one), 0, "the writer and the readers share one CPU");
        }
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
                total.other_errors += r->other_errors;
                readers_done += r->versions_seen >= VERSIONS_MIN && r->checked_answers >= CHECKED_MIN;
        }
        diag("%" PRIu64 " reads, %" PRIu64 " versions published, %" PRIu64 " seen, %" PRIu64
             " answers checked, %" PRIu64 " skipped (writer far ahead), %" PRIu64 " -EAGAIN",
             total.reads, (uint64_t) atomic_load(&s->published), total.versions_seen, total.checked_answers,
             total.skipped, total.failed);
        diag("control: %" PRIu64 " of %" PRIu64 " copies without the seqlock tore", total.raw_torn,
             total.reads / 4 / 16);
        ok(total.reads >= (uint64_t) READERS * ITERATIONS * 3, "millions of reads (%" PRIu64 ")", total.reads);
        /* Not a rate: the readers read on until they saw it, a loaded machine only makes it longer. */
        ok(readers_done == READERS, "every reader saw the writer at work (%d versions) and checked %d "
           "conversions (%d of %d)", VERSIONS_MIN, CHECKED_MIN, readers_done, READERS);
        ok(total.versions_seen >= (uint64_t) READERS * VERSIONS_MIN, "the readers saw %" PRIu64 " versions",
           total.versions_seen);
        is_int(total.torn, 0, "no torn copy, ever");
        is_int(total.backwards, 0, "no reader saw a version older than one it had seen");
        is_int(total.wrong_answers, 0, "every conversion is one of a consistent published pair");
        ok(total.checked_answers >= (uint64_t) READERS * CHECKED_MIN, "conversions were checked (%" PRIu64 ")",
           total.checked_answers);
        /* How often the writer held a reader off depends on the scheduler (a writer preempted
         * mid-update), so the count is a figure; that a failure is only ever -EAGAIN is not. */
        is_int(total.other_errors, 0, "a read that fails says -EAGAIN (the writer at work), nothing else");
        ok(total.failed < total.reads, "and a reader gets through (%" PRIu64 " -EAGAIN of %" PRIu64 " reads)",
           total.failed, total.reads);
        munmap(s, size);
        return done_testing();
}
