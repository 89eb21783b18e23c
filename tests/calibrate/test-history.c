/* SPDX-License-Identifier: MIT */

/* Segments: a step closes one and opens the next, past values use the model of their time,
 * a restart opens a new segment, and the ring keeps memory bounded. */

#include <errno.h>
#include <math.h>

#include "fake.h"
#include "history.h"
#include "tap.h"

static void feed(History *h, Domain *d, int n, int64_t gap_ns, int *ret_steps) {
        for (int i = 0; i < n; i++) {
                Sample s;
                size_t got = 0;
                HistoryEvent ev;

                domain_fake_ops.sample_burst(d, &s, 1, &got);
                if (got == 1 && history_add(h, &s, &ev) == 0 && ev.verdict == ESTIMATOR_STEP && ret_steps)
                        (*ret_steps)++;
                fake_advance(d, gap_ns);
        }
}

static void test_segments(void) {
        static const FakeStep steps[] = { { INT64_C(10000000000), INT64_C(2000000) } };
        FakeConfig config = { .rate_ppm = 12, .deviation_min_ns = 50, .deviation_max_ns = 100,
                              .steps = steps, .n_steps = 1, .seed = 42 };
        Domain *d = NULL;
        History h;
        int steps_seen = 0;
        const Segment *first, *second;
        int64_t x, unc;

        history_init(&h, NULL);
        ok(history_current(&h) == NULL, "no segment before the first sample");
        domain_fake_ops.open("f", &config, &d);
        feed(&h, d, 200, 100000000, &steps_seen);       /* 20 s, the step at 10 s */

        is_int(steps_seen, 1, "one step seen");
        is_int(history_count(&h), 2, "two segments");
        first = history_get(&h, 0);
        second = history_get(&h, 1);
        ok(first->end == SEGMENT_STEP && llabs(first->step_ns - 2000000) < 1000,
           "the first closed by the step, of its size (%" PRId64 ")", first->step_ns);
        ok(second->end == SEGMENT_OPEN && second->id == first->id + 1, "the second is open, ids increase");
        ok(first->r_end_ns < steps[0].at_r_ns && second->r_begin_ns >= steps[0].at_r_ns,
           "the boundary lies between the samples around the step");
        ok(history_at_r(&h, INT64_C(5000000000)) == first && history_at_r(&h, INT64_C(15000000000)) == second,
           "a past time finds the model of its time");
        ok(history_at_r(&h, -INT64_C(1000000000)) == first, "before the first segment: the oldest");

        /* A value from before the step converts with the old model, within its bound. */
        ok(model_forward(&first->model, INT64_C(5000000000), 0, &x, &unc) == 0 &&
           fabs((double) x - fake_truth_ns(d, INT64_C(5000000000))) <= (double) unc,
           "old model still true for its time");
        ok(history_at_x(&h, (int64_t) fake_truth_ns(d, INT64_C(5000000000))) == first &&
           history_at_x(&h, (int64_t) fake_truth_ns(d, INT64_C(15000000000))) == second,
           "a domain value finds its segment");

        history_restart(&h);
        ok(history_current(&h)->end == SEGMENT_RESTART, "restart closes the open segment");
        feed(&h, d, 3, 100000000, NULL);
        ok(history_count(&h) == 3 && history_current(&h)->end == SEGMENT_OPEN, "the next sample opens a new one");
        domain_fake_ops.close(d);
}

