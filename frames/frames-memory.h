/* SPDX-License-Identifier: MIT */
#pragma once

/* The arrays of a long capture are hundreds of MB, filled once. In 4 KiB pages, the page faults
 * of filling them are most of the cost of reading a frame log (in a VM a fault costs µs): huge
 * pages take one per 2 MiB. A hint the kernel may ignore (transparent huge pages off). */

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define FRAMES_HUGE_PAGE ((uintptr_t) 2 << 20)
#define FRAMES_PAGE ((uintptr_t) 4096)

/* The whole mapping malloc made for p (its pages, not its 2 MiB ranges): a hint on part of a
 * mapping splits it, and realloc can then no longer grow it in place (mremap) but copies. */
static inline void frames_huge_pages(void *p, size_t size) {
        uintptr_t start = (uintptr_t) p & ~(FRAMES_PAGE - 1);
        uintptr_t end = ((uintptr_t) p + size + FRAMES_PAGE - 1) & ~(FRAMES_PAGE - 1);

        if (p && size >= 4 * FRAMES_HUGE_PAGE)
                (void) madvise((void *) start, end - start, MADV_HUGEPAGE);
}
