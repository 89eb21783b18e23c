/* SPDX-License-Identifier: MIT */

/* libtimeconv's frame log: one JSON object per line for each EWMH frame (and, from the probe on
 * Wayland, rows with "surface" that frames-wayland.c reads),
 * {"window":N,"counter":N,"begin_ns":T,"end_ns":T,"drawn_x11_us":N,"presentation_offset_us":N,
 *  "drawn_ns":T,"drawn_uncertainty_ns":U,"presented_ns":T,"presented_uncertainty_ns":U,
 *  "refresh_interval_ns":T,"frame_delay_us":N,"drawn_received_ns":T,"timings_received_ns":T},
 * all CLOCK_MONOTONIC ns, any of them null but counter, "counter" and "drawn_ns" required (the
 * older writer has only those two and presented_ns to frame_delay_us). Keys this reader does
 * not know are let be.
 *
 * A log holds millions of rows, and a general JSON parser spends most of its time building
 * objects: a row written as libtimeconv writes it (no blanks, integers or null, no escapes)
 * is read in one pass here; anything else, and every error, goes through jansson. */

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "frames-internal.h"

enum {
        K_WINDOW,
        K_COUNTER,
        K_BEGIN,
        K_END,
        K_DRAWN_X11,
        K_OFFSET,
        K_DRAWN,
        K_DRAWN_UNC,
        K_PRESENTED,
        K_PRESENTED_UNC,
        K_REFRESH,
        K_DELAY,
        K_DRAWN_RECEIVED,
        K_TIMINGS_RECEIVED,
        N_KEYS,
};

/* In the order the writer puts them, each with its quotes and colon. */
static const struct {
        const char *text;
        size_t size;
} keys[N_KEYS] = {
#define KEY(s) { "\"" s "\":", sizeof(s) + 2 }
        KEY("window"), KEY("counter"), KEY("begin_ns"), KEY("end_ns"), KEY("drawn_x11_us"),
        KEY("presentation_offset_us"), KEY("drawn_ns"), KEY("drawn_uncertainty_ns"), KEY("presented_ns"),
        KEY("presented_uncertainty_ns"), KEY("refresh_interval_ns"), KEY("frame_delay_us"),
        KEY("drawn_received_ns"), KEY("timings_received_ns"),
#undef KEY
};

typedef struct Values {
        int64_t v[N_KEYS];
        unsigned seen, null;    /* bit k: key k was there; its value was null */
} Values;

static inline uint64_t load8(const char *s) {
        uint64_t v;

        memcpy(&v, s, 8);
        return v;
}

static inline uint32_t load4(const char *s) {
        uint32_t v;

        memcpy(&v, s, 4);
        return v;
}

/* memcmp() without the call or a loop: every key is at least 8 bytes, compared as 8-byte words,
 * the last one overlapping the one before. */
