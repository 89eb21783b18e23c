/* SPDX-License-Identifier: MIT */

/* timeconvd with a real Xvfb (-displayfd) on a private bus: ListDomains has msc in frames, its
 * rate is Xvfb's fake CRTC (1000000 / 60 = 16666 us a frame: 60.0024 Hz, present_fake.c) within
 * the bound, Convert("msc", "monotonic", msc_now + 10) holds the UST that our own
 * PresentNotifyMSC reports for that vblank, and --no-x11 leaves msc out. Xvfb's Present is a
 * timer, not a display's vblank: the verdict says "emulated" and why, and over several bursts its jitter is
 * never announced as a discontinuity and no answer goes backwards for a later msc.
 * usage: test-present-daemon TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "present-client.h"
#include "tap.h"
#include "x11-tap.h"
#include "xvfb.h"

#define WAIT_MS 20000
#define FAKE_HZ (1e6 / 16666)

typedef struct BusDomain {
        bool found, available;
        char unit[16];
        int64_t rate_ppb, last_calibrated_ns;
        uint64_t rate_uncertainty_ppb;
        char refresh_interval_ns[32], next_vblank_ns[32], crtc[48], verdict[16], verdict_reason[160];
} BusDomain;

static int read_entry(sd_bus_message *m, const char *key, const char *contents, void *userdata) {
        BusDomain *d = userdata;
        const char *s;
        int b, r;

        if (strcmp(key, "available") == 0 && strcmp(contents, "b") == 0) {
                r = sd_bus_message_read(m, "v", "b", &b);
                d->available = b;
        } else if (strcmp(key, "rate_ppb") == 0 && strcmp(contents, "x") == 0)
                r = sd_bus_message_read(m, "v", "x", &d->rate_ppb);
        else if (strcmp(key, "rate_uncertainty_ppb") == 0 && strcmp(contents, "t") == 0)
                r = sd_bus_message_read(m, "v", "t", &d->rate_uncertainty_ppb);
        else if (strcmp(key, "last_calibrated_ns") == 0 && strcmp(contents, "x") == 0)
                r = sd_bus_message_read(m, "v", "x", &d->last_calibrated_ns);
        else if (strcmp(key, "refresh_interval_ns") == 0 && strcmp(contents, "d") == 0) {
                double v;

                /* Typed on the bus (d and x, as the XML lists them); kept as text here. */
                r = sd_bus_message_read(m, "v", "d", &v);
                if (r >= 0)
                        snprintf(d->refresh_interval_ns, sizeof(d->refresh_interval_ns), "%.0f", v);
        } else if (strcmp(key, "next_vblank_ns") == 0 && strcmp(contents, "x") == 0) {
                int64_t v;

                r = sd_bus_message_read(m, "v", "x", &v);
                if (r >= 0)
                        snprintf(d->next_vblank_ns, sizeof(d->next_vblank_ns), "%" PRIi64, v);
        } else if (strcmp(contents, "s") == 0) {
                r = sd_bus_message_read(m, "v", "s", &s);
                if (r >= 0 && strcmp(key, "crtc") == 0)
                        snprintf(d->crtc, sizeof(d->crtc), "%s", s);
                else if (r >= 0 && strcmp(key, "verdict") == 0)
                        snprintf(d->verdict, sizeof(d->verdict), "%s", s);
                else if (r >= 0 && strcmp(key, "verdict_reason") == 0)
                        snprintf(d->verdict_reason, sizeof(d->verdict_reason), "%s", s);
        } else
                r = sd_bus_message_skip(m, "v");
        return r;
}

/* name's ListDomains entry; ret->found false when there is none. */
static int bus_domain(sd_bus *bus, const char *name, BusDomain *ret) {
        BusDomain d = { .found = true };
        int r;

        r = clock_domain_properties(bus, name, read_entry, &d, d.unit, sizeof(d.unit));
        if (r == -ENOENT)
                d = (BusDomain) {};
        else if (r < 0)
                return r;
        *ret = d;
        return 0;
}

/* Re-reads name's entry (waiting on the bus in between, at most 50 ms) until it is calibrated. */
static int wait_calibrated(sd_bus *bus, const char *name, BusDomain *ret) {
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;

        while (clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                if (bus_domain(bus, name, ret) >= 0 && ret->found && ret->available && ret->last_calibrated_ns > 0)
                        return 0;
                while (sd_bus_process(bus, NULL) > 0)
                        ;
                (void) sd_bus_wait(bus, 50 * 1000);
        }
        return -ETIMEDOUT;
}

