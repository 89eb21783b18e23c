/* SPDX-License-Identifier: MIT */

/* Figures of the GPU source on Mesa's lavapipe, in process (no daemon), as one JSON object:
 *   - clock_pair_ns: two back-to-back clock_gettime(CLOCK_MONOTONIC_RAW), the sample's floor;
 *   - gpu_sample_ns: one bracketed calibrated-timestamp reading (sample_burst of one), p50;
 *   - gpu_burst_cpu_ns: CPU time of one burst as the daemon asks it (8 samples), mean;
 *   - gpu_bound_ns: after 1 s of bursts every 100 ms (best 2 of 8 kept, as the daemon does),
 *     the largest bound of 10,000 conversions gpu0 -> monotonic, against 2 x the best bracket;
 *   - gpu_error_ns: the largest |converted - truth| of the same conversions; lavapipe's device
 *     time is CLOCK_MONOTONIC in ns, so the truth of gpu0 value v is monotonic v.
 * argv[1] (optional): the lavapipe ICD file, set as VK_ICD_FILENAMES unless that is set.
 * Timing uses CLOCK_MONOTONIC; errors go to stderr and exit 1. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "burst.h"
#include "domain.h"
#include "graph.h"
#include "history.h"
#include "vulkan.h"

#define FLOOR_TRIES 200000
#define SAMPLE_CALLS 20000
#define CPU_BURSTS 2000
#define BURST_SAMPLES 8
#define BURST_KEEP 2
#define CALIBRATION_NS INT64_C(1000000000)
#define CADENCE_NS INT64_C(100000000)
#define CONVERSIONS 10000

static int measure_sample(Domain *d, int64_t *ret_p50_ns) {
        int64_t *costs = malloc(SAMPLE_CALLS * sizeof(*costs));
        int r = 0;

        if (!costs)
                return -ENOMEM;
        for (size_t i = 0; i < SAMPLE_CALLS && r >= 0; i++) {
                Sample s;
                size_t n;
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);

                r = domain_vulkan_ops.sample_burst(d, &s, 1, &n);
                costs[i] = clock_now_ns(CLOCK_MONOTONIC) - t0;
        }
        if (r >= 0)
                *ret_p50_ns = bench_percentile(costs, SAMPLE_CALLS, 0.5);
        free(costs);
        return r;
}

static int measure_burst_cpu(Domain *d, int64_t *ret_ns) {
        int64_t t0 = clock_now_ns(CLOCK_THREAD_CPUTIME_ID);

        for (size_t i = 0; i < CPU_BURSTS; i++) {
                Sample s[BURST_SAMPLES];
                size_t n;
                int r;

                r = domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n);
                if (r < 0)
                        return r;
        }
        *ret_ns = (clock_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / CPU_BURSTS;
        return 0;
}

static void sort_by_reference(Sample *s, size_t n) {
        for (size_t i = 1; i < n; i++) {
                Sample x = s[i];
                size_t j;

                for (j = i; j > 0 && s[j - 1].r0_ns > x.r0_ns; j--)
                        s[j] = s[j - 1];
                s[j] = x;
        }
}

/* One burst as the daemon makes it: 8 read, the best 2 kept, fed in time order. */
static int calibrate_burst(const DomainOps *ops, Domain *d, History *h, int64_t *best_bracket_ns) {
        Sample s[BURST_SAMPLES];
        size_t n = 0, kept = 0;
        int r;

        r = ops->sample_burst(d, s, BURST_SAMPLES, &n);
        if (r >= 0)
                r = burst_select(s, n, BURST_KEEP, &kept);
        if (r >= 0 && kept == 0)
                r = -ENODATA;
        if (r < 0)
                return r;
        if (best_bracket_ns && sample_deviation_ns(&s[0]) < *best_bracket_ns)
                *best_bracket_ns = sample_deviation_ns(&s[0]);
        sort_by_reference(s, kept);
        for (size_t i = 0; i < kept; i++)
                (void) history_add(h, &s[i], NULL);
        return 0;
}

typedef struct Figures {
        int64_t best_bracket_ns, bound_ns, error_ns;
        unsigned outside;
        /* Where the bound comes from: gpu0's own model bound at its newest sample, and the exact
         * half-width of its feasible set there (the model's linear bound is looser). */
        double model_bound_ns, polygon_half_ns;
} Figures;

