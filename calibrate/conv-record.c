/* SPDX-License-Identifier: MIT */

/* Building conversion records (conv-record.h). This is where the estimator's models (doubles)
 * become integers: every quantity the answer depends on is computed as an int64 and a small
 * double fraction, and every term of the bound is rounded outward. Converting never comes here.
 *
 * The chain, for a source count u:
 *   x(u) = u·Pf + of                   (from's ns: of = Pf/2 for a truncating unit, + lag/2)
 *   r(x) = rA + (x - xA)·kA            (from's model inverted, kA = 1/(1 + rateA); or r = x)
 *   y(r) = xB + (r - rB)·kB            (to's model, kB = 1 + rateB; or y = r)
 *   c(y) = (y - lag_to/2) / Pt         (to's count; floor for a truncating unit, else nearest)
 * is affine in u: c(u) = c(u_c) + (u - u_c)·S, S = Pf·kA·kB/Pt, with u_c the count at spec->at_r_ns.
 *
 * The bound, for |d| = |u - u_c| (ns):
 *   input:  e_x = Pf/2 (truncating, or a rounding counter of period > 1 ns) + lag_from/2 + extra
 *   hop A:  e_r = (hA + wA·(|r(u_c) - rA| + |d|·Pf·kA') + e_x) / (1 + rateA - wA)
 *           (model.h's inverse: the lines of the family have slopes >= 1 + rateA - wA; kA' >= kA)
 *   hop B:  e_y = hB + wB·(|r(u_c) - rB| + |d|·Pf·kA') + e_r·(1 + |rateB| + wB)
 *   output: + lag_to/2, + the residual of the integer answer (conv_record_map()), and for an ns
 *           target that rounds, 1/2
 *   numbers: the centre's doubles (|x - xA|·|kA - 1| and |r - rB|·|rateB| carry relative errors
 *           of 2^-52 each, fractions 2^-53), the slope's quantisation (|d|·2^-shift target counts,
 *           |d|·|S|·2^-50 for the double S), all taken at twice their size, + 1 ns.
 * Constant terms go to bound_c_ns, the |d| terms to bound_slope; both are rounded up. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "conv-record.h"

#define TWO62 4611686018427387904.0     /* 2^62 */
#define TWO32 4294967296.0
/* The widest |d| a record answers for: its products stay far inside 128 bits and its answers
 * inside int64; values further from the centre go to the caller's general path. */
#define SPAN_MAX 0x1p61

typedef struct Fix {            /* i + f, |f| small: an int64 with a fraction */
        int64_t i;
        double f;
} Fix;

static double fabs_(double v) {
        return v < 0 ? -v : v;
}

/* floor for |v| < 2^62 */
static int64_t floor_(double v) {
        int64_t t = (int64_t) v;

        return (double) t > v ? t - 1 : t;
}

static int fix_norm(Fix *x) {
        int64_t k = floor_(x->f);

        if (__builtin_add_overflow(x->i, k, &x->i))
                return -ERANGE;
        x->f -= (double) k;
        return 0;
}

/* A period as m·2^-s exactly (a double has 53 bits of mantissa). */
static int period_split(double period_ns, int64_t *ret_m, unsigned *ret_s) {
        double p = period_ns;
        unsigned s = 0;

        if (!(p > 0.0) || !(p <= 0x1p40))
                return -EINVAL;
        while (p != (double) (int64_t) p) {
                p *= 2.0;
                if (++s > 100)
                        return -EINVAL;
        }
        *ret_m = (int64_t) p;
        *ret_s = s;
        return 0;
}

/* u·P exactly, as an int64 and its fraction. */
static int count_to_ns(int64_t u, double period_ns, Fix *ret) {
        int64_t m;
        unsigned s;
        __int128 p, i;
        int r = period_split(period_ns, &m, &s);

        if (r < 0)
                return r;
        p = (__int128) u * m;
        i = p >> s;
        if (i < INT64_MIN || i > INT64_MAX)
                return -ERANGE;
        ret->i = (int64_t) i;
        /* A multiplication, not i << s: shifting a negative value left is undefined. */
        ret->f = s ? (double) (uint64_t) (p - i * ((__int128) 1 << s)) / (double) ((__int128) 1 << s) : 0.0;
        return 0;
}

