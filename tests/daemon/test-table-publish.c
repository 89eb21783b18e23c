/* SPDX-License-Identifier: MIT */

/* The shared table's memfd (daemon/table-publish.h), seen as a client sees it: the fd is sealed
 * (no writable mapping, no write, no resize, no more seals) and readable; the table carries the
 * graph's current records, which convert as the graph does and hold the fake clocks' truth; the
 * generation changes when domains are added and only then; the heartbeat is the time of the
 * latest update, with the promised gap; a graph the table cannot describe gets a new memfd and
 * the old one is retired, as it is when the publisher goes. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "core.h"
#include "fake.h"
#include "shared-table.h"
#include "table-publish.h"
#include "tap.h"
#include "time-util.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define R_START_NS INT64_C(1000000000)

static const Log test_log = { .max_level = LOG_ERR };

/* The fake clocks of the core, with their truth. */
static const struct {
        const char *name;
        int64_t offset_ns;
        double rate_ppm;
} clocks[] = {
        { "a", INT64_C(5000000), 40 },
        { "b", -INT64_C(3000000000), -15 },
        { "c", INT64_C(123456789), 0 },
};

static int add_fake(Core *c, size_t k) {
        FakeConfig fc = {
                .offset_ns = clocks[k].offset_ns,
                .rate_ppm = clocks[k].rate_ppm,
                .deviation_min_ns = 50,
                .deviation_max_ns = 400,
                .r_start_ns = R_START_NS,
                .interval_ns = 10000,
                .seed = 11 + k,
        };
        DomainInfo info = { .unit = UNIT_NS };

        strcpy(info.name, clocks[k].name);
        return core_add_domain(c, &domain_fake_ops, &info, &fc);
}

/* n bursts of every domain but the hub, 10 ms of simulated time apart. */
static void calibrate(Core *c, int n) {
        for (int i = 0; i < n; i++)
                for (size_t k = 1; k < core_count(c); k++) {
                        CoreBurst burst;

                        if (core_calibrate(c, k, &burst) < 0)
                                abort();
                        fake_advance(c->domains[k]->domain, 10 * NSEC_PER_MSEC);
                }
}

/* A client's view: a read-only shared mapping of the fd. */
typedef struct Mapping {
        void *mem;
        size_t size;
} Mapping;

static int map_ro(int fd, Mapping *ret) {
        struct stat st;
        void *mem;

        if (fstat(fd, &st) < 0)
                return -errno;
        mem = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (mem == MAP_FAILED)
                return -errno;
        *ret = (Mapping) { mem, (size_t) st.st_size };
        return 0;
}

static void unmap(Mapping *m) {
        if (m->mem)
                (void) munmap(m->mem, m->size);
        *m = (Mapping) {};
}

static const SharedTableHeader *header(const Mapping *m) {
        return m->mem;
}

static void test_arguments(TablePublisher *p) {
        static const struct {
                int64_t max_gap_ns;
                int want;
        } gaps[] = {
                { 0, -EINVAL },
                { -1, -EINVAL },
                { INT64_MIN, -EINVAL },
                { 1, 0 },
                { INT64_C(5) * NSEC_PER_SEC, 0 },
        };
        ClockGraph g = {};

        is_int(table_publisher_new(NULL), -EINVAL, "table_publisher_new(NULL)");
        is_int(table_publisher_fd(NULL), -ENODEV, "table_publisher_fd(NULL)");
        is_int(table_publisher_update(NULL, &g), -EINVAL, "update without a publisher");
        is_int(table_publisher_update(p, NULL), -EINVAL, "update without a graph");
        is_int(table_publisher_set_max_gap(NULL, NSEC_PER_SEC), -EINVAL, "set_max_gap without a publisher");
        for (size_t i = 0; i < ELEMENTSOF(gaps); i++) {
                char name[64];

                snprintf(name, sizeof(name), "set_max_gap(%" PRId64 ")", gaps[i].max_gap_ns);
                is_int(table_publisher_set_max_gap(p, gaps[i].max_gap_ns), gaps[i].want, name);
        }
        ok(table_publisher_free(NULL) == NULL, "table_publisher_free(NULL)");
}

