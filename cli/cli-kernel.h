/* SPDX-License-Identifier: MIT */
#pragma once

/* What the kernel says about CLOCK_REALTIME's discipline (adjtimex(2) read-only, as timedatectl
 * asks it): whether an NTP daemon keeps it synchronised, and the TAI offset that makes
 * CLOCK_TAI. The daemon calibrates the clocks; whether realtime is the true time is the
 * kernel's to say. */

#include <stdbool.h>
#include <stdint.h>

typedef struct CliKernelTime {
        bool synchronised;      /* STA_UNSYNC clear and the state is not TIME_ERROR */
        int64_t tai_offset_s;   /* TAI - UTC; 0: nobody told the kernel, CLOCK_TAI = CLOCK_REALTIME */
        int64_t max_error_us;
        int64_t est_error_us;
} CliKernelTime;

/* 0, or -errno of adjtimex(). */
int cli_kernel_time(CliKernelTime *ret);
