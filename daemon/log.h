/* SPDX-License-Identifier: MIT */
#pragma once

/* The daemon's only logger: one line per message on stderr, prefixed with the syslog priority
 * in angle brackets (<3> err ... <7> debug), which journald turns into the entry's priority.
 * No global state: the level lives in a Log the caller owns and passes down. */

#include <stdbool.h>
#include <syslog.h>

#define LOG_PROGRAM "timeconvd"

typedef struct Log {
        int max_level;          /* LOG_ERR .. LOG_DEBUG; messages above it are dropped */
} Log;

#define LOG_INIT { .max_level = LOG_INFO }

/* "err", "warning", "notice", "info", "debug" (also "error", "warn" and the digits 0-7) ->
 * the syslog level; -EINVAL for anything else. */
int log_level_from_string(const char *s);

static inline bool log_enabled(const Log *log, int level) {
        return level <= log->max_level;
}

void log_message(const Log *log, int level, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* Logs with errno set to |error| (so "%m" prints its text); returns -|error|, for
 * "return log_error_errno(log, r, ...);". */
int log_message_errno(const Log *log, int level, int error, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

#define log_error(log, ...)   log_message((log), LOG_ERR, __VA_ARGS__)
#define log_warning(log, ...) log_message((log), LOG_WARNING, __VA_ARGS__)
#define log_notice(log, ...)  log_message((log), LOG_NOTICE, __VA_ARGS__)
#define log_info(log, ...)    log_message((log), LOG_INFO, __VA_ARGS__)
#define log_debug(log, ...)   log_message((log), LOG_DEBUG, __VA_ARGS__)

#define log_error_errno(log, error, ...)   log_message_errno((log), LOG_ERR, (error), __VA_ARGS__)
#define log_warning_errno(log, error, ...) log_message_errno((log), LOG_WARNING, (error), __VA_ARGS__)
#define log_debug_errno(log, error, ...)   log_message_errno((log), LOG_DEBUG, (error), __VA_ARGS__)
