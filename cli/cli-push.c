/* SPDX-License-Identifier: MIT */

/* timeconv push: an application clock from standard input. Each line is one snapshot: the
 * application's value and the reference's, read at the same instant by whoever wrote the line
 * ("APP REF"), or the reference read before and after the application's clock ("APP REF0
 * REF1"), which bounds the snapshot honestly whatever happened between the two reads. We do
 * not read the reference ourselves: by the time a line arrives here it is late by however
 * long the pipe took, an error nobody could bound. The domain belongs to this process's bus
 * connection: it exists while push runs (with --hold, until it is stopped). */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-io.h"
#include "cli.h"

/* Up to three integers separated by spaces or tabs; the count, or -EINVAL / -ERANGE. */
static int parse_line(const char *s, size_t n, int64_t values[3]) {
        size_t k = 0, i = 0;

        while (i < n) {
                size_t start;
                int r;

                while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
                        i++;
                if (i == n)
                        break;
                if (k == 3)
                        return -EINVAL;
                start = i;
                while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
                        i++;
                r = parse_int64(s + start, i - start, &values[k]);
                if (r < 0)
                        return r;
                k++;
        }
        return (int) k;
}

/* Keeps the domain (the bus connection) until the process is stopped. */
static int hold(struct timeconv *tc) {
        for (;;) {
                struct pollfd p = { .fd = timeconv_get_fd(tc), .events = POLLIN };

                if (poll(&p, 1, -1) < 0 && errno != EINTR)
                        return -errno;
                if (timeconv_process(tc) < 0)
                        return 0;       /* the bus is gone, and the domain with it */
        }
}

static int push_lines(struct timeconv *tc, const char *domain, const char *against, CliOut *out) {
        CliLines *lines = malloc(sizeof(*lines));       /* 1 MiB: too large for the stack */
        int status = 0, r, k_read;
        const char *line;
        size_t size;

        if (!lines) {
                fputs("timeconv: out of memory\n", stderr);
                return EXIT_FAILURE;
        }
        cli_lines_init(lines, STDIN_FILENO);
        while ((k_read = cli_lines_next(lines, &line, &size)) > 0) {
                struct timeconv_reading readings[3];
                int64_t v[3];
                int k = k_read == CLI_LINE_TOO_LONG ? -E2BIG : parse_line(line, size, v);
                const char *reason = NULL;

                if (k == 0)
                        continue;       /* a blank line */
                if (k == 1)
                        reason = "a reference value is needed too: APP REF, or APP REF_BEFORE REF_AFTER";
                else if (k < 0)
                        reason = k == -E2BIG ? "line too long" : k == -ERANGE ? "value out of range" :
                                 "not APP REF or APP REF_BEFORE REF_AFTER (integers)";
                if (reason) {
                        status = cli_worse_status(status, EXIT_DATAERR);
                        cli_out_str(out, "error: ");
                        cli_out_str(out, reason);
                        cli_out_char(out, '\n');
                        cli_out_flush(out);
                        continue;
                }
                /* Bracketed: the reference before, the application, the reference after. */
                readings[0] = (struct timeconv_reading) { .domain = against, .value = v[1] };
                readings[1] = (struct timeconv_reading) { .domain = domain, .value = v[0] };
                readings[2] = (struct timeconv_reading) { .domain = against, .value = v[2] };
                r = timeconv_push_snapshot(tc, readings, (size_t) k);
                if (r == -EEXIST) {
                        /* Taken since check_names() looked: said once, as there. */
                        fprintf(stderr, "timeconv: push: '%s': %s\n", domain, cli_reason(tc, r));
                        status = EXIT_FAILURE;
                        break;
                }
                if (r < 0) {
                        status = cli_worse_status(status, cli_exit_status(r));
                        cli_out_str(out, "error: ");
                        cli_out_str(out, cli_reason(tc, r));
                } else
                        cli_out_str(out, "ok");
                cli_out_char(out, '\n');
                /* A line per snapshot as it happens: whoever feeds us may be waiting for it. */
                if (cli_out_flush(out) < 0) {
                        status = EXIT_IOERR;
                        break;
                }
        }
        if (k_read < 0) {
                fprintf(stderr, "timeconv: cannot read standard input: %s\n", strerror(-k_read));
                status = EXIT_NOINPUT;
        }
        free(lines);
        return status;
}

