/* SPDX-License-Identifier: MIT */
#pragma once

/* `timeconv frames --probe`: the compositor frame-timing probe (cli-probe*.c). */

#include <stdbool.h>

#include "frames-report.h"

/* Prints the report as `timeconv frames` does (text or JSON, the plot); the exit status: 0, 1
 * when no figure could be computed, 74 when writing failed. */
int cli_frames_print(const FramesReport *r, bool json, const char *plot);

/* The probe: argv as `timeconv frames` got it, --probe among its options. */
int cli_probe(int argc, char **argv);
