/* SPDX-License-Identifier: MIT */

/* The POSIX clocks on this machine, read for real: what is found, that every sample is a valid
 * bracket, that brackets are tight enough to be useful, and that the clocks relate as the kernel
 * says (boottime >= monotonic, a coarse clock lags by at most one tick). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock-id.h"
#include "domain.h"
#include "sample.h"
#include "tap.h"
#include "time-util.h"

#define N_BURST 256
#define SANE_DEVIATION_NS 1000000       /* generous: only catches a broken bracket */

static int cmp_int64(const void *a, const void *b) {
        const int64_t *x = a, *y = b;

        return (*x > *y) - (*x < *y);
}

static const DomainInfo *find(const DomainInfo *infos, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(infos[i].name, name) == 0)
                        return &infos[i];
        return NULL;
}

static void test_enumerate(DomainInfo *infos, size_t *ret_n) {
        static const struct {
                const char *name;
                uint32_t perfetto_id;
                bool monotonic;
        } known[] = {
                { "realtime",           CLOCK_ID_REALTIME,         false },
                { "monotonic",          CLOCK_ID_MONOTONIC,        true },
                { "monotonic_raw",      CLOCK_ID_MONOTONIC_RAW,    true },
                { "boottime",           CLOCK_ID_BOOTTIME,         true },
        };
        DomainInfo few[2];
        size_t n = 0, n_few = 0;

        is_int(domain_posix_ops.enumerate(NULL, infos, 16, &n), 0, "enumerate");
        ok(n >= 4 && n <= 7, "between 4 and 7 clocks (%zu)", n);
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
                const DomainInfo *info = find(infos, n, known[i].name);

                ok(info, "%s found", known[i].name);
                ok(info && info->perfetto_id == known[i].perfetto_id, "%s has perfetto id %u", known[i].name,
                   (unsigned) known[i].perfetto_id);
                ok(info && info->monotonic == known[i].monotonic, "%s monotonic flag", known[i].name);
        }
        for (size_t i = 0; i < n; i++) {
                ok(infos[i].resolution_ns >= 1 && infos[i].unit.period_ns == 1 && infos[i].unit.wrap_bits == 0,
                   "%s: resolution %" PRId64 " ns, unit ns", infos[i].name, infos[i].resolution_ns);
                ok(infos[i].perfetto_id == clock_id_for_name(infos[i].name), "%s: perfetto id %#x",
                   infos[i].name, (unsigned) infos[i].perfetto_id);
        }
        if (find(infos, n, "tai"))
                ok(!find(infos, n, "tai")->monotonic, "tai is not monotonic");

        is_int(domain_posix_ops.enumerate(NULL, few, 2, &n_few), 0, "enumerate into 2 slots");
        is_int(n_few, 2, "stops at n_max");
        is_int(domain_posix_ops.enumerate(NULL, NULL, 4, &n_few), -EINVAL, "no buffer");
        *ret_n = n;
}

/* Samples a clock: valid, ordered brackets of the documented width and a sane deviation. */
static void test_burst(const DomainInfo *info) {
        Sample s[N_BURST];
        int64_t dev[N_BURST];
        size_t n = 0;
        unsigned bad = 0, r_backwards = 0, x_backwards = 0;
        int64_t width = info->unit.truncates ? 0 : -1;
        Domain *d = NULL;

        is_int(domain_posix_ops.open(info->name, NULL, &d), 0, info->name);
        if (!d)
                return;
        ok(strcmp(domain_posix_ops.info(d)->name, info->name) == 0, "%s: info", info->name);
        is_int(domain_posix_ops.sample_burst(d, s, N_BURST, &n), 0, "sample_burst");
        is_int(n, N_BURST, "full burst");
        for (size_t i = 0; i < n; i++) {
                if (sample_validate(&s[i]) < 0 || s[i].r0_ns > s[i].r1_ns)
                        bad++;
                if (i > 0 && s[i].r0_ns < s[i - 1].r1_ns)
                        r_backwards++;
                if (i > 0 && info->monotonic && s[i].x_lo_ns < s[i - 1].x_lo_ns)
                        x_backwards++;
                if (strstr(info->name, "_coarse")) {
                        /* The lag of each reading: its own width, never below 0. */
                        if (i == 0 || s[i].x_hi_ns - s[i].x_lo_ns > width)
                                width = s[i].x_hi_ns - s[i].x_lo_ns;
                } else if (i == 0)
                        width = s[i].x_hi_ns - s[i].x_lo_ns;
                else if (width != s[i].x_hi_ns - s[i].x_lo_ns)
                        width = -1;
                dev[i] = sample_deviation_ns(&s[i]);
        }
        ok(bad == 0, "%s: every sample valid (%u bad)", info->name, bad);
        ok(r_backwards == 0, "%s: the reference never goes back (%u)", info->name, r_backwards);
        if (info->monotonic)
                ok(x_backwards == 0, "%s: a monotonic clock never goes back (%u)", info->name, x_backwards);
        if (strstr(info->name, "_coarse")) {
                ok(width >= 0, "coarse: box is [x, the fine clock after it] (widest %" PRId64 " ns: the lag then)",
                   width);
                is_int(info->lag_ns, 4 * info->resolution_ns, "coarse: conversions assume a lag of 4 ticks");
        } else
                is_int(width, 0, "box is a point");

        qsort(dev, n, sizeof(dev[0]), cmp_int64);
        diag("%s: deviation p50 %" PRId64 " ns, min %" PRId64 ", max %" PRId64, info->name, dev[n / 2], dev[0],
             dev[n - 1]);
        ok(dev[n / 2] < SANE_DEVIATION_NS, "%s: p50 deviation is sane", info->name);
        if (strcmp(info->name, "monotonic_raw") == 0)
                ok(dev[n - 1] == 0 && s[0].x_lo_ns == s[0].r0_ns, "the reference samples itself exactly");
        domain_posix_ops.close(d);
}

