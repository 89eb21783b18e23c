/* SPDX-License-Identifier: MIT */
#pragma once

/* The test's side of clockshift.so (clockshift.c): commands over its SEQPACKET socket, and the
 * formula the shim applies, so that a test computes the truth of the shifted clocks exactly. */

#include <stddef.h>
#include <stdint.h>

#define SHIM_CLOCKS_MAX 8

/* One clock group after a command: value' = value + offset_ns + (value - anchor_ns) * rate_ppb / 1e9. */
typedef struct ShimClock {
        char name[32];
        int64_t offset_ns;
        int64_t rate_ppb;
        int64_t anchor_ns;
} ShimClock;

typedef struct ShimReply {
        int64_t raw_ns;                 /* CLOCK_MONOTONIC_RAW once the change was in force */
        unsigned wakes;                 /* cancel-on-set timers the shim fired */
        ShimClock clocks[SHIM_CLOCKS_MAX];
        size_t n_clocks;
} ShimReply;

int shim_connect(const char *path, int *ret_fd);

/* Sends one command ("step DELTA_NS CLOCKS [wake]", "rate PPB CLOCKS [wake]", "wake") and
 * reads the reply. -EIO when the shim refused it, -EBADMSG for a reply we cannot read. */
int shim_command(int fd, const char *command, ShimReply *ret);

/* The group of a reply that holds the clock called name, or NULL. */
const ShimClock *shim_reply_clock(const ShimReply *reply, const char *name);

/* The shifted value of a clock that reads value_ns (exactly what the shim computes). */
int64_t shim_shifted_ns(const ShimClock *c, int64_t value_ns);
