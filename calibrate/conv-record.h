/* SPDX-License-Identifier: MIT */
#pragma once

/* The conversion record: every conversion timeconv makes (the daemon's, the shared table's, the
 * offline snapshot graph's) is one or more of these, applied by conv_record_convert(). A record
 * is one affine map from a source domain's values to a target domain's values, units folded in,
 * with its outward-rounded bound and the range where it answers. Fixed-width integers only: it is
 * also the shared table's wire format (CONV_RECORD_WIRE_VERSION).
 *
 * Applying it to a wire value v (integers only, no floating point, no libm, no allocation):
 *   1. decode: u = v (plain), or v unwrapped at in_wrap_bits to the occurrence nearest in_hint,
 *      or (x11_us) v reduced to its 32-bit ms part (an unreduced value converts like its reduced
 *      form) and unwrapped at 2^32 ms nearest in_hint;
 *   2. u outside [in_lo, in_hi]: CONV_RECORD_MISS, a positive code (the record does not answer; the
 *      caller's general path may: a past segment, a value far from now);
 *   3. d = u - in_c, p = d·slope + out_frac (128 bits), out = out_c + floor(p / 2^shift): the
 *      point estimate in target counts (out_frac holds the centre's fraction plus 1/2 for a
 *      target that rounds to nearest, so the floor is the rounding). The slope (one for d >= 0,
 *      one for d < 0) and out_frac are rounded so that p is never below the exact value: a value
 *      exactly on a count's edge (1000000 ns -> 1000 µs) lands on it, not one below;
 *   4. bound_ns = bound_c_ns + floor(|d|·bound_slope / 2^bound_shift) [+ the output residual];
 *   5. encode: out (plain), out mod 2^out_wrap_bits, or out mod 2^32·1000 (x11_us).
 *
 * The bound (derived in conv-record.c, at conv_record_build()): with the truth T (in the
 * target's ns) of the value's true time, and the answer A = out·period_out,
 *     |A - T| <= bound_c_ns + |d|·BS + residual
 * where bound_c_ns covers the models' bounds at the centre, the reading's own uncertainty (a
 * truncated reading is the middle of its period ± half of it, a lagging one ± half its lag, an
 * event's count (DomainUnit.events) nothing: it names an instant), a
 * followed clock's residual, the output rounding of an ns target and every rounding the builder
 * made (centre, Q fractions, double arithmetic, all rounded outward and then + 1 ns); BS (Q
 * bound_shift, rounded up) covers the models' bound growth away from their centres and the
 * slope's quantisation (|d|·2^-shift counts); residual is |out - exact target count|·period_out,
 * computed from p's fraction when out_period_q32 != 0 (truncating targets and periods > 1 ns),
 * rounded down, its last ns in bound_c_ns. A record of units only (no model, whole-ns periods:
 * ns <-> µs <-> ms) is exact near its centre: no slack at all, so that 2000000000 ns is 2000000 µs
 * with a bound of 0. Within [in_lo, in_hi] neither the answer nor the bound overflows.
 *
 * Chaining (conv_record_convert_unc()): an input already uncertain by e ns adds e·gain (gain_q32,
 * rounded up) to the output's bound: what a second record needs to carry the first one's. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "units.h"
#include "xtime.h"
#include "model.h"

/* Bump on any change of ConvRecord (it is the shared table's entry). */
#define CONV_RECORD_WIRE_VERSION 1

typedef enum ConvCoding {
        CONV_CODING_PLAIN = 0,          /* the value is the count */
        CONV_CODING_WRAP = 1,           /* count mod 2^wrap_bits */
        CONV_CODING_X11_US = 2,         /* ((us / 1000) mod 2^32) * 1000 + us % 1000 */
} ConvCoding;

/* What a record answers for a value outside its range: not an error but an expected outcome,
 * positive so that `r < 0` never takes it for one, handled by the direct caller (its general path,
 * the daemon, or -ERANGE where there is nothing further to ask). */
