/* SPDX-License-Identifier: MIT */

/* The live graph: nodes, errors, units at the edges (X ms, X µs, ticks), two-hop conversions
 * through the hub, and the fast path for plain ns domains. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "fake.h"
#include "graph.h"
#include "tap.h"
#include "xtime.h"

/* Calibrates a fake domain for 30 simulated seconds into h. */
static Domain *calibrate_fake(const char *name, FakeConfig *config, History *h) {
        Domain *d = NULL;

        history_init(h, NULL);
        if (domain_fake_ops.open(name, config, &d) < 0)
                return NULL;
        for (int i = 0; i < 300; i++) {
                Sample s[8];
                size_t n = 0;

                domain_fake_ops.sample_burst(d, s, 8, &n);
                for (size_t k = 0; k < n; k++)
                        history_add(h, &s[k], NULL);
                fake_advance(d, 100000000);
        }
        return d;
}

static void test_nodes(void) {
        ClockGraph g;
        History h;
        size_t i = 99;
        int64_t v, unc;
        DomainUnit bad = { 0.0, 0, false, UNIT_ENCODING_PLAIN };
        char long_name[GRAPH_NAME_MAX + 1];

        history_init(&h, NULL);
        is_int(graph_init(&g, ""), -EINVAL, "empty hub name is -EINVAL");
        is_int(graph_init(&g, "monotonic_raw"), 0, "init");
        ok(graph_find(&g, "monotonic_raw", &i) == 0 && i == g.hub, "the hub is a node");
        is_int(graph_find(&g, "nope", &i), -ENOENT, "unknown name is -ENOENT");
        is_int(graph_add(&g, "a", &UNIT_NS, &h, &i), 0, "add a node");
        is_int(graph_add(&g, "a", &UNIT_NS, &h, NULL), -EEXIST, "a name twice is -EEXIST");
        is_int(graph_add(&g, "b", &bad, &h, NULL), -EINVAL, "a zero period is -EINVAL");
        memset(long_name, 'x', GRAPH_NAME_MAX);
        long_name[GRAPH_NAME_MAX] = 0;
        is_int(graph_add(&g, long_name, &UNIT_NS, &h, NULL), -EINVAL, "an over-long name is -EINVAL");
        is_int(graph_convert(&g, g.hub, i, 5, INT64_MIN, &v, &unc), -ENODEV, "not calibrated yet is -ENODEV");
        is_int(graph_convert(&g, g.hub, 77, 5, INT64_MIN, &v, &unc), -ENOENT, "bad index is -ENOENT");
        for (int k = g.n_nodes; k < GRAPH_NODES_MAX; k++) {
                char name[16];
                snprintf(name, sizeof(name), "n%d", k);
                graph_add(&g, name, &UNIT_NS, &h, NULL);
        }
        is_int(graph_add(&g, "full", &UNIT_NS, &h, NULL), -ENOSPC, "a full graph is -ENOSPC");
}

static void test_two_hops(void) {
        FakeConfig ca = { .offset_ns = 1000000000, .rate_ppm = 30, .deviation_min_ns = 30, .deviation_max_ns = 300,
                          .seed = 1 };
        FakeConfig cb = { .offset_ns = -5000000000, .rate_ppm = -70, .deviation_min_ns = 30,
                          .deviation_max_ns = 300, .seed = 2 };
        History ha, hb;
        Domain *da = calibrate_fake("a", &ca, &ha), *db = calibrate_fake("b", &cb, &hb);
        ClockGraph g;
        size_t a, b;
        int outside = 0;
        int64_t v, unc, unc_same;

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "a", &UNIT_NS, &ha, &a);
        graph_add(&g, "b", &UNIT_NS, &hb, &b);
        for (int64_t r = 0; r < INT64_C(40000000000); r += 7777777) {
                double xa = fake_truth_ns(da, r), xb = fake_truth_ns(db, r);
                int64_t in = (int64_t) llround(xa);

                if (graph_convert(&g, a, b, in, INT64_MIN, &v, &unc) < 0 || fabs((double) v - xb) > (double) unc + 0.5)
                        outside++;
        }
        is_int(outside, 0, "a -> hub -> b: the truth of b inside the bound, 0..40 s");
        ok(graph_convert(&g, a, a, 12345, INT64_MIN, &v, &unc_same) == 0 && v == 12345 && unc_same == 0,
           "a domain to itself is exact");

        graph_set_available(&g, b, false);
        is_int(graph_convert(&g, a, b, 0, INT64_MIN, &v, &unc), -ENODEV, "an unavailable target is -ENODEV");
        graph_set_available(&g, b, true);
        is_int(graph_convert(&g, a, b, INT64_MIN, INT64_MIN, &v, &unc), -ERANGE, "a value near INT64_MIN is -ERANGE");
        domain_fake_ops.close(da);
        domain_fake_ops.close(db);
}