/* y / P: int64 part (floor) and fraction. */
static int ns_to_count(Fix y, double period_ns, Fix *ret) {
        int64_t m;
        unsigned s;
        __int128 n, q, rem;
        int r = period_split(period_ns, &m, &s);

        if (r < 0)
                return r;
        if (s > 60)
                return -ERANGE;
        n = (__int128) y.i * ((__int128) 1 << s) + (__int128) floor_(y.f * (double) ((int64_t) 1 << s));
        q = n / m;
        rem = n - q * m;
        if (rem < 0) {
                q--;
                rem += m;
        }
        if (q < INT64_MIN || q > INT64_MAX)
                return -ERANGE;
        ret->i = (int64_t) q;
        /* + what floor() above dropped, at most 2^-s ns: < 1/m of a count */
        ret->f = ((double) rem + (y.f * (double) ((int64_t) 1 << s) - (double) floor_(y.f * (double) ((int64_t) 1 << s)))) /
                 (double) m;
        return fix_norm(ret);
}

/* A positive (or zero) double as m·2^-s, rounded up, m < 2^62. */
static void q_up(double v, int64_t *ret_m, uint8_t *ret_s) {
        unsigned s = 63;

        if (!(v > 0.0)) {
                *ret_m = 0;
                *ret_s = 0;
                return;
        }
        while (s > 1 && v * (double) ((uint64_t) 1 << (s - 1)) * 2.0 >= TWO62)
                s--;
        *ret_m = (int64_t) (v * (double) ((uint64_t) 1 << (s - 1)) * 2.0) + 1;
        *ret_s = (uint8_t) s;
}

static int64_t ceil_ns(double v) {
        int64_t t;

        if (!(v < 0x1p62))
                return INT64_MAX;
        t = floor_(v);
        return (double) t < v ? t + 1 : t;
}

static int unit_coding(const DomainUnit *u, uint8_t *ret_coding, uint8_t *ret_bits) {
        if (u->encoding == UNIT_ENCODING_X11_US) {
                *ret_coding = CONV_CODING_X11_US;
                *ret_bits = 0;
        } else if (u->wrap_bits > 0 && u->wrap_bits < 64) {
                *ret_coding = CONV_CODING_WRAP;
                *ret_bits = (uint8_t) u->wrap_bits;
        } else {
                *ret_coding = CONV_CODING_PLAIN;
                *ret_bits = 0;
        }
        return 0;
}

/* How many ns one wrap of the unit spans; 0: none. */
static double unit_wrap_ns(const DomainUnit *u) {
        if (u->encoding == UNIT_ENCODING_X11_US)
                return (double) CONV_X11_US_WRAP * u->period_ns;
        if (u->wrap_bits > 0 && u->wrap_bits < 64)
                return (double) (UINT64_C(1) << u->wrap_bits) * u->period_ns;
        return 0.0;
}

void conv_record_identity(ConvRecord *ret) {
        *ret = (ConvRecord) {
                .in_lo = INT64_MIN,
                .in_hi = INT64_MAX,
                .slope = INT64_C(1) << 62,
                .slope_neg = INT64_C(1) << 62,
                .shift = 62,
                .gain_q32 = UINT64_C(1) << 32,
        };
}

void conv_record_failing(int error, ConvRecord *ret) {
        conv_record_identity(ret);
        ret->status = error < 0 || error == CONV_RECORD_MISS ? error : -EINVAL;
}

