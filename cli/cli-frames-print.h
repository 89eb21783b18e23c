/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "frames-report.h"

/* Prints the report as `timeconv frames` does (text or JSON, the plot); the exit status: 0, 1
 * when no figure could be computed, 74 when writing failed. */
int cli_frames_print(const FramesReport *r, bool json, const char *plot);