/* What a client may do with the fd it is given, and what it may not. */
static void test_seals(int fd) {
        const int seals_want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;
        struct stat st = {};
        long page = sysconf(_SC_PAGESIZE);
        uint64_t magic = 0;
        Mapping m = {};
        void *w;

        ok(fd >= 0, "the publisher has an fd (%d)", fd);
        ok((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "  close-on-exec");
        is_int(fcntl(fd, F_GET_SEALS), seals_want, "  sealed: shrink, grow, future write, seal");
        is_int(fstat(fd, &st), 0, "  fstat");
        ok((size_t) st.st_size >= shared_table_size(GRAPH_NODES_MAX) &&
           st.st_size % (page > 0 ? page : 4096) == 0,
           "  sized for every graph node, in whole pages (%jd bytes)", (intmax_t) st.st_size);

        w = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ok(w == MAP_FAILED && errno == EPERM, "a writable shared mapping is refused");
        if (w != MAP_FAILED)
                (void) munmap(w, (size_t) st.st_size);
        ok(pwrite(fd, "x", 1, 0) < 0 && errno == EPERM, "write() is refused");
        ok(ftruncate(fd, st.st_size * 2) < 0 && errno == EPERM, "growing is refused");
        ok(ftruncate(fd, 0) < 0 && errno == EPERM, "shrinking is refused");
        ok(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) < 0 && errno == EPERM, "no more seals");
        ok(fallocate(fd, 0, 0, st.st_size * 2) < 0, "fallocate() beyond the end is refused");

        ok(pread(fd, &magic, sizeof(magic), 0) == sizeof(magic) && magic == SHARED_TABLE_MAGIC,
           "read() gives the table's magic");
        is_int(map_ro(fd, &m), 0, "a read-only shared mapping");
        ok(m.mem && mprotect(m.mem, m.size, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
           "  which cannot be made writable");
        ok(m.mem && shared_table_validate(m.mem, m.size) == 0 && header(&m)->layout_version ==
           SHARED_TABLE_LAYOUT_VERSION, "  holds a valid table of this layout");
        unmap(&m);
}

/* Every node of the graph, read back from the table, converts as the graph does; the fake
 * clocks' truth lies within the bounds. */
static void check_records(const char *when, const Core *c, const Mapping *m) {
        const ClockGraph *g = &c->graph;
        bool names_ok = true, convert_ok = true, truth_ok = true;

        is_int(shared_table_count(m->mem, m->size), g->n_nodes, when);
        for (size_t i = 0; i < g->n_nodes; i++) {
                SharedTableNode node;
                ConvRecord rec;
                size_t index = SIZE_MAX;

                /* the node by name, and its record to the hub: the graph's, word for word */
                if (shared_table_find(m->mem, m->size, g->nodes[i].name, &index) < 0 || index != i ||
                    shared_table_read_node(m->mem, m->size, i, &node) < 0 ||
                    strcmp(node.name, g->nodes[i].name) != 0 ||
                    !(node.flags & SHARED_TABLE_NODE_HUB) != !g->nodes[i].hub ||
                    shared_table_read_pair(m->mem, m->size, i, g->hub, &rec) < 0 ||
                    memcmp(&rec, &g->pairs[i][g->hub], sizeof(rec)) != 0) {
                        diag("%s: node %zu '%s' reads back wrong", when, i, g->nodes[i].name);
                        names_ok = false;
                }
        }
        ok(names_ok, "  every node at its index, with its name and its records");

        for (size_t i = 1; i < g->n_nodes; i++) {
                Domain *fake = c->domains[i]->domain;
                int64_t r_ns = fake_now_ns(fake), x_ns = (int64_t) llround(fake_truth_ns(fake, r_ns));
                struct {
                        size_t from, to;
                        int64_t value;
                } cases[] = {
                        { g->hub, i, r_ns },
                        { i, g->hub, x_ns },
                        { i, 1 + i % (g->n_nodes - 1), x_ns },
                };

                for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
                        int64_t v_graph = 0, u_graph = 0, v_table = 1, u_table = 1;
                        int r_graph, r_table;

                        r_graph = graph_convert(g, cases[k].from, cases[k].to, cases[k].value, r_ns, &v_graph,
                                                &u_graph);
                        r_table = shared_table_convert(m->mem, m->size, cases[k].from, cases[k].to, cases[k].value,
                                                       r_ns, &v_table, &u_table);
                        if (r_graph < 0 || r_table != r_graph || v_table != v_graph || u_table != u_graph) {
                                diag("%s: %s -> %s: graph %d %" PRId64 " +- %" PRId64 ", table %d %" PRId64
                                     " +- %" PRId64, when, g->nodes[cases[k].from].name, g->nodes[cases[k].to].name,
                                     r_graph, v_graph, u_graph, r_table, v_table, u_table);
                                convert_ok = false;
                        }
                }
                /* The hub's r to the clock: its truth then, within the bound. */
                {
                        int64_t v = 0, u = 0;

                        if (shared_table_convert(m->mem, m->size, g->hub, i, r_ns, r_ns, &v, &u) < 0 ||
                            fabs((double) v - fake_truth_ns(fake, r_ns)) > (double) u + 1) {
                                diag("%s: '%s' at r %" PRId64 ": %" PRId64 " +- %" PRId64 ", truth %.0f", when,
                                     g->nodes[i].name, r_ns, v, u, fake_truth_ns(fake, r_ns));
                                truth_ok = false;
                        }
                }
        }
        ok(convert_ok, "  the table converts exactly as the graph does");
        ok(truth_ok, "  and the truth lies within its bounds");
}

