/* SPDX-License-Identifier: MIT */

/* The frame-sync helpers with a real Xvfb (-displayfd) and the real timeconvd on a private bus.
 * A window of ours plays compositor to itself: it takes x11_us times from the daemon
 * (timeconv_now) between two CLOCK_MONOTONIC readings, sends itself _NET_WM_FRAME_DRAWN and
 * _NET_WM_FRAME_TIMINGS carrying them (xcb_send_event), receives them back, unpacks and
 * converts: the monotonic times must meet the test's brackets within the returned bounds. Each
 * frame goes to the frame log and is read back through jansson.
 * usage: test-framesync-x11 TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "x11-tap.h"
#include "timeconv-framesync.h"
#include "x11-bus.h"
#include "xvfb.h"

#define WAIT_MS 20000
#define FRAMES 60
#define BOUND_SANE_NS INT64_C(20000000)
#define X11_US_MODULUS (INT64_C(1000) << 32)

typedef struct Window {
        xcb_connection_t *c;
        xcb_window_t win;
        xcb_atom_t frame_drawn, frame_timings, stamp;
} Window;

/* The CLOCK_MONOTONIC bracket around an x11_us "now" of the daemon. */
typedef struct Instant {
        int64_t lo_ns, hi_ns;
        int64_t x11_us, uncertainty_ns;
} Instant;

static bool is_calibrated(const X11BusDomain *d, void *userdata) {
        return d->available && d->last_calibrated_ns > 0;
}

static bool is_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

static xcb_atom_t intern(xcb_connection_t *c, const char *name) {
        xcb_intern_atom_reply_t *reply = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, strlen(name), name), NULL);
        xcb_atom_t atom = reply ? reply->atom : XCB_ATOM_NONE;

        free(reply);
        return atom;
}

static int window_open(const char *display, Window *ret) {
        uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
        Window w = {};

        w.c = xcb_connect(display, NULL);
        if (xcb_connection_has_error(w.c)) {
                xcb_disconnect(w.c);
                return -ENOTCONN;
        }
        w.win = xcb_generate_id(w.c);
        xcb_create_window(w.c, 0, w.win, xcb_setup_roots_iterator(xcb_get_setup(w.c)).data->root, 0, 0, 1, 1, 0,
                          XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, XCB_CW_EVENT_MASK, &mask);
        w.frame_drawn = intern(w.c, "_NET_WM_FRAME_DRAWN");
        w.frame_timings = intern(w.c, "_NET_WM_FRAME_TIMINGS");
        w.stamp = intern(w.c, "TIMECONV_TEST_STAMP");
        if (w.frame_drawn == XCB_ATOM_NONE || w.frame_timings == XCB_ATOM_NONE || w.stamp == XCB_ATOM_NONE) {
                xcb_disconnect(w.c);
                return -EIO;
        }
        *ret = w;
        return 0;
}

/* Sends the message to our own window: with no event mask, X delivers it to the window's
 * creator, us. */
static void send_message(Window *w, xcb_atom_t type, const uint32_t data[5]) {
        xcb_client_message_event_t ev = {
                .response_type = XCB_CLIENT_MESSAGE,
                .format = 32,
                .window = w->win,
                .type = type,
        };

        memcpy(ev.data.data32, data, 5 * sizeof(uint32_t));
        xcb_send_event(w->c, 0, w->win, 0, (const char *) &ev);
        xcb_flush(w->c);
}

/* Waits (on the connection's fd, never by sleeping) for the next ClientMessage of type, or
 * with type XCB_ATOM_NONE for our PropertyNotify (its time in ret_data[0]). */
static int receive_message(Window *w, xcb_atom_t type, uint32_t ret_data[5]) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;

        for (;;) {
                xcb_generic_event_t *ev = xcb_poll_for_event(w->c);

                if (ev) {
                        xcb_client_message_event_t *cm = (xcb_client_message_event_t *) ev;
                        xcb_property_notify_event_t *pn = (xcb_property_notify_event_t *) ev;
                        bool match = false;

                        if (type != XCB_ATOM_NONE && (ev->response_type & 0x7f) == XCB_CLIENT_MESSAGE &&
                            cm->type == type && cm->format == 32 && cm->window == w->win) {
                                memcpy(ret_data, cm->data.data32, 5 * sizeof(uint32_t));
                                match = true;
                        } else if (type == XCB_ATOM_NONE && (ev->response_type & 0x7f) == XCB_PROPERTY_NOTIFY &&
                                   pn->atom == w->stamp) {
                                ret_data[0] = pn->time;
                                match = true;
                        }
                        free(ev);
                        if (match)
                                return 0;
                        continue;
                }
                if (xcb_connection_has_error(w->c))
                        return -ECONNRESET;
                int64_t left_ms = (deadline_ns - clock_now_ns(CLOCK_MONOTONIC)) / 1000000;
                struct pollfd p = { .fd = xcb_get_file_descriptor(w->c), .events = POLLIN };

                if (left_ms <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int) left_ms) < 0 && errno != EINTR)
                        return -errno;
        }
}