/* The owner of an application domain ("owner"), or NULL for one of the daemon's own. */
static const char *owner_of(const struct timeconv_domain *d) {
        for (unsigned i = 0; i < d->n_properties && i < TIMECONV_PROPERTIES_MAX; i++)
                if (d->properties[i].type == 's' && strcmp(d->properties[i].key, "owner") == 0)
                        return d->properties[i].s;
        return NULL;
}

/* What the daemon would refuse at every line, said once before a line is read: a reference it
 * does not have, a DOMAIN that is its own or another client's. 0 to go on, else the exit status. */
static int check_names(struct timeconv *tc, const char *domain, const char *against) {
        struct timeconv_domain **domains = NULL;
        const struct timeconv_domain *ours = NULL, *reference = NULL;
        int r, status = 0;

        r = timeconv_list_domains(tc, &domains);
        if (r < 0)
                return cli_live_error(tc, "push", r);
        for (struct timeconv_domain **d = domains; *d; d++) {
                if (strcmp((*d)->name, domain) == 0)
                        ours = *d;
                if (strcmp((*d)->name, against) == 0)
                        reference = *d;
        }
        if (!reference)
                status = cli_unknown_domain(tc, against);
        else if (owner_of(reference)) {
                fprintf(stderr, "timeconv: push: --against '%s' is an application domain (of %s): name one of "
                        "timeconvd's own, such as monotonic\n", against, owner_of(reference));
                status = EXIT_DATAERR;
        } else if (ours && !owner_of(ours)) {
                fprintf(stderr, "timeconv: push: '%s' is one of timeconvd's own domains: name a clock of yours "
                        "(e.g. audio0)\n", domain);
                status = EXIT_DATAERR;
        } else if (ours) {
                fprintf(stderr, "timeconv: push: '%s': the domain belongs to another client (%s)\n", domain,
                        owner_of(ours));
                status = EXIT_FAILURE;
        }
        timeconv_domains_free(domains);
        return status;
}

int cli_cmd_push(int argc, char **argv) {
        static const struct option options[] = {
                { "against", required_argument, NULL, 'a' },
                { "hold", no_argument, NULL, 'H' },
                CLI_COMMON_OPTIONS,
                {}
        };
        const char *against = NULL, *domain;
        struct timeconv *tc = NULL;
        bool keep = false;
        int opt, r, status;
        CliOut *out;

        while ((opt = getopt_long(argc, argv, "a:h", options, NULL)) >= 0)
                switch (opt) {
                case 'a':
                        against = optarg;
                        break;
                case 'H':
                        keep = true;
                        break;
                default:
                        return cli_common_option(opt, "push");
                }
        if (optind + 1 != argc)
                return cli_usage_error("%s", "push needs exactly one DOMAIN");
        domain = argv[optind];
        if (!against)
                return cli_usage_error("%s", "push needs --against REFERENCE (e.g. monotonic)");
        if (strcmp(domain, against) == 0)
                return cli_usage_error("%s", "DOMAIN and --against must differ");
        /* Said once, before any line: the daemon would refuse every one of them alike. */
        if (cli_name_problem(domain)) {
                fprintf(stderr, "timeconv: push: DOMAIN '%s': %s\n", domain, cli_name_problem(domain));
                return EXIT_DATAERR;
        }
        if (cli_name_problem(against)) {
                fprintf(stderr, "timeconv: push: --against '%s': %s\n", against, cli_name_problem(against));
                return EXIT_DATAERR;
        }

        out = malloc(sizeof(*out));
        if (!out)
                return EXIT_FAILURE;
        cli_out_init(out, STDOUT_FILENO);
        r = cli_open(&tc);
        if (r != 0) {
                free(out);
                return r;
        }
        status = check_names(tc, domain, against);
        if (status == 0) {
                status = push_lines(tc, domain, against, out);
                if (keep && status != EXIT_IOERR && status != EXIT_NOINPUT)
                        (void) hold(tc);
        }
        timeconv_close(tc);
        free(out);
        return status;
}
