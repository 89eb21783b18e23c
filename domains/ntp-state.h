/* SPDX-License-Identifier: MIT */
#pragma once

/* What the kernel says of its NTP discipline (adjtimex(2), read only): the rate at which it runs
 * the clocks it steers (realtime, monotonic, boottime, tai and their coarse kin) against
 * monotonic_raw. An NTP daemon changes it at instants nobody is told of; reading it every burst
 * finds the change at the next burst, with its size, where the samples alone need many bursts
 * and know nothing of the new rate.
 *
 * The kernel's figure is nominal: the raw clock's own rounding (a fraction of a cycle per tick
 * interval) puts it off the measured rate by a constant of up to some ppm. The constant cancels
 * in a difference: what is used here is how much the rate changed, not what it is. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/timex.h>

typedef struct NtpState {
        int64_t base_rate_ppb;          /* from tick and freq: constant until a daemon changes them */
        int64_t pll_rate_ppb;           /* the kernel PLL's correction of its offset, this second */
        int64_t pll_offset_ns;          /* what the PLL has left to slew */
        int status;                     /* STA_PLL | STA_FLL | ... */
        long constant;                  /* the PLL's time constant */
        /* realtime against UTC, as NTP or PTP told the kernel: the bound of its error and its
         * estimate (maxerror, esterror), -1 when the kernel says it is not synchronised */
        int64_t utc_maxerror_ns;
        int64_t utc_esterror_ns;
} NtpState;

/* From one adjtimex() reading; clk_tck is sysconf(_SC_CLK_TCK), the unit of tick. */
int ntp_state_from_timex(const struct timex *tx, long clk_tck, NtpState *ret);

/* Reads it now; -errno when adjtimex() is refused (a seccomp filter, say). */
int ntp_state_read(NtpState *ret);

/* Whether the discipline changed between two readings: a new frequency or tick, the PLL or FLL
 * switched, or a new offset handed to the PLL (more left to slew than before). The PLL slewing
 * an offset it already had is no change: its rate decays smoothly. */
bool ntp_state_changed(const NtpState *old, const NtpState *now);

/* The change of rate from old to now (ppb), and how far the truth may be from it: a little for
 * the kernel's rounding, and the PLL's smooth part, which moved all along and which the samples
 * before the change averaged: pll_peak_ppb is the largest |pll_rate_ppb| read since old. */
void ntp_state_rate_change(const NtpState *old, const NtpState *now, int64_t pll_peak_ppb,
                           int64_t *ret_change_ppb, int64_t *ret_margin_ppb);
