/* SPDX-License-Identifier: MIT */
#pragma once

/* `timeconv frames --probe`: the compositor frame-timing probe (cli-probe*.c). */

/* The probe: argv as `timeconv frames` got it, --probe among its options. */
int cli_probe(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Prints what the probe did before the report: text, or the JSON object's opening up to
 * "report": (cpu_percent NAN when not known). */
typedef void (*CliProbeHeader)(const void *userdata, bool json, double cpu_percent);

/* The end of every probe's header: its CPU use and why it stopped early (stopped < 0), as text
 * lines, or as the JSON object's last keys and its close up to "report":. */
void cli_probe_header_end(bool json, double cpu_percent, int stopped, const char *stop_message);

/* The probe's frame log text read back through `timeconv frames`' parser and report, after
 * header. An exit status. */
int cli_probe_summary(const char *text, size_t size, bool json, const char *plot, int64_t cpu_ns, int64_t wall_ns,
                      CliProbeHeader header, const void *userdata);

/* text to the frame log (opened before the frames were measured): 0 or -EIO. */
int cli_probe_write_log(FILE *log, const char *text, size_t size);

/* Frame index's row of the frame log to out; *ret_raw: written unconverted. 0 or -errno. */
typedef int (*CliProbeRecord)(void *userdata, size_t index, FILE *out, bool *ret_raw);

/* The frame log of n_frames rows (write_row's) as text, and to log (opened before the frames) when
 * given. *ret_raw: how many frames timeconvd could not convert. */
int cli_probe_log_text(size_t n_frames, CliProbeRecord write_row, void *userdata, FILE *log, char **ret_text,
                       size_t *ret_size, size_t *ret_raw);

/* The exit status after the summary (status): a run that stopped early (stopped < 0) says why
 * and where its frames are, and fails; n_raw frames that could not be converted make it fail
 * too. */
int cli_probe_stopped(int status, int stopped, const char *stop_message, const char *log_path, size_t n_raw);

struct timeconv;
struct WaylandProbeOptions;

/* The probe on a Wayland compositor (cli-probe-wayland-log.c): the frames, their presented times
 * converted to CLOCK_MONOTONIC through timeconvd, the log, the summary. An exit status. */
int cli_probe_wayland(struct timeconv *tc, const struct WaylandProbeOptions *o, FILE *log, const char *log_path,
                      bool json, const char *plot);
