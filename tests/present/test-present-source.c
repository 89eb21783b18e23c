/* SPDX-License-Identifier: MIT */

/* domains/present.c against a real Xvfb, without the daemon: it lists msc (frames at the fake
 * CRTC's nominal 60 Hz), its bursts feed a History with no step or change of rate, the rate is
 * Xvfb's real one (1000000 / 60 = 16666 us a frame: 60.0024 Hz, present_fake.c) within its bound,
 * a vblank predicted 10 frames ahead holds the UST Present then reports for it, the status has
 * the refresh interval and the next vblank, and a server that goes away makes it fail, then a new
 * one on the same display brings a new generation. */

#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"
#include "present-client.h"
#include "present-drive.h"
#include "present.h"
#include "tap.h"
#include "time-util.h"
#include "xvfb.h"

#define BURST 8
#define FAKE_INTERVAL_NS 16666000.0     /* present_fake.c: 1000000 / 60 us, integer */

/* One burst into h: 0, or why it gave nothing the history took. */
static int burst(Domain *d, History *h, unsigned *n_inconsistent) {
        Sample s[BURST];
        size_t n = 0;
        int r;

        r = domain_present_ops.sample_burst(d, s, BURST, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                HistoryEvent ev;

                r = history_add(h, &s[i], &ev);
                if (r < 0)
                        return r;
                if (ev.verdict != ESTIMATOR_CONSISTENT)
                        (*n_inconsistent)++;
        }
        return 0;
}

/* The mono/raw rate over the run, so that the expected rate against the reference is exact. */
static double mono_rate(int64_t raw0, int64_t mono0, int64_t *ret_unc_ppb) {
        int64_t raw1 = clock_now_ns(CLOCK_MONOTONIC_RAW), mono1 = clock_now_ns(CLOCK_MONOTONIC);

        *ret_unc_ppb = (int64_t) (2e4 * 1e9 / (double) (raw1 - raw0)) + 1;    /* 20 us of brackets */
        return (double) (mono1 - mono0) / (double) (raw1 - raw0);
}

static void test_live(const char *display) {
        static History h;
        const X11Config config = { .display = display };
        DomainInfo infos[4];
        DomainStatus st;
        Domain *d = NULL;
        PresentClient client;
        unsigned n_inconsistent = 0, n_holds = 0, n_done = 0;
        int64_t raw0 = clock_now_ns(CLOCK_MONOTONIC_RAW), mono0 = clock_now_ns(CLOCK_MONOTONIC), start, rate_unc_ppb;
        unsigned n_failed = 0;
        double rate, hz;
        size_t n = 0;
        Model m;

        ok(domain_present_ops.enumerate(&config, infos, 4, &n) == 0 && n == 2,
           "lists two domains: msc and its one output's");
        ok(n == 2 && strcmp(infos[1].name, "msc-screen") == 0 && infos[1].unit.period_ns == infos[0].unit.period_ns,
           "msc-screen: Xvfb's one output (%s), at the same rate", n == 2 ? infos[1].name : "");
        ok(n == 2 && strcmp(infos[0].name, "msc") == 0 && strcmp(infos[0].unit_name, "frame") == 0 &&
           infos[0].unit.period_ns == FAKE_INTERVAL_NS && infos[0].unit.wrap_bits == 0 && infos[0].unit.events,
           "msc, an event counter in frames of Present's fake timer (Xvfb's mode has no timing), no wrap");
        ok(domain_present_ops.open("msc", &config, &d) == 0 && d, "opens");
        if (!d)
                return;
        history_init(&h, NULL);

        /* Bursts every 200 ms for 8 s: the daemon's warm-up and then some. */
        start = clock_now_ns(CLOCK_MONOTONIC);
        for (int k = 0; k < 40; k++) {
                int r = burst(d, &h, &n_inconsistent);

                if (r < 0) {
                        diag("burst %d: %s", k, strerror(-r));
                        n_failed++;
                }
                present_run_until(d, start + (k + 1) * INT64_C(200000000));
        }
        /* A server starved of CPU for the burst's whole budget fails it; the rest must hold. */
        ok(n_failed <= 2, "%u of 40 bursts failed: every other gave samples the history took", n_failed);
        is_int(n_inconsistent, 0, "no step, no change of rate");

        m = history_current(&h)->model;
        rate = (1 + m.rate) / mono_rate(raw0, mono0, &rate_unc_ppb);
        hz = 1e9 / infos[0].unit.period_ns * rate;
        diag("rate %+.1f ppm +- %.1f ppm: %.5f Hz; Xvfb's fake CRTC: %.5f Hz", (rate - 1) * 1e6,
             m.rate_half * 1e6, hz, 1e9 / FAKE_INTERVAL_NS);
        ok(fabs(1e9 / FAKE_INTERVAL_NS - hz) <= 1e9 / infos[0].unit.period_ns * (m.rate_half + rate_unc_ppb * 1e-9),
           "the rate is Xvfb's 60.0024 Hz within its bound (%.5f Hz +- %.5f)", hz,
           1e9 / infos[0].unit.period_ns * m.rate_half);

        ok(domain_present_ops.status(d, &st) == 0, "status");
        diag("crtc '%s', refresh_interval_ns %s, next_vblank_ns %s, samples %s, missed %s",
             present_extra(&st, "crtc"), present_extra(&st, "refresh_interval_ns"),
             present_extra(&st, "next_vblank_ns"), present_extra(&st, "samples"), present_extra(&st, "missed"));
        ok(strncmp(present_extra(&st, "crtc"), "crtc-", 5) == 0, "names its CRTC");
        ok(st.verdict && strcmp(st.verdict, "emulated") == 0 && strstr(present_extra(&st, "verdict_reason"), "timer"),
           "Xvfb's Present is a timer: verdict emulated (%s: %s)", st.verdict ?: "(none)",
           present_extra(&st, "verdict_reason"));
        ok(fabs(atof(present_extra(&st, "refresh_interval_ns")) - FAKE_INTERVAL_NS) < 20000,
           "refresh_interval_ns is the fake's 16666000 within the USTs' jitter over the run");
        ok(atoll(present_extra(&st, "next_vblank_ns")) > clock_now_ns(CLOCK_MONOTONIC) - 20000000 &&
           atoll(present_extra(&st, "next_vblank_ns")) < clock_now_ns(CLOCK_MONOTONIC) + 20000000,
           "next_vblank_ns is near");

        /* Ten frames ahead, five times: our own PresentNotifyMSC reports the vblank's UST. */
        if (present_client_open(&client, display) == 0) {
                for (int i = 0; i < 20 && n_done < 5; i++) {
                        uint64_t ust, msc, ust10, msc10;
                        int64_t pred_ns, bound_ns, err_ns, report_err_ns, late_ns;

                        if (present_client_notify(&client, 0, 2000, &ust, &msc) < 0 ||
                            present_client_predict(&m, &infos[0].unit, infos[0].lag_ns, msc + 10, &pred_ns,
                                                   &bound_ns) < 0 ||
                            present_client_notify(&client, msc + 10, 2000, &ust10, &msc10) < 0 || msc10 != msc + 10)
                                continue;
                        /* msc is an event counter: converting n gives the model's bound, which for
                         * Present's fake timer (the emulated verdict) is the window in which the timer
                         * may report vblank n: from 2 ms before its grid time (msc * 16666 us of
                         * CLOCK_MONOTONIC) to half a frame after. The grid and the report lie in it. */
                        late_ns = (int64_t) ust10 * 1000 - (int64_t) msc10 * (int64_t) FAKE_INTERVAL_NS;
                        err_ns = llabs((int64_t) msc10 * (int64_t) FAKE_INTERVAL_NS - pred_ns);
                        report_err_ns = llabs((int64_t) ust10 * 1000 + 500 - pred_ns) + 500;
                        n_done++;
                        n_holds += err_ns <= bound_ns && report_err_ns <= bound_ns;
                        diag("vblank %llu predicted %lld +- %lld: error %lld ns; reported %llu us, %+lld us "
                             "from the grid", (unsigned long long) msc10, (long long) pred_ns, (long long) bound_ns,
                             (long long) err_ns, (unsigned long long) ust10, (long long) late_ns / 1000);
                }
                present_client_close(&client);
        }
        /* A notify that times out on a loaded machine says nothing about the bound; one that
         * came back outside it would. */
        ok(n_done >= 3 && n_holds == n_done,
           "%u of %u vblanks 10 frames ahead: the grid time and the report within the bound",
           n_holds, n_done);
        domain_present_ops.close(d);
}

