/* SPDX-License-Identifier: MIT */
#pragma once

/* The floor of a call through the bus daemon: a service on the same private bus that converts
 * nothing. Convert adds a constant, as the tests' stand-ins do (harness_stand_in_convert()).
 * ConvertMany reads its values and answers empty arrays (BENCH_FLOOR_OBJECT_EMPTY: what a
 * caller's own bytes cost through the bus daemon) or arrays of the size the daemon's would have
 * (BENCH_FLOOR_OBJECT_ECHO: a legal answer's bytes as well).
 * ConvertManyMemfd answers empty; the echo object first maps the memfd and copies the values
 * where the answers go, as the daemon writes them.
 * What timeconvd takes beyond it is ours. */

#include <sys/types.h>

#include "harness.h"

#define BENCH_FLOOR_SERVICE "org.timeconv.BenchFloor"
#define BENCH_FLOOR_OBJECT_EMPTY "/floor/empty"
#define BENCH_FLOOR_OBJECT_ECHO "/floor/echo"

/* Runs the service in a child on h's bus until the caller goes (or kills it); its pid, once it
 * owns its name. Its BUS_API_OBJECT answers as BENCH_FLOOR_OBJECT_EMPTY does. */
int bench_floor_start(const Harness *h, pid_t *ret_pid);

/* Kills and reaps it. */
void bench_floor_stop(pid_t pid);
