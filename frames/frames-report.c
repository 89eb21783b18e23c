/* SPDX-License-Identifier: MIT */

/* The report of `timeconv frames` and of its probe. Text says "n/a" and JSON null where a
 * figure cannot be computed (fewer than two frames, no desired times, no refresh period). */

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

/* A spread after its mean: " ms, p50 …, max …". */
static void text_spread_rest(FILE *f, const FramesSpread *v) {
        text_ms(f, " ms, p50 ", v->p50_ms);
        text_ms(f, ", p90 ", v->p90_ms);
        text_ms(f, ", p99 ", v->p99_ms);
        text_ms(f, ", min ", v->min_ms);
        text_ms(f, ", max ", v->max_ms);
}

static void text_spread(FILE *f, const char *label, const FramesSpread *v, size_t n, const char *why) {
        fputs(label, f);
        if (n == 0) {
                fprintf(f, "n/a (%s)\n", why);
                return;
        }
        text_ms(f, "mean ", v->mean_ms);
        text_spread_rest(f, v);
        fprintf(f, " (%zu frames)\n", n);
}

/* A Wayland surface's rows on one output. The name comes from the compositor: shown as it is in
 * text, escaped in JSON. */
static void text_surface(FILE *f, const FramesSection *sec) {
        const FramesDesktopStats *d = &sec->desktop_stats;
        const char *output = sec->window_rows->output;

        fprintf(f, "surface         %" PRId64 " %s%s%s: %" PRIu64 " rows, %zu committed, %zu presented, "
                "%zu discarded\n",
                sec->window, *output ? "on output '" : "on no output", output, *output ? "'" : "", sec->rows,
                d->n_drawn, d->n_presented, d->n_discarded);
}

static void text_window(FILE *f, const FramesSection *sec) {
        if (sec->desktop_stats.wayland) {
                text_surface(f, sec);
                return;
        }
        if (sec->window == FRAMES_NO_WINDOW)
                fputs("window          not named in the log", f);
        else
                fprintf(f, "window          0x%" PRIx64, (uint64_t) sec->window);
        fprintf(f, ": %" PRIu64 " rows, %zu drawn (%" PRIu64 " never), %zu presented\n", sec->rows,
                sec->desktop_stats.n_drawn, sec->not_drawn, sec->desktop_stats.n_presented);
}

static void text_timed_by(FILE *f, const FramesSection *sec) {
        fprintf(f, "timed by        %s", frames_timed_by_name(sec->timed_by));
        if (sec->timed_by == FRAMES_TIMED_BY_DRAWN)
                fputs(" (no presentation time in the log: rate, intervals and janks are of the drawn "
                      "times)", f);
        else if (sec->timed_by == FRAMES_TIMED_BY_COMPLETED)
                fputs(" (no present times in the dump: FrameCompleted stands in)", f);
        fputc('\n', f);
}

static void text_client_rate(FILE *f, const FramesDesktopStats *d) {
        fputs("client rate    ", f);
        text_ms(f, " ", d->client_fps);
        fprintf(f, " FPS (the frames' begin times, %zu frames)\n", d->n_client);
}

static void text_wayland(FILE *f, const FramesDesktopStats *d) {
        text_client_rate(f, d);
        text_spread(f, "commit->presented ", &d->drawn_to_presented, d->n_drawn_to_presented,
                    "no presentation times");
        fprintf(f, "presentation    of %zu presented: vsync %zu, hw clock %zu, hw completion %zu, zero copy %zu\n",
                d->n_presented, d->n_vsync, d->n_hw_clock, d->n_hw_completion, d->n_zero_copy);
}

static void text_desktop(FILE *f, const FramesDesktopStats *d) {
        if (d->wayland) {
                text_wayland(f, d);
                return;
        }

        /* Why a figure is missing: with no frame drawn, that, whatever else the rows hold. */
        const char *none = d->n_drawn == 0 ? "no frame was drawn" : NULL;

        text_client_rate(f, d);
        text_spread(f, "end->drawn      ", &d->end_to_drawn, d->n_end_to_drawn, none ?: "no frame end times");
        text_spread(f, "drawn->presented ", &d->drawn_to_presented, d->n_drawn_to_presented,
                    none ?: "no presentation times");
        text_spread(f, "FRAME_DRAWN msg ", &d->drawn_message, d->n_drawn_message, none ?: "no arrival times");
        text_spread(f, "FRAME_TIMINGS msg ", &d->timings_message, d->n_timings_message, none ?: "no arrival times");
        fputs("compositor clock ", f);
        if (d->n_clock == 0)
                fprintf(f, "n/a (%s)", none ?: "no drawn times as sent");
        else if (d->n_clock_identity == d->n_clock)
                fprintf(f, "identity: the drawn times as sent are CLOCK_MONOTONIC us (%zu of %zu frames)",
                        d->n_clock_identity, d->n_clock);
        else
                fprintf(f, "not identity: sent - converted p50 %.3f ms (identity on %zu of %zu frames)",
                        d->clock_offset.p50_ms, d->n_clock_identity, d->n_clock);
        fputs("\ncausality       ", f);
        if (d->n_causal == 0)
                fprintf(f, "n/a (%s)\n", none ?: "no frame end or arrival times");
        else
                fprintf(f, "%zu of %zu drawn times outside [frame end, FRAME_DRAWN arrival] by more than "
                        "their bound\n", d->n_causal_outside, d->n_causal);
}