#define CONV_RECORD_MISS 1

/* ConvRecord.flags */
#define CONV_RECORD_HINT_NOW    (UINT16_C(1) << 0)      /* wraps within hours: unwrap near now, not in_hint */
#define CONV_RECORD_OUT_NEAREST (UINT16_C(1) << 1)      /* out_frac holds +1/2: residual is centred */
#define CONV_RECORD_BOUND_CEIL  (UINT16_C(1) << 2)      /* the |d| term rounds up, not down */

#define CONV_X11_US_WRAP XTIME_US_WRAP

typedef struct ConvRecord {
        int64_t in_lo, in_hi;           /* decoded source counts the record answers for */
        int64_t in_c;                   /* centre, source count */
        int64_t out_c;                  /* target count at the centre, integer part */
        int64_t out_frac;               /* [0, 2^shift): its fraction (+ 1/2 when rounding) */
        int64_t slope;                  /* target counts per source count, Q shift, for d >= 0 ... */
        int64_t slope_neg;              /* ... and for d < 0: each rounded so that p >= the exact value */
        int64_t bound_c_ns;             /* >= 0, rounded up */
        int64_t bound_slope;            /* >= 0: ns per source count away from in_c, Q bound_shift */
        int64_t in_hint;                /* wrapped inputs unwrap to the occurrence nearest this */
        int64_t out_period_q32;         /* ns per target count, Q32, rounded up; 0: no residual term */
        uint64_t gain_q32;              /* output ns per ns of input error, Q32, rounded up */
        int32_t status;                 /* 0, or what every value gets (-ENODEV, -ENOLINK, CONV_RECORD_MISS) */
        uint16_t flags;                 /* CONV_RECORD_* */
        uint8_t shift;                  /* 0..63 */
        uint8_t bound_shift;            /* 0..63 */
        uint8_t in_coding, in_wrap_bits;
        uint8_t out_coding, out_wrap_bits;
        uint32_t reserved;              /* 0 */
} ConvRecord;

_Static_assert(sizeof(ConvRecord) == 112, "ConvRecord is a wire format: its size is fixed");

/* What conv_record_build() makes a record of: from's unit -> (from's model, inverted) -> the
 * reference -> (to's model) -> to's unit. A NULL model is the reference itself; give both NULL
 * when from and to share one model (a clock that follows another, one clock in two units). */
typedef struct ConvSpec {
        const DomainUnit *from_unit, *to_unit;
        int64_t from_lag_ns, to_lag_ns;         /* a _COARSE reading trails its clock by 0..lag */
        const Model *from_model, *to_model;
        int64_t from_x_begin_ns;                /* from's model answers for ns >= this; INT64_MIN: all */
        int64_t to_r_begin_ns;                  /* to's model answers for r >= this; INT64_MIN: all */
        int64_t extra_ns;                       /* added to every bound (a followed clock's residual) */
        int64_t at_r_ns;                        /* the reference time values are expected near: the centre */
} ConvSpec;

/* Builds the record of spec (the one place with floating point: it turns the estimator's models
 * into integers, rounding every term of the bound outward). -EINVAL for a bad spec, -ERANGE when
 * the centre does not fit. */
int conv_record_build(const ConvSpec *spec, ConvRecord *ret);

/* The value unchanged, bound 0 (one domain to itself, or two names of one clock and unit). */
void conv_record_identity(ConvRecord *ret);

/* A record that answers every value with error (< 0), or CONV_RECORD_MISS: one the builder could
 * not make, whose values the general path answers. */
void conv_record_failing(int error, ConvRecord *ret);

/* -EBADMSG for a record that could not have been built (a shift > 63, negative bounds, an
 * unknown coding, in_lo > in_hi): a reader of shared memory checks a copy before use. */
int conv_record_validate(const ConvRecord *c);

/* ---- inline: the conversion ---- */

