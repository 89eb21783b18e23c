/* SPDX-License-Identifier: MIT */

/* bench-steps: how long from a step of CLOCK_REALTIME to the Discontinuity signal, under the
 * real timeconvd on a private bus, with clockshift.so preloaded. One JSON object on stdout.
 *
 * A step needs two things: the clock moving, and the kernel telling its cancel-on-set timers.
 * The shim moves the daemon's realtime by a second (a step nobody else sees) and fires the
 * daemon's cancel-on-set timers itself (trigger "shim"). The time is taken just before the
 * command and ends when the signal reaches us: the daemon's wake-up, burst and estimator, the
 * bus. A Convert round trip, measured in the same run, is the bus's part alone.
 *
 * A benchmark must never change the machine's clocks: every other program sees such a step.
 * Only with --real-step, which nothing runs by default (meson runs this under hostclock-guard.so,
 * which aborts on any clock set), and with CAP_SYS_TIME, is the kernel told with a real step of
 * 1 ns (adjtimex ADJ_SETOFFSET, +1 and -1 in turn) that wakes the daemon's timer the way any
 * clock set does (trigger "kernel"), with our own timer's wake-up as the kernel's part alone.
 * usage: bench-steps [--real-step] TIMECONVD CLOCKSHIFT_SO */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <unistd.h>

#include "bench-util.h"
#include "steps.h"

#define TRIALS 30
#define ROUND_TRIPS 200
#define JUMP_NS INT64_C(1000000000)
#define TARGET_NS INT64_C(10000000)

static const char *const args[] = {
        "--no-x11", "--no-gpu", "--cadence", "30", "--idle-cadence", "30", NULL,
};

static volatile int64_t sink;

static int arm_cancel_on_set(int fd) {
        const struct itimerspec its = { .it_value.tv_sec = INT32_MAX };

        return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0 ? -errno : 0;
}

/* A real step of the machine's CLOCK_REALTIME by sign ns (1 or -1): it cancels every
 * cancel-on-set timer. --real-step only. */
static int kernel_nudge(int sign) {
        struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };

        tx.time.tv_sec = sign < 0 ? -1 : 0;
        tx.time.tv_usec = sign < 0 ? 999999999 : 1;
        return adjtimex(&tx) < 0 ? -errno : 0;
}

static int64_t bus_round_trip_ns(Steps *s) {
        int64_t t[ROUND_TRIPS];

        for (size_t i = 0; i < ROUND_TRIPS; i++) {
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), v;
                uint64_t u;

                if (clock_convert(s->bus, "monotonic", "realtime", t0, NULL, &v, &u) < 0)
                        return -1;
                sink = v;
                t[i] = clock_now_ns(CLOCK_MONOTONIC) - t0;
        }
        return bench_percentile(t, ROUND_TRIPS, 0.5);
}

/* One trial; *ret_latency_ns from the trigger to the signal's arrival, *ret_daemon_ns to the
 * daemon's stamp in it, *ret_floor_ns to our own timer's wake-up (kernel path only). -EAGAIN:
 * the daemon found the step before the trigger (a burst of its own), not a trial. */
static int trial(Steps *s, bool kernel, int timer_fd, int sign, int64_t *ret_latency_ns, int64_t *ret_daemon_ns,
                 int64_t *ret_floor_ns) {
        size_t since, index;
        int64_t t0, floor_ns = 0;
        int r;

        r = steps_drain(s);
        if (r < 0)
                return r;
        since = s->n_events;
        if (kernel) {
                struct pollfd p = { .fd = timer_fd, .events = POLLIN };
                uint64_t expirations;

                r = steps_shim(s, NULL, "step %" PRIi64 " realtime,tai", sign * JUMP_NS);
                if (r < 0)
                        return r;
                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = kernel_nudge(sign);
                if (r < 0)
                        return r;
                if (poll(&p, 1, 1000) == 1)
                        floor_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
                (void) read(timer_fd, &expirations, sizeof(expirations));
                r = arm_cancel_on_set(timer_fd);
                if (r < 0)
                        return r;
        } else {
                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = steps_shim(s, NULL, "step %" PRIi64 " realtime,tai wake", sign * JUMP_NS);
                if (r < 0)
                        return r;
        }
        r = steps_wait(s, "realtime", since, STEPS_WAIT_MS, &index);
        if (r < 0)
                return r;
        if (s->events[index].monotonic_ns < t0)
                return -EAGAIN;
        *ret_latency_ns = s->events[index].received_ns - t0;
        *ret_daemon_ns = s->events[index].monotonic_ns - t0;
        *ret_floor_ns = floor_ns;
        return 0;
}

typedef struct Figures {
        int64_t latency_ns[TRIALS], daemon_ns[TRIALS], floor_ns[TRIALS];
        size_t n;
} Figures;