static void test_restart(void) {
        Xvfb x = {};
        X11Config config = {};
        DomainStatus st;
        Domain *d = NULL;
        Sample s[BURST];
        size_t n = 0;
        uint64_t generation;
        int display, r = 0;

        if (xvfb_start(-1, &x) < 0) {
                ok(false, "a second Xvfb");
                return;
        }
        display = x.display;
        config.display = x.name;
        ok(domain_present_ops.open("msc", &config, &d) == 0 && domain_present_ops.sample_burst(d, s, BURST, &n) == 0,
           "a burst on %s", x.name);
        domain_present_ops.status(d, &st);
        generation = st.generation;

        xvfb_stop(&x);
        for (int i = 0; i < 10 && r != -ENOTCONN; i++)
                r = domain_present_ops.sample_burst(d, s, BURST, &n);
        is_int(r, -ENOTCONN, "the server gone: -ENOTCONN");

        ok(xvfb_start(display, &x) == 0, "a new Xvfb on the same display");
        r = -ENOTCONN;
        /* Its own backoff decides when it tries again: at most 5 s. */
        for (int64_t until = clock_now_ns(CLOCK_MONOTONIC) + INT64_C(8000000000);
             r < 0 && clock_now_ns(CLOCK_MONOTONIC) < until;) {
                r = domain_present_ops.sample_burst(d, s, BURST, &n);
                if (r < 0)
                        present_run_until(d, clock_now_ns(CLOCK_MONOTONIC) + 50000000);
        }
        domain_present_ops.status(d, &st);
        ok(r == 0 && st.generation == generation + 1, "samples again, a new generation");
        domain_present_ops.close(d);
        xvfb_stop(&x);
}

int main(void) {
        const X11Config none = { .display = NULL };
        DomainInfo infos[4];
        size_t n = 1;
        Xvfb x = {};

        tap_require_program("Xvfb", "xvfb");

        unsetenv("DISPLAY");
        ok(domain_present_ops.enumerate(&none, infos, 4, &n) == 0 && n == 0, "no display: lists nothing");
        ok(xvfb_start(-1, &x) == 0, "Xvfb started on %s", x.name);
        if (x.pid > 0) {
                test_live(x.name);
                xvfb_stop(&x);
        }
        test_restart();
        return done_testing();
}
