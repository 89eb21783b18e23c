/* SPDX-License-Identifier: MIT */

/* The frame log's Wayland rows, as `timeconv frames --probe` writes them on a Wayland compositor:
 * {"surface":N,"counter":N,"begin_ns":T,"commit_ns":T,"output":"NAME","presented_clock":C,
 *  "presented_raw_ns":T,"presented_ns":T,"presented_uncertainty_ns":U,"refresh_interval_ns":T,
 *  "seq":N,"presentation_flags":F,"discarded":false,"feedback_received_ns":T}
 * with times in CLOCK_MONOTONIC ns but presented_raw_ns (the compositor's clock C, as sent), any
 * of them null but surface, counter and commit_ns. A frame is timed by its presentation; its
 * commit stands where an EWMH frame's drawn time stands, so that drawn -> presented reads as
 * commit -> presented. Rows go by surface and output: each output has its own refresh. */

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "frames-internal.h"

/* An integer field: 1 with *ret, 0 when absent or null, -1 when something else. */
static int integer(json_t *o, const char *key, int64_t *ret) {
        json_t *j = json_object_get(o, key);

        if (!j || json_is_null(j))
                return 0;
        if (!json_is_integer(j))
                return -1;
        *ret = (int64_t) json_integer_value(j);
        return 1;
}

int frames_wayland_row(unsigned line, json_t *o, FramesStagedRow *ret, FramesError *ret_error) {
        static const char *const integers[] = { "surface", "counter", "begin_ns", "commit_ns", "presented_ns",
                                                "presented_uncertainty_ns", "refresh_interval_ns",
                                                "presentation_flags" };
        int64_t v[sizeof(integers) / sizeof(integers[0])];
        int known[sizeof(integers) / sizeof(integers[0])];
        json_t *output = json_object_get(o, "output"), *discarded = json_object_get(o, "discarded");
        FramesStagedRow k;
        int64_t flags;

        for (size_t i = 0; i < sizeof(integers) / sizeof(integers[0]); i++) {
                known[i] = integer(o, integers[i], &v[i]);
                if (known[i] < 0)
                        return frames_fail(ret_error, line, "\"%s\" is not an integer", integers[i]);
        }
        if (known[0] == 0 || v[0] < 0)
                return frames_fail(ret_error, line, "\"surface\" is null or negative");
        if (known[1] == 0 || v[1] < 0)
                return frames_fail(ret_error, line, "\"counter\" is missing, null or negative");
        if (!json_object_get(o, "commit_ns"))
                return frames_fail(ret_error, line, "no \"commit_ns\"");
        if (output && !json_is_null(output) && !json_is_string(output))
                return frames_fail(ret_error, line, "\"output\" is not a string");
        if (discarded && !json_is_boolean(discarded))
                return frames_fail(ret_error, line, "\"discarded\" is not a boolean");

        k = (FramesStagedRow) {
                .window = v[0],
                .begin_ns = known[2] && frames_time_valid(v[2]) ? v[2] : FRAMES_NO_TIME,
                .frame = {
                        .present_ns = FRAMES_NO_TIME,
                        .desired_ns = FRAMES_NO_TIME,
                        .ready_ns = FRAMES_NO_TIME,
                        .refresh_ns = known[6] && v[6] > 0 ? v[6] : 0,
                },
                .row = { .flags = FRAMES_ROW_WAYLAND },
                .latency_ns = { FRAMES_NO_TIME, FRAMES_NO_TIME, FRAMES_NO_TIME, FRAMES_NO_TIME },
        };
        for (size_t i = 0; i < FRAMES_N_LATENCIES; i++)
                k.row.latency_ns[i] = FRAMES_LATENCY_NONE;
        if (json_is_string(output))
                snprintf(k.output, sizeof(k.output), "%s", json_string_value(output));
        if (json_is_true(discarded))
                k.row.flags |= FRAMES_ROW_DISCARDED;
        /* As an EWMH row: presented only when committed. */
        if (known[3] && frames_time_valid(v[3])) {
                k.frame.desired_ns = v[3];
                if (known[4] && frames_time_valid(v[4]) && !(k.row.flags & FRAMES_ROW_DISCARDED))
                        k.frame.present_ns = v[4];
        }
        flags = known[7] && k.frame.present_ns != FRAMES_NO_TIME ? v[7] : 0;
        if (flags & 1)
                k.row.flags |= FRAMES_ROW_VSYNC;
        if (flags & 2)
                k.row.flags |= FRAMES_ROW_HW_CLOCK;
        if (flags & 4)
                k.row.flags |= FRAMES_ROW_HW_COMPLETION;
        if (flags & 8)
                k.row.flags |= FRAMES_ROW_ZERO_COPY;
        *ret = k;
        return 0;
}
