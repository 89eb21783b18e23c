/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arith.h"
#include "burst.h"
#include "sample.h"

int sample_validate(const Sample *s) {
        int64_t width;

        if (!s)
                return -EINVAL;
        if (s->r0_ns > s->r1_ns || s->x_lo_ns > s->x_hi_ns)
                return -EINVAL;

        /* Callers take r1 - r0 (sample_deviation_ns()) and x_hi - x_lo without checks: a sample
         * whose widths do not fit int64 is not a reading anyone could have made. */
        if (arith_sub(s->r1_ns, s->r0_ns, &width) < 0 ||
            arith_sub(s->x_hi_ns, s->x_lo_ns, &width) < 0)
                return -EINVAL;

        return 0;
}

/* Inserts s into best[0..*n), sorted by deviation, keeping at most n_keep. Equal deviations keep
 * their arrival order, so the result is what a stable sort of everything would give. */
static void insert_sorted(Sample *best, size_t *n, size_t n_keep, const Sample *s) {
        int64_t deviation_ns = sample_deviation_ns(s);
        size_t i;

        if (*n == n_keep) {
                if (n_keep == 0 || sample_deviation_ns(&best[n_keep - 1]) <= deviation_ns)
                        return;         /* no better than the worst kept one */
                (*n)--;                 /* the worst one makes room */
        }

        for (i = *n; i > 0 && sample_deviation_ns(&best[i - 1]) > deviation_ns; i--)
                best[i] = best[i - 1];
        best[i] = *s;
        (*n)++;
}

int burst_select(Sample *samples, size_t n, size_t n_keep, size_t *ret_n) {
        size_t n_valid = 0, n_sorted = 0;

        if (!ret_n || (!samples && n > 0))
                return -EINVAL;

        /* Drop the invalid ones first, keeping the order of the others. */
        for (size_t i = 0; i < n; i++)
                if (sample_validate(&samples[i]) >= 0)
                        samples[n_valid++] = samples[i];

        /* Insertion sort: stable, in place, and bursts are a handful of samples. */
        for (size_t i = 0; i < n_valid; i++) {
                Sample s = samples[i];

                insert_sorted(samples, &n_sorted, n_valid, &s);
        }

        *ret_n = n_valid < n_keep ? n_valid : n_keep;
        return 0;
}

int burst_collect(burst_read_fn read, void *userdata, unsigned max_tries, int64_t good_deviation_ns,
                  Sample *ret_best, size_t n_keep, size_t *ret_n) {
        size_t n_best = 0, n_good = 0;
        unsigned n_ok = 0;
        int last_error = 0;

        if (!read || !ret_best || !ret_n || n_keep == 0 || max_tries == 0)
                return -EINVAL;

        for (unsigned n_tries = 0; n_tries < max_tries && n_good < n_keep; n_tries++) {
                Sample s;
                int r;

                r = read(userdata, &s);
                if (r >= 0)
                        r = sample_validate(&s);
                if (r < 0) {
                        /* A read that fails costs a try but does not end the burst. */
                        last_error = r;
                        continue;
                }

                n_ok++;
                if (sample_deviation_ns(&s) <= good_deviation_ns)
                        n_good++;

                /* Keep the best seen whatever the threshold: under load none may meet it. */
                insert_sorted(ret_best, &n_best, n_keep, &s);
        }

        if (n_ok == 0)
                return last_error < 0 ? last_error : -EIO;

        *ret_n = n_best;
        return 0;
}
