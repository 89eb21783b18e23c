/* SPDX-License-Identifier: MIT */
#pragma once

/* What `timeconv frames` and its probe print: a text for people, or one JSON object, of
 * sections: Android's merged series, and each window of the frame log on its own. */

#include <stdio.h>

#include "frames-desktop.h"
#include "frames-stats.h"

typedef struct FramesSection {
        int64_t window;                 /* FRAMES_NO_WINDOW: Android's series, or rows without one */
        bool desktop;                   /* a window of the frame log: desktop_stats hold */
        FramesTimedBy timed_by;
        uint64_t rows, not_drawn;       /* rows read; of them, frames never drawn */
        const FramesLog *series;        /* the frames the figures are of */
        const FramesWindow *window_rows; /* desktop: the window's rows (the plot's latencies) */
        FramesLog *owned;               /* series, when the section made it */
        FramesStats stats;
        FramesDesktopStats desktop_stats;
} FramesSection;

typedef struct FramesReport {
        const char *format;             /* the inputs' format name, or "mixed" */
        uint64_t dumps, rows, pending, dropped;
        FramesSection *sections;
        size_t n_sections;
} FramesReport;

/* The sections of log. Only_window: the section of that window alone (FRAMES_NO_WINDOW: every
 * section). default_refresh_ns as frames_stats_compute() takes it. format must outlive the
 * report. -ENOMEM, or -ENOENT when the log has no window only_window. */
int frames_report_new(const FramesLog *log, const char *format, int64_t default_refresh_ns,
                      int64_t only_window, FramesReport **ret);
FramesReport *frames_report_free(FramesReport *r);

/* Whether any figure of any section could be computed. */
bool frames_report_any(const FramesReport *r);

void frames_report_text(FILE *f, const FramesReport *r);
void frames_report_json(FILE *f, const FramesReport *r);

/* s as a JSON string (quotes, backslashes and control characters escaped): a name from a
 * compositor or an X server, which the report and the probes print. */
void frames_json_string(FILE *f, const char *s);

/* The plot of a section (frames_plot_svg() and, for a window of the frame log, a panel of its
 * desktop latencies below). 0, or -EIO when writing to f failed. */
int frames_plot_svg_section(FILE *f, const FramesSection *sec);

/* The `timeconv frames` command (cli-frames.c), for timeconv-cli.c's dispatch. */
int cli_cmd_frames(int argc, char **argv);
