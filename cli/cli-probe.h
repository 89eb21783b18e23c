/* SPDX-License-Identifier: MIT */
#pragma once

/* `timeconv frames --probe`: the compositor frame-timing probe (cli-probe*.c). */

/* The probe: argv as `timeconv frames` got it, --probe among its options. */
int cli_probe(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Prints what the probe did before the report: text, or the JSON object's opening up to
 * "report": (cpu_percent NAN when not known). */
typedef void (*CliProbeHeader)(const void *userdata, bool json, double cpu_percent);

/* The probe's frame log text read back through `timeconv frames`' parser and report, after
 * header. An exit status. */
int cli_probe_summary(const char *text, size_t size, bool json, const char *plot, int64_t cpu_ns, int64_t wall_ns,
                      CliProbeHeader header, const void *userdata);

/* text to path. 0 or -errno. */
int cli_probe_write_file(const char *path, const char *text, size_t size);

struct timeconv;
struct WaylandProbeOptions;

/* The probe on a Wayland compositor (cli-probe-wayland-log.c): the frames, their presented times
 * converted to CLOCK_MONOTONIC through timeconvd, the log, the summary. An exit status. */
int cli_probe_wayland(struct timeconv *tc, const struct WaylandProbeOptions *o, const char *log_path, bool json,
                      const char *plot);