static void test_bounded(void) {
        FakeStep steps[40];
        FakeConfig config = { .deviation_min_ns = 50, .deviation_max_ns = 100, .steps = steps, .n_steps = 40,
                              .seed = 9 };
        Domain *d = NULL;
        History h;
        int steps_seen = 0;
        uint64_t last_id = 0;
        bool ordered = true;

        for (int i = 0; i < 40; i++)
                steps[i] = (FakeStep) { INT64_C(1000000000) * (i + 1), (i % 2 ? -1 : 1) * INT64_C(50000000) };
        history_init(&h, NULL);
        domain_fake_ops.open("g", &config, &d);
        feed(&h, d, 420, 100000000, &steps_seen);
        is_int(steps_seen, 40, "40 steps seen");
        is_int(history_count(&h), HISTORY_SEGMENTS_MAX, "the ring keeps at most HISTORY_SEGMENTS_MAX segments");
        for (size_t i = 0; i < history_count(&h); i++) {
                if (history_get(&h, i)->id <= last_id)
                        ordered = false;
                last_id = history_get(&h, i)->id;
        }
        ok(ordered && last_id == 41, "oldest first, the newest is segment 41 (%" PRIu64 ")", last_id);
        ok(history_get(&h, HISTORY_SEGMENTS_MAX) == NULL, "past the end is NULL");
        domain_fake_ops.close(d);
}

static void test_bad_sample(void) {
        History h;
        Sample bad = { 10, 5, 0, 0 };

        history_init(&h, NULL);
        is_int(history_add(&h, &bad, NULL), -EINVAL, "an invalid sample is refused");
        is_int(history_count(&h), 0, "and leaves no segment");
}

/* A burst of 8 fake samples a second, fed to h; counts answers whose bound misses the truth at
 * the burst (where the daemon's conversions are centred) and events other than consistent. */
static void feed_bursts(History *h, Domain *d, int n_bursts, int *outside, int *events) {
        for (int b = 0; b < n_bursts; b++) {
                Sample s[8];
                size_t got = 0;

                domain_fake_ops.sample_burst(d, s, 8, &got);
                for (size_t i = 0; i < got; i++) {
                        HistoryEvent ev;
                        const Segment *seg;
                        int64_t x, unc;

                        if (history_add(h, &s[i], &ev) < 0 || ev.verdict != ESTIMATOR_CONSISTENT)
                                (*events)++;
                        seg = history_current(h);
                        for (int64_t r_ns = s[0].r0_ns; r_ns <= s[i].r1_ns; r_ns += 97)
                                if (!seg || model_forward(&seg->model, r_ns, 0, &x, &unc) < 0 ||
                                    fabs((double) x - fake_truth_ns(d, r_ns)) > (double) unc)
                                        (*outside)++;
                }
                fake_advance(d, INT64_C(1000000000));
        }
}

/* Yesterday's rate: right, it narrows the first burst; moved by 100 ppm, it is found out. */
static void test_prior(void) {
        FakeConfig config = { .offset_ns = INT64_C(123456789), .rate_ppm = 12, .deviation_min_ns = 200,
                              .deviation_max_ns = 2000, .interval_ns = 500, .seed = 77 };
        int outside = 0, events = 0;
        Domain *d = NULL;
        History h;
        double rate_half;

        history_init(&h, NULL);
        domain_fake_ops.open("f", &config, &d);
        ok(history_set_rate_prior(&h, (12 - 3 - 50) * 1e-6, (12 - 3 + 50) * 1e-6) == 0,
           "a prior of 9 +- 50 ppm is taken");
        feed_bursts(&h, d, 1, &outside, &events);
        rate_half = history_current(&h)->model.rate_half;
        ok(rate_half <= 50e-6 + 1e-12, "the first burst's rate bound is the prior's (%.1f ppm)", rate_half * 1e6);
        feed_bursts(&h, d, 10, &outside, &events);
        is_int(history_rate_prior(&h), ESTIMATOR_PRIOR_RELEASED, "the samples take over from it");
        is_int(outside + events, 0, "truth always inside the bound, no event");
        domain_fake_ops.close(d);

        /* NTP moved the rate by 100 ppm while the daemon was down. */
        config.rate_ppm = 112;
        outside = events = 0;
        history_init(&h, NULL);
        domain_fake_ops.open("f", &config, &d);
        history_set_rate_prior(&h, (12 - 50) * 1e-6, (12 + 50) * 1e-6);
        feed_bursts(&h, d, 1, &outside, &events);
        ok(history_rate_prior(&h) == ESTIMATOR_PRIOR_ACTIVE, "the first burst cannot tell (the prior holds)");
        feed_bursts(&h, d, 1, &outside, &events);
        is_int(history_rate_prior(&h), ESTIMATOR_PRIOR_CONTRADICTED, "the second burst contradicts it");
        feed_bursts(&h, d, 10, &outside, &events);
        is_int(outside, 0, "the truth stays inside the bound at every sample");
        is_int(events, 0, "neither a step nor a change of rate is reported");
        is_int(history_count(&h), 1, "the segment stays: its model is refitted without the prior");
        ok(fabs(history_current(&h)->model.rate - 112e-6) <= history_current(&h)->model.rate_half,
           "the rate is found (%.3f ppm)", history_current(&h)->model.rate * 1e6);
        domain_fake_ops.close(d);
}