static inline int conv_record_decode(const ConvRecord *c, int64_t value, int64_t hint, int64_t *ret_count) {
        switch (c->in_coding) {
        case CONV_CODING_PLAIN:
                *ret_count = value;
                return 0;
        case CONV_CODING_WRAP:
                if (__builtin_expect(value < 0 || (uint64_t) value >> (c->in_wrap_bits & 63), 0))
                        return -ERANGE;
                return __builtin_add_overflow(hint, unit_wrap_step((uint64_t) value, hint, c->in_wrap_bits), ret_count) ?
                               -ERANGE : 0;
        case CONV_CODING_X11_US: {
                int64_t reduced, hint_mod;

                if (__builtin_expect(value < 0, 0))
                        return -ERANGE;
                /* An unreduced value (ms part >= 2^32, as mutter sends g_get_monotonic_time()) is
                 * the same X time as its reduced form. */
                reduced = __builtin_expect(value < CONV_X11_US_WRAP, 1) ? value : xtime_us_reduce(value);
                /* An X server younger than 49.7 days: the hint is its own residue (no division). */
                hint_mod = __builtin_expect(hint >= 0 && hint < CONV_X11_US_WRAP, 1) ? hint : xtime_us_residue(hint);
                return __builtin_add_overflow(hint, xtime_us_step(reduced, hint_mod), ret_count) ? -ERANGE : 0;
        }
        }
        return -EINVAL;
}

static inline int64_t conv_record_encode(const ConvRecord *c, int64_t count) {
        if (__builtin_expect(c->out_coding == CONV_CODING_PLAIN, 1))
                return count;
        if (c->out_coding == CONV_CODING_WRAP)
                return (int64_t) ((uint64_t) count & ((UINT64_C(1) << (c->out_wrap_bits & 63)) - 1));
        /* x11_us: the floor modulo of the whole wrap is the encoding, negative counts too. */
        return xtime_us_residue(count);
}

/* The low 64 bits of p >> sh for sh < 64 (what the record's shifts are): one double-word
 * shift, where a shift of an __int128 by a variable also handles sh >= 64. */
static inline uint64_t conv_shr128_(unsigned __int128 p, unsigned sh) {
        uint64_t lo = (uint64_t) p, hi = (uint64_t) (p >> 64);

        return (lo >> sh) | (hi << 1 << (63 - sh));
}

/* Step 2-4 of the top: a decoded source count to a target count (not encoded) and its bound. */
static inline int conv_record_map(const ConvRecord *c, int64_t count, int64_t *ret_count, int64_t *ret_bound_ns) {
        unsigned sh = c->shift & 63, bsh = c->bound_shift & 63;
        uint64_t ad, bound;
        unsigned __int128 b;
        int64_t d, out;
        __int128 p;

        if (__builtin_expect(count < c->in_lo || count > c->in_hi, 0))
                return CONV_RECORD_MISS;
        /* A built record keeps |d| < 2^62 within [in_lo, in_hi], where neither the answer nor the
         * bound overflows; one read from shared memory may hold anything, so nothing below is
         * undefined for any contents (shifts masked, unsigned sums): a hostile writer gets
         * garbage answers, never a crash. */
        d = (int64_t) ((uint64_t) count - (uint64_t) c->in_c);
        p = (__int128) d * (d < 0 ? c->slope_neg : c->slope) + c->out_frac;
        /* An offline record answers for every count: its answer may not fit. */
        if (__builtin_add_overflow(c->out_c, (int64_t) conv_shr128_((unsigned __int128) p, sh), &out))
                return -ERANGE;
        ad = d < 0 ? -(uint64_t) d : (uint64_t) d;
        b = (unsigned __int128) ad * (uint64_t) c->bound_slope;
        if (c->flags & CONV_RECORD_BOUND_CEIL)
                b += (UINT64_C(1) << bsh) - 1;
        bound = (uint64_t) c->bound_c_ns + conv_shr128_(b, bsh);
        if (c->out_period_q32) {
                /* How far the integer answer is from the exact count, in ns. */
                uint64_t half = UINT64_C(1) << sh >> 1, f = (uint64_t) p & ((UINT64_C(1) << sh) - 1);

                if (c->flags & CONV_RECORD_OUT_NEAREST)
                        f = f >= half ? f - half : half - f;
                bound += (uint64_t) (((unsigned __int128) f * (uint64_t) c->out_period_q32) >> (sh + 32));
        }
        *ret_count = out;
        *ret_bound_ns = (int64_t) bound;
        return 0;
}

