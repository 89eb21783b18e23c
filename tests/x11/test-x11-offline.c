/* SPDX-License-Identifier: MIT */

/* Offline as right as live, on a real export: timeconvd with Xvfb, its ExportSnapshots loaded
 * back (libtimeconv), and every ordered pair of the exported domains converted live (Convert)
 * and offline (DRIFT and NEAREST) at a value of now, at the values around each wrap (x11's
 * 2^32 - 1 and 0) and in x11_us's unreduced form (V + 2^32 x 1000, as mutter sends it). Offline
 * must decode as live does (the unreduced form is V, offline as live), and the two answers must
 * meet within their bounds; x11 >= 2^32 is refused live naming x11, offline as out of range.
 * The loop a user makes: a producer's trace stamped in x11_us and x11 (by timeconv's clock ids),
 * cat'ed with `timeconv export --format perfetto`, read back by timeconv trace: every packet where
 * live Convert puts it, within the bounds, and the X server's own stamps inside them.
 * usage: test-x11-offline TIMECONVD TIMECONV */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <xcb/xcb.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"
#include "timeconv.h"
#include "x11-bus.h"
#include "x11-tap.h"
#include "xvfb.h"

#define WAIT_MS 20000
#define TWO32 (INT64_C(1) << 32)

static bool is_calibrated(const X11BusDomain *d, void *userdata) {
        return d->available && d->last_calibrated_ns > 0;
}

static bool is_identity(const X11BusDomain *d, void *userdata) {
        return is_calibrated(d, userdata) && strcmp(d->verdict, "identity") == 0;
}

static size_t count_x11(const char *json) {
        size_t n = 0;

        for (const char *p = json; (p = strstr(p, "\"domain\":\"x11\"")); p++)
                n++;
        return n;
}

/* An export whose snapshots hold x11 at least twice more than they did when x11 settled (the
 * daemon takes one a tick): the last two, which test_between() reads, are then of a model that
 * has its identity, not of its first bursts (under a sanitizer those were 8x as loose as the
 * settled model that live answers with). Waits on the bus between tries, never sleeps. */
static int export_with_x11(sd_bus *bus, char **ret) {
        char *first = NULL;
        size_t settled;

        if (clock_export_snapshots(bus, &first) < 0)
                return -EIO;
        settled = count_x11(first);
        free(first);
        for (int i = 0; i < 200; i++) {
                char *json = NULL;
                size_t n = 0;

                if (clock_export_snapshots(bus, &json) < 0)
                        return -EIO;
                n = count_x11(json);
                if (n >= settled + 2) {
                        *ret = json;
                        return 0;
                }
                free(json);
                (void) sd_bus_wait(bus, 100000);
                (void) sd_bus_process(bus, NULL);
        }
        return -ETIMEDOUT;
}

typedef struct Tally {
        size_t compared, apart, live_failed, offline_failed, unreduced_differ;
} Tally;

static void compare(sd_bus *bus, const struct timeconv_snapshots *s, const char *from, const char *to, int64_t value,
                    const char *what, Tally *t) {
        int64_t live = 0, off = 0, off_unc = 0;
        uint64_t live_unc = 0;
        int r;

        r = clock_convert(bus, from, to, value, NULL, &live, &live_unc);
        if (r < 0) {
                if (t->live_failed++ < 3)
                        diag("live %s %s %" PRId64 " -> %s: %s", what, from, value, to, strerror(-r));
                return;
        }
        for (int mode = 0; mode < 2; mode++) {
                __int128 d;

                r = timeconv_snapshots_convert(s, mode, from, to, value, &off, &off_unc);
                if (r < 0) {
                        if (t->offline_failed++ < 3)
                                diag("offline %s %s %" PRId64 " -> %s: %s", what, from, value, to,
                                     timeconv_strerror(r));
                        continue;
                }
                t->compared++;
                /* in to's unit: compare the wire forms where they are close, through their ns where a
                 * unit is ms or us (a count of 1 is 1e6 or 1e3 ns) */
                d = (__int128) live - off;
                if (strcmp(to, "x11") == 0)
                        d *= 1000000;
                else if (strcmp(to, "x11_us") == 0)
                        d *= 1000;
                if ((d < 0 ? -d : d) > (__int128) live_unc + off_unc + 2000000) {
                        if (t->apart++ < 5)
                                diag("%s %s %" PRId64 " -> %s: live %" PRId64 " +-%" PRIu64 ", offline (%s) %" PRId64
                                     " +-%" PRId64, what, from, value, to, live, live_unc, mode ? "drift" : "nearest",
                                     off, off_unc);
                }
        }
}

