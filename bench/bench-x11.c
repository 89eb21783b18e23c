/* SPDX-License-Identifier: MIT */

/* The X server clock against a private Xvfb: the probe round trip (the floor, measured here with
 * the daemon's own probe code), the bound of a --x11-tracked daemon one second after it is ready,
 * the error of monotonic -> x11_us in identity mode, and the daemon's CPU per probe.
 *
 * The targets are properties a loaded machine cannot flip: the tracked bound holds the truth
 * (Xvfb's X time is CLOCK_MONOTONIC in ms) in every conversion, and identity mode is exact.
 * The bound's size against the round trip moves with load (1.1 to 2.65 seen): a figure only.
 * usage: bench-x11 TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "clock-client.h"
#include "harness.h"
#include "x11-bus.h"
#include "x11-conn.h"
#include "xtime.h"
#include "xvfb.h"

#define FLOOR_PROBES 1000
#define IDENTITY_CONVERSIONS 2000
#define TRACKED_CONVERSIONS 500
#define WAIT_MS 20000

typedef struct Figures {
        int64_t rtt_min_ns, rtt_p50_ns, cpu_floor_ns;
        int64_t bound_ns, bound_age_ns, daemon_rtt_min_ns, probe_cpu_ns;
        int64_t identity_error_ns;
        size_t identity_conversions;
        size_t tracked_conversions, tracked_outside;
        double tracked_error_over_bound_max;
} Figures;

static int fail(const char *stage, int r) {
        fprintf(stderr, "bench-x11: %s: %s\n", stage, strerror(r < 0 ? -r : r));
        return 1;
}

/* The floor: back-to-back probes, as x11.c takes them but without waiting for a phase. */
static int measure_floor(const char *display, Figures *f) {
        static int64_t rtt[FLOOR_PROBES];
        int64_t cpu_ns = 0;
        X11Conn c = {};
        int r;

        r = x11_conn_open(&c, display, clock_now_ns(CLOCK_MONOTONIC) + INT64_C(5000000000));
        if (r < 0)
                return r;
        for (size_t i = 0; i < FLOOR_PROBES; i++) {
                int64_t cpu0 = clock_now_ns(CLOCK_THREAD_CPUTIME_ID);
                X11Probe p;

                r = x11_conn_probe(&c, clock_now_ns(CLOCK_MONOTONIC) + INT64_C(1000000000), &p);
                if (r < 0)
                        break;
                cpu_ns += clock_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
                rtt[i] = p.raw1_ns - p.raw0_ns;
        }
        x11_conn_close(&c);
        if (r < 0)
                return r;
        qsort(rtt, FLOOR_PROBES, sizeof(int64_t), bench_cmp_i64);
        f->rtt_min_ns = rtt[0];
        f->rtt_p50_ns = rtt[FLOOR_PROBES / 2];
        f->cpu_floor_ns = cpu_ns / FLOOR_PROBES;
        return 0;
}

static bool calibrated_after(const X11BusDomain *d, void *userdata) {
        return d->available && d->last_calibrated_ns >= *(const int64_t *) userdata;
}

static bool is_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

/* A daemon forced to track: the bound of x11 right after the burst one second after ready. */
static int measure_tracked(const char *daemon, const char *display, Figures *f) {
        const char *args[] = { "--display", display, "--x11-tracked", "--no-gpu", NULL };
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int64_t after_ns;
        X11BusDomain d;
        int r;

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_start_daemon(h, daemon, args, HARNESS_READY_TIMEOUT_MS);
        if (r < 0)
                return r;
        /* The schedule bursts at 0, 10 ms, 100 ms and 1 s: wait for the one at 1 s. */
        after_ns = clock_now_ns(CLOCK_MONOTONIC) + INT64_C(950000000);
        r = harness_connect(h, &bus);
        if (r >= 0)
                r = x11_bus_wait_for(bus, "x11", calibrated_after, &after_ns, WAIT_MS, &d);
        if (r < 0)
                return r;
        f->bound_ns = (int64_t) d.uncertainty_ns;
        f->bound_age_ns = clock_now_ns(CLOCK_MONOTONIC) - d.last_calibrated_ns;
        f->daemon_rtt_min_ns = atoll(d.rtt_min_ns);
        f->probe_cpu_ns = atoll(d.probe_cpu_ns);

        /* Whether the bound holds: monotonic_raw -> x11_us against CLOCK_MONOTONIC read around it
         * (the X time truncates to 1 us: the truth's own interval). */
        for (size_t i = 0; i < TRACKED_CONVERSIONS; i++) {
                int64_t v, dec, mid_ns, err_ns;
                uint64_t unc;
                Bracket b;

                bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &b);
                r = clock_convert(bus, "monotonic_raw", "x11_us", b.from_ns, NULL, &v, &unc);
                if (r >= 0)
                        r = xtime_decode_us((uint64_t) v, b.to_lo_ns / 1000, &dec);
                if (r < 0)
                        return r;
                f->tracked_conversions++;
                if (!bracket_holds(dec * 1000, unc + 1000, b.to_lo_ns, b.to_hi_ns))
                        f->tracked_outside++;
                mid_ns = b.to_lo_ns + (b.to_hi_ns - b.to_lo_ns) / 2;
                err_ns = llabs(dec * 1000 - mid_ns);
                if ((double) err_ns / (double) (unc + 1000) > f->tracked_error_over_bound_max)
                        f->tracked_error_over_bound_max = (double) err_ns / (double) (unc + 1000);
        }
        return 0;
}