/* The clock on a new rate from r_ns on, continuous there (a slew moves no value). */
static Domain *fake_after_rate_change(Domain *before, const FakeConfig *config, double rate_ppm, int64_t r_ns) {
        FakeConfig after = *config;
        Domain *d = NULL;

        after.rate_ppm = rate_ppm;
        after.r_start_ns = r_ns;
        after.offset_ns = (int64_t) llround(fake_truth_ns(before, r_ns) - (double) r_ns * (1.0 + rate_ppm * 1e-6));
        after.seed = config->seed + 1;
        domain_fake_ops.open("f", &after, &d);
        return d;
}

/* The kernel said its NTP frequency moved by 300 ppm: the segment closes, and the next one's
 * first bounds are as tight as the last ones, not the 1000 ppm of a clock known from nothing. */
static void test_rate_changed(void) {
        FakeConfig config = { .rate_ppm = 12, .deviation_min_ns = 200, .deviation_max_ns = 2000,
                              .interval_ns = 500, .seed = 5 };
        Domain *before = NULL, *after = NULL;
        int outside = 0, events = 0;
        const Segment *old, *seg;
        int64_t t_ns, x = 0, unc = 0;
        History h;
        int r;

        history_init(&h, NULL);
        is_int(history_rate_changed(&h, 300e-6, 20e-9), -ENODATA, "no model yet: nothing to move");
        domain_fake_ops.open("f", &config, &before);
        feed_bursts(&h, before, 20, &outside, &events);
        t_ns = fake_now_ns(before);
        old = history_current(&h);
        is_int(history_rate_changed(&h, NAN, 0), -EINVAL, "a change that is not a number is refused");
        ok(history_rate_changed(&h, 300e-6, 20e-9) == 0 && old->end == SEGMENT_RATE_CHANGE,
           "the kernel's change of rate closes the segment");

        after = fake_after_rate_change(before, &config, 312, t_ns);
        feed_bursts(&h, after, 1, &outside, &events);
        seg = history_current(&h);
        ok(history_count(&h) == 2 && seg->r_begin_ns >= t_ns, "a new segment starts at the first burst after it");
        ok(seg->model.rate_half <= old->model.rate_half + 20e-9 + 1e-12,
           "its first rate bound is the old one plus the margin (%.3f ppm)", seg->model.rate_half * 1e6);
        r = model_forward(&seg->model, t_ns + INT64_C(1000000000), 0, &x, &unc);
        ok(r == 0 && unc < 1000 && fabs((double) x - fake_truth_ns(after, t_ns + INT64_C(1000000000))) <= (double) unc,
           "a second ahead of that burst: the truth within %" PRId64 " ns", unc);
        feed_bursts(&h, after, 20, &outside, &events);
        is_int(outside, 0, "the truth inside the bound at every sample, before and after");
        is_int(events, 0, "the samples saw nothing to report: the change was known");
        ok(fabs(history_current(&h)->model.rate - 312e-6) <= history_current(&h)->model.rate_half,
           "the new rate is found (%.3f ppm)", history_current(&h)->model.rate * 1e6);
        ok(model_forward(&old->model, t_ns - INT64_C(2000000000), 0, &x, &unc) == 0 &&
                   fabs((double) x - fake_truth_ns(before, t_ns - INT64_C(2000000000))) <= (double) unc,
           "a value from before the change converts with the old model");
        domain_fake_ops.close(before);
        before = after;

        /* Told the wrong size (0 instead of 300 ppm more): the samples overrule it. */
        outside = events = 0;
        t_ns = fake_now_ns(before);
        is_int(history_rate_changed(&h, 0, 20e-9), 0, "a change of rate told with the wrong size");
        after = fake_after_rate_change(before, &config, 612, t_ns);
        feed_bursts(&h, after, 3, &outside, &events);
        is_int(history_rate_prior(&h), ESTIMATOR_PRIOR_CONTRADICTED, "the samples contradict it");
        feed_bursts(&h, after, 10, &outside, &events);
        outside = 0;
        feed_bursts(&h, after, 5, &outside, &events);
        is_int(outside, 0, "once contradicted, the truth is inside the bound again");
        domain_fake_ops.close(after);
        domain_fake_ops.close(before);
}

