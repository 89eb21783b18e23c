/* SPDX-License-Identifier: MIT */
#pragma once

/* Time as the sources need it: a clock read for deadlines, and when a source that lost its clock
 * (an X server gone, a GPU lost) tries again: the wait doubles after every failed attempt, up to
 * a cap, and starts over after a success. Each source keeps its own Backoff. */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "time-util.h"

typedef struct Backoff {
        int64_t min_ns, max_ns;
        int64_t wait_ns;                /* before the attempt after the next failure */
        int64_t next_ns;                /* no attempt before this */
} Backoff;

static inline void backoff_init(Backoff *b, int64_t min_ns, int64_t max_ns) {
        *b = (Backoff) { .min_ns = min_ns, .max_ns = max_ns < min_ns ? min_ns : max_ns, .wait_ns = min_ns };
}

static inline bool backoff_due(const Backoff *b, int64_t now_ns) {
        return now_ns >= b->next_ns;
}

/* An attempt worked: the next loss waits the least. */
static inline void backoff_succeeded(Backoff *b) {
        b->wait_ns = b->min_ns;
}

/* The clock went away: wait before trying, without growing the wait. */
static inline void backoff_defer(Backoff *b, int64_t now_ns) {
        b->next_ns = now_ns + b->wait_ns;
}

/* An attempt failed: wait, and wait twice as long after the next failure. */
static inline void backoff_failed(Backoff *b, int64_t now_ns) {
        backoff_defer(b, now_ns);
        b->wait_ns = b->wait_ns > b->max_ns / 2 ? b->max_ns : 2 * b->wait_ns;
}

