/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ntp-state.h"

/* The kernel slews a PLL offset by offset >> (SHIFT_PLL + constant) per second (kernel/time/ntp.c). */
#define SHIFT_PLL 2
/* A change of base rate is exact up to the kernel's rounding of freq (2^-16 ppm) per step; the
 * mult it dithers between is averaged out by the kernel within a tick interval. */
#define RATE_CHANGE_ROUNDING_PPB 20

int ntp_state_from_timex(const struct timex *tx, long clk_tck, NtpState *ret) {
        int64_t tick_rate_ppb, freq_ppb, offset_ns;
        long constant;

        if (!tx || !ret || clk_tck <= 0 || tx->tick <= 0)
                return -EINVAL;

        /* tick µs per 1/clk_tck s: 10000 µs at 100 Hz is the nominal second. */
        tick_rate_ppb = (int64_t) tx->tick * clk_tck * 1000 - INT64_C(1000000000);
        /* freq is ppm with 16 fractional bits. */
        freq_ppb = ((int64_t) tx->freq * 1000) / 65536;
        offset_ns = (tx->status & STA_NANO) ? (int64_t) tx->offset : (int64_t) tx->offset * 1000;
        constant = tx->constant < 0 ? 0 : tx->constant > 30 ? 30 : tx->constant;

        *ret = (NtpState) {
                .base_rate_ppb = tick_rate_ppb + freq_ppb,
                .pll_offset_ns = (tx->status & STA_PLL) ? offset_ns : 0,
                .status = tx->status,
                .constant = constant,
                .utc_maxerror_ns = (tx->status & STA_UNSYNC) || tx->maxerror < 0 ? -1 : (int64_t) tx->maxerror * 1000,
                .utc_esterror_ns = (tx->status & STA_UNSYNC) || tx->esterror < 0 ? -1 : (int64_t) tx->esterror * 1000,
        };
        ret->pll_rate_ppb = ret->pll_offset_ns / (INT64_C(1) << (SHIFT_PLL + constant));
        return 0;
}

int ntp_state_read(NtpState *ret) {
        struct timex tx = { .modes = 0 };
        long clk_tck = sysconf(_SC_CLK_TCK);

        if (adjtimex(&tx) < 0)
                return -errno;
        return ntp_state_from_timex(&tx, clk_tck, ret);
}

bool ntp_state_changed(const NtpState *old, const NtpState *now) {
        const int discipline = STA_PLL | STA_FLL | STA_FREQHOLD | STA_PPSFREQ;

        return old->base_rate_ppb != now->base_rate_ppb || (old->status & discipline) != (now->status & discipline) ||
               old->constant != now->constant || llabs(now->pll_offset_ns) > llabs(old->pll_offset_ns) ||
               (old->pll_offset_ns < 0) != (now->pll_offset_ns < 0);
}

void ntp_state_rate_change(const NtpState *old, const NtpState *now, int64_t pll_peak_ppb,
                           int64_t *ret_change_ppb, int64_t *ret_margin_ppb) {
        int64_t change_ppb = now->base_rate_ppb - old->base_rate_ppb;

        *ret_change_ppb = change_ppb;
        *ret_margin_ppb = RATE_CHANGE_ROUNDING_PPB + llabs(change_ppb) / 1000 + llabs(pll_peak_ppb) +
                          llabs(now->pll_rate_ppb);
}
