/* SPDX-License-Identifier: MIT */

/* timeconv: the command line front of libtimeconv. It uses the public API only. Exit status:
 * 0 all converted, 1 a value failed, 2 usage, 65 a malformed snapshot file (EX_DATAERR),
 * 66 an unreadable one (EX_NOINPUT), 69 the daemon is needed (EX_UNAVAILABLE), 74 a write
 * error (EX_IOERR). */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"
#include "timeconv.h"

enum {
        EXIT_USAGE = 2,
        EXIT_DATAERR = 65,
        EXIT_NOINPUT = 66,
        EXIT_UNAVAILABLE = 69,
        EXIT_IOERR = 74,
};

typedef struct Convert {
        const struct timeconv_snapshots *snapshots;
        const char *from, *to;
        int mode;
        bool json;
        bool failed;
        CliOut out;
} Convert;

static void help(FILE *f) {
        fputs("Usage: timeconv COMMAND [OPTIONS]\n"
              "       timeconv --help | --version\n"
              "\n"
              "Convert timestamps between clock domains.\n"
              "\n"
              "Commands:\n"
              "  convert --from A --to B --snapshots FILE [--mode nearest|drift] [--json] [VALUE...]\n"
              "        Convert each VALUE (or, with none, each line of standard input) from\n"
              "        domain A to domain B with the clock snapshots of FILE, a JSON snapshot\n"
              "        file. Prints one line per input, in order: the converted value or\n"
              "        \"error: REASON\". --json prints one JSON object per line instead.\n"
              "        nearest: Perfetto trace processor's semantics; drift (default):\n"
              "        interpolate between snapshots. Put negative VALUEs after \"--\".\n"
              "  domains, now, monitor, export\n"
              "        Need timeconvd (not yet supported by this build).\n"
              "\n"
              "Exit status: 0 all converted, 1 some value failed, 2 usage error,\n"
              "65 malformed snapshot file, 66 unreadable file, 69 timeconvd needed.\n", f);
}

static int usage_error(const char *fmt, const char *arg) {
        fputs("timeconv: ", stderr);
        fprintf(stderr, fmt, arg);
        fputs("\nTry 'timeconv --help'.\n", stderr);
        return EXIT_USAGE;
}

/* One input, one output line. */
static void convert_one(Convert *c, const char *in, size_t in_size, bool too_long) {
        int64_t value = 0, out = 0, uncertainty_ns = 0;
        const char *reason = NULL;
        bool parsed;
        int r;

        cli_trim(&in, &in_size);
        r = too_long ? -E2BIG : cli_parse_int64(in, in_size, &value);
        parsed = r >= 0;
        if (r < 0)
                reason = r == -E2BIG ? "line too long" :
                         r == -ERANGE ? "value out of range" : "not an integer";
        else {
                r = timeconv_snapshots_convert(c->snapshots, c->mode, c->from, c->to, value, &out,
                                               &uncertainty_ns);
                if (r < 0)
                        reason = timeconv_strerror(r);
        }
        c->failed |= r < 0;

        if (!c->json) {
                if (reason) {
                        cli_out_write(&c->out, "error: ", 7);
                        cli_out_str(&c->out, reason);
                } else
                        cli_out_int(&c->out, out);
                cli_out_char(&c->out, '\n');
                return;
        }

        cli_out_write(&c->out, "{\"in\":", 6);
        if (too_long)
                cli_out_write(&c->out, "null", 4);
        else if (parsed)
                cli_out_int(&c->out, value);
        else
                cli_out_json_string(&c->out, in, in_size);
        if (reason) {
                cli_out_write(&c->out, ",\"error\":", 9);
                cli_out_json_string(&c->out, reason, strlen(reason));
        } else {
                cli_out_write(&c->out, ",\"out\":", 7);
                cli_out_int(&c->out, out);
                cli_out_write(&c->out, ",\"uncertainty_ns\":", 18);
                cli_out_int(&c->out, uncertainty_ns);
        }
        cli_out_write(&c->out, "}\n", 2);
}

static int convert_stdin(Convert *c) {
        CliLines *lines = malloc(sizeof(*lines));       /* 1 MiB: too large for the stack */
        const char *line;
        size_t size;
        int r;

        if (!lines) {
                fputs("timeconv: out of memory\n", stderr);
                return -ENOMEM;
        }
        cli_lines_init(lines, STDIN_FILENO);
        while ((r = cli_lines_next(lines, &line, &size)) > 0)
                convert_one(c, line, size, r == CLI_LINE_TOO_LONG);
        if (r < 0)
                fprintf(stderr, "timeconv: cannot read standard input: %s\n", strerror(-r));
        free(lines);
        return r;
}

