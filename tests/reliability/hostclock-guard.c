/* SPDX-License-Identifier: MIT */

/* hostclock-guard: an LD_PRELOAD object that stops a test or benchmark the moment it tries to
 * set, step or slew one of the machine's clocks (clock_settime, settimeofday, adjtimex,
 * ntp_adjtime or clock_adjtime with any mode). Every other program on the machine would see
 * such a change; the tests move clocks only through clockshift.so, which nobody else sees.
 * The call never reaches the kernel: the guard names it on stderr and aborts. Read-only forms
 * (modes 0) go on to the next definition (clockshift's, or libc's). */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static __attribute__((noreturn)) void refuse(const char *call, unsigned modes) {
        char msg[160];
        int n = snprintf(msg, sizeof(msg), "hostclock-guard: %s (modes 0x%x) would change the machine's clock\n",
                         call, modes);

        if (n > 0)
                (void) write(STDERR_FILENO, msg, (size_t) n < sizeof(msg) ? (size_t) n : sizeof(msg) - 1);
        abort();
}

EXPORT int clock_settime(clockid_t id, const struct timespec *ts) {
        refuse("clock_settime", 0);
}

EXPORT int settimeofday(const struct timeval *tv, const struct timezone *tz) {
        refuse("settimeofday", 0);
}

EXPORT int adjtimex(struct timex *tx) {
        static int (*next)(struct timex *);

        if (tx->modes != 0)
                refuse("adjtimex", tx->modes);
        if (!next)
                next = (int (*)(struct timex *)) dlsym(RTLD_NEXT, "adjtimex");
        return next(tx);
}

EXPORT int ntp_adjtime(struct timex *tx) {
        static int (*next)(struct timex *);

        if (tx->modes != 0)
                refuse("ntp_adjtime", tx->modes);
        if (!next)
                next = (int (*)(struct timex *)) dlsym(RTLD_NEXT, "ntp_adjtime");
        return next(tx);
}

EXPORT int clock_adjtime(clockid_t id, struct timex *tx) {
        static int (*next)(clockid_t, struct timex *);

        if (tx->modes != 0)
                refuse("clock_adjtime", tx->modes);
        if (!next)
                next = (int (*)(clockid_t, struct timex *)) dlsym(RTLD_NEXT, "clock_adjtime");
        return next(id, tx);
}
