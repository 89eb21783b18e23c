/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdint.h>

#include "burst.h"
#include "sample.h"
#include "tap.h"

#define INVALID INT64_MIN       /* a step whose sample has r1 < r0 */

/* One scripted read: an error, or a sample with this deviation. */
typedef struct Step {
        int error;
        int64_t deviation_ns;
} Step;

typedef struct Script {
        const Step *steps;
        size_t n_steps;
        unsigned n_calls;
} Script;

/* Each sample is tagged with the call that made it (in x_lo/x_hi), to check order and identity. */
static int script_read(void *userdata, Sample *ret) {
        Script *s = userdata;
        unsigned call = s->n_calls++;
        const Step *step;

        if (call >= s->n_steps)
                return -ENODATA;        /* read past the script: the tests below catch it */
        step = &s->steps[call];
        if (step->error < 0)
                return step->error;

        *ret = (Sample) {
                .r0_ns = 1000000 * (int64_t) call,
                .r1_ns = 1000000 * (int64_t) call +
                         (step->deviation_ns == INVALID ? -1 : step->deviation_ns),
                .x_lo_ns = call,
                .x_hi_ns = call,
        };
        return 0;
}

static Sample make_sample(int64_t deviation_ns, int64_t tag) {
        return (Sample) { .r0_ns = 100, .r1_ns = 100 + deviation_ns, .x_lo_ns = tag, .x_hi_ns = tag };
}

