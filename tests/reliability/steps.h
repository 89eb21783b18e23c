/* SPDX-License-Identifier: MIT */
#pragma once

/* The fixture of the step tests and bench-steps: a private bus, the real timeconvd with
 * clockshift.so preloaded (only the daemon gets it: the test reads the true clocks), a
 * connection to the shim's control socket, and a record of every Discontinuity signal. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "clock-client.h"
#include "harness.h"
#include "shim-control.h"

#define STEPS_EVENTS_MAX 256
#define STEPS_WAIT_MS 5000

typedef struct StepEvent {
        char domain[64];
        int64_t monotonic_ns;           /* the daemon's CLOCK_MONOTONIC at the step, from the signal */
        int64_t step_ns;
        char kind[16];                  /* "step", "rate", "restart" */
        int64_t received_ns;            /* our CLOCK_MONOTONIC when we read the signal */
} StepEvent;

typedef struct Steps {
        Harness *harness;
        sd_bus *bus;
        sd_bus_slot *slot;
        int shim_fd;
        StepEvent events[STEPS_EVENTS_MAX];
        size_t n_events;
        size_t n_dropped;
} Steps;

/* Starts timeconvd (args: its extra arguments, NULL-terminated, may be NULL) with the shim
 * preloaded, connects to the bus and to the shim, subscribes to Discontinuity. */
int steps_start(const char *daemon, const char *shim, const char *const *args, Steps **ret);
Steps *steps_free(Steps *s);

static inline void steps_freep(Steps **s) {
        steps_free(*s);
}

/* One shim command (printf-style). */
int steps_shim(Steps *s, ShimReply *ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Reads what the bus has for us now, without waiting. */
int steps_drain(Steps *s);

/* Processes the bus until a Discontinuity for domain arrives whose index is >= since; its
 * index in s->events goes to *ret_index. -ETIMEDOUT. */
int steps_wait(Steps *s, const char *domain, size_t since, int timeout_ms, size_t *ret_index);

/* How many Discontinuity signals for domain (NULL: any) arrived at index >= since. */
size_t steps_count(const Steps *s, const char *domain, size_t since);

/* Convert over the bus and check the answer against the truth [lo, hi] of the target: 0 when
 * it holds, -EDOM when it does not (the answer still goes to *ret_value/ *ret_uncertainty_ns),
 * or the call's error. */
int steps_convert_check(Steps *s, const char *from, const char *to, int64_t value, int64_t lo, int64_t hi,
                        int64_t *ret_value, uint64_t *ret_uncertainty_ns);

/* Readings of one domain's true clock and CLOCK_MONOTONIC, each bracketed by the other, taken
 * while the shim moved that clock by offset_ns (the daemon saw value + offset_ns). */
typedef struct StepsEra {
        clockid_t id;
        int64_t offset_ns;
        Bracket mono;                   /* from CLOCK_MONOTONIC to the true clock */
        Bracket x;                      /* from the true clock to CLOCK_MONOTONIC */
} StepsEra;

void steps_era_read(clockid_t id, int64_t offset_ns, StepsEra *ret);

/* Convert(monotonic, domain) of the era's monotonic instant holds the shifted truth, with an
 * uncertainty of at most max_uncertainty_ns. Says why not (diag) when it fails. */
bool steps_era_forward_holds(Steps *s, const char *domain, const StepsEra *e, uint64_t max_uncertainty_ns);

/* Convert(domain, monotonic) of the era's shifted value holds the monotonic truth plus
 * later_ns: 0, or how much later the value comes round again after a backward step (a value
 * the domain took twice resolves to its newest occurrence). */
bool steps_era_inverse_holds(Steps *s, const char *domain, const StepsEra *e, int64_t later_ns,
                             uint64_t max_uncertainty_ns);
