/* SPDX-License-Identifier: MIT */

/* The record of one interval of a pair's series (snapshot-interval.h), in integers: no
 * allocation, no floating point. */

#include <errno.h>

#include "snapshot-interval.h"

void snapshot_nearest_steps(const Pair *p, size_t side, NearestStep *ret) {
        const int64_t *src = p->ns[side];

        for (size_t k = 0; k < p->n; k++) {
                const int64_t near = INT64_C(1) << 61;

                /* Both readings within 2^61 of 0 (any clock but a hostile file's): lo and end are
                 * within 2^61 + 2^50 of 0, inside both fit limits (src - dst -+ 2^63), so no
                 * clamp but the next snapshot's, and 64 bits hold it all. */
                if (src[k] > -near && src[k] < near && p->ns[!side][k] > -near && p->ns[!side][k] < near) {
                        int64_t lo64 = k == 0 ? src[0] - (NEAREST_FAST_MAX_NS - 1) : src[k];
                        int64_t end64 = src[k] + NEAREST_FAST_MAX_NS;

                        if (k + 1 < p->n && end64 > src[k + 1])
                                end64 = src[k + 1];
                        ret[k] = (NearestStep) {
                                .src_ns = src[k],
                                .dst_ns = p->ns[!side][k],
                                .bound_c_ns = p->slack_ns + p->unc_ns[k],
                                .lo_ns = end64 > lo64 ? lo64 : 0,
                                .width_ns = end64 > lo64 ? (uint64_t) (end64 - lo64) : 0,
                        };
                        continue;
                }
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

/* floor(a / b) and ceil(a / b), b > 0: in 64 bits where a fits (a division by a constant is then
 * a multiplication), else in 128 (a call to libgcc). */
static inline __int128 div_floor(__int128 a, int64_t b) {
        if (a >= INT64_MIN && a <= INT64_MAX) {
                int64_t q = (int64_t) a / b;

                return q * b > (int64_t) a ? q - 1 : q;
        }
        {
                __int128 q = a / b;

                return q * b > a ? q - 1 : q;
        }
}

static inline __int128 div_ceil(__int128 a, int64_t b) {
        return -div_floor(-a, b);
}

/* The rates of interval k of side: what snapshots k and k + 1 both allow, else (they disagree:
 * the rate changed) either; ±1000 ppm without rates. */
static void drift_rates(const Pair *p, size_t side, size_t k, int64_t *ret_lo, int64_t *ret_hi) {
        const int32_t *a, *b;

        if (!p->rate_ppb) {
                *ret_lo = -RATE_DEFAULT_PPB;
                *ret_hi = RATE_DEFAULT_PPB;
                return;
        }
        a = &p->rate_ppb[4 * k + 2 * side];
        b = &p->rate_ppb[4 * (k + 1) + 2 * side];
        *ret_lo = a[0] > b[0] ? a[0] : b[0];
        *ret_hi = a[1] < b[1] ? a[1] : b[1];
        if (*ret_lo > *ret_hi) {
                *ret_lo = a[0] < b[0] ? a[0] : b[0];
                *ret_hi = a[1] > b[1] ? a[1] : b[1];
        }
}

/* Where both snapshots' readings come with their models' rates and the line between them has a
 * rate those allow (within the readings' uncertainties), the two snapshots are one model's, and
 * as the live model does, DRIFT takes the clock for affine between them: the truth is then on
 * the line through the true readings, so within (c0·d1 + c1·d0) / D of the line through the
 * readings (+1 for its rounding): no rate term at all, as tight as the readings. Taken when
 * tighter than *bound (the intersection's, so never looser than NEAREST). */
static void drift_chord(const Pair *p, size_t side, size_t k, int64_t ns, __int128 c0, __int128 c1, int64_t rate_lo,
                        int64_t rate_hi, __int128 *mid, __int128 *bound) {
        const int64_t *src = p->ns[side], *dst = p->ns[!side];
        __int128 dx = (__int128) src[k + 1] - src[k], dy = (__int128) dst[k + 1] - dst[k];
        __int128 d0 = (__int128) ns - src[k], d1 = dx - d0, chord_bound;
        const __int128 limit = (__int128) 1 << 62;

        if (dx >= limit || dy >= limit || dy <= -limit || c0 >= limit || c1 >= limit)
                return;
        /* (dy - dx) / dx in [rate_lo, rate_hi] ppb, give or take (c0 + c1) / dx */
        if ((dy - dx) * 1000000000 < (__int128) rate_lo * dx - (c0 + c1) * 1000000000 ||
            (dy - dx) * 1000000000 > (__int128) rate_hi * dx + (c0 + c1) * 1000000000)
                return;
        chord_bound = div_ceil(c0 * d1 + c1 * d0, (int64_t) dx) + 1;
        if (chord_bound >= *bound)
                return;
        /* the line dst[k] + d0 + (dy - dx)·d0 / dx: its small product fits 64 bits far oftener */
        *mid = dst[k] + d0 + div_floor((dy - dx) * d0, (int64_t) dx);
        *bound = chord_bound;
}

/* DRIFT strictly inside interval k: the truth lies within c0 + rate·d0 of snapshot k's reading
 * carried forward and c1 + rate·d1 of snapshot k + 1's carried back, for every rate the interval
 * allows, and within NEAREST's bound (1000 ppm) from each; the answer is the middle of all of
 * it, its bound half the width rounded up, so never more than NEAREST's. Disjoint: NEAREST. */
static int drift_map(const Pair *p, size_t side, size_t k, int64_t ns, int64_t slack_ns, int64_t *ret_ns,
                     uint64_t *ret_bound_ns) {
        const int64_t *src = p->ns[side], *dst = p->ns[!side];
        __int128 d0 = (__int128) ns - src[k], d1 = (__int128) src[k + 1] - ns;
        __int128 c0 = (__int128) slack_ns + p->unc_ns[k], c1 = (__int128) slack_ns + p->unc_ns[k + 1];
        __int128 y0 = (__int128) dst[k] + d0, y1 = (__int128) dst[k + 1] - d1;
        __int128 n0 = div_ceil(d0, RATE_DIVISOR), n1 = div_ceil(d1, RATE_DIVISOR), lo, hi, mid, bound;
        int64_t rate_lo = -RATE_DEFAULT_PPB, rate_hi = RATE_DEFAULT_PPB;

        lo = y0 - c0 - n0 > y1 - c1 - n1 ? y0 - c0 - n0 : y1 - c1 - n1;
        hi = y0 + c0 + n0 < y1 + c1 + n1 ? y0 + c0 + n0 : y1 + c1 + n1;
        if (p->rate_ppb) {
                __int128 l0, h0, l1, h1;

                drift_rates(p, side, k, &rate_lo, &rate_hi);
                l0 = y0 - c0 + div_floor(d0 * rate_lo, 1000000000);
                h0 = y0 + c0 + div_ceil(d0 * rate_hi, 1000000000);
                l1 = y1 - c1 - div_ceil(d1 * rate_hi, 1000000000);
                h1 = y1 + c1 - div_floor(d1 * rate_lo, 1000000000);
                lo = l0 > lo ? l0 : lo;
                lo = l1 > lo ? l1 : lo;
                hi = h0 < hi ? h0 : hi;
                hi = h1 < hi ? h1 : hi;
        }
        if (lo > hi) {          /* the ends disagree: a step between them, NEAREST's answer */
                lo = y0 - c0 - n0;
                hi = y0 + c0 + n0;
        }
        mid = (lo + hi) >> 1;          /* floor: GCC shifts signed values arithmetically */
        bound = hi - mid;
        if (p->rate_ppb)
                drift_chord(p, side, k, ns, c0, c1, rate_lo, rate_hi, &mid, &bound);
        if (mid < INT64_MIN || mid > INT64_MAX || bound > INT64_MAX)
                return -ERANGE;
        *ret_ns = (int64_t) mid;
        *ret_bound_ns = (uint64_t) bound;
        return 0;
}

int snapshot_interval_map(const Pair *p, size_t side, size_t k, SnapshotMode mode, int64_t ns, int64_t slack_ns,
                          int64_t *ret_ns, uint64_t *ret_bound_ns) {
        const int64_t *src = p->ns[side];
        int64_t out, bound;
        ConvRecord rec;
        int r;

        if (mode == SNAPSHOT_MODE_DRIFT && k + 1 < p->n && ns > src[k] && ns < src[k + 1])
                return drift_map(p, side, k, ns, slack_ns, ret_ns, ret_bound_ns);
        snapshot_nearest_record(p, side, k, slack_ns, &rec);
        r = conv_record_map(&rec, ns, &out, &bound);
        if (r != 0)
                return r;
        *ret_ns = out;
        *ret_bound_ns = (uint64_t) bound;
        return 0;
}