static int take_instant(struct timeconv *tc, Instant *ret) {
        Instant i;
        int r;

        i.lo_ns = clock_now_ns(CLOCK_MONOTONIC);
        r = timeconv_now(tc, "x11_us", &i.x11_us, &i.uncertainty_ns);
        i.hi_ns = clock_now_ns(CLOCK_MONOTONIC);
        if (r < 0)
                return r;
        *ret = i;
        return 0;
}

/* The converted time meets the instant's bracket, widened by how uncertain the daemon was of
 * the x11_us value it gave us there. */
static bool meets(int64_t ns, int64_t uncertainty_ns, const Instant *at) {
        return uncertainty_ns >= 0 && at->uncertainty_ns >= 0 &&
               bracket_holds(ns, (uint64_t) uncertainty_ns + (uint64_t) at->uncertainty_ns, at->lo_ns, at->hi_ns);
}

/* The log line of f, read back through jansson, says what f says. */
static bool log_line_matches(const char *line, const struct timeconv_frame_times *f) {
        json_t *o = json_loads(line, 0, NULL);
        bool presented = f->flags & TIMECONV_FRAME_PRESENTED, m;

        if (!o)
                return false;
        m = json_integer_value(json_object_get(o, "counter")) == (json_int_t) f->counter &&
            json_integer_value(json_object_get(o, "drawn_ns")) == f->drawn_ns &&
            json_integer_value(json_object_get(o, "drawn_uncertainty_ns")) == f->drawn_uncertainty_ns &&
            (presented ? json_integer_value(json_object_get(o, "presented_ns")) == f->presented_ns
                       : json_is_null(json_object_get(o, "presented_ns"))) &&
            (presented ? json_integer_value(json_object_get(o, "presented_uncertainty_ns")) ==
                                 f->presented_uncertainty_ns
                       : json_is_null(json_object_get(o, "presented_uncertainty_ns"))) &&
            json_integer_value(json_object_get(o, "refresh_interval_ns")) == 16667000 &&
            json_integer_value(json_object_get(o, "frame_delay_us")) == 2000;
        json_decref(o);
        return m;
}

typedef struct Tally {
        int failed, drawn_outside, presented_outside, flags_wrong, logged_wrong, last_error;
        int64_t max_drawn_uncertainty_ns, max_presented_uncertainty_ns;
} Tally;

