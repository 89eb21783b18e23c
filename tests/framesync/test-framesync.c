/* SPDX-License-Identifier: MIT */

/* The EWMH frame-sync helpers of libtimeconv without X or a daemon: the messages against
 * hand-packed words, round trips, the extended counter's rules as the protocol states them,
 * the frame log's exact text and its round trip through jansson, and bad arguments. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <unistd.h>

#include "tap.h"
#include "timeconv-framesync.h"

#define ATOM_SYNC_REQUEST 301u

static bool words_are(const uint32_t got[5], uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e) {
        return got[0] == a && got[1] == b && got[2] == c && got[3] == d && got[4] == e;
}

static void test_sync_request(void) {
        struct timeconv_sync_request req = { .timestamp_ms = 0x12345678u, .value = UINT64_C(0x500000007), .extended = 1 },
                                     back = {};
        uint32_t data[5] = {};

        is_int(timeconv_sync_request_pack(&req, ATOM_SYNC_REQUEST, data), 0, "SYNC_REQUEST packs");
        ok(words_are(data, ATOM_SYNC_REQUEST, 0x12345678u, 7, 5, 1),
           "l[0] the atom, l[1] the time, l[2] low and l[3] high half, l[4] 1: extended");
        ok(timeconv_sync_request_unpack(data, ATOM_SYNC_REQUEST, &back) == 0 && back.timestamp_ms == req.timestamp_ms &&
           back.value == req.value && back.extended == 1, "and unpacks to the same request");
        data[4] = 2;
        ok(timeconv_sync_request_unpack(data, ATOM_SYNC_REQUEST, &back) == 0 && back.extended == 1,
           "any non-zero l[4] reads as extended");
        req.extended = 0;
        ok(timeconv_sync_request_pack(&req, ATOM_SYNC_REQUEST, data) == 0 && data[4] == 0 &&
           timeconv_sync_request_unpack(data, ATOM_SYNC_REQUEST, &back) == 0 && back.extended == 0,
           "the basic counter: l[4] 0");

        back.value = 42;
        is_int(timeconv_sync_request_unpack(data, ATOM_SYNC_REQUEST + 1, &back), -EINVAL,
               "another protocol in l[0]: -EINVAL");
        is_int(back.value, 42, "and the output is untouched");
        req.value = UINT64_C(1) << 63;
        is_int(timeconv_sync_request_pack(&req, ATOM_SYNC_REQUEST, data), -ERANGE,
               "a value above INT64_MAX (XSync counters are signed): -ERANGE");
        data[3] = 0x80000000u;
        is_int(timeconv_sync_request_unpack(data, ATOM_SYNC_REQUEST, &back), -EINVAL,
               "unpacking a value above INT64_MAX: -EINVAL");
        is_int(timeconv_sync_request_pack(NULL, ATOM_SYNC_REQUEST, data), -EINVAL, "NULL request: -EINVAL");
        is_int(timeconv_sync_request_pack(&back, 0, data), -EINVAL, "atom None: -EINVAL");
        is_int(timeconv_sync_request_unpack(NULL, ATOM_SYNC_REQUEST, &back), -EINVAL, "NULL data: -EINVAL");
}

static void test_frame_drawn(void) {
        struct timeconv_frame_drawn d = { .counter = UINT64_C(0x100000004), .drawn_x11_us = UINT64_C(0x123456789ab) },
                                    back = {};
        uint32_t data[5] = { 9, 9, 9, 9, 9 };

        is_int(timeconv_frame_drawn_pack(&d, data), 0, "FRAME_DRAWN packs");
        ok(words_are(data, 4, 1, 0x456789abu, 0x123, 0), "counter low, high; drawn time low, high; l[4] 0");
        ok(timeconv_frame_drawn_unpack(data, &back) == 0 && back.counter == d.counter &&
           back.drawn_x11_us == d.drawn_x11_us, "and unpacks back");
        d.counter = UINT64_MAX;
        is_int(timeconv_frame_drawn_pack(&d, data), -ERANGE, "a counter above INT64_MAX: -ERANGE");
        data[1] = 0xffffffffu;
        is_int(timeconv_frame_drawn_unpack(data, &back), -EINVAL, "unpacking one: -EINVAL");
        is_int(timeconv_frame_drawn_unpack(data, NULL), -EINVAL, "NULL output: -EINVAL");
}

static void test_frame_timings(void) {
        struct timeconv_frame_timings t = {
                .counter = 8,
                .flags = TIMECONV_FRAME_PRESENTED | TIMECONV_FRAME_REFRESH_INTERVAL | TIMECONV_FRAME_DELAY,
                .presentation_offset_us = -1500,
                .refresh_interval_us = 16667,
                .frame_delay_us = 2000,
        }, back = {};
        uint32_t data[5] = {};

        is_int(timeconv_frame_timings_pack(&t, data), 0, "FRAME_TIMINGS packs");
        ok(words_are(data, 8, 0, 0xfffffa24u, 16667, 2000),
           "counter; offset -1500 us as signed 32-bit; refresh 16667 us; delay 2000 us");
        ok(timeconv_frame_timings_unpack(data, &back) == 0 && back.flags == t.flags &&
           back.presentation_offset_us == -1500 && back.refresh_interval_us == 16667 && back.frame_delay_us == 2000,
           "and unpacks back");

        t.flags = 0;
        ok(timeconv_frame_timings_pack(&t, data) == 0 && words_are(data, 8, 0, 0, 0, 0x80000000u),
           "nothing known: offset 0, refresh 0, delay 0x80000000");
        ok(timeconv_frame_timings_unpack(data, &back) == 0 && back.flags == 0, "unpacks as nothing known");

        t.flags = TIMECONV_FRAME_PRESENTED | TIMECONV_FRAME_DELAY;
        t.presentation_offset_us = 0;
        t.frame_delay_us = 0;
        ok(timeconv_frame_timings_pack(&t, data) == 0 && data[2] == 1 && data[4] == 0,
           "a true offset of 0 goes as 1 (0 says unknown); a delay of 0 is a value");
        ok(timeconv_frame_timings_unpack(data, &back) == 0 && back.flags == t.flags &&
           back.presentation_offset_us == 1 && back.frame_delay_us == 0, "and reads back as 1, delay 0");

        /* A message as mutter sends it, packed by hand. */
        {
                const uint32_t mutter[5] = { 0x0000abcdu, 0x2u, 16000, 16667, 2000 };

                ok(timeconv_frame_timings_unpack(mutter, &back) == 0 && back.counter == UINT64_C(0x20000abcd) &&
                   back.presentation_offset_us == 16000 && back.refresh_interval_us == 16667 &&
                   back.frame_delay_us == 2000 && back.flags == (TIMECONV_FRAME_PRESENTED |
                   TIMECONV_FRAME_REFRESH_INTERVAL | TIMECONV_FRAME_DELAY), "a mutter-made message unpacks");
        }

        t.flags = TIMECONV_FRAME_PRESENTED;
        t.presentation_offset_us = INT32_MIN;
        is_int(timeconv_frame_timings_pack(&t, data), -ERANGE, "offset -2^31: -ERANGE");
        t.presentation_offset_us = (int64_t) INT32_MAX + 1;
        is_int(timeconv_frame_timings_pack(&t, data), -ERANGE, "offset 2^31: -ERANGE");
        t.flags = TIMECONV_FRAME_REFRESH_INTERVAL;
        t.refresh_interval_us = 0;
        is_int(timeconv_frame_timings_pack(&t, data), -ERANGE, "a known refresh interval of 0: -ERANGE");
        t.refresh_interval_us = INT64_C(1) << 32;
        is_int(timeconv_frame_timings_pack(&t, data), -ERANGE, "a refresh interval of 2^32 us: -ERANGE");
        t.flags = TIMECONV_FRAME_DELAY;
        t.frame_delay_us = INT32_MIN;
        is_int(timeconv_frame_timings_pack(&t, data), -ERANGE, "a delay of -2^31 (the 'no value' word): -ERANGE");
        t.flags = 8;
        is_int(timeconv_frame_timings_pack(&t, data), -EINVAL, "an unknown flag: -EINVAL");
}

