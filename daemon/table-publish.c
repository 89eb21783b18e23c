/* SPDX-License-Identifier: MIT */

/* The shared table's memfd. Order matters: create, size, map writable, then seal; with
 * F_SEAL_FUTURE_WRITE our own mapping stays writable while every later writable mapping, write()
 * and mprotect(PROT_WRITE) of a read-only mapping fails, in this process and in every client. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "shared-table.h"
#include "table-publish.h"
#include "cleanup.h"
#include "time-util.h"

/* Linux 5.1; older C libraries lack the name. */
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define TABLE_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)

struct TablePublisher {
        int fd;
        void *mem;
        size_t size;
        int64_t max_gap_ns;
};

/* A sealed memfd holding an empty table, mapped writable at *ret_mem. */
static int table_create(int *ret_fd, void **ret_mem, size_t *ret_size) {
        _cleanup_(closep) int fd = -EBADF;
        long page = sysconf(_SC_PAGESIZE);
        size_t size = shared_table_size(GRAPH_NODES_MAX);
        void *mem;
        int r;

        if (page <= 0)
                page = 4096;
        size = (size + (size_t) page - 1) / (size_t) page * (size_t) page;

        fd = memfd_create("timeconv-table", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0)
                return -errno;
        mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mem == MAP_FAILED)
                return -errno;
        r = shared_table_init(mem, size, GRAPH_NODES_MAX);
        if (r >= 0 && fcntl(fd, F_ADD_SEALS, TABLE_SEALS) < 0)
                r = -errno;
        if (r < 0) {
                (void) munmap(mem, size);
                return r;
        }

        *ret_fd = fd;
        fd = -EBADF;
        *ret_mem = mem;
        *ret_size = size;
        return 0;
}

static void table_destroy(TablePublisher *p) {
        if (p->mem) {
                shared_table_retire(p->mem);
                (void) munmap(p->mem, p->size);
                p->mem = NULL;
        }
        if (p->fd >= 0)
                (void) close_nointr(p->fd);
        p->fd = -EBADF;
}

int table_publisher_new(TablePublisher **ret) {
        _cleanup_(table_publisher_freep) TablePublisher *p = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->fd = -EBADF;
        p->max_gap_ns = TABLE_PUBLISHER_MAX_GAP_NS_DEFAULT;

        r = table_create(&p->fd, &p->mem, &p->size);
        if (r < 0)
                return r;

        *ret = p;
        p = NULL;
        return 0;
}

TablePublisher *table_publisher_free(TablePublisher *p) {
        if (!p)
                return NULL;
        table_destroy(p);
        free(p);
        return NULL;
}

int table_publisher_update(TablePublisher *p, const ClockGraph *g) {
        int r;

        if (!p || !g)
                return -EINVAL;
        if (!p->mem)
                return -ENODEV;

        r = shared_table_publish(p->mem, p->size, g);
        if (r == SHARED_TABLE_REPLACE) {
                /* Clients hold indices into the old table: give them a new one instead. */
                TablePublisher fresh = { .fd = -EBADF, .max_gap_ns = p->max_gap_ns };

                r = table_create(&fresh.fd, &fresh.mem, &fresh.size);
                if (r < 0)
                        return r;
                table_destroy(p);
                *p = fresh;
                r = shared_table_publish(p->mem, p->size, g);
        }
        if (r < 0)
                return r;

        shared_table_heartbeat(p->mem, clock_now_ns(CLOCK_MONOTONIC), p->max_gap_ns);
        return 0;
}

int table_publisher_set_max_gap(TablePublisher *p, int64_t max_gap_ns) {
        if (!p || max_gap_ns <= 0)
                return -EINVAL;
        p->max_gap_ns = max_gap_ns;
        return 0;
}

int table_publisher_fd(TablePublisher *p) {
        if (!p || p->fd < 0)
                return -ENODEV;
        return p->fd;
}
