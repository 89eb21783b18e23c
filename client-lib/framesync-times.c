/* SPDX-License-Identifier: MIT */

/* An EWMH frame as CLOCK_MONOTONIC times (through the daemon's x11_us domain), and the JSON
 * Lines frame log that `timeconv frames` reads. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "fd-util.h"
#include "live-internal.h"
#include "timeconv-framesync.h"
#include "timeconv-internal.h"

#define FRAME_FLAGS_ALL (TIMECONV_FRAME_PRESENTED | TIMECONV_FRAME_REFRESH_INTERVAL | TIMECONV_FRAME_DELAY)

/* High-precision X time wraps with its 32-bit ms part. */
#define X11_US_MODULUS (INT64_C(1000) << 32)

/* The longest line: seven fields of at most 20 characters, names and punctuation. */
#define FRAME_LOG_LINE_MAX 384
/* A record's line: fourteen fields. */
#define FRAME_RECORD_LINE_MAX 1024

#define FRAME_RECORD_FLAGS_ALL                                                                   \
        (TIMECONV_FRAME_RECORD_WINDOW | TIMECONV_FRAME_RECORD_DRAWN | TIMECONV_FRAME_RECORD_BEGIN | \
         TIMECONV_FRAME_RECORD_END | TIMECONV_FRAME_RECORD_RAW | TIMECONV_FRAME_RECORD_DRAWN_RECEIVED | \
         TIMECONV_FRAME_RECORD_TIMINGS_RECEIVED)

TIMECONV_EXPORT int timeconv_frame_convert(struct timeconv *tc, const struct timeconv_frame_drawn *drawn,
                                           const struct timeconv_frame_timings *timings,
                                           struct timeconv_frame_times *ret) {
        struct timeconv_frame_times t = {};
        int64_t values[2], out[2], unc[2];
        size_t n = 1;
        int r;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!drawn || !ret)
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
        size_t len;
        int r;

        if (fd < 0)
                return -EINVAL;
        r = format_line(frame, line, sizeof line, &len);
        if (r < 0)
                return r;
        /* One write(2) for the line; more only to finish one that was cut short. */
        return write_fd_whole(fd, line, len);
}

/* Appends ",\"key\":value" (or null) to line at *len; the first field opens the object. */
static void field(char *line, size_t size, size_t *len, const char *key, int known, int64_t v) {
        int n;

        if (*len >= size)
                return;
        if (known)
                n = snprintf(line + *len, size - *len, "%s\"%s\":%" PRIi64, *len ? "," : "{", key, v);
        else
                n = snprintf(line + *len, size - *len, "%s\"%s\":null", *len ? "," : "{", key);
        *len = n < 0 ? size : *len + (size_t) n;
}

TIMECONV_EXPORT int timeconv_frame_log_write_record(FILE *f, const struct timeconv_frame_record *record) {
        const struct timeconv_frame_record *r = record;
        const struct timeconv_frame_times *t;
        char line[FRAME_RECORD_LINE_MAX];
        size_t len = 0;
        unsigned rf;
        int presented;

        if (!f || !r || (r->times.flags & ~(unsigned) FRAME_FLAGS_ALL) ||
            (r->record_flags & ~(unsigned) FRAME_RECORD_FLAGS_ALL))
                return -EINVAL;
        t = &r->times;
        rf = r->record_flags;
        if (t->counter > (uint64_t) INT64_MAX || r->drawn_x11_us > (uint64_t) INT64_MAX)
                return -ERANGE;
        /* Presented only when drawn: the presentation time is an offset from the drawn one. */
        presented = (rf & TIMECONV_FRAME_RECORD_DRAWN) && (t->flags & TIMECONV_FRAME_PRESENTED);

        /* The order is part of the format: readers may take the fast path for it. */
        field(line, sizeof line, &len, "window", rf & TIMECONV_FRAME_RECORD_WINDOW, r->window);
        field(line, sizeof line, &len, "counter", 1, (int64_t) t->counter);
        field(line, sizeof line, &len, "begin_ns", rf & TIMECONV_FRAME_RECORD_BEGIN, r->begin_ns);
        field(line, sizeof line, &len, "end_ns", rf & TIMECONV_FRAME_RECORD_END, r->end_ns);
        field(line, sizeof line, &len, "drawn_x11_us", rf & TIMECONV_FRAME_RECORD_RAW, (int64_t) r->drawn_x11_us);
        field(line, sizeof line, &len, "presentation_offset_us", (rf & TIMECONV_FRAME_RECORD_RAW) && presented,
              r->presentation_offset_us);
        field(line, sizeof line, &len, "drawn_ns", rf & TIMECONV_FRAME_RECORD_DRAWN, t->drawn_ns);
        field(line, sizeof line, &len, "drawn_uncertainty_ns", rf & TIMECONV_FRAME_RECORD_DRAWN,
              t->drawn_uncertainty_ns);
        field(line, sizeof line, &len, "presented_ns", presented, t->presented_ns);
        field(line, sizeof line, &len, "presented_uncertainty_ns", presented, t->presented_uncertainty_ns);
        field(line, sizeof line, &len, "refresh_interval_ns", t->flags & TIMECONV_FRAME_REFRESH_INTERVAL,
              t->refresh_interval_ns);
        field(line, sizeof line, &len, "frame_delay_us", t->flags & TIMECONV_FRAME_DELAY, t->frame_delay_us);
        field(line, sizeof line, &len, "drawn_received_ns", rf & TIMECONV_FRAME_RECORD_DRAWN_RECEIVED,
              r->drawn_received_ns);
        field(line, sizeof line, &len, "timings_received_ns", rf & TIMECONV_FRAME_RECORD_TIMINGS_RECEIVED,
              r->timings_received_ns);
        if (len + 2 >= sizeof line)
                return -ENOBUFS;
        line[len++] = '}';
        line[len++] = '\n';
        errno = 0;
        if (fwrite(line, 1, len, f) != len)
                return errno > 0 ? -errno : -EIO;
        return 0;
}
