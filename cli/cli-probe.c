/* SPDX-License-Identifier: MIT */

/* timeconv frames --probe: not built yet. */

#include <stdio.h>

#include "cli-probe.h"
#include "cli.h"

int cli_probe(int argc, char **argv) {
        fputs("timeconv: frames --probe: not available in this build\n", stderr);
        return EXIT_UNAVAILABLE;
}