static void test_pairs(sd_bus *bus, const struct timeconv_snapshots *s) {
        size_t n = timeconv_snapshots_count_domains(s);
        Tally t = {};

        for (size_t i = 0; i < n; i++) {
                const char *from = timeconv_snapshots_domain_name(s, i);
                int64_t now = 0, values[3];
                uint64_t unc;
                size_t n_values = 1;

                if (clock_now(bus, from, NULL, &now, &unc) < 0)
                        continue;
                values[0] = now;
                if (strcmp(from, "x11") == 0) {
                        values[n_values++] = TWO32 - 1;         /* the last ms before the wrap: the past one */
                        values[n_values++] = 0;                 /* and the first after it */
                } else if (strcmp(from, "x11_us") == 0)
                        values[n_values++] = now + TWO32 * 1000;    /* mutter's unreduced form */
                for (size_t j = 0; j < n; j++) {
                        const char *to = timeconv_snapshots_domain_name(s, j);

                        if (i == j)
                                continue;
                        for (size_t k = 0; k < n_values; k++)
                                compare(bus, s, from, to, values[k], k == 0 ? "now" : "wrap", &t);
                }
        }
        diag("%zu offline answers compared with live ones", t.compared);
        ok(t.compared > 0 && t.live_failed == 0 && t.offline_failed == 0,
           "every pair answers live and offline (%zu live, %zu offline failed)", t.live_failed, t.offline_failed);
        is_int(t.apart, 0, "live and offline answers meet within their bounds, around each wrap too");
}

/* The unreduced form is the same X time as its reduced one: offline answers it exactly as it
 * answers the reduced value, as live does. */
static void test_unreduced(sd_bus *bus, const struct timeconv_snapshots *s) {
        int64_t now = 0, a = 0, b = 0, ua = 0, ub = 0, la = 0, lb = 0;
        uint64_t unc, lua = 0, lub = 0;
        bool same = true;

        if (clock_now(bus, "x11_us", NULL, &now, &unc) < 0) {
                ok(false, "x11_us now");
                return;
        }
        for (int mode = 0; mode < 2; mode++)
                same &= timeconv_snapshots_convert(s, mode, "x11_us", "monotonic", now, &a, &ua) == 0 &&
                        timeconv_snapshots_convert(s, mode, "x11_us", "monotonic", now + TWO32 * 1000, &b, &ub) == 0 &&
                        a == b && ua == ub;
        ok(same, "offline: x11_us V + 2^32 x 1000 is V (%" PRId64 " +-%" PRId64 ")", a, ua);
        same = clock_convert(bus, "x11_us", "monotonic", now, NULL, &la, &lua) == 0 &&
               clock_convert(bus, "x11_us", "monotonic", now + TWO32 * 1000, NULL, &lb, &lub) == 0 && la == lb;
        ok(same, "live: the same (%" PRId64 " +-%" PRIu64 ")", la, lua);
        ok(llabs(a - la) <= ua + (int64_t) lua, "and the two meet");
}

/* Between two snapshots, the real export's DRIFT answer is within 2x of what live answers for
 * the same instant (+ 2 us: each side rounds to whole us), both ways between monotonic and each
 * X clock. x11 included: its exported readings say where in their ms the time was ("frac_ns"),
 * and a truncated ms is its middle +-0.5 ms, as live reads it (offline was 2-3 ms against live's
 * 0.2-0.5 ms while the truncation counted twice). */
