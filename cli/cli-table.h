/* SPDX-License-Identifier: MIT */
#pragma once

/* The domain table of `timeconv domains` and `timeconv monitor`, as text or JSON. */

#include <stdbool.h>
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

/* One row per domain, with a header; marks may be NULL. now_ns (CLOCK_MONOTONIC) ages the
 * last calibrations. */
void cli_table_text(CliOut *out, struct timeconv_domain **domains, const CliMarks *marks, int64_t now_ns);

/* A JSON array, one object per domain (one_line: no newline at all, for JSON Lines). */
void cli_table_json(CliOut *out, struct timeconv_domain **domains, bool one_line);
