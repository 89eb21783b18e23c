/* SPDX-License-Identifier: MIT */
#pragma once

/* The arithmetic of the msc domain (domains/present.c) that needs no X server: the refresh
 * interval of a RandR mode, how far a Present UST may lie from the vblank it reports, the
 * estimator's box for one PresentCompleteNotify, and the extrapolations the status shows.
 *
 * A PresentCompleteNotify says "vblank msc happened at ust", ust in µs of CLOCK_MONOTONIC,
 * truncated. A real CRTC's UST is the kernel's vblank timestamp. Xvfb (and every server without
 * a driver of its own) has Present's fake CRTC instead (present_fake.c), whose vblank n is at
 * n * interval µs of CLOCK_MONOTONIC, interval = 1000000 / fps µs (integer), and whose event
 * stamps ust = the time its timer fired and msc = (ust + interval / 2) / interval: msc is rounded
 * from ust itself, so |ust - vblank| < interval / 2 for every event it sends. A real CRTC's UST
 * lies far inside that. The box is that wide on both sides, for two reasons: the fake's timer
 * fires up to ~2 ms early (the delay is truncated to whole ms) and as late as the server's load
 * makes it; and what a client wants predicted is the UST that Present will report, so the
 * model's bound must hold the spread of those USTs, not only the vblank (it does while that
 * spread stays under half an interval: with boxes of half-width W the feasible set keeps a
 * half-width of W minus half the spread seen, around the middle of the USTs seen). */

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"
#include "units.h"

/* The estimator's prior on |rate - 1| (calibrate/estimator.c): the true interval is within it of
 * the nominal one, or the domain cannot be modelled at all. */
#define PRESENT_RATE_PRIOR 1e-3
/* Present's fake CRTC (Xvfb, Xorg without a driver's vblank, Xwayland without a surface): a
 * timer whose vblank n is at n * 16666 us of CLOCK_MONOTONIC (1000000 / 60, integer). */
#define PRESENT_FAKE_INTERVAL_US 16666
/* The fake's timer fires up to 2 ms before its vblank (present_fake.c sets it in whole ms, from
 * a ms clock), and the report still names that vblank up to half an interval after it (msc is
 * rounded from the time it fired) or, on Xwayland (floored), up to a whole interval after. */
#define PRESENT_FAKE_EARLY_US 2000

/* How much faster or slower CLOCK_MONOTONIC may run than CLOCK_MONOTONIC_RAW: the kernel's
 * bound on an NTP frequency correction (MAXFREQ, 500 ppm). */
#define PRESENT_SLEW_MAX 500e-6

/* One PresentCompleteNotify and the reference read just after it arrived: raw0, mono, raw1
 * (CLOCK_MONOTONIC read between two CLOCK_MONOTONIC_RAW reads), all ns. */
typedef struct PresentEvent {
        uint64_t ust_us;
        uint64_t msc;
        int64_t raw0_ns;
        int64_t mono_ns;
        int64_t raw1_ns;
} PresentEvent;

/* How far a UST may be from the true vblank: vblank in [ust - late_ns, ust + early_ns]. */
typedef struct PresentJitter {
        int64_t early_ns;
        int64_t late_ns;
} PresentJitter;

/* The ns per frame of a RandR mode (dot clock in Hz, totals in pixels and lines, flags as in
 * RandR: interlace halves it, doublescan doubles it). -EDOM when the mode has no timing (Xvfb's
 * modes have a dot clock of 0), -EINVAL for a NULL pointer. */
int present_mode_interval_ns(uint32_t dot_clock_hz, uint32_t htotal, uint32_t vtotal, uint32_t mode_flags,
                             double *ret_interval_ns);

/* The jitter bounds above for a CRTC of nominal interval_ns: half the largest interval the
 * estimator's prior allows, + 1 µs for the server's integer µs, on each side. -EINVAL unless
 * interval_ns > 0. */
int present_jitter_for_interval(double interval_ns, PresentJitter *ret);

/* The estimator's box for one event, in unit's ns (x = msc * period, a point) against
 * CLOCK_MONOTONIC_RAW: the vblank's monotonic interval [ust - late, ust + 1 µs + early] (the UST
 * is truncated to µs), moved to the raw clock by the bracketed offset, widened by how far that
 * offset may have slewed between the vblank and the bracket. -ERANGE when a value overflows,
 * -EINVAL for an event whose bracket is not ordered. */
int present_event_sample(const PresentEvent *e, const DomainUnit *unit, const PresentJitter *jitter, Sample *ret);

/* Whether an event is on the fake CRTC's grid: its msc is the UST counted in fake intervals,
 * rounded (present_fake.c) or floored (Xwayland's timer), so the UST lies in
 * [msc - 1/2, msc + 1) intervals. A real CRTC's counter starts when the CRTC is lit and runs at its
 * own rate: it fits by accident at most, and never for long. */
bool present_fake_grid_fits(uint64_t ust_us, uint64_t msc);

/* How long after the fake's timer may report vblank n, from 2 ms before its grid time: the
 * domain's lag (DomainInfo.lag_ns), so that a conversion from msc n answers the whole window
 * the server may fire n in. floors: Xwayland's counter. */
int64_t present_fake_lag_ns(bool floors);

/* An event of the fake, as the estimator's box: vblank e->msc at its grid time less
 * PRESENT_FAKE_EARLY_US (the start of the window its report may fall in), which the lag covers,
 * moved to CLOCK_MONOTONIC_RAW by the event's bracket. As present_event_sample(). */
int present_fake_grid_sample(const PresentEvent *e, const DomainUnit *unit, Sample *ret);

/* The measured interval between two events of one CRTC: (ust1 - ust0) / (msc1 - msc0) in ns.
 * -EDOM unless msc1 > msc0 and ust1 > ust0. */
int present_interval_between(uint64_t ust0_us, uint64_t msc0, uint64_t ust1_us, uint64_t msc1,
                             double *ret_interval_ns);

/* The first vblank after now_ns on the grid through (ust_us, msc) with interval_ns:
 * ret_ns (monotonic ns) and ret_msc. -EINVAL unless interval_ns > 0, -ERANGE on overflow. */
int present_next_vblank(uint64_t ust_us, uint64_t msc, double interval_ns, int64_t now_ns, int64_t *ret_ns,
                        uint64_t *ret_msc);