static void test_between(sd_bus *bus, const struct timeconv_snapshots *s, const char *json) {
        static const char *const x[] = { "x11_us", "x11" };
        int64_t m[2] = { 0, 0 }, mid;
        const char *p = json;
        int found = 0;

        /* the last two snapshots' monotonic readings (snapshots of x11_us carry monotonic too) */
        while ((p = strstr(p, "{\"domain\":\"monotonic\",\"ts\":"))) {
                m[0] = m[1];
                m[1] = strtoll(p + strlen("{\"domain\":\"monotonic\",\"ts\":"), NULL, 10);
                found++;
                p++;
        }
        mid = m[0] + (m[1] - m[0]) / 2;
        ok(found >= 2 && m[1] > m[0], "two snapshots %" PRId64 " ns apart", m[1] - m[0]);
        ok(strstr(json, "\"domain\":\"x11\"") && strstr(json, "\"frac_ns\":"),
           "the export says where in its ms each x11 reading was (frac_ns)");
        for (size_t i = 0; i < 4; i++) {
                const char *from = i % 2 ? x[i / 2] : "monotonic", *to = i % 2 ? "monotonic" : x[i / 2];
                int64_t value = mid, off = 0, off_unc = 0, live = 0, unit = strcmp(to, "x11") == 0 ? 1000000 :
                                                                            strcmp(to, "x11_us") == 0 ? 1000 : 1;
                uint64_t live_unc = 0, unc;
                bool got;

                /* from an X clock: its value at mid, as live reads it */
                if (i % 2 && clock_convert(bus, "monotonic", from, mid, NULL, &value, &unc) < 0) {
                        ok(false, "monotonic -> %s at mid", from);
                        continue;
                }
                got = timeconv_snapshots_convert(s, TIMECONV_MODE_DRIFT, from, to, value, &off, &off_unc) == 0 &&
                      clock_convert(bus, from, to, value, NULL, &live, &live_unc) == 0;
                ok(got, "%s -> %s between them: offline %" PRId64 " +-%" PRId64 ", live %" PRId64 " +-%" PRIu64,
                   from, to, off, off_unc, live, live_unc);
                ok(off_unc <= 2 * (int64_t) live_unc + 2000, "offline within 2x of live there");
                /* to an X clock, answers x mean [x, x + 1) units: meet within a unit more */
                ok(llabs(off - live) * unit <= off_unc + (int64_t) live_unc + (unit > 1 ? unit : 0),
                   "and the two meet");
        }
}

/* ---- The loop a user makes: a producer's trace stamped in x11_us and x11 by
 * timeconv's clock ids, cat'ed with `timeconv export --format perfetto`, read back ---- */

#define N_STAMPS 6
#define MAX_PACKETS (3 * N_STAMPS)

/* One PropertyNotify time of our own, bracketed by CLOCK_MONOTONIC: the server stamped it at a
 * monotonic time in [lo_ns, hi_ns]. */
typedef struct Stamp {
        uint32_t ms;
        int64_t lo_ns, hi_ns;
} Stamp;

static int own_stamps(const char *display, Stamp *stamps, size_t n) {
        uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
        xcb_intern_atom_reply_t *atom;
        xcb_connection_t *c;
        xcb_window_t win;
        size_t got = 0;

        c = xcb_connect(display, NULL);
        if (xcb_connection_has_error(c)) {
                xcb_disconnect(c);
                return -ENOTCONN;
        }
        win = xcb_generate_id(c);
        xcb_create_window(c, 0, win, xcb_setup_roots_iterator(xcb_get_setup(c)).data->root, 0, 0, 1, 1, 0,
                          XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, XCB_CW_EVENT_MASK, &mask);
        atom = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, 9, "TEST_TIME"), NULL);
        for (; atom && got < n; got++) {
                xcb_generic_event_t *ev;
                bool seen = false;

                xcb_change_property(c, XCB_PROP_MODE_APPEND, win, atom->atom, XCB_ATOM_STRING, 8, 0, NULL);
                stamps[got].lo_ns = clock_now_ns(CLOCK_MONOTONIC);
                xcb_flush(c);
                while (!seen && (ev = xcb_wait_for_event(c))) {
                        stamps[got].hi_ns = clock_now_ns(CLOCK_MONOTONIC);
                        if ((ev->response_type & 0x7f) == XCB_PROPERTY_NOTIFY) {
                                stamps[got].ms = ((xcb_property_notify_event_t *) ev)->time;
                                seen = true;
                        }
                        free(ev);
                }
                if (!seen)
                        break;
        }
        free(atom);
        xcb_disconnect(c);
        return got == n ? 0 : -EIO;
}