int conv_record_validate(const ConvRecord *c) {
        if (c->shift > 63 || c->bound_shift > 63 || c->bound_c_ns < 0 || c->bound_slope < 0 ||
            c->out_period_q32 < 0 || c->out_frac < 0 ||
            (c->shift < 63 && c->out_frac >= (INT64_C(1) << c->shift)) ||
            (c->status > 0 && c->status != CONV_RECORD_MISS) ||
            c->in_coding > CONV_CODING_X11_US || c->out_coding > CONV_CODING_X11_US ||
            (c->in_coding == CONV_CODING_WRAP && (c->in_wrap_bits == 0 || c->in_wrap_bits > 63)) ||
            (c->out_coding == CONV_CODING_WRAP && (c->out_wrap_bits == 0 || c->out_wrap_bits > 63)))
                return -EBADMSG;
        /* The validity range keeps |d| below 2^62 (conv_record_map() relies on it). */
        if (c->status == 0 && c->in_lo <= c->in_hi && ((__int128) c->in_hi - c->in_c > INT64_MAX ||
                                                  (__int128) c->in_lo - c->in_c < INT64_MIN))
                return -EBADMSG;
        return 0;
}

/* Half of a reading's period that the reading leaves open (see the top); none for an event's
 * count, which names an instant. */
static double reading_half_ns(const DomainUnit *u) {
        if (u->events)
                return 0.0;
        return u->truncates || u->period_ns > 1.0 ? u->period_ns / 2.0 : 0.0;
}

/* What conv_record_build() carries from one stage to the next (the names of the top). */
typedef struct Build {
        const ConvSpec *spec;
        const DomainUnit *uf, *ut;
        const Model *A, *B;
        double kA, kA_max, igA, gainB;  /* the hops' slopes and error gains */
        double of;                      /* what x(u) adds to u·Pf */
        int64_t u_c;                    /* the centre, source count */
        Fix rr, c;                      /* r(x(u_c)) and c(u_c) */
        double num_eps, rA_dist, rB_dist;
        double S;                       /* the slope as a double */
        uint8_t slope_s;
        bool exact;                     /* units alone in whole ns: no slack */
        double bc, bs;                  /* the bound's constant and |d| terms */
        ConvRecord rec;
} Build;

static bool model_usable(const Model *m) {
        return m->half_ns >= 0 && m->rate_half >= 0 && fabs_(m->rate) < 0.5 && 1.0 + m->rate - m->rate_half > 0.5;
}

/* The spec checked, and the hops' factors. */
static int build_check(Build *b) {
        const ConvSpec *spec = b->spec;

        if (!spec->from_unit || !spec->to_unit || spec->from_lag_ns < 0 || spec->to_lag_ns < 0 || spec->extra_ns < 0)
                return -EINVAL;
        b->uf = spec->from_unit;
        b->ut = spec->to_unit;
        b->A = spec->from_model;
        b->B = spec->to_model;
        if (unit_validate(b->uf) < 0 || unit_validate(b->ut) < 0 || !(b->uf->period_ns <= 0x1p30) ||
            !(b->ut->period_ns <= 0x1p30))
                return -EINVAL;
        if ((b->A && !model_usable(b->A)) || (b->B && !model_usable(b->B)))
                return -EINVAL;
        b->kA = b->kA_max = b->igA = b->gainB = 1.0;
        if (b->A) {
                b->kA = 1.0 / (1.0 + b->A->rate);
                b->kA_max = 1.0 / (1.0 + b->A->rate - b->A->rate_half) * (1.0 + 0x1p-40);
                b->igA = b->kA_max;
        }
        if (b->B)
                b->gainB = (1.0 + fabs_(b->B->rate) + b->B->rate_half) * (1.0 + 0x1p-40);
        b->of = (b->uf->truncates ? b->uf->period_ns / 2.0 : 0.0) + (double) (spec->from_lag_ns / 2);
        return 0;
}

