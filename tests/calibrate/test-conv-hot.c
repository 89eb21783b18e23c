/* SPDX-License-Identifier: MIT */

/* The hot form of a conversion record (conv_hot_init(), conv_hot_convert()) against the record
 * itself: for random records of every unit pair and values near and far from their centres, at
 * the edges of their ranges and beyond, every value the hot form takes gets exactly the record's
 * answer and bound; the records it has no form for are the ones it must refuse; and it takes the
 * values near the centre, so that the library's common loop really runs it. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "conv-record.h"
#include "splitmix.h"
#include "tap.h"

#define ROUNDS 400
#define VALUES 400

static double rng_unit(uint64_t *s) {      /* [-1, 1) */
        return (double) (splitmix64_next(s) >> 11) * 0x1p-52 - 1.0;
}

static const DomainUnit units[] = {
        { 1.0, 0, false, UNIT_ENCODING_PLAIN },
        { 1000.0, 0, false, UNIT_ENCODING_PLAIN },
        { 1e6, 32, true, UNIT_ENCODING_PLAIN },                 /* X server ms */
        { 1000.0, 0, true, UNIT_ENCODING_X11_US },              /* x11_us */
        { 52.0833333333, 40, true, UNIT_ENCODING_PLAIN },       /* GPU ticks that wrap */
        { 52.0833333333, 0, false, UNIT_ENCODING_PLAIN },       /* GPU ticks */
        { 16666666.6666667, 0, true, UNIT_ENCODING_PLAIN },     /* frames of 60 Hz */
};
#define N_UNITS (sizeof(units) / sizeof(units[0]))

static void random_model(uint64_t *s, int64_t r_c, Model *ret) {
        *ret = (Model) {
                .r_c_ns = r_c,
                .x_c_ns = (int64_t) (rng_unit(s) * 4e15) + 2000000000000000,
                .rate = rng_unit(s) * 5e-4,
                .half_ns = 10.0 + fabs(rng_unit(s)) * 20000.0,
                .rate_half = fabs(rng_unit(s)) * 2e-7,
        };
}

/* Whether the record should have a hot form, from what conv_hot_init() promises. */
static bool hot_expected(const ConvRecord *c) {
        return c->status == 0 && !(c->flags & CONV_RECORD_HINT_NOW) && c->out_coding == CONV_CODING_PLAIN &&
               c->out_period_q32 == 0 &&
               (c->in_coding == CONV_CODING_PLAIN || c->in_coding == CONV_CODING_X11_US);
}

/* A value to try: near the centre, at or just beyond the range's edges, far away, or odd. */
static int64_t pick_value(uint64_t *s, const ConvRecord *c) {
        int64_t span = c->in_hi > c->in_lo ? c->in_hi / 2 - c->in_lo / 2 : 1;

        switch (splitmix64_next(s) % 8) {
        case 0:
                return c->in_lo;
        case 1:
                return c->in_hi;
        case 2:
                return c->in_lo == INT64_MIN ? INT64_MIN : c->in_lo - 1;
        case 3:
                return c->in_hi == INT64_MAX ? INT64_MAX : c->in_hi + 1;
        case 4:
                return (int64_t) splitmix64_next(s);
        default:
                return c->in_c + (int64_t) (rng_unit(s) * (double) span);
        }
}

