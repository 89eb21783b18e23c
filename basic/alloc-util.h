/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Room for need elements of size bytes in *p, which holds *allocated of them: doubling (at least
 * first), so that n appends cost log2(n) copies. -ENOMEM when realloc() fails or the byte count
 * overflows, *p and *allocated unchanged then. */
int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size, size_t first);

/* The same for an array of any type: GREEDY_REALLOC(r->sync, r->sync_allocated, n + 1, 16). */
#define GREEDY_REALLOC(array, allocated, need, first) \
        greedy_realloc((void **) &(array), &(allocated), (need), sizeof(*(array)), (first))
