/* SPDX-License-Identifier: MIT */

/* timeconv domains and now: one request to timeconvd each. The table rows (shared with
 * monitor) show each domain against CLOCK_MONOTONIC, which is what people compare with, while
 * the daemon calibrates against monotonic_raw: rates are converted here. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-io.h"
#include "cli-table.h"
#include "cli.h"

/* Options every live command takes (--json where json is not NULL, --wide where wide is not
 * NULL); returns -1 to go on, else the exit status. */
static int common_options(int argc, char **argv, bool *json, bool *wide) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "wide", no_argument, NULL, 'w' },
                CLI_COMMON_OPTIONS,
                {}
        };
        int opt;

        while ((opt = getopt_long(argc, argv, "jwh", options, NULL)) >= 0)
                switch (opt) {
                case 'j':
                        if (!json)
                                return cli_usage_error("%s", "--json is not an option of this command");
                        *json = true;
                        break;
                case 'w':
                        if (!wide)
                                return cli_usage_error("%s", "--wide is not an option of this command");
                        *wide = true;
                        break;
                default:
                        return cli_common_option(opt, argv[0]);
                }
        return -1;
}

/* What domains and now do first: their options, n_args arguments (else the usage error
 * args_error), a handle. true with *ret to go on; false with the command's exit code in
 * *ret_exit (--help, --version, a usage error, no daemon). */
static bool start(int argc, char **argv, bool *json, bool *wide, int n_args, const char *args_error,
                  struct timeconv **ret, int *ret_exit) {
        int r;

        r = common_options(argc, argv, json, wide);
        if (r >= 0) {                           /* --help, --version, a bad option */
                *ret_exit = r;
                return false;
        }
        if (argc - optind != n_args) {
                *ret_exit = n_args == 0 ? cli_usage_error("unexpected argument '%s'", argv[optind])
                                        : cli_usage_error("%s", args_error);
                return false;
        }
        r = cli_open(ret);
        if (r != 0) {
                *ret_exit = r;
                return false;
        }
        return true;
}

/* Closes tc after the one call the command makes, which returned r: 0, or the exit status that
 * says what failed and why. */
static int finish(struct timeconv *tc, int r, const char *what) {
        r = r < 0 ? cli_live_error(tc, what, r) : 0;
        timeconv_close(tc);
        return r;
}

int cli_cmd_domains(int argc, char **argv) {
        struct timeconv_domain **domains = NULL;
        struct timeconv *tc = NULL;
        bool json = false, wide = false;
        CliOut *out;
        int r;

        if (!start(argc, argv, &json, &wide, 0, NULL, &tc, &r))
                return r;
        r = finish(tc, timeconv_list_domains(tc, &domains), "cannot list the domains");
        if (r != 0)
                return r;

        out = malloc(sizeof(*out));
        if (!out) {
                timeconv_domains_free(domains);
                return EXIT_FAILURE;
        }
        cli_out_init(out, STDOUT_FILENO);
        if (json)
                cli_table_json(out, domains, false);
        else
                cli_table_text_fit(out, domains, NULL, cli_now_monotonic_ns(), cli_table_width(wide, STDOUT_FILENO));
        r = cli_out_flush(out);
        free(out);
        timeconv_domains_free(domains);
        if (r < 0) {
                fprintf(stderr, "timeconv: cannot write: %s\n", strerror(-r));
                return EXIT_IOERR;
        }
        return 0;
}

/* The unit of domain as the daemon lists it ("us", "frame"), into unit; "" when unknown. */
static void domain_unit(struct timeconv *tc, const char *domain, char unit[static 16]) {
        struct timeconv_domain **domains = NULL;

        unit[0] = 0;
        if (timeconv_list_domains(tc, &domains) < 0)
                return;
        for (struct timeconv_domain **d = domains; *d; d++)
                if (strcmp((*d)->name, domain) == 0)
                        snprintf(unit, 16, "%s", (*d)->unit);
        timeconv_domains_free(domains);
}

int cli_cmd_now(int argc, char **argv) {
        struct timeconv *tc = NULL;
        int64_t value, uncertainty_ns;
        char unit[16] = "";
        bool json = false;
        const char *domain;
        int r, path;

        if (!start(argc, argv, &json, NULL, 1, "now needs exactly one DOMAIN", &tc, &r))
                return r;
        domain = argv[optind];
        r = timeconv_now(tc, domain, &value, &uncertainty_ns);
        if (r < 0 && !cli_unavailable(r) && timeconv_last_path(tc) != TIMECONV_PATH_DBUS &&
            timeconv_set_paths(tc, TIMECONV_PATH_DBUS) >= 0)
                /* Failed in the table: ask the daemon, whose answer says why. */
                r = timeconv_now(tc, domain, &value, &uncertainty_ns);
        path = timeconv_last_path(tc);
        if (r == -ENOENT)
                r = cli_unknown_domain(tc, domain);
        else if (r == -EINVAL && !timeconv_last_error_message(tc) && cli_name_problem(domain)) {
                fprintf(stderr, "timeconv: '%s': %s\n", domain, cli_name_problem(domain));
                r = EXIT_DATAERR;
        } else if (r < 0) {
                char quoted[CLI_NAME_MAX + 3];

                /* "domain 'x11' is unavailable" names the domain already. */
                snprintf(quoted, sizeof(quoted), "'%s'", domain);
                r = strstr(cli_reason(tc, r), quoted) ? cli_live_error(tc, "now", r) : cli_live_error(tc, domain, r);
        } else
                domain_unit(tc, domain, unit);
        timeconv_close(tc);
        if (r != 0)
                return r;
        if (json) {
                CliOut *out = malloc(sizeof(*out));

                if (!out)
                        return EXIT_FAILURE;
                cli_out_init(out, STDOUT_FILENO);
                cli_out_str(out, "{\"domain\":");
                cli_out_json_string(out, domain, strlen(domain));
                cli_out_str(out, ",\"value\":");
                cli_out_int(out, value);
                cli_out_str(out, ",\"unit\":");
                if (unit[0])
                        cli_out_json_string(out, unit, strlen(unit));
                else
                        cli_out_str(out, "null");
                cli_out_str(out, ",\"uncertainty_ns\":");
                cli_out_int(out, uncertainty_ns);
                cli_out_str(out, path == TIMECONV_PATH_TABLE ? ",\"path\":\"table\"}\n" : ",\"path\":\"dbus\"}\n");
                r = cli_out_flush(out);
                free(out);
        } else
                /* The value in the domain's unit, the bound in ns: both said. */
                r = printf("%" PRIi64 "%s%s \xc2\xb1%" PRIi64 " ns\n", value, unit[0] ? " " : "", unit,
                           uncertainty_ns) < 0 || fflush(stdout) != 0 ? -EIO : 0;
        return r < 0 ? EXIT_IOERR : 0;
}
