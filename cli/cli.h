/* SPDX-License-Identifier: MIT */
#pragma once

/* What the timeconv CLI's commands share. The CLI uses the public API of libtimeconv only.
 * Exit status (sysexits.h): 0 all done, 1 another failure (no path between the domains, an
 * answer out of range), 64 usage (EX_USAGE), 65 bad data: a value that is not an integer, an
 * unknown or malformed domain name, a malformed snapshot file or frame dump (EX_DATAERR), 66 an
 * unreadable file (EX_NOINPUT), 69 the daemon, the bus or the domain is not there
 * (EX_UNAVAILABLE), 74 a write error (EX_IOERR). */

#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>

#include "cleanup.h"
#include "timeconv.h"

/* The library's *_free() for _cleanup_(). */
static inline void timeconv_freep(struct timeconv **p) {
        timeconv_free(*p);
}

static inline void timeconv_domains_freep(struct timeconv_domain ***p) {
        timeconv_domains_free(*p);
}

static inline void timeconv_perfetto_writer_freep(struct timeconv_perfetto_writer **p) {
        timeconv_perfetto_writer_free(*p);
}

static inline void timeconv_trace_freep(struct timeconv_trace **p) {
        timeconv_trace_free(*p);
}

enum {
        EXIT_USAGE = 64,
        EXIT_DATAERR = 65,
        EXIT_NOINPUT = 66,
        EXIT_UNAVAILABLE = 69,
        EXIT_IOERR = 74,
};

/* Prints "timeconv: " fmt (with arg) and a hint; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

/* --mode's argument, nearest or drift, as a TIMECONV_MODE_*: 0, or a usage error (EXIT_USAGE). */
int cli_parse_mode(const char *s, int *ret_mode);

/* Whether r says the daemon or the bus cannot be reached (exit status 69). */
bool cli_unavailable(int r);

/* Opens the session bus; on failure prints why and returns EXIT_UNAVAILABLE, else 0. */
int cli_open(struct timeconv **ret);

/* Prints what a failed live call means ("timeconv: WHAT: REASON", REASON the daemon's own
 * message when it gave one) and returns the exit status. */
int cli_live_error(struct timeconv *tc, const char *what, int r);

/* The exit status for the error r of a live call. */
int cli_exit_status(int r);

/* The reason of a failed call: the daemon's message, else timeconv_strerror(r). */
const char *cli_reason(struct timeconv *tc, int r);

/* A domain the daemon does not know, said once with the names it does know:
 * "timeconv: unknown domain 'x'; timeconvd has: a, b, c". Returns EXIT_DATAERR. */
int cli_unknown_domain(struct timeconv *tc, const char *name);

/* The longest domain name the daemon takes, in bytes. */
#define CLI_NAME_MAX 63

/* Why a domain name cannot even be sent to the daemon (empty, too long, not UTF-8: the
 * library refuses it before the daemon could say why), or NULL. */
const char *cli_name_problem(const char *name);

/* Keeps the worse of two exit statuses: 69, 74, 65, 1, then 0. */
int cli_worse_status(int a, int b);

/* The help of one command (NULL: all of them). */
void cli_help_command(FILE *f, const char *command);

/* The options every command takes, last in its table. */
#define CLI_COMMON_OPTIONS                                      \
        { "help", no_argument, NULL, 'h' },                     \
        { "version", no_argument, NULL, 'V' }

/* What an option of getopt_long() that the command does not handle itself means: --help and
 * --version (exit 0 after printing), anything else a usage error (64). */
int cli_common_option(int opt, const char *command);

int cli_cmd_convert(int argc, char **argv);
int cli_cmd_domains(int argc, char **argv);
int cli_cmd_now(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_monitor(int argc, char **argv);
int cli_cmd_push(int argc, char **argv);
int cli_cmd_trace(int argc, char **argv);
