/* SPDX-License-Identifier: MIT */

/* timeconv: the command line front of libtimeconv. It uses the public API only. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-io.h"
#include "cli.h"
#include "frames-report.h"

/* Each command's own help; `timeconv COMMAND --help` prints its entry, `timeconv --help` all. */
static const struct {
        const char *name;
        const char *usage;
        const char *text;
} helps[] = {
        { "convert", "convert --from A --to B [--json] [VALUE...]",
          "        Convert each VALUE (or, with none, each line of standard input) from\n"
          "        domain A to domain B through timeconvd. Prints one line per input, in\n"
          "        order: \"VALUE \xc2\xb1" "BOUND ns\" (the converted value in B's unit and the bound\n"
          "        of its error in ns) or \"error: REASON\". --json prints one JSON object\n"
          "        per line instead: {\"in\": the input as given, \"out\", \"uncertainty_ns\"}\n"
          "        or {\"in\", \"error\"}. An unknown or malformed domain name stops at once\n"
          "        with one message (exit 65). Put negative VALUEs after \"--\".\n"
          "    convert --from A --to B --snapshots FILE [--mode nearest|drift] [--json] [VALUE...]\n"
          "        The same offline, with the clock snapshots of FILE, a JSON snapshot file\n"
          "        or a Perfetto trace (clock names as for trace). nearest: Perfetto trace\n"
          "        processor's semantics; drift (default): interpolate between snapshots.\n"
          "        Several machines' JSON files: --snapshots FILE --snapshots mN=FILE ...\n"
          "        --shared CLOCK[=BOUND_NS] (machine N's domains are mN:NAME; the machines\n"
          "        are related through CLOCK, kept on one time scale within BOUND_NS, or\n"
          "        within the kernels' maxerror the exports give with realtime).\n"
          "        Short options: -f A, -t B, -s FILE, -m MODE, -j.\n" },
        { "domains", "domains [--json] [--wide]",
          "        The live calibration table: unit, verdict, offset and rate against\n"
          "        monotonic with their bounds, uncertainty, last calibration, and the\n"
          "        kernel's synchronisation state for realtime and tai. A value whose bound\n"
          "        dwarfs it reads \"unknown\". --json: every property, typed.\n"
          "        Short options: -j, -w.\n" },
        { "now", "now [--json] DOMAIN",
          "        The current time of DOMAIN in its unit, with the bound of its error in ns:\n"
          "        \"VALUE UNIT \xc2\xb1" "BOUND ns\" (624632496 us \xc2\xb1" "28020 ns).\n"
          "        Short option: -j.\n" },
        { "monitor", "monitor [--once] [--interval SECONDS] [--count N] [--json]",
          "        The calibration table, refreshed; a mark where a discontinuity arrived.\n"
          "        Prints one table and exits with --once. --json prints one JSON object\n"
          "        per line: {\"event\":\"domains\",...} at each refresh, and one per\n"
          "        discontinuity, change of the domains, daemon start or stop. --follow:\n"
          "        when timeconvd stops, wait for it to come back and go on (else exit 69).\n"
          "        Short options: -1, -i SECONDS, -c N, -j, -F, -w.\n" },
        { "push", "push DOMAIN --against REFERENCE [--hold]",
          "        Publish DOMAIN, a clock of yours counting ns (an audio DAC, a camera), from\n"
          "        lines on standard input: \"APP REF\", both read at the same instant, or\n"
          "        \"APP REF_BEFORE REF_AFTER\", the reference read before and after your\n"
          "        clock (an honest bound whatever the delay between the reads). App values\n"
          "        alone are refused: read here, the reference would be late by however long\n"
          "        the line took to arrive. Prints \"ok\" or \"error: REASON\" per line. The\n"
          "        domain exists while push runs and goes away when it ends; --hold keeps\n"
          "        it after the end of the input, until push is stopped. DOMAIN is refused\n"
          "        before any line is read when it is one of timeconvd's own domains (exit\n"
          "        65) or another client's (exit 1).\n"
          "        Short option: -a REFERENCE.\n" },
        { "export", "export [--format json|perfetto] [--follow]",
          "        timeconvd's snapshot history on standard output: a JSON snapshot file, or\n"
          "        with --format perfetto a Perfetto trace of ClockSnapshot packets (clock ids\n"
          "        as ListDomains' perfetto_id) that can be concatenated with a recording.\n"
          "        --follow (perfetto only) keeps appending new snapshots until SIGINT or\n"
          "        SIGTERM, then exits 0.\n" },
        { "trace", "trace FILE [--to CLOCK] [--mode nearest|drift] [--json]",
          "        Every packet of the Perfetto trace FILE that carries a timestamp, placed on\n"
          "        the trace clock (or CLOCK) as trace processor places it (nearest, the\n"
          "        default) with the bound of its error: \"#PACKET seq SEQ CLOCK TS -> TRACE_TS\n"
          "        \xc2\xb1" "BOUND ns\" or \"... error: REASON\", then the clocks found and the\n"
          "        packets not placed, by reason. Clock names: boottime, monotonic, ...; 128\n"
          "        (a global id); 64@2 (id 64 of sequence 2); m1:boottime (machine 1).\n"
          "        --json: one JSON object per packet: packet, offset, sequence, machine,\n"
          "        clock, ts, and trace_ts with uncertainty_ns, or error. Exit status 1 when\n"
          "        a packet could not be placed.\n"
          "        Short options: -t CLOCK, -m MODE, -j.\n" },
        { "frames", "frames [--json] [--plot FILE.svg] [--refresh-hz HZ] [--window ID] [FILE...]",
          "        Frame rate, intervals, latency and janks from dumpsys SurfaceFlinger\n"
          "        --latency, dumpsys gfxinfo framestats or a libtimeconv frame log (- or\n"
          "        no FILE: standard input). --json: one JSON report; --plot: an SVG of\n"
          "        the frame intervals; --refresh-hz: the display's rate when the dump\n"
          "        does not say. A frame log is reported per window (--window: that one),\n"
          "        timed by its presentation times or else its drawn times, with the\n"
          "        desktop latencies (frame end->drawn, drawn->presented, the messages).\n"
          "        Exit status 1 when no figure could be computed.\n"
          "        Short options: -j, -p FILE.svg, -r HZ, -w ID.\n"
          "    frames --probe [--display NAME] [--frames N] [--rate HZ] [--urgent] [--log FILE]\n"
          "           [--json] [--plot FILE.svg] [--x11 | --wayland [--output NAME]]\n"
          "        Measure the running compositor: a window of ours draws N frames (300 by\n"
          "        default; as fast as the compositor lets, or at --rate), with extended frame sync\n"
          "        (--urgent: every frame urgent, the window manager waits for it); each frame is timed\n"
          "        through timeconvd, written as a frame log (--log) and reported as above.\n"
          "        With WAYLAND_DISPLAY set (or --wayland; --x11 or --display for X), an\n"
          "        xdg_toplevel (--output: fullscreen on that output) timed by wp_presentation\n"
          "        feedback, converted from the compositor's clock, reported per output.\n" },
};