static void test_msc(sd_bus *bus, const char *display) {
        BusDomain d = {}, mono = {};
        PresentClient client;
        unsigned n_holds = 0, n_tried = 0;
        double hz, hz_bound;
        int64_t now;

        ok(wait_calibrated(bus, "msc", &d) == 0, "msc: listed, available, calibrated");
        ok(strcmp(d.unit, "frame") == 0, "its unit is the frame (%s)", d.unit);
        ok(wait_calibrated(bus, "monotonic", &mono) == 0, "monotonic calibrated");

        /* Against the reference, then through monotonic's rate to Xvfb's own clock. */
        hz = 60.0 * (1 + d.rate_ppb * 1e-9) / (1 + mono.rate_ppb * 1e-9);
        hz_bound = 60.0 * (double) (d.rate_uncertainty_ppb + mono.rate_uncertainty_ppb + 2) * 1e-9;
        ok(fabs(hz - FAKE_HZ) <= hz_bound, "the rate: %.5f Hz +- %.5f holds Xvfb's %.5f Hz", hz, hz_bound, FAKE_HZ);

        diag("crtc '%s', refresh_interval_ns '%s', next_vblank_ns '%s'", d.crtc, d.refresh_interval_ns,
             d.next_vblank_ns);
        now = clock_now_ns(CLOCK_MONOTONIC);
        ok(!d.refresh_interval_ns[0] || fabs(atof(d.refresh_interval_ns) - 16666000) < 100000,
           "refresh_interval_ns, when shown, is about 16.666 ms");
        ok(!d.next_vblank_ns[0] || llabs(atoll(d.next_vblank_ns) - now) < INT64_C(2000000000),
           "next_vblank_ns, when shown, is near");

        ok(present_client_open(&client, display) == 0, "a Present client of our own");
        /* A notify the loaded server answers late or for another frame tells nothing: up to 20
         * tries for 5 predictions, and every one made must hold. */
        for (int i = 0; i < 20 && n_tried < 5 && client.xcb; i++) {
                uint64_t ust, msc, ust10, msc10, unc;
                int64_t v;

                if (present_client_notify(&client, 0, 2000, &ust, &msc) < 0 ||
                    clock_convert(bus, "msc", "monotonic", (int64_t) msc + 10, NULL, &v, &unc) < 0 ||
                    present_client_notify(&client, msc + 10, 2000, &ust10, &msc10) < 0 || msc10 != msc + 10)
                        continue;
                n_tried++;
                n_holds += (uint64_t) llabs((int64_t) ust10 * 1000 + 500 - v) <= unc + 500;
                diag("Convert(msc, monotonic, %llu) = %lld +- %llu; Present reported %llu us",
                     (unsigned long long) msc + 10, (long long) v, (unsigned long long) unc,
                     (unsigned long long) ust10);
        }
        ok(n_tried == 5 && n_holds == n_tried, "%u of %u vblanks 10 frames ahead: the reported UST within Convert's bound",
           n_holds, n_tried);
        present_client_close(&client);
}

static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        unsigned *n = userdata;
        const char *domain;

        if (sd_bus_message_read(m, "s", &domain) >= 0 && strncmp(domain, "msc", 3) == 0) {
                diag("Discontinuity of %s", domain);
                (*n)++;
        }
        return 0;
}

/* Xvfb's Present is a timer: said, modelled on its grid, its jitter never a step. */
static void test_emulated(sd_bus *bus) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + INT64_C(90000000000), last_calibrated_ns = 0;
        int64_t prev_msc = -1, prev_ns = 0;
        unsigned n_discontinuities = 0, n_bursts = 0, n_backwards = 0, n_answers = 0;
        BusDomain d = {};

        ok(wait_calibrated(bus, "msc", &d) == 0 && strcmp(d.verdict, "emulated") == 0 &&
           strstr(d.verdict_reason, "timer"), "msc: verdict emulated, because %s", d.verdict_reason);
        ok(sd_bus_match_signal(bus, &slot, NULL, "/org/timeconv/Clock1", "org.timeconv.Clock1", "Discontinuity",
                               on_discontinuity, &n_discontinuities) >= 0, "watching Discontinuity");

        /* Eight bursts: each time msc calibrates anew, the next few vblanks convert in order, and
         * never before a vblank of an earlier msc converted before. */
        while (n_bursts < 8 && clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                int64_t msc_now, v;
                uint64_t unc;

                while (sd_bus_process(bus, NULL) > 0)
                        ;
                if (bus_domain(bus, "msc", &d) < 0 || !d.available || d.last_calibrated_ns == last_calibrated_ns) {
                        (void) sd_bus_wait(bus, 50 * 1000);
                        continue;
                }
                last_calibrated_ns = d.last_calibrated_ns;
                n_bursts++;
                if (clock_convert(bus, "monotonic", "msc", clock_now_ns(CLOCK_MONOTONIC), NULL, &msc_now, &unc) < 0)
                        continue;
                for (int64_t msc = msc_now - 2; msc <= msc_now + 3; msc++) {
                        if (clock_convert(bus, "msc", "monotonic", msc, NULL, &v, &unc) < 0)
                                continue;
                        n_answers++;
                        if ((msc > prev_msc && v <= prev_ns && prev_msc >= 0) || (msc < prev_msc && v >= prev_ns)) {
                                diag("msc %" PRIi64 " -> %" PRIi64 " ns after msc %" PRIi64 " -> %" PRIi64 " ns",
                                     msc, v, prev_msc, prev_ns);
                                n_backwards++;
                        }
                        prev_msc = msc;
                        prev_ns = v;
                }
        }
        while (sd_bus_process(bus, NULL) > 0)
                ;
        ok(n_bursts == 8, "8 bursts of msc (%u)", n_bursts);
        is_int(n_discontinuities, 0, "no Discontinuity for msc: the timer's jitter is not a step");
        ok(n_answers >= 40 && n_backwards == 0, "%u answers: a later msc always converts later (%u did not)",
           n_answers, n_backwards);
}

static void test_no_x11(const char *daemon, const char *display) {
        const char *args[] = { "--display", display, "--no-x11", NULL };
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        BusDomain d = { .found = true };

        if (harness_new_started(daemon, args, &h, &bus) < 0) {
                ok(false, "a daemon with --no-x11");
                return;
        }
        ok(bus_domain(bus, "msc", &d) == 0 && !d.found, "--no-x11: no msc");
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        Xvfb x = {};

        tap_args(argc, argv, 1, "TIMECONVD");
        is_int(x11_tap_start(argv[1], &x, &h, &bus), 0, "connected");
        if (bus) {
                test_msc(bus, x.name);
                test_emulated(bus);
        }
        test_no_x11(argv[1], x.name);
        xvfb_stop(&x);
        return done_testing();
}
