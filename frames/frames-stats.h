/* SPDX-License-Identifier: MIT */
#pragma once

/* Statistics of a merged frame series (frames.h), and its plot. Times in, figures out; a
 * figure that cannot be computed is NAN (a double) or -1 (a count). */

#include <stdint.h>
#include <stdio.h>

#include "frames.h"

/* Marks of one frame interval (the one that ends with frame i + 1). */
enum {
        FRAMES_MARK_PERFDOG_JANK = 1 << 0,
        FRAMES_MARK_PERFDOG_BIGJANK = 1 << 1,   /* always with FRAMES_MARK_PERFDOG_JANK */
        FRAMES_MARK_CHROMIUM = 1 << 2,
};

/* Per-second frame counts are kept for captures of up to a week. */
#define FRAMES_MAX_SECONDS (7 * 24 * 3600)

typedef struct FramesSpread {
        double mean_ms, p50_ms, p90_ms, p99_ms, min_ms, max_ms;
} FramesSpread;

typedef struct FramesStats {
        size_t n_frames;
        double span_s;                  /* first to last present time */
        double fps;                     /* (n - 1) / span */
        uint32_t *fps_per_second;       /* frames presented in each whole second after the first */
        size_t n_seconds;
        bool per_second_too_long;       /* span over FRAMES_MAX_SECONDS: no fps_per_second */
        FramesSpread interval;          /* percentiles by nearest rank */
        double jitter_ms;               /* population standard deviation of the intervals */
        double latency_mean_ms, latency_max_ms;         /* present - desired */
        size_t n_latency;
        double ready_mean_ms, ready_max_ms;             /* present - ready */
        size_t n_ready;
        int64_t late_frames;            /* present - desired > one refresh period */
        int64_t refresh_ns;             /* the last known refresh period, 0 if none */
        int64_t refresh_min_ns, refresh_max_ns;
        int64_t perfdog_jank, perfdog_bigjank, chromium_jank;
        uint8_t *marks;                 /* n_frames - 1 of FRAMES_MARK_*, or NULL */
} FramesStats;

/* The spread of d[0..m) (ns) in ms, all NAN when m is 0. Reorders d. */
void frames_spread(int64_t *d, size_t m, FramesSpread *ret);

/* default_refresh_ns (0: none) stands for the refresh period of frames that do not say theirs.
 * 0 or -ENOMEM; *ret is written only on success and released with frames_stats_done(). */
int frames_stats_compute(const Frame *frames, size_t n_frames, int64_t default_refresh_ns,
                         FramesStats *ret);
void frames_stats_done(FramesStats *s);

/* An SVG of the frame intervals over time, refresh-period gridlines, the janks marked.
 * 0, or -EIO when writing to f failed. */
int frames_plot_svg(FILE *f, const Frame *frames, const FramesStats *s);

/* The jank counts over intervals_ns[0..n) (refresh_ns[i]: the refresh period of interval i,
 * 0 if unknown), each adding its FRAMES_MARK_* to marks[i]. */

/* PerfDog: interval i >= 3 is a Jank when it is longer than twice the mean of the three before
 * it and than two movie frames (2 * 1000/24 ms); a BigJank (also a Jank) when it is longer than
 * three movie frames (125 ms) too. */
void frames_janks_perfdog(const int64_t *intervals_ns, size_t n, uint8_t *marks,
                          int64_t *ret_jank, int64_t *ret_bigjank);

/* Chromium telemetry: intervals shorter than half a refresh period (or of an unknown one) are
 * left out; of the rest d, in refresh periods P, each d[i + 1] with round((d[i + 1] - d[i]) / P)
 * above 0 and below 20 (half away from zero) is a jank. -1 when no refresh period is known. */
int64_t frames_janks_chromium(const int64_t *intervals_ns, const int64_t *refresh_ns, size_t n,
                              uint8_t *marks);
