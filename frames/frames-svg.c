/* SPDX-License-Identifier: MIT */

/* The plot of `timeconv frames --plot`: frame intervals over time, gridlines at whole refresh
 * periods, PerfDog and Chromium janks marked; for a window of the frame log, a second panel of
 * its desktop latencies (frame end -> drawn, drawn -> presented) on the same time axis, its
 * points in the order of their drawn times and the line broken across a pause. Axes are
 * labelled at 1-2-5 steps. Past a few thousand points a line becomes one min-max bar per pixel
 * column, so that a day-long capture stays a small file. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
#define PANEL_TOP (HEIGHT + 48)
#define PANEL_H 168
#define PANEL_HEIGHT (PANEL_TOP + PANEL_H + 48)
/* Layout of text without a font at hand: no character of 12 px sans-serif is wider. */
#define CHAR_W 7
/* The rotated axis titles' right edge, which tick labels stay clear of. */
#define TITLE_RIGHT 24
/* A gap between two points of a latency line longer than this many mean spacings is a pause:
 * the line is broken there rather than drawn across it. */
#define PAUSE_SPACINGS 4

typedef struct Axes {
        int64_t t0_ns;
        double span_ns, ymax_ms;
        double step_ms;         /* of the y labels */
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

/* The step of about n ticks from 0 to max: 1, 2 or 5 times a power of ten. */
static double tick_step(double max, int n) {
        return nice_step(max / n);
}

/* max rounded up to a whole step: the top tick is the top of the axis. */
static double round_up(double max, double step) {
        return step > 0 ? ceil(max / step - 1e-9) * step : max;
}

/* Labels at 0, step, 2 step, ... up to max on a vertical axis from top to top + height. A label
 * wider than the room left of the axis (clear of its title) is not drawn. */
static void y_ticks(FILE *f, double max, double step, int top, int height) {
        if (!(step > 0) || !(max > 0))
                return;
        for (double k = 0; k * step <= max * (1 + 1e-9); k++) {
                double y = top + height - k * step / max * height;
                char label[32];

                snprintf(label, sizeof(label), "%g", k * step);
                fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT - 4, y,
                        LEFT, y);
                if (LEFT - 6 - (int) strlen(label) * CHAR_W >= TITLE_RIGHT)
                        fprintf(f, "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                                LEFT - 6, y + 4, label);
        }
}

/* Seconds since the first frame, below an axis at y. */
static void x_ticks(FILE *f, const Axes *a, int y) {
        double step_s = nice_step(a->span_ns / 1e9 / 5);

        for (double k = 0; k * step_s * 1e9 <= a->span_ns * 1.0001; k++) {
                double x = LEFT + (a->span_ns > 0 ? k * step_s * 1e9 / a->span_ns * PLOT_W : 0);

                fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, y, x, y + 4);
                fprintf(f, "<text class=\"xtick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, y + 18,
                        k * step_s);
                if (!(step_s > 0))
                        break;
        }
}

/* The intervals' axes: 1-2-5 labels on the left; gridlines at whole refresh periods, counted
 * on the right (or at the labels when the refresh period is not known). */
static void gridlines(FILE *f, const Axes *a, const FramesStats *s) {
        double period_ms = (double) s->refresh_ns / 1e6;
        double step = a->step_ms;

        y_ticks(f, a->ymax_ms, step, TOP, PLOT_H);
        if (s->refresh_ns > 0) {
                double every = ceil(a->ymax_ms / period_ms / MAX_GRIDLINES);

                for (double k = every; k * period_ms <= a->ymax_ms * 1.0001; k += every) {
                        double y = y_of(a, k * period_ms);

                        fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
                                LEFT, y, LEFT + PLOT_W, y);
                        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"small\">%g&#215;</text>\n",
                                LEFT + PLOT_W + 2, y + 4, k);
                }
        } else
                for (double k = 1; step > 0 && k * step <= a->ymax_ms * (1 + 1e-9); k++) {
                        double y = y_of(a, k * step);

                        fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
                                LEFT, y, LEFT + PLOT_W, y);
                }
        x_ticks(f, a, TOP + PLOT_H);
        if (a->clipped)
                fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"small\" text-anchor=\"end\">longer intervals "
                        "drawn at the top</text>\n", LEFT + PLOT_W, TOP - 6);
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

/* Legend entries in a row from x0 to the plot's right edge, the next row 16 px lower when one
 * does not fit: entries never overlap, whatever their text. */
typedef struct Flow {
        int x0, x, y;
} Flow;

/* The next entry: its swatch's x (20 px before the text) and its text's baseline. */
static void flow_next(Flow *flow, const char *text, int *ret_x, int *ret_y) {
        int width = 20 + (int) strlen(text) * CHAR_W;

        if (flow->x > flow->x0 && flow->x + width > LEFT + PLOT_W) {
                flow->x = flow->x0;
                flow->y += 16;
        }
        *ret_x = flow->x;
        *ret_y = flow->y;
        flow->x += width + 16;
}

