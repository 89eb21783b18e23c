/* SPDX-License-Identifier: MIT */

/* An NTP slew under the real timeconvd: clockshift.so makes monotonic (and realtime, boottime,
 * tai, which NTP slews alike) run 300 ppm fast against monotonic_raw, the hub, from one instant
 * on, and reports it in adjtimex()'s frequency, as the kernel does for an NTP daemon. The daemon
 * must find it at its next burst, close the segments and announce a Discontinuity of kind "rate"
 * for each steered clock (none for monotonic_raw), know the new rate at once (ListDomains),
 * convert values from before the change with the old model, and every value after the
 * announcement within its bound. Between the change and that burst the daemon cannot know:
 * there the error may exceed the bound, by no more than the slew gains over a few bursts; that
 * allowance is asserted, and reported.
 * usage: test-steps-slew TIMECONVD CLOCKSHIFT_SO */

#include "bus-errors.h"
#include "clock-client.h"
#include "steps-check.h"

#define SLEW_PPB INT64_C(300000)
#define CADENCE_NS INT64_C(50000000)
#define LEARN_TIMEOUT_NS INT64_C(10000000000)
/* The slew's gain over three bursts: what an instant between two bursts can be off, at most. */
#define TRANSITION_ALLOWANCE_NS (SLEW_PPB * 3 * CADENCE_NS / 1000000000)
#define CHECKS 200

static const char *const args[] = {
        "--no-x11", "--no-gpu", "--cadence", "0.05", "--idle-cadence", "0.05", NULL,
};
/* No burst during the test after the first ones: only a call can make the daemon look. */
static const char *const args_rare[] = {
        "--no-x11", "--no-gpu", "--cadence", "600", "--idle-cadence", "600", NULL,
};

typedef struct DomainRate {
        int64_t rate_ppb;
        uint64_t uncertainty_ppb;
        int found;      /* 1: the rate, 2: its bound */
} DomainRate;

static int read_rate(sd_bus_message *m, const char *key, const char *contents, void *userdata) {
        DomainRate *d = userdata;

        if (strcmp(key, "rate_ppb") == 0) {
                d->found |= 1;
                return sd_bus_message_read(m, "v", "x", &d->rate_ppb);
        }
        if (strcmp(key, "rate_uncertainty_ppb") == 0) {
                d->found |= 2;
                return sd_bus_message_read(m, "v", "t", &d->uncertainty_ppb);
        }
        return sd_bus_message_skip(m, "v");
}

/* ListDomains' rate of domain against the hub, and its bound. */
static int domain_rate(sd_bus *bus, const char *domain, int64_t *ret_rate_ppb, uint64_t *ret_uncertainty_ppb) {
        DomainRate d = {};
        int r;

        r = clock_domain_properties(bus, domain, read_rate, &d, NULL, 0);
        if (r < 0)
                return r;
        if (d.found != 3)
                return -ENOENT;
        *ret_rate_ppb = d.rate_ppb;
        *ret_uncertainty_ppb = d.uncertainty_ppb;
        return 0;
}

/* Converts raw (read between two true monotonic readings) and says how far the answer's bound
 * misses the shifted truth: <= 0 when it holds. */
static int miss_ns(Steps *s, const ShimClock *shift, int64_t *ret_miss_ns) {
        Bracket b;
        int64_t v, lo, hi;
        uint64_t u;
        int r;

        bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &b);
        r = clock_convert(s->bus, "monotonic_raw", "monotonic", b.from_ns, NULL, &v, &u);
        if (r < 0)
                return r;
        lo = shift ? shim_shifted_ns(shift, b.to_lo_ns) : b.to_lo_ns;
        hi = shift ? shim_shifted_ns(shift, b.to_hi_ns) : b.to_hi_ns;
        *ret_miss_ns = v < lo ? lo - v - (int64_t) u : v > hi ? v - hi - (int64_t) u : -(int64_t) u;
        return 0;
}

static int count_holding(Steps *s, const ShimClock *shift, int n) {
        int holding = 0;

        for (int i = 0; i < n; i++) {
                int64_t m;

                holding += miss_ns(s, shift, &m) == 0 && m <= 0;
        }
        return holding;
}