static int sample_one(const char *name, Sample *ret) {
        Domain *d = NULL;
        size_t n = 0;
        int r;

        r = domain_posix_ops.open(name, NULL, &d);
        if (r < 0)
                return r;
        r = domain_posix_ops.sample_burst(d, ret, 1, &n);
        domain_posix_ops.close(d);
        return r < 0 ? r : n == 1 ? 0 : -EIO;
}

/* Each sample pins offset = monotonic - raw to [x_lo - r1, x_hi - r0]; intersects a burst's. */
static int offset_range(Domain *d, Sample *s, int64_t *ret_lo, int64_t *ret_hi) {
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        size_t n = 0;
        int r;

        r = domain_posix_ops.sample_burst(d, s, N_BURST, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (s[i].x_lo_ns - s[i].r1_ns > lo)
                        lo = s[i].x_lo_ns - s[i].r1_ns;
                if (s[i].x_hi_ns - s[i].r0_ns < hi)
                        hi = s[i].x_hi_ns - s[i].r0_ns;
        }
        *ret_lo = lo;
        *ret_hi = hi;
        return 0;
}

static void test_relations(void) {
        const struct timespec pause = { 0, 10000000 };
        Sample mono[N_BURST], boot;
        Domain *d = NULL;
        int64_t lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0, t1, t2, slack_ns;

        /* NTP slews monotonic against raw by at most 500 ppm: a few ns over a burst, 5 µs over
         * 10 ms. Allow that plus 100 ns; a real inconsistency would be a broken bracket. */
        is_int(domain_posix_ops.open("monotonic", NULL, &d), 0, "open monotonic");
        t1 = clock_now_ns(CLOCK_MONOTONIC_RAW);
        is_int(offset_range(d, mono, &lo1, &hi1), 0, "burst 1");
        nanosleep(&pause, NULL);
        t2 = clock_now_ns(CLOCK_MONOTONIC_RAW);
        is_int(offset_range(d, mono, &lo2, &hi2), 0, "burst 2");
        slack_ns = (t2 - t1) / 2000 + 100;

        diag("monotonic - monotonic_raw in [%" PRId64 ", %" PRId64 "], then [%" PRId64 ", %" PRId64 "] ns",
             lo1, hi1, lo2, hi2);
        ok(lo1 <= hi1 + 100, "offsets within a burst agree (width %" PRId64 " ns)", hi1 - lo1);
        ok(lo2 <= hi2 + 100, "offsets within the next burst agree (width %" PRId64 " ns)", hi2 - lo2);
        ok(lo2 <= hi1 + slack_ns && lo1 <= hi2 + slack_ns, "the two bursts agree within %" PRId64 " ns",
           slack_ns);

        is_int(sample_one("boottime", &boot), 0, "sample boottime");
        ok(boot.x_lo_ns >= mono[N_BURST - 1].x_lo_ns, "boottime >= monotonic read before it");
        domain_posix_ops.close(d);
}

/* A coarse clock read between two fine reads is behind the first by at most its box (two
 * ticks) and never ahead of the second: its box overlaps [before, after]. */
static void test_coarse(const char *coarse, clockid_t fine, int64_t resolution_ns) {
        unsigned bad = 0;
        int64_t max_lag_ns = 0;
        Sample s;

        /* 50 ms: a dozen ticks at HZ=250, so the whole range of lags shows. */
        for (int64_t end_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) + 50000000;
             clock_now_ns(CLOCK_MONOTONIC_RAW) < end_ns;) {
                int64_t before = clock_now_ns(fine), after;

                if (sample_one(coarse, &s) < 0) {
                        bad++;
                        continue;
                }
                after = clock_now_ns(fine);
                if (s.x_hi_ns < before || s.x_lo_ns > after)
                        bad++;
                if (before - s.x_lo_ns > max_lag_ns)
                        max_lag_ns = before - s.x_lo_ns;
        }
        diag("%s: largest lag %" PRId64 " ns, %.2f ticks", coarse, max_lag_ns,
             (double) max_lag_ns / (double) resolution_ns);
        ok(bad == 0, "%s: box overlaps the fine clock's reads (%u bad)", coarse, bad);
}

int main(void) {
        DomainInfo infos[16];
        Domain *d = (Domain *) 1;
        size_t n = 0;

        test_enumerate(infos, &n);
        for (size_t i = 0; i < n; i++)
                test_burst(&infos[i]);
        test_relations();
        if (find(infos, n, "monotonic_coarse"))
                test_coarse("monotonic_coarse", CLOCK_MONOTONIC, find(infos, n, "monotonic_coarse")->resolution_ns);
        if (find(infos, n, "realtime_coarse"))
                test_coarse("realtime_coarse", CLOCK_REALTIME, find(infos, n, "realtime_coarse")->resolution_ns);

        is_int(domain_posix_ops.open("sundial", NULL, &d), -ENOENT, "unknown name");
        ok(d == (Domain *) 1, "a failed open leaves ret alone");
        is_int(domain_posix_ops.open(NULL, NULL, &d), -EINVAL, "no name");
        ok(domain_posix_ops.close(NULL) == NULL, "close(NULL)");

        d = NULL;
        is_int(domain_posix_ops.open("monotonic", NULL, &d), 0, "open monotonic");
        is_int(domain_posix_ops.watch_fd(d), -EOPNOTSUPP, "no fd to watch");
        is_int(domain_posix_ops.sample_burst(d, NULL, 0, &n), 0, "an empty burst");
        is_int(n, 0, "reads nothing");
        ok(domain_posix_ops.close(d) == NULL, "close returns NULL");
        return done_testing();
}
