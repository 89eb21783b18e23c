/* SPDX-License-Identifier: MIT */

/* The error every parser gives (frames-internal.h): a message that names its line. Trimming and
 * numbers are basic/'s (parse-util.h). */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "frames-internal.h"

int frames_fail(FramesError *ret_error, unsigned line, const char *fmt, ...) {
        va_list ap;

        ret_error->line = line;
        va_start(ap, fmt);
        vsnprintf(ret_error->message, sizeof(ret_error->message), fmt, ap);
        va_end(ap);
        return -EBADMSG;
}