static const char exit_help[] =
        "Exit status: 0 success, 1 some value failed, 64 usage error, 65 bad data (a value\n"
        "that is not an integer, an unknown domain, a malformed snapshot file or frame\n"
        "dump), 66 unreadable input (a file or standard input), 69 timeconvd, the bus or\n"
        "the domain unavailable, 74 write error.\n";

void cli_help_command(FILE *f, const char *command) {
        for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
                if (command && strcmp(command, helps[i].name) == 0) {
                        /* The list of statuses is the same for every command: said once, there. */
                        fprintf(f, "Usage: timeconv %s\n\n%s\nExit status: see 'timeconv --help' or timeconv(1).\n",
                                helps[i].usage, helps[i].text);
                        return;
                }
        fputs("Usage: timeconv COMMAND [OPTIONS]\n"
              "       timeconv COMMAND --help\n"
              "       timeconv --help | --version\n"
              "\n"
              "Convert timestamps between clock domains, live through timeconvd or offline\n"
              "from a JSON snapshot file.\n"
              "\n"
              "Commands:\n", f);
        for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
                fprintf(f, "  %s\n%s", helps[i].usage, helps[i].text);
        fputs("\nEvery command also takes -h, --help and --version.\n", f);
        fprintf(f, "\n%s", exit_help);
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

int cli_exit_status(int r) {
        if (r >= 0)
                return 0;
        if (cli_unavailable(r) || r == -ENODEV)
                return EXIT_UNAVAILABLE;
        if (r == -ENOENT || r == -EINVAL)
                return EXIT_DATAERR;
        return EXIT_FAILURE;
}

int cli_worse_status(int a, int b) {
        static const int order[] = { EXIT_UNAVAILABLE, EXIT_IOERR, EXIT_DATAERR, EXIT_FAILURE };

        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
                if (a == order[i] || b == order[i])
                        return order[i];
        return a != 0 ? a : b;
}

const char *cli_reason(struct timeconv *tc, int r) {
        const char *message = tc ? timeconv_last_error_message(tc) : NULL;

        return message ?: timeconv_strerror(r);
}

/* Whether s is UTF-8 as D-Bus wants it (sd-bus refuses to send anything else). */
static bool utf8_valid(const char *s) {
        size_t n = strlen(s);

        for (size_t i = 0, len; i < n; i += len)
                if ((len = cli_utf8_char(s + i, n - i)) == 0)
                        return false;
        return true;
}

const char *cli_name_problem(const char *name) {
        if (!name[0])
                return "empty domain name";
        if (strlen(name) > CLI_NAME_MAX)
                return "domain name longer than 63 bytes";
        if (!utf8_valid(name))
                return "domain name not valid UTF-8 (allowed: a-z 0-9 _ . : -)";
        /* The daemon's rule (bus_domain_name_check()): said before a line is read, not per line. */
        if (name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_.:-")])
                return "a character outside a-z 0-9 _ . : - in the domain name (lower case only)";
        return NULL;
}

int cli_parse_mode(const char *s, int *ret_mode) {
        if (strcmp(s, "nearest") == 0)
                *ret_mode = TIMECONV_MODE_NEAREST;
        else if (strcmp(s, "drift") == 0)
                *ret_mode = TIMECONV_MODE_DRIFT;
        else
                return cli_usage_error("unknown mode '%s' (nearest or drift)", s);
        return 0;
}

int cli_common_option(int opt, const char *command) {
        switch (opt) {
        case 'h':
                cli_help_command(stdout, command);
                return 0;
        case 'V':
                printf("timeconv %s\n", timeconv_version());
                return 0;
        default:
                return cli_usage_error("bad option for '%s'", command);
        }
}

int cli_open(struct timeconv **ret) {
        int r = timeconv_open(ret);

        if (r < 0) {
                /* Where sd_bus_open_user() looked: the address, else $XDG_RUNTIME_DIR/bus. */
                const char *address = getenv("DBUS_SESSION_BUS_ADDRESS"), *runtime = getenv("XDG_RUNTIME_DIR");

                if (address && *address)
                        fprintf(stderr, "timeconv: cannot connect to the session bus at "
                                "$DBUS_SESSION_BUS_ADDRESS (%s): %s\n", address, strerror(-r));
                else if (runtime && *runtime)
                        fprintf(stderr, "timeconv: cannot connect to the session bus: $DBUS_SESSION_BUS_ADDRESS "
                                "is not set, and %s/bus (from $XDG_RUNTIME_DIR): %s\n", runtime, strerror(-r));
                else
                        fputs("timeconv: cannot connect to the session bus: neither $DBUS_SESSION_BUS_ADDRESS "
                              "nor $XDG_RUNTIME_DIR is set (run inside a desktop session, under "
                              "dbus-run-session, or through tools/run)\n", stderr);
                return EXIT_UNAVAILABLE;
        }
        return 0;
}

int cli_live_error(struct timeconv *tc, const char *what, int r) {
        fprintf(stderr, "timeconv: %s: %s\n", what, cli_reason(tc, r));
        return cli_exit_status(r);
}

int cli_unknown_domain(struct timeconv *tc, const char *name) {
        _cleanup_(timeconv_domains_freep) struct timeconv_domain **domains = NULL;

        fprintf(stderr, "timeconv: unknown domain '%s'", name);
        if (tc && timeconv_list_domains(tc, &domains) >= 0) {
                fputs("; timeconvd has:", stderr);
                for (struct timeconv_domain **d = domains; *d; d++)
                        fprintf(stderr, "%s %s", d == domains ? "" : ",", timeconv_domain_get_name(*d));
        }
        fputc('\n', stderr);
        return EXIT_DATAERR;
}

/* Whether argv asks for help: --help or -h before a "--". */
static bool wants_help(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        return false;
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
                        return true;
        }
        return false;
}

static int run(int argc, char **argv) {
        static const struct {
                const char *name;
                int (*run)(int argc, char **argv);
        } commands[] = {
                { "convert", cli_cmd_convert },
                { "domains", cli_cmd_domains },
                { "now", cli_cmd_now },
                { "monitor", cli_cmd_monitor },
                { "push", cli_cmd_push },
                { "export", cli_cmd_export },
                { "frames", cli_cmd_frames },
                { "trace", cli_cmd_trace },
        };
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd)
                return cli_usage_error("%s", "missing command");
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
                cli_help_command(stdout, strcmp(cmd, "help") == 0 && argc > 2 ? argv[2] : NULL);
                return 0;
        }
        if (strcmp(cmd, "--version") == 0) {
                printf("timeconv %s\n", timeconv_version());
                return 0;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(cmd, commands[i].name) == 0) {
                        /* Here rather than in each command, so that every command (frames
                         * included) prints its own help. */
                        if (wants_help(argc - 1, argv + 1)) {
                                cli_help_command(stdout, cmd);
                                return 0;
                        }
                        return commands[i].run(argc - 1, argv + 1);
                }
        return cli_usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv) {
        int status = run(argc, argv);

        /* What went through stdio (help, version, tables) and could not be written is an error
         * too, whoever printed it: timeconv --help > /dev/full fails. */
        if ((fflush(stdout) != 0 || ferror(stdout)) && (status == 0 || status == EXIT_IOERR)) {
                fputs("timeconv: cannot write to standard output\n", stderr);
                status = EXIT_IOERR;
        }
        return status;
}
