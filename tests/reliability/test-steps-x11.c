/* SPDX-License-Identifier: MIT */

/* An X server restart under the real timeconvd: a new server is a new clock (a new segment),
 * and the daemon must say so with a Discontinuity for 'x11' once it has calibrated against the
 * new server, with the jump of its clock: Xvfb stamps CLOCK_MONOTONIC in ms, so the jump is
 * within the old model's bound and the ms truncation. A value from before the restart still
 * converts with the old model. x11_us, the same clock in µs (a view of x11), is announced with it:
 * a compositor that converts _NET_WM_FRAME_DRAWN times watches x11_us alone. (The shim is loaded
 * but moves nothing here.)
 * usage: test-steps-x11 TIMECONVD CLOCKSHIFT_SO */

#include "steps-check.h"
#include "xvfb.h"

#define RESTART_WAIT_MS 10000
#define MS_NS INT64_C(1000000)

int main(int argc, char **argv) {
        _cleanup_(steps_freep) Steps *s = NULL;
        const char *args[] = { "--display", NULL, "--no-gpu", "--cadence", "0.1", NULL };
        size_t since, index;
        Xvfb x = {};
        int64_t m_pre, x_pre, m_back, t_stop, v;
        uint64_t u_pre, u_back, u;
        int r;

        tap_args(argc, argv, 2, "TIMECONVD CLOCKSHIFT_SO");
        tap_require_program("Xvfb", "xvfb");

        ok(xvfb_start(-1, &x) == 0, "Xvfb started (%s)", x.name);
        args[1] = x.name;
        r = steps_start(argv[1], argv[2], args, &s);
        ok(r == 0, "timeconvd --display %s on a private bus: %s", x.name, r < 0 ? strerror(-r) : "ready");
        if (r < 0 || tap_failed_) {
                xvfb_stop(&x);
                return done_testing();
        }

        /* The first burst of every domain is done before READY=1. */
        m_pre = clock_now_ns(CLOCK_MONOTONIC);
        r = clock_convert(s->bus, "monotonic", "x11", m_pre, NULL, &x_pre, &u_pre);
        ok(r == 0, "before the restart: monotonic %" PRIi64 " -> x11 %" PRIi64 " ms +- %" PRIu64 " ns", m_pre, x_pre,
           u_pre);

        since = s->n_events;
        t_stop = clock_now_ns(CLOCK_MONOTONIC);
        ok(xvfb_stop(&x) == 0, "Xvfb stopped");
        ok(xvfb_start(x.display, &x) == 0, "a new Xvfb on the same display %s", x.name);
        r = steps_wait(s, "x11", since, RESTART_WAIT_MS, &index);
        ok(r == 0, "Discontinuity for 'x11' once the daemon met the new server");
        if (r == 0) {
                const StepEvent *e = &s->events[index];
                /* The old model's bound then, its growth since (never beyond the prior rate
                 * bound), a ms of truncation in the new sample and a ms of a coarse clock's lag. */
                int64_t bound_ns = (int64_t) u_pre +
                                   (int64_t) (STEPS_MAX_RATE_ERROR * (double) (e->received_ns - m_pre)) + 2 * MS_NS;

                diag("'x11': step %" PRIi64 " ns, %.3f ms after the server was stopped", e->step_ns,
                     (double) (e->received_ns - t_stop) / 1e6);
                ok(llabs(e->step_ns) <= bound_ns, "the new server's clock is the old one's: step %" PRIi64
                   " ns within %" PRIi64 " ns", e->step_ns, bound_ns);
                ok(e->monotonic_ns >= t_stop && e->monotonic_ns <= e->received_ns,
                   "the signal's time lies between the restart and its arrival");
        }
        r = steps_wait(s, "x11_us", since, RESTART_WAIT_MS, &index);
        ok(r == 0, "Discontinuity for 'x11_us', the view of x11, as well");
        if (r == 0) {
                const StepEvent *e = &s->events[index];
                size_t x11_index;

                ok(strcmp(e->kind, "restart") == 0, "x11_us: kind 'restart' (%s)", e->kind);
                if (steps_wait(s, "x11", since, 0, &x11_index) == 0)
                        ok(e->step_ns == s->events[x11_index].step_ns &&
                           e->monotonic_ns == s->events[x11_index].monotonic_ns &&
                           strcmp(e->kind, s->events[x11_index].kind) == 0,
                           "x11_us: the same step (%" PRIi64 " ns), time and kind as x11's", e->step_ns);
        }
        steps_drain(s);
        /* msc and msc-screen (Xvfb's one output) are the new server's vblank counters: they may
         * be announced too (as a restart, or a step when the new counter is met before the server
         * is known to be new). */
        is_int(steps_count(s, NULL, since) - steps_count(s, "x11", since) - steps_count(s, "x11_us", since) -
                       steps_count(s, "msc", since) - steps_count(s, "msc-screen", since), 0,
               "no domain announced but the X server's clocks (x11, x11_us, msc, msc-screen)");

        r = clock_convert(s->bus, "x11", "monotonic", x_pre, NULL, &m_back, &u_back);
        ok(r == 0 && llabs(m_back - m_pre) <= (int64_t) (u_pre + u_back) + MS_NS,
           "a value from before the restart converts back with the old model: %" PRIi64 " ms -> %" PRIi64
           " +- %" PRIu64 " (was %" PRIi64 ")", x_pre, m_back, u_back, m_pre);
        r = clock_convert(s->bus, "monotonic", "x11", clock_now_ns(CLOCK_MONOTONIC), NULL, &v, &u);
        ok(r == 0, "monotonic -> x11 converts with the new server");
        ok(harness_daemon_alive(s->harness), "the daemon lives on");
        xvfb_stop(&x);
        return done_testing();
}
