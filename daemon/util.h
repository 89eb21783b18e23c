/* SPDX-License-Identifier: MIT */
#pragma once

/* Small helpers of the daemon: _cleanup_ functions (libsystemd's own macros are not public; it
 * does export sd_event_unrefp, sd_bus_unrefp and friends) and clock reads. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_USEC INT64_C(1000)
#define NSEC_PER_SEC INT64_C(1000000000)
#define USEC_PER_SEC UINT64_C(1000000)

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline int close_nointr(int fd) {
        /* Linux closes the fd even when close() is interrupted: never retry. */
        return close(fd) < 0 ? -errno : 0;
}

static inline void closep(int *fd) {
        if (*fd >= 0)
                (void) close_nointr(*fd);
}

static inline int64_t timespec_to_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

/* The clocks the daemon reads work on every kernel it runs on: a failure is a bug, not a case. */
static inline int64_t now_ns(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return timespec_to_ns(&ts);
}
