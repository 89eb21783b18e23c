/* SPDX-License-Identifier: MIT */

/* The probe's X client. It checks that an EWMH window manager runs and lists
 * _NET_WM_FRAME_DRAWN, maps a window that declares extended frame synchronisation (WM_PROTOCOLS
 * with _NET_WM_SYNC_REQUEST, a basic and an extended XSync counter in
 * _NET_WM_SYNC_REQUEST_COUNTER), and draws frames as a toolkit does: counter to an odd value,
 * draw, counter to the frame's even end value. Paced by an absolute timer (--rate), or like GTK
 * the next frame right after the compositor's _NET_WM_FRAME_DRAWN for the last one. A window
 * manager that goes away (its check window or its WM_Sn selection window destroyed) or falls
 * silent (no _NET_WM_FRAME_DRAWN for wait_ns while frames wait for one) ends the run early with
 * the frames measured so far, as does the X server going. */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <xcb/sync.h>
#include <xcb/xcb.h>

#include "cli-probe-x11.h"
#include "time-util.h"

/* The token timeconvd keeps on the root window (domains/x11-conn.h, X11_SERVER_ID_ATOM). */
#define SERVER_ID_ATOM "_TIMECONV_SERVER_ID"

#define WIDTH 320
#define HEIGHT 240

typedef struct Atoms {
        xcb_atom_t supporting_wm_check, supported, frame_drawn, frame_timings, sync_request,
                sync_request_counter, wm_protocols, wm_delete_window, net_wm_name, utf8_string, wm_selection,
                server_id;
} Atoms;

typedef struct Probe {
        const ProbeOptions *o;
        xcb_connection_t *c;
        int screen_number;
        xcb_screen_t *screen;
        const char *display;
        Atoms atoms;
        xcb_window_t window;
        xcb_gcontext_t gc;
        xcb_sync_counter_t basic, extended;
        uint64_t counter;               /* the extended counter's value now */
        uint64_t sync_request;          /* the end value a _NET_WM_SYNC_REQUEST asked for; 0: none */
        bool mapped;
        /* The window manager's check window and WM_Sn owner: their DestroyNotify says it went. */
        xcb_window_t wm_check, wm_owner;
        const char *wm_gone;            /* NULL, or which of the two went */
        char wm_selection[16], wm_owner_what[48];
        /* For silence: the latest _NET_WM_FRAME_DRAWN's arrival, and how many frames it answered
         * (all up to the latest one drawn). */
        int64_t drawn_received_ns;
        size_t n_answered;
        ProbeRun *run;
        char *message;
        size_t size;
} Probe;

static int fail(Probe *p, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Probe *p, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(p->message, p->size, fmt, ap);
        va_end(ap);
        return r;
}

static xcb_atom_t intern(xcb_connection_t *c, const char *name) {
        xcb_intern_atom_reply_t *reply = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, strlen(name), name), NULL);
        xcb_atom_t atom = reply ? reply->atom : XCB_ATOM_NONE;

        free(reply);
        return atom;
}

static int intern_all(Probe *p) {
        Atoms *a = &p->atoms;
        struct {
                xcb_atom_t *atom;
                const char *name;
        } table[] = {
                { &a->supporting_wm_check, "_NET_SUPPORTING_WM_CHECK" },
                { &a->supported, "_NET_SUPPORTED" },
                { &a->frame_drawn, "_NET_WM_FRAME_DRAWN" },
                { &a->frame_timings, "_NET_WM_FRAME_TIMINGS" },
                { &a->sync_request, "_NET_WM_SYNC_REQUEST" },
                { &a->sync_request_counter, "_NET_WM_SYNC_REQUEST_COUNTER" },
                { &a->wm_protocols, "WM_PROTOCOLS" },
                { &a->wm_delete_window, "WM_DELETE_WINDOW" },
                { &a->net_wm_name, "_NET_WM_NAME" },
                { &a->utf8_string, "UTF8_STRING" },
                { &a->wm_selection, p->wm_selection },
                { &a->server_id, SERVER_ID_ATOM },
        };

        snprintf(p->wm_selection, sizeof(p->wm_selection), "WM_S%d", p->screen_number);
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                *table[i].atom = intern(p->c, table[i].name);
                if (*table[i].atom == XCB_ATOM_NONE)
                        return fail(p, -ECONNRESET, "cannot intern %s", table[i].name);
        }
        return 0;
}

