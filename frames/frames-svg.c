/* SPDX-License-Identifier: MIT */

/* The plot of `timeconv frames --plot`: frame intervals over time, gridlines at whole refresh
 * periods, PerfDog and Chromium janks marked; for a window of the frame log, a second panel of
 * its desktop latencies (frame end -> drawn, drawn -> presented) on the same time axis. Past a
 * few thousand points a line becomes one min-max bar per pixel column, so that a day-long
 * capture stays a small file. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "frames-report.h"

#define WIDTH 960
#define HEIGHT 480
#define LEFT 72
#define RIGHT 24
#define TOP 64
#define BOTTOM 56
#define PLOT_W (WIDTH - LEFT - RIGHT)
#define PLOT_H (HEIGHT - TOP - BOTTOM)
#define MAX_GRIDLINES 12
#define MAX_MARKS 20000
/* The desktop panel, below the intervals. */
#define PANEL_TOP (HEIGHT + 16)
#define PANEL_H 200
#define PANEL_HEIGHT (PANEL_TOP + PANEL_H + 48)

typedef struct Axes {
        int64_t t0_ns;
        double span_ns, ymax_ms;
        bool clipped;           /* some intervals are longer than ymax_ms */
} Axes;

static double x_of(const Axes *a, int64_t t_ns) {
        return LEFT + (a->span_ns > 0 ? (double) (t_ns - a->t0_ns) / a->span_ns * PLOT_W : 0);
}

/* Values above the top are drawn on it. */
static double y_of(const Axes *a, double v_ms) {
        return TOP + PLOT_H - (v_ms < a->ymax_ms ? v_ms : a->ymax_ms) / a->ymax_ms * PLOT_H;
}

static double interval_ms(const Frame *frames, size_t i) {
        return (double) (frames[i + 1].present_ns - frames[i].present_ns) / 1e6;
}

/* 1, 2 or 5 times a power of ten, at least raw. */
static double nice_step(double raw) {
        double magnitude;

        if (!(raw > 0))
                return 0;
        magnitude = pow(10, floor(log10(raw)));
        for (double m = 1; m < 10; m = m == 1 ? 2 : m == 2 ? 5 : 10)
                if (m * magnitude >= raw)
                        return m * magnitude;
        return 10 * magnitude;
}

static void gridlines(FILE *f, const Axes *a, const FramesStats *s) {
        double period_ms = s->refresh_ns > 0 ? (double) s->refresh_ns / 1e6 : a->ymax_ms / 4;
        double step = ceil(a->ymax_ms / period_ms / MAX_GRIDLINES);

        for (double k = step; k * period_ms <= a->ymax_ms * 1.0001; k += step) {
                double y = y_of(a, k * period_ms);

                fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
                        LEFT, y, LEFT + PLOT_W, y);
                fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n",
                        LEFT - 6, y + 4, k * period_ms);
                if (s->refresh_ns > 0)
                        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"small\">%g&#215;</text>\n",
                                LEFT + PLOT_W + 2, y + 4, k);
        }
        for (double step_s = nice_step(a->span_ns / 1e9 / 5), t_s = 0; t_s * 1e9 <= a->span_ns * 1.0001;
             t_s += step_s) {
                double x = LEFT + (a->span_ns > 0 ? t_s * 1e9 / a->span_ns * PLOT_W : 0);

                fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n",
                        x, TOP + PLOT_H, x, TOP + PLOT_H + 4);
                fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                        x, TOP + PLOT_H + 18, t_s);
                if (step_s <= 0)
                        break;
        }
        if (a->clipped)
                fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"small\" text-anchor=\"end\">longer intervals "
                        "drawn at the top</text>\n", LEFT + PLOT_W, 40);
}

