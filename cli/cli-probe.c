/* SPDX-License-Identifier: MIT */

/* timeconv frames --probe: measures the running compositor. The X client (cli-probe-x11.c)
 * draws the frames; here each frame's messages are converted to CLOCK_MONOTONIC through
 * timeconvd (libtimeconv's timeconv_frame_convert()), written as the frame log, and the log is
 * read back through the very parser and report of `timeconv frames`: the probe's summary and
 * `timeconv frames` on its log are the same figures by construction. */

#define _GNU_SOURCE

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli-frames-print.h"
#include "cli-probe-wayland.h"
#include "cli-probe-x11.h"
#include "cli-probe.h"
#include "cli.h"
#include "frames-report.h"
#include "parse-util.h"

#define DEFAULT_FRAMES 300
#define MAX_FRAMES 1000000
#define DEFAULT_WAIT_NS (2 * INT64_C(1000000000))

/* What converts the frames as their messages come (ProbeOptions.on_message). */
typedef struct Converter {
        struct timeconv *tc;
        unsigned n_frames;
        bool said;              /* the first frame drawn was said */
} Converter;

/* Converts f's messages so far; false when timeconvd cannot yet (or any more). */
static bool convert(struct timeconv *tc, ProbeFrame *f) {
        struct timeconv_frame_times times;

        if (timeconv_frame_convert(tc, &f->drawn_message, f->timed ? &f->timings_message : NULL, &times) < 0)
                return false;
        f->times = times;
        f->converted = true;
        f->converted_timed = f->timed;
        return true;
}

/* Each frame is converted while its X server runs: one that goes away takes its calibration
 * (timeconvd's x11_us) with it, and the frames measured until then would be lost. A failure
 * here is tried again at the end. */
static void on_message(void *userdata, ProbeFrame *f) {
        Converter *c = userdata;

        (void) convert(c->tc, f);
        if (!c->said) {
                /* A line to wait for: the compositor answers (scripts and tests read it). */
                fprintf(stderr, "timeconv: the compositor draws the probe's frames; measuring %u\n", c->n_frames);
                c->said = true;
        }
}

/* The log line of one frame: converted, or when timeconvd could not convert it, the messages
 * as they came (drawn_x11_us, its arrival) for a later look. *ret_raw: written unconverted. */
static int record(struct timeconv *tc, const ProbeRun *run, ProbeFrame *f, FILE *out, bool *ret_raw) {
        struct timeconv_frame_record rec = {
                .times = { .counter = f->counter },
                .record_flags = TIMECONV_FRAME_RECORD_WINDOW | TIMECONV_FRAME_RECORD_BEGIN | TIMECONV_FRAME_RECORD_END,
                .window = run->window,
                .begin_ns = f->begin_ns,
                .end_ns = f->end_ns,
        };

        *ret_raw = false;
        if (f->drawn) {
                /* The timings came after the last conversion: again with them. */
                if (!f->converted || (f->timed && !f->converted_timed))
                        (void) convert(tc, f);
                rec.record_flags |= TIMECONV_FRAME_RECORD_RAW | TIMECONV_FRAME_RECORD_DRAWN_RECEIVED;
                if (f->converted) {
                        /* Timings of a frame count only with its drawn time: the offset is from it. */
                        rec.times = f->times;
                        rec.record_flags |= TIMECONV_FRAME_RECORD_DRAWN;
                } else
                        *ret_raw = true;
                rec.drawn_x11_us = f->drawn_message.drawn_x11_us;
                rec.presentation_offset_us = f->timings_message.presentation_offset_us;
                rec.drawn_received_ns = f->drawn_received_ns;
                if (f->timed) {
                        rec.record_flags |= TIMECONV_FRAME_RECORD_TIMINGS_RECEIVED;
                        rec.timings_received_ns = f->timings_received_ns;
                }
        }
        return timeconv_frame_log_write_record(out, &rec);
}

int cli_probe_write_log(FILE *log, const char *text, size_t size) {
        bool written = fwrite(text, 1, size, log) == size;

        if (fflush(log) != 0 || !written)
                return -EIO;
        return 0;
}