/* The rate changed 1 ms after the last sample of the old segment and the next burst came a second
 * later: between the two, the old model is 300 us off by the end. Told of the change or not, a
 * time in that gap converts with both models' intervals together, and holds the truth. */
static void test_rate_change_gap(void) {
        FakeConfig config = { .rate_ppm = 12, .deviation_min_ns = 200, .deviation_max_ns = 2000,
                              .interval_ns = 500, .seed = 9 };
        Domain *before = NULL, *after = NULL;
        int outside = 0, events = 0, missed = 0, checked = 0;
        const Segment *old;
        int64_t r_end_ns, t_change_ns, r_begin_ns;
        History h;

        for (int told = 0; told < 2; told++) {
                history_init(&h, NULL);
                domain_fake_ops.open("f", &config, &before);
                feed_bursts(&h, before, 10, &outside, &events);
                old = history_current(&h);
                r_end_ns = old->r_end_ns;
                t_change_ns = r_end_ns + INT64_C(1000000);
                if (told)
                        history_rate_changed(&h, 300e-6, 20e-9);
                after = fake_after_rate_change(before, &config, 312, t_change_ns);
                fake_advance(after, INT64_C(1000000000));
                feed_bursts(&h, after, 3, &outside, &events);
                r_begin_ns = history_get(&h, 1) ? history_get(&h, 1)->r_begin_ns : 0;
                ok(history_count(&h) == 2 && r_begin_ns > t_change_ns,
                   "%s: a new segment, its first sample a second after the change",
                   told ? "told of the change" : "found by the samples");
                for (int64_t r_ns = r_end_ns + 1; r_ns < r_begin_ns; r_ns += (r_begin_ns - r_end_ns) / 64) {
                        double truth = fake_truth_ns(r_ns < t_change_ns ? before : after, r_ns);
                        int64_t x, unc, x_back, unc_back;

                        checked++;
                        if (history_forward(&h, r_ns, 0, &x, &unc) < 0 || fabs((double) x - truth) > (double) unc)
                                missed++;
                        else if (history_inverse(&h, (int64_t) llround(truth), 0, &x_back, &unc_back) < 0 ||
                                 llabs(x_back - r_ns) > unc_back + 1)
                                missed++;
                }
                domain_fake_ops.close(after);
                domain_fake_ops.close(before);
        }
        ok(checked > 100 && missed == 0, "every time in the gap converts within its bound, both ways (%d of %d missed)",
           missed, checked);
        is_int(outside, 0, "and at every sample");
}

int main(void) {
        test_segments();
        test_bounded();
        test_bad_sample();
        test_prior();
        test_rate_changed();
        test_rate_change_gap();
        return done_testing();
}
