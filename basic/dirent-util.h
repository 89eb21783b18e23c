/* SPDX-License-Identifier: MIT */
#pragma once

/* _cleanup_closedir_ for the few files that read a directory: apart from cleanup.h, so that
 * <dirent.h> and its names reach only them. Header-only, libc only. */

#include <dirent.h>

#include "cleanup.h"

#define _cleanup_closedir_ _cleanup_(closedirp)

static inline void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}