static uint64_t next_random(uint64_t *state) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        return *state;
}

static void test_round_trips(void) {
        uint64_t state = UINT64_C(0x9e3779b97f4a7c15);
        int bad = 0;

        for (int i = 0; i < 10000; i++) {
                uint64_t r = next_random(&state);
                struct timeconv_sync_request s = { (uint32_t) r, r >> 1, (int) (r & 1) }, s2;
                struct timeconv_frame_drawn d = { next_random(&state) >> 1, next_random(&state) }, d2;
                struct timeconv_frame_timings t = {
                        .counter = r >> 1,
                        .flags = (unsigned) (r >> 7) & 7,
                        .presentation_offset_us = (int32_t) (uint32_t) next_random(&state) | 2,
                        .refresh_interval_us = (uint32_t) next_random(&state) | 1,
                        .frame_delay_us = (int32_t) (uint32_t) next_random(&state) | 1,
                }, t2;
                uint32_t data[5];

                if (t.presentation_offset_us == INT32_MIN)
                        t.presentation_offset_us++;
                if (!(t.flags & TIMECONV_FRAME_PRESENTED))
                        t.presentation_offset_us = 0;
                if (!(t.flags & TIMECONV_FRAME_REFRESH_INTERVAL))
                        t.refresh_interval_us = 0;
                if (!(t.flags & TIMECONV_FRAME_DELAY))
                        t.frame_delay_us = 0;
                bad += timeconv_sync_request_pack(&s, ATOM_SYNC_REQUEST, data) < 0 ||
                       timeconv_sync_request_unpack(data, ATOM_SYNC_REQUEST, &s2) < 0 ||
                       s.timestamp_ms != s2.timestamp_ms || s.value != s2.value || s.extended != s2.extended;
                bad += timeconv_frame_drawn_pack(&d, data) < 0 || timeconv_frame_drawn_unpack(data, &d2) < 0 ||
                       d.counter != d2.counter || d.drawn_x11_us != d2.drawn_x11_us;
                bad += timeconv_frame_timings_pack(&t, data) < 0 || timeconv_frame_timings_unpack(data, &t2) < 0 ||
                       t.counter != t2.counter || t.flags != t2.flags ||
                       t.presentation_offset_us != t2.presentation_offset_us ||
                       t.refresh_interval_us != t2.refresh_interval_us || t.frame_delay_us != t2.frame_delay_us;
        }
        is_int(bad, 0, "10,000 random messages of each kind pack and unpack to themselves");
}

