/* SPDX-License-Identifier: MIT */
#pragma once

/* Bursts: read a domain several times, keep the samples with the smallest deviation. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

/* Sorts samples[0..n) by deviation, ascending (stable), and returns min(n, n_keep) in ret_n.
 * Invalid samples (sample_validate) are dropped first. */
int burst_select(Sample *samples, size_t n, size_t n_keep, size_t *ret_n);

/* Reads one sample; 0 or -errno. */
typedef int (*burst_read_fn)(void *userdata, Sample *ret);

/* Reads until n_keep samples with deviation <= good_deviation_ns were seen or max_tries reads
 * were made, whichever comes first; keeps the n_keep best seen, sorted by deviation. A fixed
 * threshold can starve under load, so the best seen are always kept: this never returns fewer
 * than min(n_keep, successful reads) samples. -errno of the last failure if no read succeeded. */
int burst_collect(burst_read_fn read, void *userdata, unsigned max_tries, int64_t good_deviation_ns,
                  Sample *ret_best, size_t n_keep, size_t *ret_n);
