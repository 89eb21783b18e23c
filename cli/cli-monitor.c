/* SPDX-License-Identifier: MIT */

/* timeconv monitor: the domain table, refreshed every --interval seconds until interrupted (or
 * --count tables), with a mark on a domain when a Discontinuity signal arrives. On a terminal it
 * redraws in place; otherwise (and with --once) it appends each table and prints each event as
 * a line of its own, so that it can be read by a program; with --json, one JSON object per line
 * for each refresh and each event (JSON Lines). */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"
#include "cli-table.h"
#include "cli.h"

typedef struct Monitor {
        bool tty;
        bool json;              /* JSON Lines: one object per refresh and per event */
        bool daemon_gone;
        bool daemon_back;       /* it started again since the last wait_until() */
        bool follow;            /* wait for a daemon that stopped, rather than end */
        bool said_gone;         /* the current outage was reported */
        size_t width;           /* of the text table: 0 no limit */
        CliMarks marks;
        CliOut out;
} Monitor;

static void json_event_start(Monitor *m, const char *event) {
        cli_out_str(&m->out, "{\"event\":");
        cli_out_json_string(&m->out, event, strlen(event));
        cli_out_str(&m->out, ",\"monotonic_now_ns\":");
        cli_out_int(&m->out, cli_now_monotonic_ns());
}

static void on_event_json(Monitor *m, const struct timeconv_event *e) {
        if (e->type == TIMECONV_EVENT_DISCONTINUITY) {
                json_event_start(m, "discontinuity");
                cli_out_str(&m->out, ",\"domain\":");
                cli_out_json_string(&m->out, e->domain, strlen(e->domain));
                cli_out_str(&m->out, ",\"kind\":");
                cli_out_json_string(&m->out, e->kind ?: "step", strlen(e->kind ?: "step"));
                cli_out_str(&m->out, ",\"step_ns\":");
                cli_out_int(&m->out, e->step_ns);
                cli_out_str(&m->out, ",\"monotonic_ns\":");
                cli_out_int(&m->out, e->monotonic_ns);
        } else if (e->type == TIMECONV_EVENT_DAEMON_CHANGED) {
                json_event_start(m, "daemon");
                cli_out_str(&m->out, e->daemon_running ? ",\"running\":true" : ",\"running\":false");
        } else if (e->type == TIMECONV_EVENT_DOMAINS_CHANGED) {
                static const char *const keys[] = { "added", "removed", "changed" };
                const char *const *lists[] = { e->added, e->removed, e->changed };

                json_event_start(m, "domains_changed");
                for (size_t i = 0; i < 3 && e->added; i++) {
                        cli_out_str(&m->out, ",\"");
                        cli_out_str(&m->out, keys[i]);
                        cli_out_str(&m->out, "\":[");
                        for (const char *const *n = lists[i]; n && *n; n++) {
                                if (n != lists[i])
                                        cli_out_char(&m->out, ',');
                                cli_out_json_string(&m->out, *n, strlen(*n));
                        }
                        cli_out_char(&m->out, ']');
                }
        } else
                return;
        cli_out_str(&m->out, "}\n");
}

