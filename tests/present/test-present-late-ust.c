/* SPDX-License-Identifier: MIT */

/* The msc domain's bound against what Present reports, late or early on a loaded server: a simulated fake CRTC
 * (present_fake.c's arithmetic: msc rounded from the UST) on a loaded server, whose timer fires
 * up to 3 ms early, mostly on time, and now and then late by up to 1.5 intervals, and which
 * answers a request it handles late at once, up to half an interval before the vblank. Its
 * events go through the source's box (domains/present-box.c) into a History; vblanks ten frames
 * ahead are converted as the daemon converts them (the graph; msc is an event counter, so the
 * bound is the model's alone). The model's bound holds the vblank's true time, and so
 * does Convert's, every time; no event is taken for a step. A report is the fake timer's firing,
 * anywhere within half a frame of the vblank: how many fall outside the bound is a diag, the
 * jitter the `emulated` verdict names. */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "graph.h"
#include "history.h"
#include "present-box.h"
#include "tap.h"

/* CLOCK_MONOTONIC = raw * (1 + 20 ppm) + 7 s; the fake CRTC's 1000000 / 60 = 16666 us. */
#define SIM_SLEW 20e-6
#define SIM_MONO_OFF INT64_C(7000000000)
#define SIM_INTERVAL_US 16666
#define SIM_INTERVAL_NS (INT64_C(1000) * SIM_INTERVAL_US)
#define BURSTS 1200

static uint64_t rng_state = 15;

/* splitmix64, as a deterministic source of jitter */
static double uniform(void) {
        uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return (double) ((z ^ (z >> 31)) >> 11) / 0x1p53;
}

static int64_t sim_raw(int64_t mono_ns) {
        return (int64_t) llround((double) (mono_ns - SIM_MONO_OFF) / (1 + SIM_SLEW));
}

typedef struct Report {
        PresentEvent event;
        int64_t fired_ns;               /* monotonic: when the server stamped it */
} Report;

/* The server's answer to PresentNotifyMSC(target): when it stamps it, and what. */
static void sim_report(uint64_t target, Report *ret) {
        int64_t vblank_ns = (int64_t) target * SIM_INTERVAL_NS, fired_ns, recv_ns;
        double u = uniform();
        uint64_t ust;

        if (u < 0.55)           /* the timer's delay truncated to whole ms: early */
                fired_ns = vblank_ns - (int64_t) (uniform() * 3e6);
        else if (u < 0.80)      /* on time */
                fired_ns = vblank_ns + (int64_t) (uniform() * 3e5);
        else if (u < 0.95)      /* a loaded server: late, by up to 1.5 intervals */
                fired_ns = vblank_ns + (int64_t) (uniform() * 1.5 * (double) SIM_INTERVAL_NS);
        else                    /* handled late, answered at once: up to half an interval early */
                fired_ns = vblank_ns - (int64_t) (uniform() * 0.5 * (double) SIM_INTERVAL_NS);
        recv_ns = fired_ns + 60000 + (int64_t) (uniform() * 2e6);
        ust = (uint64_t) (fired_ns / 1000);
        *ret = (Report) {
                .event = {
                        .ust_us = ust,
                        .msc = (ust + SIM_INTERVAL_US / 2) / SIM_INTERVAL_US,
                        .raw0_ns = sim_raw(recv_ns) - 25,
                        .mono_ns = recv_ns,
                        .raw1_ns = sim_raw(recv_ns) + 25,
                },
                .fired_ns = fired_ns,
        };
}

