/* SPDX-License-Identifier: MIT */
#pragma once

/* What the timeconv CLI's commands share. The CLI uses the public API of libtimeconv only.
 * Exit status: 0 all done, 1 a value failed, 2 usage, 65 a malformed snapshot file
 * (EX_DATAERR), 66 an unreadable one (EX_NOINPUT), 69 the daemon or the bus is not there
 * (EX_UNAVAILABLE), 74 a write error (EX_IOERR). */

#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>

#include "timeconv.h"

enum {
        EXIT_USAGE = 2,
        EXIT_DATAERR = 65,
        EXIT_NOINPUT = 66,
        EXIT_UNAVAILABLE = 69,
        EXIT_IOERR = 74,
};

void cli_help(FILE *f);

/* Prints "timeconv: " fmt (with arg) and a hint; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

/* Whether r says the daemon or the bus cannot be reached (exit status 69). */
bool cli_unavailable(int r);

/* Opens the session bus; on failure prints why and returns EXIT_UNAVAILABLE, else 0. */
int cli_open(struct timeconv **ret);

/* Prints what a failed live call means ("timeconv: WHAT: REASON") and returns the exit status. */
int cli_live_error(const char *what, int r);

int cli_cmd_convert(int argc, char **argv);
int cli_cmd_domains(int argc, char **argv);
int cli_cmd_now(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_monitor(int argc, char **argv);