static inline __attribute__((always_inline)) bool same(const char *a, const char *b, size_t n) {
        size_t i = 0;

        for (; i + 8 < n; i += 8)
                if (load8(a + i) != load8(b + i))
                        return false;
        return load8(a + n - 8) == load8(b + n - 8);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The decimal digits the 8 bytes at s start with: their value and how many (0 to 8), in a few
 * instructions (simdjson's way: pairs, then quads, then the eight, one multiplication each).
 * Most of a row is digits. The bytes after the last digit do not matter. */
static inline unsigned leading_digits(const char *s, uint32_t *ret) {
        uint64_t x = load8(s) ^ UINT64_C(0x3030303030303030), high;
        unsigned n;

        /* A byte is a digit when x is below 10 there: bit 7 of x + 0x76, or of x, says it is not.
         * A carry only runs into the bytes after the first non-digit, which are not looked at. */
        high = ((x + UINT64_C(0x7676767676767676)) | x) & UINT64_C(0x8080808080808080);
        n = high ? (unsigned) __builtin_ctzll(high) / 8 : 8;
        if (n == 0)
                return 0;
        /* The n digits to the top bytes, zeros before them: eight digits with leading zeros. */
        x = n == 8 ? x : x << (64 - 8 * n);
        x = x * 10 + (x >> 8);
        x = ((x & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x000F424000000064) +
             ((x >> 16) & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x0000271000000001)) >> 32;
        *ret = (uint32_t) x;
        return n;
}
#endif

/* The digits at s[0..n) (n > 0, s[n - 1] not a digit): *ret and their count, up to 19 (more
 * digits are not counted further). */
static inline size_t digits(const char *s, size_t n, uint64_t *ret) {
        static const uint64_t pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000 };
        uint64_t u = 0;
        size_t i = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (n - i >= 8 && i < 19) {
                uint32_t chunk = 0;
                unsigned k = leading_digits(s + i, &chunk);

                u = u * pow10[k] + chunk;
                i += k;
                if (k < 8) {
                        *ret = u;
                        return i;
                }
        }
#endif
        while (i < n && i < 19 && (unsigned) (s[i] - '0') <= 9)
                u = u * 10 + (unsigned) (s[i++] - '0');
        *ret = u;
        return i;
}

#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The value of n digits (0 < n <= 8) at s, 8 bytes readable: leading_digits() without counting. */
static inline __attribute__((always_inline)) uint64_t eight_or_fewer(const char *s, unsigned n) {
        uint64_t x = load8(s) ^ UINT64_C(0x3030303030303030);

        x = n == 8 ? x : x << (64 - 8 * n);
        x = x * 10 + (x >> 8);
        return ((x & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x000F424000000064) +
                ((x >> 16) & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x0000271000000001)) >> 32;
}

/* The number at s, 16 bytes readable: *ret and how many digits (0 when none; 16 or more give
 * 17, and the value is not read). The digits are counted 16 at a time: no loop, one branch for
 * the usual timestamp of 15 digits. */
static inline __attribute__((always_inline)) unsigned number16(const char *s, uint64_t *ret) {
        __m128i x = _mm_sub_epi8(_mm_loadu_si128((const __m128i *) s), _mm_set1_epi8('0'));
        /* A digit is 0 to 9 after the subtraction, unsigned: max(x, 9) == 9. */
        unsigned digit = (unsigned) _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(9)),
                                                                     _mm_set1_epi8(9)));
        unsigned n = (unsigned) __builtin_ctz(~digit);  /* bit 16 and above are clear: at most 16 */

        if (n >= 16)
                return 17;
        if (n == 0)
                return 0;
        *ret = n <= 8 ? eight_or_fewer(s, n) : eight_or_fewer(s, n - 8) * 100000000 + eight_or_fewer(s + n - 8, 8);
        return n;
}

/* The row exactly as libtimeconv writes it now: all the keys, in order, each an integer or
 * null. Straight through, each key compared as a constant: 1 with *v filled, 0 otherwise (*v
 * is then garbage, and fast_row() tries the line again). It takes what fast_row() takes. */
