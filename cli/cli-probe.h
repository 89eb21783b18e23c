/* SPDX-License-Identifier: MIT */
#pragma once

/* `timeconv frames --probe`: the compositor frame-timing probe (cli-probe*.c). */

/* The probe: argv as `timeconv frames` got it, --probe among its options. */
int cli_probe(int argc, char **argv);
