/* SPDX-License-Identifier: MIT */

/* Offline as right as live, on a real export: timeconvd with Xvfb, its ExportSnapshots loaded
 * back (libtimeconv), and every ordered pair of the exported domains converted live (Convert)
 * and offline (DRIFT and NEAREST) at a value of now, at the values around each wrap (x11's
 * 2^32 - 1 and 0) and in x11_us's unreduced form (V + 2^32 x 1000, as mutter sends it). Offline
 * must decode as live does (the unreduced form is V, offline as live), and the two answers must
 * meet within their bounds; x11 >= 2^32 is refused live naming x11, offline as out of range.
 * usage: test-x11-offline TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "timeconv.h"
#include "x11-bus.h"
#include "x11-tap.h"
#include "xvfb.h"

#define WAIT_MS 20000
#define TWO32 (INT64_C(1) << 32)

static bool is_calibrated(const X11BusDomain *d, void *userdata) {
        return d->available && d->last_calibrated_ns > 0;
}

static int export_json(sd_bus *bus, char **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *json;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ExportSnapshots", NULL,
                               &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &json);
        if (r < 0)
                return r;
        *ret = strdup(json);
        return *ret ? 0 : -ENOMEM;
}

/* An export whose snapshots hold x11 at least twice (the daemon takes one a tick): waits on the
 * bus between tries, never sleeps. */
static int export_with_x11(sd_bus *bus, char **ret) {
        for (int i = 0; i < 200; i++) {
                char *json = NULL, *p;
                size_t n = 0;

                if (export_json(bus, &json) < 0)
                        return -EIO;
                for (p = json; (p = strstr(p, "\"domain\":\"x11\"")); p++)
                        n++;
                if (n >= 2) {
                        *ret = json;
                        return 0;
                }
                free(json);
                (void) sd_bus_wait(bus, 100000);
                (void) sd_bus_process(bus, NULL);
        }
        return -ETIMEDOUT;
}

typedef struct Tally {
        size_t compared, apart, live_failed, offline_failed, unreduced_differ;
} Tally;

static void compare(sd_bus *bus, const struct timeconv_snapshots *s, const char *from, const char *to, int64_t value,
                    const char *what, Tally *t) {
        int64_t live = 0, off = 0, off_unc = 0;
        uint64_t live_unc = 0;
        int r;

        r = clock_convert(bus, from, to, value, NULL, &live, &live_unc);
        if (r < 0) {
                if (t->live_failed++ < 3)
                        diag("live %s %s %" PRId64 " -> %s: %s", what, from, value, to, strerror(-r));
                return;
        }
        for (int mode = 0; mode < 2; mode++) {
                __int128 d;

                r = timeconv_snapshots_convert(s, mode, from, to, value, &off, &off_unc);
                if (r < 0) {
                        if (t->offline_failed++ < 3)
                                diag("offline %s %s %" PRId64 " -> %s: %s", what, from, value, to,
                                     timeconv_strerror(r));
                        continue;
                }
                t->compared++;
                /* in to's unit: compare the wire forms where they are close, through their ns where a
                 * unit is ms or us (a count of 1 is 1e6 or 1e3 ns) */
                d = (__int128) live - off;
                if (strcmp(to, "x11") == 0)
                        d *= 1000000;
                else if (strcmp(to, "x11_us") == 0)
                        d *= 1000;
                if ((d < 0 ? -d : d) > (__int128) live_unc + off_unc + 2000000) {
                        if (t->apart++ < 5)
                                diag("%s %s %" PRId64 " -> %s: live %" PRId64 " +-%" PRIu64 ", offline (%s) %" PRId64
                                     " +-%" PRId64, what, from, value, to, live, live_unc, mode ? "drift" : "nearest",
                                     off, off_unc);
                }
        }
}

static void test_pairs(sd_bus *bus, const struct timeconv_snapshots *s) {
        size_t n = timeconv_snapshots_count_domains(s);
        Tally t = {};

        for (size_t i = 0; i < n; i++) {
                const char *from = timeconv_snapshots_domain_name(s, i);
                int64_t now = 0, values[3];
                uint64_t unc;
                size_t n_values = 1;

                if (clock_now(bus, from, NULL, &now, &unc) < 0)
                        continue;
                values[0] = now;
                if (strcmp(from, "x11") == 0) {
                        values[n_values++] = TWO32 - 1;         /* the last ms before the wrap: the past one */
                        values[n_values++] = 0;                 /* and the first after it */
                } else if (strcmp(from, "x11_us") == 0)
                        values[n_values++] = now + TWO32 * 1000;    /* mutter's unreduced form */
                for (size_t j = 0; j < n; j++) {
                        const char *to = timeconv_snapshots_domain_name(s, j);

                        if (i == j)
                                continue;
                        for (size_t k = 0; k < n_values; k++)
                                compare(bus, s, from, to, values[k], k == 0 ? "now" : "wrap", &t);
                }
        }
        diag("%zu offline answers compared with live ones", t.compared);
        ok(t.compared > 0 && t.live_failed == 0 && t.offline_failed == 0,
           "every pair answers live and offline (%zu live, %zu offline failed)", t.live_failed, t.offline_failed);
        is_int(t.apart, 0, "live and offline answers meet within their bounds, around each wrap too");
}

