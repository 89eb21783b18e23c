/* SPDX-License-Identifier: MIT */

/* The Perfetto trace reader (timeconv_trace_load_buffer(), timeconv_trace_place()) on any bytes:
 * a trace loads or is refused with a message that names a byte; what loads places every packet
 * in both modes, on the trace clock and on the trace's first clock, keeping the promises of
 * timeconv.h (an answer has a bound >= 0, a failure a reason). The seeds (corpus/perfetto/) are
 * traces of tests/client-lib/perfetto/trace.proto, plain, compressed both ways, with a RemoteClockSync. */

#include <errno.h>

#include "fuzz-input.h"
#include "timeconv.h"

typedef struct Seen {
        uint64_t packets;
        uint64_t last_index;
} Seen;

static int check_packet(const struct timeconv_trace_packet *p, void *userdata) {
        Seen *seen = userdata;

        fuzz_check(seen->packets == 0 || p->index > seen->last_index, "packet %llu after %llu",
                   (unsigned long long) p->index, (unsigned long long) seen->last_index);
        seen->packets++;
        seen->last_index = p->index;
        fuzz_check(p->clock && *p->clock, "packet %llu without a clock name", (unsigned long long) p->index);
        if (p->error == 0)
                fuzz_check(p->uncertainty_ns >= 0, "packet %llu: bound %lld", (unsigned long long) p->index,
                           (long long) p->uncertainty_ns);
        else
                fuzz_check(p->error < 0 && p->reason && *p->reason, "packet %llu: error %d without a reason",
                           (unsigned long long) p->index, p->error);
        return 0;
}

static void place(const struct timeconv_trace *t, int mode, const char *to) {
        struct timeconv_error error = { .line = 1 };
        Seen seen = { 0 };
        int r;

        r = timeconv_trace_place(t, mode, to, check_packet, &seen, &error);
        fuzz_check(r == 0, "place (%s): %d %s", to ? to : "trace clock", r, error.message);
        fuzz_check(seen.packets <= timeconv_trace_count_packets(t), "%llu placed of %llu packets",
                   (unsigned long long) seen.packets, (unsigned long long) timeconv_trace_count_packets(t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct timeconv_trace *t = (struct timeconv_trace *) &size;  /* a sentinel */
        struct timeconv_error error = { .line = 12345 };
        struct timeconv_trace_clock c;
        int r;

        r = timeconv_trace_load_buffer(data, size, &t, &error);
        fuzz_check(r == 0 || r == -EBADMSG || r == -ENOMEM, "load returned %d", r);
        if (r < 0) {
                fuzz_check(t == (struct timeconv_trace *) &size, "ret written on failure");
                fuzz_check(memchr(error.message, 0, sizeof(error.message)), "message not terminated");
                fuzz_check(r != -EBADMSG || strstr(error.message, "byte "), "a refusal without its offset: %s",
                           error.message);
                return 0;
        }
        fuzz_check(timeconv_trace_clock(t) && *timeconv_trace_clock(t), "no trace clock");
        for (size_t i = 0; i < timeconv_trace_count_clocks(t); i++) {
                fuzz_check(timeconv_trace_get_clock(t, i, &c) == 0 && c.name && *c.name, "clock %zu", i);
                fuzz_check(c.unit_multiplier_ns >= 1, "clock %s: unit %lld", c.name, (long long) c.unit_multiplier_ns);
                fuzz_check(c.snapshots == 0 || c.min_ts <= c.max_ts, "clock %s: span", c.name);
        }
        fuzz_check(timeconv_trace_get_clock(t, timeconv_trace_count_clocks(t), &c) == -EINVAL, "a clock past the end");
        place(t, TIMECONV_MODE_NEAREST, NULL);
        place(t, TIMECONV_MODE_DRIFT, NULL);
        if (timeconv_trace_count_clocks(t) > 0 && timeconv_trace_get_clock(t, 0, &c) == 0)
                place(t, TIMECONV_MODE_NEAREST, c.name);
        timeconv_trace_free(t);
        return 0;
}