static int canonical_row(const char *s, size_t n, Values *v) {
        const char *p = s + 1, *end = s + n;

        if (n < 2 || s[0] != '{' || s[n - 1] != '}')
                return 0;
#define VALUE(k, key, sep)                                                                       \
        do {                                                                                     \
                size_t count;                                                                    \
                uint64_t u = 0;                                                                  \
                bool negative;                                                                   \
                                                                                                 \
                if (end - p < (ptrdiff_t) sizeof(key) - 1 || !same(p, key, sizeof(key) - 1))  \
                        return 0;                                                                \
                p += sizeof(key) - 1;                                                            \
                if (end - p >= 4 && load4(p) == load4("null")) {                                 \
                        v->null |= 1u << (k);                                                    \
                        p += 4;                                                                  \
                } else {                                                                         \
                        negative = p < end && *p == '-';                                         \
                        p += negative;                                                           \
                        /* 16 bytes to look at, or the last values of the line. The line ends   \
                         * in '}': digits() stops there. */                                     \
                        count = end - p >= 16 ? number16(p, &u) : 17;                            \
                        if (count > 16)                                                          \
                                count = digits(p, (size_t) (end - p), &u);                       \
                        /* As fast_row(): 18 digits at most, no leading 0 (not JSON). */          \
                        if (count == 0 || count > 18 || (*p == '0' && count > 1))                \
                                return 0;                                                        \
                        p += count;                                                              \
                        v->v[k] = negative ? -(int64_t) u : (int64_t) u;                         \
                }                                                                                \
                if (p == end || *p++ != (sep))                                                   \
                        return 0;                                                                \
        } while (0)
        VALUE(K_WINDOW, "\"window\":", ',');
        VALUE(K_COUNTER, "\"counter\":", ',');
        VALUE(K_BEGIN, "\"begin_ns\":", ',');
        VALUE(K_END, "\"end_ns\":", ',');
        VALUE(K_DRAWN_X11, "\"drawn_x11_us\":", ',');
        VALUE(K_OFFSET, "\"presentation_offset_us\":", ',');
        VALUE(K_DRAWN, "\"drawn_ns\":", ',');
        VALUE(K_DRAWN_UNC, "\"drawn_uncertainty_ns\":", ',');
        VALUE(K_PRESENTED, "\"presented_ns\":", ',');
        VALUE(K_PRESENTED_UNC, "\"presented_uncertainty_ns\":", ',');
        VALUE(K_REFRESH, "\"refresh_interval_ns\":", ',');
        VALUE(K_DELAY, "\"frame_delay_us\":", ',');
        VALUE(K_DRAWN_RECEIVED, "\"drawn_received_ns\":", ',');
        VALUE(K_TIMINGS_RECEIVED, "\"timings_received_ns\":", '}');
#undef VALUE
        v->seen = (1u << N_KEYS) - 1;
        return p == end;
}
#endif

static int find_key(const char *s, size_t n, size_t hint) {
        if (n > keys[hint].size && same(s, keys[hint].text, keys[hint].size))
                return (int) hint;
        for (size_t k = 0; k < N_KEYS; k++)
                if (n >= keys[k].size && memcmp(s, keys[k].text, keys[k].size) == 0)
                        return (int) k;
        return -1;
}

/* The row as libtimeconv writes it: 1 with *v filled (it starts zeroed), 0 when the line is
 * anything else (*v is then garbage). */
static int fast_row(const char *s, size_t n, Values *v) {
        size_t i = 1, hint = 0;

        if (n < 2 || s[0] != '{' || s[n - 1] != '}')
                return 0;
        for (;;) {
                int k = find_key(s + i, n - i, hint);
                bool negative;
                uint64_t u = 0;
                size_t start;

                if (k < 0 || (v->seen & 1u << k))
                        return 0;       /* an unknown key, or one twice */
                v->seen |= 1u << k;
                i += keys[k].size;
                hint = (size_t) k + 1 < N_KEYS ? (size_t) k + 1 : 0;
                if (n - i >= 4 && memcmp(s + i, "null", 4) == 0) {
                        v->null |= 1u << k;
                        i += 4;
                } else {
                        negative = s[i] == '-';
                        i += negative;
                        start = i;
                        /* 18 digits cannot overflow; longer numbers, and a leading 0 before
                         * another digit (not JSON), are jansson's. The line ends in '}': what
                         * is read is in it. */
                        i += digits(s + i, n - i, &u);
                        if (i == start || i - start > 18 || (s[start] == '0' && i - start > 1))
                                return 0;
                        v->v[k] = negative ? -(int64_t) u : (int64_t) u;
                }
                if (s[i] == '}')
                        break;
                if (s[i] != ',')
                        return 0;
                i++;
        }
        return i == n - 1;
}

/* Any JSON object: 0 with *ret filled, 1 with *ret_staged filled for a Wayland row (one with
 * "surface"), or -EBADMSG. */
