/* SPDX-License-Identifier: MIT */

/* The fake clock is the truth every other test trusts: check its truth function against
 * hand-computed values, and that every sample it produces is honest, quantized, wrapped and
 * unwrapped as documented, and reproducible from its seed. */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "clock-id.h"
#include "domain.h"
#include "fake.h"
#include "tap.h"
#include "units.h"

#define N_BURST 2000

static Domain *open_fake(const char *name, const FakeConfig *c) {
        Domain *d = NULL;
        int r = domain_fake_ops.open(name, c, &d);

        if (r < 0)
                printf("# open %s: %s\n", name, strerror(-r));
        return d;
}

static void test_truth(void) {
        static const FakeStep steps[] = {
                { 3000, -200 },         /* given out of order: open sorts them */
                { 1000, 500 },
        };
        static const struct {
                int64_t offset_ns;
                double rate_ppm;
                size_t n_steps;
                int64_t r_ns;
                double want_ns;
        } table[] = {
                { 0,     0,    0, 0,                  0 },
                { 1000,  0,    0, 5000,               6000 },
                { 0,     100,  0, 1000000000,         1000100000 },
                { -7,    -50,  0, 2000000000,         2000000000 - 100000 - 7 },
                { 0,     0.5,  0, 3,                  3.0000015 },
                { 0,     0,    2, 999,                999 },
                { 0,     0,    2, 1000,               1500 },
                { 0,     0,    2, 2999,               3499 },
                { 0,     0,    2, 3000,               3300 },
                { 10,    1000, 2, 1000000,            10 + 1000000 + 1000 + 300 },
                { 0,     0,    2, -5000,              -5000 },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                FakeConfig c = {
                        .offset_ns = table[i].offset_ns,
                        .rate_ppm = table[i].rate_ppm,
                        .steps = table[i].n_steps ? steps : NULL,
                        .n_steps = table[i].n_steps,
                };
                Domain *d = open_fake("truth", &c);
                double got = fake_truth_ns(d, table[i].r_ns);

                ok(d && fabs(got - table[i].want_ns) < 1e-6, "truth #%zu at r=%" PRId64 ": %.7f == %.7f",
                   i, table[i].r_ns, got, table[i].want_ns);
                domain_fake_ops.close(d);
        }
        ok(isnan(fake_truth_ns(NULL, 0)), "truth of no domain is NaN");
}

/* Every box must meet the truth line inside its bracket (the read instant is somewhere in
 * [r0, r1]); with a zero-width bracket the read instant is r0 and the check is exact. */
static void check_honest(const char *what, const FakeConfig *c) {
        Sample s[N_BURST];
        size_t n = 0;
        unsigned bad = 0, bad_width = 0;
        double period = c->unit.period_ns > 0 ? c->unit.period_ns : 1;
        Domain *d = open_fake(what, c);
        int r;

        r = d ? domain_fake_ops.sample_burst(d, s, N_BURST, &n) : -EINVAL;
        is_int(r, 0, "sample_burst");
        is_int(n, N_BURST, "burst is full");
        for (size_t i = 0; i < n; i++) {
                double t0 = fake_truth_ns(d, s[i].r0_ns), t1 = fake_truth_ns(d, s[i].r1_ns);
                int64_t w = s[i].x_hi_ns - s[i].x_lo_ns;

                if ((s[i].r0_ns > s[i].r1_ns || s[i].x_lo_ns > s[i].x_hi_ns ||
                     (double) s[i].x_lo_ns > t1 || (double) s[i].x_hi_ns < t0) && bad++ == 0)
                        diag("first bad sample %zu: r [%" PRId64 ", %" PRId64 "] x [%" PRId64 ", %" PRId64
                             "] truth [%.1f, %.1f]", i, s[i].r0_ns, s[i].r1_ns, s[i].x_lo_ns, s[i].x_hi_ns, t0, t1);
                /* Outward rounding to whole ns adds up to 2 ns to a non-integral period. */
                if (c->unit.truncates ? (double) w < period || (double) w > period + 2 : (double) w > period / 2 + 2)
                        bad_width++;
        }
        ok(bad == 0, "%s: every box meets the truth (%u bad)", what, bad);
        ok(bad_width == 0, "%s: box widths match the unit (%u bad)", what, bad_width);
        domain_fake_ops.close(d);
}