/* X time when the server stamps with the reference itself (the identity): the answer is the
 * encoding of the truth, exactly, and the ms domain is the floor. */
static void test_x11_units(void) {
        FakeConfig cx = { .unit = { 1e6, 32, true, UNIT_ENCODING_PLAIN }, .deviation_min_ns = 5000,
                          .deviation_max_ns = 20000, .interval_ns = 300000, .seed = 5,
                          .r_start_ns = INT64_C(4294967296) * 1000000 - INT64_C(20000000000) };
        History hx;
        Domain *dx = calibrate_fake("x11", &cx, &hx);
        ClockGraph g;
        size_t x11, x11_us;
        int bad_ms = 0, bad_us = 0, bad_back = 0;

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "x11", &UNIT_MS_X11, &hx, &x11);
        graph_add(&g, "x11_us", &UNIT_US_X11, &hx, &x11_us);
        for (int64_t r = cx.r_start_ns; r < cx.r_start_ns + INT64_C(40000000000); r += 999999937) {
                int64_t v, unc, back, back_unc, unwrapped;
                double truth_ns = fake_truth_ns(dx, r);
                uint64_t want_us;

                /* monotonic -> x11_us: the encoding of the truth, within the bound (which holds for
                 * the unwrapped value: near an ms edge the estimate may round into the next ms). */
                xtime_encode_us((int64_t) truth_ns / 1000, &want_us);
                if (graph_convert(&g, g.hub, x11_us, r, r, &v, &unc) < 0 ||
                    unit_unwrap(&UNIT_US_X11, v, (int64_t) truth_ns / 1000, &unwrapped) < 0 ||
                    fabs((double) unwrapped * 1000.0 - truth_ns) > (double) unc ||
                    (unc < 1000 && v != (int64_t) want_us))
                        bad_us++;
                if (graph_convert(&g, g.hub, x11, r, r, &v, &unc) < 0 || v < 0 || v > UINT32_MAX ||
                    unit_unwrap(&UNIT_MS_X11, v, (int64_t) truth_ns / 1000000, &unwrapped) < 0 ||
                    fabs((double) unwrapped * 1e6 - truth_ns) > (double) unc)
                        bad_ms++;
                /* X ms -> monotonic: the middle of the ms, bound at least half a ms. */
                if (graph_convert(&g, x11, g.hub, ((int64_t) truth_ns / 1000000) & 0xffffffff, r, &back,
                                  &back_unc) < 0 ||
                    llabs(back - r) > back_unc || back_unc < 500000)
                        bad_back++;
        }
        is_int(bad_us, 0, "monotonic -> x11_us is the encoding of the truth, across the 2^32 ms wrap");
        is_int(bad_ms, 0, "monotonic -> x11: 32-bit ms within the bound of the truth");
        is_int(bad_back, 0, "x11 -> monotonic: within the bound, which includes the ms truncation");
        domain_fake_ops.close(dx);
}

