/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",
        [LOG_ALERT] = "alert",
        [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",
        [LOG_WARNING] = "warning",
        [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",
        [LOG_DEBUG] = "debug",
};

int log_level_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int level = 0; level <= LOG_DEBUG; level++)
                if (strcmp(s, level_names[level]) == 0)
                        return level;
        if (strcmp(s, "error") == 0)
                return LOG_ERR;
        if (strcmp(s, "warn") == 0)
                return LOG_WARNING;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -EINVAL;
}

/* One write() per line, so that lines from a crash or a second process never interleave. */
static void log_write(int level, const char *format, va_list ap) {
        char line[1024];
        int n, m;

        n = snprintf(line, sizeof(line), "<%d>%s: ", level, LOG_PROGRAM);
        if (n < 0)
                return;
        m = vsnprintf(line + n, sizeof(line) - (size_t) n, format, ap);
        if (m < 0)
                return;
        n += m;
        if ((size_t) n >= sizeof(line) - 1) {
                /* Truncated: mark it, and keep room for the newline. */
                n = (int) sizeof(line) - 2;
                memcpy(line + n - 3, "...", 3);
        }
        line[n++] = '\n';
        (void) !write(STDERR_FILENO, line, (size_t) n);
}

void log_message(const Log *log, int level, const char *format, ...) {
        int saved_errno = errno;
        va_list ap;

        if (!log_enabled(log, level))
                return;
        va_start(ap, format);
        log_write(level, format, ap);
        va_end(ap);
        errno = saved_errno;
}

int log_message_errno(const Log *log, int level, int error, const char *format, ...) {
        va_list ap;

        error = error < 0 ? -error : error;
        if (log_enabled(log, level)) {
                errno = error;
                va_start(ap, format);
                log_write(level, format, ap);
                va_end(ap);
        }
        return -error;
}
