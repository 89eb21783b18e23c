/* SPDX-License-Identifier: MIT */

/* timeconv export: the daemon's snapshot history, as a JSON snapshot file or (--format perfetto)
 * as a Perfetto trace of ClockSnapshot packets; --follow keeps appending the snapshots the
 * daemon takes until SIGINT or SIGTERM, so that the trace covers a recording made beside it. */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"
#include "fd-util.h"

/* How often --follow asks for the history: the daemon's ring holds minutes of snapshots, so a
 * second loses none and costs the daemon one export a second. */
#define FOLLOW_INTERVAL_MS 1000

static int export_json(struct timeconv *tc) {
        _cleanup_free_ char *json = NULL;
        size_t size;
        int r;

        r = timeconv_export_snapshots(tc, &json);
        if (r < 0)
                return cli_live_error(tc, "cannot export the snapshots", r);
        size = strlen(json);
        r = write_fd_whole(STDOUT_FILENO, json, size);
        if (r >= 0 && size > 0 && json[size - 1] != '\n')
                r = write_fd_whole(STDOUT_FILENO, "\n", 1);
        if (r < 0) {
                fprintf(stderr, "timeconv: cannot write the snapshots: %s\n", strerror(-r));
                return EXIT_IOERR;
        }
        return 0;
}

/* One export's new snapshots, appended to standard output. */
static int export_perfetto_once(struct timeconv *tc, struct timeconv_perfetto_writer *w) {
        _cleanup_free_ char *json = NULL, *data = NULL;
        size_t size;
        int r;

        r = timeconv_export_snapshots(tc, &json);
        if (r < 0)
                return cli_live_error(tc, "cannot export the snapshots", r);
        r = timeconv_perfetto_writer_add_export(w, json, strlen(json), &data, &size, NULL);
        if (r < 0) {
                fprintf(stderr, "timeconv: cannot write the snapshots as a Perfetto trace: %s\n", timeconv_strerror(r));
                return r == -EBADMSG ? EXIT_DATAERR : EXIT_FAILURE;
        }
        r = write_fd_whole(STDOUT_FILENO, data, size);
        if (r < 0) {
                fprintf(stderr, "timeconv: cannot write the trace: %s\n", strerror(-r));
                return EXIT_IOERR;
        }
        return 0;
}

/* Until SIGINT or SIGTERM: every FOLLOW_INTERVAL_MS, and on every event of the daemon, what it
 * learnt since. A signal ends it with what was written complete (each write is whole packets). */
static int export_perfetto_follow(struct timeconv *tc, struct timeconv_perfetto_writer *w) {
        sigset_t mask;
        int sfd, status = 0;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || (sfd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
                fprintf(stderr, "timeconv: cannot watch for signals: %s\n", strerror(errno));
                return EXIT_FAILURE;
        }
        while (status == 0) {
                struct pollfd p[2] = {
                        { .fd = sfd, .events = POLLIN },
                        { .fd = timeconv_get_fd(tc), .events = POLLIN },
                };

                status = export_perfetto_once(tc, w);
                if (status != 0)
                        break;
                if (poll(p, p[1].fd >= 0 ? 2 : 1, FOLLOW_INTERVAL_MS) < 0 && errno != EINTR) {
                        fprintf(stderr, "timeconv: poll: %s\n", strerror(errno));
                        status = EXIT_FAILURE;
                } else if (p[0].revents & POLLIN)
                        break;          /* interrupted: the trace so far is complete */
                else if (p[1].fd >= 0 && (p[1].revents & POLLIN))
                        (void) timeconv_process(tc);
        }
        close(sfd);
        return status;
}

int cli_cmd_export(int argc, char **argv) {
        static const struct option options[] = {
                { "format", required_argument, NULL, 'F' },
                { "follow", no_argument, NULL, 'f' },
                CLI_COMMON_OPTIONS,
                {}
        };
        _cleanup_(timeconv_freep) struct timeconv *tc = NULL;
        _cleanup_(timeconv_perfetto_writer_freep) struct timeconv_perfetto_writer *w = NULL;
        bool perfetto = false, follow = false;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (opt) {
                case 'F':
                        if (strcmp(optarg, "perfetto") == 0)
                                perfetto = true;
                        else if (strcmp(optarg, "json") != 0)
                                return cli_usage_error("unknown format '%s' (json or perfetto)", optarg);
                        break;
                case 'f':
                        follow = true;
                        break;
                default:
                        return cli_common_option(opt, "export");
                }
        if (optind < argc)
                return cli_usage_error("unexpected argument '%s'", argv[optind]);
        if (follow && !perfetto)
                return cli_usage_error("%s", "--follow needs --format perfetto (a JSON file is one document)");
        if (perfetto && isatty(STDOUT_FILENO))
                return cli_usage_error("%s", "a Perfetto trace is binary: redirect standard output to a file");

        r = cli_open(&tc);
        if (r != 0)
                return r;
        if (!perfetto)
                r = export_json(tc);
        else if ((r = timeconv_perfetto_writer_new(&w)) < 0) {
                fprintf(stderr, "timeconv: %s\n", timeconv_strerror(r));
                r = EXIT_FAILURE;
        } else
                r = follow ? export_perfetto_follow(tc, w) : export_perfetto_once(tc, w);
        return r;
}