static int run(Steps *s, bool kernel, int timer_fd, Figures *f) {
        int r;

        for (int i = 0, tries = 0; f->n < TRIALS && tries < 3 * TRIALS; i++, tries++) {
                r = trial(s, kernel, timer_fd, i % 2 ? -1 : 1, &f->latency_ns[f->n], &f->daemon_ns[f->n],
                          &f->floor_ns[f->n]);
                if (r == -EAGAIN)
                        continue;
                if (r < 0)
                        return r;
                f->n++;
        }
        return f->n == TRIALS ? 0 : -EIO;
}

int main(int argc, char **argv) {
        _cleanup_(steps_freep) Steps *s = NULL;
        _cleanup_close_ int timer_fd = -1;
        Figures kernel = {}, shim = {};
        int64_t round_trip_ns, latency_p50_ns, latency_max_ns, daemon_p50_ns, floor_p50_ns = -1;
        int64_t shim_p50_ns, shim_max_ns;
        bool real_step = argc > 1 && strcmp(argv[1], "--real-step") == 0, have_kernel = false;
        int r;

        if (real_step) {
                argc--;
                argv++;
        }
        if (argc != 3) {
                fprintf(stderr, "usage: bench-steps [--real-step] TIMECONVD CLOCKSHIFT_SO\n");
                return 2;
        }
        r = steps_start(argv[1], argv[2], args, &s);
        if (r < 0) {
                fprintf(stderr, "cannot start timeconvd with the shim: %s\n", strerror(-r));
                return 1;
        }
        round_trip_ns = bus_round_trip_ns(s);

        if (real_step) {
                timer_fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
                have_kernel = timer_fd >= 0 && arm_cancel_on_set(timer_fd) >= 0 && kernel_nudge(1) >= 0 &&
                              kernel_nudge(-1) >= 0;
                if (!have_kernel)
                        fprintf(stderr, "--real-step: no CAP_SYS_TIME (%s): the shim fires the daemon's timer "
                                "instead\n", strerror(errno));
        }
        if (have_kernel) {
                uint64_t expirations;

                (void) read(timer_fd, &expirations, sizeof(expirations));
                (void) arm_cancel_on_set(timer_fd);
                /* Those two nudges woke the daemon too: let it see them before the trials. */
                r = run(s, true, timer_fd, &kernel);
                if (r < 0) {
                        fprintf(stderr, "kernel-triggered trials failed: %s\n", strerror(-r));
                        return 1;
                }
        }
        r = run(s, false, -1, &shim);
        if (r < 0) {
                fprintf(stderr, "shim-triggered trials failed: %s\n", strerror(-r));
                return 1;
        }

        shim_p50_ns = bench_percentile(shim.latency_ns, shim.n, 0.5);
        shim_max_ns = bench_percentile(shim.latency_ns, shim.n, 1.0);
        if (have_kernel) {
                latency_p50_ns = bench_percentile(kernel.latency_ns, kernel.n, 0.5);
                latency_max_ns = bench_percentile(kernel.latency_ns, kernel.n, 1.0);
                daemon_p50_ns = bench_percentile(kernel.daemon_ns, kernel.n, 0.5);
                floor_p50_ns = bench_percentile(kernel.floor_ns, kernel.n, 0.5);
        } else {
                latency_p50_ns = shim_p50_ns;
                latency_max_ns = shim_max_ns;
                daemon_p50_ns = bench_percentile(shim.daemon_ns, shim.n, 0.5);
        }

        printf("{\"trigger\": \"%s\", \"trials\": %d, \"jump_ns\": %" PRIi64 ", "
               "\"step_detect_latency_ns\": %" PRIi64 ", \"step_detect_latency_max_ns\": %" PRIi64 ", "
               "\"daemon_stamp_latency_ns\": %" PRIi64 ", "
               "\"shim_step_detect_latency_ns\": %" PRIi64 ", \"shim_step_detect_latency_max_ns\": %" PRIi64 ", "
               "\"floor_cancel_wake_ns\": %" PRIi64 ", \"floor_bus_round_trip_ns\": %" PRIi64 ", "
               "\"ratio_latency_to_cancel_wake\": %.1f, \"ratio_latency_to_bus_round_trip\": %.2f, "
               "\"targets\": {\"step_detect_latency_max_le_10ms\": %s}}\n",
               have_kernel ? "kernel" : "shim", TRIALS, JUMP_NS, latency_p50_ns, latency_max_ns, daemon_p50_ns,
               shim_p50_ns, shim_max_ns, floor_p50_ns, round_trip_ns,
               floor_p50_ns > 0 ? (double) latency_p50_ns / (double) floor_p50_ns : 0.0,
               round_trip_ns > 0 ? (double) latency_p50_ns / (double) round_trip_ns : 0.0,
               latency_max_ns <= TARGET_NS ? "true" : "false");
        return 0;
}
