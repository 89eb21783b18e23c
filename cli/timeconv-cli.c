/* SPDX-License-Identifier: MIT */

/* timeconv: the command line front of libtimeconv. It uses the public API only. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frames-report.h"

void cli_help(FILE *f) {
        fputs("Usage: timeconv COMMAND [OPTIONS]\n"
              "       timeconv --help | --version\n"
              "\n"
              "Convert timestamps between clock domains, live through timeconvd or offline\n"
              "from a JSON snapshot file.\n"
              "\n"
              "Commands:\n"
              "  convert --from A --to B [--json] [VALUE...]\n"
              "        Convert each VALUE (or, with none, each line of standard input) from\n"
              "        domain A to domain B through timeconvd. Prints one line per input, in\n"
              "        order: the converted value or \"error: REASON\". --json prints one JSON\n"
              "        object per line instead. Put negative VALUEs after \"--\".\n"
              "  convert --from A --to B --snapshots FILE [--mode nearest|drift] [--json] [VALUE...]\n"
              "        The same offline, with the clock snapshots of FILE. nearest: Perfetto\n"
              "        trace processor's semantics; drift (default): interpolate between\n"
              "        snapshots.\n"
              "  domains [--json]\n"
              "        The live calibration table: unit, verdict, offset and rate against\n"
              "        monotonic, uncertainty, last calibration.\n"
              "  now [--json] DOMAIN\n"
              "        The current time of DOMAIN in its unit.\n"
              "  monitor [--once] [--interval SECONDS] [--count N]\n"
              "        The calibration table, refreshed; a mark where a discontinuity arrived.\n"
              "        Prints one table and exits with --once.\n"
              "  export\n"
              "        timeconvd's snapshot history as a JSON snapshot file on standard output.\n"
              "  frames [--json] [--plot FILE.svg] [--refresh-hz HZ] [FILE...]\n"
              "        Frame rate, intervals, latency and janks from dumpsys SurfaceFlinger\n"
              "        --latency, dumpsys gfxinfo framestats or a libtimeconv frame log.\n"
              "\n"
              "Exit status: 0 success, 1 some value failed, 2 usage error, 65 malformed\n"
              "snapshot file or frame dump, 66 unreadable file, 69 timeconvd or the bus\n"
              "unavailable, 74 write error.\n", f);
}

int cli_usage_error(const char *fmt, const char *arg) {
        fputs("timeconv: ", stderr);
        fprintf(stderr, fmt, arg);
        fputs("\nTry 'timeconv --help'.\n", stderr);
        return EXIT_USAGE;
}

bool cli_unavailable(int r) {
        return r == -EHOSTDOWN || r == -ECONNRESET || r == -ETIMEDOUT || r == -ECONNREFUSED ||
               r == -ENOTCONN || r == -ENOMEDIUM || r == -ENXIO;
}

int cli_open(struct timeconv **ret) {
        int r = timeconv_open(ret);

        if (r < 0) {
                fprintf(stderr, "timeconv: cannot connect to the session bus: %s\n", strerror(-r));
                return EXIT_UNAVAILABLE;
        }
        return 0;
}

int cli_live_error(const char *what, int r) {
        fprintf(stderr, "timeconv: %s: %s\n", what, timeconv_strerror(r));
        return cli_unavailable(r) ? EXIT_UNAVAILABLE : EXIT_FAILURE;
}

int main(int argc, char **argv) {
        static const struct {
                const char *name;
                int (*run)(int argc, char **argv);
        } commands[] = {
                { "convert", cli_cmd_convert },
                { "domains", cli_cmd_domains },
                { "now", cli_cmd_now },
                { "monitor", cli_cmd_monitor },
                { "export", cli_cmd_export },
                { "frames", cli_cmd_frames },
        };
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd)
                return cli_usage_error("%s", "missing command");
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
                cli_help(stdout);
                return 0;
        }
        if (strcmp(cmd, "--version") == 0) {
                printf("timeconv %s\n", timeconv_version());
                return 0;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(cmd, commands[i].name) == 0)
                        return commands[i].run(argc - 1, argv + 1);
        return cli_usage_error("unknown command '%s'", cmd);
}