static void on_event(const struct timeconv_event *e, void *userdata) {
        Monitor *m = userdata;

        if (e->type == TIMECONV_EVENT_DISCONTINUITY)
                cli_marks_add(&m->marks, e->domain, e->monotonic_ns, e->step_ns, e->kind);
        else if (e->type == TIMECONV_EVENT_DAEMON_CHANGED) {
                m->daemon_gone = !e->daemon_running;
                m->daemon_back |= e->daemon_running;
        }
        if (m->json) {
                on_event_json(m, e);
                return;
        }
        if (m->tty)
                return;
        if (e->type == TIMECONV_EVENT_DISCONTINUITY) {
                cli_out_str(&m->out, "! discontinuity ");
                cli_out_str(&m->out, e->domain);
                cli_out_str(&m->out, " kind=");
                cli_out_str(&m->out, e->kind ?: "step");
                cli_out_str(&m->out, " step_ns=");
                cli_out_int(&m->out, e->step_ns);
                cli_out_str(&m->out, " monotonic_ns=");
                cli_out_int(&m->out, e->monotonic_ns);
                cli_out_char(&m->out, '\n');
        } else if (e->type == TIMECONV_EVENT_DAEMON_CHANGED)
                cli_out_str(&m->out, e->daemon_running ? "! timeconvd started\n" : "! timeconvd stopped\n");
        else if (e->type == TIMECONV_EVENT_DOMAINS_CHANGED) {
                cli_out_str(&m->out, "! domains changed");
                for (const char *const *n = e->added; n && *n; n++) {
                        cli_out_str(&m->out, " +");
                        cli_out_str(&m->out, *n);
                }
                for (const char *const *n = e->removed; n && *n; n++) {
                        cli_out_str(&m->out, " -");
                        cli_out_str(&m->out, *n);
                }
                for (const char *const *n = e->changed; n && *n; n++) {
                        cli_out_str(&m->out, " ~");
                        cli_out_str(&m->out, *n);
                }
                cli_out_char(&m->out, '\n');
        }
}

/* One table; -errno when the daemon could not be asked. */
static int draw(struct timeconv *tc, Monitor *m) {
        struct timeconv_domain **domains = NULL;
        int r;

        r = timeconv_list_domains(tc, &domains);
        /* Signals that came with the answer first, so that the table shows them. */
        (void) timeconv_process(tc);
        /* Following a daemon that went away: its absence is said once, not at every try. */
        if (r < 0 && m->follow && m->said_gone)
                return cli_out_flush(&m->out) < 0 ? -EIO : r;
        m->said_gone = r < 0 && m->follow;
        if (m->json) {
                json_event_start(m, "domains");
                if (r < 0) {
                        cli_out_str(&m->out, ",\"error\":");
                        cli_out_json_string(&m->out, cli_reason(tc, r), strlen(cli_reason(tc, r)));
                } else {
                        cli_out_str(&m->out, ",\"domains\":");
                        cli_table_json(&m->out, domains, true);
                        timeconv_domains_free(domains);
                }
                cli_out_str(&m->out, "}\n");
                return cli_out_flush(&m->out) < 0 ? -EIO : r;
        }
        /* Home, then erase below: within a scrolling region in origin mode (tools/run keeps its
         * lines above the table so) that leaves what is above the region alone. */
        if (m->tty)
                cli_out_str(&m->out, "\033[H\033[J");
        if (r < 0 && m->tty) {
                cli_out_str(&m->out, "timeconv monitor: ");
                cli_out_str(&m->out, cli_reason(tc, r));
                cli_out_str(&m->out, "; waiting for it\n");
        } else if (r < 0)
                fprintf(stderr, "timeconv: monitor: %s%s\n", cli_reason(tc, r),
                        m->follow ? "; waiting for it (--follow)" : "");
        else {
                cli_table_text_fit(&m->out, domains, &m->marks, cli_now_monotonic_ns(), m->width);
                if (!m->tty)
                        cli_out_char(&m->out, '\n');
                timeconv_domains_free(domains);
        }
        return cli_out_flush(&m->out) < 0 ? -EIO : r;
}

/* Handles bus input until deadline_ns (CLOCK_MONOTONIC), or until the daemon came back. */
static int wait_until(struct timeconv *tc, Monitor *m, int64_t deadline_ns) {
        for (;;) {
                int64_t left_ns = deadline_ns - cli_now_monotonic_ns();
                struct pollfd p = { .fd = timeconv_get_fd(tc), .events = POLLIN };
                int k;

                /* A daemon that came back is shown at once, not an interval later. */
                if (left_ns <= 0 || m->daemon_back) {
                        m->daemon_back = false;
                        return 0;
                }
                k = poll(&p, 1, (int) ((left_ns + 999999) / 1000000));
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0) {
                        int r = timeconv_process(tc);

                        if (r < 0)
                                return r;
                        if (cli_out_flush(&m->out) < 0)
                                return -EIO;
                }
        }
}