/* A wire value of the source to a wire value of the target, unwrapped near hint (a source count:
 * the record's in_hint unless CONV_RECORD_HINT_NOW asks the caller for one near now). 0, a
 * negative errno, or CONV_RECORD_MISS (nothing written). */
static inline int conv_record_convert_hint(const ConvRecord *c, int64_t value, int64_t hint,
                                           int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int64_t count, out, bound;
        int r;

        if (__builtin_expect(c->status != 0, 0))
                return c->status;
        if (__builtin_expect(c->in_coding != CONV_CODING_PLAIN, 0)) {
                r = conv_record_decode(c, value, hint, &count);
                if (r < 0)
                        return r;
        } else
                count = value;
        r = conv_record_map(c, count, &out, &bound);
        if (__builtin_expect(r != 0, 0))
                return r;
        *ret_value = conv_record_encode(c, out);
        *ret_uncertainty_ns = bound;
        return 0;
}

static inline int conv_record_convert(const ConvRecord *c, int64_t value, int64_t *ret_value,
                                      int64_t *ret_uncertainty_ns) {
        return conv_record_convert_hint(c, value, c->in_hint, ret_value, ret_uncertainty_ns);
}

/* ---- the hot form: one record converted again and again ---- */

/* A record with its branches taken once: a plain or x11_us source, a plain target with no
 * residual term (an ns target), status 0, no CONV_RECORD_HINT_NOW (it unwraps near the record's
 * own hint), and answers that fit over the whole range, so that
 * applying it needs no overflow check. conv_hot_convert() gives exactly conv_record_convert()'s
 * answer and bound for every value it takes, and CONV_RECORD_MISS for the others (a value outside the
 * range, an x11_us value that is negative or unreduced), which the record itself then answers.
 * The library keeps one per pair it converts often; it is never shared memory. */
typedef struct ConvHot {
        int64_t in_lo, in_hi, in_c;
        int64_t out_c, out_frac;
        int64_t slope[2];               /* [0] for d >= 0, [1] for d < 0 */
        uint64_t bound_c_ns, bound_slope;
        uint64_t bound_round;           /* 2^bound_shift - 1 for CONV_RECORD_BOUND_CEIL, else 0 */
        /* x11_us: a reduced value v is the count v + x11_c - (v > x11_t ? 2^32 ms : 0), the
         * occurrence nearest the record's hint (conv_hot_init() says why) */
        int64_t x11_c, x11_t;
        uint8_t shift, bound_shift;
        bool x11_us;
} ConvHot;

/* The hot form of c: -EOPNOTSUPP for a record that has none (the caller keeps using c). */
int conv_hot_init(const ConvRecord *c, ConvHot *ret);

/* The two halves of conv_hot_convert(), for a caller that falls back to another path before
 * the arithmetic: whether h takes value (its count in *ret_count), then the answer. */
static inline __attribute__((always_inline)) bool conv_hot_takes(const ConvHot *h, int64_t value, int64_t *ret_count) {
        if (h->x11_us) {
                /* conv_record_decode() for a reduced value, with the hint's residue made once. */
                if (__builtin_expect(value < 0 || value >= CONV_X11_US_WRAP, 0))
                        return false;
                value += h->x11_c - (value > h->x11_t ? CONV_X11_US_WRAP : 0);
        }
        *ret_count = value;
        return __builtin_expect(value >= h->in_lo && value <= h->in_hi, 1);
}