/* The producer's side: a few TracePacket fields, written as Perfetto's wire format says. */
typedef struct Pb {
        uint8_t data[4096];
        size_t size;
} Pb;

static void pb_varint(Pb *b, uint64_t v) {
        for (; v >= 0x80 && b->size < sizeof(b->data); v >>= 7)
                b->data[b->size++] = (uint8_t) (v | 0x80);
        if (b->size < sizeof(b->data))
                b->data[b->size++] = (uint8_t) v;
}

/* Trace.packet { timestamp 8, timestamp_clock_id 58, trusted_packet_sequence_id 10 } */
static void pb_packet(Pb *b, uint64_t ts, uint32_t clock_id) {
        Pb p = {};

        pb_varint(&p, 8 << 3);
        pb_varint(&p, ts);
        pb_varint(&p, 58 << 3);
        pb_varint(&p, clock_id);
        pb_varint(&p, 10 << 3);
        pb_varint(&p, 1);
        pb_varint(b, 1 << 3 | 2);
        pb_varint(b, p.size);
        if (b->size + p.size <= sizeof(b->data)) {
                memcpy(b->data + b->size, p.data, p.size);
                b->size += p.size;
        }
}

/* What a packet is: the X time it carries (its own clock and value), the bracket it came from,
 * how far its instant can be from the X server's stamp (half a ms for a value in the middle of
 * the stamp's ms, a whole one for the ms itself), and where the trace put it. */
typedef struct LoopPacket {
        const char *clock;
        int64_t value;
        const Stamp *stamp;
        int64_t truth_slack_ns;
        bool placed[2];
        int64_t at[2], unc[2];          /* [0] on boottime (the trace clock), [1] on monotonic */
} LoopPacket;

typedef struct Loop {
        LoopPacket packets[MAX_PACKETS];
        size_t n, seen, named;
        int target;
} Loop;

static int loop_place(const struct timeconv_trace_packet *p, void *userdata) {
        Loop *l = userdata;

        /* our packets come first (the producer's file is first in the cat) */
        if (p->index >= l->n || p->error != 0)
                return 0;
        l->packets[p->index].placed[l->target] = true;
        l->packets[p->index].at[l->target] = p->trace_ts;
        l->packets[p->index].unc[l->target] = p->uncertainty_ns;
        if (l->target == 0) {
                l->seen++;
                l->named += strcmp(p->clock, l->packets[p->index].clock) == 0 &&
                            p->ts == l->packets[p->index].value;
        }
        return 0;
}

/* Waits until timeconvd has taken a snapshot after monotonic t_ns (one a tick), so that the
 * packets sit between two of the export's snapshots. */
static int snapshot_after(sd_bus *bus, int64_t t_ns) {
        for (int i = 0; i < 300; i++) {
                _cleanup_free_ char *json = NULL;
                const char *p;
                int64_t last = 0;

                if (clock_export_snapshots(bus, &json) < 0)
                        return -EIO;
                for (p = json; (p = strstr(p, "{\"domain\":\"monotonic\",\"ts\":")); p++)
                        last = strtoll(p + strlen("{\"domain\":\"monotonic\",\"ts\":"), NULL, 10);
                if (last > t_ns)
                        return 0;
                (void) sd_bus_wait(bus, 100000);
                (void) sd_bus_process(bus, NULL);
        }
        return -ETIMEDOUT;
}

static int run_shell(const Harness *h, const char *script, char **ret_out) {
        const char *argv[] = { "sh", "-c", script, NULL };
        char *err = NULL;
        int status = 0, r;

        r = harness_run(h, argv, NULL, WAIT_MS, ret_out, &err, &status);
        if (r >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                diag("%s: status 0x%x: %s", script, (unsigned) status, err ? err : "");
                r = -EIO;
        }
        free(err);
        return r;
}

