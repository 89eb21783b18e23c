/* SPDX-License-Identifier: MIT */
#ifndef TIMECONV_FRAMESYNC_H
#define TIMECONV_FRAMESYNC_H

/* libtimeconv's EWMH frame synchronisation: a product of the same library (libtimeconv.so, the
 * same pkg-config Cflags) kept in a header of its own, as libevdev keeps libevdev-uinput.h, so
 * that a program that only converts does not pull in <stdio.h> or the frame structs. C89-clean
 * like timeconv.h (tests/client-lib/test-client-header.sh compiles both). */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "timeconv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Frame synchronisation (EWMH) ----
 *
 * The client messages of the EWMH frame-synchronisation protocol, as the five 32-bit values of
 * a format-32 ClientMessage (xcb's data32[5], Xlib's data.l[5]); the extended frame counter's
 * rules; and a FRAME_DRAWN/FRAME_TIMINGS pair as CLOCK_MONOTONIC times through the daemon's
 * x11_us domain. Except timeconv_frame_convert(), these are pure functions: no X connection,
 * no daemon. Counter values are XSync counters, signed 64-bit: a value above INT64_MAX is
 * -ERANGE. */

/* _NET_WM_SYNC_REQUEST (message_type WM_PROTOCOLS): data[0] the _NET_WM_SYNC_REQUEST atom,
 * data[1] the timestamp, data[2] and data[3] the low and high 32 bits of the value, data[4] 1
 * when the extended frame counter is meant, 0 for the basic one (any value but 0 reads as
 * extended, as GTK reads it). */
struct timeconv_sync_request {
        uint32_t timestamp_ms;          /* X server time */
        uint64_t value;                 /* the value the client sets once it handled the request */
        int extended;                   /* 1: the extended frame counter; 0: the basic one */
};

/* _NET_WM_FRAME_DRAWN: data[0] and data[1] the counter, data[2] and data[3] the drawn time,
 * low 32 bits first; data[4] 0. */
struct timeconv_frame_drawn {
        uint64_t counter;               /* the frame's counter value (its even, end value) */
        uint64_t drawn_x11_us;          /* high-precision X time (domain x11_us) of the drawing */
};

/* What struct timeconv_frame_timings and struct timeconv_frame_times know (flags). */
enum {
        TIMECONV_FRAME_PRESENTED = 1,           /* the presentation time */
        TIMECONV_FRAME_REFRESH_INTERVAL = 2,    /* the refresh interval */
        TIMECONV_FRAME_DELAY = 4                /* the compositor's frame delay */
};

/* On the wire, a frame delay with no meaningful value. */
#define TIMECONV_FRAME_DELAY_NONE 0x80000000UL

/* _NET_WM_FRAME_TIMINGS: data[0] and data[1] the counter (low, high); data[2] the presentation
 * time as a signed 32-bit offset in us from the drawn time, 0: unknown (a true offset of 0 goes
 * as 1, as mutter sends it); data[3] the refresh interval in us, 0: unknown; data[4] the frame
 * delay in us, signed 32-bit, TIMECONV_FRAME_DELAY_NONE: no meaningful value. */
struct timeconv_frame_timings {
        uint64_t counter;
        unsigned flags;                 /* TIMECONV_FRAME_*: which of the fields below are known */
        int64_t presentation_offset_us; /* presented - drawn: -2^31 < offset < 2^31 */
        int64_t refresh_interval_us;    /* 0 < interval < 2^32 */
        int64_t frame_delay_us;         /* -2^31 < delay < 2^31 */
};

/* Pack into data[5] / unpack from it. -EINVAL for a NULL pointer, flags outside TIMECONV_FRAME_*,
 * or (unpacking) a message that is not well formed: data[0] not sync_request_atom, a counter
 * above INT64_MAX; -ERANGE for a field that does not fit its wire form. */
int timeconv_sync_request_pack(const struct timeconv_sync_request *request, uint32_t sync_request_atom,
                               uint32_t data[5]);
int timeconv_sync_request_unpack(const uint32_t data[5], uint32_t sync_request_atom,
                                 struct timeconv_sync_request *ret);
int timeconv_frame_drawn_pack(const struct timeconv_frame_drawn *drawn, uint32_t data[5]);
int timeconv_frame_drawn_unpack(const uint32_t data[5], struct timeconv_frame_drawn *ret);
int timeconv_frame_timings_pack(const struct timeconv_frame_timings *timings, uint32_t data[5]);
int timeconv_frame_timings_unpack(const uint32_t data[5], struct timeconv_frame_timings *ret);

/* The extended frame counter. A client begins a frame by setting the counter to an odd value
 * above its current one, value: v % 4 == 3 for an urgent frame (one the window manager waits
 * for, after a _NET_WM_SYNC_REQUEST), which ends at v + 1; v % 4 == 1 for the others, which end
 * at v + 3. Frames thus end on multiples of 4. -EINVAL when value is odd (a frame is in
 * progress), -ERANGE past INT64_MAX. */