/* A daemon left to judge: once it says identity, monotonic -> x11_us against the encoding. */
static int measure_identity(const char *daemon, const char *display, Figures *f) {
        const char *args[] = { "--display", display, "--no-gpu", NULL };
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        X11BusDomain d;
        int r;

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_start_daemon(h, daemon, args, HARNESS_READY_TIMEOUT_MS);
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = x11_bus_wait_for(bus, "x11", is_identity, NULL, WAIT_MS, &d);
        if (r < 0)
                return r;

        f->identity_error_ns = 0;
        for (size_t i = 0; i < IDENTITY_CONVERSIONS; i++) {
                int64_t t = clock_now_ns(CLOCK_MONOTONIC) - (int64_t) (i * 499979) % INT64_C(1000000000), v, dec, e;
                uint64_t unc;

                r = clock_convert(bus, "monotonic", "x11_us", t, NULL, &v, &unc);
                if (r < 0)
                        return r;
                r = xtime_decode_us((uint64_t) v, t / 1000, &dec);
                if (r < 0)
                        return r;
                /* The truth's encoding is floor(t / 1 us): anything else is an error. */
                e = llabs(dec - t / 1000) * 1000;
                if (e > f->identity_error_ns)
                        f->identity_error_ns = e;
                f->identity_conversions++;
        }
        if (f->probe_cpu_ns <= 0)
                f->probe_cpu_ns = atoll(d.probe_cpu_ns);
        return 0;
}

int main(int argc, char *argv[]) {
        Figures f = {};
        Xvfb x = {};
        bool bound_holds, identity_ok;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: %s TIMECONVD\n", argv[0]);
                return 2;
        }
        r = xvfb_start(-1, &x);
        if (r < 0)
                return fail("Xvfb", r);
        r = measure_floor(x.name, &f);
        if (r < 0)
                return xvfb_stop(&x), fail("floor probes", r);
        r = measure_tracked(argv[1], x.name, &f);
        if (r < 0)
                return xvfb_stop(&x), fail("tracked daemon", r);
        r = measure_identity(argv[1], x.name, &f);
        if (r < 0)
                return xvfb_stop(&x), fail("identity daemon", r);
        xvfb_stop(&x);

        bound_holds = f.tracked_conversions == TRACKED_CONVERSIONS && f.tracked_outside == 0;
        identity_ok = f.identity_error_ns == 0;
        printf("{\n");
        printf("  \"x11_rtt_min_ns\": %" PRIi64 ",\n", f.rtt_min_ns);
        printf("  \"x11_rtt_p50_ns\": %" PRIi64 ",\n", f.rtt_p50_ns);
        printf("  \"x11_daemon_rtt_min_ns\": %" PRIi64 ",\n", f.daemon_rtt_min_ns);
        printf("  \"x11_bound_after_1s_ns\": %" PRIi64 ",\n", f.bound_ns);
        printf("  \"x11_bound_age_ns\": %" PRIi64 ",\n", f.bound_age_ns);
        printf("  \"x11_bound_over_rtt_min\": %.2f,\n", (double) f.bound_ns / (double) (f.rtt_min_ns ?: 1));
        printf("  \"x11_tracked_conversions\": %zu,\n", f.tracked_conversions);
        printf("  \"x11_tracked_outside_bound\": %zu,\n", f.tracked_outside);
        printf("  \"x11_tracked_error_over_bound_max\": %.3f,\n", f.tracked_error_over_bound_max);
        printf("  \"x11_identity_error_ns\": %" PRIi64 ",\n", f.identity_error_ns);
        printf("  \"x11_identity_conversions\": %zu,\n", f.identity_conversions);
        printf("  \"x11_probe_cpu_ns\": %" PRIi64 ",\n", f.probe_cpu_ns);
        printf("  \"x11_probe_cpu_floor_ns\": %" PRIi64 ",\n", f.cpu_floor_ns);
        printf("  \"x11_probe_cpu_over_floor\": %.2f,\n", (double) f.probe_cpu_ns / (double) (f.cpu_floor_ns ?: 1));
        printf("  \"targets\": {\n");
        printf("    \"x11_tracked_bound_holds\": %s,\n", bound_holds ? "true" : "false");
        printf("    \"x11_identity_error_zero\": %s\n", identity_ok ? "true" : "false");
        printf("  }\n}\n");
        return 0;
}
