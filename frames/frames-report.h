/* SPDX-License-Identifier: MIT */
#pragma once

/* What `timeconv frames` prints: a text for people, or one JSON object. */

#include <stdio.h>

#include "frames-stats.h"

/* format: the name of the inputs' format ("mixed" when they differ). */
void frames_report_text(FILE *f, const char *format, const FramesLog *log, const FramesStats *s);
void frames_report_json(FILE *f, const char *format, const FramesLog *log, const FramesStats *s);

/* The `timeconv frames` command (cli-frames.c), for timeconv-cli.c's dispatch. */
int cli_cmd_frames(int argc, char **argv);
