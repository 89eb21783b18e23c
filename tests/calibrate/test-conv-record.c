/* SPDX-License-Identifier: MIT */

/* The conversion record against known truth: random models, random true lines inside each
 * model's family, every unit timeconv knows (ns, µs, truncated ms, 52.083 ns ticks, wraps, the
 * x11_us encoding); each answer's bound must hold the truth, computed here in long double. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "conv-record.h"
#include "tap.h"

#define ROUNDS 200
#define VALUES 500

static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) {      /* [-1, 1) */
        return (double) (rng_next(s) >> 11) * 0x1p-52 - 1.0;
}

/* A model and a true line inside its family: x = x_c + a + (r - r_c)(1 + rate + b). */
typedef struct Truth {
        Model m;
        long double a, b;
} Truth;

static void truth_random(uint64_t *s, int64_t r_c, Truth *t) {
        t->m = (Model) {
                .r_c_ns = r_c,
                .x_c_ns = (int64_t) (rng_unit(s) * 4e15) + 2000000000000000,
                .rate = rng_unit(s) * 5e-4,
                .half_ns = 10.0 + fabs(rng_unit(s)) * 20000.0,
                .rate_half = fabs(rng_unit(s)) * 2e-7,
        };
        t->a = (long double) rng_unit(s) * t->m.half_ns;
        t->b = (long double) rng_unit(s) * t->m.rate_half;
}

static long double truth_x(const Truth *t, long double r) {
        if (!t)
                return r;
        return (long double) t->m.x_c_ns + t->a + (r - t->m.r_c_ns) * (1.0L + t->m.rate + t->b);
}

static long double truth_r(const Truth *t, long double x) {
        if (!t)
                return x;
        return t->m.r_c_ns + (x - t->m.x_c_ns - t->a) / (1.0L + t->m.rate + t->b);
}

/* What a clock of unit u reads at true time x ns (unwrapped count). */
static int64_t reading(const DomainUnit *u, long double x) {
        long double c = x / u->period_ns;

        return (int64_t) (u->truncates ? floorl(c) : floorl(c + 0.5L));
}

static int64_t wire(const DomainUnit *u, int64_t count) {
        if (u->encoding == UNIT_ENCODING_X11_US) {
                int64_t w = INT64_C(4294967296) * 1000, m = count % w;
                return m < 0 ? m + w : m;
        }
        if (u->wrap_bits > 0 && u->wrap_bits < 64)
                return (int64_t) ((uint64_t) count & ((UINT64_C(1) << u->wrap_bits) - 1));
        return count;
}

static const DomainUnit units[] = {
        { 1.0, 0, false, UNIT_ENCODING_PLAIN },
        { 1000.0, 0, false, UNIT_ENCODING_PLAIN },
        { 1e6, 32, true, UNIT_ENCODING_PLAIN },                 /* X server ms */
        { 1000.0, 0, true, UNIT_ENCODING_X11_US },              /* x11_us */
        { 52.0833333333, 40, true, UNIT_ENCODING_PLAIN },       /* GPU ticks */
        { 52.0833333333, 0, false, UNIT_ENCODING_PLAIN },
        { 1.0, 36, true, UNIT_ENCODING_PLAIN },
        { 16666666.6666667, 0, true, UNIT_ENCODING_PLAIN },     /* frames of 60 Hz */
};
#define N_UNITS (sizeof(units) / sizeof(units[0]))