/* A wrapping domain round-trips: what x11 -> the hub answers for the occurrence of an X time
 * before 0, the hub -> x11_us takes back (a negative time encodes modulo the wrap). */
static void test_wrap_round_trip(void) {
        FakeConfig cx = { .unit = { 1e6, 32, true, UNIT_ENCODING_PLAIN }, .deviation_min_ns = 5000,
                          .deviation_max_ns = 20000, .interval_ns = 300000, .seed = 9 };
        History hx;
        Domain *dx = calibrate_fake("x11", &cx, &hx);
        ClockGraph g;
        size_t x11, x11_us;
        int64_t r_ns, unc, back, back_unc;

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "x11", &UNIT_MS_X11, &hx, &x11);
        graph_add(&g, "x11_us", &UNIT_US_X11, &hx, &x11_us);
        /* unwrapped near the calibration (X time of 0..30 s): 2^32 - 1 is the ms before 0 */
        is_int(graph_convert(&g, x11, g.hub, 4294967295, INT64_MIN, &r_ns, &unc), 0, "x11 2^32 - 1 -> the hub");
        ok(r_ns < 0 && fabs(fake_truth_ns(dx, r_ns) + 500000.0) <= (double) unc + 500000.0,
           "  the ms before X time 0: a negative time (%" PRId64 " ± %" PRId64 ")", r_ns, unc);
        is_int(graph_convert(&g, g.hub, x11_us, r_ns, INT64_MIN, &back, &back_unc), 0,
               "the hub -> x11_us takes it back");
        ok(back / 1000 == 4294967295, "  as the same ms, modulo the wrap (%" PRId64 ")", back);
        is_int(graph_convert(&g, g.hub, x11_us, -1000000, INT64_MIN, &back, &back_unc), 0,
               "the hub -> x11_us of -1000000 ns");
        domain_fake_ops.close(dx);
}

/* X time that is exactly another clock (the identity verdict): through that clock's model, with
 * no model error between the two; undone, its own model again. */
