/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <sys/timex.h>

#include "cli-kernel.h"

int cli_kernel_time(CliKernelTime *ret) {
        /* modes 0: read only, allowed to anyone. */
        struct timex tx = { .modes = 0 };
        int state = adjtimex(&tx);

        if (state < 0)
                return -errno;
        *ret = (CliKernelTime) {
                .synchronised = state != TIME_ERROR && !(tx.status & STA_UNSYNC),
                .tai_offset_s = tx.tai,
                .max_error_us = tx.maxerror,
                .est_error_us = tx.esterror,
        };
        return 0;
}