/* The centre: the source's count at at_r (from's model forward, then its unit). */
static int build_centre(Build *b) {
        const Model *A = b->A;
        Fix y = { b->spec->at_r_ns, 0.0 }, c;
        int r;

        if (A) {
                double dr = (double) b->spec->at_r_ns - (double) A->r_c_ns;
                int64_t dri;

                y.i = A->x_c_ns;
                y.f = dr * (1.0 + A->rate);
                if (!(fabs_(y.f) < 0x1p62))
                        return -ERANGE;
                /* keep precision: the integer part of dr in y.i */
                if (__builtin_sub_overflow(b->spec->at_r_ns, A->r_c_ns, &dri) ||
                    __builtin_add_overflow(A->x_c_ns, dri, &y.i))
                        return -ERANGE;
                y.f = (double) dri * A->rate;
                if ((r = fix_norm(&y)) < 0)
                        return r;
        }
        y.f -= b->of;
        if ((r = fix_norm(&y)) < 0)
                return r;
        if ((r = ns_to_count(y, b->uf->period_ns, &c)) < 0)
                return r;
        b->u_c = c.i;
        return 0;
}

/* The chain at the centre: x(u_c), r(x), y(r), c(y), with the doubles' error. */
static int build_chain(Build *b) {
        const Model *A = b->A, *B = b->B;
        Fix x, y;
        int r;

        if ((r = count_to_ns(b->u_c, b->uf->period_ns, &x)) < 0)
                return r;
        x.f += b->of;
        if ((r = fix_norm(&x)) < 0)
                return r;
        b->num_eps = 0x1p-20;
        if (A) {
                int64_t dx;
                double dxd;

                if (__builtin_sub_overflow(x.i, A->x_c_ns, &dx) || __builtin_add_overflow(A->r_c_ns, dx, &b->rr.i))
                        return -ERANGE;
                dxd = (double) dx + x.f;
                b->rr.f = x.f + dxd * (b->kA - 1.0);
                b->num_eps += fabs_(dxd * (b->kA - 1.0)) * 0x1p-50 + fabs_(dxd) * 0x1p-50 * fabs_(A->rate);
                if ((r = fix_norm(&b->rr)) < 0)
                        return r;
                b->rA_dist = fabs_((double) (b->rr.i - A->r_c_ns) + b->rr.f);
        } else
                b->rr = x;
        if (B) {
                int64_t dr;
                double drd;

                if (__builtin_sub_overflow(b->rr.i, B->r_c_ns, &dr) || __builtin_add_overflow(B->x_c_ns, dr, &y.i))
                        return -ERANGE;
                drd = (double) dr + b->rr.f;
                y.f = b->rr.f + drd * B->rate;
                b->num_eps += fabs_(drd * B->rate) * 0x1p-50;
                if ((r = fix_norm(&y)) < 0)
                        return r;
                b->rB_dist = fabs_(drd);
        } else
                y = b->rr;
        y.f -= (double) (b->spec->to_lag_ns / 2);
        if ((r = fix_norm(&y)) < 0)
                return r;
        return ns_to_count(y, b->ut->period_ns, &b->c);
}

/* The slope and its Q form: exact from the periods' mantissas, the models' factor
 * K = kA·kB = 1 + (rateB - rateA)/(1 + rateA) applied as a correction. */
static int build_slope(Build *b) {
        const Model *A = b->A, *B = b->B;
        unsigned s = 62, sf, st;
        int64_t mf, mt;
        __int128 n, dd, q_dn, q_up;
        double delta = ((B ? B->rate : 0.0) - (A ? A->rate : 0.0)) / (A ? 1.0 + A->rate : 1.0), corr;
        int e;

        b->S = b->uf->period_ns * b->kA * (B ? 1.0 + B->rate : 1.0) / b->ut->period_ns;
        while (s > 1 && fabs_(b->S) * (double) ((uint64_t) 1 << (s - 1)) * 2.0 >= 0x1p61)
                s--;
        if (period_split(b->uf->period_ns, &mf, &sf) < 0 || period_split(b->ut->period_ns, &mt, &st) < 0)
                return -EINVAL;
        e = (int) s + (int) st - (int) sf;
        /* mf·2^e / mt is about the Q slope (< 2^62) and mt < 2^53: it fits 128 bits */
        if ((e >= 0 && 64 - __builtin_clzll((uint64_t) mf) + e > 125) ||
            (e < 0 && 64 - __builtin_clzll((uint64_t) mt) - e > 125))
                return -EINVAL;
        n = e >= 0 ? (__int128) mf << e : (__int128) mf;
        dd = e >= 0 ? (__int128) mt : (__int128) mt << -e;
        q_dn = n / dd;
        q_up = q_dn + (q_dn * dd != n);
        corr = (double) q_dn * delta;
        if (!(fabs_(corr) < 0x1p61))
                return -ERANGE;
        b->slope_s = (uint8_t) s;
        b->rec.slope = (int64_t) q_up + (delta != 0.0 ? floor_(corr) + 2 : 0);
        b->rec.slope_neg = (int64_t) q_dn + (delta != 0.0 ? floor_(corr) - 1 : 0);
        b->rec.shift = b->slope_s;
        return 0;
}

