/* SPDX-License-Identifier: MIT */
#pragma once

/* Whether a program is an executable in PATH, the way execvp() will look for it. Header-only,
 * libc only: the TAP helpers and the integration harness both ask. */

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline bool program_in_path(const char *program) {
        const char *p = getenv("PATH");

        if (!p || !*p)
                p = "/usr/local/bin:/usr/bin:/bin";
        while (*p) {
                char path[PATH_MAX];
                size_t len = strcspn(p, ":");
                int n = snprintf(path, sizeof(path), "%.*s/%s", (int) len, p, program);

                if (n > 0 && (size_t) n < sizeof(path) && access(path, X_OK) == 0)
                        return true;
                p += len + (p[len] == ':');
        }
        return false;
}