static void test_truth(void) {
        uint64_t s = 42;
        int bad = 0, failed = 0, checked = 0, stale = 0;
        long double worst = 0;

        for (int round = 0; round < ROUNDS; round++) {
                const DomainUnit *uf = &units[rng_next(&s) % N_UNITS], *ut = &units[rng_next(&s) % N_UNITS];
                int64_t r_c = (int64_t) (fabs(rng_unit(&s)) * 1e15) + 1000000000000;
                Truth ta, tb;
                bool has_a = rng_next(&s) % 4 != 0, has_b = rng_next(&s) % 4 != 0;
                int64_t at_r = r_c + (int64_t) (rng_unit(&s) * 1e10);
                int64_t lag_from = rng_next(&s) % 3 == 0 ? 4000000 : 0, extra = rng_next(&s) % 3 == 0 ? 25000 : 0;
                ConvRecord rec;
                ConvSpec spec;

                truth_random(&s, r_c, &ta);
                truth_random(&s, r_c + (int64_t) (rng_unit(&s) * 1e9), &tb);
                spec = (ConvSpec) {
                        .from_unit = uf, .to_unit = ut, .from_lag_ns = lag_from,
                        .from_model = has_a ? &ta.m : NULL, .to_model = has_b ? &tb.m : NULL,
                        .from_x_begin_ns = INT64_MIN, .to_r_begin_ns = INT64_MIN,
                        .extra_ns = extra, .at_r_ns = at_r,
                };
                if (conv_record_build(&spec, &rec) < 0 || conv_record_validate(&rec) < 0) {
                        if (failed < 3)
                                diag("round %d: build %d validate %d (%g -> %g)", round, conv_record_build(&spec, &rec),
                                     conv_record_validate(&rec), uf->period_ns, ut->period_ns);
                        failed++;
                        continue;
                }
                long double range_ns = 8.64e13L;
                /* a true reference time within a day of the centre, or a quarter of a wrap */
                if (uf->wrap_bits > 0 && uf->wrap_bits < 64 && (long double) (UINT64_C(1) << uf->wrap_bits) * uf->period_ns / 4 < range_ns)
                        range_ns = (long double) (UINT64_C(1) << uf->wrap_bits) * uf->period_ns / 4;
                for (int k = 0; k < VALUES; k++) {
                        long double r_true = (long double) at_r + (long double) rng_unit(&s) * range_ns;
                        long double x_true = truth_x(has_a ? &ta : NULL, r_true);
                        /* the source reads its clock: its time minus a lag of 0..lag_from, and extra
                         * stands for a residual the record must carry */
                        long double x_read = x_true - (long double) (lag_from ? (double) (rng_next(&s) % lag_from) : 0.0);
                        int64_t u = reading(uf, x_read);
                        long double y_true = truth_x(has_b ? &tb : NULL, r_true);
                        int64_t v = 0, unc = 0, back;
                        long double got_ns, err;

                        int rc = conv_record_convert(&rec, wire(uf, u), &v, &unc);

                        /* An exact record of units answers within minutes of its centre only */
                        if (rc == CONV_RECORD_MISS && !has_a && !has_b) {
                                stale++;
                                continue;
                        }
                        if (rc < 0) {
                                if (failed < 3)
                                        diag("round %d: convert %d (%g -> %g) u %" PRId64 " lo %" PRId64 " c %" PRId64 " hi %" PRId64,
                                             round, conv_record_convert(&rec, wire(uf, u), &v, &unc), uf->period_ns, ut->period_ns,
                                             u, rec.in_lo, rec.in_c, rec.in_hi);
                                failed++;
                                continue;
                        }
                        /* back to the count nearest the truth (the answer is wrapped) */
                        back = reading(ut, y_true);
                        if (ut->encoding == UNIT_ENCODING_X11_US || (ut->wrap_bits > 0 && ut->wrap_bits < 64)) {
                                int64_t w = ut->encoding == UNIT_ENCODING_X11_US ? INT64_C(4294967296) * 1000 :
                                                                                  INT64_C(1) << ut->wrap_bits;
                                int64_t diff = (v - wire(ut, back)) % w;
                                if (diff > w / 2)
                                        diff -= w;
                                if (diff < -w / 2)
                                        diff += w;
                                back += diff;
                        } else
                                back = v;
                        got_ns = (long double) back * ut->period_ns;
                        err = fabsl(got_ns - y_true);
                        checked++;
                        if (err > (long double) unc + 1e-3L) {
                                if (bad++ < 5)
                                        diag("round %d: from %g to %g: error %.3Lf > bound %" PRId64, round,
                                             uf->period_ns, ut->period_ns, err, unc);
                        }
                        if (unc > 0 && err / unc > worst)
                                worst = err / unc;
                        (void) truth_r;
                }
        }
        is_int(failed, 0, "every record builds and answers near its centre");
        ok(stale < checked / 20, "few values are beyond an exact record's span (%d)", stale);
        diag("%d conversions, worst error/bound %.3Lf", checked, worst);
        is_int(bad, 0, "the truth lies inside the bound");
}

static void test_identity(void) {
        ConvRecord rec;
        int64_t v, unc;

        conv_record_identity(&rec);
        ok(conv_record_validate(&rec) == 0, "identity is valid");
        ok(conv_record_convert(&rec, INT64_MIN, &v, &unc) == 0 && v == INT64_MIN && unc == 0, "identity: INT64_MIN");
        ok(conv_record_convert(&rec, INT64_MAX, &v, &unc) == 0 && v == INT64_MAX && unc == 0, "identity: INT64_MAX");
        conv_record_failing(-ENODEV, &rec);
        is_int(conv_record_convert(&rec, 5, &v, &unc), -ENODEV, "a failing record fails");
}