static int measure_conversions(Domain *gpu, const DomainInfo *gpu_info, Figures *ret) {
        Figures f = { .best_bracket_ns = INT64_MAX };
        History *h_gpu = NULL, *h_mono = NULL;
        ClockGraph *g = NULL;
        Domain *mono = NULL;
        size_t i_gpu, i_mono;
        int64_t start_ns, next_ns;
        int r;

        h_gpu = malloc(sizeof(*h_gpu));
        h_mono = malloc(sizeof(*h_mono));
        g = malloc(sizeof(*g));
        r = h_gpu && h_mono && g ? 0 : -ENOMEM;
        if (r >= 0)
                r = domain_posix_ops.open("monotonic", NULL, &mono);
        if (r < 0)
                goto finish;
        history_init(h_gpu, &ESTIMATOR_CONFIG_DEFAULT);
        history_init(h_mono, &ESTIMATOR_CONFIG_DEFAULT);
        r = graph_init(g, "monotonic_raw");
        if (r >= 0)
                r = graph_add(g, "monotonic", &UNIT_NS, h_mono, &i_mono);
        if (r >= 0)
                r = graph_add(g, "gpu0", &gpu_info->unit, h_gpu, &i_gpu);

        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        next_ns = start_ns;
        while (r >= 0 && next_ns <= start_ns + CALIBRATION_NS) {
                struct timespec at = { .tv_sec = next_ns / 1000000000, .tv_nsec = next_ns % 1000000000 };

                clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);     /* the cadence */
                r = calibrate_burst(&domain_posix_ops, mono, h_mono, NULL);
                if (r >= 0)
                        r = calibrate_burst(&domain_vulkan_ops, gpu, h_gpu, &f.best_bracket_ns);
                graph_refresh(g, i_mono);
                graph_refresh(g, i_gpu);
                next_ns += CADENCE_NS;
        }

        if (r >= 0) {
                const Segment *current = history_current(h_gpu);
                double lo, hi;

                r = current ? estimator_range_at(&h_gpu->estimator, current->r_end_ns, &lo, &hi) : -ENODATA;
                if (r >= 0) {
                        f.model_bound_ns = model_bound_at(&current->model, current->r_end_ns);
                        f.polygon_half_ns = (hi - lo) / 2.0;
                }
        }
        for (size_t i = 0; r >= 0 && i < CONVERSIONS; i++) {
                int64_t v = clock_now_ns(CLOCK_MONOTONIC), out, u, err;

                r = graph_convert(g, i_gpu, i_mono, v, INT64_MIN, &out, &u);
                if (r < 0)
                        break;
                err = out > v ? out - v : v - out;
                f.outside += err > u;
                f.error_ns = err > f.error_ns ? err : f.error_ns;
                f.bound_ns = u > f.bound_ns ? u : f.bound_ns;
        }
        if (r >= 0)
                *ret = f;
finish:
        domain_posix_ops.close(mono);
        free(g);
        free(h_gpu);
        free(h_mono);
        return r;
}

int main(int argc, char **argv) {
        /* lavapipe is a CPU device: the source offers it only when asked. */
        const VulkanConfig config = { .software = true };
        int64_t floor_min_ns = 0, floor_p50_ns = 0, sample_ns = 0, burst_cpu_ns = 0;
        DomainInfo infos[4];
        Domain *gpu = NULL;
        Figures f = {};
        size_t n = 0;
        int r;

        if (argc > 1)
                setenv("VK_ICD_FILENAMES", argv[1], 0);

        r = domain_vulkan_ops.enumerate(&config, infos, 4, &n);
        if (r < 0 || n == 0 || strcmp(infos[0].name, "gpu0") != 0) {
                fprintf(stderr, "bench-gpu: no gpu0 (is lavapipe installed? VK_ICD_FILENAMES=%s)\n",
                        getenv("VK_ICD_FILENAMES") ?: "");
                return 1;
        }
        r = domain_vulkan_ops.open("gpu0", &config, &gpu);
        if (r >= 0)
                r = bench_clock_pair(CLOCK_MONOTONIC_RAW, FLOOR_TRIES, &floor_min_ns, &floor_p50_ns);
        if (r >= 0)
                r = measure_sample(gpu, &sample_ns);
        if (r >= 0)
                r = measure_burst_cpu(gpu, &burst_cpu_ns);
        if (r >= 0)
                r = measure_conversions(gpu, &infos[0], &f);
        domain_vulkan_ops.close(gpu);
        if (r < 0) {
                fprintf(stderr, "bench-gpu: %s\n", strerror(-r));
                return 1;
        }

        printf("{\n");
        printf("  \"device\": \"%s\",\n", infos[0].name);
        printf("  \"clock_pair_ns\": %" PRIi64 ",\n", floor_min_ns);
        printf("  \"clock_pair_p50_ns\": %" PRIi64 ",\n", floor_p50_ns);
        printf("  \"gpu_sample_ns\": %" PRIi64 ",\n", sample_ns);
        printf("  \"gpu_sample_over_clock_pair\": %.2f,\n", (double) sample_ns / (double) (floor_p50_ns ?: 1));
        printf("  \"gpu_burst_cpu_ns\": %" PRIi64 ",\n", burst_cpu_ns);
        printf("  \"gpu_best_bracket_ns\": %" PRIi64 ",\n", f.best_bracket_ns);
        printf("  \"gpu_bound_ns\": %" PRIi64 ",\n", f.bound_ns);
        printf("  \"gpu_bound_over_bracket\": %.2f,\n", (double) f.bound_ns / (double) (f.best_bracket_ns ?: 1));
        printf("  \"gpu_model_bound_at_newest_ns\": %.1f,\n", f.model_bound_ns);
        printf("  \"gpu_feasible_half_width_at_newest_ns\": %.1f,\n", f.polygon_half_ns);
        printf("  \"gpu_error_ns\": %" PRIi64 ",\n", f.error_ns);
        printf("  \"conversions\": %d,\n", CONVERSIONS);
        printf("  \"conversions_outside_bound\": %u,\n", f.outside);
        printf("  \"targets\": {\n");
        printf("    \"gpu_bound_le_2x_best_bracket\": %s,\n", f.bound_ns <= 2 * f.best_bracket_ns ? "true" : "false");
        printf("    \"gpu_error_le_bound\": %s,\n", f.error_ns <= f.bound_ns ? "true" : "false");
        printf("    \"every_answer_within_its_bound\": %s\n", f.outside == 0 ? "true" : "false");
        printf("  }\n");
        printf("}\n");
        return 0;
}
