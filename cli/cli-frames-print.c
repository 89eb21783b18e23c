/* SPDX-License-Identifier: MIT */

/* A frame report as `timeconv frames` prints it, whether it read a log or the probe made one. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli-frames-print.h"
#include "cli.h"

static int write_plot(const char *path, const FramesReport *r) {
        FILE *f;
        int k;

        /* One picture: the first section (--window chooses another). */
        if (r->n_sections == 0)
                return 0;
        f = fopen(path, "we");
        if (!f) {
                fprintf(stderr, "timeconv: %s: %s\n", path, strerror(errno));
                return EXIT_IOERR;
        }
        k = frames_plot_svg_section(f, &r->sections[0]);
        if (fclose(f) != 0 || k < 0) {
                fprintf(stderr, "timeconv: %s: cannot write the plot\n", path);
                return EXIT_IOERR;
        }
        return 0;
}

int cli_frames_print(const FramesReport *r, bool json, const char *plot) {
        int status = 0;

        if (json)
                frames_report_json(stdout, r);
        else
                frames_report_text(stdout, r);
        if (plot)
                status = write_plot(plot, r);
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "timeconv: cannot write: %s\n", strerror(errno));
                return EXIT_IOERR;
        }
        if (status == 0 && !frames_report_any(r)) {
                fputs("timeconv: no figure could be computed (fewer than two frames and no latency)\n", stderr);
                return EXIT_FAILURE;
        }
        return status;
}
