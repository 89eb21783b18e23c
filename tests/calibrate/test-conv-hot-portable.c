/* SPDX-License-Identifier: MIT */

/* test-conv-hot with the hot form's portable C arithmetic, which x86-64 builds replace by a few
 * instructions of assembly: both must give the record's answers to the bit. */

#define CONV_HOT_PORTABLE 1
#include "test-conv-hot.c"