static void test_loop(const Harness *h, sd_bus *bus, const char *display, const char *tc) {
        _cleanup_free_ char *script = NULL, *text = NULL, *path = NULL;
        struct timeconv_trace *trace = NULL;
        struct timeconv_error error = {};
        Stamp stamps[N_STAMPS];
        size_t apart = 0, outside = 0, live_failed = 0, cli_same = 0;
        Loop l = {};
        Pb b = {};
        FILE *f;

        ok(own_stamps(display, stamps, N_STAMPS) == 0, "%d X time stamps of our own, bracketed by monotonic",
           N_STAMPS);
        /* each stamp as the producer has it: x11_us in the middle of the stamp's ms, x11 the ms
         * itself; the first also in x11_us's unreduced form (mutter's) */
        for (size_t i = 0; i < N_STAMPS; i++) {
                int64_t us = (int64_t) stamps[i].ms * 1000 + 500;

                l.packets[l.n++] = (LoopPacket) { "x11_us", us, &stamps[i], 500000 };
                l.packets[l.n++] = (LoopPacket) { "x11", stamps[i].ms, &stamps[i], 1000000 };
                if (i == 0)
                        l.packets[l.n++] = (LoopPacket) { "x11_us", us + TWO32 * 1000, &stamps[i], 500000 };
        }
        for (size_t i = 0; i < l.n; i++)
                pb_packet(&b, (uint64_t) l.packets[i].value, timeconv_perfetto_clock_id(l.packets[i].clock));
        ok(snapshot_after(bus, stamps[N_STAMPS - 1].hi_ns) == 0, "timeconvd took a snapshot after them");

        ok(asprintf(&path, "%s/producer.pftrace", h->dir) > 0 && (f = fopen(path, "we")) &&
           fwrite(b.data, 1, b.size, f) == b.size && fclose(f) == 0, "the producer's trace: %zu packets, %zu bytes",
           l.n, b.size);
        ok(asprintf(&script, "cd '%s' && '%s' export --format perfetto >timeconv.pftrace && "
                    "cat producer.pftrace timeconv.pftrace >both.pftrace", h->dir, tc) > 0 &&
           run_shell(h, script, NULL) == 0, "timeconv export --format perfetto, cat'ed after it");
        free(path);
        path = NULL;
        ok(asprintf(&path, "%s/both.pftrace", h->dir) > 0 && timeconv_trace_load(path, &trace, &error) == 0,
           "the concatenation loads as a trace %s", error.message);
        if (!trace)
                return;

        ok(timeconv_trace_place(trace, TIMECONV_MODE_NEAREST, NULL, loop_place, &l, &error) == 0,
           "placed on the trace clock (%s)", timeconv_trace_clock(trace));
        l.target = 1;
        ok(timeconv_trace_place(trace, TIMECONV_MODE_NEAREST, "monotonic", loop_place, &l, &error) == 0,
           "placed on monotonic");
        is_int(l.seen, l.n, "every producer packet placed");
        is_int(l.named, l.n, "each under its clock's name (x11_us, x11) and its value as stamped");

        for (size_t i = 0; i < l.n; i++) {
                LoopPacket *p = &l.packets[i];
                static const char *const to[2] = { "boottime", "monotonic" };

                for (int k = 0; k < 2; k++) {
                        int64_t live = 0;
                        uint64_t live_unc = 0;

                        if (!p->placed[k])
                                continue;
                        if (clock_convert(bus, p->clock, to[k], p->value, NULL, &live, &live_unc) < 0) {
                                live_failed++;
                                continue;
                        }
                        if ((uint64_t) llabs(p->at[k] - live) > (uint64_t) p->unc[k] + live_unc) {
                                if (apart++ < 5)
                                        diag("%s %" PRId64 " -> %s: trace %" PRId64 " +-%" PRId64 ", live %" PRId64
                                             " +-%" PRIu64, p->clock, p->value, to[k], p->at[k], p->unc[k], live,
                                             live_unc);
                        }
                        if (i < 3 && k == 0)
                                diag("%s %" PRId64 " -> %s: trace %" PRId64 " +-%" PRId64 ", live %" PRId64
                                     " +-%" PRIu64, p->clock, p->value, to[k], p->at[k], p->unc[k], live, live_unc);
                }
                /* the truth: the server's stamp is in [lo, hi] on monotonic; the packet's instant
                 * is within its slack of the stamp */
                if (p->placed[1] && !bracket_holds(p->at[1], (uint64_t) (p->unc[1] + p->truth_slack_ns),
                                                   p->stamp->lo_ns, p->stamp->hi_ns)) {
                        if (outside++ < 5)
                                diag("%s %" PRId64 " -> monotonic %" PRId64 " +-%" PRId64 " misses [%" PRId64
                                     ", %" PRId64 "]", p->clock, p->value, p->at[1], p->unc[1], p->stamp->lo_ns,
                                     p->stamp->hi_ns);
                }
        }
        is_int(live_failed, 0, "live Convert answers for every packet");
        is_int(apart, 0, "trace and live answers meet within their bounds (|offline - live| <= both bounds)");
        is_int(outside, 0, "the truth (the X server's own stamps, bracketed) is within every trace answer's bound");

        /* the same through the CLI: timeconv trace names the clocks and places them the same */
        free(script);
        script = NULL;
        ok(asprintf(&script, "'%s' trace '%s'", tc, path) > 0 && run_shell(h, script, &text) == 0,
           "timeconv trace on the concatenation: exit 0");
        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                unsigned long long index;
                char clock[32];
                long long ts, at;

                if (sscanf(line, "#%llu seq 1 %31s %lld -> %lld ", &index, clock, &ts, &at) == 4 && index < l.n &&
                    strcmp(clock, l.packets[index].clock) == 0 && ts == l.packets[index].value &&
                    at == l.packets[index].at[0])
                        cli_same++;
        }
        is_int(cli_same, l.n, "its text names x11_us and x11 and gives the library's answers");
        /* all of it when it differs; else its head and summary, for the record */
        for (const char *line = text; line && *line;) {
                size_t len = strcspn(line, "\n");

                if (cli_same != l.n || line[0] != '#' || strtoull(line + 1, NULL, 10) < 3)
                        diag("%.*s", (int) len, line);
                line += len + (line[len] == '\n');
        }
        timeconv_trace_free(trace);
}

