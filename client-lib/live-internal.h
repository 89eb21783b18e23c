/* SPDX-License-Identifier: MIT */
#pragma once

/* The live handle (struct timeconv) and what its files share. Calls point down, never back:
 *   live.c          the handle: open/free, settings, the bus signals (its callbacks run from
 *                   live_dispatch()), the periodic look at the bus
 *   live-convert.c  the conversions: the pair cache, then the table, then D-Bus
 *   live-push.c     PushSnapshot;  live-domains.c  ListDomains
 *   live-table.c    the shared table's mapping (the conversions are inline, in live-table.h)
 *   live-bus.c      the D-Bus calls and the dispatch of what the bus delivered
 *   live-error.c    the daemon's message of the latest call */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "conv-record.h"
#include "timeconv.h"

#define LIVE_IDS_MAX 256
#define LIVE_NAME_MAX 64
/* Table conversions between two looks at the bus (one poll(), ~0.3 µs): a restarted daemon is
 * noticed within this many conversions at a cost well under 1 ns each. */
#define LIVE_CHECK_EVERY 1024
/* A poll() of the bus is a system call, a microsecond or more where the table conversions
 * between two checks take a few: at most one per interval, the heartbeat in between. */
#define LIVE_POLL_INTERVAL_NS (INT64_C(10) * 1000000)
#define LIVE_CALL_TIMEOUT_USEC (UINT64_C(10) * 1000000)

typedef struct LiveId {
        char name[LIVE_NAME_MAX];
        size_t table_index;             /* SIZE_MAX: not in the table */
        bool needs_hint;                /* wraps: unwrap to the occurrence nearest now */
} LiveId;

/* A pair of ids converted through the table lately: a copy of its record and the latch counter
 * it was copied at (shared_table_copy_current()), so that a conversion that repeats it reads one
 * word of shared memory and runs conv_record_convert() on a record in the handle's own cache
 * lines. Emptied whenever the mapping or the allowed paths change. */
#define LIVE_PAIR_SLOTS 32

typedef struct LivePair {
        const uint64_t *latch;          /* NULL: empty */
        uint64_t seq;
        unsigned from, to;              /* ids */
        unsigned hot_from;              /* from + 1 when rec has a hot form (the common loop runs
                                         * that), else 0: one compare says both */
        ConvHot hot_rec;
        ConvRecord rec;
} __attribute__((aligned(64))) LivePair;

static inline unsigned live_pair_slot(unsigned from, unsigned to) {
        return ((from << 3) ^ to) & (LIVE_PAIR_SLOTS - 1);
}

typedef enum LiveTableState {
        LIVE_TABLE_UNKNOWN,             /* ask the daemon at the next conversion */
        LIVE_TABLE_MAPPED,
        LIVE_TABLE_NONE,                /* this daemon offers none: D-Bus until its owner changes */
} LiveTableState;

typedef struct LiveTable {
        LiveTableState state;
        const void *mem;
        size_t size;
        uint64_t generation;            /* of the ids' table_index */
        bool resolved;                  /* ids resolved at generation */
        size_t hub_index;               /* monotonic_raw, the hub; SIZE_MAX: none */
} LiveTable;

struct timeconv {
        sd_bus *bus;
        sd_bus_slot *owner_slot;
        sd_bus_slot *signal_slot;
        int paths;
        int last_path;
        /* error_message belongs to the latest call: cleared at the start of each (a store to a
         * cache line the fast path writes anyway), set by live_error_save(). */
        bool error_set;
        unsigned checks_left;
        int64_t polled_ns;              /* CLOCK_MONOTONIC of live_check_bus()'s last poll() */
        unsigned owner_changes;         /* NameOwnerChanged seen so far */
        LiveTable table;
        LiveId ids[LIVE_IDS_MAX];
        unsigned n_ids;
        /* The last pair converted by name: a by-name call that repeats it (the common loop)
         * costs two strcmp() on top of the call by id. Ids live as long as the handle. */
        unsigned last_from, last_to;
        bool last_valid;
        LivePair pairs[LIVE_PAIR_SLOTS];
        timeconv_event_handler handler;
        void *userdata;
        /* The daemon's text for the latest D-Bus error on this handle ("" after a D-Bus call
         * that succeeded): timeconv_last_error_message(). Per handle, never global. */
        char error_message[TIMECONV_ERROR_MESSAGE_MAX];
        /* The unique name of org.timeconv.Clock1's owner ("": none), which alone may send the
         * daemon's signals; learned from NameOwnerChanged, or asked when a signal comes first. */
        char daemon_owner[256];
        bool daemon_owner_known;
        /* This daemon answered ConvertManyMemfd with UnknownMethod (or the bus passes no fds):
         * ConvertMany calls only, without making a memfd for each batch, until owner_changes
         * moves on from memfd_none_owner_changes (another daemon may have the method). */
        bool memfd_none;
        unsigned memfd_none_owner_changes;
};

