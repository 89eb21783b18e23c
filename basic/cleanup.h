/* SPDX-License-Identifier: MIT */
#pragma once

/* _cleanup_ and the cleanup functions every layer uses (libsystemd's own macros are not public;
 * it does export sd_event_unrefp, sd_bus_unrefp and friends). Header-only, libc only. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline int close_nointr(int fd) {
        /* Linux closes the fd even when close() is interrupted: never retry. */
        return close(fd) < 0 ? -errno : 0;
}

static inline void closep(int *fd) {
        if (*fd >= 0)
                (void) close_nointr(*fd);
}

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}

/* Hands an owned pointer or fd over: the variable no longer frees it. */
static inline void *take_ptr_(void **p) {
        void *v = *p;

        *p = NULL;
        return v;
}
#define TAKE_PTR(p) take_ptr_((void **) &(p))

static inline int take_fd_(int *fd) {
        int v = *fd;

        *fd = -1;
        return v;
}
#define TAKE_FD(fd) take_fd_(&(fd))
