/* SPDX-License-Identifier: MIT */
#pragma once

/* The daemon's side of the shared table (calibrate/shared-table.h): a memfd that the daemon maps
 * writable and then seals (no shrinking, no growing, no new writable mapping or write(), no
 * more seals), so that a client given the fd (GetSharedTable) can only map it read-only. */

#include <stdint.h>

#include "graph.h"

/* How long the daemon may go without publishing, by default: the scheduler's idle cadence is
 * 30 s. A client takes a table whose heartbeat is older than the gap for a dead daemon's. */
#define TABLE_PUBLISHER_MAX_GAP_NS_DEFAULT (INT64_C(90) * 1000000000)

typedef struct TablePublisher TablePublisher;

int table_publisher_new(TablePublisher **ret);
/* Retires the table (clients' readers answer -ESTALE from then on) and unmaps it. Accepts
 * NULL; returns NULL. */
TablePublisher *table_publisher_free(TablePublisher *p);

static inline void table_publisher_freep(TablePublisher **p) {
        table_publisher_free(*p);
}

/* Writes the graph's current state (after every burst, availability or identity change) and the
 * heartbeat. A graph the table cannot describe (a node gone or renamed) gets a new memfd, and
 * the old one is retired: table_publisher_fd() changes then. */
int table_publisher_update(TablePublisher *p, const ClockGraph *g);

/* The longest gap between two updates the daemon promises (twice the idle cadence is safe);
 * -EINVAL for <= 0. Takes effect at the next update. */
int table_publisher_set_max_gap(TablePublisher *p, int64_t max_gap_ns);

/* The fd to hand a client (borrowed: sd-bus dups it when it sends it); -ENODEV without one. */
int table_publisher_fd(TablePublisher *p);
