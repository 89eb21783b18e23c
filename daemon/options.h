/* SPDX-License-Identifier: MIT */
#pragma once

/* The command line of timeconvd. */

#include <stdbool.h>
#include <stdint.h>

#include "log.h"

typedef enum OptionsAction {
        OPTIONS_RUN,
        OPTIONS_HELP,
        OPTIONS_VERSION,
} OptionsAction;

typedef struct Options {
        OptionsAction action;
        uint64_t cadence_usec;          /* between bursts while clients are active */
        uint64_t idle_cadence_usec;     /* between bursts when nobody asked for idle_after_usec */
        uint64_t idle_after_usec;
        int log_level;
        bool no_x11;
        bool no_gpu;
        bool gpu_software;              /* also offer Vulkan devices of type CPU (lavapipe) */
        const char *display;            /* X display for the x11 domains; NULL: $DISPLAY */
        bool x11_tracked;               /* never call X time the identity (benchmarks, tests) */
} Options;

/* Faster than 10 ms would spend the machine on calibration; slower than a day leaves bounds
 * that say nothing. */
#define OPTIONS_SECONDS_MIN 0.01
#define OPTIONS_SECONDS_MAX 86400.0

#define OPTIONS_CADENCE_USEC_DEFAULT      (UINT64_C(1) * 1000000)
#define OPTIONS_IDLE_CADENCE_USEC_DEFAULT (UINT64_C(30) * 1000000)
#define OPTIONS_IDLE_AFTER_USEC_DEFAULT   (UINT64_C(60) * 1000000)

/* Parses argv into *ret. A usage error is reported through log (naming the option) and
 * returns -EINVAL: the caller exits with status 64 (EX_USAGE). */
int options_parse(int argc, char *argv[], const Log *log, Options *ret);