static xcb_get_property_reply_t *get_property(Probe *p, xcb_window_t w, xcb_atom_t property, xcb_atom_t type) {
        xcb_get_property_reply_t *reply =
                xcb_get_property_reply(p->c, xcb_get_property(p->c, 0, w, property, type, 0, 4096), NULL);

        if (reply && (reply->type == XCB_ATOM_NONE || (type != XCB_ATOM_ANY && reply->type != type))) {
                free(reply);
                return NULL;
        }
        return reply;
}

static xcb_window_t get_window(Probe *p, xcb_window_t w, xcb_atom_t property) {
        xcb_get_property_reply_t *reply = get_property(p, w, property, XCB_ATOM_WINDOW);
        xcb_window_t v = XCB_WINDOW_NONE;

        if (reply && reply->format == 32 && xcb_get_property_value_length(reply) >= 4)
                v = *(xcb_window_t *) xcb_get_property_value(reply);
        free(reply);
        return v;
}

/* StructureNotify on another client's window (for us alone): its DestroyNotify. false when the
 * window is gone already. */
static bool watch(Probe *p, xcb_window_t w) {
        xcb_generic_error_t *e = xcb_request_check(
                p->c, xcb_change_window_attributes_checked(p->c, w, XCB_CW_EVENT_MASK,
                                                           (uint32_t[]) { XCB_EVENT_MASK_STRUCTURE_NOTIFY }));

        free(e);
        return !e;
}

/* timeconvd converts the X times of its own X server only: the probe's display must be that
 * one. The daemon names its server with a random token on the root window; a display without
 * it, or with another, is another server (two Xvfb on one machine agree on the clock, so the
 * calibration could not tell). */
static int check_server(Probe *p) {
        const ProbeOptions *o = p->o;
        xcb_get_property_reply_t *reply;
        uint64_t id = 0;
        bool found = false;

        if (!o->has_server_id)
                return 0;
        reply = get_property(p, p->screen->root, p->atoms.server_id, XCB_ATOM_INTEGER);
        if (reply && reply->format == 32 && xcb_get_property_value_length(reply) >= 8) {
                const uint32_t *v = xcb_get_property_value(reply);

                id = (uint64_t) v[0] | (uint64_t) v[1] << 32;
                found = true;
        }
        free(reply);
        if (found && id == o->server_id)
                return 0;
        return fail(p, -EXDEV, "the X server on %s is not timeconvd's (it calibrates %s; this one %s): its "
                    "times cannot be converted; probe %s, or run timeconvd on this display",
                    p->display, o->daemon_display && *o->daemon_display ? o->daemon_display : "another display",
                    found ? "is marked as another server" : "has never had timeconvd connected",
                    o->daemon_display && *o->daemon_display ? o->daemon_display : "its display");
}

/* The window manager as EWMH finds it: the check window names itself, and _NET_SUPPORTED. Its
 * check window and selection owner are watched from here on. */
static int check_wm(Probe *p, const char *display) {
        xcb_window_t check = get_window(p, p->screen->root, p->atoms.supporting_wm_check);
        xcb_get_selection_owner_reply_t *owner;
        xcb_get_property_reply_t *reply;
        bool drawn = false;

        /* Watched before it is checked: a window manager leaving in between is not missed. */
        if (check == XCB_WINDOW_NONE || !watch(p, check) ||
            get_window(p, check, p->atoms.supporting_wm_check) != check)
                return fail(p, -ENOENT, "no EWMH window manager runs on %s (the root window has no valid "
                            "_NET_SUPPORTING_WM_CHECK): nothing there reports frame timing", display);
        p->wm_check = check;
        owner = xcb_get_selection_owner_reply(p->c, xcb_get_selection_owner(p->c, p->atoms.wm_selection), NULL);
        if (owner && owner->owner != XCB_WINDOW_NONE && owner->owner != check && watch(p, owner->owner))
                p->wm_owner = owner->owner;
        snprintf(p->wm_owner_what, sizeof(p->wm_owner_what), "%s selection owner", p->wm_selection);
        free(owner);
        reply = get_property(p, check, p->atoms.net_wm_name, p->atoms.utf8_string);
        snprintf(p->run->wm_name, sizeof(p->run->wm_name), "%.*s",
                 reply ? xcb_get_property_value_length(reply) : 0, reply ? (char *) xcb_get_property_value(reply) : "");
        free(reply);
        if (!p->run->wm_name[0])
                snprintf(p->run->wm_name, sizeof(p->run->wm_name), "(unnamed)");

        reply = get_property(p, p->screen->root, p->atoms.supported, XCB_ATOM_ATOM);
        if (reply && reply->format == 32) {
                const xcb_atom_t *atoms = xcb_get_property_value(reply);

                for (int i = 0; i < xcb_get_property_value_length(reply) / 4; i++) {
                        drawn |= atoms[i] == p->atoms.frame_drawn;
                        p->run->wm_timings |= atoms[i] == p->atoms.frame_timings;
                }
        }
        free(reply);
        if (!drawn)
                return fail(p, -EOPNOTSUPP, "the window manager %s on %s does not support _NET_WM_FRAME_DRAWN "
                            "(not in _NET_SUPPORTED): it reports no frame timing; mutter and muffin do "
                            "(GNOME's and Cinnamon's window managers)", p->run->wm_name, display);
        return 0;
}

