/* SPDX-License-Identifier: MIT */
#pragma once

/* Waiting for what a libtimeconv handle hears, without sleeping: its fd, then timeconv_process(). */

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>

#include "time-util.h"
#include "timeconv.h"

/* Handles tc's bus until *counter (bumped by the event handler) reaches want; -ETIMEDOUT after
 * timeout_ms, -EIO when the handle fails. */
static inline int live_wait(struct timeconv *tc, const unsigned *counter, unsigned want, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;

        while (*counter < want) {
                struct pollfd p = { .fd = timeconv_get_fd(tc), .events = POLLIN };
                int64_t left_ms = (deadline_ns - clock_now_ns(CLOCK_MONOTONIC)) / 1000000;

                if (left_ms <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int) left_ms) < 0 && errno != EINTR)
                        return -errno;
                if (timeconv_process(tc) < 0)
                        return -EIO;
        }
        return 0;
}