/* The fraction at the centre, with +1/2 for a target that rounds to nearest; rounded up. */
static int build_out_centre(Build *b) {
        ConvRecord *rec = &b->rec;
        double fq;
        int64_t f;
        int r;

        if (!unit_floors(b->ut)) {
                b->c.f += 0.5;
                rec->flags |= CONV_RECORD_OUT_NEAREST;
        }
        if ((r = fix_norm(&b->c)) < 0)
                return r;
        rec->out_c = b->c.i;
        fq = b->c.f * (double) ((uint64_t) 1 << (b->slope_s - 1)) * 2.0;
        f = floor_(fq);
        rec->out_frac = f + ((double) f < fq);
        if (rec->out_frac >= (INT64_C(1) << b->slope_s)) {
                rec->out_frac -= INT64_C(1) << b->slope_s;
                rec->out_c++;
        }
        if (rec->out_frac < 0)
                rec->out_frac = 0;
        return 0;
}

/* The bound (see the top): bc and bs, and the residual's period. */
static void build_bound(Build *b) {
        const ConvSpec *spec = b->spec;
        const DomainUnit *uf = b->uf, *ut = b->ut;
        const Model *A = b->A, *B = b->B;
        double e_x = reading_half_ns(uf) + (double) (spec->from_lag_ns - spec->from_lag_ns / 2) +
                     (double) spec->extra_ns;

        b->bc = e_x;
        b->bs = 0.0;
        if (A) {
                b->bc = (A->half_ns + A->rate_half * b->rA_dist + e_x) * b->igA;
                b->bs = A->rate_half * uf->period_ns * b->kA_max * b->igA;
        }
        if (B) {
                b->bc = B->half_ns + B->rate_half * b->rB_dist + b->bc * b->gainB;
                b->bs = B->rate_half * uf->period_ns * b->kA_max + b->bs * b->gainB;
        }
        b->bc += (double) (spec->to_lag_ns - spec->to_lag_ns / 2);
        /* numbers: the centre (2x), the fractions and the Q fraction of the centre (a count's
         * 2^-shift), and the residual's rounding down; none for units alone in whole ns, whose
         * centre and slope are exact (the slope's quantisation is in bs below). */
        b->exact = !A && !B && uf->period_ns == (double) (int64_t) uf->period_ns &&
                   ut->period_ns == (double) (int64_t) ut->period_ns && spec->from_lag_ns == 0 && spec->to_lag_ns == 0;
        if (!b->exact)
                b->bc += 2.0 * b->num_eps + 2.0 * ut->period_ns * 0x1p-40 + 1.0;
        /* Exact records need no quantisation term: their answers are exact within the span set
         * below, where the slope's rounding stays under 1/Pt of a count (the spacing of the exact
         * answers' fractions) and the floored residual is the true one, an integer. */
        if (!b->exact) {
                b->bs += 2.0 * ut->period_ns *
                         (0x1p-50 * fabs_(b->S) + 8.0 / ((double) ((uint64_t) 1 << (b->slope_s - 1)) * 2.0));
                b->bs *= 1.0 + 0x1p-40;
        }
        if (ut->period_ns > 1.0 || unit_floors(ut)) {
                b->rec.out_period_q32 = (int64_t) (ut->period_ns * TWO32) + 1;
                if (!b->exact)
                        b->bc += 1.0;   /* the residual's rounding down */
        } else if (!b->exact)
                b->bc += 0.5;   /* an ns target's rounding */
}