/* One frame: drawn at instant a, presented (when present) at instant b. */
static void one_frame(struct timeconv *tc, Window *w, FILE *log, uint64_t *counter, int i, Tally *t) {
        struct timeconv_frame_drawn drawn = {}, drawn_back = {};
        struct timeconv_frame_timings timings = {}, timings_back = {};
        struct timeconv_frame_times times = {};
        uint64_t begin, end;
        uint32_t data[5];
        Instant a, b;
        char line[512];
        bool presented = i % 4 != 3;
        long line_start = 0;
        int r;

        r = timeconv_frame_begin(*counter, i % 5 == 0, &begin, &end);
        if (r >= 0)
                r = take_instant(tc, &a);
        if (r >= 0) {
                drawn = (struct timeconv_frame_drawn) { .counter = end, .drawn_x11_us = (uint64_t) a.x11_us };
                r = timeconv_frame_drawn_pack(&drawn, data);
        }
        if (r >= 0) {
                send_message(w, w->frame_drawn, data);
                r = receive_message(w, w->frame_drawn, data);
        }
        if (r >= 0)
                r = timeconv_frame_drawn_unpack(data, &drawn_back);
        /* Presented after the round trip, or (every 7th frame) at the drawn instant itself: an
         * offset of 0, which the wire carries as 1. */
        if (r >= 0)
                r = i % 7 == 0 ? (b = a, 0) : take_instant(tc, &b);
        if (r >= 0) {
                int64_t offset_us = b.x11_us - a.x11_us;

                if (offset_us < -X11_US_MODULUS / 2)
                        offset_us += X11_US_MODULUS;
                timings = (struct timeconv_frame_timings) {
                        .counter = end,
                        .flags = (presented ? TIMECONV_FRAME_PRESENTED : 0) | TIMECONV_FRAME_REFRESH_INTERVAL |
                                 TIMECONV_FRAME_DELAY,
                        .presentation_offset_us = presented ? offset_us : 0,
                        .refresh_interval_us = 16667,
                        .frame_delay_us = 2000,
                };
                r = timeconv_frame_timings_pack(&timings, data);
        }
        if (r >= 0) {
                send_message(w, w->frame_timings, data);
                r = receive_message(w, w->frame_timings, data);
        }
        if (r >= 0)
                r = timeconv_frame_timings_unpack(data, &timings_back);
        if (r >= 0)
                r = timeconv_frame_convert(tc, &drawn_back, &timings_back, &times);
        if (r >= 0) {
                line_start = ftell(log);
                r = timeconv_frame_log_write(log, &times);
        }
        if (r < 0) {
                t->failed++;
                t->last_error = r;
                return;
        }
        *counter = end;

        t->flags_wrong += times.counter != end || !!(times.flags & TIMECONV_FRAME_PRESENTED) != presented ||
                          times.refresh_interval_ns != 16667000 || times.frame_delay_us != 2000;
        if (!meets(times.drawn_ns, times.drawn_uncertainty_ns, &a) && t->drawn_outside++ < 3)
                diag("frame %d: drawn %lld +- %lld, truth in [%lld, %lld] +- %lld", i, (long long) times.drawn_ns,
                     (long long) times.drawn_uncertainty_ns, (long long) a.lo_ns, (long long) a.hi_ns,
                     (long long) a.uncertainty_ns);
        if (presented && !meets(times.presented_ns, times.presented_uncertainty_ns, &b) && t->presented_outside++ < 3)
                diag("frame %d: presented %lld +- %lld, truth in [%lld, %lld] +- %lld", i,
                     (long long) times.presented_ns, (long long) times.presented_uncertainty_ns, (long long) b.lo_ns,
                     (long long) b.hi_ns, (long long) b.uncertainty_ns);
        if (times.drawn_uncertainty_ns > t->max_drawn_uncertainty_ns)
                t->max_drawn_uncertainty_ns = times.drawn_uncertainty_ns;
        if (presented && times.presented_uncertainty_ns > t->max_presented_uncertainty_ns)
                t->max_presented_uncertainty_ns = times.presented_uncertainty_ns;

        /* The line just written, read back. */
        t->logged_wrong += fflush(log) != 0 || fseek(log, line_start, SEEK_SET) != 0 ||
                           !fgets(line, sizeof line, log) || !log_line_matches(line, &times);
        fseek(log, 0, SEEK_END);
}

static void test_frames(struct timeconv *tc, Window *w, const char *label) {
        FILE *log = tmpfile();
        uint64_t counter = 0;
        Tally t = {};
        char line[512];
        int lines = 0;

        if (!log)
                abort();
        for (int i = 0; i < FRAMES; i++)
                one_frame(tc, w, log, &counter, i, &t);
        ok(t.failed == 0, "%s: %d frames: sent, received, unpacked, converted and logged (last error %d)", label,
           FRAMES, t.last_error);
        is_int(t.flags_wrong, 0, "counter, presented or not, refresh interval and delay come through");
        ok(t.drawn_outside == 0, "%s: drawn: the monotonic time meets the test's bracket within its bound every "
           "time (%d outside; largest bound %lld ns)", label, t.drawn_outside, (long long) t.max_drawn_uncertainty_ns);
        ok(t.presented_outside == 0, "%s: presented: the same, offset 0 (sent as 1) included (%d outside; largest "
           "bound %lld ns)", label, t.presented_outside, (long long) t.max_presented_uncertainty_ns);
        ok(t.max_drawn_uncertainty_ns < BOUND_SANE_NS && t.max_presented_uncertainty_ns < BOUND_SANE_NS,
           "and the bounds say something: below %d ms", (int) (BOUND_SANE_NS / 1000000));
        is_int(t.logged_wrong, 0, "each frame's log line reads back through jansson");
        rewind(log);
        while (fgets(line, sizeof line, log))
                lines++;
        is_int(lines, FRAMES - t.failed, "one log line per frame");
        fclose(log);
}

/* Frames drawn at a time the X server stamped itself (a PropertyNotify of ours, ms): the truth
 * is independent of the daemon's model. The server read its clock within [lo, hi] and truncated
 * to the ms, so the instant its x11_us reads ms * 1000 lies within [lo - 1 ms, hi]. */
