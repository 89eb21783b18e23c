/* SPDX-License-Identifier: MIT */
#pragma once

/* Reading a clock in ns, the one way every layer does it. Header-only, libc only. */

#include <stdint.h>
#include <time.h>

#define NSEC_PER_USEC INT64_C(1000)
#define NSEC_PER_MSEC INT64_C(1000000)
#define NSEC_PER_SEC INT64_C(1000000000)
#define USEC_PER_SEC UINT64_C(1000000)

static inline int64_t timespec_to_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

/* The clocks we read for deadlines, backoffs and references (the POSIX clocks of every kernel
 * we run on) cannot fail: a failure is a bug, not a case, and reads as 0. */
static inline int64_t clock_now_ns(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return timespec_to_ns(&ts);
}
