/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <string.h>

#include "x11-verdict.h"
#include "xtime.h"

#define PLANNER_WIDTH_DEFAULT_NS INT64_C(100000)
/* Time to get from the planner's answer to the flush, beyond the sleep's own lateness. */
#define PLANNER_LEAD_NS INT64_C(10000)
/* A wake-up later than this was a preemption, not the timer's slack: do not learn from it. */
#define PLANNER_LATENESS_MAX_NS INT64_C(500000)

static int64_t floor_div(int64_t a, int64_t b) {
        int64_t q = a / b;

        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b) {
        return a - floor_div(a, b) * b;
}

/* Whether a clock read as c0 before the stamp and c1 after it can have shown ms (mod 2^32):
 * it showed floor(c / 1 ms) for some c in [c0, c1]. */
static bool ms_within(uint32_t ms, int64_t c0_ns, int64_t c1_ns) {
        int64_t k0 = floor_div(c0_ns, X11_MS_NS), k1 = floor_div(c1_ns, X11_MS_NS);
        uint32_t d = ms - (uint32_t) k0;

        return c1_ns >= c0_ns && (int64_t) d <= k1 - k0;
}

unsigned x11_probe_consistency(const X11Probe *p, int64_t coarse_res_ns) {
        unsigned flags = 0;

        if (ms_within(p->server_ms, p->mono0_ns, p->mono1_ns))
                flags |= X11_CONSISTENT_MONOTONIC;
        if (coarse_res_ns > 0 && coarse_res_ns <= X11_MS_NS &&
            ms_within(p->server_ms, p->coarse0_ns, p->coarse1_ns))
                flags |= X11_CONSISTENT_COARSE;
        return flags;
}

int64_t x11_probe_unwrapped_ms(const X11Probe *p) {
        return xtime_unwrap_ms(p->server_ms, floor_div(p->mono1_ns, X11_MS_NS));
}

/* (lo, hi]: [T ms, T + 1 ms) minus a clock read as c0 before the stamp and c1 after it. */
static void offset_range(const X11Probe *p, int64_t c0_ns, int64_t c1_ns, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        int64_t t_ns = x11_probe_unwrapped_ms(p) * X11_MS_NS;

        *ret_lo_ns = t_ns - c1_ns;
        *ret_hi_ns = t_ns + X11_MS_NS - c0_ns;
}

void x11_probe_offset_range(const X11Probe *p, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        offset_range(p, p->mono0_ns, p->mono1_ns, ret_lo_ns, ret_hi_ns);
}

int x11_probe_sample(const X11Probe *p, int64_t lag_ns, Sample *ret) {
        int64_t t_ns;

        if (!p || !ret || lag_ns < 0)
                return -EINVAL;
        if (p->raw1_ns < p->raw0_ns || p->mono1_ns < p->mono0_ns || p->coarse1_ns < p->coarse0_ns)
                return -EINVAL;

        t_ns = x11_probe_unwrapped_ms(p) * X11_MS_NS;
        *ret = (Sample) {
                .r0_ns = p->raw0_ns,
                .r1_ns = p->raw1_ns,
                .x_lo_ns = t_ns,
                .x_hi_ns = t_ns + X11_MS_NS + lag_ns,
        };
        return 0;
}

void x11_verdict_init(X11Verdict *v, int64_t coarse_res_ns) {
        memset(v, 0, sizeof(*v));
        v->coarse_res_ns = coarse_res_ns;
}

void x11_verdict_reset(X11Verdict *v) {
        v->head = 0;
        v->n = 0;
}

void x11_verdict_add(X11Verdict *v, const X11Probe *p) {
        X11VerdictEntry *e;

        if (v->n == X11_VERDICT_WINDOW) {
                e = &v->ring[v->head];
                v->head = (v->head + 1) % X11_VERDICT_WINDOW;
        } else
                e = &v->ring[(v->head + v->n++) % X11_VERDICT_WINDOW];

        e->consistent = x11_probe_consistency(p, v->coarse_res_ns);
        x11_probe_offset_range(p, &e->offset_lo_ns, &e->offset_hi_ns);
        offset_range(p, p->coarse0_ns, p->coarse1_ns, &e->coarse_lo_ns, &e->coarse_hi_ns);
        e->mono_width_ns = p->mono1_ns - p->mono0_ns;
}