/* The protocol's words: "urgent frames take v % 4 == 3 and end at +1, others v % 4 == 1 and
 * end at +3"; the frame begins at an odd value above the counter's. */
static void test_counter(void) {
        static const struct {
                uint64_t value;
                int urgent;
                uint64_t begin, end;
        } table[] = {
                { 0, 0, 1, 4 }, { 0, 1, 3, 4 }, { 4, 0, 5, 8 }, { 4, 1, 7, 8 },
                { 2, 0, 5, 8 }, { 2, 1, 3, 4 }, { 1240, 1, 1243, 1244 }, { 1240, 0, 1241, 1244 },
        };
        uint64_t begin = 0, end = 0, request = 0;
        size_t fence = 0, fence_urgent = 1;
        int bad = 0;

        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
                int r = timeconv_frame_begin(table[i].value, table[i].urgent, &begin, &end);

                ok(r == 0 && begin == table[i].begin && end == table[i].end, "from %llu, %s frame: %llu .. %llu",
                   (unsigned long long) table[i].value, table[i].urgent ? "urgent" : "normal",
                   (unsigned long long) table[i].begin, (unsigned long long) table[i].end);
        }
        for (uint64_t v = 0; v < 4000; v += 2)
                for (int urgent = 0; urgent < 2; urgent++) {
                        if (timeconv_frame_begin(v, urgent, &begin, &end) < 0) {
                                bad++;
                                continue;
                        }
                        bad += begin <= v || begin % 2 != 1 || begin % 4 != (urgent ? 3u : 1u) ||
                               end != begin + (urgent ? 1 : 3) || end % 4 != 0 || begin > v + 4;
                }
        is_int(bad, 0, "from every even value below 4000: the first odd value of its kind, ending on a multiple of 4");

        begin = 77;
        is_int(timeconv_frame_begin(5, 0, &begin, &end), -EINVAL, "a frame in progress (odd value): -EINVAL");
        is_int(begin, 77, "and the output is untouched");
        is_int(timeconv_frame_begin(INT64_MAX - 3, 0, &begin, &end), -ERANGE, "no room below INT64_MAX: -ERANGE");
        ok(timeconv_frame_begin(INT64_MAX - 7, 1, &begin, &end) == 0 && end == (uint64_t) INT64_MAX - 3,
           "the last urgent frame that fits");
        is_int(timeconv_frame_begin(0, 0, NULL, &end), -EINVAL, "NULL output: -EINVAL");

        /* A window manager's request and the client's urgent frame that answers it. */
        ok(timeconv_sync_request_value(1000, &request) == 0 && request == 1240, "the WM requests last seen + 240");
        ok(timeconv_frame_begin(request, 1, &begin, &end) == 0 && end > request && end % 4 == 0,
           "the client's urgent frame ends past the requested value (%llu)", (unsigned long long) end);
        is_int(timeconv_sync_request_value(INT64_MAX - 239, &request), -ERANGE, "a request past INT64_MAX: -ERANGE");
        ok(timeconv_sync_request_value(INT64_MAX - 240, &request) == 0 && request == INT64_MAX, "up to INT64_MAX");

        /* (N / 4) % L: a frame's normal and urgent begins share a fence; frames alternate. */
        ok(timeconv_sync_fence_index(1241, 2, &fence) == 0 && timeconv_sync_fence_index(1243, 2, &fence_urgent) == 0 &&
           fence == 0 && fence_urgent == 0, "1241 and 1243: fence (1241 / 4) %% 2 = 0");
        ok(timeconv_sync_fence_index(1245, 2, &fence) == 0 && fence == 1, "the next frame, 1245: fence 1");
        ok(timeconv_sync_fence_index(UINT64_C(4000000000007), 3, &fence) == 0 && fence == 1000000000001 % 3,
           "a large counter: (N / 4) %% 3");
        is_int(timeconv_sync_fence_index(5, 0, &fence), -EINVAL, "no fences: -EINVAL");
}

