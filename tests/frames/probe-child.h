/* SPDX-License-Identifier: MIT */
#pragma once

/* The probe run in the background for the tests that act while it measures (kill the
 * compositor, the X server): its standard error read line by line, so that a test acts when the
 * probe has said it measures, never after a sleep. */

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

typedef struct ProbeChild {
        pid_t pid;                      /* 0: not running */
        int pidfd;
        int err_fd;                     /* the read end of its standard error; -1 at EOF */
        char *err;                      /* what it wrote there so far, NUL-terminated */
        size_t err_size;
} ProbeChild;

/* Runs argv (argv[0] the program) on the session bus at bus_address, standard output to
 * /dev/null. */
int probe_child_start(ProbeChild *c, const char *bus_address, const char *const *argv);

/* Reads its standard error until needle is in it: 0, -EPIPE when it closed it first,
 * -ETIMEDOUT. */
int probe_child_wait_for(ProbeChild *c, const char *needle, int timeout_ms);

/* Reads the rest of its standard error and waits for it to end within timeout_ms (the exit
 * status in *ret_status); -ETIMEDOUT when it did not (it is killed then). */
int probe_child_finish(ProbeChild *c, int timeout_ms, int *ret_status);

void probe_child_done(ProbeChild *c);

/* The integer at key of o, 0 when there is none. */
int64_t probe_json_int(json_t *o, const char *key);

/* The probe's log at path, a JSON object a line, read with jansson (not the reader under test):
 * a malloc'ed array of *ret_n rows of row_size bytes, each filled by fill from its line's
 * object; NULL when the file cannot be read or a line is not JSON. */
void *probe_read_log(const char *path, size_t row_size, void (*fill)(json_t *o, void *row), size_t *ret_n);

/* Runs program with first and the arguments ap holds (NULL-terminated, 29 at most) on h's bus,
 * with the extra environment env (may be NULL), killed after timeout_ms. *out and *err are
 * freed and replaced by what it wrote (NULL when it could not run), *status by its exit status
 * (-1 when a signal ended it). Returns that status, or a negative errno when it could not run. */
int probe_run_v(const Harness *h, const char *program, const char *const *env, int timeout_ms, char **out,
                char **err, int *status, const char *first, va_list ap);
