/* SPDX-License-Identifier: MIT */

/* The report of `timeconv frames`. Text says "n/a" and JSON null where a figure cannot be
 * computed (fewer than two frames, no desired times, no refresh period). */

#include <inttypes.h>
#include <math.h>

#include "frames-report.h"

#define PER_SECOND_LISTED 20

static void text_ms(FILE *f, const char *prefix, double v) {
        if (isnan(v))
                fprintf(f, "%sn/a", prefix);
        else
                fprintf(f, "%s%.3f", prefix, v);
}

static void text_count(FILE *f, int64_t v) {
        if (v < 0)
                fputs("n/a", f);
        else
                fprintf(f, "%" PRId64, v);
}

static void text_per_second(FILE *f, const FramesStats *s) {
        uint32_t min = UINT32_MAX, max = 0;

        if (s->per_second_too_long) {
                fputs("; per second: n/a (a span of more than a week)", f);
                return;
        }
        if (s->n_seconds == 0) {
                fputs("; per second: n/a (less than one second)", f);
                return;
        }
        if (s->n_seconds <= PER_SECOND_LISTED) {
                fputs("; per second:", f);
                for (size_t i = 0; i < s->n_seconds; i++)
                        fprintf(f, " %" PRIu32, s->fps_per_second[i]);
                return;
        }
        for (size_t i = 0; i < s->n_seconds; i++) {
                min = s->fps_per_second[i] < min ? s->fps_per_second[i] : min;
                max = s->fps_per_second[i] > max ? s->fps_per_second[i] : max;
        }
        fprintf(f, "; per second over %zu s: %" PRIu32 " to %" PRIu32, s->n_seconds, min, max);
}

void frames_report_text(FILE *f, const char *format, const FramesLog *log, const FramesStats *s) {
        fprintf(f, "input           %s, %" PRIu64 " dump%s, %" PRIu64 " rows (%" PRIu64
                " pending, %" PRIu64 " unused or repeated)\n", format, log->dumps,
                log->dumps == 1 ? "" : "s", log->rows, log->pending, log->dropped);
        fprintf(f, "frames          %zu", s->n_frames);
        if (!isnan(s->span_s))
                fprintf(f, " over %.3f s", s->span_s);
        fputs("\nFPS            ", f);
        text_ms(f, " ", s->fps);
        if (!isnan(s->fps))
                text_per_second(f, s);
        text_ms(f, "\nframe interval  mean ", s->interval.mean_ms);
        text_ms(f, " ms, p50 ", s->interval.p50_ms);
        text_ms(f, ", p90 ", s->interval.p90_ms);
        text_ms(f, ", p99 ", s->interval.p99_ms);
        text_ms(f, ", min ", s->interval.min_ms);
        text_ms(f, ", max ", s->interval.max_ms);
        text_ms(f, "\njitter          ", s->jitter_ms);
        fputs(" ms (standard deviation of the intervals)\n", f);
        text_ms(f, "present latency mean ", s->latency_mean_ms);
        text_ms(f, " ms, max ", s->latency_max_ms);
        fprintf(f, " ms (actual - desired present time, %zu frames)\n", s->n_latency);
        text_ms(f, "ready->present  mean ", s->ready_mean_ms);
        text_ms(f, " ms, max ", s->ready_max_ms);
        fprintf(f, " ms (%zu frames)\nlate frames     ", s->n_ready);
        text_count(f, s->late_frames);
        fputs(" (presented more than one refresh period after the desired time)\n", f);
        if (s->refresh_ns > 0) {
                fprintf(f, "refresh period  %.3f ms", (double) s->refresh_ns / 1e6);
                if (s->refresh_min_ns != s->refresh_max_ns)
                        fprintf(f, " (last; from %.3f to %.3f)", (double) s->refresh_min_ns / 1e6,
                                (double) s->refresh_max_ns / 1e6);
                fputc('\n', f);
        } else
                fputs("refresh period  unknown (--refresh-hz gives one)\n", f);
        fputs("janks           PerfDog Jank ", f);
        text_count(f, s->perfdog_jank);
        fputs(", PerfDog BigJank ", f);
        text_count(f, s->perfdog_bigjank);
        fputs(", Chromium ", f);
        text_count(f, s->chromium_jank);
        fputc('\n', f);
}

static void json_number(FILE *f, const char *key, double v, const char *after) {
        if (isnan(v))
                fprintf(f, "\"%s\":null%s", key, after);
        else
                fprintf(f, "\"%s\":%.6f%s", key, v, after);
}

static void json_count(FILE *f, const char *key, int64_t v, const char *after) {
        if (v < 0)
                fprintf(f, "\"%s\":null%s", key, after);
        else
                fprintf(f, "\"%s\":%" PRId64 "%s", key, v, after);
}

static double ms_or_nan(int64_t ns) {
        return ns > 0 ? (double) ns / 1e6 : NAN;
}

void frames_report_json(FILE *f, const char *format, const FramesLog *log, const FramesStats *s) {
        const FramesSpread *i = &s->interval;

        /* format is one of the fixed names of frames_format_name() or "mixed": no escaping. */
        fprintf(f, "{\"format\":\"%s\",\"dumps\":%" PRIu64 ",\"rows\":{\"read\":%" PRIu64
                ",\"pending\":%" PRIu64 ",\"dropped\":%" PRIu64 "},\"frames\":%zu,",
                format, log->dumps, log->rows, log->pending, log->dropped, s->n_frames);
        json_number(f, "span_s", s->span_s, ",");
        json_number(f, "fps", s->fps, ",\"fps_per_second\":");
        if (s->per_second_too_long)
                fputs("null", f);
        else {
                fputc('[', f);
                for (size_t k = 0; k < s->n_seconds; k++)
                        fprintf(f, "%s%" PRIu32, k ? "," : "", s->fps_per_second[k]);
                fputc(']', f);
        }
        fputs(",\"frame_interval_ms\":{", f);
        json_number(f, "mean", i->mean_ms, ",");
        json_number(f, "p50", i->p50_ms, ",");
        json_number(f, "p90", i->p90_ms, ",");
        json_number(f, "p99", i->p99_ms, ",");
        json_number(f, "min", i->min_ms, ",");
        json_number(f, "max", i->max_ms, "},");
        json_number(f, "jitter_ms", s->jitter_ms, ",\"present_latency_ms\":{");
        json_number(f, "mean", s->latency_mean_ms, ",");
        json_number(f, "max", s->latency_max_ms, ",");
        fprintf(f, "\"frames\":%zu},\"ready_to_present_ms\":{", s->n_latency);
        json_number(f, "mean", s->ready_mean_ms, ",");
        json_number(f, "max", s->ready_max_ms, ",");
        fprintf(f, "\"frames\":%zu},", s->n_ready);
        json_count(f, "late_frames", s->late_frames, ",");
        json_number(f, "refresh_period_ms", ms_or_nan(s->refresh_ns), ",");
        json_number(f, "refresh_period_min_ms", ms_or_nan(s->refresh_min_ns), ",");
        json_number(f, "refresh_period_max_ms", ms_or_nan(s->refresh_max_ns), ",\"janks\":{");
        json_count(f, "perfdog_jank", s->perfdog_jank, ",");
        json_count(f, "perfdog_bigjank", s->perfdog_bigjank, ",");
        json_count(f, "chromium", s->chromium_jank, "}}\n");
}
