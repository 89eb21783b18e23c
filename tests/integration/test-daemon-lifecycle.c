/* SPDX-License-Identifier: MIT */

/* timeconvd's life: --help, --version, usage errors (exit 64), every option accepted at once,
 * readiness (READY=1 and the "ready, N domains" line), priority prefixes on every log line,
 * and SIGTERM: exit status 0 within 5 s, the bus name released.
 * usage: test-daemon-lifecycle TIMECONVD VERSION */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"

#define RUN_TIMEOUT_MS 10000

static const char *const documented_options[] = {
        "--help", "--version", "--cadence=", "--idle-cadence=", "--idle-after=", "--log-level=",
        "--no-x11", "--no-gpu", "--display=",
};

/* Each must be refused at once with status 64 (EX_USAGE), before the daemon touches the bus. */
static const char *const usage_errors[][3] = {
        { "--no-such-option", NULL },
        { "--cadence=abc", NULL },
        { "--cadence=-1", NULL },
        { "--cadence=", NULL },
        { "--idle-after=1s", NULL },
        { "--log-level=loud", NULL },
        { "--no-gpu", "extra-argument", NULL },
};

static int run(const Harness *h, const char *daemon, const char *const *args, char **ret_out, char **ret_err) {
        const char *argv[8] = { daemon };
        int status = -1, r;

        for (size_t i = 0; args[i]; i++)
                argv[i + 1] = args[i];
        r = harness_run(h, argv, NULL, RUN_TIMEOUT_MS, ret_out, ret_err, &status);
        if (r < 0)
                return r;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void check_command_line(const Harness *h, const char *daemon, const char *version) {
        _cleanup_free_ char *help = NULL, *ver = NULL;
        size_t missing = 0;

        is_int(run(h, daemon, (const char *[]) { "--help", NULL }, &help, NULL), 0, "--help exits 0");
        for (size_t i = 0; i < sizeof(documented_options) / sizeof(documented_options[0]); i++) {
                char opt[32];

                /* "--cadence=" may be written "--cadence=SECONDS": look for the name. */
                snprintf(opt, sizeof(opt), "%s", documented_options[i]);
                opt[strcspn(opt, "=")] = 0;
                if (!help || !strstr(help, opt)) {
                        diag("--help does not mention %s", opt);
                        missing++;
                }
        }
        is_int(missing, 0, "--help mentions every option");
        ok(help && strstr(help, "x11") && strstr(help, "x11_us") && strstr(help, "msc") && strstr(help, "gpu0") &&
           strstr(help, "PushSnapshot"), "--help names every kind of domain, not only the POSIX clocks");
        is_int(run(h, daemon, (const char *[]) { "--version", NULL }, &ver, NULL), 0, "--version exits 0");
        ok(ver && strstr(ver, version), "--version prints %s", version);

        for (size_t i = 0; i < sizeof(usage_errors) / sizeof(usage_errors[0]); i++) {
                _cleanup_free_ char *err = NULL;
                int status = run(h, daemon, usage_errors[i], NULL, &err);

                ok(status == 64 && err && *err, "%s%s%s: a usage error, exit status 64 with a message (got %d)",
                   usage_errors[i][0], usage_errors[i][1] ? " " : "", usage_errors[i][1] ?: "", status);
        }
}

/* Every line on stderr starts with a syslog priority "<0>" .. "<7>". */
static void check_log(const Harness *h, size_t n_domains) {
        _cleanup_free_ char *log = NULL;
        size_t lines = 0, bad = 0, ready_domains = 0;
        bool ready = false;

        if (harness_daemon_log(h, &log) < 0) {
                ok(false, "the daemon's log can be read");
                return;
        }
        for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
                lines++;
                if (!(line[0] == '<' && line[1] >= '0' && line[1] <= '7' && line[2] == '>') && bad++ < 3)
                        diag("no priority prefix: %s", line);
                if (sscanf(line, "<6>timeconvd: ready, %zu domains", &ready_domains) == 1)
                        ready = true;
        }
        ok(lines > 0 && bad == 0, "every one of the %zu log lines has a <N> priority prefix", lines);
        ok(ready && ready_domains == n_domains, "the log says \"<6>timeconvd: ready, %zu domains\" (said %zu)",
           n_domains, ready_domains);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(clock_strv_freep) char **domains = NULL;
        const char *const args[] = { "--cadence=0.5", "--idle-cadence=5", "--idle-after=2", "--log-level=debug",
                                     "--no-x11", "--no-gpu", "--display=:4242", NULL };
        HarnessNameWatch watch = {};
        int64_t elapsed_ns = 0;
        int status = -1, r;

        tap_args(argc, argv, 2, "TIMECONVD VERSION");

        r = harness_new(NULL, &h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return done_testing();
        check_command_line(h, argv[1], argv[2]);

        r = harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS);
        is_int(r, 0, "timeconvd with every option starts and says READY=1");
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = clock_list_domains(bus, &domains);
        if (r >= 0)
                r = harness_name_watch(bus, BUS_API_SERVICE, &watch);
        is_int(r, 0, "it answers ListDomains");
        if (r < 0)
                return done_testing();
        ok(watch.owned, "%s is owned once READY=1 is sent", BUS_API_SERVICE);
        check_log(h, clock_strv_length(domains));

        r = harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, &status, &elapsed_ns);
        is_int(r, 0, "SIGTERM ends timeconvd within 5 s");
        ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "with exit status 0 (wait status 0x%x, after %.3f s)", (unsigned) status, elapsed_ns / 1e9);
        r = harness_name_wait(&watch, false, HARNESS_STOP_TIMEOUT_MS);
        is_int(r, 0, "its name leaves the bus");
        harness_name_unwatch(&watch);
        return done_testing();
}