static void test_publish(TablePublisher *p) {
        int64_t t0_ns, t1_ns, t2_ns, t3_ns, heartbeat_ns;
        uint64_t generation;
        Mapping m = {};
        Core *c = NULL;
        int fd = table_publisher_fd(p);

        if (core_new(&test_log, &c) < 0 || add_fake(c, 0) < 0 || add_fake(c, 1) < 0)
                abort();
        calibrate(c, 20);
        is_int(map_ro(fd, &m), 0, "a client maps the table");
        if (!m.mem)
                return;
        is_int(shared_table_count(m.mem, m.size), 0, "before the first update the table is empty");
        is_int(header(&m)->heartbeat_ns, 0, "  with no heartbeat");
        ok(!shared_table_alive(m.mem, clock_now_ns(CLOCK_MONOTONIC)), "  and is not alive");

        is_int(table_publisher_set_max_gap(p, TABLE_PUBLISHER_MAX_GAP_NS_DEFAULT), 0, "the default gap");
        t0_ns = clock_now_ns(CLOCK_MONOTONIC);
        is_int(table_publisher_update(p, &c->graph), 0, "update with hub, a and b");
        t1_ns = clock_now_ns(CLOCK_MONOTONIC);
        is_int(table_publisher_fd(p), fd, "  the same fd");
        check_records("after the first update", c, &m);
        heartbeat_ns = header(&m)->heartbeat_ns;
        ok(heartbeat_ns >= t0_ns && heartbeat_ns <= t1_ns, "  the heartbeat is the time of the update");
        is_int(header(&m)->heartbeat_max_ns, TABLE_PUBLISHER_MAX_GAP_NS_DEFAULT, "  the promised gap is the default");
        ok(shared_table_alive(m.mem, t1_ns) &&
           !shared_table_alive(m.mem, heartbeat_ns + TABLE_PUBLISHER_MAX_GAP_NS_DEFAULT + NSEC_PER_SEC),
           "  alive now, dead once the gap has passed without an update");
        generation = shared_table_generation(m.mem);
        ok(generation != 0, "  a generation (%" PRIu64 ")", generation);

        calibrate(c, 5);
        is_int(table_publisher_set_max_gap(p, 5 * NSEC_PER_SEC), 0, "a gap of 5 s");
        t2_ns = clock_now_ns(CLOCK_MONOTONIC);
        is_int(table_publisher_update(p, &c->graph), 0, "update after more bursts");
        t3_ns = clock_now_ns(CLOCK_MONOTONIC);
        check_records("after more bursts", c, &m);
        is_int(shared_table_generation(m.mem), generation, "  the same domains: the same generation");
        ok(header(&m)->heartbeat_ns >= t2_ns && header(&m)->heartbeat_ns <= t3_ns &&
           header(&m)->heartbeat_ns > heartbeat_ns, "  the heartbeat moved to the time of this update");
        is_int(header(&m)->heartbeat_max_ns, 5 * NSEC_PER_SEC, "  the promised gap is the new one");
        ok(!shared_table_alive(m.mem, header(&m)->heartbeat_ns + 6 * NSEC_PER_SEC), "  dead 6 s later");

        is_int(add_fake(c, 2), 0, "a domain is added");
        calibrate(c, 20);
        is_int(table_publisher_update(p, &c->graph), 0, "update with it");
        is_int(table_publisher_fd(p), fd, "  the same fd: the table only grew");
        ok(shared_table_generation(m.mem) != generation, "  a new generation (%" PRIu64 ")",
           shared_table_generation(m.mem));
        check_records("after a domain was added", c, &m);

        unmap(&m);
        core_free(c);
}