static void legend(FILE *f, const FramesStats *s) {
        const char *entries[] = { "PerfDog Jank", "PerfDog BigJank", "Chromium jank" };
        Flow flow = { .x0 = LEFT, .x = LEFT, .y = 40 };
        char refresh[64];
        int x, y;

        fprintf(f, "<text x=\"%d\" y=\"20\" class=\"title\">%zu frames", LEFT, s->n_frames);
        if (!isnan(s->fps))
                fprintf(f, ", %.2f FPS, PerfDog Jank %" PRId64 " (BigJank %" PRId64 ")",
                        s->fps, s->perfdog_jank, s->perfdog_bigjank);
        if (s->chromium_jank >= 0)
                fprintf(f, ", Chromium jank %" PRId64, s->chromium_jank);
        fputs("</text>\n", f);
        for (size_t i = 0; i < 3; i++) {
                flow_next(&flow, entries[i], &x, &y);
                if (i == 0)
                        fprintf(f, "<circle class=\"perfdog-jank\" cx=\"%d\" cy=\"%d\" r=\"4\"/>", x + 8, y - 4);
                else if (i == 1)
                        fprintf(f, "<circle class=\"perfdog-bigjank\" cx=\"%d\" cy=\"%d\" r=\"5\"/>", x + 8, y - 4);
                else
                        fprintf(f, "<path class=\"chromium-jank\" d=\"M%d,%dl-4,-8h8z\"/>", x + 8, y);
                fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%d\">%s</text>\n", x + 20, y, entries[i]);
        }
        if (s->refresh_ns > 0) {
                snprintf(refresh, sizeof(refresh), "gridlines: refresh period %.3f ms", (double) s->refresh_ns / 1e6);
                flow_next(&flow, refresh, &x, &y);
                fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%d\">%s</text>\n", x + 20, y, refresh);
        }
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

/* x: a drawn time on the intervals' axis, kept inside the plot. */
static double panel_x(const Axes *a, int64_t t_ns) {
        double x = x_of(a, t_ns);

        return x < LEFT ? LEFT : x > LEFT + PLOT_W ? LEFT + PLOT_W : x;
}

typedef struct Point {
        int64_t t_ns;           /* the drawn time */
        size_t row;
        double v_ms;
} Point;

static int compare_points(const void *a, const void *b) {
        const Point *p = a, *q = b;

        if (p->t_ns != q->t_ns)
                return (p->t_ns > q->t_ns) - (p->t_ns < q->t_ns);
        return (p->row > q->row) - (p->row < q->row);
}

/* One latency over the drawn times, in their order: a compositor may stamp a frame earlier than
 * the one before it (mutter's superseded frames), and a line in row order would go back and
 * forth. Broken across a pause: frames piled up behind a stall are drawn together, and a line
 * from before it would read as a rising latency. */
static int latency_line(FILE *f, const Axes *a, const FramesWindow *w, LatencyOf of, const char *cls,
                        double ymax_ms) {
        Point *points;
        size_t n = 0;
        double pause_ns;

        for (size_t i = 0; i < w->n_rows; i++)
                n += of(w, i) != FRAMES_NO_TIME;
        if (n == 0)
                return 0;
        points = calloc(n, sizeof(*points));
        if (!points)
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < w->n_rows; i++) {
                int64_t v = of(w, i);

                if (v != FRAMES_NO_TIME)
                        points[n++] = (Point) { .t_ns = w->frames[i].desired_ns, .row = i, .v_ms = (double) v / 1e6 };
        }
        qsort(points, n, sizeof(*points), compare_points);
        pause_ns = n > 1 ? PAUSE_SPACINGS * (double) (points[n - 1].t_ns - points[0].t_ns) / (double) (n - 1) : 0;

        fprintf(f, "<path class=\"%s\" d=\"", cls);
        if (n <= 2 * PLOT_W)
                for (size_t i = 0; i < n; i++) {
                        bool pause = i == 0 || (double) (points[i].t_ns - points[i - 1].t_ns) > pause_ns;

                        fprintf(f, "%c%.1f,%.1f", pause ? 'M' : 'L', panel_x(a, points[i].t_ns),
                                panel_y(points[i].v_ms, ymax_ms));
                }
        else
                /* One bar per pixel column, as the intervals. */
                for (size_t i = 0; i < n;) {
                        int column = (int) (panel_x(a, points[i].t_ns) - LEFT);
                        double lo = INFINITY, hi = -INFINITY;

                        for (; i < n && (int) (panel_x(a, points[i].t_ns) - LEFT) == column; i++) {
                                lo = fmin(lo, points[i].v_ms);
                                hi = fmax(hi, points[i].v_ms);
                        }
                        fprintf(f, "M%d,%.1fV%.1f", LEFT + column, panel_y(lo, ymax_ms), panel_y(hi, ymax_ms) - 0.5);
                }
        fputs("\"/>\n", f);
        free(points);
        return 0;
}