/* The unreduced form is the same X time as its reduced one: offline answers it exactly as it
 * answers the reduced value, as live does. */
static void test_unreduced(sd_bus *bus, const struct timeconv_snapshots *s) {
        int64_t now = 0, a = 0, b = 0, ua = 0, ub = 0, la = 0, lb = 0;
        uint64_t unc, lua = 0, lub = 0;
        bool same = true;

        if (clock_now(bus, "x11_us", NULL, &now, &unc) < 0) {
                ok(false, "x11_us now");
                return;
        }
        for (int mode = 0; mode < 2; mode++)
                same &= timeconv_snapshots_convert(s, mode, "x11_us", "monotonic", now, &a, &ua) == 0 &&
                        timeconv_snapshots_convert(s, mode, "x11_us", "monotonic", now + TWO32 * 1000, &b, &ub) == 0 &&
                        a == b && ua == ub;
        ok(same, "offline: x11_us V + 2^32 x 1000 is V (%" PRId64 " +-%" PRId64 ")", a, ua);
        same = clock_convert(bus, "x11_us", "monotonic", now, NULL, &la, &lua) == 0 &&
               clock_convert(bus, "x11_us", "monotonic", now + TWO32 * 1000, NULL, &lb, &lub) == 0 && la == lb;
        ok(same, "live: the same (%" PRId64 " +-%" PRIu64 ")", la, lua);
        ok(llabs(a - la) <= ua + (int64_t) lua, "and the two meet");
}

/* Between two snapshots, the real export's DRIFT answer monotonic -> x11_us is within 2x of what
 * live answers for the same instant (+ 2 us: each side rounds to whole us, and the X time is
 * whole ms below that). */
static void test_between(sd_bus *bus, const struct timeconv_snapshots *s, const char *json) {
        int64_t m[2] = { 0, 0 }, mid, off = 0, off_unc = 0, live = 0;
        uint64_t live_unc = 0;
        const char *p = json;
        int found = 0;

        /* the last two snapshots' monotonic readings (snapshots of x11_us carry monotonic too) */
        while ((p = strstr(p, "{\"domain\":\"monotonic\",\"ts\":"))) {
                m[0] = m[1];
                m[1] = strtoll(p + strlen("{\"domain\":\"monotonic\",\"ts\":"), NULL, 10);
                found++;
                p++;
        }
        mid = m[0] + (m[1] - m[0]) / 2;
        ok(found >= 2 && m[1] > m[0], "two snapshots %" PRId64 " ns apart", m[1] - m[0]);
        found = timeconv_snapshots_convert(s, TIMECONV_MODE_DRIFT, "monotonic", "x11_us", mid, &off, &off_unc) == 0 &&
                clock_convert(bus, "monotonic", "x11_us", mid, NULL, &live, &live_unc) == 0;
        ok(found, "monotonic -> x11_us between them: offline %" PRId64 " +-%" PRId64 ", live %" PRId64 " +-%" PRIu64,
           off, off_unc, live, live_unc);
        ok(off_unc <= 2 * (int64_t) live_unc + 2000, "offline within 2x of live there");
        ok(llabs(off - live) * 1000 <= off_unc + (int64_t) live_unc + 2000, "and the two meet");
}

static void test_out_of_range(sd_bus *bus, const struct timeconv_snapshots *s) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t v;
        uint64_t u;
        int r;

        r = clock_convert(bus, "x11", "monotonic", TWO32, &e, &v, &u);
        ok(r < 0 && sd_bus_error_has_name(&e, BUS_ERROR_OUT_OF_RANGE) && e.message && strstr(e.message, "'x11'") &&
           !strstr(e.message, "'monotonic'"), "live x11 2^32: OutOfRange naming x11 (%s)", e.message ? e.message : "");
        sd_bus_error_free(&e);
        is_int(timeconv_snapshots_convert(s, TIMECONV_MODE_DRIFT, "x11", "monotonic", TWO32, &v, &(int64_t) { 0 }),
               -ERANGE, "offline x11 2^32: out of range");
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error error = {};
        char *json = NULL;
        Xvfb x = {};

        tap_args(argc, argv, 1, "TIMECONVD");
        is_int(x11_tap_start(argv[1], &x, &h, &bus), 0, "connected");
        if (tap_failed_)
                return done_testing();
        ok(x11_bus_wait_for(bus, "x11", is_calibrated, NULL, WAIT_MS, NULL) == 0, "x11 calibrated");
        ok(export_with_x11(bus, &json) == 0, "an export with two snapshots of x11");
        ok(json && timeconv_snapshots_load_buffer(json, strlen(json), &s, &error) == 0, "it loads %s", error.message);
        if (s) {
                test_pairs(bus, s);
                test_unreduced(bus, s);
                test_between(bus, s, json);
                test_out_of_range(bus, s);
        }
        timeconv_snapshots_free(s);
        free(json);
        xvfb_stop(&x);
        return done_testing();
}