static void test_same_as(void) {
        FakeConfig cm = { .offset_ns = 3000000000, .rate_ppm = 12, .deviation_min_ns = 30, .deviation_max_ns = 300,
                          .seed = 7 };
        FakeConfig cx = { .offset_ns = 3000000000, .rate_ppm = 12, .unit = { 1e6, 32, true, UNIT_ENCODING_PLAIN },
                          .deviation_min_ns = 5000, .deviation_max_ns = 20000, .interval_ns = 300000, .seed = 8 };
        History hm, hx;
        Domain *dm = calibrate_fake("monotonic", &cm, &hm), *dx = calibrate_fake("x11", &cx, &hx);
        ClockGraph g;
        size_t mono, x11, x11_us, other;
        int64_t r = INT64_C(20000000000), t, v, unc, own_unc;
        uint64_t want_us;

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "monotonic", &UNIT_NS, &hm, &mono);
        graph_add(&g, "x11", &UNIT_MS_X11, &hx, &x11);
        graph_add(&g, "x11_us", &UNIT_US_X11, &hx, &x11_us);
        graph_add(&g, "other", &UNIT_NS, &hm, &other);
        t = (int64_t) llround(fake_truth_ns(dm, r));
        xtime_encode_us(t / 1000, &want_us);

        is_int(graph_convert(&g, mono, x11_us, t, r, &v, &own_unc), 0, "tracked: monotonic -> x11_us");
        ok(own_unc >= 1000, "tracked: the bound holds the two models' errors (%" PRId64 " ns)", own_unc);

        is_int(graph_set_same_as(&g, x11, mono), 0, "x11 is monotonic");
        is_int(graph_set_same_as(&g, x11_us, mono), 0, "x11_us is monotonic");
        is_int(graph_convert(&g, mono, x11_us, t, r, &v, &unc), 0, "identity: monotonic -> x11_us");
        ok(v == (int64_t) want_us && unc <= 1000, "identity: the encoding of t exactly, bound %" PRId64 " ns <= 1 us",
           unc);
        is_int(graph_convert(&g, x11_us, mono, (int64_t) want_us, r, &v, &unc), 0, "identity: x11_us -> monotonic");
        ok(llabs(v - t) <= unc && unc <= 1000, "identity: back within 1 us (%" PRId64 " +- %" PRId64 ")", v - t, unc);
        is_int(graph_convert(&g, g.hub, x11, r, r, &v, &unc), 0, "identity: the hub -> x11 uses monotonic's model");
        ok(llabs(v * 1000000 - t) <= unc, "  within its bound");
        is_int(graph_set_same_as_uncertainty(&g, x11, 25000), 0, "x11 is monotonic to within 25 us");
        is_int(graph_set_same_as_uncertainty(&g, x11_us, 25000), 0, "and so is its view");
        is_int(graph_convert(&g, mono, x11_us, t, r, &v, &unc), 0, "identity with a residual: monotonic -> x11_us");
        ok(v == (int64_t) want_us && unc >= 25000 && unc <= 26000,
           "  the same value, the residual in the bound (%" PRId64 " ns)", unc);
        is_int(graph_convert(&g, x11, x11_us, (int64_t) (want_us / 1000), r, &v, &unc), 0, "x11 -> x11_us");
        ok(unc <= 1000000, "  one clock in two units: no residual (%" PRId64 " ns)", unc);
        is_int(graph_set_same_as_uncertainty(&g, x11, -1), -EINVAL, "a negative residual is -EINVAL");
        is_int(graph_set_same_as(&g, mono, x11), -EINVAL, "no chains: x11 follows monotonic");
        is_int(graph_set_same_as(&g, other, x11), -EINVAL, "nothing follows a follower");
        is_int(graph_set_same_as(&g, g.hub, mono), -EINVAL, "the hub follows nobody");

        is_int(graph_set_same_as(&g, x11, SIZE_MAX), 0, "undo");
        is_int(graph_set_same_as(&g, x11_us, x11_us), 0, "undo by its own index");
        is_int(graph_convert(&g, mono, x11_us, t, r, &v, &unc), 0, "tracked again");
        is_int(unc, own_unc, "  with its own model's bound");
        domain_fake_ops.close(dm);
        domain_fake_ops.close(dx);
}

/* A pair's record (what the shared table holds) converts in the open segment only; the graph
 * answers before it through the history. */
static void test_records(void) {
        FakeStep step = { .at_r_ns = INT64_C(15000000000), .step_ns = 5000000 };
        FakeConfig cb = { .offset_ns = 1000, .deviation_min_ns = 30, .deviation_max_ns = 300, .seed = 3,
                          .steps = &step, .n_steps = 1 };
        History hb;
        Domain *db = calibrate_fake("b", &cb, &hb);
        ClockGraph g;
        const ConvRecord *rec;
        size_t b;
        int64_t v, unc, v_rec, unc_rec, late = INT64_C(25000000000), early = INT64_C(5000000000);

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "b", &UNIT_NS, &hb, &b);
        ok(history_count(&hb) == 2, "the step made a second segment");
        rec = graph_pair(&g, g.hub, b);
        ok(rec && !graph_pair(&g, g.hub, b + 1), "a record per pair of nodes, none beyond");
        is_int(conv_record_convert(rec, late, &v_rec, &unc_rec), 0, "record: the open segment");
        is_int(graph_convert(&g, g.hub, b, late, late, &v, &unc), 0, "graph: the open segment");
        ok(v == v_rec && unc == unc_rec, "the record answers as the graph does");
        ok(fabs(fake_truth_ns(db, late) - (double) v) <= (double) unc, "within its bound of the truth");
        is_int(conv_record_convert(rec, early, &v, &unc), CONV_RECORD_MISS,
               "record: before the open segment is a miss");
        is_int(graph_convert(&g, g.hub, b, early, late, &v, &unc), 0, "graph: the model of that time");
        ok(fabs(fake_truth_ns(db, early) - (double) v) <= (double) unc, "within its bound of the truth");
        domain_fake_ops.close(db);
}

