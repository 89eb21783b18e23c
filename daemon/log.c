/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
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

/* The longest line we write, newline included: what journald and a terminal take in one piece. */
#define LOG_LINE_MAX 1024

/* Where a cut may fall in UTF-8 text: never before a continuation byte (10xxxxxx). */
static size_t utf8_back(const char *s, size_t i) {
        while (i > 0 && ((unsigned char) s[i] & 0xc0) == 0x80)
                i--;
        return i;
}

static size_t utf8_forward(const char *s, size_t i, size_t len) {
        while (i < len && ((unsigned char) s[i] & 0xc0) == 0x80)
                i++;
        return i;
}

/* Fits text (len bytes) into ret (room bytes, no NUL) by eliding its middle: what failed is said
 * at the start, why (the "%m" text) at the end, and a long path or name between them is what
 * can be spared. Returns the bytes written. */
static size_t elide_middle(char *ret, size_t room, const char *text, size_t len) {
        size_t head, tail;

        head = utf8_back(text, (room - 3) / 2);
        tail = utf8_forward(text, len - (room - 3 - head), len);
        memcpy(ret, text, head);
        memcpy(ret + head, "...", 3);
        memcpy(ret + head + 3, text + tail, len - tail);
        return head + 3 + (len - tail);
}

/* One write() per line, so that lines from a crash or a second process never interleave. */
static void log_write(int level, const char *format, va_list ap) {
        _cleanup_free_ char *text = NULL;
        char line[LOG_LINE_MAX];
        size_t room;
        va_list aq;
        int n, m;

        n = snprintf(line, sizeof(line), "<%d>%s: ", level, LOG_PROGRAM);
        if (n < 0)
                return;
        /* Room for the message, the newline kept aside. */
        room = sizeof(line) - (size_t) n - 1;
        va_copy(aq, ap);
        m = vsnprintf(line + n, room + 1, format, ap);
        if (m >= 0 && (size_t) m > room) {
                /* Too long: format it whole (off the stack), then keep both of its ends. */
                int k = vasprintf(&text, format, aq);

                if (k < 0)
                        text = NULL;
                if (text && (size_t) k > room)
                        m = (int) elide_middle(line + n, room, text, (size_t) k);
                else {
                        /* Out of memory: the head, marked as cut. */
                        m = (int) room;
                        memcpy(line + n + m - 3, "...", 3);
                }
        }
        va_end(aq);
        if (m < 0)
                return;
        n += m;
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