/* "LABEL mean … ms, max … ms (WHAT N frames)"; without a frame to compute it from, what was
 * missing rather than "mean n/a ms, max n/a ms" (a frame log timed by drawn times has neither
 * time). */
static void text_mean_max(FILE *f, const char *label, double mean_ms, double max_ms, size_t n, const char *what,
                          const char *why_none) {
        if (n == 0) {
                fprintf(f, "%sn/a (%s)\n", label, why_none);
                return;
        }
        fprintf(f, "%smean %.3f ms, max %.3f ms (%s%zu frames)\n", label, mean_ms, max_ms, what, n);
}

static void text_section(FILE *f, const FramesSection *sec) {
        const FramesStats *s = &sec->stats;

        fprintf(f, "frames          %zu", s->n_frames);
        if (!isnan(s->span_s))
                fprintf(f, " over %.3f s", s->span_s);
        fputs("\nFPS            ", f);
        text_ms(f, " ", s->fps);
        if (!isnan(s->fps))
                text_per_second(f, s);
        text_ms(f, "\nframe interval  mean ", s->interval.mean_ms);
        text_spread_rest(f, &s->interval);
        text_ms(f, "\njitter          ", s->jitter_ms);
        fputs(" ms (standard deviation of the intervals)\n", f);
        text_mean_max(f, "present latency ", s->latency_mean_ms, s->latency_max_ms, s->n_latency,
                      "actual - desired present time, ", "no frame has a desired present time");
        text_mean_max(f, "ready->present  ", s->ready_mean_ms, s->ready_max_ms, s->n_ready, "",
                      "no frame has a ready time");
        fputs("late frames     ", f);
        text_count(f, s->late_frames);
        if (s->late_frames >= 0)
                fputs(" (presented more than one refresh period after the desired time)\n", f);
        else if (s->n_latency > 0)
                fputs(" (no refresh period: --refresh-hz gives one)\n", f);
        else
                fputs(" (no frame has a desired present time)\n", f);
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
        if (sec->desktop)
                text_desktop(f, &sec->desktop_stats);
}

void frames_report_text(FILE *f, const FramesReport *r) {
        fprintf(f, "input           %s, %" PRIu64 " dump%s, %" PRIu64 " rows (%" PRIu64
                " pending, %" PRIu64 " unused or repeated)\n", r->format, r->dumps,
                r->dumps == 1 ? "" : "s", r->rows, r->pending, r->dropped);
        if (r->n_sections > 1)
                fprintf(f, "sections        %zu (--window ID shows one window)\n", r->n_sections);
        for (size_t i = 0; i < r->n_sections; i++) {
                const FramesSection *sec = &r->sections[i];

                if (r->n_sections > 1)
                        fputc('\n', f);
                if (sec->desktop)
                        text_window(f, sec);
                text_timed_by(f, sec);
                text_section(f, sec);
        }
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

static void json_spread(FILE *f, const char *key, const FramesSpread *v, size_t n, const char *after) {
        fprintf(f, "\"%s\":{", key);
        json_number(f, "mean", v->mean_ms, ",");
        json_number(f, "p50", v->p50_ms, ",");
        json_number(f, "p90", v->p90_ms, ",");
        json_number(f, "p99", v->p99_ms, ",");
        json_number(f, "min", v->min_ms, ",");
        json_number(f, "max", v->max_ms, ",");
        fprintf(f, "\"frames\":%zu}%s", n, after);
}

void frames_json_string(FILE *f, const char *s) {
        putc('"', f);
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c == '"' || *c == '\\')
                        fprintf(f, "\\%c", *c);
                else if (*c < 0x20)
                        fprintf(f, "\\u%04x", *c);
                else
                        putc(*c, f);
        putc('"', f);
}