static void test_honest(void) {
        const DomainUnit gpu = { 52.083333, 36, false, UNIT_ENCODING_PLAIN };
        const DomainUnit gpu_trunc = { 38.461538, 40, true, UNIT_ENCODING_PLAIN };
        const DomainUnit us_rounding = { 1000, 0, false, UNIT_ENCODING_PLAIN };

        check_honest("ns exact", &(FakeConfig) { .offset_ns = 12345, .seed = 1 });
        check_honest("ns drift", &(FakeConfig) { .offset_ns = -99, .rate_ppm = 37.5, .deviation_max_ns = 800,
                                                 .interval_ns = 1000000, .r_start_ns = 5000000000, .seed = 2 });
        check_honest("ns drift point", &(FakeConfig) { .rate_ppm = -12.25, .interval_ns = 777777, .seed = 3 });
        check_honest("x11 ms", &(FakeConfig) { .unit = UNIT_MS_X11, .offset_ns = 3333333, .rate_ppm = 5,
                                               .deviation_min_ns = 5000, .deviation_max_ns = 20000,
                                               .interval_ns = 250000, .seed = 4 });
        check_honest("x11 us", &(FakeConfig) { .unit = UNIT_US_X11, .rate_ppm = -3, .deviation_max_ns = 30000,
                                               .interval_ns = 10000000, .r_start_ns = INT64_C(4294967000) * 1000000,
                                               .seed = 5 });
        check_honest("gpu rounding", &(FakeConfig) { .unit = gpu, .offset_ns = 1000000007, .rate_ppm = 80,
                                                     .deviation_max_ns = 3000, .interval_ns = 100000, .seed = 6 });
        check_honest("gpu truncating", &(FakeConfig) { .unit = gpu_trunc, .rate_ppm = -41, .interval_ns = 33333,
                                                       .seed = 7 });
        check_honest("us rounding", &(FakeConfig) { .unit = us_rounding, .rate_ppm = 2, .deviation_max_ns = 100,
                                                    .interval_ns = 12345, .seed = 8 });
}

static void test_truncation(void) {
        FakeConfig c = { .unit = UNIT_MS_X11, .offset_ns = 1234567890, .interval_ns = 400000 };
        Sample s[4];
        size_t n = 0;
        int64_t wire = -1;
        Domain *d = open_fake("x11", &c);

        is_int(fake_read_at(d, 0, &wire), 0, "read_at");
        is_int(wire, 1234, "1234.567890 ms reads 1234");
        is_int(domain_fake_ops.sample_burst(d, s, 4, &n), 0, "sample_burst");
        /* truth at 0, 0.4, 0.8, 1.2 ms after 1234.56789 ms */
        is_int(s[0].x_lo_ns, 1234000000, "sample 0 lo");
        is_int(s[0].x_hi_ns, 1235000000, "sample 0 hi: lo + 1 ms");
        is_int(s[1].x_lo_ns, 1234000000, "sample 1 still 1234 ms");
        is_int(s[2].x_lo_ns, 1235000000, "sample 2 ticked to 1235 ms");
        is_int(s[3].x_lo_ns, 1235000000, "sample 3 1235 ms");
        is_int(domain_fake_ops.info(d)->resolution_ns, 1000000, "resolution is the period");
        domain_fake_ops.close(d);
}

