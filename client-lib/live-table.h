/* SPDX-License-Identifier: MIT */
#pragma once

/* The fast path: conversions through the daemon's shared table, mapped read-only, with
 * calibrate/'s reader and no system call. Inline, so that the public entry points pay one call
 * (theirs) and the two hops of math. An index found in a table keeps naming its domain for the
 * table's life (the daemon only appends, and retires a table it cannot keep so), so the table's
 * generation is looked at only when a name was not found. */

#include <errno.h>
#include <time.h>

#include "time-util.h"
#include "live-internal.h"
#include "shared-table.h"

/* Maps the table if needed and looks the ids up: -EOPNOTSUPP when this daemon has none. */
int live_table_prepare(struct timeconv *tc);
/* The generation changed since the ids were looked up: looks them up again, returns true. */
bool live_table_refresh(struct timeconv *tc);


static inline int live_table_ready_(struct timeconv *tc) {
        if (__builtin_expect(tc->table.state != LIVE_TABLE_MAPPED || !tc->table.resolved, 0))
                return live_table_prepare(tc);
        return 0;
}

static inline int live_table_convert(struct timeconv *tc, unsigned from, unsigned to, int64_t value,
                                     int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        const LiveId *src = &tc->ids[from], *dst = &tc->ids[to];
        int r;

        r = live_table_ready_(tc);
        if (__builtin_expect(r < 0, 0))
                return r;
        if (__builtin_expect(src->table_index == SIZE_MAX || dst->table_index == SIZE_MAX, 0) &&
            (!live_table_refresh(tc) || src->table_index == SIZE_MAX || dst->table_index == SIZE_MAX))
                return -ENOENT;
        /* Reading the clock costs as much as the conversion: only for values that wrap. */
        r = shared_table_convert(tc->table.mem, tc->table.size, src->table_index, dst->table_index, value,
                                 src->needs_hint ? clock_now_ns(CLOCK_MONOTONIC_RAW) : INT64_MIN, ret_value, ret_uncertainty_ns);
        if (__builtin_expect(r == -ESTALE, 0))
                live_table_drop(tc);
        return r;
}

static inline int live_table_now(struct timeconv *tc, unsigned domain, int64_t *ret_value,
                                 int64_t *ret_uncertainty_ns) {
        const LiveId *dst = &tc->ids[domain];
        int r;

        r = live_table_ready_(tc);
        if (__builtin_expect(r < 0, 0))
                return r;
        /* The hub's own clock is read here: only for monotonic_raw do we know which it is. */
        if (__builtin_expect(tc->table.hub_index == SIZE_MAX, 0))
                return -EOPNOTSUPP;
        if (__builtin_expect(dst->table_index == SIZE_MAX, 0) &&
            (!live_table_refresh(tc) || dst->table_index == SIZE_MAX))
                return -ENOENT;
        r = shared_table_from_hub(tc->table.mem, tc->table.size, dst->table_index, clock_now_ns(CLOCK_MONOTONIC_RAW),
                                  ret_value, ret_uncertainty_ns);
        if (__builtin_expect(r == -ESTALE, 0))
                live_table_drop(tc);
        return r;
}