static int slow_row(unsigned line_number, const char *line, size_t size, Values *ret, FramesStagedRow *ret_staged,
                    FramesError *ret_error) {
        json_error_t error;
        Values v = {};
        json_t *o;

        o = json_loadb(line, size, JSON_REJECT_DUPLICATES, &error);
        if (!o)
                return frames_fail(ret_error, line_number, "not JSON: %s", error.text);
        if (!json_is_object(o)) {
                json_decref(o);
                return frames_fail(ret_error, line_number, "not a JSON object");
        }
        if (json_object_get(o, "surface")) {
                int r = frames_wayland_row(line_number, o, ret_staged, ret_error);

                json_decref(o);
                return r < 0 ? r : 1;
        }
        for (size_t k = 0; k < N_KEYS; k++) {
                char name[32];
                json_t *j;

                snprintf(name, sizeof(name), "%.*s", (int) keys[k].size - 3, keys[k].text + 1);
                j = json_object_get(o, name);
                if (!j)
                        continue;
                v.seen |= 1u << k;
                if (json_is_null(j))
                        v.null |= 1u << k;
                else if (json_is_integer(j))
                        v.v[k] = (int64_t) json_integer_value(j);
                else {
                        json_decref(o);
                        return frames_fail(ret_error, line_number, "\"%s\" is not an integer", name);
                }
        }
        json_decref(o);
        *ret = v;
        return 0;
}

static int64_t time_or_none(const Values *v, unsigned k) {
        return (v->seen & 1u << k) && !(v->null & 1u << k) ? v->v[k] : FRAMES_NO_TIME;
}

int frames_jsonl_row(unsigned line_number, const char *line, size_t size, FramesStagedRow *ret,
                     FramesError *ret_error) {
        unsigned present;
        Values v = {};
        FramesRow row;
        int64_t window;
        int r;

#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (!canonical_row(line, size, &v) && (v = (Values) {}, !fast_row(line, size, &v))) {
#else
        if (!fast_row(line, size, &v)) {
#endif
                r = slow_row(line_number, line, size, &v, ret, ret_error);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        present = v.seen & ~v.null;
        if (!(v.seen & 1u << K_COUNTER))
                return frames_fail(ret_error, line_number, "no \"counter\"");
        if (!(present & 1u << K_COUNTER))
                return frames_fail(ret_error, line_number, "\"counter\" is null");
        if (!(v.seen & 1u << K_DRAWN))
                return frames_fail(ret_error, line_number, "no \"drawn_ns\"");
        if (v.v[K_COUNTER] < 0)
                return frames_fail(ret_error, line_number, "\"counter\" is negative");
        if ((present & 1u << K_WINDOW) && v.v[K_WINDOW] < 0)
                return frames_fail(ret_error, line_number, "\"window\" is negative");

        window = present & 1u << K_WINDOW ? v.v[K_WINDOW] : FRAMES_NO_WINDOW;
        row = (FramesRow) {
                .counter = (uint64_t) v.v[K_COUNTER],
                .begin_ns = time_or_none(&v, K_BEGIN),
                .end_ns = time_or_none(&v, K_END),
                .drawn_x11_us = time_or_none(&v, K_DRAWN_X11),
                .presentation_offset_us = time_or_none(&v, K_OFFSET),
                .drawn_ns = time_or_none(&v, K_DRAWN),
                .drawn_uncertainty_ns = time_or_none(&v, K_DRAWN_UNC),
                .presented_ns = time_or_none(&v, K_PRESENTED),
                .presented_uncertainty_ns = time_or_none(&v, K_PRESENTED_UNC),
                .refresh_ns = time_or_none(&v, K_REFRESH) > 0 ? v.v[K_REFRESH] : 0,
                .frame_delay_us = time_or_none(&v, K_DELAY),
                .drawn_received_ns = time_or_none(&v, K_DRAWN_RECEIVED),
                .timings_received_ns = time_or_none(&v, K_TIMINGS_RECEIVED),
        };
        frames_row_stage(window, &row, ret);
        return 0;
}

int frames_jsonl_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        FramesStagedRow s;
        int r;

        r = frames_jsonl_row(p->line, line, size, &s, ret_error);
        if (r < 0)
                return r;
        return frames_log_add_staged(p->log, &s);
}