static void test_wrap(void) {
        /* Starts 5 ms before the 32-bit ms counter wraps; one sample per ms. */
        const int64_t wrap_ns = (INT64_C(1) << 32) * 1000000;
        FakeConfig c = { .unit = UNIT_MS_X11, .offset_ns = wrap_ns - 5000000 + 500000, .interval_ns = 1000000 };
        Sample s[12];
        size_t n = 0;
        int64_t wire = -1;
        bool steady = true;
        Domain *d = open_fake("x11", &c);

        is_int(fake_read_at(d, 0, &wire), 0, "read_at before the wrap");
        is_int(wire, 0xffffffffLL - 4, "wire value just before the wrap");
        is_int(fake_read_at(d, 5000000, &wire), 0, "read_at after the wrap");
        is_int(wire, 0, "wire value wrapped to 0");
        is_int(fake_read_at(d, 8000000, &wire), 0, "read_at later");
        is_int(wire, 3, "wire value 3 after the wrap");

        is_int(domain_fake_ops.sample_burst(d, s, 12, &n), 0, "sample_burst across the wrap");
        for (size_t i = 0; i < n; i++)
                if (s[i].x_lo_ns != wrap_ns - 5000000 + (int64_t) i * 1000000)
                        steady = false;
        ok(steady, "unwrapped samples continue past 2^32 ms");
        ok(s[11].x_lo_ns > wrap_ns, "the last sample is beyond the wrap, unwrapped");
        domain_fake_ops.close(d);

        /* Sampled less often than half the wrap, the fake picks the wrong era, as a real
         * source would: an 8-bit ms counter wraps every 256 ms, samples come every 200 ms. */
        c = (FakeConfig) { .unit = { 1e6, 8, true, UNIT_ENCODING_PLAIN }, .interval_ns = 200000000 };
        d = open_fake("short", &c);
        is_int(domain_fake_ops.sample_burst(d, s, 2, &n), 0, "sample_burst, sparse");
        is_int(s[0].x_lo_ns, 0, "first sample in era 0");
        is_int(s[1].x_lo_ns, -56000000, "200 ms later unwraps to -56 ms, like a real source");
        domain_fake_ops.close(d);
}

static void test_determinism(void) {
        FakeConfig c = { .rate_ppm = 20, .deviation_min_ns = 100, .deviation_max_ns = 5000,
                         .outlier_probability = 0.05, .outlier_max_ns = 500000, .interval_ns = 1000, .seed = 42 };
        Sample a[256], b[256];
        size_t na = 0, nb = 0;
        Domain *d1 = open_fake("a", &c), *d2 = open_fake("b", &c), *d3;

        domain_fake_ops.sample_burst(d1, a, 256, &na);
        domain_fake_ops.sample_burst(d2, b, 256, &nb);
        ok(na == 256 && nb == 256 && memcmp(a, b, sizeof(a)) == 0, "same seed, same samples");

        c.seed = 43;
        d3 = open_fake("c", &c);
        domain_fake_ops.sample_burst(d3, b, 256, &nb);
        ok(memcmp(a, b, sizeof(a)) != 0, "another seed, other samples");

        domain_fake_ops.close(d1);
        domain_fake_ops.close(d2);
        domain_fake_ops.close(d3);
}

static void test_deviation(void) {
        FakeConfig c = { .deviation_min_ns = 200, .deviation_max_ns = 900, .outlier_probability = 0.1,
                         .outlier_max_ns = 100000, .interval_ns = 50, .r_start_ns = 1000, .seed = 9 };
        Sample s[N_BURST];
        size_t n = 0, outliers = 0;
        bool in_range = true, forward = true;
        Domain *d = open_fake("dev", &c);

        domain_fake_ops.sample_burst(d, s, N_BURST, &n);
        is_int(s[0].r0_ns, 1000, "first sample starts at r_start");
        for (size_t i = 0; i < n; i++) {
                int64_t dev = sample_deviation_ns(&s[i]);

                if (dev < 200 || dev > 100000)
                        in_range = false;
                if (dev > 900)
                        outliers++;
                if (i > 0 && s[i].r0_ns != s[i - 1].r1_ns + 50)
                        forward = false;
        }
        ok(in_range, "deviations within [min, outlier_max]");
        ok(outliers > N_BURST / 20 && outliers < N_BURST * 3 / 20, "about 10%% outliers (%zu)", outliers);
        ok(forward, "each sample starts interval_ns after the last ended");
        is_int(fake_now_ns(d), s[n - 1].r1_ns + 50, "now is the next sample's r0");
        fake_advance(d, 1000000);
        is_int(fake_now_ns(d), s[n - 1].r1_ns + 50 + 1000000, "advance moves now forward");
        fake_advance(d, -5000);
        is_int(fake_now_ns(d), s[n - 1].r1_ns + 50 + 1000000, "advance never moves back");
        domain_fake_ops.close(d);
}

