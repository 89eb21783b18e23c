/* SPDX-License-Identifier: MIT */

/* A writer that turns hostile after the reader validated the table: it raises n_nodes and moves
 * the hub far beyond the entries the reader mapped. The table sits right before a guard page, so
 * a reader that bounds its indices by the header's counts instead of its own mapping's size
 * reads the guard page and dies of SIGSEGV; a reader that clamps gets errors. The reads run in
 * a child, so that a crash is a failed test and not a lost one. */

#define _GNU_SOURCE

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared-table.h"
#include "tap.h"

#define CAPACITY 3

typedef enum Read {
        READ_FIND,
        READ_COUNT,
        READ_LAST,
        READ_BEYOND,
        READ_CONVERT_TO_BEYOND,
        READ_CONVERT_FROM_BEYOND,
        READ_FROM_HUB_BAD_HUB,
        READ_FROM_HUB_TO_BEYOND,
} Read;

typedef struct Table {
        void *map;              /* the table, then one PROT_NONE page */
        size_t map_size;
        void *mem;
        size_t size;            /* what the reader mapped: whole pages */
} Table;

static int table_new(Table *ret) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t size = (shared_table_size(CAPACITY) + page - 1) / page * page;
        static History h;
        ClockGraph g;
        void *map;

        map = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED)
                return -errno;
        if (mprotect((char *) map + size, page, PROT_NONE) < 0)
                return -errno;
        history_init(&h, NULL);
        graph_init(&g, "monotonic_raw");
        if (graph_add(&g, "monotonic", &UNIT_NS, &h, NULL) < 0 || shared_table_init(map, size, CAPACITY) < 0 ||
            shared_table_publish(map, size, &g) < 0)
                return -EINVAL;
        *ret = (Table) { .map = map, .map_size = size + page, .mem = map, .size = size };
        return 0;
}

/* A node index whose pairs lie beyond any mapping (the layout has rows of
 * SHARED_TABLE_CAPACITY_MAX pairs: this row starts past the end of the largest table). */
static size_t beyond(const Table *t) {
        return SHARED_TABLE_CAPACITY_MAX;
}

static int reader_call(const Table *t, Read what) {
        size_t far = beyond(t), last = shared_table_capacity(t->size), index;
        SharedTableNode node;
        int64_t v, u;

        switch (what) {
        case READ_FIND:
                return shared_table_find(t->mem, t->size, "nope", &index);
        case READ_COUNT:
                return shared_table_count(t->mem, t->size) <= shared_table_capacity(t->size) ? 0 : -ERANGE;
        case READ_LAST:
                return shared_table_read_node(t->mem, t->size, last - 1, &node);
        case READ_BEYOND:
                return shared_table_read_node(t->mem, t->size, last, &node);
        case READ_CONVERT_TO_BEYOND:
                return shared_table_convert(t->mem, t->size, 1, far, 5, INT64_MIN, &v, &u);
        case READ_CONVERT_FROM_BEYOND:
                return shared_table_convert(t->mem, t->size, far, 1, 5, INT64_MIN, &v, &u);
        case READ_FROM_HUB_BAD_HUB:
                return shared_table_from_hub(t->mem, t->size, 1, 5, &v, &u);
        case READ_FROM_HUB_TO_BEYOND:
                return shared_table_from_hub(t->mem, t->size, far, 5, &v, &u);
        }
        return -EINVAL;
}

/* One reader call in a child: its answer, or "died" with the signal that ended it. */
static void check_read(const Table *t, Read what, int want, const char *name) {
        int pipefd[2], status = 0, answer = 1;
        pid_t pid;

        if (pipe(pipefd) < 0) {
                ok(false, "%s: pipe: %m", name);
                return;
        }
        pid = fork();
        if (pid == 0) {
                answer = reader_call(t, what);
                _exit(write(pipefd[1], &answer, sizeof(answer)) == (ssize_t) sizeof(answer) ? 0 : 3);
        }
        close(pipefd[1]);
        if (pid < 0 || read(pipefd[0], &answer, sizeof(answer)) != (ssize_t) sizeof(answer))
                answer = 1;
        close(pipefd[0]);
        if (pid > 0)
                (void) waitpid(pid, &status, 0);
        if (pid > 0 && WIFSIGNALED(status)) {
                ok(false, "%s", name);
                diag("  the reader died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
                return;
        }
        is_int(answer, want, name);
}

int main(void) {
        SharedTableHeader *h;
        size_t index;
        Table t;

        is_int(table_new(&t), 0, "a table of three entries before a guard page");
        h = t.mem;
        is_int(shared_table_validate(t.mem, t.size), 0, "it validates");
        ok(shared_table_capacity(t.size) >= CAPACITY && shared_table_capacity(t.size) < beyond(&t),
           "the mapping's capacity covers the table and stops before the guard page");
        ok(shared_table_capacity(sizeof(SharedTableHeader) - 1) == 0 &&
           shared_table_capacity(SIZE_MAX) == SHARED_TABLE_CAPACITY_MAX, "capacity of a short map and a huge one");
        ok(shared_table_find(t.mem, t.size, "monotonic", &index) == 0 && index == 1, "find monotonic");

        /* Now the writer lies: more nodes than any mapping holds, the hub beyond them, and valid
         * nodes after the hub and monotonic up to the last slot, so that a search goes on. */
        for (size_t i = 2; i < SHARED_TABLE_CAPACITY_MAX; i++)
                memcpy((char *) t.mem + sizeof(SharedTableHeader) + i * sizeof(SharedTableNode),
                       (char *) t.mem + sizeof(SharedTableHeader) + sizeof(SharedTableNode), sizeof(SharedTableNode));
        __atomic_store_n(&h->n_nodes, UINT32_MAX, __ATOMIC_RELEASE);
        __atomic_store_n(&h->hub, (uint32_t) beyond(&t), __ATOMIC_RELEASE);
        __atomic_store_n(&h->capacity, UINT32_MAX, __ATOMIC_RELEASE);

        check_read(&t, READ_FIND, -ENOENT, "find an unknown name: -ENOENT");
        check_read(&t, READ_COUNT, 0, "count is at most the mapping's capacity");
        check_read(&t, READ_LAST, 0, "read_node of the last entry the mapping holds");
        check_read(&t, READ_BEYOND, -ENOENT, "read_node beyond the mapping: -ENOENT");
        check_read(&t, READ_CONVERT_TO_BEYOND, -ENOENT, "convert to an index beyond the mapping: -ENOENT");
        check_read(&t, READ_CONVERT_FROM_BEYOND, -ENOENT, "convert from an index beyond the mapping: -ENOENT");
        check_read(&t, READ_FROM_HUB_BAD_HUB, -ENOENT, "from_hub with the hub beyond the mapping: -ENOENT");
        check_read(&t, READ_FROM_HUB_TO_BEYOND, -ENOENT, "from_hub to an index beyond the mapping: -ENOENT");

        munmap(t.map, t.map_size);
        return done_testing();
}