/* Where it answers: from's model's range, to's model's range, and the span. */
static int build_range(Build *b) {
        const ConvSpec *spec = b->spec;
        double span = SPAN_MAX, lo_d, hi_d, out_c = (double) b->rec.out_c, S = fabs_(b->S);
        int64_t u_c = b->u_c, lo, hi;

        if (S * span > 0x1p61 - fabs_(out_c))
                span = (0x1p61 - fabs_(out_c)) / (S > 1e-30 ? S : 1e-30);
        if (b->bs * span > 0x1p60)
                span = 0x1p60 / b->bs;
        if (b->exact && span > (double) ((uint64_t) 1 << (b->slope_s - 1)) / b->ut->period_ns)
                span = (double) ((uint64_t) 1 << (b->slope_s - 1)) / b->ut->period_ns;
        if (!(span >= 1.0))
                return -ERANGE;
        lo_d = -span;
        hi_d = span;
        if (b->A && spec->from_x_begin_ns != INT64_MIN) {
                /* u >= (x_begin - of)/Pf, with a margin for the doubles */
                double u_begin = ((double) spec->from_x_begin_ns - b->of) / b->uf->period_ns;
                double d = u_begin - (double) u_c;

                d += 2.0 + fabs_(u_begin) * 0x1p-50;
                if (d > lo_d)
                        lo_d = d;
        }
        if (b->B && spec->to_r_begin_ns != INT64_MIN) {
                double d = ((double) spec->to_r_begin_ns - ((double) b->rr.i + b->rr.f)) / (b->uf->period_ns * b->kA);

                d += 2.0 + fabs_(d) * 0x1p-40;
                if (d > lo_d)
                        lo_d = d;
        }
        if (lo_d > hi_d) {
                /* Nowhere near the centre: an empty range, every value to the general path. */
                lo = u_c;
                hi = u_c == INT64_MIN ? u_c : u_c - 1;
                if (lo == hi)
                        return -ERANGE;
        } else {
                __int128 l = (__int128) u_c + (lo_d >= 0 ? floor_(lo_d) + 1 : -floor_(-lo_d));
                __int128 h = (__int128) u_c + floor_(hi_d);

                lo = l < INT64_MIN ? INT64_MIN : l > INT64_MAX ? INT64_MAX : (int64_t) l;
                hi = h < INT64_MIN ? INT64_MIN : h > INT64_MAX ? INT64_MAX : (int64_t) h;
        }
        b->rec.in_lo = lo;
        b->rec.in_hi = hi;
        return 0;
}

int conv_record_build(const ConvSpec *spec, ConvRecord *ret) {
        Build b = { .spec = spec };
        ConvRecord *rec = &b.rec;
        double w;
        int r;

        if (!spec || !ret)
                return -EINVAL;
        if ((r = build_check(&b)) < 0 || (r = build_centre(&b)) < 0 || (r = build_chain(&b)) < 0 ||
            (r = build_slope(&b)) < 0 || (r = build_out_centre(&b)) < 0)
                return r;
        build_bound(&b);
        if ((r = build_range(&b)) < 0)
                return r;
        rec->in_c = b.u_c;
        rec->in_hint = b.u_c;
        rec->bound_c_ns = ceil_ns(b.bc);
        q_up(b.bs, &rec->bound_slope, &rec->bound_shift);
        rec->gain_q32 = (uint64_t) ((b.A ? b.igA : 1.0) * b.gainB * TWO32) + 1;
        unit_coding(b.uf, &rec->in_coding, &rec->in_wrap_bits);
        unit_coding(b.ut, &rec->out_coding, &rec->out_wrap_bits);
        /* A hint from the latest calibration is good for wraps of days, not of minutes. */
        w = unit_wrap_ns(b.uf);
        if (w > 0.0 && w < 0x1p47)
                rec->flags |= CONV_RECORD_HINT_NOW;
        if (rec->bound_c_ns == INT64_MAX)
                return -ERANGE;
        *ret = *rec;
        return 0;
}