static int desktop_panel(FILE *f, const Axes *a, const FramesSection *sec) {
        const FramesDesktopStats *d = &sec->desktop_stats;
        Flow flow = { .x0 = LEFT + 170, .x = LEFT + 170, .y = PANEL_TOP - 22 };
        double ymax_ms = 1, step;
        char entry[2][128];
        int x, y, r = 0;

        /* Clipped like the intervals: a pause of seconds would flatten the rest. */
        if (d->n_end_to_drawn > 0)
                ymax_ms = fmax(ymax_ms, fmin(d->end_to_drawn.max_ms, 4 * d->end_to_drawn.p99_ms));
        if (d->n_drawn_to_presented > 0)
                ymax_ms = fmax(ymax_ms, fmin(d->drawn_to_presented.max_ms, 4 * d->drawn_to_presented.p99_ms));
        step = tick_step(ymax_ms * 1.05, 4);
        ymax_ms = round_up(ymax_ms * 1.05, step);

        fprintf(f, "<g class=\"panel-desktop\">\n<path class=\"axis\" d=\"M%d,%dV%dH%d\"/>\n", LEFT, PANEL_TOP,
                PANEL_TOP + PANEL_H, LEFT + PLOT_W);
        for (double k = 1; k * step <= ymax_ms * (1 + 1e-9); k++) {
                double yk = panel_y(k * step, ymax_ms);

                fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT, yk,
                        LEFT + PLOT_W, yk);
        }
        y_ticks(f, ymax_ms, step, PANEL_TOP, PANEL_H);
        x_ticks(f, a, PANEL_TOP + PANEL_H);
        fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>\n",
                PANEL_TOP + PANEL_H / 2);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"title\">desktop latencies</text>\n", LEFT, PANEL_TOP - 22);
        snprintf(entry[0], sizeof(entry[0]), "frame end -&gt; drawn (p50 %.3f ms, %zu frames)", d->end_to_drawn.p50_ms,
                 d->n_end_to_drawn);
        /* A Wayland row's commit stands where the drawn time stands: named as what it is. */
        snprintf(entry[1], sizeof(entry[1]), "%s -&gt; presented (%s)", d->wayland ? "commit" : "drawn",
                 d->n_drawn_to_presented ? "presented" : "no presentation times");
        /* Wayland rows have no frame end: no entry for a line that cannot be. */
        for (size_t i = d->wayland ? 1 : 0; i < 2; i++) {
                /* Laid out by its length on screen: the entity is one character. */
                char shown[128];

                snprintf(shown, sizeof(shown), "%.*s>%s", (int) (strstr(entry[i], "&gt;") - entry[i]), entry[i],
                         strstr(entry[i], "&gt;") + 4);
                flow_next(&flow, shown, &x, &y);
                fprintf(f, "<path class=\"%s\" d=\"M%d,%dh16\"/><text class=\"legend\" x=\"%d\" y=\"%d\">%s</text>\n",
                        i == 0 ? "end-to-drawn" : "drawn-to-presented", x, y - 4, x + 20, y, entry[i]);
        }
        if (sec->window_rows) {
                r = latency_line(f, a, sec->window_rows, end_to_drawn, "end-to-drawn", ymax_ms);
                if (r >= 0)
                        r = latency_line(f, a, sec->window_rows, drawn_to_presented, "drawn-to-presented", ymax_ms);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the first frame (s), "
                "at the %s time</text>\n</g>\n", LEFT + PLOT_W / 2, PANEL_TOP + PANEL_H + 36,
                d->wayland ? "commit" : "drawn");
        return r;
}

static int plot(FILE *f, const Frame *frames, const FramesStats *s, const FramesSection *desktop) {
        size_t m = s->n_frames >= 2 ? s->n_frames - 1 : 0;
        int height = desktop ? PANEL_HEIGHT : HEIGHT;
        Axes a = { .ymax_ms = 1 };
        int r = 0;

        if (s->n_frames > 0)
                a.t0_ns = frames[0].present_ns;
        if (m > 0) {
                a.span_ns = (double) (frames[m].present_ns - frames[0].present_ns);
                /* One pause of seconds would flatten the rest: clip at four times the p99. */
                a.ymax_ms = fmin(s->interval.max_ms, 4 * s->interval.p99_ms);
                a.ymax_ms = fmax(a.ymax_ms * 1.05, 2 * (double) s->refresh_ns / 1e6);
                a.step_ms = tick_step(a.ymax_ms, 5);
                a.ymax_ms = round_up(a.ymax_ms, a.step_ms);
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
        fputs("<g class=\"panel-intervals\">\n", f);
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
        fputs("</g>\n", f);
        if (desktop)
                r = desktop_panel(f, &a, desktop);
        fputs("</svg>\n", f);
        if (r < 0)
                return r;
        return ferror(f) ? -EIO : 0;
}

int frames_plot_svg(FILE *f, const Frame *frames, const FramesStats *s) {
        return plot(f, frames, s, NULL);
}

int frames_plot_svg_section(FILE *f, const FramesSection *sec) {
        return plot(f, sec->series->frames, &sec->stats, sec->desktop ? sec : NULL);
}