/* A graph with fewer nodes than the table (a node gone or renamed is the same case): the indices
 * clients hold would name other domains, so they get a new memfd and the old table retires. */
static void test_reissue(void) {
        _cleanup_(table_publisher_freep) TablePublisher *p = NULL;
        _cleanup_free_ ClockGraph *smaller = NULL;
        Mapping old = {}, fresh = {};
        int old_fd, fd;
        Core *c = NULL;

        if (table_publisher_new(&p) < 0 || core_new(&test_log, &c) < 0 || add_fake(c, 0) < 0 || add_fake(c, 1) < 0)
                abort();
        calibrate(c, 10);
        is_int(table_publisher_update(p, &c->graph), 0, "a table of three nodes");
        old_fd = table_publisher_fd(p);
        is_int(map_ro(old_fd, &old), 0, "  a client maps it");

        smaller = malloc(sizeof(*smaller));
        if (!smaller)
                abort();
        *smaller = c->graph;
        smaller->n_nodes--;
        is_int(table_publisher_update(p, smaller), 0, "update with a node less");
        fd = table_publisher_fd(p);
        ok(fd >= 0 && fd != old_fd, "  a new memfd (%d, was %d)", fd, old_fd);
        is_int(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL,
               "  sealed as the first");
        ok(fcntl(old_fd, F_GETFD) < 0 && errno == EBADF, "  the old fd is closed");
        is_int(shared_table_validate(old.mem, old.size), -ESTALE, "  the old table is retired: -ESTALE");
        {
                int64_t v, u;

                is_int(shared_table_convert(old.mem, old.size, 0, 1, R_START_NS, R_START_NS, &v, &u), -ESTALE,
                       "  and answers no conversion");
        }
        is_int(map_ro(fd, &fresh), 0, "the client maps the new one");
        ok(fresh.mem && shared_table_validate(fresh.mem, fresh.size) == 0 &&
           shared_table_count(fresh.mem, fresh.size) == smaller->n_nodes,
           "  it holds the smaller graph");
        ok(fresh.mem && shared_table_alive(fresh.mem, clock_now_ns(CLOCK_MONOTONIC)), "  with a heartbeat");
        unmap(&old);

        p = table_publisher_free(p);
        ok(fresh.mem && shared_table_validate(fresh.mem, fresh.size) == -ESTALE &&
           !shared_table_alive(fresh.mem, clock_now_ns(CLOCK_MONOTONIC)),
           "a freed publisher retires its table: clients' readers answer -ESTALE");
        unmap(&fresh);
        core_free(c);
}

int main(void) {
        _cleanup_(table_publisher_freep) TablePublisher *p = NULL;

        /* Not a skip: without the table every client falls back to the bus, which is a bug here. */
        is_int(table_publisher_new(&p), 0, "table_publisher_new");
        if (!p)
                return done_testing();
        test_arguments(p);
        test_seals(table_publisher_fd(p));
        test_publish(p);
        test_reissue();
        return done_testing();
}