static inline __attribute__((always_inline)) void conv_hot_apply(const ConvHot *h, int64_t count, int64_t *ret_value,
                                                                int64_t *ret_uncertainty_ns) {
        int64_t d = (int64_t) ((uint64_t) count - (uint64_t) h->in_c);
        uint64_t ad = d < 0 ? -(uint64_t) d : (uint64_t) d;
#if defined(__x86_64__) && !defined(CONV_HOT_PORTABLE)
        /* The same arithmetic as below in x86-64's own words: one multiply into rdx:rax, the
         * add with its carry, one double shift. gcc makes of the __int128 form twice the
         * instructions and five saved registers, a third of a library call by id (whose
         * target is 5 ns); tests/calibrate/test-conv-hot-portable runs the C form. */
        uint64_t lo = (uint64_t) d, hi, blo = ad, bhi;

        __asm__("imulq %[m]\n\t"
                "addq %[a], %%rax\n\t"
                "adcq $0, %%rdx\n\t"
                "shrdq %%cl, %%rdx, %%rax"
                : "+a"(lo), "=&d"(hi) : [m] "rm"(h->slope[d < 0]), [a] "rm"(h->out_frac), "c"(h->shift) : "cc");
        __asm__("mulq %[m]\n\t"
                "addq %[a], %%rax\n\t"
                "adcq $0, %%rdx\n\t"
                "shrdq %%cl, %%rdx, %%rax"
                : "+a"(blo), "=&d"(bhi) : [m] "rm"(h->bound_slope), [a] "rm"(h->bound_round), "c"(h->bound_shift) : "cc");
        *ret_value = (int64_t) ((uint64_t) h->out_c + lo);
        *ret_uncertainty_ns = (int64_t) (h->bound_c_ns + blo);
#else
        __int128 p = (__int128) d * h->slope[d < 0] + h->out_frac;
        unsigned __int128 b = (unsigned __int128) ad * h->bound_slope + h->bound_round;

        /* Unsigned sums: the same bits as the record's checked ones, which cannot overflow here. */
        *ret_value = (int64_t) ((uint64_t) h->out_c + conv_shr128_((unsigned __int128) p, h->shift));
        *ret_uncertainty_ns = (int64_t) (h->bound_c_ns + conv_shr128_(b, h->bound_shift));
#endif
}

static inline __attribute__((always_inline)) int conv_hot_convert(const ConvHot *h, int64_t value, int64_t *ret_value,
                                                                 int64_t *ret_uncertainty_ns) {
        int64_t count;

        if (!conv_hot_takes(h, value, &count))
                return CONV_RECORD_MISS;
        conv_hot_apply(h, count, ret_value, ret_uncertainty_ns);
        return 0;
}

/* The same for a value that is already uncertain by in_uncertainty_ns (>= 0): chaining records. */
static inline int conv_record_convert_unc(const ConvRecord *c, int64_t value, int64_t in_uncertainty_ns,
                                          int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int64_t v = 0, u = 0, extra;     /* written on success; = 0 quiets -Wmaybe-uninitialized */
        int r;

        if (in_uncertainty_ns < 0)
                return -EINVAL;
        r = conv_record_convert(c, value, &v, &u);
        if (r != 0)
                return r;
        if (in_uncertainty_ns > 0) {
                unsigned __int128 e = ((unsigned __int128) (uint64_t) in_uncertainty_ns * c->gain_q32 >> 32) + 1;

                if (e > INT64_MAX)
                        return -ERANGE;
                extra = (int64_t) e;
                if (__builtin_add_overflow(u, extra, &u))
                        return -ERANGE;
        }
        *ret_value = v;
        *ret_uncertainty_ns = u;
        return 0;
}
