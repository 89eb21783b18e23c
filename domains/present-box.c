/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "arith.h"
#include "present-box.h"

/* RandR's mode flags (randrproto), so that this file needs no xcb. */
#define MODE_FLAG_INTERLACE (UINT32_C(1) << 4)
#define MODE_FLAG_DOUBLESCAN (UINT32_C(1) << 5)

int present_mode_interval_ns(uint32_t dot_clock_hz, uint32_t htotal, uint32_t vtotal, uint32_t mode_flags,
                             double *ret_interval_ns) {
        double lines = vtotal;

        if (!ret_interval_ns)
                return -EINVAL;
        if (dot_clock_hz == 0 || htotal == 0 || vtotal == 0)
                return -EDOM;

        /* As xrandr counts them: a doublescan mode shows each line twice, an interlaced one
         * shows half the lines per vblank. */
        if (mode_flags & MODE_FLAG_DOUBLESCAN)
                lines *= 2;
        if (mode_flags & MODE_FLAG_INTERLACE)
                lines /= 2;
        *ret_interval_ns = (double) htotal * lines * 1e9 / (double) dot_clock_hz;
        return 0;
}

int present_jitter_for_interval(double interval_ns, PresentJitter *ret) {
        int64_t half_ns;

        if (!ret || !(interval_ns > 0) || !isfinite(interval_ns))
                return -EINVAL;
        if (arith_ceil_from_double(interval_ns * (1 + PRESENT_RATE_PRIOR) / 2, &half_ns) < 0)
                return -EINVAL;
        half_ns += 1000;
        *ret = (PresentJitter) {
                .early_ns = half_ns,
                .late_ns = half_ns,
        };
        return 0;
}

int present_event_sample(const PresentEvent *e, const DomainUnit *unit, const PresentJitter *jitter, Sample *ret) {
        int64_t ust_ns, lo_ns, hi_ns, away_ns, slew_ns, x_ns;
        int r;

        if (!e || !unit || !jitter || !ret || jitter->early_ns < 0 || jitter->late_ns < 0)
                return -EINVAL;
        if (e->raw0_ns > e->raw1_ns)
                return -EINVAL;
        if (e->ust_us > (uint64_t) INT64_MAX / 1000 || e->msc > (uint64_t) INT64_MAX)
                return -ERANGE;
        ust_ns = (int64_t) e->ust_us * 1000;

        /* The vblank on CLOCK_MONOTONIC: the UST is truncated, so its instant is in
         * [ust, ust + 999] ns; the vblank is up to late before and early after that. */
        if (arith_sub(ust_ns, jitter->late_ns, &lo_ns) < 0 || arith_add(ust_ns, 999 + jitter->early_ns, &hi_ns) < 0)
                return -ERANGE;

        /* raw - mono was in [raw0 - mono, raw1 - mono] at the bracket; at the vblank it may
         * differ by the slew over the time between them. */
        away_ns = llabs(e->mono_ns - lo_ns) > llabs(e->mono_ns - hi_ns) ? llabs(e->mono_ns - lo_ns) :
                                                                           llabs(e->mono_ns - hi_ns);
        slew_ns = (int64_t) ceil((double) away_ns * PRESENT_SLEW_MAX) + 1;
        if (arith_add(lo_ns, e->raw0_ns - e->mono_ns - slew_ns, &lo_ns) < 0 ||
            arith_add(hi_ns, e->raw1_ns - e->mono_ns + slew_ns, &hi_ns) < 0)
                return -ERANGE;

        r = unit_to_ns(unit, (int64_t) e->msc, &x_ns);
        if (r < 0)
                return r;

        *ret = (Sample) {
                .r0_ns = lo_ns,
                .r1_ns = hi_ns,
                .x_lo_ns = x_ns,
                .x_hi_ns = x_ns,
        };
        return 0;
}

bool present_fake_grid_fits(uint64_t ust_us, uint64_t msc) {
        const uint64_t interval_us = PRESENT_FAKE_INTERVAL_US;

        if (msc > (UINT64_MAX - interval_us) / interval_us)
                return false;
        return ust_us + interval_us / 2 >= msc * interval_us && ust_us < (msc + 1) * interval_us;
}

int64_t present_fake_lag_ns(bool floors) {
        int64_t after_us = floors ? PRESENT_FAKE_INTERVAL_US : PRESENT_FAKE_INTERVAL_US / 2 + 1;

        /* + 1 us: the report's UST is truncated to us. */
        return (PRESENT_FAKE_EARLY_US + after_us + 1) * INT64_C(1000);
}

int present_fake_grid_sample(const PresentEvent *e, const DomainUnit *unit, Sample *ret) {
        const PresentJitter none = {};
        PresentEvent grid;

        if (!e || !unit || !ret)
                return -EINVAL;
        if (e->msc > (uint64_t) INT64_MAX / 1000 / PRESENT_FAKE_INTERVAL_US ||
            e->msc * PRESENT_FAKE_INTERVAL_US < PRESENT_FAKE_EARLY_US)
                return -ERANGE;
        grid = *e;
        grid.ust_us = e->msc * PRESENT_FAKE_INTERVAL_US - PRESENT_FAKE_EARLY_US;
        return present_event_sample(&grid, unit, &none, ret);
}

int present_interval_between(uint64_t ust0_us, uint64_t msc0, uint64_t ust1_us, uint64_t msc1,
                             double *ret_interval_ns) {
        if (!ret_interval_ns)
                return -EINVAL;
        if (msc1 <= msc0 || ust1_us <= ust0_us)
                return -EDOM;
        *ret_interval_ns = (double) (ust1_us - ust0_us) * 1000.0 / (double) (msc1 - msc0);
        return 0;
}

int present_next_vblank(uint64_t ust_us, uint64_t msc, double interval_ns, int64_t now_ns, int64_t *ret_ns,
                        uint64_t *ret_msc) {
        double frames;
        int64_t ust_ns, k, t_ns;

        if (!ret_ns || !ret_msc || !(interval_ns > 0) || !isfinite(interval_ns))
                return -EINVAL;
        if (ust_us > (uint64_t) INT64_MAX / 1000)
                return -ERANGE;
        ust_ns = (int64_t) ust_us * 1000;

        /* Whole frames from the known vblank to the first one after now; the known one itself
         * when now is before it. */
        frames = floor((double) (now_ns - ust_ns) / interval_ns) + 1;
        if (frames < 0)
                frames = 0;
        if (arith_from_double(frames, &k) < 0 || arith_from_double((double) ust_ns + (double) k * interval_ns, &t_ns) < 0)
                return -ERANGE;
        if ((uint64_t) k > UINT64_MAX - msc)
                return -ERANGE;
        *ret_ns = t_ns;
        *ret_msc = msc + (uint64_t) k;
        return 0;
}