static xcb_sync_int64_t sync_value(uint64_t v) {
        return (xcb_sync_int64_t) { .hi = (int32_t) (v >> 32), .lo = (uint32_t) v };
}

static int create_window(Probe *p) {
        uint32_t values[] = { p->screen->black_pixel, XCB_EVENT_MASK_STRUCTURE_NOTIFY | XCB_EVENT_MASK_EXPOSURE |
                                                              XCB_EVENT_MASK_PROPERTY_CHANGE };
        const char *name = "timeconv frame probe";
        xcb_sync_initialize_reply_t *sync;
        uint32_t counters[2], protocols[2];

        sync = xcb_sync_initialize_reply(p->c, xcb_sync_initialize(p->c, XCB_SYNC_MAJOR_VERSION,
                                                                    XCB_SYNC_MINOR_VERSION), NULL);
        if (!sync)
                return fail(p, -ENOTSUP, "the X server has no XSync extension: no frame counter");
        free(sync);

        p->window = xcb_generate_id(p->c);
        xcb_create_window(p->c, XCB_COPY_FROM_PARENT, p->window, p->screen->root, 0, 0, WIDTH, HEIGHT, 0,
                          XCB_WINDOW_CLASS_INPUT_OUTPUT, p->screen->root_visual, XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK,
                          values);
        p->gc = xcb_generate_id(p->c);
        xcb_create_gc(p->c, p->gc, p->window, XCB_GC_FOREGROUND, (uint32_t[]) { p->screen->white_pixel });

        p->basic = xcb_generate_id(p->c);
        p->extended = xcb_generate_id(p->c);
        xcb_sync_create_counter(p->c, p->basic, sync_value(0));
        xcb_sync_create_counter(p->c, p->extended, sync_value(0));
        counters[0] = p->basic;
        counters[1] = p->extended;
        protocols[0] = p->atoms.wm_delete_window;
        protocols[1] = p->atoms.sync_request;
        xcb_change_property(p->c, XCB_PROP_MODE_REPLACE, p->window, p->atoms.wm_protocols, XCB_ATOM_ATOM, 32, 2,
                            protocols);
        xcb_change_property(p->c, XCB_PROP_MODE_REPLACE, p->window, p->atoms.sync_request_counter,
                            XCB_ATOM_CARDINAL, 32, 2, counters);
        xcb_change_property(p->c, XCB_PROP_MODE_REPLACE, p->window, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                            strlen(name), name);
        xcb_change_property(p->c, XCB_PROP_MODE_REPLACE, p->window, p->atoms.net_wm_name, p->atoms.utf8_string, 8,
                            strlen(name), name);
        xcb_map_window(p->c, p->window);
        xcb_flush(p->c);
        p->run->window = p->window;
        return 0;
}

/* The frame whose end value is counter (they increase): binary search. */
static ProbeFrame *frame_of(ProbeRun *run, uint64_t counter) {
        size_t lo = 0, hi = run->n_frames;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (run->frames[mid].counter < counter)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < run->n_frames && run->frames[lo].counter == counter ? &run->frames[lo] : NULL;
}

