/* SPDX-License-Identifier: MIT */

/* The daemon's memfd (daemon/table-publish.c): sealed so that a client can map it read-only and
 * nothing else: no writable shared mapping (not even through /proc/self/fd), no mprotect to
 * write, no write(), no resize, no hole punched, no new seal. A private writable mapping is the
 * client's own copy. Then the table itself: what the daemon publishes, a client process reads;
 * a graph the table cannot describe gets a new memfd and the old table says it is retired. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared-table.h"
#include "table-publish.h"
#include "tap.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

static int64_t monotonic_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A graph of the hub and one ns node with an exact model: x = r + 1000 s. */
static void graph_fixture(ClockGraph *g, History *h, const char *name) {
        Model m = { .r_c_ns = 0, .x_c_ns = INT64_C(1000000000000), .half_ns = 10.0 };

        history_init(h, NULL);
        graph_init(g, "monotonic_raw");
        graph_add(g, name, &UNIT_NS, h, NULL);
        model_prepare(&m, &g->nodes[1].current);
        g->nodes[1].current_r_begin_ns = INT64_MIN;
        g->nodes[1].current_x_begin_ns = INT64_MIN;
        g->nodes[1].calibrated = true;
        graph_rebuild(g);
}

static void test_seals(int fd) {
        struct stat st = {};
        void *mem, *priv;
        char path[64];
        int fd2, seals = fcntl(fd, F_GET_SEALS);

        is_int(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL,
               "the memfd carries shrink, grow, future-write and seal seals");
        ok(fstat(fd, &st) == 0 && (size_t) st.st_size >= shared_table_size(GRAPH_NODES_MAX) &&
           st.st_size % sysconf(_SC_PAGESIZE) == 0, "its size holds GRAPH_NODES_MAX entries, in whole pages");
        ok((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "it is close-on-exec");

        errno = 0;
        ok(mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED &&
           errno == EPERM, "a writable shared mapping fails with EPERM");
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        fd2 = open(path, O_RDWR | O_CLOEXEC);
        errno = 0;
        ok(fd2 >= 0 && mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0) == MAP_FAILED &&
           errno == EPERM, "reopened read-write through /proc, it still does not map writable");
        if (fd2 >= 0)
                close(fd2);

        mem = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        ok(mem != MAP_FAILED, "a read-only shared mapping works");
        if (mem == MAP_FAILED)
                return;
        is_int(shared_table_validate(mem, (size_t) st.st_size), 0, "and holds a valid table");
        errno = 0;
        ok(mprotect(mem, (size_t) st.st_size, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
           "mprotect to write fails with EACCES");

        errno = 0;
        ok(write(fd, "x", 1) < 0 && errno == EPERM, "write() fails with EPERM");
        errno = 0;
        ok(pwrite(fd, "x", 1, 64) < 0 && errno == EPERM, "pwrite() fails with EPERM");
        errno = 0;
        ok(ftruncate(fd, st.st_size / 2) < 0 && errno == EPERM, "shrinking fails with EPERM");
        errno = 0;
        ok(ftruncate(fd, st.st_size * 2) < 0 && errno == EPERM, "growing fails with EPERM");
        errno = 0;
        ok(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size) < 0 && errno == EPERM,
           "punching a hole fails with EPERM");
        errno = 0;
        ok(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) < 0 && errno == EPERM, "adding a seal fails with EPERM");

        priv = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        ok(priv != MAP_FAILED, "a private writable mapping works (copy on write)");
        if (priv != MAP_FAILED) {
                memset(priv, 0, 64);
                is_int(shared_table_validate(mem, (size_t) st.st_size), 0, "writing it leaves the table intact");
                munmap(priv, (size_t) st.st_size);
        }
        munmap(mem, (size_t) st.st_size);
}

/* In a child process, as a client would: map the fd read-only and convert r = 5 s to "alpha".
 * Writes the answer (or the error) to out. */
static void client_convert(int fd, int out) {
        struct stat st;
        int64_t answer[3] = { -1, 0, 0 };
        size_t index;
        void *mem;

        if (fstat(fd, &st) == 0 &&
            (mem = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0)) != MAP_FAILED) {
                answer[0] = shared_table_validate(mem, (size_t) st.st_size);
                if (answer[0] == 0)
                        answer[0] = shared_table_find(mem, (size_t) st.st_size, "alpha", &index);
                if (answer[0] == 0)
                        answer[0] = shared_table_from_hub(mem, (size_t) st.st_size, index, INT64_C(5000000000),
                                                          &answer[1], &answer[2]);
                if (answer[0] == 0 && !shared_table_alive(mem, monotonic_ns()))
                        answer[0] = -ETIME;
        }
        (void) !write(out, answer, sizeof(answer));
}

