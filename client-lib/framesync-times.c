/* SPDX-License-Identifier: MIT */

/* An EWMH frame as CLOCK_MONOTONIC times (through the daemon's x11_us domain), and the JSON
 * Lines frame log that `timeconv frames` reads. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "timeconv-internal.h"

#define FRAME_FLAGS_ALL (TIMECONV_FRAME_PRESENTED | TIMECONV_FRAME_REFRESH_INTERVAL | TIMECONV_FRAME_DELAY)

/* High-precision X time wraps with its 32-bit ms part. */
#define X11_US_MODULUS (INT64_C(1000) << 32)

/* The longest line: seven fields of at most 20 characters, names and punctuation. */
#define FRAME_LOG_LINE_MAX 384

TIMECONV_EXPORT int timeconv_frame_convert(struct timeconv *tc, const struct timeconv_frame_drawn *drawn,
                                           const struct timeconv_frame_timings *timings,
                                           struct timeconv_frame_times *ret) {
        struct timeconv_frame_times t = {};
        int64_t values[2], out[2], unc[2];
        size_t n = 1;
        int r;

        if (!tc || !drawn || !ret)
                return -EINVAL;
        if (timings && (timings->counter != drawn->counter || (timings->flags & ~(unsigned) FRAME_FLAGS_ALL)))
                return -EINVAL;
        if (timings && (timings->flags & TIMECONV_FRAME_REFRESH_INTERVAL) &&
            (timings->refresh_interval_us <= 0 || timings->refresh_interval_us > INT64_MAX / 1000))
                return -ERANGE;

        t.counter = drawn->counter;
        /* The encoding is the time in us modulo the wrap, so a value whose ms part overflows 32
         * bits is the same X time (mutter sends CLOCK_MONOTONIC us unreduced when the server's
         * clock is that one). */
        values[0] = (int64_t) (drawn->drawn_x11_us % (uint64_t) X11_US_MODULUS);
        if (timings && (timings->flags & TIMECONV_FRAME_PRESENTED)) {
                if (timings->presentation_offset_us < -X11_US_MODULUS / 2 ||
                    timings->presentation_offset_us > X11_US_MODULUS / 2)
                        return -ERANGE;
                /* Same encoding, so the offset adds in it, modulo the wrap of the ms part; the
                 * daemon unwraps the result to the occurrence nearest now, as it does drawn. */
                values[1] = (values[0] + timings->presentation_offset_us + X11_US_MODULUS) % X11_US_MODULUS;
                n = 2;
        }
        r = timeconv_convert_many(tc, "x11_us", "monotonic", values, n, out, unc);
        if (r < 0)
                return r;

        t.drawn_ns = out[0];
        t.drawn_uncertainty_ns = unc[0];
        if (n == 2) {
                t.flags |= TIMECONV_FRAME_PRESENTED;
                t.presented_ns = out[1];
                /* An offset of 1 us may stand for 0 (0 means "unknown" on the wire). */
                t.presented_uncertainty_ns = unc[1] + (timings->presentation_offset_us == 1 ? 1000 : 0);
        }
        if (timings && (timings->flags & TIMECONV_FRAME_REFRESH_INTERVAL)) {
                t.flags |= TIMECONV_FRAME_REFRESH_INTERVAL;
                t.refresh_interval_ns = timings->refresh_interval_us * 1000;
        }
        if (timings && (timings->flags & TIMECONV_FRAME_DELAY)) {
                t.flags |= TIMECONV_FRAME_DELAY;
                t.frame_delay_us = timings->frame_delay_us;
        }
        *ret = t;
        return 0;
}

/* "null" or the number, into buf (room for 21 bytes). */
static const char *optional(char *buf, size_t size, int known, int64_t v) {
        if (!known)
                return "null";
        snprintf(buf, size, "%" PRIi64, v);
        return buf;
}

static int format_line(const struct timeconv_frame_times *f, char *line, size_t size, size_t *ret_len) {
        char presented[24], presented_unc[24], refresh[24], delay[24];
        int len;

        if (!f || (f->flags & ~(unsigned) FRAME_FLAGS_ALL))
                return -EINVAL;
        if (f->counter > (uint64_t) INT64_MAX)
                return -ERANGE;
        len = snprintf(line, size,
                       "{\"counter\":%" PRIu64 ",\"drawn_ns\":%" PRIi64 ",\"drawn_uncertainty_ns\":%" PRIi64
                       ",\"presented_ns\":%s,\"presented_uncertainty_ns\":%s,\"refresh_interval_ns\":%s"
                       ",\"frame_delay_us\":%s}\n",
                       f->counter, f->drawn_ns, f->drawn_uncertainty_ns,
                       optional(presented, sizeof presented, f->flags & TIMECONV_FRAME_PRESENTED, f->presented_ns),
                       optional(presented_unc, sizeof presented_unc, f->flags & TIMECONV_FRAME_PRESENTED,
                                f->presented_uncertainty_ns),
                       optional(refresh, sizeof refresh, f->flags & TIMECONV_FRAME_REFRESH_INTERVAL,
                                f->refresh_interval_ns),
                       optional(delay, sizeof delay, f->flags & TIMECONV_FRAME_DELAY, f->frame_delay_us));
        if (len < 0 || (size_t) len >= size)
                return -ENOBUFS;
        *ret_len = (size_t) len;
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_log_write(FILE *f, const struct timeconv_frame_times *frame) {
        char line[FRAME_LOG_LINE_MAX];
        size_t len;
        int r;

        if (!f)
                return -EINVAL;
        r = format_line(frame, line, sizeof line, &len);
        if (r < 0)
                return r;
        errno = 0;
        if (fwrite(line, 1, len, f) != len)
                return errno > 0 ? -errno : -EIO;
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_log_write_fd(int fd, const struct timeconv_frame_times *frame) {
        char line[FRAME_LOG_LINE_MAX];
        size_t len, done = 0;
        int r;

        if (fd < 0)
                return -EINVAL;
        r = format_line(frame, line, sizeof line, &len);
        if (r < 0)
                return r;
        /* One write(2) for the line; the loop only finishes one that was cut short. */
        while (done < len) {
                ssize_t n = write(fd, line + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                done += (size_t) n;
        }
        return 0;
}