static void test_same_answers(void) {
        uint64_t s = 7;
        int built = 0, hot = 0, wrong_init = 0, differ = 0, taken = 0, near_refused = 0, tried_near = 0;

        for (int round = 0; round < ROUNDS; round++) {
                /* Half of them to ns, the target the hot form is for. */
                const DomainUnit *uf = &units[splitmix64_next(&s) % N_UNITS],
                                 *ut = &units[splitmix64_next(&s) % 2 ? 0 : splitmix64_next(&s) % N_UNITS];
                int64_t r_c = (int64_t) (fabs(rng_unit(&s)) * 1e15) + 1000000000000;
                bool has_a = splitmix64_next(&s) % 4 != 0, has_b = splitmix64_next(&s) % 4 != 0;
                Model ma, mb;
                ConvRecord rec;
                ConvHot h;
                ConvSpec spec;
                bool has_hot;

                random_model(&s, r_c, &ma);
                random_model(&s, r_c + (int64_t) (rng_unit(&s) * 1e9), &mb);
                spec = (ConvSpec) {
                        .from_unit = uf, .to_unit = ut,
                        .from_model = has_a ? &ma : NULL, .to_model = has_b ? &mb : NULL,
                        .from_x_begin_ns = INT64_MIN, .to_r_begin_ns = INT64_MIN,
                        .extra_ns = splitmix64_next(&s) % 3 == 0 ? 25000 : 0,
                        .at_r_ns = r_c + (int64_t) (rng_unit(&s) * 1e10),
                };
                if (conv_record_build(&spec, &rec) < 0)
                        continue;
                built++;
                /* Half of them with the rounding of a bound that rounds up. */
                if (splitmix64_next(&s) % 2)
                        rec.flags |= CONV_RECORD_BOUND_CEIL;
                has_hot = conv_hot_init(&rec, &h) >= 0;
                if (has_hot != hot_expected(&rec)) {
                        if (wrong_init++ < 3)
                                diag("round %d: %g -> %g: hot form %s", round, uf->period_ns, ut->period_ns,
                                     has_hot ? "made where none is due" : "refused");
                        continue;
                }
                if (!has_hot)
                        continue;
                hot++;
                for (int k = 0; k < VALUES; k++) {
                        bool near = k % 4 == 0;
                        int64_t count = near ? rec.in_c + (int64_t) (rng_unit(&s) * 1e6) : pick_value(&s, &rec);
                        int64_t value = count, hv = 0, hu = 0, rv = 0, ru = 0;
                        int hr, rr;

                        /* x11_us takes wire values: the encoding of the count, or an unreduced one. */
                        if (rec.in_coding == CONV_CODING_X11_US) {
                                value = count % CONV_X11_US_WRAP;
                                if (value < 0)
                                        value += CONV_X11_US_WRAP;
                                if (!near && splitmix64_next(&s) % 4 == 0)
                                        value += CONV_X11_US_WRAP * (int64_t) (1 + splitmix64_next(&s) % 1000);
                        }
                        hr = conv_hot_convert(&h, value, &hv, &hu);
                        rr = conv_record_convert(&rec, value, &rv, &ru);
                        if (near) {
                                tried_near++;
                                if (hr != 0)
                                        near_refused++;
                        }
                        if (hr == CONV_RECORD_MISS)
                                continue;
                        taken++;
                        if (hr != 0 || rr != 0 || hv != rv || hu != ru) {
                                if (differ++ < 5)
                                        diag("round %d: %g -> %g value %" PRId64 ": hot %d %" PRId64 " ± %" PRId64
                                             ", record %d %" PRId64 " ± %" PRId64, round, uf->period_ns, ut->period_ns,
                                             value, hr, hv, hu, rr, rv, ru);
                        }
                }
        }
        ok(built > ROUNDS / 2, "records built (%d)", built);
        ok(hot > ROUNDS / 4, "some have a hot form (%d)", hot);
        is_int(wrong_init, 0, "a hot form exactly for ns targets of plain or x11_us sources, no residual");
        ok(taken > 0, "values taken by the hot form (%d)", taken);
        is_int(differ, 0, "every value the hot form takes gets the record's answer and bound, to the bit");
        diag("%d values near the centre tried", tried_near);
        is_int(near_refused, 0, "values near the centre are taken");
}