static void client_message(Probe *p, const xcb_client_message_event_t *cm, int64_t now_ns) {
        const uint32_t *data = cm->data.data32;
        ProbeFrame *f;

        if (cm->format != 32 || cm->window != p->window)
                return;
        if (cm->type == p->atoms.frame_drawn) {
                struct timeconv_frame_drawn d;

                if (timeconv_frame_drawn_unpack(data, &d) < 0 || !(f = frame_of(p->run, d.counter)) || f->drawn)
                        return;
                f->drawn = true;
                f->drawn_message = d;
                f->drawn_received_ns = now_ns;
                p->drawn_received_ns = now_ns;
                if ((size_t) (f - p->run->frames) + 1 > p->n_answered)
                        p->n_answered = (size_t) (f - p->run->frames) + 1;
                if (p->o->on_message)
                        p->o->on_message(p->o->userdata, f);
        } else if (cm->type == p->atoms.frame_timings) {
                struct timeconv_frame_timings t;

                if (timeconv_frame_timings_unpack(data, &t) < 0 || !(f = frame_of(p->run, t.counter)) || f->timed)
                        return;
                f->timed = true;
                f->timings_message = t;
                f->timings_received_ns = now_ns;
                if (p->o->on_message && f->drawn)
                        p->o->on_message(p->o->userdata, f);
        } else if (cm->type == p->atoms.wm_protocols && data[0] == p->atoms.sync_request) {
                struct timeconv_sync_request s;

                /* The window manager waits until the counter reaches the value: the next frame
                 * is urgent and ends there. */
                if (timeconv_sync_request_unpack(data, p->atoms.sync_request, &s) == 0 && s.extended &&
                    s.value > p->counter && s.value % 2 == 0)
                        p->sync_request = s.value;
        }
}

/* Reads what the server sent. */
static int dispatch(Probe *p) {
        xcb_generic_event_t *ev;

        while ((ev = xcb_poll_for_event(p->c))) {
                int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);

                switch (ev->response_type & 0x7f) {
                case XCB_CLIENT_MESSAGE:
                        client_message(p, (xcb_client_message_event_t *) ev, now_ns);
                        break;
                case XCB_MAP_NOTIFY:
                        p->mapped = true;
                        break;
                case XCB_DESTROY_NOTIFY: {
                        xcb_window_t w = ((xcb_destroy_notify_event_t *) ev)->window;

                        if (w != XCB_WINDOW_NONE && w == p->wm_check)
                                p->wm_gone = "_NET_SUPPORTING_WM_CHECK window";
                        else if (w != XCB_WINDOW_NONE && w == p->wm_owner)
                                p->wm_gone = p->wm_owner_what;
                        break;
                }
                default:
                        break;
                }
                free(ev);
        }
        return xcb_connection_has_error(p->c) ? fail(p, -ECONNRESET, "the X connection broke") : 0;
}

static int frame(Probe *p, unsigned i) {
        ProbeFrame *f = &p->run->frames[p->run->n_frames];
        uint64_t begin, end;
        xcb_rectangle_t all = { 0, 0, WIDTH, HEIGHT };
        int r;

        if (p->sync_request > p->counter) {
                begin = p->sync_request - 1;
                end = p->sync_request;
                p->sync_request = 0;
                p->run->sync_requests++;
        } else {
                r = timeconv_frame_begin(p->counter, p->o->urgent, &begin, &end);
                if (r < 0)
                        return fail(p, r, "the frame counter ran out");
        }
        *f = (ProbeFrame) { .counter = end };

        /* Each time stamp just before its request leaves: the server acts on it after. */
        f->begin_ns = clock_now_ns(CLOCK_MONOTONIC);
        xcb_sync_set_counter(p->c, p->extended, sync_value(begin));
        xcb_flush(p->c);
        /* A colour of its own per frame: the window is damaged, the compositor repaints. */
        xcb_change_gc(p->c, p->gc, XCB_GC_FOREGROUND, (uint32_t[]) { (i * 0x010305u) & 0xffffffu });
        xcb_poly_fill_rectangle(p->c, p->window, p->gc, 1, &all);
        xcb_sync_set_counter(p->c, p->basic, sync_value(i + 1));
        f->end_ns = clock_now_ns(CLOCK_MONOTONIC);
        xcb_sync_set_counter(p->c, p->extended, sync_value(end));
        xcb_flush(p->c);
        p->counter = end;
        p->run->n_frames++;
        return 0;
}

static bool all_messages(const Probe *p) {
        for (size_t i = 0; i < p->run->n_frames; i++)
                if (!p->run->frames[i].drawn || (p->run->wm_timings && !p->run->frames[i].timed))
                        return false;
        return true;
}

