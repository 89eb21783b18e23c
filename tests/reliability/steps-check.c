/* SPDX-License-Identifier: MIT */

#include "steps-check.h"

int steps_tap_start(const char *daemon, const char *shim, const char *const *args, const char *what,
                    Steps **ret) {
        int r = steps_start(daemon, shim, args, ret);

        ok(r == 0, "%s: %s", what, r < 0 ? strerror(-r) : "ready");
        return r;
}

uint64_t steps_uncertainty_now(Steps *s, const char *domain) {
        int64_t raw = clock_now_ns(CLOCK_MONOTONIC_RAW), v;
        uint64_t u;

        if (clock_convert(s->bus, "monotonic_raw", domain, raw, NULL, &v, &u) < 0)
                return UINT64_MAX / 4;
        return u;
}

bool steps_is_moved(const StepsDomain *moved, size_t n_moved, const char *name) {
        for (size_t i = 0; i < n_moved; i++)
                if (strcmp(moved[i].name, name) == 0 ||
                    (strcmp(moved[i].name, "realtime") == 0 && strcmp(name, "realtime_coarse") == 0))
                        return true;
        return false;
}

void steps_check_step(Steps *s, int64_t jump_ns, const StepsDomain *moved, size_t n_moved) {
        uint64_t u_before[8] = {};
        char list[128] = "";
        int64_t t_before, t_command;
        size_t since = s->n_events, index;
        ShimReply reply = {};
        int r;

        for (size_t i = 0; i < n_moved && i < 8; i++) {
                strcat(list, i ? "," : "");
                strcat(list, moved[i].name);
        }
        t_before = clock_now_ns(CLOCK_MONOTONIC);
        for (size_t i = 0; i < n_moved && i < 8; i++)
                u_before[i] = steps_uncertainty_now(s, moved[i].name);
        t_command = clock_now_ns(CLOCK_MONOTONIC);
        r = steps_shim(s, &reply, "step %" PRIi64 " %s wake", jump_ns, list);
        ok(r == 0, "step of %+" PRIi64 " ns of %s: the shim moved the clocks", jump_ns, list);
        is_int(reply.wakes, 1, "the daemon's cancel-on-set timer was fired, as the kernel would");

        for (size_t i = 0; i < n_moved && i < 8; i++) {
                const StepEvent *e;
                int64_t bound_ns;

                r = steps_wait(s, moved[i].name, since, STEPS_DETECT_MS, &index);
                ok(r == 0, "Discontinuity for '%s' within %d ms (the cadence is 30 s)", moved[i].name,
                   STEPS_DETECT_MS);
                if (r < 0)
                        continue;
                e = &s->events[index];
                diag("'%s': step %" PRIi64 " ns, signal %.3f ms after the command, daemon stamp %+.3f ms",
                     e->domain, e->step_ns, (double) (e->received_ns - t_command) / 1e6,
                     (double) (e->monotonic_ns - t_command) / 1e6);
                ok(e->monotonic_ns >= t_command && e->monotonic_ns <= e->received_ns,
                   "'%s': the signal's time lies between the command and its arrival", moved[i].name);
                /* The old model's bound when we asked, what it can have grown since, the new
                 * sample's own bracket. */
                bound_ns = (int64_t) u_before[i] +
                           (int64_t) (STEPS_MAX_RATE_ERROR * (double) (e->received_ns - t_before)) +
                           STEPS_SAMPLE_SLACK_NS;
                ok(llabs(e->step_ns - jump_ns) <= bound_ns, "'%s': step %" PRIi64 " ns is %+" PRIi64 " within %" PRIi64
                   " ns", moved[i].name, e->step_ns, jump_ns, bound_ns);
        }

        /* A call is answered after every signal the daemon sent before it. */
        (void) steps_uncertainty_now(s, "monotonic");
        steps_drain(s);
        {
                size_t others = 0;

                for (const char *const *d = steps_posix_domains; *d; d++)
                        if (!steps_is_moved(moved, n_moved, *d)) {
                                if (steps_count(s, *d, since))
                                        diag("'%s' announced, but it did not move", *d);
                                others += steps_count(s, *d, since);
                        }
                is_int(others, 0, "no Discontinuity for the clocks that did not move");
        }
}
