/* SPDX-License-Identifier: MIT */

/* timeconv trace: every timestamped packet of a Perfetto trace placed on the trace clock (or
 * --to) with its bound, one line each, then (text form) the clocks found and the packets not
 * placed by reason. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"
#include "cli.h"

#define REASONS_MAX 16

typedef struct Trace {
        bool json;
        uint64_t placed;
        uint64_t not_placed;
        struct {
                const char *reason;
                uint64_t count;
        } reasons[REASONS_MAX];
        size_t n_reasons;
        CliOut out;
} Trace;

static void count_reason(Trace *t, const char *reason) {
        size_t i;

        t->not_placed++;
        for (i = 0; i < t->n_reasons; i++)
                if (strcmp(t->reasons[i].reason, reason) == 0)
                        break;
        if (i == t->n_reasons) {
                if (i == REASONS_MAX)
                        i--;    /* folds what no table has room for into the last reason */
                else
                        t->reasons[t->n_reasons++].reason = reason;
        }
        t->reasons[i].count++;
}

static int on_packet(const struct timeconv_trace_packet *p, void *userdata) {
        Trace *t = userdata;
        CliOut *o = &t->out;

        if (p->error < 0)
                count_reason(t, p->reason);
        else
                t->placed++;
        if (t->json) {
                cli_out_str(o, "{\"packet\":");
                cli_out_uint(o, p->index);
                cli_out_str(o, ",\"offset\":");
                cli_out_uint(o, p->offset);
                cli_out_str(o, ",\"sequence\":");
                cli_out_uint(o, p->sequence);
                cli_out_str(o, ",\"machine\":");
                cli_out_uint(o, p->machine);
                cli_out_str(o, ",\"clock\":");
                cli_out_json_string(o, p->clock, strlen(p->clock));
                cli_out_str(o, ",\"ts\":");
                cli_out_int(o, p->ts);
                if (p->error < 0) {
                        cli_out_str(o, ",\"error\":");
                        cli_out_json_string(o, p->reason, strlen(p->reason));
                } else {
                        cli_out_str(o, ",\"trace_ts\":");
                        cli_out_int(o, p->trace_ts);
                        cli_out_str(o, ",\"uncertainty_ns\":");
                        cli_out_int(o, p->uncertainty_ns);
                }
                cli_out_str(o, "}\n");
        } else {
                cli_out_char(o, '#');
                cli_out_uint(o, p->index);
                cli_out_str(o, " seq ");
                cli_out_uint(o, p->sequence);
                cli_out_char(o, ' ');
                cli_out_str(o, p->clock);
                cli_out_char(o, ' ');
                cli_out_int(o, p->ts);
                if (p->error < 0) {
                        cli_out_str(o, " error: ");
                        cli_out_str(o, p->reason);
                } else {
                        cli_out_str(o, " -> ");
                        cli_out_int(o, p->trace_ts);
                        cli_out_str(o, " \xc2\xb1");
                        cli_out_int(o, p->uncertainty_ns);
                        cli_out_str(o, " ns");
                }
                cli_out_char(o, '\n');
        }
        return o->error;
}