static int wait_events(Probe *p, int timer_fd, int64_t deadline_ns) {
        struct pollfd fds[2] = { { .fd = xcb_get_file_descriptor(p->c), .events = POLLIN },
                                 { .fd = timer_fd, .events = POLLIN } };
        int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
        int timeout_ms = left_ns <= 0 ? 0 : (int) ((left_ns + 999999) / 1000000);

        if (poll(fds, timer_fd >= 0 ? 2 : 1, timeout_ms) < 0 && errno != EINTR)
                return fail(p, -errno, "poll: %m");
        if (timer_fd >= 0 && (fds[1].revents & POLLIN)) {
                uint64_t expirations;

                if (read(timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
                        return fail(p, -errno, "timerfd: %m");
        }
        return dispatch(p);
}

static int64_t cpu_now_ns(void) {
        struct rusage u;

        if (getrusage(RUSAGE_SELF, &u) < 0)
                return 0;
        return ((int64_t) u.ru_utime.tv_sec + u.ru_stime.tv_sec) * NSEC_PER_SEC +
               ((int64_t) u.ru_utime.tv_usec + u.ru_stime.tv_usec) * NSEC_PER_USEC;
}

/* Since when the compositor owes a _NET_WM_FRAME_DRAWN and has sent none: the later of the
 * latest one's arrival and the end of the first frame after the latest one answered; INT64_MAX
 * when it owes none. */
static int64_t quiet_since_ns(const Probe *p) {
        int64_t end_ns;

        if (p->n_answered >= p->run->n_frames)
                return INT64_MAX;
        end_ns = p->run->frames[p->n_answered].end_ns;
        return p->drawn_received_ns > end_ns ? p->drawn_received_ns : end_ns;
}

/* Why the frames stop early, for people; 0 when they go on. */
static int stop_reason(Probe *p, int64_t silence_ns) {
        ProbeRun *run = p->run;

        if (p->wm_gone) {
                snprintf(run->stop_message, sizeof(run->stop_message), "the window manager %s went away (its "
                         "%s was destroyed) after %zu of %u frames", run->wm_name, p->wm_gone,
                         run->n_frames, p->o->n_frames);
                return -ESHUTDOWN;
        }
        if (clock_now_ns(CLOCK_MONOTONIC) - quiet_since_ns(p) < silence_ns)
                return 0;
        if (p->n_answered == 0)
                snprintf(run->stop_message, sizeof(run->stop_message), "the window manager %s lists "
                         "_NET_WM_FRAME_DRAWN but sent none in %.1f s for the probe's first %zu frames: it "
                         "reports no frame timing", run->wm_name, (double) silence_ns / 1e9, run->n_frames);
        else
                snprintf(run->stop_message, sizeof(run->stop_message), "the window manager %s stopped sending "
                         "_NET_WM_FRAME_DRAWN: none for %.1f s, since frame %zu of %u", run->wm_name,
                         (double) silence_ns / 1e9, p->n_answered + 1, p->o->n_frames);
        return -ETIME;
}

/* Frames, each begun at its slot of an absolute schedule (a late wake-up delays one frame, not
 * all after it) or right after the last one's _NET_WM_FRAME_DRAWN. 0, or why they stopped
 * early (ProbeRun.stopped). */
static int draw_frames(Probe *p) {
        const ProbeOptions *o = p->o;
        int64_t period_ns = o->rate_hz > 0 ? (int64_t) (1e9 / o->rate_hz + 0.5) : 0;
        /* Silence: no message at all while frames wait, for wait_ns or 8 frame periods. In the
         * paced-by-messages mode a frame whose message is lost is followed by the next after a
         * quarter of that, so one lost message does not end the run. */
        int64_t silence_ns = period_ns > o->wait_ns / 8 ? 8 * period_ns : o->wait_ns;
        int64_t t0_ns, cpu0_ns, next_ns, deadline_ns;
        int timer_fd = -1, r = 0;
        unsigned i = 0;

        if (period_ns > 0) {
                timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (timer_fd < 0)
                        return fail(p, -errno, "timerfd: %m");
        }
        cpu0_ns = cpu_now_ns();
        t0_ns = next_ns = clock_now_ns(CLOCK_MONOTONIC);
        while (i < o->n_frames && r >= 0) {
                int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
                const ProbeFrame *last = i > 0 ? &p->run->frames[i - 1] : NULL;
                bool due;

                r = stop_reason(p, silence_ns);
                if (r < 0)
                        break;
                if (period_ns > 0)
                        due = now_ns >= next_ns;
                else    /* After the last frame's FRAME_DRAWN, or when it does not come. */
                        due = !last || last->drawn || now_ns - last->end_ns >= silence_ns / 4;
                if (due) {
                        r = frame(p, i++);
                        if (r < 0)
                                break;
                        next_ns = t0_ns + (int64_t) i * period_ns;
                        if (period_ns > 0) {
                                struct itimerspec at = {
                                        .it_value = { next_ns / NSEC_PER_SEC, next_ns % NSEC_PER_SEC },
                                };

                                if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &at, NULL) < 0) {
                                        r = fail(p, -errno, "timerfd: %m");
                                        break;
                                }
                        }
                        continue;
                }
                deadline_ns = period_ns > 0 ? next_ns : last->end_ns + silence_ns / 4;
                if (quiet_since_ns(p) < INT64_MAX - silence_ns && quiet_since_ns(p) + silence_ns < deadline_ns)
                        deadline_ns = quiet_since_ns(p) + silence_ns;
                r = wait_events(p, timer_fd, deadline_ns);
        }
        /* The last messages: until every frame has them, or none came for silence_ns. */
        while (r >= 0 && !all_messages(p)) {
                int64_t quiet_ns = quiet_since_ns(p);

                /* Gone after drawing every frame: nothing was lost but timings. */
                if (p->wm_gone && quiet_ns == INT64_MAX)
                        break;
                r = stop_reason(p, silence_ns);
                if (r < 0)
                        break;
                /* Only presentation timings owed: they may never come (a frame not shown). */
                if (quiet_ns == INT64_MAX) {
                        deadline_ns = p->run->frames[p->run->n_frames - 1].end_ns + silence_ns;
                        if (clock_now_ns(CLOCK_MONOTONIC) >= deadline_ns)
                                break;
                } else
                        deadline_ns = quiet_ns + silence_ns;
                r = wait_events(p, -1, deadline_ns);
        }
        p->run->wall_ns = p->run->n_frames > 0 ? p->run->frames[p->run->n_frames - 1].begin_ns - t0_ns : 0;
        p->run->cpu_ns = cpu_now_ns() - cpu0_ns;
        if (timer_fd >= 0)
                close(timer_fd);
        if (r < 0 && !p->run->stop_message[0])
                /* The probe's own failure, or the X connection's. */
                snprintf(p->run->stop_message, sizeof(p->run->stop_message), "%s after %zu of %u frames",
                         r == -ECONNRESET ? "the X connection broke (the X server went away?)" : p->message,
                         p->run->n_frames, o->n_frames);
        return r;
}