/* At a 50 ms cadence: the bursts find the slew. */
static void test_at_cadence(const char *daemon, const char *shim) {
        _cleanup_(steps_freep) Steps *s = NULL;
        _cleanup_free_ char *log = NULL;
        const ShimClock *mono = NULL;
        Bracket start, end, before_raw, before_mono;
        ShimReply reply = {};
        int64_t t_change, learned_ns = -1, worst_miss_ns = INT64_MIN, rate_ppb = 0, expected_ppb = 0, expected_unc_ppb = 0;
        int64_t announced_ns = -1;
        uint64_t rate_unc_ppb = 0;
        int misses_after_announcement = 0, checks_after_announcement = 0;
        size_t n_events_before, announcement;
        int r;

        r = steps_tap_start(daemon, shim, args, "timeconvd with the shim on a private bus", &s);
        if (r < 0)
                return;

        /* The machine's own rate of monotonic against monotonic_raw (its NTP), for the truth. */
        bracket_read(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, &start);
        is_int(count_holding(s, NULL, CHECKS), CHECKS, "before the slew: monotonic_raw -> monotonic holds");
        bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &before_raw);
        bracket_read(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, &before_mono);

        steps_drain(s);
        n_events_before = steps_count(s, NULL, 0);
        t_change = clock_now_ns(CLOCK_MONOTONIC);
        r = steps_shim(s, &reply, "rate %" PRIi64 " monotonic,realtime,boottime,tai", SLEW_PPB);
        mono = shim_reply_clock(&reply, "monotonic");
        ok(r == 0 && mono, "monotonic, realtime, boottime and tai run %+" PRIi64 " ppb from now on", SLEW_PPB);
        if (!mono)
                return;

        /* Convert and check without pause until the daemon announced the change and ListDomains
         * shows the new rate. An answer read after the announcement must hold. */
        for (int i = 0; clock_now_ns(CLOCK_MONOTONIC) - t_change < LEARN_TIMEOUT_NS; i++) {
                int64_t m;

                if (announced_ns < 0 && steps_drain(s) >= 0 &&
                    steps_count(s, "monotonic", n_events_before) > 0)
                        announced_ns = clock_now_ns(CLOCK_MONOTONIC) - t_change;
                if (miss_ns(s, mono, &m) == 0) {
                        if (announced_ns < 0 && m > worst_miss_ns)
                                worst_miss_ns = m;
                        if (announced_ns >= 0) {
                                checks_after_announcement++;
                                misses_after_announcement += m > 0;
                        }
                }
                if (announced_ns < 0)
                        continue;
                if (i % 16 != 15 || domain_rate(s->bus, "monotonic", &rate_ppb, &rate_unc_ppb) < 0)
                        continue;
                bracket_read(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, &end);
                /* The machine's rate (it is tiny, and known to ~1e-3 ppm over this span) and ours. */
                expected_ppb = (int64_t) (((double) (end.from_ns - start.from_ns) /
                                                   (double) ((end.to_lo_ns + end.to_hi_ns) / 2 -
                                                             (start.to_lo_ns + start.to_hi_ns) / 2) - 1.0) * 1e9) +
                               SLEW_PPB;
                /* Our own reading of the machine's rate is only as good as our brackets: on a
                 * loaded machine (sanitizers, parallel tests) a read can be descheduled. */
                expected_unc_ppb = (int64_t) ((double) ((start.to_hi_ns - start.to_lo_ns) +
                                                        (end.to_hi_ns - end.to_lo_ns)) * 1e9 /
                                              (double) (end.from_ns - start.from_ns)) + 1;
                if (rate_unc_ppb <= 20000 &&
                    llabs(rate_ppb - expected_ppb) <= (int64_t) rate_unc_ppb + 100 + expected_unc_ppb) {
                        learned_ns = clock_now_ns(CLOCK_MONOTONIC) - t_change;
                        break;
                }
        }
        diag("(our own measure of the expected rate: +- %" PRIi64 " ppb)", expected_unc_ppb);
        diag("rate of monotonic: %+" PRIi64 " +- %" PRIu64 " ppb, expected %+" PRIi64 " ppb; worst miss of a "
             "bound during the change %+" PRIi64 " ns (allowed %" PRIi64 ")", rate_ppb, rate_unc_ppb, expected_ppb,
             worst_miss_ns, (int64_t) TRANSITION_ALLOWANCE_NS);
        ok(announced_ns >= 0, "the daemon announced the change of monotonic's rate %.1f ms after it",
           (double) announced_ns / 1e6);
        ok(learned_ns >= 0, "ListDomains shows the new rate %.1f ms after it, and its bound holds it",
           (double) learned_ns / 1e6);
        ok(checks_after_announcement > 0 && misses_after_announcement == 0,
           "every answer read after the announcement holds (%d of %d missed)", misses_after_announcement,
           checks_after_announcement);
        ok(worst_miss_ns <= TRANSITION_ALLOWANCE_NS,
           "while it could not know yet, no answer was further off than the slew gains over three bursts");

        is_int(count_holding(s, mono, CHECKS), CHECKS, "after the slew: monotonic_raw -> monotonic holds");
        {
                int64_t v;
                uint64_t u;

                r = clock_convert(s->bus, "monotonic_raw", "monotonic", before_raw.from_ns, NULL, &v, &u);
                ok(r == 0 && bracket_holds(v, u, before_raw.to_lo_ns, before_raw.to_hi_ns),
                   "a value from before the slew converts with the old model (+- %" PRIu64 " ns)", u);
                r = clock_convert(s->bus, "monotonic", "monotonic_raw", before_mono.from_ns, NULL, &v, &u);
                ok(r == 0 && bracket_holds(v, u, before_mono.to_lo_ns, before_mono.to_hi_ns),
                   "and back (+- %" PRIu64 " ns)", u);
        }

        steps_drain(s);
        {
                static const char *const steered[] = { "monotonic", "realtime", "boottime", "tai" };
                bool all_rate = true;

                for (size_t i = 0; i < sizeof(steered) / sizeof(steered[0]); i++) {
                        r = steps_wait(s, steered[i], n_events_before, 5000, &announcement);
                        all_rate = all_rate && r == 0 && strcmp(s->events[announcement].kind, "rate") == 0 &&
                                   s->events[announcement].step_ns == 0;
                }
                ok(all_rate, "a Discontinuity of kind \"rate\", step 0, for monotonic, realtime, boottime and tai");
                is_int(steps_count(s, "monotonic_raw", n_events_before), 0, "none for monotonic_raw, which NTP never steers");
                is_int(steps_count(s, "monotonic", n_events_before), 1, "one for monotonic: one change, one announcement");
        }
        ok(harness_daemon_log(s->harness, &log) >= 0 && strstr(log, "the kernel's NTP discipline changed its rate"),
           "the daemon found it in the kernel's discipline (its log says so)");
        ok(harness_daemon_alive(s->harness), "the daemon lives on");
}

