/* SPDX-License-Identifier: MIT */

/* The plot (frames/frames-svg.c) of a frame log whose compositor stalls: 200 frames at 60 Hz,
 * twenty of them piled up behind a stall of a third of a second and drawn together, each
 * stamped 50 us earlier than the one before (as mutter stamps superseded frames). Checked on
 * the SVG text: the y labels of both panels are multiples of one 1-2-5 step and clear of the
 * axis title; the lower panel has x labels; no two legend entries overlap; the end->drawn line
 * runs in the order of the drawn times and is broken at the stall, not drawn across it.
 * Widths are estimated at 7 px a character, the most a 12 px sans-serif character takes. */

#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames-report.h"
#include "tap.h"

#define CHAR_W 7
#define TITLE_RIGHT 24
#define N_FRAMES 200
#define STALL_FIRST 100
#define STALL_LAST 119
#define PERIOD_NS 16666667

typedef struct Text {
        double x, y;
        char text[256];         /* entities decoded */
} Text;

/* The frame log. */
static char *make_log(size_t *ret_size) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        int64_t stall_drawn_ns = INT64_C(1000000000) + (int64_t) STALL_LAST * PERIOD_NS + 1000000 + 5000000;

        if (!f)
                return NULL;
        for (int k = 0; k < N_FRAMES; k++) {
                int64_t begin_ns = INT64_C(1000000000) + (int64_t) k * PERIOD_NS, end_ns = begin_ns + 1000000;
                int64_t drawn_ns = end_ns + 3000000;

                if (k >= STALL_FIRST && k <= STALL_LAST)
                        drawn_ns = stall_drawn_ns + (int64_t) (STALL_LAST - k) * 50000;
                fprintf(f, "{\"window\":1,\"counter\":%d,\"begin_ns\":%lld,\"end_ns\":%lld,\"drawn_ns\":%lld,"
                        "\"drawn_uncertainty_ns\":1000,\"refresh_interval_ns\":%d,\"drawn_received_ns\":%lld}\n",
                        4 * (k + 1), (long long) begin_ns, (long long) end_ns, (long long) drawn_ns, PERIOD_NS,
                        (long long) drawn_ns + 200000);
        }
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        *ret_size = size;
        return text;
}

static double attr(const char *element, const char *name) {
        char key[32];
        const char *p;

        snprintf(key, sizeof(key), " %s=\"", name);
        p = strstr(element, key);
        return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* The <text class="cls"> elements of svg from start to end. */
static size_t texts(const char *start, const char *end, const char *cls, Text *ret, size_t max) {
        char key[64];
        size_t n = 0;

        snprintf(key, sizeof(key), "<text class=\"%s\"", cls);
        for (const char *p = strstr(start, key); p && p < end && n < max; p = strstr(p + 1, key)) {
                const char *open = strchr(p, '>'), *close = open ? strstr(open, "</text>") : NULL;
                size_t k = 0;

                if (!close)
                        break;
                ret[n] = (Text) { .x = attr(p, "x"), .y = attr(p, "y") };
                for (const char *c = open + 1; c < close && k + 1 < sizeof(ret[n].text); c++) {
                        if (*c == '&') {
                                const char *semi = strchr(c, ';');

                                ret[n].text[k++] = '?';
                                c = semi && semi < close ? semi : c;
                        } else
                                ret[n].text[k++] = *c;
                }
                ret[n].text[k] = '\0';
                n++;
        }
        return n;
}

/* A step of 1, 2 or 5 times a power of ten. */
static bool is_125(double step) {
        double m;

        if (!(step > 0))
                return false;
        m = step / pow(10, floor(log10(step) + 1e-9));
        return fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6;
}

static void check_y_labels(const char *what, const char *start, const char *end) {
        Text t[64];
        size_t n = texts(start, end, "ytick", t, 64), bad = 0, crowded = 0;
        double step;

        ok(n >= 3, "%s: %zu y labels", what, n);
        if (n < 3)
                return;
        step = strtod(t[1].text, NULL) - strtod(t[0].text, NULL);
        ok(is_125(step), "%s: the y step %g is 1, 2 or 5 times a power of ten", what, step);
        for (size_t i = 0; i < n; i++) {
                double v = strtod(t[i].text, NULL);

                if (fabs(v / step - round(v / step)) > 1e-6 || fabs(v - (double) i * step) > 1e-6 * step) {
                        if (bad++ < 3)
                                diag("%s: label %zu is %s", what, i, t[i].text);
                }
                /* Anchored at its end: its start is x - width. */
                crowded += t[i].x - (double) strlen(t[i].text) * CHAR_W < TITLE_RIGHT;
        }
        ok(bad == 0, "%s: every y label is a whole multiple of the step, in order", what);
        ok(crowded == 0, "%s: no y label reaches the axis title", what);
}

static void check_legend(const char *svg) {
        Text t[32];
        size_t n = texts(svg, svg + strlen(svg), "legend", t, 32), overlaps = 0;

        ok(n >= 5, "%zu legend entries", n);
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        double wi = (double) strlen(t[i].text) * CHAR_W, wj = (double) strlen(t[j].text) * CHAR_W;
                        bool apart = t[i].x + wi <= t[j].x || t[j].x + wj <= t[i].x || fabs(t[i].y - t[j].y) >= 12;

                        if (!apart && overlaps++ < 3)
                                diag("'%s' at %g,%g and '%s' at %g,%g overlap", t[i].text, t[i].x, t[i].y, t[j].text,
                                     t[j].x, t[j].y);
                }
        is_int(overlaps, 0, "no two legend entries overlap");
}

