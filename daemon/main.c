/* SPDX-License-Identifier: MIT */

/* timeconvd: keeps every clock domain calibrated against CLOCK_MONOTONIC_RAW and answers
 * conversions as org.timeconv.Clock1 on the session bus. */

#include <stdio.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "options.h"
#include "util.h"

static int run(int argc, char *argv[]) {
        Log log = LOG_INIT;
        Options options;
        _cleanup_(daemon_freep) Daemon *d = NULL;       /* after log: freed while log still lives */
        int r;

        r = options_parse(argc, argv, &log, &options);
        if (r < 0)
                return DAEMON_EXIT_USAGE;
        log.max_level = options.log_level;

        switch (options.action) {
        case OPTIONS_HELP:
                options_help();
                return DAEMON_EXIT_OK;
        case OPTIONS_VERSION:
                printf("timeconvd %s\n", TIMECONV_VERSION);
                return DAEMON_EXIT_OK;
        case OPTIONS_RUN:
                break;
        }

        r = daemon_new(&log, &options, &d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        r = daemon_open_domains(d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        r = daemon_connect_bus(d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        r = daemon_start(d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        return daemon_loop(d);
}

int main(int argc, char *argv[]) {
        return run(argc, argv);
}