static int64_t median_width_ns(const X11Verdict *v) {
        int64_t w[X11_VERDICT_WINDOW];

        for (size_t i = 0; i < v->n; i++) {
                int64_t x = v->ring[(v->head + i) % X11_VERDICT_WINDOW].mono_width_ns;
                size_t j;

                for (j = i; j > 0 && w[j - 1] > x; j--)
                        w[j] = w[j - 1];
                w[j] = x;
        }
        return v->n > 0 ? w[v->n / 2] : 0;
}

X11Identity x11_verdict_get(const X11Verdict *v) {
        unsigned all = X11_CONSISTENT_MONOTONIC | X11_CONSISTENT_COARSE;
        int64_t lo_max = INT64_MIN, hi_min = INT64_MAX, margin_ns;

        if (v->n < X11_VERDICT_MIN_PROBES)
                return X11_IDENTITY_NONE;

        for (size_t i = 0; i < v->n; i++) {
                const X11VerdictEntry *e = &v->ring[(v->head + i) % X11_VERDICT_WINDOW];

                all &= e->consistent;
                if (e->offset_lo_ns > lo_max)
                        lo_max = e->offset_lo_ns;
                if (e->offset_hi_ns < hi_min)
                        hi_min = e->offset_hi_ns;
        }

        /* Every probe being consistent means 0 lies in the intersection of their offset ranges;
         * the truth lies there too. Requiring the intersection to be narrow around 0 bounds how
         * far from the identity a server called "identity" can be. */
        margin_ns = 2 * median_width_ns(v);
        if (margin_ns < X11_VERDICT_MARGIN_MIN_NS)
                margin_ns = X11_VERDICT_MARGIN_MIN_NS;
        if ((all & X11_CONSISTENT_MONOTONIC) && lo_max >= -margin_ns && hi_min <= margin_ns)
                return X11_IDENTITY_MONOTONIC;
        /* The coarse clock advances by whole ticks at one fixed phase: it cannot be pinned
         * below a tick, and conversions through it carry its own tick-wide bound anyway. */
        if (all & X11_CONSISTENT_COARSE)
                return X11_IDENTITY_COARSE;
        return X11_IDENTITY_NONE;
}

int64_t x11_verdict_residual_ns(const X11Verdict *v, X11Identity identity) {
        int64_t lo_max = INT64_MIN, hi_min = INT64_MAX;

        if (identity == X11_IDENTITY_NONE || v->n == 0)
                return 0;
        for (size_t i = 0; i < v->n; i++) {
                const X11VerdictEntry *e = &v->ring[(v->head + i) % X11_VERDICT_WINDOW];
                bool coarse = identity == X11_IDENTITY_COARSE;
                int64_t lo = coarse ? e->coarse_lo_ns : e->offset_lo_ns;
                int64_t hi = coarse ? e->coarse_hi_ns : e->offset_hi_ns;

                if (lo > lo_max)
                        lo_max = lo;
                if (hi < hi_min)
                        hi_min = hi;
        }
        /* The offset lies in (lo_max, hi_min], which holds 0 while the identity does. */
        lo_max = lo_max < 0 ? -lo_max : lo_max;
        hi_min = hi_min < 0 ? -hi_min : hi_min;
        return lo_max > hi_min ? lo_max : hi_min;
}

void x11_planner_init(X11Planner *p) {
        *p = (X11Planner) { .width_ns = PLANNER_WIDTH_DEFAULT_NS };
}

