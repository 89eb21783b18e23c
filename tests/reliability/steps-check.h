/* SPDX-License-Identifier: MIT */
#pragma once

/* The checks the step tests share (TAP lines, in steps-check.c). One step: the shim moves some
 * clocks and wakes the daemon; every moved domain must be announced within DETECT_MS with its
 * jump inside an honest bound, and none of the others. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"
#include "tap.h"

#define STEPS_DETECT_MS 1000
/* Far below any jump the tests make: an answer from the wrong side of a step misses by it. */
#define STEPS_MAX_UNCERTAINTY_NS INT64_C(1000000)
/* The widest bracket a daemon sample may have and still be among its best (a loaded VM). */
#define STEPS_SAMPLE_SLACK_NS INT64_C(50000)
/* The estimator's prior bound on a rate error: no model's bound grows faster. */
#define STEPS_MAX_RATE_ERROR 1e-3

/* The daemon runs with a calibration every 30 s: a signal within a second can only come from
 * the burst that the wake-up started. */
#define STEPS_DAEMON_ARGS "--no-x11", "--no-gpu", "--cadence", "30", "--idle-cadence", "30"

typedef struct StepsDomain {
        const char *name;               /* the daemon's domain, and the shim's clock group */
        clockid_t id;
} StepsDomain;

static const char *const steps_posix_domains[] = {
        "realtime", "realtime_coarse", "monotonic", "monotonic_coarse", "monotonic_raw", "boottime", "tai", NULL,
};

/* steps_start() and its TAP line: what (the daemon's set-up) and "ready", or why not. */
int steps_tap_start(const char *daemon, const char *shim, const char *const *args, const char *what, Steps **ret);

uint64_t steps_uncertainty_now(Steps *s, const char *domain);

bool steps_is_moved(const StepsDomain *moved, size_t n_moved, const char *name);

/* Moves the clocks of moved by jump_ns and checks what the daemon says about it. The coarse
 * variant of realtime moves with it (the shim's group), and is announced or not: it is not
 * checked. */
void steps_check_step(Steps *s, int64_t jump_ns, const StepsDomain *moved, size_t n_moved);