int cli_probe_log_text(size_t n_frames, CliProbeRecord write_row, void *userdata, FILE *log, char **ret_text,
                       size_t *ret_size, size_t *ret_raw) {
        char *text = NULL;
        size_t size = 0, n_raw = 0;
        FILE *mem = open_memstream(&text, &size);
        int r = 0;

        if (!mem)
                return -ENOMEM;
        for (size_t i = 0; i < n_frames && r >= 0; i++) {
                bool raw;

                r = write_row(userdata, i, mem, &raw);
                n_raw += raw;
        }
        if (fclose(mem) != 0 && r >= 0)
                r = -ENOMEM;
        if (r >= 0 && log)
                r = cli_probe_write_log(log, text, size);
        if (r < 0) {
                free(text);
                return r;
        }
        *ret_text = text;
        *ret_size = size;
        *ret_raw = n_raw;
        return 0;
}

typedef struct X11Log {
        struct timeconv *tc;
        ProbeRun *run;
} X11Log;

static int x11_record(void *userdata, size_t index, FILE *out, bool *ret_raw) {
        X11Log *l = userdata;

        return record(l->tc, l->run, &l->run->frames[index], out, ret_raw);
}

typedef struct X11Header {
        const ProbeOptions *o;
        const ProbeRun *run;
} X11Header;

static void print_probe_text(const ProbeOptions *o, const ProbeRun *run, double cpu_percent) {
        printf("compositor      %s (_NET_WM_FRAME_DRAWN%s)\n", run->wm_name,
               run->wm_timings ? ", _NET_WM_FRAME_TIMINGS" : "; no _NET_WM_FRAME_TIMINGS");
        printf("probe           window 0x%" PRIx32 ", %zu frames", run->window, run->n_frames);
        if (run->n_frames < o->n_frames)
                printf(" of %u", o->n_frames);
        fputs(", ", stdout);
        if (o->rate_hz > 0)
                printf("%g Hz", o->rate_hz);
        else
                fputs("as fast as the compositor lets (the next frame after each _NET_WM_FRAME_DRAWN)", stdout);
        printf("%s, %u sync requests\n", o->urgent ? ", urgent" : "", run->sync_requests);
        cli_probe_header_end(false, cpu_percent, run->stopped, run->stop_message);
}

static void print_probe_json(const ProbeOptions *o, const ProbeRun *run, double cpu_percent) {
        fputs("{\"probe\":{\"compositor\":", stdout);
        frames_json_string(stdout, run->wm_name);
        printf(",\"frame_timings\":%s,\"window\":%" PRIu32 ",\"frames\":%zu,\"rate_hz\":",
               run->wm_timings ? "true" : "false", run->window, run->n_frames);
        if (o->rate_hz > 0)
                printf("%g", o->rate_hz);
        else
                fputs("null", stdout);
        printf(",\"urgent\":%s,\"sync_requests\":%u", o->urgent ? "true" : "false", run->sync_requests);
        cli_probe_header_end(true, cpu_percent, run->stopped, run->stop_message);
}

static void x11_header(const void *userdata, bool json, double cpu_percent) {
        const X11Header *x = userdata;

        if (json)
                print_probe_json(x->o, x->run, cpu_percent);
        else
                print_probe_text(x->o, x->run, cpu_percent);
}

void cli_probe_header_end(bool json, double cpu_percent, int stopped, const char *stop_message) {
        if (!json) {
                if (isnan(cpu_percent))
                        puts("probe CPU       n/a");
                else
                        printf("probe CPU       %.2f %% of one core\n", cpu_percent);
                if (stopped < 0)
                        printf("stopped         %s\n", stop_message);
                return;
        }
        fputs(",\"cpu_percent\":", stdout);
        if (isnan(cpu_percent))
                fputs("null", stdout);
        else
                printf("%.3f", cpu_percent);
        fputs(",\"stopped\":", stdout);
        if (stopped < 0)
                frames_json_string(stdout, stop_message);
        else
                fputs("null", stdout);
        fputs("},\"report\":", stdout);
}