/* x11_us: unreduced values convert like their reduced form; a wrapping domain round-trips. */
static void test_x11_us(void) {
        const DomainUnit ns = { 1.0, 0, false, UNIT_ENCODING_PLAIN };
        const DomainUnit us = { 1000.0, 0, true, UNIT_ENCODING_X11_US };
        const DomainUnit ms = { 1e6, 32, true, UNIT_ENCODING_PLAIN };
        int64_t at = INT64_C(100) * 86400 * 1000000000;         /* 100 days of uptime */
        ConvSpec to_ns = { .from_unit = &us, .to_unit = &ns, .from_x_begin_ns = INT64_MIN, .to_r_begin_ns = INT64_MIN,
                           .at_r_ns = at };
        ConvSpec from_ns = to_ns, ms_to_ns = to_ns, ns_to_us = to_ns;
        ConvRecord a, b, c, d;
        int64_t v1, v2, u1, u2, raw_us = at / 1000 + 123, back;

        from_ns.from_unit = &ns;
        from_ns.to_unit = &us;
        ms_to_ns.from_unit = &ms;
        ns_to_us.from_unit = &ns;
        ns_to_us.to_unit = &us;
        ns_to_us.at_r_ns = 0;
        ok(conv_record_build(&to_ns, &a) == 0 && conv_record_build(&from_ns, &b) == 0 &&
           conv_record_build(&ms_to_ns, &c) == 0 && conv_record_build(&ns_to_us, &d) == 0, "built");
        ok(raw_us / 1000 > UINT32_MAX, "an unreduced value: its ms part is >= 2^32");
        ok(conv_record_convert(&a, raw_us, &v1, &u1) == 0, "x11_us accepts it");
        ok(conv_record_convert(&a, ((raw_us / 1000) & 0xffffffff) * 1000 + raw_us % 1000, &v2, &u2) == 0 &&
           v1 == v2 && u1 == u2, "and converts it like its reduced form");
        ok(llabs(v1 - (raw_us * 1000 + 500)) <= u1, "to the middle of its µs, within the bound");
        ok(conv_record_convert(&b, v1, &back, &u2) == 0 && back == ((raw_us / 1000) & 0xffffffff) * 1000 + raw_us % 1000,
           "and back: the reduced form");

        /* x11 -> monotonic near 0 may answer a negative time; monotonic -> x11_us takes it back. */
        c.in_hint = 0;
        ok(conv_record_convert(&c, 4294967295, &v1, &u1) == 0 && v1 < 0, "x11 -> ns: the occurrence before 0 (%" PRId64 ")", v1);
        ok(conv_record_convert(&d, v1, &back, &u2) == 0 && back / 1000 == 4294967295, "ns -> x11_us accepts it back");
        is_int(conv_record_convert(&d, -1000000, &back, &u2), 0, "ns -> x11_us: -1000000");
        ok(back == CONV_X11_US_WRAP - 1000, "-1000000 ns is x11_us 2^32·1000 - 1000 (%" PRId64 ")", back);
}

static void test_validity(void) {
        const DomainUnit ns = { 1.0, 0, false, UNIT_ENCODING_PLAIN };
        Model m = { .r_c_ns = 1000000000000, .x_c_ns = 5000000000000, .rate = 1e-5, .half_ns = 100, .rate_half = 1e-8 };
        ConvSpec spec = { .from_unit = &ns, .to_unit = &ns, .from_model = &m, .from_x_begin_ns = 4000000000000,
                          .to_r_begin_ns = INT64_MIN, .at_r_ns = 1000000000000 };
        ConvRecord rec;
        int64_t v, unc;

        ok(conv_record_build(&spec, &rec) == 0, "built with a begin");
        is_int(conv_record_convert(&rec, 3999999999000, &v, &unc), CONV_RECORD_MISS, "before the segment: a miss");
        is_int(conv_record_convert(&rec, 4000000001000, &v, &unc), 0, "after it: an answer");
        is_int(conv_record_convert(&rec, INT64_MAX, &v, &unc), CONV_RECORD_MISS,
               "far from the centre: not this record's");
}

int main(void) {
        test_identity();
        test_truth();
        test_x11_us();
        test_validity();
        return done_testing();
}
