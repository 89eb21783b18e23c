/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdlib.h>

#include "alloc-util.h"

int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size, size_t first) {
        size_t n = *allocated ? *allocated : first, bytes;
        void *q;

        if (need <= *allocated)
                return 0;
        while (n < need)
                if (__builtin_mul_overflow(n, 2, &n))
                        return -ENOMEM;
        if (__builtin_mul_overflow(n, size, &bytes))
                return -ENOMEM;
        q = realloc(*p, bytes);
        if (!q)
                return -ENOMEM;
        *p = q;
        *allocated = n;
        return 0;
}
