/* SPDX-License-Identifier: MIT */

/* The EWMH frame-synchronisation messages as five 32-bit values, and the extended frame
 * counter's rules. Pure functions: the X connection stays with the caller. */

#include <errno.h>
#include <stdbool.h>

#include "timeconv-framesync.h"
#include "timeconv-internal.h"

#define FRAME_FLAGS_ALL (TIMECONV_FRAME_PRESENTED | TIMECONV_FRAME_REFRESH_INTERVAL | TIMECONV_FRAME_DELAY)

/* XSync counters are signed 64-bit values. */
#define COUNTER_MAX ((uint64_t) INT64_MAX)

/* The window manager's step ahead of the last value it saw: large enough that the client cannot
 * have passed it in the meantime, a multiple of 4 so that an even value stays a frame's end. */
#define SYNC_REQUEST_STEP 240

static void put64(uint32_t *data, uint64_t v) {
        data[0] = (uint32_t) (v & UINT32_MAX);
        data[1] = (uint32_t) (v >> 32);
}

static uint64_t get64(const uint32_t *data) {
        return (uint64_t) data[0] | (uint64_t) data[1] << 32;
}

/* A signed 32-bit value as the wire carries it (two's complement). */
static uint32_t put_signed(int64_t v) {
        return (uint32_t) (v & UINT32_MAX);
}

static int64_t get_signed(uint32_t v) {
        return v <= INT32_MAX ? (int64_t) v : (int64_t) v - (INT64_C(1) << 32);
}

TIMECONV_EXPORT int timeconv_sync_request_pack(const struct timeconv_sync_request *request,
                                               uint32_t sync_request_atom, uint32_t data[5]) {
        if (!request || !data || sync_request_atom == 0)
                return -EINVAL;
        if (request->value > COUNTER_MAX)
                return -ERANGE;
        data[0] = sync_request_atom;
        data[1] = request->timestamp_ms;
        put64(data + 2, request->value);
        data[4] = request->extended ? 1 : 0;
        return 0;
}

TIMECONV_EXPORT int timeconv_sync_request_unpack(const uint32_t data[5], uint32_t sync_request_atom,
                                                 struct timeconv_sync_request *ret) {
        uint64_t value;

        if (!data || !ret || sync_request_atom == 0 || data[0] != sync_request_atom)
                return -EINVAL;
        value = get64(data + 2);
        if (value > COUNTER_MAX)
                return -EINVAL;
        *ret = (struct timeconv_sync_request) {
                .timestamp_ms = data[1],
                .value = value,
                .extended = data[4] != 0,
        };
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_drawn_pack(const struct timeconv_frame_drawn *drawn, uint32_t data[5]) {
        if (!drawn || !data)
                return -EINVAL;
        if (drawn->counter > COUNTER_MAX)
                return -ERANGE;
        put64(data, drawn->counter);
        put64(data + 2, drawn->drawn_x11_us);
        data[4] = 0;
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_drawn_unpack(const uint32_t data[5], struct timeconv_frame_drawn *ret) {
        uint64_t counter;

        if (!data || !ret)
                return -EINVAL;
        counter = get64(data);
        if (counter > COUNTER_MAX)
                return -EINVAL;
        *ret = (struct timeconv_frame_drawn) {
                .counter = counter,
                .drawn_x11_us = get64(data + 2),
        };
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_timings_pack(const struct timeconv_frame_timings *timings, uint32_t data[5]) {
        const struct timeconv_frame_timings *t = timings;
        int64_t offset_us;

        if (!t || !data || (t->flags & ~(unsigned) FRAME_FLAGS_ALL))
                return -EINVAL;
        if (t->counter > COUNTER_MAX)
                return -ERANGE;
        /* INT32_MIN is left out of both signed fields: it is the frame delay's "no value". */
        if ((t->flags & TIMECONV_FRAME_PRESENTED) &&
            (t->presentation_offset_us <= INT32_MIN || t->presentation_offset_us > INT32_MAX))
                return -ERANGE;
        if ((t->flags & TIMECONV_FRAME_REFRESH_INTERVAL) &&
            (t->refresh_interval_us <= 0 || t->refresh_interval_us > (int64_t) UINT32_MAX))
                return -ERANGE;
        if ((t->flags & TIMECONV_FRAME_DELAY) && (t->frame_delay_us <= INT32_MIN || t->frame_delay_us > INT32_MAX))
                return -ERANGE;

        put64(data, t->counter);
        /* 0 says "unknown": a true offset of 0 goes as 1 us, as mutter sends it. */
        offset_us = t->presentation_offset_us == 0 ? 1 : t->presentation_offset_us;
        data[2] = t->flags & TIMECONV_FRAME_PRESENTED ? put_signed(offset_us) : 0;
        data[3] = t->flags & TIMECONV_FRAME_REFRESH_INTERVAL ? (uint32_t) t->refresh_interval_us : 0;
        data[4] = t->flags & TIMECONV_FRAME_DELAY ? put_signed(t->frame_delay_us) :
                                                    (uint32_t) TIMECONV_FRAME_DELAY_NONE;
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_timings_unpack(const uint32_t data[5], struct timeconv_frame_timings *ret) {
        struct timeconv_frame_timings t = {};

        if (!data || !ret)
                return -EINVAL;
        t.counter = get64(data);
        if (t.counter > COUNTER_MAX)
                return -EINVAL;
        if (data[2] != 0) {
                t.flags |= TIMECONV_FRAME_PRESENTED;
                t.presentation_offset_us = get_signed(data[2]);
        }
        if (data[3] != 0) {
                t.flags |= TIMECONV_FRAME_REFRESH_INTERVAL;
                t.refresh_interval_us = data[3];
        }
        if (data[4] != TIMECONV_FRAME_DELAY_NONE) {
                t.flags |= TIMECONV_FRAME_DELAY;
                t.frame_delay_us = get_signed(data[4]);
        }
        *ret = t;
        return 0;
}

TIMECONV_EXPORT int timeconv_frame_begin(uint64_t value, int urgent, uint64_t *ret_begin, uint64_t *ret_end) {
        uint64_t residue = urgent ? 3 : 1, begin;

        if (!ret_begin || !ret_end || value % 2 != 0)
                return -EINVAL;
        /* The first value above value with the frame kind's residue mod 4; it ends on the next
         * multiple of 4. */
        if (value > COUNTER_MAX - 4)
                return -ERANGE;
        begin = value - value % 4 + residue;
        if (begin <= value)
                begin += 4;
        if (begin - residue + 4 > COUNTER_MAX)
                return -ERANGE;
        *ret_begin = begin;
        *ret_end = begin - residue + 4;
        return 0;
}

TIMECONV_EXPORT int timeconv_sync_request_value(uint64_t last_seen, uint64_t *ret_value) {
        if (!ret_value)
                return -EINVAL;
        if (last_seen > COUNTER_MAX - SYNC_REQUEST_STEP)
                return -ERANGE;
        *ret_value = last_seen + SYNC_REQUEST_STEP;
        return 0;
}

TIMECONV_EXPORT int timeconv_sync_fence_index(uint64_t value, size_t n_fences, size_t *ret_index) {
        if (!ret_index || n_fences == 0)
                return -EINVAL;
        *ret_index = (size_t) ((value / 4) % n_fences);
        return 0;
}