static bool has_domain(const struct timeconv_snapshots *s, const char *name) {
        for (size_t i = 0; i < timeconv_snapshots_count_domains(s); i++)
                if (strcmp(timeconv_snapshots_domain_name(s, i), name) == 0)
                        return true;
        return false;
}

static int cmd_convert(int argc, char **argv) {
        static const struct option options[] = {
                { "from", required_argument, NULL, 'f' },
                { "to", required_argument, NULL, 't' },
                { "snapshots", required_argument, NULL, 's' },
                { "mode", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        Convert c = { .mode = TIMECONV_MODE_DRIFT };
        struct timeconv_snapshots *snapshots = NULL;
        struct timeconv_error error;
        const char *file = NULL;
        int opt, r, status;

        while ((opt = getopt_long(argc, argv, "f:t:s:m:jh", options, NULL)) >= 0)
                switch (opt) {
                case 'f':
                        c.from = optarg;
                        break;
                case 't':
                        c.to = optarg;
                        break;
                case 's':
                        file = optarg;
                        break;
                case 'm':
                        if (strcmp(optarg, "nearest") == 0)
                                c.mode = TIMECONV_MODE_NEAREST;
                        else if (strcmp(optarg, "drift") == 0)
                                c.mode = TIMECONV_MODE_DRIFT;
                        else
                                return usage_error("unknown mode '%s' (nearest or drift)", optarg);
                        break;
                case 'j':
                        c.json = true;
                        break;
                case 'h':
                        help(stdout);
                        return 0;
                default:
                        return usage_error("%s", "bad option for 'convert'");
                }
        if (!c.from || !c.to)
                return usage_error("%s", "convert needs --from and --to");
        if (!file) {
                fputs("timeconv: live conversion needs timeconvd (not yet supported by this build); "
                      "use --snapshots FILE\n", stderr);
                return EXIT_UNAVAILABLE;
        }

        r = timeconv_snapshots_load(file, &snapshots, &error);
        if (r < 0) {
                if (error.line > 0)
                        fprintf(stderr, "timeconv: %s:%u:%u: %s\n", file, error.line, error.column,
                                error.message);
                else
                        fprintf(stderr, "timeconv: %s: %s\n", file, error.message);
                return r == -EBADMSG ? EXIT_DATAERR : EXIT_NOINPUT;
        }
        for (const char *const *d = (const char *const[]) { c.from, c.to, NULL }; *d; d++)
                if (!has_domain(snapshots, *d)) {
                        fprintf(stderr, "timeconv: %s: no domain \"%s\" in the snapshots\n", file, *d);
                        timeconv_snapshots_free(snapshots);
                        return EXIT_FAILURE;
                }

        c.snapshots = snapshots;
        cli_out_init(&c.out, STDOUT_FILENO);
        r = 0;
        if (optind < argc)
                for (int i = optind; i < argc; i++)
                        convert_one(&c, argv[i], strlen(argv[i]), false);
        else
                r = convert_stdin(&c);
        status = r < 0 ? EXIT_IOERR : c.failed ? EXIT_FAILURE : 0;
        if (cli_out_flush(&c.out) < 0) {
                fprintf(stderr, "timeconv: cannot write: %s\n", strerror(-c.out.error));
                status = EXIT_IOERR;
        }
        timeconv_snapshots_free(snapshots);
        return status;
}

int main(int argc, char **argv) {
        static const char *const live[] = { "domains", "now", "monitor", "export", NULL };
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd)
                return usage_error("%s", "missing command");
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
                help(stdout);
                return 0;
        }
        if (strcmp(cmd, "--version") == 0) {
                printf("timeconv %s\n", timeconv_version());
                return 0;
        }
        if (strcmp(cmd, "convert") == 0)
                return cmd_convert(argc - 1, argv + 1);
        for (const char *const *l = live; *l; l++)
                if (strcmp(cmd, *l) == 0) {
                        fprintf(stderr, "timeconv: '%s' needs timeconvd (not yet supported by this build)\n",
                                cmd);
                        return EXIT_UNAVAILABLE;
                }
        return usage_error("unknown command '%s'", cmd);
}
