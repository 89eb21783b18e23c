/* SPDX-License-Identifier: MIT */

/* The shared table's slow side: fetching it (a sealed memfd from GetSharedTable) and mapping it
 * read-only, looking the ids up in it, dropping it when its daemon left. The conversions on it
 * are inline, in live-table.h. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "live-table.h"

#define HUB_NAME "monotonic_raw"

/* Linux 5.1; older C libraries lack the name. */
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/* What makes a mapping of the fd safe to read: it cannot shrink under us (a page past the new
 * end is SIGBUS at the next conversion) and nobody else can map it writable. Only memfds (shmem)
 * carry seals; anything else (a file on FUSE, whose page faults a server may never answer) is
 * refused with them. Growing is harmless: we map the size we saw. */
static int check_sealed(int fd) {
        int seals = fcntl(fd, F_GET_SEALS);

        if (seals < 0)
                return errno == EINVAL ? -EPERM : -errno;
        if (!(seals & F_SEAL_SHRINK) || !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
                return -EPERM;
        return 0;
}

void live_pairs_clear(struct timeconv *tc) {
        for (unsigned i = 0; i < LIVE_PAIR_SLOTS; i++)
                tc->pairs[i] = (LivePair) {};
}

void live_table_drop(struct timeconv *tc) {
        live_pairs_clear(tc);
        if (tc->table.mem)
                munmap((void *) tc->table.mem, tc->table.size);
        tc->table = (LiveTable) { .state = LIVE_TABLE_UNKNOWN, .hub_index = SIZE_MAX };
}

void live_table_invalidate(struct timeconv *tc) {
        live_pairs_clear(tc);
        tc->table.resolved = false;
}

/* A value of a short-wrapping domain (the record asks for it) unwraps near now: the caller reads
 * the clock for those only. */
static void resolve_one(const void *mem, size_t size, size_t hub, LiveId *id) {
        ConvRecord rec;
        size_t index;

        id->table_index = SIZE_MAX;
        id->needs_hint = true;
        if (shared_table_find(mem, size, id->name, &index) < 0)
                return;
        /* Units never change for a name within one generation. */
        if (hub != SIZE_MAX && shared_table_read_pair(mem, size, hub, index, &rec) >= 0)
                id->needs_hint = (rec.flags & CONV_RECORD_HINT_NOW) != 0;
        id->table_index = index;
}

/* Looks every id up in the table as of its current generation. */
static void resolve(struct timeconv *tc) {
        const void *mem = tc->table.mem;
        size_t size = tc->table.size, hub;
        SharedTableNode node;

        live_pairs_clear(tc);
        tc->table.generation = shared_table_generation(mem);
        /* now() reads the hub's own clock here; only monotonic_raw has one we know. */
        tc->table.hub_index = SIZE_MAX;
        if (shared_table_find(mem, size, HUB_NAME, &hub) >= 0 &&
            shared_table_read_node(mem, size, hub, &node) >= 0 && (node.flags & SHARED_TABLE_NODE_HUB))
                tc->table.hub_index = hub;
        for (unsigned i = 0; i < tc->n_ids; i++)
                resolve_one(mem, size, tc->table.hub_index, &tc->ids[i]);
        tc->table.resolved = true;
}

static int map_table(struct timeconv *tc) {
        unsigned owner_changes = tc->owner_changes;
        _cleanup_close_ int fd = -1;
        struct stat st;
        void *mem;
        int r;

        r = live_bus_get_shared_table(tc, &fd);
        /* The owner changed while we asked: the fd may be the old daemon's. Ask again later. */
        if (r >= 0 && owner_changes != tc->owner_changes)
                return -EAGAIN;
        /* An older daemon (no such method) or one without a table (Unavailable): D-Bus it is,
         * until another daemon takes over. */
        if (r == -EOPNOTSUPP || r == -ENODEV) {
                tc->table.state = LIVE_TABLE_NONE;
                return -EOPNOTSUPP;
        }
        if (r < 0)
                return r;
        /* Before fstat, which a FUSE server could already stall. Not sealed: D-Bus, for this
         * daemon. */
        r = check_sealed(fd);
        if (r < 0) {
                tc->table.state = LIVE_TABLE_NONE;
                return r;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0)
                return -EBADMSG;
        mem = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (mem == MAP_FAILED)
                return -errno;
        r = shared_table_validate(mem, (size_t) st.st_size);
        if (r < 0) {
                /* Not a table we can read (another layout version): D-Bus it is, for this daemon. */
                munmap(mem, (size_t) st.st_size);
                tc->table.state = LIVE_TABLE_NONE;
                return r;
        }
        tc->table.mem = mem;
        tc->table.size = (size_t) st.st_size;
        tc->table.state = LIVE_TABLE_MAPPED;
        resolve(tc);
        return 0;
}

int live_table_prepare(struct timeconv *tc) {
        if (tc->table.state == LIVE_TABLE_NONE)
                return -EOPNOTSUPP;
        if (tc->table.state != LIVE_TABLE_MAPPED)
                return map_table(tc);
        if (!tc->table.resolved)
                resolve(tc);
        return 0;
}

bool live_table_refresh(struct timeconv *tc) {
        if (tc->table.state != LIVE_TABLE_MAPPED || shared_table_generation(tc->table.mem) == tc->table.generation)
                return false;
        resolve(tc);
        return true;
}

bool live_table_alive(struct timeconv *tc, int64_t now_ns) {
        if (tc->table.state != LIVE_TABLE_MAPPED)
                return true;
        return shared_table_alive(tc->table.mem, now_ns);
}