int cli_probe_summary(const char *text, size_t size, bool json, const char *plot, int64_t cpu_ns, int64_t wall_ns,
                      CliProbeHeader header, const void *userdata) {
        double cpu_percent = wall_ns > 0 ? 100.0 * (double) cpu_ns / (double) wall_ns : NAN;
        FramesReport *report = NULL;
        FramesLog *log = NULL;
        FramesError error;
        int r, status;

        r = frames_log_new(&log);
        if (r >= 0)
                r = frames_parse_text(log, text, size, &error);
        if (r >= 0)
                r = frames_report_new(log, "frame log", 0, FRAMES_NO_WINDOW, &report);
        if (r < 0) {
                /* The log is ours: only memory can fail here. */
                fprintf(stderr, "timeconv: the probe's frame log: %s\n", r == -EBADMSG ? error.message : strerror(-r));
                frames_log_free(log);
                return EXIT_FAILURE;
        }
        header(userdata, json, cpu_percent);
        status = cli_frames_print(report, json, plot);
        if (json)
                puts("}");
        frames_report_free(report);
        frames_log_free(log);
        return status;
}

int cli_probe_stopped(int status, int stopped, const char *stop_message, const char *log_path, size_t n_raw) {
        if (stopped < 0) {
                /* What was measured is printed and written: the run still failed. */
                fprintf(stderr, "timeconv: %s%s%s\n", stop_message, log_path ? "; the frames measured are in " : "",
                        log_path ? log_path : "");
                return stopped == -ENOMEM ? EXIT_FAILURE : EXIT_UNAVAILABLE;
        }
        if (n_raw > 0)
                return cli_worse_status(status, EXIT_UNAVAILABLE);
        return status;
}

/* Which X server timeconvd calibrates (ListDomains' x11_us entry: x11_server_id, x11_display),
 * for the probe to check that its display is that one. 0 also when the daemon cannot say (an
 * older one, or not connected now): the probe goes on unchecked. -errno when x11_us cannot be
 * had at all (-ENODEV, not calibrated yet, is fine). */
static int daemon_server(struct timeconv *tc, ProbeOptions *o, char *display, size_t size) {
        struct timeconv_domain **domains = NULL;
        int64_t now_us;
        int r;

        r = timeconv_now(tc, "x11_us", &now_us, NULL);
        if (r < 0 && r != -ENODEV)
                return r;
        if (timeconv_list_domains(tc, &domains) < 0)
                return 0;
        for (size_t i = 0; domains[i]; i++) {
                const struct timeconv_domain *d = domains[i];
                const char *s;

                if (strcmp(timeconv_domain_get_name(d), "x11_us") != 0)
                        continue;
                if (timeconv_domain_get_property_uint(d, "x11_server_id", &o->server_id) >= 0)
                        o->has_server_id = true;
                if (timeconv_domain_get_property_string(d, "x11_display", &s) >= 0)
                        snprintf(display, size, "%s", s);
        }
        timeconv_domains_free(domains);
        o->daemon_display = display;
        return 0;
}

