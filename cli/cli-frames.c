/* SPDX-License-Identifier: MIT */

/* timeconv frames: frame statistics from SurfaceFlinger --latency dumps, gfxinfo framestats or
 * libtimeconv's frame log, read from the files given (in order, merged) or standard input. It
 * needs no daemon: the times are all CLOCK_MONOTONIC already. With --probe it measures the
 * running compositor instead (cli-probe.c). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"
#include "cli-probe.h"
#include "cli.h"
#include "frames-report.h"
#include "frames-stats.h"

#define STDIN_NAME "standard input"

typedef struct Frames {
        FramesLog *log;
        FramesFormat format;    /* of the inputs so far; FRAMES_FORMAT_UNKNOWN until one */
        bool mixed;
        CliLines lines;         /* 1 MiB: the struct lives on the heap */
} Frames;

/* Reads one input into the log: 0 or an exit status. */
static int read_input(Frames *c, const char *name, int fd) {
        FramesParser *p = NULL;
        FramesError error = {};
        const char *line;
        size_t size;
        int r;

        r = frames_parser_new(c->log, &p);
        if (r < 0)
                goto oom;
        cli_lines_init(&c->lines, fd);
        while ((r = cli_lines_next(&c->lines, &line, &size)) > 0) {
                if (r == CLI_LINE_TOO_LONG) {
                        r = -EBADMSG;
                        error.line = frames_parser_lines(p) + 1;
                        snprintf(error.message, sizeof(error.message), "line too long");
                        break;
                }
                r = frames_parser_line(p, line, size, &error);
                if (r < 0)
                        break;
        }
        if (r == 0)
                r = frames_parser_finish(p, &error);
        if (r >= 0 && frames_parser_format(p) != FRAMES_FORMAT_UNKNOWN) {
                c->mixed |= c->format != FRAMES_FORMAT_UNKNOWN && c->format != frames_parser_format(p);
                c->format = frames_parser_format(p);
        }
        frames_parser_free(p);
        if (r == -ENOMEM)
                goto oom;
        if (r == -EBADMSG) {
                if (error.line > 0)
                        fprintf(stderr, "timeconv: %s:%u: %s\n", name, error.line, error.message);
                else
                        fprintf(stderr, "timeconv: %s: %s\n", name, error.message);
                return EXIT_DATAERR;
        }
        if (r < 0) {
                fprintf(stderr, "timeconv: %s: cannot read: %s\n", name, strerror(-r));
                return EXIT_NOINPUT;
        }
        return 0;
oom:
        fputs("timeconv: out of memory\n", stderr);
        return EXIT_FAILURE;
}

static int read_file(Frames *c, const char *name) {
        int fd, status;

        if (strcmp(name, "-") == 0)
                return read_input(c, STDIN_NAME, STDIN_FILENO);
        fd = open(name, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "timeconv: %s: %s\n", name, strerror(errno));
                return EXIT_NOINPUT;
        }
        status = read_input(c, name, fd);
        close(fd);
        return status;
}

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

static int report(Frames *c, bool json, const char *plot, int64_t refresh_ns, int64_t window) {
        const char *format = c->mixed ? "mixed" : frames_format_name(c->format);
        FramesReport *r;
        int k, status;

        k = frames_report_new(c->log, format, refresh_ns, window, &r);
        if (k == -ENOENT) {
                fprintf(stderr, "timeconv: no window 0x%" PRIx64 " in the frame log\n", (uint64_t) window);
                return EXIT_FAILURE;
        }
        if (k < 0) {
                fputs("timeconv: out of memory\n", stderr);
                return EXIT_FAILURE;
        }
        status = cli_frames_print(r, json, plot);
        frames_report_free(r);
        return status;
}

static int parse_hz(const char *s, int64_t *ret_refresh_ns) {
        double hz;

        if (parse_double(s, 1, 10000, &hz) < 0)
                return -EINVAL;
        *ret_refresh_ns = llround(1e9 / hz);
        return 0;
}

int cli_cmd_frames(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "plot", required_argument, NULL, 'p' },
                { "refresh-hz", required_argument, NULL, 'r' },
                { "window", required_argument, NULL, 'w' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *plot = NULL;
        int64_t refresh_ns = 0, window = FRAMES_NO_WINDOW;
        bool json = false;
        int opt, status = 0;
        Frames *c;

        /* The probe has options of its own. */
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strcmp(argv[i], "--probe") == 0)
                        return cli_probe(argc, argv);

        while ((opt = getopt_long(argc, argv, "jp:r:w:h", options, NULL)) >= 0)
                switch (opt) {
                case 'j':
                        json = true;
                        break;
                case 'p':
                        plot = optarg;
                        break;
                case 'r':
                        if (parse_hz(optarg, &refresh_ns) < 0)
                                return cli_usage_error("bad --refresh-hz '%s' (1 to 10000)", optarg);
                        break;
                case 'w': {
                        char *end;

                        errno = 0;
                        window = (int64_t) strtoll(optarg, &end, 0);
                        if (errno != 0 || end == optarg || *end != '\0' || window < 0 || window > UINT32_MAX)
                                return cli_usage_error("bad --window '%s' (an X window id: 0x1a00003, 27262979)",
                                                       optarg);
                        break;
                }
                case 'h':
                        cli_help(stdout);
                        return 0;
                case 'V':
                        printf("timeconv %s\n", timeconv_version());
                        return 0;
                default:
                        return cli_usage_error("%s", "bad option for 'frames'");
                }

        c = calloc(1, sizeof(*c));
        if (!c || frames_log_new(&c->log) < 0) {
                free(c);
                fputs("timeconv: out of memory\n", stderr);
                return EXIT_FAILURE;
        }
        if (optind == argc)
                status = read_file(c, "-");
        for (int i = optind; i < argc && status == 0; i++)
                status = read_file(c, argv[i]);
        if (status == 0)
                status = report(c, json, plot, refresh_ns, window);
        frames_log_free(c->log);
        free(c);
        return status;
}
