/* SPDX-License-Identifier: MIT */
#pragma once

/* The scripted clock: known truth for the tests of everything above domains/. Its reference is
 * simulated (no real time is read) and every draw comes from a seeded PRNG, so a run is fully
 * deterministic. Open it through domain_fake_ops with a FakeConfig as config (NULL: an ideal ns
 * clock equal to the reference); the name may be any string.
 *
 * Truth, in the domain's ns, unwrapped, at reference time r:
 *
 *   x(r) = offset_ns + r * (1 + rate_ppm * 1e-6) + sum of step_ns over steps with at_r_ns <= r
 *
 * A sample: r0 = now; r1 = r0 + deviation (uniform in [deviation_min_ns, deviation_max_ns], or
 * with probability outlier_probability uniform in [deviation_max_ns, outlier_max_ns]); the read
 * instant is uniform in [r0, r1]; the reading is x there, floored to the unit when it truncates,
 * else rounded, then wrapped (the wire form). The reading is unwrapped against the last one, as a
 * real source would, and the sample's box is in unwrapped domain ns: [c * period, (c + 1) * period]
 * when truncating; when rounding, the point c * period, widened to the truth at the read instant
 * if they differ (by at most period / 2), so every box contains the truth. Then now = r1 +
 * interval_ns: the simulated reference only moves forward. */

#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "units.h"

typedef struct FakeStep {
        int64_t at_r_ns;                /* the truth jumps at this reference time ... */
        int64_t step_ns;                /* ... by this much (negative: set back) */
} FakeStep;

typedef struct FakeConfig {
        DomainUnit unit;                /* all zero: UNIT_NS */
        int64_t offset_ns;              /* x at r = 0 */
        double rate_ppm;                /* rate error against the reference, > -1e6 */
        int64_t deviation_min_ns;       /* bracket width r1 - r0, >= 0 */
        int64_t deviation_max_ns;       /* >= deviation_min_ns */
        double outlier_probability;     /* in [0, 1]: a sample is slow (models load) */
        int64_t outlier_max_ns;         /* >= deviation_max_ns when outlier_probability > 0 */
        int64_t r_start_ns;             /* the first sample's r0 */
        int64_t interval_ns;            /* gap from one sample's r1 to the next one's r0, >= 0 */
        const FakeStep *steps;          /* n_steps entries, any order; copied by open */
        size_t n_steps;
        uint64_t seed;
} FakeConfig;

/* The exact truth at r (unwrapped domain ns, not quantized). NAN for a NULL domain. */
double fake_truth_ns(const Domain *d, int64_t r_ns);

/* The simulated reference time: the r0 of the next sample. */
int64_t fake_now_ns(const Domain *d);

/* Moves the simulated reference forward by dt_ns (negative: ignored), without sampling. */
void fake_advance(Domain *d, int64_t dt_ns);

/* What the clock would show at r, in wire form (quantized and wrapped), with no jitter. Does not
 * touch the sampling state. -ERANGE when the value does not fit. */
int fake_read_at(const Domain *d, int64_t r_ns, int64_t *ret_count_wire);
