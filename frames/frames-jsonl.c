/* SPDX-License-Identifier: MIT */

/* libtimeconv's frame log: one JSON object per line for each EWMH frame,
 * {"counter":N,"drawn_ns":T,"drawn_uncertainty_ns":U,"presented_ns":T|null,
 *  "presented_uncertainty_ns":U|null,"refresh_interval_ns":T|null,"frame_delay_us":N|null},
 * all CLOCK_MONOTONIC ns. drawn is the desired time, presented the actual one (null: not
 * presented yet); there is no ready time. Keys this reader does not use are let be. */

#include <errno.h>
#include <jansson.h>

#include "frames-internal.h"

/* The integer at key: 1, 0 when it is null or absent and may be, or -EBADMSG. */
static int get(FramesParser *p, json_t *o, const char *key, bool required, int64_t *ret,
               FramesError *ret_error) {
        json_t *v = json_object_get(o, key);

        if ((!v && !required) || json_is_null(v))
                return required ? frames_fail(ret_error, p->line, "\"%s\" is null", key) : 0;
        if (!v)
                return frames_fail(ret_error, p->line, "no \"%s\"", key);
        if (!json_is_integer(v))
                return frames_fail(ret_error, p->line, "\"%s\" is not an integer", key);
        *ret = (int64_t) json_integer_value(v);
        return 1;
}

int frames_jsonl_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        int64_t counter = 0, drawn_ns = 0, presented_ns = 0, refresh_ns = 0;
        json_error_t error;
        json_t *o;
        Frame f;
        int r;

        o = json_loadb(line, size, JSON_REJECT_DUPLICATES, &error);
        if (!o)
                return frames_fail(ret_error, p->line, "not JSON: %s", error.text);
        if (!json_is_object(o)) {
                json_decref(o);
                return frames_fail(ret_error, p->line, "not a JSON object");
        }
        r = get(p, o, "counter", true, &counter, ret_error);
        if (r >= 0)
                r = get(p, o, "drawn_ns", true, &drawn_ns, ret_error);
        if (r >= 0) {
                r = get(p, o, "presented_ns", false, &presented_ns, ret_error);
                if (r == 0)
                        presented_ns = INT64_MAX;       /* not presented yet: pending */
        }
        if (r >= 0)
                r = get(p, o, "refresh_interval_ns", false, &refresh_ns, ret_error);
        json_decref(o);
        if (r < 0)
                return r;
        if (counter < 0)
                return frames_fail(ret_error, p->line, "\"counter\" is negative");

        f = (Frame) {
                .present_ns = presented_ns,
                .desired_ns = frames_time_valid(drawn_ns) ? drawn_ns : FRAMES_NO_TIME,
                .ready_ns = FRAMES_NO_TIME,
                .refresh_ns = refresh_ns > 0 ? refresh_ns : 0,
        };
        return frames_log_add(p->log, &f) < 0 ? -ENOMEM : 0;
}