int probe_x11_run(const ProbeOptions *o, ProbeRun *ret, char *message, size_t size) {
        ProbeRun run = {};
        Probe p = { .o = o, .run = &run, .message = message, .size = size };
        int64_t deadline_ns;
        int r;

        p.display = o->display ? o->display : getenv("DISPLAY");
        p.c = xcb_connect(o->display, &p.screen_number);
        if (xcb_connection_has_error(p.c)) {
                xcb_disconnect(p.c);
                if (!p.display || !*p.display)
                        return fail(&p, -ENXIO, "no X display: DISPLAY is not set or empty (--display NAME gives one)");
                return fail(&p, -ENXIO, "cannot open the X display '%s'", p.display);
        }
        {
                xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(p.c));

                for (int k = 0; k < p.screen_number && it.rem > 1; k++)
                        xcb_screen_next(&it);
                p.screen = it.data;
        }
        run.frames = calloc(o->n_frames ? o->n_frames : 1, sizeof(*run.frames));
        r = run.frames ? intern_all(&p) : -ENOMEM;
        if (r >= 0)
                r = check_server(&p);
        if (r >= 0)
                r = check_wm(&p, p.display);
        if (r >= 0)
                r = create_window(&p);
        /* Mapped: the window manager has it. */
        deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + o->wait_ns;
        while (r >= 0 && !p.mapped && !p.wm_gone && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns)
                r = wait_events(&p, -1, deadline_ns);
        if (r >= 0 && p.wm_gone)
                r = fail(&p, -ENOENT, "the window manager %s on %s went away before the probe began",
                         run.wm_name, p.display);
        if (r >= 0 && !p.mapped)
                r = fail(&p, -ETIMEDOUT, "the window was not mapped");
        if (r >= 0)
                /* From here the frames drawn are kept, whatever ends them. */
                run.stopped = draw_frames(&p);
        xcb_disconnect(p.c);
        if (r < 0) {
                probe_run_done(&run);
                return r;
        }
        *ret = run;
        return 0;
}

void probe_run_done(ProbeRun *run) {
        free(run->frames);
        run->frames = NULL;
        run->n_frames = 0;
}