int cli_probe(int argc, char **argv) {
        static const struct option options[] = {
                { "probe", no_argument, NULL, 'P' },
                { "display", required_argument, NULL, 'd' },
                { "frames", required_argument, NULL, 'n' },
                { "rate", required_argument, NULL, 'r' },
                { "urgent", no_argument, NULL, 'u' },
                { "log", required_argument, NULL, 'l' },
                { "json", no_argument, NULL, 'j' },
                { "plot", required_argument, NULL, 'p' },
                { "wayland", no_argument, NULL, 'W' },
                { "x11", no_argument, NULL, 'X' },
                { "output", required_argument, NULL, 'o' },
                CLI_COMMON_OPTIONS,
                {}
        };
        ProbeOptions o = { .n_frames = DEFAULT_FRAMES, .wait_ns = DEFAULT_WAIT_NS };
        const char *log_path = NULL, *plot = NULL;
        struct timeconv *tc = NULL;
        char message[512] = "", daemon_display[128] = "", *text = NULL;
        Converter converter;
        ProbeRun run = {};
        const char *wayland_display = getenv("WAYLAND_DISPLAY");
        /* On Wayland unless told otherwise (--x11, --display): the session's own protocol. */
        int wayland = -1;
        const char *output = NULL;
        FILE *log = NULL;
        bool json = false;
        size_t size = 0, n_raw = 0;
        int opt, r, status;

        optind = 1;
        while ((opt = getopt_long(argc, argv, "jp:h", options, NULL)) >= 0)
                switch (opt) {
                case 'P':
                        break;
                case 'd':
                        o.display = optarg;
                        wayland = wayland == 1 ? 1 : 0;
                        break;
                case 'W':
                        wayland = 1;
                        break;
                case 'X':
                        wayland = 0;
                        break;
                case 'o':
                        output = optarg;
                        break;
                case 'n': {
                        int64_t n;

                        if (parse_int64(optarg, strlen(optarg), &n) < 0 || n < 2 || n > MAX_FRAMES)
                                return cli_usage_error("bad --frames '%s' (2 to 1000000)", optarg);
                        o.n_frames = (unsigned) n;
                        break;
                }
                case 'r':
                        if (parse_double(optarg, 0, 10000, &o.rate_hz) < 0)
                                return cli_usage_error("bad --rate '%s' (Hz, 0 to 10000; 0: as fast as the "
                                                       "compositor lets)", optarg);
                        break;
                case 'u':
                        o.urgent = true;
                        break;
                case 'l':
                        log_path = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'p':
                        plot = optarg;
                        break;
                default:
                        /* No help of its own: --help shows every command's. */
                        return cli_common_option(opt, "frames --probe");
                }
        if (optind < argc)
                return cli_usage_error("'frames --probe' takes no file: '%s'", argv[optind]);
        if (wayland < 0)
                wayland = wayland_display && *wayland_display;
        if (wayland && o.display)
                return cli_usage_error("--display %s names an X display: not with --wayland", o.display);
        if (!wayland && output)
                return cli_usage_error("--output %s is for the probe on Wayland (--wayland)", output);
        if (wayland && o.urgent)
                return cli_usage_error("--urgent is for the probe on X11 (%s)", "--x11");
        /* The log first, then the daemon: frames drawn for nothing are a waste of the user's
         * time. */
        if (log_path) {
                log = fopen(log_path, "we");
                if (!log) {
                        fprintf(stderr, "timeconv: cannot write the frame log %s: %s\n", log_path, strerror(errno));
                        return EXIT_IOERR;
                }
        }
        status = cli_open(&tc);
        if (status != 0) {
                if (log)
                        fclose(log);
                return status;
        }
        if (wayland) {
                WaylandProbeOptions w = { .n_frames = o.n_frames, .rate_hz = o.rate_hz, .output = output,
                                          .wait_ns = o.wait_ns };

                status = cli_probe_wayland(tc, &w, log, log_path, json, plot);
                goto finish;
        }
        /* Not calibrated yet (-ENODEV) is fine: it will be by the time the frames are
         * converted. */
        r = daemon_server(tc, &o, daemon_display, sizeof(daemon_display));
        if (r < 0) {
                fprintf(stderr, "timeconv: converting the compositor's times needs timeconvd's x11_us "
                        "domain for this display: %s\n", timeconv_strerror(r));
                status = EXIT_UNAVAILABLE;
                goto finish;
        }
        converter = (Converter) { .tc = tc, .n_frames = o.n_frames };
        o.on_message = on_message;
        o.userdata = &converter;
        r = probe_x11_run(&o, &run, message, sizeof(message));
        if (r < 0) {
                fprintf(stderr, "timeconv: %s\n", message);
                status = r == -ENOMEM ? EXIT_FAILURE : EXIT_UNAVAILABLE;
                goto finish;
        }
        r = cli_probe_log_text(run.n_frames, x11_record, &(X11Log) { tc, &run }, log, &text, &size, &n_raw);
        if (r < 0) {
                fprintf(stderr, "timeconv: %s: %s\n", log_path ? log_path : "the frame log", strerror(-r));
                status = r == -ENOMEM ? EXIT_FAILURE : EXIT_IOERR;
                goto finish;
        }
        status = cli_probe_summary(text, size, json, plot, run.cpu_ns, run.wall_ns, x11_header,
                                   &(X11Header) { &o, &run });
        if (n_raw > 0)
                fprintf(stderr, "timeconv: timeconvd could not convert the X times of %zu drawn frames (its x11_us "
                        "domain was not there); %s has them as they came (drawn_x11_us), not as drawn times\n",
                        n_raw, log_path ? log_path : "the frame log");
        status = cli_probe_stopped(status, run.stopped, run.stop_message, log_path, n_raw);
finish:
        free(text);
        probe_run_done(&run);
        timeconv_free(tc);
        if (log && fclose(log) != 0 && status == 0) {
                fprintf(stderr, "timeconv: %s: %s\n", log_path, strerror(errno));
                status = EXIT_IOERR;
        }
        return status;
}