static void test_loaded_fake(void) {
        static History h;
        const DomainUnit unit = { .period_ns = 1e9 / 60, .events = true };
        ClockGraph g;
        PresentJitter j;
        size_t node = 0;
        uint64_t msc = 600000, n_events = 0, n_samples = 0, n_predictions = 0, n_reports = 0, n_late = 0;
        uint64_t n_outside_model = 0;
        int64_t worst_truth_ns = INT64_MAX, worst_report_ns = INT64_MAX, bound_max_ns = 0;
        bool fed = true, consistent = true, model_holds = true, truth_holds = true;

        history_init(&h, NULL);
        ok(present_jitter_for_interval(unit.period_ns, &j) == 0, "the source's box for 60 Hz");
        ok(graph_init(&g, "monotonic_raw") == 0 && graph_add(&g, "msc", &unit, &h, &node) == 0,
           "a graph with msc as the daemon makes it");
        graph_set_available(&g, node, true);

        /* A burst every half second, two frames each, as domains/present.c asks. */
        for (int k = 0; k < BURSTS; k++) {
                msc += 30 + (uint64_t) (uniform() * 3);
                for (uint64_t f = 1; f <= 2; f++) {
                        HistoryEvent ev;
                        Report rep;
                        Sample s;

                        sim_report(msc + f, &rep);
                        n_events++;
                        /* present-vblank.c: an answer about another frame is not a sample. */
                        if (rep.event.msc != msc + f)
                                continue;
                        fed &= present_event_sample(&rep.event, &unit, &j, &s) == 0 && history_add(&h, &s, &ev) == 0;
                        consistent &= ev.verdict == ESTIMATOR_CONSISTENT;
                        n_samples++;
                }
                graph_refresh(&g, node);
                if (k < 5)
                        continue;

                /* Ten frames ahead, converted as Convert("msc", "monotonic_raw") would. */
                uint64_t n = msc + 12;
                int64_t x_ns, r_ns, unc_ns, model_r_ns, model_unc_ns, truth_ns, margin_ns;
                Report rep;

                if (unit_to_ns(&unit, (int64_t) n, &x_ns) < 0 ||
                    model_inverse(&history_current(&h)->model, x_ns, 0, &model_r_ns, &model_unc_ns) < 0 ||
                    graph_convert_general(&g, node, g.hub, (int64_t) n, 0, &r_ns, &unc_ns) < 0) {
                        truth_holds = false;
                        continue;
                }
                truth_ns = sim_raw((int64_t) n * SIM_INTERVAL_NS);
                /* The estimator's claim: its line holds the vblank (the boxes do). */
                model_holds &= llabs(truth_ns - model_r_ns) <= model_unc_ns;
                n_predictions++;
                bound_max_ns = unc_ns > bound_max_ns ? unc_ns : bound_max_ns;
                margin_ns = unc_ns - llabs(truth_ns - r_ns);
                truth_holds &= margin_ns >= 0;
                worst_truth_ns = margin_ns < worst_truth_ns ? margin_ns : worst_truth_ns;

                /* What the server then reports for vblank n, if it names n: a UST it stamped
                 * anywhere from half an interval before to half an interval after it. */
                sim_report(n, &rep);
                if (rep.event.msc != n)
                        continue;
                n_reports++;
                n_late += rep.fired_ns - (int64_t) n * SIM_INTERVAL_NS > SIM_INTERVAL_NS / 4;
                /* The UST is truncated: its instant is in [ust, ust + 999] ns. */
                margin_ns = unc_ns - llabs(sim_raw((int64_t) rep.event.ust_us * 1000 + 500) - r_ns) - 500;
                n_outside_model += margin_ns < 0;
                worst_report_ns = margin_ns < worst_report_ns ? margin_ns : worst_report_ns;
        }
        ok(fed, "every event of the frame asked for became a sample the history took (%llu of %llu)",
           (unsigned long long) n_samples, (unsigned long long) n_events);
        ok(consistent, "no step, no change of rate");
        ok(model_holds, "the model's bound holds the vblank's time, every time");
        ok(truth_holds && n_predictions > 1000, "Convert's bound, %llu times 10 frames ahead, holds the vblank's time (worst margin "
           "%lld ns, bound up to %lld ns)", (unsigned long long) n_predictions, (long long) worst_truth_ns,
           (long long) bound_max_ns);
        ok(bound_max_ns < SIM_INTERVAL_NS / 2,
           "Convert's bound is the model's, never half a frame more (up to %lld ns)", (long long) bound_max_ns);
        ok(n_reports > 500 && n_late > 20, "the server reported %llu of those vblanks, %llu of them over a quarter of "
           "an interval late", (unsigned long long) n_reports, (unsigned long long) n_late);
        diag("%llu reports lie outside the bound (worst margin %lld ns): a fake timer's report is the vblank give or "
             "take half a frame", (unsigned long long) n_outside_model, (long long) worst_report_ns);
}

int main(void) {
        test_loaded_fake();
        return done_testing();
}
