/* SPDX-License-Identifier: MIT */

/* Clock sets under the real timeconvd, through clockshift.so: realtime set forward and then
 * back (tai moves with it, as it does when the kernel's clock is set), then the TAI offset alone
 * (adjtimex ADJ_TAI). Each wakes the daemon's cancel-on-set timer; each moved domain must be
 * announced within one burst with its jump, and readings from every era must convert with the
 * model of their time. After the backward set, a realtime value from before it was taken twice:
 * it resolves to its newest occurrence, and that answer must hold too.
 * usage: test-steps-clockset TIMECONVD CLOCKSHIFT_SO */

#include "steps-check.h"

#define FORWARD_NS INT64_C(7000000000)
#define BACKWARD_NS INT64_C(-4000000000)
#define TAI_NS INT64_C(2000000000)

static const char *const args[] = { STEPS_DAEMON_ARGS, NULL };

static const StepsDomain clock_set[] = {
        { "realtime", CLOCK_REALTIME },
        { "tai", CLOCK_TAI },
};

static const StepsDomain tai_only[] = {
        { "tai", CLOCK_TAI },
};

int main(int argc, char **argv) {
        _cleanup_(steps_freep) Steps *s = NULL;
        /* [era][0] realtime, [era][1] tai */
        StepsEra eras[4][2];
        const int64_t realtime_offset_ns[4] = { 0, FORWARD_NS, FORWARD_NS + BACKWARD_NS, FORWARD_NS + BACKWARD_NS };
        const int64_t tai_offset_ns[4] = { 0, FORWARD_NS, FORWARD_NS + BACKWARD_NS, FORWARD_NS + BACKWARD_NS + TAI_NS };
        int r;

        tap_args(argc, argv, 2, "TIMECONVD CLOCKSHIFT_SO");

        r = steps_tap_start(argv[1], argv[2], args, "timeconvd with the shim on a private bus", &s);
        if (r < 0)
                return done_testing();

        for (size_t era = 0; era < 4; era++) {
                if (era == 1)
                        steps_check_step(s, FORWARD_NS, clock_set, 2);
                else if (era == 2)
                        steps_check_step(s, BACKWARD_NS, clock_set, 2);
                else if (era == 3)
                        steps_check_step(s, TAI_NS, tai_only, 1);
                steps_era_read(CLOCK_REALTIME, realtime_offset_ns[era], &eras[era][0]);
                steps_era_read(CLOCK_TAI, tai_offset_ns[era], &eras[era][1]);
        }

        for (size_t era = 0; era < 4; era++)
                for (size_t i = 0; i < 2; i++) {
                        const char *name = i == 0 ? "realtime" : "tai";
                        const int64_t *offsets = i == 0 ? realtime_offset_ns : tai_offset_ns;
                        int64_t later_ns = 0;

                        /* A value comes round again in the newest later segment whose clock was
                         * set back below the value's own offset (the jumps are seconds, the eras
                         * milliseconds apart); it resolves there. */
                        for (size_t k = 3; k > era; k--)
                                if (offsets[k] < offsets[era]) {
                                        later_ns = offsets[era] - offsets[k];
                                        break;
                                }
                        ok(steps_era_forward_holds(s, name, &eras[era][i], STEPS_MAX_UNCERTAINTY_NS),
                           "era %zu (offset %+" PRIi64 " ns): monotonic -> %s with the model of its time", era,
                           eras[era][i].offset_ns, name);
                        /* That answer is an extrapolation of the newest segment over later_ns,
                         * whose rate may still be known only to the prior. */
                        ok(steps_era_inverse_holds(s, name, &eras[era][i], later_ns,
                                                   STEPS_MAX_UNCERTAINTY_NS +
                                                           (uint64_t) (STEPS_MAX_RATE_ERROR * (double) later_ns)),
                           "era %zu: %s -> monotonic%s", era, name,
                           later_ns ? ", at the value's newest occurrence" : " with the model of its time");
                }
        ok(harness_daemon_alive(s->harness), "the daemon lives on");
        return done_testing();
}
