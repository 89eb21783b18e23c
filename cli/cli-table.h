/* SPDX-License-Identifier: MIT */
#pragma once

/* The domain table of `timeconv domains` and `timeconv monitor`, as text or JSON. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli-io.h"
#include "timeconv.h"

#define CLI_MARKS_MAX 64

/* The latest discontinuity of each domain that had one (monitor). */
typedef struct CliMarks {
        size_t n;
        struct {
                char domain[64];
                int64_t monotonic_ns;
                int64_t step_ns;
                char kind[8];           /* "step", "rate", "restart" */
        } marks[CLI_MARKS_MAX];
} CliMarks;

/* kind NULL: "step" (an older daemon does not say). */
void cli_marks_add(CliMarks *m, const char *domain, int64_t monotonic_ns, int64_t step_ns, const char *kind);

int64_t cli_now_monotonic_ns(void);

/* The width of the text table by default: a terminal's, if wider. */
#define CLI_TABLE_WIDTH 80

/* The width the table may take on fd: 0 (no limit) when wide, else 80 or the terminal's. */
size_t cli_table_width(bool wide, int fd);

/* One row per domain, with a header, and what the columns mean under it; marks may be NULL.
 * now_ns (CLOCK_MONOTONIC) ages the last calibrations. Every column. */
void cli_table_text(CliOut *out, struct timeconv_domain **domains, const CliMarks *marks, int64_t now_ns);

/* The same within max_width columns (0: no limit): the bound to the reference, the age and the
 * events (then lines under the table) are left out, in that order, until it fits. */
void cli_table_text_fit(CliOut *out, struct timeconv_domain **domains, const CliMarks *marks, int64_t now_ns,
                        size_t max_width);

/* A JSON array, one object per domain (one_line: no newline at all, for JSON Lines). */
void cli_table_json(CliOut *out, struct timeconv_domain **domains, bool one_line);