/* A vblank counter (msc, an event counter of ~60 Hz, drifting): msc n converts to the time of
 * vblank n with the model's bound only, not half a frame more (a count names an event, it is
 * not a truncated reading); a time converts to the last vblank at or before it. The record, the
 * general path and the truth agree. */
static void test_events(void) {
        const DomainUnit msc_unit = { .period_ns = 1e9 / 60, .events = true };
        FakeConfig cm = { .unit = msc_unit, .offset_ns = INT64_C(123456789), .rate_ppm = 37,
                          .deviation_min_ns = 2000, .deviation_max_ns = 20000, .interval_ns = 1000000, .seed = 11 };
        History hm;
        Domain *dm = calibrate_fake("msc", &cm, &hm);
        ClockGraph g;
        size_t msc;
        int bad_truth = 0, bad_bound = 0, bad_paths = 0, bad_floor = 0, n = 0;
        int64_t r_late = fake_now_ns(dm), worst_unc = 0;

        graph_init(&g, "monotonic_raw");
        graph_add(&g, "msc", &msc_unit, &hm, &msc);
        for (int64_t count = (int64_t) (fake_truth_ns(dm, r_late - INT64_C(5000000000)) / msc_unit.period_ns);
             count < (int64_t) (fake_truth_ns(dm, r_late + INT64_C(2000000000)) / msc_unit.period_ns); count += 7) {
                int64_t r_ns, unc, r_gen, unc_gen, back, back_unc;
                double truth_r;

                /* The truth: the reference time at which x = count·period (x is affine in r). */
                truth_r = (double) r_late + ((double) count * msc_unit.period_ns - fake_truth_ns(dm, r_late)) /
                                            (1 + cm.rate_ppm * 1e-6);
                if (graph_convert(&g, msc, g.hub, count, INT64_MIN, &r_ns, &unc) < 0 ||
                    graph_convert_general(&g, msc, g.hub, count, INT64_MIN, &r_gen, &unc_gen) < 0) {
                        bad_paths++;
                        continue;
                }
                n++;
                bad_paths += llabs(r_ns - r_gen) > 1 || llabs(unc - unc_gen) > 2;
                bad_truth += fabs((double) r_ns - truth_r) > (double) unc;
                worst_unc = unc > worst_unc ? unc : worst_unc;
                /* Well past the bound after vblank n and before vblank n + 1: the time reads n. */
                if (graph_convert(&g, g.hub, msc, (int64_t) truth_r + 2 * unc + 2, INT64_MIN, &back, &back_unc) < 0 ||
                    back != count)
                        bad_floor++;
                if (graph_convert(&g, g.hub, msc, (int64_t) (truth_r + msc_unit.period_ns) - 2 * unc - 2, INT64_MIN,
                                  &back, &back_unc) < 0 || back != count)
                        bad_floor++;
        }
        /* The model of 300 bursts of boxes a frame wide pins a vblank well within a quarter frame;
         * the half frame a rounded reading would add never is. */
        bad_bound = worst_unc >= (int64_t) (msc_unit.period_ns / 4);
        ok(n >= 50, "%d vblanks converted", n);
        is_int(bad_paths, 0, "msc -> the hub: the record and the general path agree");
        is_int(bad_truth, 0, "msc -> the hub: the vblank's true time within the bound");
        ok(!bad_bound, "msc -> the hub: the bound is the model's (worst %" PRIi64 " ns), no half frame", worst_unc);
        is_int(bad_floor, 0, "the hub -> msc: the last vblank at or before the time (floor, not nearest)");
        domain_fake_ops.close(dm);
}

int main(void) {
        test_nodes();
        test_events();
        test_two_hops();
        test_x11_units();
        test_same_as();
        test_records();
        test_wrap_round_trip();
        return done_testing();
}