/* live.c */
void live_emit(struct timeconv *tc, const struct timeconv_event *event);
/* Every LIVE_CHECK_EVERY table conversions: drops a table whose writer stopped beating, and
 * dispatches what the bus has, if anything (LIVE_POLL_INTERVAL_NS apart at most). */
void live_check_bus(struct timeconv *tc);

/* live-bus.c: each returns 0 or -errno, named D-Bus errors mapped to their errno. */
/* Handles whatever the bus delivered (signals, through live.c's callbacks) without blocking. */
int live_dispatch(struct timeconv *tc);
int live_bus_errno(const sd_bus_error *error, int r);
/* Sends the method call m and waits for its reply (in *ret, may be NULL): the daemon's message
 * kept for timeconv_last_error_message(), its error mapped, the signals meanwhile handled. */
int live_bus_call_message(struct timeconv *tc, sd_bus_message *m, sd_bus_message **ret);
int live_bus_convert(struct timeconv *tc, const char *from, const char *to, int64_t value,
                     int64_t *ret_value, int64_t *ret_uncertainty_ns);
int live_bus_convert_many(struct timeconv *tc, const char *from, const char *to, const int64_t *values,
                          size_t n, int64_t *out_values, int64_t *out_uncertainty_ns);
/* The same through ConvertManyMemfd: the values in a sealed memfd of ours, never on the bus.
 * -EOPNOTSUPP from a daemon without the method or a bus that passes no fds (remembered until the
 * daemon's owner changes), or when no memfd can be made: ConvertMany calls do without. */
int live_bus_convert_many_memfd(struct timeconv *tc, const char *from, const char *to, const int64_t *values,
                                size_t n, int64_t *out_values, int64_t *out_uncertainty_ns);
int live_bus_now(struct timeconv *tc, const char *domain, int64_t *ret_value, int64_t *ret_uncertainty_ns);
int live_bus_list_domains(struct timeconv *tc, struct timeconv_domain ***ret);
int live_bus_export(struct timeconv *tc, char **ret_json);
/* A dup of the fd GetSharedTable hands out; -EOPNOTSUPP when the daemon has no such method. */
int live_bus_get_shared_table(struct timeconv *tc, int *ret_fd);

/* live-error.c: keeps error's message (or clears it when no error is set) for
 * timeconv_last_error_message(). Called after every D-Bus call. */
void live_error_save(struct timeconv *tc, const sd_bus_error *error);

/* At the start of every call on a handle: a failure answered in this process (the table, a
 * check of the arguments) must not show the message of an earlier call. */
static inline void live_error_clear(struct timeconv *tc) {
        tc->error_set = false;
}

/* live-table.c (the conversions themselves are inline, in live-table.h) */
/* Forget the table (a new daemon, or it went away): the next conversion asks again. */
void live_table_drop(struct timeconv *tc);
/* Whether the daemon still publishes (its heartbeat is recent); true when nothing is mapped. */
bool live_table_alive(struct timeconv *tc, int64_t now_ns);
/* The set of domains changed: look the names up again. */
void live_table_invalidate(struct timeconv *tc);
/* Empties the pair cache (struct LivePair). */
void live_pairs_clear(struct timeconv *tc);