static void line(FILE *f, const Frame *frames, size_t m, const Axes *a) {
        if (m <= 2 * PLOT_W) {
                fputs("<polyline class=\"intervals\" points=\"", f);
                for (size_t i = 0; i < m; i++)
                        fprintf(f, "%.1f,%.1f ", x_of(a, frames[i + 1].present_ns),
                                y_of(a, interval_ms(frames, i)));
                fputs("\"/>\n", f);
                return;
        }
        /* One bar per pixel column from its shortest to its longest interval. */
        fputs("<path class=\"intervals\" d=\"", f);
        for (size_t i = 0; i < m;) {
                int column = (int) (x_of(a, frames[i + 1].present_ns) - LEFT);
                double lo = INFINITY, hi = -INFINITY;

                for (; i < m && (int) (x_of(a, frames[i + 1].present_ns) - LEFT) == column; i++) {
                        lo = fmin(lo, interval_ms(frames, i));
                        hi = fmax(hi, interval_ms(frames, i));
                }
                fprintf(f, "M%d,%.1fV%.1f", LEFT + column, y_of(a, lo), y_of(a, hi) - 0.5);
        }
        fputs("\"/>\n", f);
}

static void marks(FILE *f, const Frame *frames, size_t m, const Axes *a, const uint8_t *mark) {
        size_t drawn = 0;

        for (size_t i = 0; i < m && drawn < MAX_MARKS; i++) {
                double x = x_of(a, frames[i + 1].present_ns), y = y_of(a, interval_ms(frames, i));

                if (mark[i] & FRAMES_MARK_PERFDOG_BIGJANK)
                        fprintf(f, "<circle class=\"perfdog-bigjank\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"/>\n", x, y);
                else if (mark[i] & FRAMES_MARK_PERFDOG_JANK)
                        fprintf(f, "<circle class=\"perfdog-jank\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>\n", x, y);
                if (mark[i] & FRAMES_MARK_CHROMIUM)
                        fprintf(f, "<path class=\"chromium-jank\" d=\"M%.1f,%.1fl-4,-8h8z\"/>\n", x, y - 6);
                drawn += mark[i] != 0;
        }
}

static void legend(FILE *f, const FramesStats *s) {
        fprintf(f, "<text x=\"%d\" y=\"20\" class=\"title\">%zu frames", LEFT, s->n_frames);
        if (!isnan(s->fps))
                fprintf(f, ", %.2f FPS, PerfDog Jank %" PRId64 " (BigJank %" PRId64 ")",
                        s->fps, s->perfdog_jank, s->perfdog_bigjank);
        if (s->chromium_jank >= 0)
                fprintf(f, ", Chromium jank %" PRId64, s->chromium_jank);
        fputs("</text>\n", f);
        fprintf(f, "<circle class=\"perfdog-jank\" cx=\"%d\" cy=\"36\" r=\"4\"/>"
                "<text x=\"%d\" y=\"40\">PerfDog Jank</text>\n", LEFT + 4, LEFT + 12);
        fprintf(f, "<circle class=\"perfdog-bigjank\" cx=\"%d\" cy=\"36\" r=\"5\"/>"
                "<text x=\"%d\" y=\"40\">PerfDog BigJank</text>\n", LEFT + 124, LEFT + 132);
        fprintf(f, "<path class=\"chromium-jank\" d=\"M%d,40l-4,-8h8z\"/>"
                "<text x=\"%d\" y=\"40\">Chromium jank</text>\n", LEFT + 264, LEFT + 272);
        if (s->refresh_ns > 0)
                fprintf(f, "<text x=\"%d\" y=\"40\">gridlines: refresh period %.3f ms</text>\n",
                        LEFT + 400, (double) s->refresh_ns / 1e6);
}

/* One latency of the rows over time: the value for row i, FRAMES_NO_TIME when it has none. */
typedef int64_t (*LatencyOf)(const FramesWindow *w, size_t i);

static int64_t end_to_drawn(const FramesWindow *w, size_t i) {
        return frames_window_latency(w, i, FRAMES_END_TO_DRAWN);
}

static int64_t drawn_to_presented(const FramesWindow *w, size_t i) {
        const Frame *row = &w->frames[i];

        return row->desired_ns != FRAMES_NO_TIME && row->present_ns != FRAMES_NO_TIME ?
                row->present_ns - row->desired_ns : FRAMES_NO_TIME;
}

static double panel_y(double v_ms, double ymax_ms) {
        double v = v_ms < 0 ? 0 : v_ms < ymax_ms ? v_ms : ymax_ms;

        return PANEL_TOP + PANEL_H - v / ymax_ms * PANEL_H;
}

/* x: the drawn time on the intervals' axis, kept inside the plot. */
static double panel_x(const Axes *a, const FramesWindow *w, size_t i) {
        double x = x_of(a, w->frames[i].desired_ns);

        return x < LEFT ? LEFT : x > LEFT + PLOT_W ? LEFT + PLOT_W : x;
}

static void latency_line(FILE *f, const Axes *a, const FramesWindow *w, LatencyOf of, const char *cls,
                         double ymax_ms) {
        size_t n = 0;

        for (size_t i = 0; i < w->n_rows; i++)
                n += of(w, i) != FRAMES_NO_TIME;
        if (n == 0)
                return;
        fprintf(f, "<path class=\"%s\" d=\"", cls);
        if (n <= 2 * PLOT_W) {
                bool first = true;

                for (size_t i = 0; i < w->n_rows; i++) {
                        int64_t v = of(w, i);

                        if (v == FRAMES_NO_TIME)
                                continue;
                        fprintf(f, "%c%.1f,%.1f", first ? 'M' : 'L', panel_x(a, w, i),
                                panel_y((double) v / 1e6, ymax_ms));
                        first = false;
                }
        } else
                /* One bar per pixel column, as the intervals. */
                for (size_t i = 0; i < w->n_rows;) {
                        int column = (int) (panel_x(a, w, i) - LEFT);
                        double lo = INFINITY, hi = -INFINITY;

                        for (; i < w->n_rows && (int) (panel_x(a, w, i) - LEFT) == column; i++) {
                                int64_t v = of(w, i);

                                if (v == FRAMES_NO_TIME)
                                        continue;
                                lo = fmin(lo, (double) v / 1e6);
                                hi = fmax(hi, (double) v / 1e6);
                        }
                        if (lo <= hi)
                                fprintf(f, "M%d,%.1fV%.1f", LEFT + column, panel_y(lo, ymax_ms),
                                        panel_y(hi, ymax_ms) - 0.5);
                }
        fputs("\"/>\n", f);
}

static void desktop_panel(FILE *f, const Axes *a, const FramesSection *sec) {
        const FramesDesktopStats *d = &sec->desktop_stats;
        double ymax_ms = 1;

        /* Clipped like the intervals: a pause of seconds would flatten the rest. */
        if (d->n_end_to_drawn > 0)
                ymax_ms = fmax(ymax_ms, fmin(d->end_to_drawn.max_ms, 4 * d->end_to_drawn.p99_ms));
        if (d->n_drawn_to_presented > 0)
                ymax_ms = fmax(ymax_ms, fmin(d->drawn_to_presented.max_ms, 4 * d->drawn_to_presented.p99_ms));
        ymax_ms *= 1.05;

        fprintf(f, "<path class=\"axis\" d=\"M%d,%dV%dH%d\"/>\n", LEFT, PANEL_TOP, PANEL_TOP + PANEL_H,
                LEFT + PLOT_W);
        for (int k = 0; k <= 4; k++) {
                double v = ymax_ms * k / 4, y = panel_y(v, ymax_ms);

                fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT, y,
                        LEFT + PLOT_W, y);
                fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", LEFT - 6, y + 4, v);
        }
        fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>\n",
                PANEL_TOP + PANEL_H / 2);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"title\">desktop latencies</text>"
                "<path class=\"end-to-drawn\" d=\"M%d,%dh16\"/><text x=\"%d\" y=\"%d\">frame end -&gt; drawn "
                "(p50 %.3f ms, %zu frames)</text>"
                "<path class=\"drawn-to-presented\" d=\"M%d,%dh16\"/><text x=\"%d\" y=\"%d\">drawn -&gt; presented "
                "(%s)</text>\n",
                LEFT, PANEL_TOP - 2, LEFT + 170, PANEL_TOP - 6, LEFT + 190, PANEL_TOP - 2,
                d->end_to_drawn.p50_ms, d->n_end_to_drawn, LEFT + 470, PANEL_TOP - 6, LEFT + 490, PANEL_TOP - 2,
                d->n_drawn_to_presented ? "presented" : "no presentation times");
        if (sec->window_rows) {
                latency_line(f, a, sec->window_rows, end_to_drawn, "end-to-drawn", ymax_ms);
                latency_line(f, a, sec->window_rows, drawn_to_presented, "drawn-to-presented", ymax_ms);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the first frame (s), "
                "at the drawn time</text>\n", LEFT + PLOT_W / 2, PANEL_TOP + PANEL_H + 36);
}

