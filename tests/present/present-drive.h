/* SPDX-License-Identifier: MIT */
#pragma once

/* Driving the present source in a test as the daemon drives it (a header: each test links the
 * source's static library its own way). */

#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "domain-extra.h"
#include "present.h"
#include "time-util.h"

/* The value of one extra of a status, "" when it has none. */
static inline const char *present_extra(const DomainStatus *s, const char *key) {
        const char *v = domain_extra_text(s, key);

        return v ? v : "";
}

/* As the daemon does between bursts: dispatch whatever comes on the fd until until_ns. */
static inline void present_run_until(Domain *d, int64_t until_ns) {
        for (;;) {
                int64_t left_ns = until_ns - clock_now_ns(CLOCK_MONOTONIC);
                struct pollfd pfd = { .fd = domain_present_ops.watch_fd(d), .events = POLLIN };

                if (left_ns <= 0)
                        return;
                /* Disconnected: nothing to watch, only the time to pass. */
                if (poll(pfd.fd >= 0 ? &pfd : NULL, pfd.fd >= 0, (int) (left_ns / 1000000) + 1) > 0)
                        (void) domain_present_ops.dispatch(d);
        }
}