static void test_out_of_range(sd_bus *bus, const struct timeconv_snapshots *s) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t v;
        uint64_t u;
        int r;

        r = clock_convert(bus, "x11", "monotonic", TWO32, &e, &v, &u);
        ok(r < 0 && sd_bus_error_has_name(&e, BUS_ERROR_OUT_OF_RANGE) && e.message && strstr(e.message, "'x11'") &&
           !strstr(e.message, "'monotonic'"), "live x11 2^32: OutOfRange naming x11 (%s)", e.message ? e.message : "");
        sd_bus_error_free(&e);
        is_int(timeconv_snapshots_convert(s, TIMECONV_MODE_DRIFT, "x11", "monotonic", TWO32, &v, &(int64_t) { 0 }),
               -ERANGE, "offline x11 2^32: out of range");
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error error = {};
        char *json = NULL;
        Xvfb x = {};

        tap_args(argc, argv, 2, "TIMECONVD TIMECONV");
        is_int(x11_tap_start(argv[1], &x, &h, &bus), 0, "connected");
        if (tap_failed_)
                return done_testing();
        ok(x11_bus_wait_for(bus, "x11", is_identity, NULL, WAIT_MS, NULL) == 0, "x11 calibrated, identity");
        ok(export_with_x11(bus, &json) == 0, "an export with two snapshots of x11 since");
        ok(json && timeconv_snapshots_load_buffer(json, strlen(json), &s, &error) == 0, "it loads %s", error.message);
        if (s) {
                test_pairs(bus, s);
                test_unreduced(bus, s);
                test_between(bus, s, json);
                test_out_of_range(bus, s);
        }
        test_loop(h, bus, x.name, argv[2]);
        timeconv_snapshots_free(s);
        free(json);
        xvfb_stop(&x);
        return done_testing();
}