static void test_steps(void) {
        const FakeStep steps[] = { { 10500, 1000000 }, { 20000, -300 } };
        FakeConfig c = { .offset_ns = 7, .interval_ns = 1000, .steps = steps, .n_steps = 2 };
        Sample s[30];
        size_t n = 0;
        bool right = true;
        Domain *d = open_fake("steps", &c);

        ok(!domain_fake_ops.info(d)->monotonic, "a backward step makes the domain non-monotonic");
        domain_fake_ops.sample_burst(d, s, 30, &n);
        is_int(n, 30, "30 samples");
        for (size_t i = 0; i < n; i++) {
                int64_t r = s[i].r0_ns, want = 7 + r + (r >= 10500 ? 1000000 : 0) + (r >= 20000 ? -300 : 0);

                if (s[i].x_lo_ns != want || s[i].x_hi_ns != want)
                        right = false;
        }
        ok(right, "steps appear exactly at their scripted reference time");
        is_int(s[10].x_lo_ns - s[10].r0_ns, 7, "r = 10000: before the step");
        is_int(s[11].x_lo_ns - s[11].r0_ns, 1000007, "r = 11000: after the step");
        domain_fake_ops.close(d);
}

static void test_api(void) {
        const FakeStep step = { 0, 1 };
        DomainInfo infos[4];
        size_t n = 99;
        Domain *d = NULL;
        int64_t wire;

        is_int(domain_fake_ops.enumerate(NULL, infos, 4, &n), 0, "enumerate");
        ok(n == 1 && strcmp(infos[0].name, "fake") == 0, "enumerate lists the fake");
        is_int(domain_fake_ops.open("any name", NULL, &d), 0, "open with no config");
        ok(d && strcmp(domain_fake_ops.info(d)->name, "any name") == 0, "info has the name");
        ok(d && domain_fake_ops.info(d)->perfetto_id == clock_id_for_name("any name"), "perfetto id from the name");
        ok(d && domain_fake_ops.info(d)->monotonic, "no steps: monotonic");
        ok(d && domain_fake_ops.info(d)->unit.period_ns == 1, "default unit is ns");
        is_int(domain_fake_ops.watch_fd(d), -EOPNOTSUPP, "no fd to watch");
        is_int(fake_read_at(d, 77, &wire), 0, "read_at, ideal clock");
        is_int(wire, 77, "the ideal clock reads the reference");
        ok(domain_fake_ops.close(d) == NULL, "close returns NULL");
        ok(domain_fake_ops.close(NULL) == NULL, "close(NULL)");

        d = NULL;
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .deviation_min_ns = 10, .deviation_max_ns = 5 }, &d),
               -EINVAL, "max deviation below min");
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .rate_ppm = -1e6 }, &d), -EINVAL, "rate -1e6 ppm");
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .rate_ppm = NAN }, &d), -EINVAL, "NaN rate");
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .outlier_probability = 1.5 }, &d), -EINVAL,
               "outlier probability above 1");
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .unit = { -1, 0, false, UNIT_ENCODING_PLAIN } }, &d),
               -EINVAL, "negative period");
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .n_steps = 1 }, &d), -EINVAL, "steps missing");
        is_int(domain_fake_ops.open("", &(FakeConfig) { .steps = &step, .n_steps = 1 }, &d), -EINVAL, "empty name");
        is_int(domain_fake_ops.open("x", &(FakeConfig) { .interval_ns = -1 }, &d), -EINVAL, "negative interval");
        ok(d == NULL, "a failed open leaves ret alone");
}

int main(void) {
        test_truth();
        test_honest();
        test_truncation();
        test_wrap();
        test_determinism();
        test_deviation();
        test_steps();
        test_api();
        return done_testing();
}
