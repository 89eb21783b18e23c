/* SPDX-License-Identifier: MIT */

/* The record of one interval of a pair's series (snapshot-interval.h), in integers: no
 * allocation, no floating point. */

#include "snapshot-interval.h"

void snapshot_nearest_steps(const Pair *p, size_t side, NearestStep *ret) {
        const int64_t *src = p->ns[side];

        for (size_t k = 0; k < p->n; k++) {
                /* the shortcut's values: [lo, end), in 128 bits where the ends may pass int64's */
                __int128 lo = k == 0 ? (__int128) src[0] - (NEAREST_FAST_MAX_NS - 1) : src[k];
                __int128 end = (__int128) src[k] + NEAREST_FAST_MAX_NS;
                /* where the answer dst + (ns - src) fits an int64: the shortcut checks no overflow */
                __int128 fit_lo = (__int128) src[k] - p->ns[!side][k] + INT64_MIN;
                __int128 fit_end = (__int128) src[k] - p->ns[!side][k] + INT64_MAX + 1;

                if (lo < fit_lo)
                        lo = fit_lo;
                if (lo < INT64_MIN)
                        lo = INT64_MIN;
                if (end > fit_end)
                        end = fit_end;
                if (k + 1 < p->n && end > src[k + 1])
                        end = src[k + 1];
                /* so that the shortcut's unsigned ns - lo < width means lo <= ns < end, no wrap */
                if (end > (__int128) INT64_MAX + 1)
                        end = (__int128) INT64_MAX + 1;
                ret[k] = (NearestStep) {
                        .src_ns = src[k],
                        .dst_ns = p->ns[!side][k],
                        .bound_c_ns = p->slack_ns + p->unc_ns[k],
                        .lo_ns = end > lo ? (int64_t) lo : 0,
                        .width_ns = end > lo ? (uint64_t) (end - lo) : 0,     /* < 2^51 */
                };
        }
}

void snapshot_interval_record(const Pair *p, size_t side, size_t k, SnapshotMode mode, int64_t ns, int64_t slack_ns,
                              ConvRecord *ret) {
        const int64_t *src = p->ns[side], *dst = p->ns[!side];
        int64_t slope = p->slope_q62[side][k < p->n - 1 ? k : 0];

        snapshot_nearest_record(p, side, k, slack_ns, ret);
        if (mode != SNAPSHOT_MODE_DRIFT || k + 1 >= p->n || slope == 0 || ns <= src[k] || ns >= src[k + 1])
                return;
        /* DRIFT: the interval's line, rounded to nearest (+1/2), bounded from the nearer end. */
        {
                uint64_t dx = (uint64_t) src[k + 1] - (uint64_t) src[k], half = dx / 2;

                ret->slope = slope + 1;
                ret->slope_neg = slope;
                ret->out_frac = INT64_C(1) << 61;
                /* between two snapshots the line's error is at most the larger of theirs */
                ret->bound_c_ns = slack_ns + 1 + (p->unc_ns[k] > p->unc_ns[k + 1] ? p->unc_ns[k] : p->unc_ns[k + 1]);
                ret->bound_slope = DRIFT_BOUND_Q62;
                if ((uint64_t) ns - (uint64_t) src[k] <= half) {
                        ret->in_lo = src[k] + 1;
                        ret->in_hi = (int64_t) ((uint64_t) src[k] + half);
                } else {
                        ret->in_c = src[k + 1];
                        ret->out_c = dst[k + 1];
                        ret->in_lo = (int64_t) ((uint64_t) src[k] + half + 1);
                        ret->in_hi = src[k + 1] - 1;
                }
        }
}
