/* SPDX-License-Identifier: MIT */

/* The frame-dump parsers (SurfaceFlinger --latency, gfxinfo framestats, JSON Lines) on any
 * bytes, then the statistics and the SVG plot of whatever they kept, checking the promises of
 * frames.h and frames-stats.h along the way; and the block reader (two threads, blocks of a few
 * bytes so that lines straddle them) against the line-by-line parse: the same result, rows and
 * error line. */

#include <errno.h>

#include "frames-internal.h"
#include "frames-report.h"
#include "frames-stats.h"
#include "frames.h"
#include "fuzz-input.h"

static void check_log(const FramesLog *log) {
        fuzz_check(log->n_frames <= log->n_allocated, "%zu frames in %zu", log->n_frames, log->n_allocated);
        fuzz_check(log->n_frames + log->pending + log->dropped <= log->rows,
                   "%zu kept + %llu pending + %llu dropped > %llu rows", log->n_frames,
                   (unsigned long long) log->pending, (unsigned long long) log->dropped,
                   (unsigned long long) log->rows);
        for (size_t i = 0; i < log->n_frames; i++) {
                fuzz_check(frames_time_valid(log->frames[i].present_ns), "frame %zu present %lld", i,
                           (long long) log->frames[i].present_ns);
                fuzz_check(i == 0 || log->frames[i].present_ns > log->frames[i - 1].present_ns,
                           "frame %zu not after frame %zu", i, i - 1);
        }
}

static void check_stats(const FramesLog *log, const FramesStats *s) {
        const FramesSpread *v = &s->interval;

        fuzz_check(s->n_frames == log->n_frames, "%zu != %zu", s->n_frames, log->n_frames);
        if (s->n_frames < 2)
                return;
        fuzz_check(s->span_s > 0 && s->fps > 0, "span %g s, %g fps", s->span_s, s->fps);
        /* Present times strictly increase, so every interval is positive and ordered. */
        fuzz_check(v->min_ms > 0 && v->min_ms <= v->p50_ms && v->p50_ms <= v->p90_ms &&
                   v->p90_ms <= v->p99_ms && v->p99_ms <= v->max_ms,
                   "intervals %g %g %g %g %g", v->min_ms, v->p50_ms, v->p90_ms, v->p99_ms, v->max_ms);
        fuzz_check(v->mean_ms >= v->min_ms * (1 - 1e-9) && v->mean_ms <= v->max_ms * (1 + 1e-9),
                   "mean %g outside [%g, %g]", v->mean_ms, v->min_ms, v->max_ms);
        fuzz_check(s->jitter_ms >= 0, "jitter %g", s->jitter_ms);
        fuzz_check(s->perfdog_bigjank >= 0 && s->perfdog_bigjank <= s->perfdog_jank,
                   "perfdog %lld big of %lld", (long long) s->perfdog_bigjank, (long long) s->perfdog_jank);
        fuzz_check(s->perfdog_jank <= (int64_t) s->n_frames, "perfdog %lld", (long long) s->perfdog_jank);
        fuzz_check(s->chromium_jank >= -1 && s->chromium_jank <= (int64_t) s->n_frames,
                   "chromium %lld", (long long) s->chromium_jank);
        fuzz_check(s->marks, "no marks");
        fuzz_check(s->per_second_too_long || s->n_seconds == 0 || s->fps_per_second,
                   "%zu seconds, no counts", s->n_seconds);
}

/* frames_parser_input() in blocks of block_size on two threads: what frames_parse_text() gave. */
static void check_blocks(const uint8_t *data, size_t size, size_t block_size, int want_r, const FramesLog *want,
                         const FramesError *want_error) {
        FramesError error = { .line = 12345 };
        FramesParser *p = NULL;
        FramesLog *log = NULL;
        int r;

        if (frames_log_new(&log) < 0)
                return;
        if (frames_parser_new(log, &p) < 0) {
                frames_log_free(log);
                return;
        }
        r = frames_parser_input(p, (const char *) data, NULL, NULL, size, 0, block_size, 2, &error);
        if (r >= 0)
                r = frames_parser_finish(p, &error);
        frames_parser_free(p);
        if (r != -ENOMEM && want_r != -ENOMEM) {
                fuzz_check(r == want_r, "blocks of %zu: %d, line by line: %d", block_size, r, want_r);
                fuzz_check(log->rows == want->rows && log->n_frames == want->n_frames,
                           "blocks of %zu: %llu rows %zu frames, line by line: %llu rows %zu frames", block_size,
                           (unsigned long long) log->rows, log->n_frames, (unsigned long long) want->rows,
                           want->n_frames);
                fuzz_check(r == 0 || error.line == want_error->line, "blocks of %zu: error at line %u, not %u",
                           block_size, error.line, want_error->line);
        }
        frames_log_free(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FramesError error = { .line = 12345 };
        FramesStats stats;
        FramesLog *log = NULL;
        FILE *sink;
        int r;

        if (frames_log_new(&log) < 0)
                return 0;

        r = frames_parse_text(log, (const char *) data, size, &error);
        fuzz_check(r == 0 || r == -EBADMSG || r == -ENOMEM, "parse returned %d", r);
        if (r == 0)
                fuzz_check(error.line == 12345, "error written on success");
        else
                fuzz_check(memchr(error.message, 0, sizeof(error.message)), "message not terminated");
        check_log(log);
        check_blocks(data, size, 7, r, log, &error);

        /* What was kept before a refusal is still a series the statistics must take. */
        r = frames_stats_compute(log->frames, log->n_frames, 16666667, &stats);
        fuzz_check(r == 0 || r == -ENOMEM, "stats returned %d", r);
        if (r == 0) {
                check_stats(log, &stats);
                sink = fopen("/dev/null", "we");
                if (sink) {
                        r = frames_plot_svg(sink, log->frames, &stats);
                        fuzz_check(r == 0, "plot returned %d", r);
                        fclose(sink);
                }
                frames_stats_done(&stats);
        }

        /* The frame log's windows: each a series the statistics take, and a report. */
        {
                FramesReport *report = NULL;

                r = frames_report_new(log, "fuzz", 16666667, FRAMES_NO_WINDOW, &report);
                fuzz_check(r == 0 || r == -ENOMEM, "report returned %d", r);
                for (size_t i = 0; r == 0 && i < report->n_sections; i++)
                        check_stats(report->sections[i].series, &report->sections[i].stats);
                if (r == 0 && (sink = fopen("/dev/null", "we"))) {
                        frames_report_text(sink, report);
                        frames_report_json(sink, report);
                        for (size_t i = 0; i < report->n_sections; i++)
                                fuzz_check(frames_plot_svg_section(sink, &report->sections[i]) == 0, "plot failed");
                        fclose(sink);
                }
                frames_report_free(report);
        }

        frames_log_free(log);
        return 0;
}