static void test_validate(void) {
        static const struct {
                Sample s;
                int want;
                const char *name;
        } cases[] = {
                { { 0, 0, 0, 0 }, 0, "all zero" },
                { { 10, 20, 5, 5 }, 0, "point reading" },
                { { 10, 20, 5, 6 }, 0, "interval reading" },
                { { 20, 10, 5, 5 }, -EINVAL, "r1 before r0" },
                { { 10, 20, 6, 5 }, -EINVAL, "x_hi below x_lo" },
                { { -5, -1, INT64_MIN, INT64_MIN }, 0, "negative times" },
                { { 0, INT64_MAX, 0, 0 }, 0, "deviation INT64_MAX" },
                { { -1, INT64_MAX, 0, 0 }, -EINVAL, "deviation INT64_MAX + 1" },
                { { INT64_MIN, INT64_MAX, 0, 0 }, -EINVAL, "deviation 2^64 - 1" },
                { { 0, 0, -1, INT64_MAX }, -EINVAL, "x width INT64_MAX + 1" },
                { { 0, 0, INT64_MIN, -1 }, 0, "x width INT64_MAX" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                is_int(sample_validate(&cases[i].s), cases[i].want, cases[i].name);
        is_int(sample_validate(NULL), -EINVAL, "sample_validate(NULL)");
}

static void test_select(void) {
        Sample s[] = {
                make_sample(5, 0), make_sample(3, 1), { 10, 5, 0, 0 }, make_sample(3, 3),
                make_sample(1, 4), make_sample(7, 5), { 0, 0, 9, 8 },
        };
        static const int64_t want_dev[] = { 1, 3, 3, 5, 7 };
        static const int64_t want_tag[] = { 4, 1, 3, 0, 5 };
        Sample copy[sizeof(s) / sizeof(s[0])];
        size_t n = 99;
        unsigned bad = 0;

        memcpy(copy, s, sizeof(s));
        is_int(burst_select(s, 7, 3, &n), 0, "select 3 of 7");
        is_int(n, 3, "keeps 3");
        for (size_t i = 0; i < 3; i++)
                if (sample_deviation_ns(&s[i]) != want_dev[i] || s[i].x_lo_ns != want_tag[i])
                        bad++;
        ok(bad == 0, "best 3 by deviation, equal ones in arrival order");

        memcpy(s, copy, sizeof(s));
        is_int(burst_select(s, 7, 100, &n), 0, "select up to 100 of 7");
        is_int(n, 5, "invalid samples dropped: 5 left");
        bad = 0;
        for (size_t i = 0; i < 5; i++)
                if (sample_deviation_ns(&s[i]) != want_dev[i] || s[i].x_lo_ns != want_tag[i])
                        bad++;
        ok(bad == 0, "all valid samples sorted, stable");

        is_int(burst_select(s, 0, 3, &n), 0, "select from nothing");
        is_int(n, 0, "nothing kept");
        is_int(burst_select(NULL, 0, 3, &n), 0, "select from NULL, n = 0");
        is_int(burst_select(NULL, 2, 3, &n), -EINVAL, "select from NULL, n = 2");
        is_int(burst_select(s, 2, 3, NULL), -EINVAL, "select with NULL ret_n");
}

/* Runs one scripted burst and checks the result against the expected deviations. */
static void check_collect(const char *name, const Step *steps, size_t n_steps, unsigned max_tries,
                          int64_t good_ns, size_t n_keep, int want_r, unsigned want_calls,
                          const int64_t *want_dev, size_t want_n) {
        Script script = { .steps = steps, .n_steps = n_steps };
        Sample best[16];
        size_t n = 99;
        unsigned bad = 0;
        int r;

        for (size_t i = 0; i < 16; i++)
                best[i] = make_sample(4242, -1);

        r = burst_collect(script_read, &script, max_tries, good_ns, best, n_keep, &n);
        ok(r == want_r, "%s: returns %d (got %d)", name, want_r, r);
        ok(script.n_calls == want_calls, "%s: %u reads (got %u)", name, want_calls, script.n_calls);

        if (r < 0) {
                ok(n == 99 && best[0].x_lo_ns == -1, "%s: outputs untouched on failure", name);
                return;
        }

        is_int(n, want_n, name);
        for (size_t i = 0; i < want_n && i < n; i++)
                if (sample_deviation_ns(&best[i]) != want_dev[i])
                        bad++;
        ok(bad == 0, "%s: the best deviations, ascending", name);
}

static void test_collect(void) {
        static const Step early[] = { { 0, 50 }, { 0, 10 }, { 0, 10 }, { 0, 10 }, { 0, 99 }, { 0, 1 } };
        check_collect("early stop after 3 good", early, 6, 6, 20, 3, 0, 4, (int64_t[]) { 10, 10, 10 }, 3);

        /* Load rises during the burst: nothing meets the threshold, the best seen still come back. */
        static const Step degrading[] = {
                { 0, 30 }, { 0, 25 }, { 0, 40 }, { 0, 60 }, { 0, 80 }, { 0, 100 }, { 0, 120 }, { 0, 140 },
        };
        check_collect("degrading, none good", degrading, 8, 8, 20, 3, 0, 8, (int64_t[]) { 25, 30, 40 }, 3);

        static const Step mixed[] = {
                { -EAGAIN, 0 }, { 0, 15 }, { -EIO, 0 }, { -EINTR, 0 }, { 0, 5 }, { 0, INVALID }, { 0, 50 },
        };
        check_collect("failures mixed in", mixed, 7, 7, 10, 2, 0, 7, (int64_t[]) { 5, 15 }, 2);

        static const Step slow[] = {
                { 0, 100 }, { 0, 90 }, { 0, 80 }, { 0, 70 }, { 0, 60 }, { 0, 50 }, { 0, 40 }, { 0, 30 },
                { 0, 1 }, { 0, 1 }, { 0, 1 },
        };
        check_collect("max_tries honoured", slow, 11, 7, 10, 3, 0, 7, (int64_t[]) { 40, 50, 60 }, 3);

        static const Step failing[] = { { -EAGAIN, 0 }, { -EIO, 0 }, { -ETIMEDOUT, 0 }, { 0, 1 } };
        check_collect("all reads fail", failing, 4, 3, 10, 2, -ETIMEDOUT, 3, NULL, 0);

        static const Step invalid[] = { { 0, INVALID }, { 0, INVALID } };
        check_collect("only invalid samples", invalid, 2, 2, 10, 2, -EINVAL, 2, NULL, 0);

        static const Step few[] = { { -EIO, 0 }, { 0, 40 }, { -EIO, 0 } };
        check_collect("fewer reads than n_keep", few, 3, 3, 10, 4, 0, 3, (int64_t[]) { 40 }, 1);

        static const Step one[] = { { 0, 3 } };
        check_collect("one good read is enough for n_keep 1", one, 1, 5, 10, 1, 0, 1, (int64_t[]) { 3 }, 1);

        Script script = { .steps = one, .n_steps = 1 };
        Sample best[2];
        size_t n;
        is_int(burst_collect(NULL, &script, 5, 10, best, 2, &n), -EINVAL, "NULL read");
        is_int(burst_collect(script_read, &script, 0, 10, best, 2, &n), -EINVAL, "max_tries 0");
        is_int(burst_collect(script_read, &script, 5, 10, best, 0, &n), -EINVAL, "n_keep 0");
        is_int(burst_collect(script_read, &script, 5, 10, NULL, 2, &n), -EINVAL, "NULL ret_best");
        is_int(burst_collect(script_read, &script, 5, 10, best, 2, NULL), -EINVAL, "NULL ret_n");
        is_int(script.n_calls, 0, "no read on bad arguments");
}

static uint64_t lcg_next(uint64_t *state) {
        *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        return *state >> 33;
}

/* Random scripts: burst_collect must equal burst_select over the samples it read, stopping
 * exactly when n_keep good ones were seen. */
static void test_collect_random(void) {
        uint64_t state = 12345;
        unsigned bad = 0, runs = 500;

        for (unsigned run = 0; run < runs; run++) {
                Step steps[40];
                Sample all[40], best[8];
                size_t n_all = 0, n_good = 0, n_best = 0, n_sel = 0;
                size_t n_keep = 1 + lcg_next(&state) % 8;
                unsigned max_tries = 1 + lcg_next(&state) % 40, want_calls = 0;
                int64_t good_ns = (int64_t) (lcg_next(&state) % 50);
                Script script = { .steps = steps, .n_steps = 40 };
                int r;

                for (size_t i = 0; i < 40; i++) {
                        uint64_t x = lcg_next(&state);

                        steps[i] = (Step) {
                                .error = x % 5 == 0 ? -EAGAIN : 0,
                                .deviation_ns = (int64_t) (x % 100),
                        };
                }

                /* The reference: read until the stop condition, select from everything read. */
                for (unsigned i = 0; i < max_tries && n_good < n_keep; i++) {
                        want_calls++;
                        if (steps[i].error < 0)
                                continue;
                        all[n_all] = (Sample) {
                                .r0_ns = 1000000 * (int64_t) i,
                                .r1_ns = 1000000 * (int64_t) i + steps[i].deviation_ns,
                                .x_lo_ns = i,
                                .x_hi_ns = i,
                        };
                        if (steps[i].deviation_ns <= good_ns)
                                n_good++;
                        n_all++;
                }
                burst_select(all, n_all, n_keep, &n_sel);

                r = burst_collect(script_read, &script, max_tries, good_ns, best, n_keep, &n_best);
                if (n_all == 0) {
                        if (r != -EAGAIN || script.n_calls != want_calls)
                                bad++;
                        continue;
                }
                if (r != 0 || script.n_calls != want_calls || n_best != n_sel) {
                        bad++;
                        continue;
                }
                for (size_t i = 0; i < n_best; i++)
                        if (memcmp(&best[i], &all[i], sizeof(Sample)) != 0) {
                                bad++;
                                break;
                        }
        }

        ok(bad == 0, "%u random bursts match select() over what was read (%u wrong)", runs, bad);
}

int main(void) {
        test_validate();
        test_select();
        test_collect();
        test_collect_random();
        return done_testing();
}