static void json_wayland(FILE *f, const FramesSection *sec) {
        const FramesDesktopStats *d = &sec->desktop_stats;

        fputs("\"wayland\":{\"output\":", f);
        if (*sec->window_rows->output)
                frames_json_string(f, sec->window_rows->output);
        else
                fputs("null", f);
        fprintf(f, ",\"rows\":%zu,\"committed\":%zu,\"presented\":%zu,\"discarded\":%zu,", d->n_rows, d->n_drawn,
                d->n_presented, d->n_discarded);
        json_number(f, "client_fps", d->client_fps, ",");
        json_spread(f, "commit_to_presented_ms", &d->drawn_to_presented, d->n_drawn_to_presented, ",");
        fprintf(f, "\"flags\":{\"vsync\":%zu,\"hw_clock\":%zu,\"hw_completion\":%zu,\"zero_copy\":%zu}}",
                d->n_vsync, d->n_hw_clock, d->n_hw_completion, d->n_zero_copy);
}

static void json_desktop(FILE *f, const FramesSection *sec) {
        const FramesDesktopStats *d = &sec->desktop_stats;
        const char *verdict = d->n_clock == 0 ? "null" :
                              d->n_clock_identity == d->n_clock ? "\"identity\"" : "\"not identity\"";

        if (d->wayland) {
                json_wayland(f, sec);
                return;
        }
        fprintf(f, "\"desktop\":{\"rows\":%zu,\"drawn\":%zu,\"not_drawn\":%" PRIu64 ",\"presented\":%zu,",
                d->n_rows, d->n_drawn, sec->not_drawn, d->n_presented);
        json_number(f, "client_fps", d->client_fps, ",");
        json_spread(f, "end_to_drawn_ms", &d->end_to_drawn, d->n_end_to_drawn, ",");
        json_spread(f, "drawn_to_presented_ms", &d->drawn_to_presented, d->n_drawn_to_presented, ",");
        json_spread(f, "frame_drawn_message_ms", &d->drawn_message, d->n_drawn_message, ",");
        json_spread(f, "frame_timings_message_ms", &d->timings_message, d->n_timings_message, ",");
        fprintf(f, "\"compositor_clock\":{\"verdict\":%s,\"frames\":%zu,\"identity\":%zu,", verdict,
                d->n_clock, d->n_clock_identity);
        json_number(f, "offset_p50_ms", d->clock_offset.p50_ms, "},");
        fprintf(f, "\"causality\":{\"frames\":%zu,\"outside\":%zu}}", d->n_causal, d->n_causal_outside);
}

/* The figures of a section, without braces; the keys of the report before windows. */
static void json_figures(FILE *f, const FramesSection *sec) {
        const FramesStats *s = &sec->stats;
        const FramesSpread *i = &s->interval;

        fprintf(f, "\"timed_by\":\"%s\",\"frames\":%zu,", frames_timed_by_name(sec->timed_by), s->n_frames);
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
        json_count(f, "chromium", s->chromium_jank, "}");
        if (sec->desktop) {
                fputc(',', f);
                json_desktop(f, sec);
        }
}

void frames_report_json(FILE *f, const FramesReport *r) {
        /* format is one of the fixed names of frames_format_name() or "mixed": no escaping. */
        fprintf(f, "{\"format\":\"%s\",\"dumps\":%" PRIu64 ",\"rows\":{\"read\":%" PRIu64
                ",\"pending\":%" PRIu64 ",\"dropped\":%" PRIu64 "},", r->format, r->dumps, r->rows,
                r->pending, r->dropped);
        /* One section: its figures at the top too, where they always were. */
        if (r->n_sections == 1) {
                json_figures(f, &r->sections[0]);
                fputc(',', f);
        }
        fputs("\"windows\":[", f);
        for (size_t i = 0; i < r->n_sections; i++) {
                const FramesSection *sec = &r->sections[i];

                fputs(i ? ",{" : "{", f);
                fprintf(f, "\"source\":\"%s\",", sec->desktop ? "frame log" : "android");
                if (sec->window == FRAMES_NO_WINDOW)
                        fputs("\"window\":null,", f);
                else
                        fprintf(f, "\"window\":%" PRId64 ",", sec->window);
                fprintf(f, "\"rows\":{\"read\":%" PRIu64 ",\"pending\":%" PRIu64 ",\"dropped\":%" PRIu64
                        ",\"not_drawn\":%" PRIu64 "},", sec->rows, sec->series->pending, sec->series->dropped,
                        sec->not_drawn);
                json_figures(f, sec);
                fputc('}', f);
        }
        fputs("]}\n", f);
}