/* The range as it may have drifted by at_ns. */
static void planner_range_at(const X11Planner *p, int64_t at_ns, int64_t *ret_lo_ns, int64_t *ret_hi_ns) {
        int64_t age_ns = at_ns > p->at_mono_ns ? at_ns - p->at_mono_ns : 0, drift_ns;

        /* Beyond a few seconds the range is wider than a ms anyway: cap before multiplying. */
        if (age_ns > INT64_C(1000000000000))
                age_ns = INT64_C(1000000000000);
        drift_ns = age_ns / 1000000 * X11_PLANNER_DRIFT_PPM;
        *ret_lo_ns = p->offset_lo_ns - drift_ns;
        *ret_hi_ns = p->offset_hi_ns + drift_ns;
}

void x11_planner_add(X11Planner *p, const X11Probe *probe) {
        int64_t lo, hi, old_lo, old_hi, w = probe->mono1_ns - probe->mono0_ns;

        x11_probe_offset_range(probe, &lo, &hi);
        if (p->have_range) {
                planner_range_at(p, probe->mono1_ns, &old_lo, &old_hi);
                /* Disjoint: the server's clock stepped (or drifted past the allowance). */
                if (old_lo < hi && lo < old_hi) {
                        lo = lo > old_lo ? lo : old_lo;
                        hi = hi < old_hi ? hi : old_hi;
                }
        }
        p->offset_lo_ns = lo;
        p->offset_hi_ns = hi;
        p->at_mono_ns = probe->mono1_ns;
        p->have_range = true;
        if (w >= 0) {
                int64_t sorted[X11_PLANNER_WIDTHS];
                size_t n;

                p->widths_ns[p->n_widths++ % X11_PLANNER_WIDTHS] = w;
                n = p->n_widths < X11_PLANNER_WIDTHS ? p->n_widths : X11_PLANNER_WIDTHS;
                for (size_t i = 0; i < n; i++) {
                        size_t j;

                        for (j = i; j > 0 && sorted[j - 1] > p->widths_ns[i]; j--)
                                sorted[j] = sorted[j - 1];
                        sorted[j] = p->widths_ns[i];
                }
                p->width_ns = sorted[n / 2];
        }
}

int64_t x11_planner_next(const X11Planner *p, int64_t now_mono_ns, uint64_t random, int64_t *ret_wake_ns) {
        int64_t earliest_ns = now_mono_ns + p->lateness_ns + PLANNER_LEAD_NS, phase_ns, target_ns, lo, hi, wake_ns;

        if (p->have_range)
                planner_range_at(p, now_mono_ns, &lo, &hi);
        if (!p->have_range || hi - lo > X11_PLANNER_KNOWN_NS)
                /* Start at a random sub-ms phase of CLOCK_MONOTONIC. */
                phase_ns = (int64_t) (random % (uint64_t) X11_MS_NS);
        else {
                /* The server's ms edge, at lo + (hi - lo) / 2 past a CLOCK_MONOTONIC ms edge,
                 * is to fall edge_ns after the start, inside the typical bracket w. Such a
                 * probe pins one side of the offset to within w; its range is also what the
                 * verdict's margin asks of an identity. */
                int64_t w = p->width_ns > 0 ? p->width_ns : 1;
                int64_t edge_ns = (int64_t) (random % (uint64_t) w);

                phase_ns = floor_mod(-(lo + (hi - lo) / 2) - edge_ns, X11_MS_NS);
        }
        target_ns = earliest_ns + floor_mod(phase_ns - earliest_ns, X11_MS_NS);

        wake_ns = target_ns - p->lateness_ns;
        *ret_wake_ns = wake_ns > now_mono_ns ? wake_ns : now_mono_ns;
        return target_ns;
}

bool x11_planner_woke(X11Planner *p, int64_t wake_ns, int64_t target_ns, int64_t woke_ns) {
        int64_t late_ns = woke_ns - wake_ns;

        if (late_ns >= 0 && late_ns <= PLANNER_LATENESS_MAX_NS)
                p->lateness_ns = (7 * p->lateness_ns + late_ns) / 8;
        /* Half a bracket late: the edge would mostly fall before the start. */
        return woke_ns - target_ns <= p->width_ns / 2;
}
