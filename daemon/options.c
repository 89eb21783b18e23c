/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* Faster than 10 ms would spend the machine on calibration; slower than a day leaves bounds
 * that say nothing. */
#define SECONDS_MIN 0.01
#define SECONDS_MAX 86400.0

enum {
        ARG_VERSION = 0x100,
        ARG_CADENCE,
        ARG_IDLE_CADENCE,
        ARG_IDLE_AFTER,
        ARG_LOG_LEVEL,
        ARG_NO_X11,
        ARG_NO_GPU,
        ARG_DISPLAY,
};

static const struct option long_options[] = {
        { "help",         no_argument,       NULL, 'h'              },
        { "version",      no_argument,       NULL, ARG_VERSION      },
        { "cadence",      required_argument, NULL, ARG_CADENCE      },
        { "idle-cadence", required_argument, NULL, ARG_IDLE_CADENCE },
        { "idle-after",   required_argument, NULL, ARG_IDLE_AFTER   },
        { "log-level",    required_argument, NULL, ARG_LOG_LEVEL    },
        { "no-x11",       no_argument,       NULL, ARG_NO_X11       },
        { "no-gpu",       no_argument,       NULL, ARG_NO_GPU       },
        { "display",      required_argument, NULL, ARG_DISPLAY      },
        {}
};

void options_help(void) {
        printf("Usage: timeconvd [OPTION...]\n"
               "\n"
               "Keeps every clock domain of this machine calibrated against CLOCK_MONOTONIC_RAW\n"
               "and answers conversions between them, each with an honest error bound, as\n"
               "org.timeconv.Clock1 on the session bus.\n"
               "\n"
               "Options:\n"
               "  -h --help                Show this help and exit\n"
               "     --version             Show the version and exit\n"
               "     --cadence=SECONDS     Time between calibration bursts while clients are\n"
               "                           active (default 1)\n"
               "     --idle-cadence=SECONDS\n"
               "                           Time between bursts once no client has called for\n"
               "                           --idle-after seconds (default 30); a call while idle\n"
               "                           brings the next burst forward at once\n"
               "     --idle-after=SECONDS  Back off to --idle-cadence after this long without a\n"
               "                           method call, counted from start-up (default 60)\n"
               "     --log-level=LEVEL     err, warning, notice, info or debug (default info)\n"
               "     --no-x11              Do not offer the X server time domains\n"
               "     --no-gpu              Do not offer the GPU time domains\n"
               "     --display=NAME        X display for the X domains (default $DISPLAY)\n"
               "\n"
               "SECONDS is a decimal number from %g to %g, e.g. 0.5.\n"
               "\n"
               "Logs go to standard error, one line each, with a <N> syslog priority prefix.\n"
               "Once the first burst of every domain is in, timeconvd prints\n"
               "\"<6>timeconvd: ready, N domains\" and sends READY=1 to systemd; it pings the\n"
               "systemd watchdog when the unit sets WatchdogSec=. SIGTERM and SIGINT end it\n"
               "cleanly.\n"
               "\n"
               "Exit status: 0 on a clean exit (signal, --help, --version), 1 when the daemon\n"
               "cannot run (no session bus, the name is taken, the bus went away), 2 on a\n"
               "usage error.\n",
               SECONDS_MIN, SECONDS_MAX);
}

static int parse_seconds(const char *s, double min, uint64_t *ret_usec) {
        char *end = NULL;
        double seconds;

        errno = 0;
        seconds = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !isfinite(seconds) ||
            seconds < min || seconds > SECONDS_MAX)
                return -EINVAL;
        *ret_usec = (uint64_t) llround(seconds * 1e6);
        return 0;
}

/* The option as the user wrote it, for messages: getopt leaves it at argv[optind - 1], possibly
 * with "=VALUE" attached. */
static const char *option_text(int argc, char *argv[]) {
        return optind > 0 && optind <= argc ? argv[optind - 1] : "?";
}

int options_parse(int argc, char *argv[], const Log *log, Options *ret) {
        Options o = {
                .action = OPTIONS_RUN,
                .cadence_usec = OPTIONS_CADENCE_USEC_DEFAULT,
                .idle_cadence_usec = OPTIONS_IDLE_CADENCE_USEC_DEFAULT,
                .idle_after_usec = OPTIONS_IDLE_AFTER_USEC_DEFAULT,
                .log_level = LOG_INFO,
        };
        int c, level, option_index = 0;

        /* We report errors ourselves, through the logger. */
        opterr = 0;
        optind = 0;
        while ((c = getopt_long(argc, argv, ":h", long_options, &option_index)) >= 0) {
                switch (c) {
                case 'h':
                        o.action = OPTIONS_HELP;
                        break;
                case ARG_VERSION:
                        o.action = OPTIONS_VERSION;
                        break;
                case ARG_CADENCE:
                        if (parse_seconds(optarg, SECONDS_MIN, &o.cadence_usec) < 0)
                                goto bad_value;
                        break;
                case ARG_IDLE_CADENCE:
                        if (parse_seconds(optarg, SECONDS_MIN, &o.idle_cadence_usec) < 0)
                                goto bad_value;
                        break;
                case ARG_IDLE_AFTER:
                        if (parse_seconds(optarg, 0.0, &o.idle_after_usec) < 0)
                                goto bad_value;
                        break;
                case ARG_LOG_LEVEL:
                        level = log_level_from_string(optarg);
                        if (level < 0) {
                                log_error(log, "invalid value '%s' for --log-level (expected err, warning, "
                                          "notice, info or debug)", optarg);
                                return -EINVAL;
                        }
                        o.log_level = level;
                        break;
                case ARG_NO_X11:
                        o.no_x11 = true;
                        break;
                case ARG_NO_GPU:
                        o.no_gpu = true;
                        break;
                case ARG_DISPLAY:
                        if (optarg[0] == '\0') {
                                log_error(log, "--display needs a non-empty NAME");
                                return -EINVAL;
                        }
                        o.display = optarg;
                        break;
                case ':':
                        log_error(log, "option '%s' needs a value; try 'timeconvd --help'",
                                  option_text(argc, argv));
                        return -EINVAL;
                case '?':
                default:
                        if (optopt > 0 && optopt < 0x100 && optopt != '?')
                                log_error(log, "unknown option '-%c'; try 'timeconvd --help'", optopt);
                        else
                                log_error(log, "unknown option '%s'; try 'timeconvd --help'",
                                          option_text(argc, argv));
                        return -EINVAL;
                }
                continue;

        bad_value:
                log_error(log, "invalid value '%s' for --%s: expected SECONDS, a number from %g to %g",
                          optarg, long_options[option_index].name, c == ARG_IDLE_AFTER ? 0.0 : SECONDS_MIN,
                          SECONDS_MAX);
                return -EINVAL;
        }

        if (optind < argc) {
                log_error(log, "unexpected argument '%s'; try 'timeconvd --help'", argv[optind]);
                return -EINVAL;
        }

        *ret = o;
        return 0;
}