static int run_client(int fd, int64_t *ret_value, int64_t *ret_unc) {
        int64_t answer[3] = { -EIO, 0, 0 };
        int p[2], status;
        pid_t pid;

        if (pipe(p) < 0)
                return -errno;
        pid = fork();
        if (pid == 0) {
                close(p[0]);
                client_convert(fd, p[1]);
                _exit(0);
        }
        close(p[1]);
        if (pid < 0 || read(p[0], answer, sizeof(answer)) != (ssize_t) sizeof(answer))
                answer[0] = -EIO;
        close(p[0]);
        if (pid > 0)
                waitpid(pid, &status, 0);
        *ret_value = answer[1];
        *ret_unc = answer[2];
        return (int) answer[0];
}

int main(void) {
        TablePublisher *p = NULL;
        static ClockGraph g, renamed;
        static History h;
        int64_t v = 0, unc = 0;
        struct stat st;
        void *old_mem;
        int fd, old_fd;

        is_int(table_publisher_new(&p), 0, "a publisher");
        if (!p)
                return done_testing();
        fd = table_publisher_fd(p);
        ok(fd >= 0, "it has an fd");
        test_seals(fd);

        graph_fixture(&g, &h, "alpha");
        is_int(run_client(fd, &v, &unc), -ENOENT, "before the first update a client finds no domain");
        is_int(table_publisher_set_max_gap(p, 0), -EINVAL, "a max gap of 0 is refused");
        is_int(table_publisher_set_max_gap(p, INT64_C(60000000000)), 0, "a max gap of 60 s");
        is_int(table_publisher_update(p, &g), 0, "update");
        is_int(run_client(fd, &v, &unc), 0, "a client process converts through the table");
        /* the model's 10 ns, the rounding to an integer and the record's 1 ns of numerics */
        ok(v == INT64_C(1005000000000) && unc == 12, "  5 s -> 1005 s +- 12 ns (%" PRId64 " +- %" PRId64 ")", v,
           unc);

        /* A graph the table cannot describe: a new memfd; the old table is retired. */
        old_fd = dup(fd);
        ok(old_fd >= 0 && fstat(old_fd, &st) == 0, "a client keeps the old fd");
        old_mem = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, old_fd, 0);
        graph_fixture(&renamed, &h, "beta");
        is_int(table_publisher_update(p, &renamed), 0, "update with a renamed node");
        ok(table_publisher_fd(p) >= 0 && old_mem != MAP_FAILED, "the publisher has an fd");
        {
                struct stat st_new;

                ok(fstat(table_publisher_fd(p), &st_new) == 0 && st_new.st_ino != st.st_ino,
                   "it is a new memfd");
                is_int(fcntl(table_publisher_fd(p), F_GET_SEALS),
                       F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL, "  sealed as well");
        }
        if (old_mem != MAP_FAILED) {
                is_int(shared_table_validate(old_mem, (size_t) st.st_size), -ESTALE,
                       "the old table validates as retired: -ESTALE");
                is_int(shared_table_from_hub(old_mem, (size_t) st.st_size, 1, 5, &v, &unc), -ESTALE,
                       "  and converts nothing");
        }
        is_int(run_client(table_publisher_fd(p), &v, &unc), -ENOENT, "the new table has no alpha");

        {
                int new_fd = dup(table_publisher_fd(p));
                void *new_mem = new_fd >= 0 ? mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, new_fd, 0)
                                            : MAP_FAILED;

                p = table_publisher_free(p);
                ok(p == NULL && table_publisher_free(NULL) == NULL, "free returns NULL");
                ok(new_mem != MAP_FAILED && shared_table_validate(new_mem, (size_t) st.st_size) == -ESTALE,
                   "a daemon that leaves retires its table: clients see -ESTALE");
                if (new_mem != MAP_FAILED)
                        munmap(new_mem, (size_t) st.st_size);
                if (new_fd >= 0)
                        close(new_fd);
        }
        is_int(table_publisher_fd(NULL), -ENODEV, "no publisher, no fd: -ENODEV");
        if (old_mem != MAP_FAILED)
                munmap(old_mem, (size_t) st.st_size);
        if (old_fd >= 0)
                close(old_fd);
        return done_testing();
}
