/* SPDX-License-Identifier: MIT */
#pragma once

/* The arrays of a long capture are hundreds of MB, filled once. In 4 KiB pages, the page faults
 * of filling them are most of the cost of reading a frame log (in a VM a fault costs µs): huge
 * pages take one per 2 MiB. A hint the kernel may ignore (transparent huge pages off). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* Arrays that grow by appending (a window's rows, Android's frames) and the arrays sized once
 * for a series. Below FRAMES_MAPPED_MIN bytes they are malloc()'s; from there on each is a
 * mapping of its own, 2 MiB aligned and hinted once. (malloc()'s memory of that size is a
 * mapping of 4 KiB pages, and on a VM a fault of one costs tens of us: the first 4 MiB of an
 * array took a thousand of them.) A growing one reserves address space for
 * far more than it holds (pages are only committed when touched), so it never moves again:
 * realloc() moves huge pages with mremap() to an address that is not 2 MiB aligned, where they
 * are split, and every later pass over the array ran ten to thirty times slower. */
#define FRAMES_MAPPED_MIN ((size_t) 256 << 10)

/* What a growing array reserves once it is mapped: 16 M rows of a window, all but what is
 * touched only address space. */
#define FRAMES_RESERVE ((size_t) 1 << 30)

static inline size_t frames_mapped_size(size_t bytes) {
        return (bytes + FRAMES_HUGE_PAGE - 1) & ~(size_t) (FRAMES_HUGE_PAGE - 1);
}

/* A private anonymous mapping of size bytes (a multiple of 2 MiB) at a 2 MiB boundary, so that
 * all of it can be huge pages. */
static inline void *frames_map_aligned(size_t size) {
        uint8_t *p, *start;
        size_t head;

        if (size > SIZE_MAX - FRAMES_HUGE_PAGE)
                return NULL;
        p = mmap(NULL, size + FRAMES_HUGE_PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
                return NULL;
        start = (uint8_t *) (((uintptr_t) p + FRAMES_HUGE_PAGE - 1) & ~(FRAMES_HUGE_PAGE - 1));
        head = (size_t) (start - p);
        if (head > 0)
                (void) munmap(p, head);
        (void) munmap(start + size, FRAMES_HUGE_PAGE - head);
        (void) madvise(start, size, MADV_HUGEPAGE);
        return start;
}

/* A small array (windows, a window's wide latencies, a dump's rows) with room for element n:
 * doubled by realloc, from first. 0 or -ENOMEM (the array as it was). */
static inline int frames_small_grow(void **array, size_t *n_allocated, size_t n, size_t size, size_t first) {
        size_t m;
        void *grown;

        if (n < *n_allocated)
                return 0;
        m = *n_allocated ? *n_allocated * 2 : first;
        grown = reallocarray(*array, m, size);
        if (!grown)
                return -ENOMEM;
        *array = grown;
        *n_allocated = m;
        return 0;
}

/* Releases what frames_array_grow() made (NULL too). */
static inline void frames_array_free(void *array, size_t n_allocated, size_t size) {
        size_t bytes = n_allocated * size;

        if (!array)
                return;
        if (bytes < FRAMES_MAPPED_MIN)
                free(array);
        else
                /* n_allocated is the mapping's size rounded down to whole elements, each less
                 * than 2 MiB: rounded up again, the mapping. */
                (void) munmap(array, frames_mapped_size(bytes));
}

/* *array grown to at least n elements of size (*n_allocated: how many it has room for), its
 * elements kept. With reserve, room for far more at once, for an array that keeps growing. 0,
 * or -ENOMEM with *array untouched. */
static inline int frames_array_grow(void **array, size_t *n_allocated, size_t n, size_t size, bool reserve) {
        size_t old_bytes = *n_allocated * size, bytes, m = 0, want[3], k = 0;
        void *p = NULL;

        if (n <= *n_allocated)
                return 0;
        if (size == 0 || n > SIZE_MAX / 8 / size)
                return -ENOMEM;
        bytes = n * size;
        if (bytes < FRAMES_MAPPED_MIN) {
                /* Still malloc()'s (old_bytes is smaller yet). */
                p = realloc(*array, bytes);
                if (!p)
                        return -ENOMEM;
                *array = p;
                *n_allocated = n;
                return 0;
        }
        /* A growing array: the reservation, or four times what it needs; any array: what it
         * needs, when address space is short (a 32-bit process, strict overcommit). */
        if (reserve && bytes < FRAMES_RESERVE)
                want[k++] = FRAMES_RESERVE;
        if (reserve && bytes <= SIZE_MAX / 8)
                want[k++] = frames_mapped_size(4 * bytes);
        want[k++] = frames_mapped_size(bytes);
        for (size_t i = 0; i < k && !p; i++) {
                m = want[i];
                p = frames_map_aligned(m);
        }
        if (!p)
                return -ENOMEM;
        if (*array)
                memcpy(p, *array, old_bytes);
        frames_array_free(*array, *n_allocated, size);
        *array = p;
        *n_allocated = m / size;
        return 0;
}

/* An array of n elements of size (n 0: one) that is not going to grow, zeroed when zero (a new
 * mapping is already): frames_array_grow()'s memory, huge pages from FRAMES_MAPPED_MIN bytes on.
 * Released with frames_array_free(p, n, size), the same n. NULL when out of memory. */
static inline void *frames_array_new(size_t n, size_t size, bool zero) {
        size_t allocated = 0;
        void *p = NULL;

        n += n == 0;
        if (frames_array_grow(&p, &allocated, n, size, false) < 0)
                return NULL;
        if (zero && n * size < FRAMES_MAPPED_MIN)
                memset(p, 0, n * size);
        return p;
}
