/* SPDX-License-Identifier: MIT */

/* A simulated suspend under the real timeconvd: clockshift.so moves boottime, realtime and tai
 * forward against monotonic and monotonic_raw (which stop while a machine sleeps) and fires the
 * daemon's cancel-on-set timer, as the kernel does on resume. Each moved domain must be
 * announced within one burst with its jump, and readings taken before, between and after two
 * suspends must all convert with the model of their own time.
 * usage: test-steps-suspend TIMECONVD CLOCKSHIFT_SO */

#include "steps-check.h"

#define SUSPEND1_NS INT64_C(3000000000)
#define SUSPEND2_NS INT64_C(1500000000)

static const char *const args[] = { STEPS_DAEMON_ARGS, NULL };

static const StepsDomain moved[] = {
        { "boottime", CLOCK_BOOTTIME },
        { "realtime", CLOCK_REALTIME },
        { "tai", CLOCK_TAI },
};

#define N_MOVED (sizeof(moved) / sizeof(moved[0]))

static void read_era(int64_t offset_ns, StepsEra era[N_MOVED]) {
        for (size_t i = 0; i < N_MOVED; i++)
                steps_era_read(moved[i].id, offset_ns, &era[i]);
}

int main(int argc, char **argv) {
        _cleanup_(steps_freep) Steps *s = NULL;
        StepsEra eras[3][N_MOVED];
        int64_t lo, v, hi;
        uint64_t u;
        int r;

        tap_args(argc, argv, 2, "TIMECONVD CLOCKSHIFT_SO");

        r = steps_tap_start(argv[1], argv[2], args, "timeconvd with the shim on a private bus", &s);
        if (r < 0)
                return done_testing();

        read_era(0, eras[0]);
        steps_check_step(s, SUSPEND1_NS, moved, N_MOVED);
        read_era(SUSPEND1_NS, eras[1]);
        steps_check_step(s, SUSPEND2_NS, moved, N_MOVED);
        read_era(SUSPEND1_NS + SUSPEND2_NS, eras[2]);

        for (size_t era = 0; era < 3; era++)
                for (size_t i = 0; i < N_MOVED; i++) {
                        ok(steps_era_forward_holds(s, moved[i].name, &eras[era][i], STEPS_MAX_UNCERTAINTY_NS),
                           "era %zu (offset %+" PRIi64 " ns): monotonic -> %s with the model of its time", era,
                           eras[era][i].offset_ns, moved[i].name);
                        ok(steps_era_inverse_holds(s, moved[i].name, &eras[era][i], 0, STEPS_MAX_UNCERTAINTY_NS),
                           "era %zu: %s -> monotonic with the model of its time", era, moved[i].name);
                }

        lo = clock_now_ns(CLOCK_BOOTTIME) + SUSPEND1_NS + SUSPEND2_NS;
        r = clock_now(s->bus, "boottime", NULL, &v, &u);
        hi = clock_now_ns(CLOCK_BOOTTIME) + SUSPEND1_NS + SUSPEND2_NS;
        ok(r == 0 && bracket_holds(v, u, lo, hi), "Now(boottime) is the shifted boottime: %" PRIi64 " +- %" PRIu64
           " in [%" PRIi64 ", %" PRIi64 "]", v, u, lo, hi);
        ok(harness_daemon_alive(s->harness), "the daemon lives on");
        return done_testing();
}