/* The records that must stay with the general path. */
static void test_refused(void) {
        ConvRecord rec;
        ConvHot h;

        conv_record_identity(&rec);
        ok(conv_hot_init(&rec, &h) == 0, "identity has a hot form");
        conv_record_failing(-ENODEV, &rec);
        is_int(conv_hot_init(&rec, &h), -EOPNOTSUPP, "a failing record has none");
        conv_record_identity(&rec);
        rec.out_coding = CONV_CODING_WRAP;
        rec.out_wrap_bits = 32;
        is_int(conv_hot_init(&rec, &h), -EOPNOTSUPP, "a wrapping target has none");
        conv_record_identity(&rec);
        rec.in_coding = CONV_CODING_WRAP;
        rec.in_wrap_bits = 40;
        is_int(conv_hot_init(&rec, &h), -EOPNOTSUPP, "a wrapping source has none");
        conv_record_identity(&rec);
        rec.out_period_q32 = INT64_C(1) << 32;
        is_int(conv_hot_init(&rec, &h), -EOPNOTSUPP, "a target with a residual term has none");
        conv_record_identity(&rec);
        rec.out_c = INT64_MAX - 5;
        rec.in_c = 0;
        is_int(conv_hot_init(&rec, &h), -EOPNOTSUPP, "a record whose answers overflow at its range's end has none");
        conv_record_identity(&rec);
        rec.slope_neg = -rec.slope_neg;
        is_int(conv_hot_init(&rec, &h), -EOPNOTSUPP, "a record that is not increasing has none");
}

/* x11_us values exactly half a wrap from the hint's residue, and their neighbours, with hints of
 * every kind of residue: the hot form's one compare unwraps them as the record does (a tie goes
 * to the later occurrence). A record whose range spans several wraps, so that it answers them. */
static void test_x11_us_ties(void) {
        const int64_t w = CONV_X11_US_WRAP, half = CONV_X11_US_WRAP / 2;
        const int64_t residues[] = { 0, 1, half - 1, half, half + 1, w - 1, 123456789 };
        const int64_t wraps[] = { 0, 1, 7 };
        int tried = 0, differ = 0;

        for (size_t i = 0; i < sizeof(residues) / sizeof(residues[0]); i++)
                for (size_t j = 0; j < sizeof(wraps) / sizeof(wraps[0]); j++) {
                        int64_t m = residues[i], hint = wraps[j] * w + m;
                        const int64_t values[] = { m, 0, w - 1, m + half - 1, m + half, m + half + 1,
                                                   m - half - 1, m - half, m - half + 1 };
                        ConvRecord rec;
                        ConvHot h;

                        conv_record_identity(&rec);
                        rec.in_coding = CONV_CODING_X11_US;
                        rec.in_hint = rec.in_c = rec.out_c = hint;
                        rec.in_lo = hint - 2 * w;
                        rec.in_hi = hint + 2 * w;
                        if (conv_hot_init(&rec, &h) < 0) {
                                differ++;
                                diag("hint %" PRId64 ": no hot form", hint);
                                continue;
                        }
                        for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
                                int64_t v = values[k], hv = 0, hu = 0, rv = 0, ru = 0;
                                int hr, rr;

                                if (v < 0 || v >= w)
                                        continue;
                                tried++;
                                hr = conv_hot_convert(&h, v, &hv, &hu);
                                rr = conv_record_convert(&rec, v, &rv, &ru);
                                if (hr != 0 || rr != 0 || hv != rv || hu != ru) {
                                        if (differ++ < 5)
                                                diag("hint %" PRId64 " value %" PRId64 ": hot %d %" PRId64
                                                     ", record %d %" PRId64, hint, v, hr, hv, rr, rv);
                                }
                        }
                }
        ok(tried > 100, "x11_us values at and beside half a wrap from the hint (%d)", tried);
        is_int(differ, 0, "  unwrapped by the hot form as by the record, ties to the later occurrence");
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 0, "");
        test_same_answers();
        test_refused();
        test_x11_us_ties();
        return done_testing();
}