/* The end->drawn line (not the legend's swatch, which is "M x,y h16"). */
static void check_line(const char *svg) {
        const char *key = "<path class=\"end-to-drawn\" d=\"", *p;
        size_t points = 0, moves = 0, backwards = 0;
        double last_x = -INFINITY;

        /* The swatch's d has an 'h' before its closing quote; the line's has none. */
        for (p = strstr(svg, key); p; p = strstr(p + 1, key)) {
                const char *d = p + strlen(key);

                if (d[strcspn(d, "h\"")] == '"')
                        break;
        }
        ok(p, "the end->drawn line is there");
        if (!p)
                return;
        for (p += strlen(key); *p && *p != '"';) {
                char command = *p++;
                char *after;
                double x = strtod(p, &after);

                if ((command != 'M' && command != 'L') || after == p || *after != ',')
                        break;
                strtod(after + 1, &after);
                p = after;
                points++;
                moves += command == 'M';
                backwards += x < last_x;
                last_x = x;
        }
        is_int(points, N_FRAMES, "a point per drawn frame");
        is_int(backwards, 0, "the points in the order of their drawn times");
        ok(moves >= 2, "the line is broken at the stall (%zu pieces), not drawn across it as a ramp", moves);
}

/* A Wayland surface's rows (frames-wayland.c): its lower panel is of commit -> presented, named
 * so, and has no frame end -> drawn entry (the rows have no frame end). */
static void test_wayland(void) {
        FramesReport *report = NULL;
        FramesLog *log = NULL;
        FramesError error;
        char *text = NULL, *svg = NULL;
        size_t size = 0, svg_size = 0;
        FILE *f = open_memstream(&text, &size);
        const char *panel;

        for (int k = 0; f && k < 60; k++) {
                int64_t commit_ns = INT64_C(1000000000) + (int64_t) k * PERIOD_NS;

                fprintf(f, "{\"surface\":10,\"counter\":%d,\"begin_ns\":%lld,\"commit_ns\":%lld,\"output\":\"headless\","
                        "\"presented_clock\":4,\"presented_raw_ns\":%lld,\"presented_ns\":%lld,"
                        "\"presented_uncertainty_ns\":40,\"refresh_interval_ns\":%d,\"seq\":0,\"presentation_flags\":0,"
                        "\"discarded\":false,\"feedback_received_ns\":%lld}\n", k, (long long) commit_ns - 500000,
                        (long long) commit_ns, (long long) commit_ns + 5000000, (long long) commit_ns + 6000000, PERIOD_NS,
                        (long long) commit_ns + 6100000);
        }
        ok(f && fclose(f) == 0 && frames_log_new(&log) == 0 && frames_parse_text(log, text, size, &error) == 0 &&
           frames_report_new(log, "frame log", 0, FRAMES_NO_WINDOW, &report) == 0 && report->n_sections == 1 &&
           report->sections[0].desktop, "a frame log of one Wayland surface");
        if (!tap_failed_) {
                f = open_memstream(&svg, &svg_size);
                ok(f && frames_plot_svg_section(f, &report->sections[0]) == 0 && fclose(f) == 0, "plotted");
                panel = svg ? strstr(svg, "<g class=\"panel-desktop\">") : NULL;
                ok(panel && strstr(panel, ">commit -&gt; presented (presented)</text>"),
                   "Wayland: the latency is named commit -> presented");
                ok(panel && !strstr(panel, "drawn -&gt;") && !strstr(panel, "frame end"),
                   "Wayland: no drawn -> presented, no frame end -> drawn entry");
                ok(panel && strstr(panel, "at the commit time"), "Wayland: the x axis is at the commit time");
        }
        free(svg);
        free(text);
        frames_report_free(report);
        frames_log_free(log);
}

int main(void) {
        FramesReport *report = NULL;
        FramesLog *log = NULL;
        FramesError error;
        char *text, *svg = NULL;
        size_t size = 0, svg_size = 0;
        const char *panel;
        FILE *f;

        text = make_log(&size);
        ok(text && frames_log_new(&log) == 0 && frames_parse_text(log, text, size, &error) == 0 &&
           frames_report_new(log, "frame log", 0, FRAMES_NO_WINDOW, &report) == 0 && report->n_sections == 1 &&
           report->sections[0].desktop, "a frame log of one window, with a stall");
        if (tap_failed_)
                return done_testing();
        f = open_memstream(&svg, &svg_size);
        ok(f && frames_plot_svg_section(f, &report->sections[0]) == 0 && fclose(f) == 0, "plotted");
        panel = svg ? strstr(svg, "<g class=\"panel-desktop\">") : NULL;
        ok(panel, "with the desktop panel");
        if (!panel)
                return done_testing();

        check_y_labels("intervals", svg, panel);
        check_y_labels("desktop latencies", panel, svg + svg_size);
        {
                Text t[32];
                size_t n = texts(panel, svg + svg_size, "xtick", t, 32);

                ok(n >= 3 && strcmp(t[0].text, "0") == 0, "the desktop panel's x axis has %zu labels from 0", n);
        }
        check_legend(svg);
        check_line(svg);
        ok(strstr(panel, ">drawn -&gt; presented (") && strstr(panel, "at the drawn time"),
           "EWMH rows: drawn -> presented, at the drawn time");
        test_wayland();

        free(svg);
        free(text);
        frames_report_free(report);
        frames_log_free(log);
        return done_testing();
}