static void test_convert_arguments(void) {
        struct timeconv_frame_drawn d = { 4, 1000 };
        struct timeconv_frame_times t;

        is_int(timeconv_frame_convert(NULL, &d, NULL, &t), -EINVAL, "frame_convert without a handle: -EINVAL");
}

/* The log line read back through jansson: each field, nulls for what is unknown. */
static bool line_matches(const char *line, const struct timeconv_frame_times *f) {
        json_error_t error;
        json_t *o = json_loads(line, 0, &error);
        bool m;

        if (!o)
                return false;
#define FIELD_IS(name, known, v) \
        ((known) ? json_is_integer(json_object_get(o, name)) && json_integer_value(json_object_get(o, name)) == (v) \
                 : json_is_null(json_object_get(o, name)))
        m = json_object_size(o) == 7 && FIELD_IS("counter", true, (json_int_t) f->counter) &&
            FIELD_IS("drawn_ns", true, f->drawn_ns) && FIELD_IS("drawn_uncertainty_ns", true, f->drawn_uncertainty_ns) &&
            FIELD_IS("presented_ns", f->flags & TIMECONV_FRAME_PRESENTED, f->presented_ns) &&
            FIELD_IS("presented_uncertainty_ns", f->flags & TIMECONV_FRAME_PRESENTED, f->presented_uncertainty_ns) &&
            FIELD_IS("refresh_interval_ns", f->flags & TIMECONV_FRAME_REFRESH_INTERVAL, f->refresh_interval_ns) &&
            FIELD_IS("frame_delay_us", f->flags & TIMECONV_FRAME_DELAY, f->frame_delay_us);
#undef FIELD_IS
        json_decref(o);
        return m;
}

