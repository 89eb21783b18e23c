/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum {
        ARG_VERSION = 0x100,
        ARG_CADENCE,
        ARG_IDLE_CADENCE,
        ARG_IDLE_AFTER,
        ARG_LOG_LEVEL,
        ARG_NO_X11,
        ARG_NO_GPU,
        ARG_GPU_SOFTWARE,
        ARG_DISPLAY,
        ARG_X11_TRACKED,
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
        { "gpu-software", no_argument,       NULL, ARG_GPU_SOFTWARE },
        { "display",      required_argument, NULL, ARG_DISPLAY      },
        { "x11-tracked",  no_argument,       NULL, ARG_X11_TRACKED  },
        {}
};

static int parse_seconds(const char *s, double min, uint64_t *ret_usec) {
        char *end = NULL;
        double seconds;

        errno = 0;
        seconds = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !isfinite(seconds) ||
            seconds < min || seconds > OPTIONS_SECONDS_MAX)
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
                        if (parse_seconds(optarg, OPTIONS_SECONDS_MIN, &o.cadence_usec) < 0)
                                goto bad_value;
                        break;
                case ARG_IDLE_CADENCE:
                        if (parse_seconds(optarg, OPTIONS_SECONDS_MIN, &o.idle_cadence_usec) < 0)
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
                case ARG_GPU_SOFTWARE:
                        o.gpu_software = true;
                        break;
                case ARG_DISPLAY:
                        if (optarg[0] == '\0') {
                                log_error(log, "--display needs a non-empty NAME");
                                return -EINVAL;
                        }
                        o.display = optarg;
                        break;
                case ARG_X11_TRACKED:
                        o.x11_tracked = true;
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
                          optarg, long_options[option_index].name, c == ARG_IDLE_AFTER ? 0.0 : OPTIONS_SECONDS_MIN,
                          OPTIONS_SECONDS_MAX);
                return -EINVAL;
        }

        if (optind < argc) {
                log_error(log, "unexpected argument '%s'; try 'timeconvd --help'", argv[optind]);
                return -EINVAL;
        }

        *ret = o;
        return 0;
}
