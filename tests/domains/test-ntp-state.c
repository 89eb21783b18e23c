/* SPDX-License-Identifier: MIT */

/* The kernel's NTP discipline as a rate: tick and freq give the base rate, the PLL's offset its
 * smooth correction; a new frequency, tick, mode or offset is a change, the PLL slewing the
 * offset it had is none; and the machine's own adjtimex() reads. */

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "ntp-state.h"
#include "tap.h"

static NtpState state_of(long tick, long freq, int status, long offset, long constant) {
        struct timex tx = { .tick = tick, .freq = freq, .status = status, .offset = offset, .constant = constant };
        NtpState s = {};

        (void) ntp_state_from_timex(&tx, 100, &s);
        return s;
}

static void test_rates(void) {
        struct timex tx = { .tick = 10000 };
        NtpState s;

        s = state_of(10000, 0, 0, 0, 0);
        is_int(s.base_rate_ppb, 0, "the nominal tick and no freq: rate 0");
        s = state_of(10000, 5 * 65536, 0, 0, 0);
        is_int(s.base_rate_ppb, 5000, "freq 5 ppm (16 fractional bits): +5000 ppb");
        s = state_of(10000, -65536 / 2, 0, 0, 0);
        is_int(s.base_rate_ppb, -500, "freq -0.5 ppm: -500 ppb");
        s = state_of(10001, 0, 0, 0, 0);
        is_int(s.base_rate_ppb, 100000, "one us more per 10 ms tick: +100 ppm");
        s = state_of(10000, 0, STA_PLL | STA_NANO, 1000000, 6);
        is_int(s.pll_rate_ppb, 1000000 / 256, "PLL with 1 ms left, constant 6: 1 ms / 2^8 per second");
        s = state_of(10000, 0, STA_PLL, 1000, 6);
        is_int(s.pll_offset_ns, 1000000, "without STA_NANO the offset is in us");
        s = state_of(10000, 0, 0, 1000, 6);
        is_int(s.pll_rate_ppb, 0, "an offset without STA_PLL is not slewed by the PLL");

        is_int(ntp_state_from_timex(&tx, 0, &s), -EINVAL, "a clock tick rate of 0 is refused");
        tx.tick = 0;
        is_int(ntp_state_from_timex(&tx, 100, &s), -EINVAL, "a tick of 0 is refused");
}

static void test_changes(void) {
        NtpState a = state_of(10000, 65536, STA_PLL | STA_NANO, 500000, 4);
        NtpState b;
        int64_t change_ppb, margin_ppb;

        b = state_of(10000, 65536, STA_PLL | STA_NANO, 400000, 4);
        ok(!ntp_state_changed(&a, &b), "the PLL slewing its offset down is no change");
        b = state_of(10000, 2 * 65536, STA_PLL | STA_NANO, 400000, 4);
        ok(ntp_state_changed(&a, &b), "a new frequency is");
        ntp_state_rate_change(&a, &b, a.pll_rate_ppb, &change_ppb, &margin_ppb);
        is_int(change_ppb, 1000, "of +1 ppm");
        ok(margin_ppb >= a.pll_rate_ppb + b.pll_rate_ppb && margin_ppb <= a.pll_rate_ppb + b.pll_rate_ppb + 100,
           "give or take both PLL corrections and a little (%" PRId64 " ppb)", margin_ppb);
        b = state_of(10000, 65536, STA_PLL | STA_NANO, 600000, 4);
        ok(ntp_state_changed(&a, &b), "more offset to slew than before: a new one was handed over");
        b = state_of(10000, 65536, STA_PLL | STA_NANO, -100000, 4);
        ok(ntp_state_changed(&a, &b), "an offset of the other sign too");
        b = state_of(10000, 65536, STA_FLL | STA_NANO, 500000, 4);
        ok(ntp_state_changed(&a, &b), "a switch from PLL to FLL");
        b = state_of(10000, 65536, STA_PLL | STA_NANO, 500000, 5);
        ok(ntp_state_changed(&a, &b), "a new time constant");
        b = state_of(10000, 65536, STA_PLL | STA_NANO | STA_UNSYNC, 500000, 4);
        ok(!ntp_state_changed(&a, &b), "a status bit that steers nothing is no change");
}

static void test_read(void) {
        NtpState s;
        int r = ntp_state_read(&s);

        if (r == -EPERM || r == -ENOSYS) {
                skip("adjtimex() is refused here (a seccomp filter)");
                return;
        }
        ok(r == 0 && s.base_rate_ppb > -600000 && s.base_rate_ppb < 600000,
           "this machine's discipline reads: %+" PRId64 " ppb, PLL %+" PRId64 " ppb", s.base_rate_ppb, s.pll_rate_ppb);
}

int main(void) {
        test_rates();
        test_changes();
        test_read();
        return done_testing();
}