int timeconv_frame_begin(uint64_t value, int urgent, uint64_t *ret_begin, uint64_t *ret_end);

/* The value a window manager sends in _NET_WM_SYNC_REQUEST: the last value it saw + 240 (even,
 * so not a frame in progress, when the last one was). -ERANGE past INT64_MAX. */
int timeconv_sync_request_value(uint64_t last_seen, uint64_t *ret_value);

/* The entry of _NET_WM_SYNC_FENCES (n_fences of them) that goes with the frame begun at counter
 * value: (value / 4) % n_fences, the same for the frame's begin and its urgent begin. -EINVAL
 * for no fences. */
int timeconv_sync_fence_index(uint64_t value, size_t n_fences, size_t *ret_index);

/* A frame in CLOCK_MONOTONIC ns, a line of the frame log. */
struct timeconv_frame_times {
        uint64_t counter;
        unsigned flags;                 /* TIMECONV_FRAME_*: which of the fields below are known */
        int64_t drawn_ns;               /* when the compositor drew it (its desired/queue time) */
        int64_t drawn_uncertainty_ns;
        int64_t presented_ns;           /* when it reached the screen (the actual present time) */
        int64_t presented_uncertainty_ns;
        int64_t refresh_interval_ns;
        int64_t frame_delay_us;         /* as the compositor gave it */
};

/* drawn and timings (may be NULL: nothing presented yet) of one frame, converted through
 * timeconvd (x11_us -> monotonic): presented = drawn + the offset, its bound the conversion's.
 * A drawn time whose ms part does not fit 32 bits is taken modulo the wrap, the same X time.
 * -EINVAL when the counters differ, -ERANGE for a field out of range; besides, what
 * timeconv_convert() returns. */
int timeconv_frame_convert(struct timeconv *tc, const struct timeconv_frame_drawn *drawn,
                           const struct timeconv_frame_timings *timings,
                           struct timeconv_frame_times *ret);

/* One line of the frame log (JSON Lines, see libtimeconv(3)) to f / to fd, in one write(2) for
 * fd (with O_APPEND, lines of several writers do not mix). -EINVAL for flags outside
 * TIMECONV_FRAME_* or a NULL pointer, -ERANGE for a counter above INT64_MAX, -errno of the
 * write (-EIO when the stream does not say). */
int timeconv_frame_log_write(FILE *f, const struct timeconv_frame_times *frame);
int timeconv_frame_log_write_fd(int fd, const struct timeconv_frame_times *frame);

/* What a frame log row may say beyond struct timeconv_frame_times (flags of a record). */
enum {
        TIMECONV_FRAME_RECORD_WINDOW = 1,               /* window */
        TIMECONV_FRAME_RECORD_DRAWN = 2,                /* times.drawn_ns: the frame was drawn */
        TIMECONV_FRAME_RECORD_BEGIN = 4,                /* begin_ns */
        TIMECONV_FRAME_RECORD_END = 8,                  /* end_ns */
        TIMECONV_FRAME_RECORD_RAW = 16,                 /* drawn_x11_us (and, when presented, the offset) */
        TIMECONV_FRAME_RECORD_DRAWN_RECEIVED = 32,      /* drawn_received_ns */
        TIMECONV_FRAME_RECORD_TIMINGS_RECEIVED = 64     /* timings_received_ns */
};

/* A frame as a client saw it: its window, when it began and ended it (it set the counter),
 * the values of the messages as they came, when they came, and what they convert to. Times
 * are CLOCK_MONOTONIC ns. */
struct timeconv_frame_record {
        struct timeconv_frame_times times;      /* times.counter: the frame's end value */
        unsigned record_flags;                  /* TIMECONV_FRAME_RECORD_*: which fields are known */
        uint32_t window;                        /* the X window (or surface) id */
        int64_t begin_ns;                       /* the counter set to the frame's odd begin value */
        int64_t end_ns;                         /* the counter set to its even end value */
        uint64_t drawn_x11_us;                  /* _NET_WM_FRAME_DRAWN's time as received */
        int64_t presentation_offset_us;         /* _NET_WM_FRAME_TIMINGS' offset as received */
        int64_t drawn_received_ns;              /* _NET_WM_FRAME_DRAWN arrived */
        int64_t timings_received_ns;            /* _NET_WM_FRAME_TIMINGS arrived */
};

/* One line of the frame log for a record: the fields of timeconv_frame_log_write() and the
 * record's, null where not known (see libtimeconv(3)). Errors as timeconv_frame_log_write(),
 * and -EINVAL for record_flags outside TIMECONV_FRAME_RECORD_*. */
int timeconv_frame_log_write_record(FILE *f, const struct timeconv_frame_record *record);

#ifdef __cplusplus
}
#endif

#endif