static int parse_interval(const char *s, int64_t *ret_ns) {
        double seconds;

        if (parse_double(s, 0.001, 86400, &seconds) < 0)
                return -EINVAL;
        *ret_ns = (int64_t) llround(seconds * 1e9);
        return 0;
}

int cli_cmd_monitor(int argc, char **argv) {
        static const struct option options[] = {
                { "once", no_argument, NULL, '1' },
                { "interval", required_argument, NULL, 'i' },
                { "count", required_argument, NULL, 'c' },
                { "json", no_argument, NULL, 'j' },
                { "follow", no_argument, NULL, 'F' },
                { "wide", no_argument, NULL, 'w' },
                CLI_COMMON_OPTIONS,
                {}
        };
        int64_t interval_ns = 1000000000, deadline_ns;
        struct timeconv *tc = NULL;
        int64_t count_arg;
        uint64_t count = 0;
        bool json = false, follow = false, wide = false;
        Monitor *m;
        int opt, r, status = 0;

        while ((opt = getopt_long(argc, argv, "1i:c:jFwh", options, NULL)) >= 0)
                switch (opt) {
                case '1':
                        count = 1;
                        break;
                case 'i':
                        if (parse_interval(optarg, &interval_ns) < 0)
                                return cli_usage_error("bad --interval '%s' (SECONDS, 0.001 to 86400)", optarg);
                        break;
                case 'c':
                        /* Not strtoul(): it takes "-1" for ULONG_MAX, and a monitor that never
                         * ends for a typo. */
                        if (parse_int64(optarg, strlen(optarg), &count_arg) < 0 || count_arg <= 0)
                                return cli_usage_error("bad --count '%s' (a positive integer)", optarg);
                        count = (uint64_t) count_arg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'F':
                        follow = true;
                        break;
                case 'w':
                        wide = true;
                        break;
                default:
                        return cli_common_option(opt, "monitor");
                }
        if (optind < argc)
                return cli_usage_error("unexpected argument '%s'", argv[optind]);

        m = calloc(1, sizeof(*m));
        if (!m)
                return EXIT_FAILURE;
        m->json = json;
        m->tty = !json && isatty(STDOUT_FILENO) && count != 1;
        m->follow = follow && count != 1;
        m->width = cli_table_width(wide, STDOUT_FILENO);
        cli_out_init(&m->out, STDOUT_FILENO);
        r = cli_open(&tc);
        if (r != 0) {
                free(m);
                return r;
        }
        timeconv_set_event_handler(tc, on_event, m);

        deadline_ns = cli_now_monotonic_ns();
        for (uint64_t n = 0, tries = 0; count == 0 || n < count; tries++) {
                if (tries > 0) {
                        r = wait_until(tc, m, deadline_ns);
                        if (r < 0) {
                                status = cli_live_error(tc, "monitor", r);
                                break;
                        }
                }
                deadline_ns += interval_ns;
                r = draw(tc, m);
                if (r == -EIO) {
                        status = EXIT_IOERR;
                        break;
                }
                /* Off a terminal, nobody waits for the daemon to come back, unless told to
                 * (--follow: a logger that outlives a restart). */
                if (r < 0 && (!m->tty || count == 1) && !(m->follow && cli_exit_status(r) == EXIT_UNAVAILABLE)) {
                        status = cli_exit_status(r);
                        break;
                }
                /* --count counts the tables shown, not the tries while it is away. */
                if (r >= 0 || !m->follow)
                        n++;
        }
        timeconv_close(tc);
        free(m);
        return status;
}