/* Bursts ten minutes apart: the first call after the slew makes the daemon look at the kernel's
 * discipline, calibrate and announce before it answers, so no answer comes from the old rate.
 * Without calls (a client of the shared table makes none), its check once a second does. */
static void test_between_bursts(const char *daemon, const char *shim) {
        _cleanup_(steps_freep) Steps *s = NULL;
        _cleanup_free_ char *log = NULL;
        const ShimClock *mono = NULL;
        ShimReply reply = {};
        size_t n_events_before;
        int64_t m = 0, t_end_ns;
        int r;

        r = steps_tap_start(daemon, shim, args_rare, "timeconvd with bursts 600 s apart", &s);
        if (r < 0)
                return;
        is_int(count_holding(s, NULL, CHECKS), CHECKS, "before the slew: monotonic_raw -> monotonic holds");
        steps_drain(s);
        n_events_before = steps_count(s, NULL, 0);

        r = steps_shim(s, &reply, "rate %" PRIi64 " monotonic,realtime,boottime,tai", SLEW_PPB);
        mono = shim_reply_clock(&reply, "monotonic");
        ok(r == 0 && mono, "monotonic runs %+" PRIi64 " ppb from now on", SLEW_PPB);
        if (!mono)
                return;

        r = miss_ns(s, mono, &m);
        ok(r == 0 && m <= 0, "the first call after the slew already holds (%+" PRIi64 " ns from its bound)", m);
        steps_drain(s);
        ok(steps_count(s, "monotonic", n_events_before) == 1 &&
                   strcmp(s->events[n_events_before].kind, "rate") == 0,
           "its answer came after the Discontinuity of kind \"rate\"");
        is_int(count_holding(s, mono, CHECKS), CHECKS, "and every later one holds");
        ok(harness_daemon_log(s->harness, &log) >= 0 &&
                   strstr(log, "the kernel's NTP discipline changed since the last burst"),
           "the call made the daemon calibrate (its log says so)");

        /* The slew ends; nobody calls. */
        steps_drain(s);
        n_events_before = steps_count(s, NULL, 0);
        t_end_ns = clock_now_ns(CLOCK_MONOTONIC);
        r = steps_shim(s, &reply, "rate 0 monotonic,realtime,boottime,tai");
        mono = shim_reply_clock(&reply, "monotonic");
        ok(r == 0 && mono, "the slew ends");
        if (!mono)
                return;
        r = steps_wait(s, "monotonic", n_events_before, 5000, &n_events_before);
        ok(r == 0 && strcmp(s->events[n_events_before].kind, "rate") == 0,
           "with no call, the end of the slew is announced too (%.0f ms after it)",
           r == 0 ? (double) (s->events[n_events_before].received_ns - t_end_ns) / 1e6 : -1.0);
        is_int(count_holding(s, mono, CHECKS), CHECKS, "and every answer holds");
        /* Found by the check once a second, or by the last warm-up burst (110 ms after the
         * start) when this test got here before it. */
        free(log);
        log = NULL;
        ok(harness_daemon_log(s->harness, &log) >= 0 &&
                   strstr(log, "changed its rate by -300000"),
           "the daemon found it without a call (its log says so)");
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 2, "TIMECONVD CLOCKSHIFT_SO");

        test_at_cadence(argv[1], argv[2]);
        test_between_bursts(argv[1], argv[2]);
        return done_testing();
}