/* Whether out_c + floor(p / 2^shift) at count fits in an int64, computed whole. */
static bool answer_fits(const ConvRecord *c, int64_t count) {
        __int128 d = (__int128) count - c->in_c, p, q;

        if (d < INT64_MIN || d > INT64_MAX)
                return false;
        p = d * (d < 0 ? c->slope_neg : c->slope) + c->out_frac;
        /* floor division by 2^shift, without shifting a negative value */
        q = p >= 0 ? p / ((__int128) 1 << (c->shift & 63)) : -((-p + ((__int128) 1 << (c->shift & 63)) - 1) / ((__int128) 1 << (c->shift & 63)));
        q += c->out_c;
        return q >= INT64_MIN && q <= INT64_MAX;
}

int conv_hot_init(const ConvRecord *c, ConvHot *ret) {
        int64_t x11_c = 0, x11_t = 0;

        /* A record whose source wraps within hours unwraps near the caller's now: not here. */
        if (c->status != 0 || conv_record_validate(c) < 0 || (c->flags & CONV_RECORD_HINT_NOW) ||
            c->out_coding != CONV_CODING_PLAIN ||
            c->out_period_q32 != 0 || c->slope <= 0 || c->slope_neg <= 0 ||
            (c->in_coding != CONV_CODING_PLAIN && c->in_coding != CONV_CODING_X11_US))
                return -EOPNOTSUPP;
        /* Both slopes positive: the answer grows with the count, so that it fits at both ends of
         * the range is that it fits everywhere (the record's overflow check never fires). */
        if (c->in_lo > c->in_hi || !answer_fits(c, c->in_lo) || !answer_fits(c, c->in_hi))
                return -EOPNOTSUPP;
        if (c->in_coding == CONV_CODING_X11_US) {
                if (c->in_hint < -(INT64_C(1) << 62) || c->in_hint > (INT64_C(1) << 62))
                        return -EOPNOTSUPP;
                int64_t m = xtime_us_residue(c->in_hint);

                /* xtime_us_step(v, m) for v, m in [0, W) is d = v - m, plus W if d <= -W/2, minus
                 * W if d > W/2; only one can happen for a given m. m < W/2: d > -W/2 always,
                 * so the step is v - m - (v > m + W/2 ? W : 0). m >= W/2: d <= W/2 always, and
                 * d <= -W/2 is v <= m - W/2, so the step is v - m + W - (v > m - W/2 ? W : 0).
                 * The count is the hint plus the step: one compare, one conditional subtract.
                 * |hint| <= 2^62 and |step| <= W: no overflow. */
                if (m < CONV_X11_US_WRAP / 2) {
                        x11_c = c->in_hint - m;
                        x11_t = m + CONV_X11_US_WRAP / 2;
                } else {
                        x11_c = c->in_hint - m + CONV_X11_US_WRAP;
                        x11_t = m - CONV_X11_US_WRAP / 2;
                }
        }
        *ret = (ConvHot) {
                .in_lo = c->in_lo,
                .in_hi = c->in_hi,
                .in_c = c->in_c,
                .out_c = c->out_c,
                .out_frac = c->out_frac,
                .slope = { c->slope, c->slope_neg },
                .bound_c_ns = (uint64_t) c->bound_c_ns,
                .bound_slope = (uint64_t) c->bound_slope,
                .bound_round = (c->flags & CONV_RECORD_BOUND_CEIL) ? (UINT64_C(1) << (c->bound_shift & 63)) - 1 : 0,
                .x11_c = x11_c,
                .x11_t = x11_t,
                .shift = c->shift & 63,
                .bound_shift = c->bound_shift & 63,
                .x11_us = c->in_coding == CONV_CODING_X11_US,
        };
        return 0;
}