static void test_server_stamped(struct timeconv *tc, Window *w, const char *label) {
        int failed = 0, outside = 0, last_error = 0;
        int64_t max_uncertainty_ns = 0;

        for (int i = 0; i < 20; i++) {
                struct timeconv_frame_drawn drawn = { .counter = 4 * (uint64_t) i + 4 }, back;
                struct timeconv_frame_times times;
                uint32_t data[5];
                int64_t lo_ns, hi_ns;
                int r;

                xcb_change_property(w->c, XCB_PROP_MODE_APPEND, w->win, w->stamp, XCB_ATOM_STRING, 8, 0, NULL);
                lo_ns = clock_now_ns(CLOCK_MONOTONIC);
                xcb_flush(w->c);
                r = receive_message(w, XCB_ATOM_NONE, data);
                hi_ns = clock_now_ns(CLOCK_MONOTONIC);
                if (r >= 0) {
                        drawn.drawn_x11_us = (uint64_t) data[0] * 1000;
                        r = timeconv_frame_drawn_pack(&drawn, data);
                }
                if (r >= 0) {
                        send_message(w, w->frame_drawn, data);
                        r = receive_message(w, w->frame_drawn, data);
                }
                if (r >= 0)
                        r = timeconv_frame_drawn_unpack(data, &back);
                if (r >= 0)
                        r = timeconv_frame_convert(tc, &back, NULL, &times);
                if (r < 0) {
                        failed++;
                        last_error = r;
                        continue;
                }
                if (times.drawn_uncertainty_ns > max_uncertainty_ns)
                        max_uncertainty_ns = times.drawn_uncertainty_ns;
                if (times.drawn_uncertainty_ns < 0 ||
                    !bracket_holds(times.drawn_ns, (uint64_t) times.drawn_uncertainty_ns, lo_ns - 1000000, hi_ns))
                        if (outside++ < 3)
                                diag("X stamp %llu us: drawn %lld +- %lld, truth in [%lld, %lld]",
                                     (unsigned long long) drawn.drawn_x11_us, (long long) times.drawn_ns,
                                     (long long) times.drawn_uncertainty_ns, (long long) (lo_ns - 1000000),
                                     (long long) hi_ns);
        }
        ok(failed == 0, "%s: 20 frames drawn at the server's own timestamps convert (last error %d)", label,
           last_error);
        ok(outside == 0, "%s: each within its bound of the server's bracket (%d outside; largest bound %lld ns)",
           label, outside, (long long) max_uncertainty_ns);
}

static void test_errors(struct timeconv *tc) {
        struct timeconv_frame_drawn d = { .counter = 8, .drawn_x11_us = 1000 };
        struct timeconv_frame_timings timings = { .counter = 12 };
        struct timeconv_frame_times times = { .counter = 99 }, wide;
        Instant a;

        is_int(timeconv_frame_convert(tc, &d, &timings, &times), -EINVAL, "FRAME_TIMINGS of another frame: -EINVAL");
        is_int(times.counter, 99, "and the output is untouched");
        timings.counter = 8;
        timings.flags = TIMECONV_FRAME_REFRESH_INTERVAL;
        is_int(timeconv_frame_convert(tc, &d, &timings, &times), -ERANGE, "a known refresh interval of 0: -ERANGE");
        ok(take_instant(tc, &a) == 0, "x11_us now");
        d.drawn_x11_us = (uint64_t) a.x11_us;
        ok(timeconv_frame_convert(tc, &d, NULL, &times) == 0 && times.flags == 0,
           "FRAME_DRAWN alone: drawn only, nothing presented");
        /* As mutter sends it when the X server's clock is CLOCK_MONOTONIC: us, unreduced. */
        d.drawn_x11_us = (uint64_t) a.x11_us + 3 * (UINT64_C(1000) << 32);
        ok(timeconv_frame_convert(tc, &d, NULL, &wide) == 0 && wide.drawn_ns == times.drawn_ns,
           "a drawn time whose ms part overflows 32 bits is the same X time");
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        struct timeconv *tc = NULL;
        X11BusDomain d;
        Window w = {};
        Xvfb x = {};

        tap_args(argc, argv, 1, "TIMECONVD");
        is_int(x11_tap_start(argv[1], &x, &h, &bus), 0, "connected");
        if (tap_failed_)
                return done_testing();
        ok(x11_bus_wait_for(bus, "x11_us", is_calibrated, NULL, WAIT_MS, &d) == 0, "x11_us calibrated (verdict %s)",
           d.verdict);
        ok(timeconv_open_address(h->bus_address, &tc) == 0, "libtimeconv on the private bus");
        ok(window_open(x.name, &w) == 0, "a window of our own on %s", x.name);
        if (tap_failed_)
                return done_testing();

        /* Early, while the daemon may still be judging the X clock, then once it says identity. */
        test_frames(tc, &w, d.verdict[0] ? d.verdict : "early");
        test_server_stamped(tc, &w, d.verdict[0] ? d.verdict : "early");
        if (x11_bus_wait_for(bus, "x11", is_identity, NULL, WAIT_MS, &d) == 0) {
                test_frames(tc, &w, "identity");
                test_server_stamped(tc, &w, "identity");
        } else
                ok(false, "x11: verdict identity (Xvfb stamps CLOCK_MONOTONIC)");
        test_errors(tc);

        xcb_disconnect(w.c);
        timeconv_free(tc);
        xvfb_stop(&x);
        return done_testing();
}