static void test_log(void) {
        const struct timeconv_frame_times frames[] = {
                { .counter = 8, .drawn_ns = 1000, .drawn_uncertainty_ns = 5 },
                { .counter = 12, .flags = 7, .drawn_ns = INT64_MAX, .drawn_uncertainty_ns = 0, .presented_ns = -1,
                  .presented_uncertainty_ns = 1000, .refresh_interval_ns = 16667000, .frame_delay_us = -2 },
                { .counter = INT64_MAX, .flags = TIMECONV_FRAME_DELAY, .drawn_ns = INT64_MIN, .frame_delay_us = 0 },
        };
        const size_t n = sizeof frames / sizeof frames[0];
        struct timeconv_frame_times bad = frames[0];
        char line[512];
        FILE *f = tmpfile();
        int fds[2], matched = 0;

        if (!f || pipe2(fds, O_CLOEXEC) < 0)
                abort();
        for (size_t i = 0; i < n; i++)
                ok(timeconv_frame_log_write(f, &frames[i]) == 0, "frame %zu written to a FILE", i);
        rewind(f);
        ok(fgets(line, sizeof line, f) && strcmp(line, "{\"counter\":8,\"drawn_ns\":1000,\"drawn_uncertainty_ns\":5,"
           "\"presented_ns\":null,\"presented_uncertainty_ns\":null,\"refresh_interval_ns\":null,"
           "\"frame_delay_us\":null}\n") == 0, "the exact line, unknowns null");
        matched += line_matches(line, &frames[0]);
        for (size_t i = 1; i < n && fgets(line, sizeof line, f); i++)
                matched += line_matches(line, &frames[i]);
        is_int(matched, n, "each line reads back through jansson, field by field");
        ok(!fgets(line, sizeof line, f), "one line per frame, nothing else");
        fclose(f);

        matched = 0;
        for (size_t i = 0; i < n; i++)
                ok(timeconv_frame_log_write_fd(fds[1], &frames[i]) == 0, "frame %zu written to an fd", i);
        close(fds[1]);
        f = fdopen(fds[0], "r");
        for (size_t i = 0; f && i < n && fgets(line, sizeof line, f); i++)
                matched += line_matches(line, &frames[i]);
        is_int(matched, n, "the fd's lines read back too");
        if (f)
                fclose(f);

        bad.counter = UINT64_C(1) << 63;
        is_int(timeconv_frame_log_write(stdout, &bad), -ERANGE, "a counter above INT64_MAX: -ERANGE");
        bad = frames[0];
        bad.flags = 16;
        is_int(timeconv_frame_log_write_fd(1, &bad), -EINVAL, "an unknown flag: -EINVAL");
        is_int(timeconv_frame_log_write(NULL, &frames[0]), -EINVAL, "a NULL stream: -EINVAL");
        is_int(timeconv_frame_log_write_fd(-1, &frames[0]), -EINVAL, "fd -1: -EINVAL");
        if (pipe2(fds, O_CLOEXEC) < 0)
                abort();
        is_int(timeconv_frame_log_write_fd(fds[0], &frames[0]), -EBADF, "the read end of a pipe: -EBADF");
        close(fds[0]);
        close(fds[1]);
}

int main(void) {
        test_sync_request();
        test_frame_drawn();
        test_frame_timings();
        test_round_trips();
        test_counter();
        test_convert_arguments();
        test_log();
        return done_testing();
}