static void print_summary(Trace *t, const struct timeconv_trace *trace, const char *to) {
        CliOut *o = &t->out;
        char line[256];

        snprintf(line, sizeof(line), "\ntrace clock: %s%s%s\nclocks:\n  %-12s %-18s %-26s %9s  %s\n",
                 timeconv_trace_clock(trace), to ? ", placed on " : "", to ? to : "",
                 "ID", "NAME", "SCOPE", "SNAPSHOTS", "SPAN (units)");
        cli_out_str(o, line);
        for (size_t i = 0; i < timeconv_trace_count_clocks(trace); i++) {
                struct timeconv_trace_clock c;
                char scope[64], span[64];

                if (timeconv_trace_get_clock(trace, i, &c) < 0)
                        continue;
                if (c.sequence)
                        snprintf(scope, sizeof(scope), "sequence %" PRIu32 "%s%s", c.sequence,
                                 c.machine ? ", machine" : "", c.incremental ? ", incremental" : "");
                else
                        snprintf(scope, sizeof(scope), "%s%s", c.id >= 128 ? "global" : "builtin",
                                 c.machine ? ", machine" : "");
                if (c.machine) {
                        size_t n = strlen(scope);

                        snprintf(scope + n, sizeof(scope) - n, " %" PRIu32, c.machine);
                }
                if (c.snapshots)
                        snprintf(span, sizeof(span), "%" PRId64 "..%" PRId64 "%s", c.min_ts, c.max_ts,
                                 c.unit_multiplier_ns != 1 ? "" : " ns");
                else
                        snprintf(span, sizeof(span), "-");
                if (c.unit_multiplier_ns != 1) {
                        size_t n = strlen(span);

                        snprintf(span + n, sizeof(span) - n, " x %" PRId64 " ns", c.unit_multiplier_ns);
                }
                snprintf(line, sizeof(line), "  %-12" PRIu32 " %-18s %-26s %9" PRIu64 "  %s\n", c.id, c.name, scope,
                         c.snapshots, span);
                cli_out_str(o, line);
        }
        snprintf(line, sizeof(line), "packets: %" PRIu64 ", with a timestamp: %" PRIu64 ", placed: %" PRIu64
                 ", not placed: %" PRIu64 "\n", timeconv_trace_count_packets(trace), t->placed + t->not_placed,
                 t->placed, t->not_placed);
        cli_out_str(o, line);
        for (size_t i = 0; i < t->n_reasons; i++) {
                snprintf(line, sizeof(line), "  %" PRIu64 " %s\n", t->reasons[i].count, t->reasons[i].reason);
                cli_out_str(o, line);
        }
}

int cli_cmd_trace(int argc, char **argv) {
        static const struct option options[] = {
                { "to", required_argument, NULL, 't' },
                { "mode", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                CLI_COMMON_OPTIONS,
                {}
        };
        _cleanup_(timeconv_trace_freep) struct timeconv_trace *trace = NULL;
        struct timeconv_error error;
        const char *to = NULL;
        int mode = TIMECONV_MODE_NEAREST, opt, r;
        _cleanup_free_ Trace *t = NULL;

        t = calloc(1, sizeof(*t));
        if (!t)
                return EXIT_FAILURE;
        optind = 1;
        while ((opt = getopt_long(argc, argv, "t:m:jh", options, NULL)) >= 0)
                switch (opt) {
                case 't':
                        to = optarg;
                        break;
                case 'm':
                        r = cli_parse_mode(optarg, &mode);
                        if (r != 0)
                                return r;
                        break;
                case 'j':
                        t->json = true;
                        break;
                default:
                        return cli_common_option(opt, "trace");
                }
        if (optind != argc - 1)
                return cli_usage_error("%s", "trace takes one FILE");

        r = timeconv_trace_load(argv[optind], &trace, &error);
        if (r < 0) {
                fprintf(stderr, "timeconv: %s: %s\n", argv[optind], error.message);
                return r == -EBADMSG ? EXIT_DATAERR : EXIT_NOINPUT;
        }
        cli_out_init(&t->out, STDOUT_FILENO);
        r = timeconv_trace_place(trace, mode, to, on_packet, t, &error);
        if (r == -ENOENT) {
                fprintf(stderr, "timeconv: %s: %s\n", argv[optind], error.message);
                r = EXIT_DATAERR;
        } else if (r < 0 && t->out.error == 0) {
                fprintf(stderr, "timeconv: %s: %s\n", argv[optind], error.message);
                r = EXIT_FAILURE;
        } else {
                if (!t->json)
                        print_summary(t, trace, to);
                r = t->not_placed > 0 ? EXIT_FAILURE : 0;
        }
        if (cli_out_flush(&t->out) < 0) {
                fputs("timeconv: cannot write to standard output\n", stderr);
                r = EXIT_IOERR;
        }
        return r;
}