static int plot(FILE *f, const Frame *frames, const FramesStats *s, const FramesSection *desktop) {
        size_t m = s->n_frames >= 2 ? s->n_frames - 1 : 0;
        int height = desktop ? PANEL_HEIGHT : HEIGHT;
        Axes a = { .ymax_ms = 1 };

        if (s->n_frames > 0)
                a.t0_ns = frames[0].present_ns;
        if (m > 0) {
                a.span_ns = (double) (frames[m].present_ns - frames[0].present_ns);
                /* One pause of seconds would flatten the rest: clip at four times the p99. */
                a.ymax_ms = fmin(s->interval.max_ms, 4 * s->interval.p99_ms);
                a.ymax_ms = fmax(a.ymax_ms * 1.05, 2 * (double) s->refresh_ns / 1e6);
                a.clipped = s->interval.max_ms > a.ymax_ms;
        }

        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
                "<style>.grid{stroke:#bbb;stroke-dasharray:4 3}.axis{stroke:#000;fill:none}"
                ".intervals{stroke:#1f5fa8;stroke-width:1;fill:none}.perfdog-jank{fill:#f39c12}"
                ".perfdog-bigjank{fill:#d62728}.chromium-jank{fill:#6a3d9a}.small{font-size:10px}"
                ".title{font-size:14px;font-weight:bold}%s</style>\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
                WIDTH, height, WIDTH, height,
                desktop ? ".end-to-drawn{stroke:#e6550d;stroke-width:1;fill:none}"
                          ".drawn-to-presented{stroke:#31a354;stroke-width:1;fill:none}" : "");
        legend(f, s);
        fprintf(f, "<path class=\"axis\" d=\"M%d,%dV%dH%d\"/>\n", LEFT, TOP, TOP + PLOT_H, LEFT + PLOT_W);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the first frame (s)</text>\n",
                LEFT + PLOT_W / 2, HEIGHT - 12);
        fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">"
                "frame interval (ms)</text>\n", TOP + PLOT_H / 2);
        if (m > 0) {
                gridlines(f, &a, s);
                line(f, frames, m, &a);
                marks(f, frames, m, &a, s->marks);
        } else
                fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">fewer than two frames</text>\n",
                        LEFT + PLOT_W / 2, TOP + PLOT_H / 2);
        if (desktop)
                desktop_panel(f, &a, desktop);
        fputs("</svg>\n", f);
        return ferror(f) ? -EIO : 0;
}

int frames_plot_svg(FILE *f, const Frame *frames, const FramesStats *s) {
        return plot(f, frames, s, NULL);
}

int frames_plot_svg_section(FILE *f, const FramesSection *sec) {
        return plot(f, sec->series->frames, &sec->stats, sec->desktop ? sec : NULL);
}
