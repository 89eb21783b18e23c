/* SPDX-License-Identifier: MIT */

/* domains/x11.c against a real Xvfb, without the daemon: listing, probes, the verdict, another
 * client destroying the probe window, a server that stops answering (also while we connect),
 * one that exits and one that comes back on the same display. */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/xcb.h>

#include "domain-extra.h"
#include "clock-client.h"
#include "domain.h"
#include "estimator.h"
#include "tap.h"
#include "time-util.h"
#include "x11-verdict.h"
#include "x11.h"
#include "xvfb.h"

#define BURST 8

static const char *extra(const DomainStatus *s, const char *key) {
        return domain_extra_text(s, key);
}

/* Threads of this process, from /proc/self/status; -1 if unreadable. */
static int thread_count(void) {
        char line[128];
        FILE *f = fopen("/proc/self/status", "re");
        int n = -1;

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Threads: %d", &n) == 1)
                        break;
        fclose(f);
        return n;
}

static bool is_identity(Domain *d) {
        DomainStatus st = {};

        return domain_x11_ops.status(d, &st) == 0 && strcmp(st.verdict, "identity") == 0 && st.same_as;
}

/* Bursts (at a daemon's pace, retrying on its own backoff) until one is full: 0, or -ETIMEDOUT. */
static int burst_until_ok(Domain *d, int64_t timeout_ns, int *ret_bursts) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + timeout_ns;
        Sample s[BURST];
        size_t n = 0;
        int r, bursts = 0;

        do {
                bursts++;
                r = domain_x11_ops.sample_burst(d, s, BURST, &n);
                if (r < 0)
                        (void) poll(NULL, 0, 10);
        } while (r < 0 && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns);
        *ret_bursts = bursts;
        /* A burst cut short by its deadline (a loaded machine) still proves the connection. */
        return r < 0 ? -ETIMEDOUT : n > 0 ? 0 : -ENODATA;
}

/* Bursts until the verdict is identity again: a burst cut short on a loaded machine leaves a
 * probe outstanding, and nothing converts through an identity while one is. */
static bool burst_until_identity(Domain *d, int64_t timeout_ns) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + timeout_ns;
        Sample s[BURST];
        size_t n;

        while (!is_identity(d) && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns)
                if (domain_x11_ops.sample_burst(d, s, BURST, &n) < 0)
                        (void) poll(NULL, 0, 10);
        return is_identity(d);
}

/* Waits for the domain's fd to become readable (or hang up) and dispatches once. */
static int dispatch_when_readable(Domain *d, int timeout_ms) {
        struct pollfd pfd = { .fd = domain_x11_ops.watch_fd(d), .events = POLLIN };
        int r;

        if (pfd.fd < 0)
                return pfd.fd;
        r = poll(&pfd, 1, timeout_ms);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT;
        return domain_x11_ops.dispatch(d);
}

static void test_enumerate(const char *display) {
        X11Config none = {}, config = { .display = display };
        DomainInfo infos[4];
        Domain *d = NULL;
        size_t n = 99;

        unsetenv("DISPLAY");
        ok(domain_x11_ops.enumerate(&none, infos, 4, &n) == 0 && n == 0, "no display: no domains");
        ok(domain_x11_ops.enumerate(NULL, infos, 4, &n) == 0 && n == 0, "no config, no $DISPLAY: no domains");
        ok(domain_x11_ops.enumerate(&config, infos, 4, &n) == 0 && n == 2, "a display: two domains");
        ok(strcmp(infos[0].name, "x11") == 0 && infos[0].unit.period_ns == 1e6 && infos[0].unit.wrap_bits == 32 &&
           infos[0].unit.truncates && infos[0].view_of[0] == '\0', "x11: ms, 32 bits, truncating");
        ok(strcmp(infos[1].name, "x11_us") == 0 && infos[1].unit.encoding == UNIT_ENCODING_X11_US &&
           strcmp(infos[1].view_of, "x11") == 0, "x11_us: the high-precision encoding, a view of x11");
        setenv("DISPLAY", display, 1);
        ok(domain_x11_ops.enumerate(NULL, infos, 4, &n) == 0 && n == 2, "$DISPLAY counts as a display");
        ok(domain_x11_ops.enumerate(&(X11Config) { .display = ":97" }, infos, 4, &n) == 0 && n == 2,
           "an unreachable display is still listed");
        ok(domain_x11_ops.open("x11_us", &config, &d) == -ENOENT, "a view is never opened");
}

/* Bursts until the verdict is in, feeding an estimator; returns the samples taken. */
static void test_probes(Domain *d) {
        Estimator e;
        DomainStatus st = {};
        Bracket b;
        double lo, hi;
        int64_t worst_burst_ns = 0;
        bool boxes_ok = true;
        int full = 0, short_bursts = 0;
        /* A loaded machine may cut a burst short at its budget (asserted below): what must hold
         * is that full bursts come, 12 of them, not that none is ever cut. */
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + INT64_C(30000000000);

        estimator_init(&e, NULL);
        while (full < 12 && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                Sample s[BURST];
                int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
                size_t n = 0;
                int r;

                r = domain_x11_ops.sample_burst(d, s, BURST, &n);
                if (clock_now_ns(CLOCK_MONOTONIC) - t0 > worst_burst_ns)
                        worst_burst_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
                if (r < 0 || n != BURST) {
                        short_bursts++;
                        if (r < 0)
                                (void) poll(NULL, 0, 10);
                        continue;
                }
                full++;
                for (size_t i = 0; i < n; i++) {
                        EstimatorVerdict v;

                        if (sample_validate(&s[i]) < 0 || s[i].x_hi_ns - s[i].x_lo_ns < 1000000 ||
                            s[i].x_lo_ns % 1000000 != 0 || sample_deviation_ns(&s[i]) > 50000000)
                                boxes_ok = false;
                        if (estimator_add(&e, &s[i], &v, NULL) < 0 || v != ESTIMATOR_CONSISTENT)
                                boxes_ok = false;
                }
        }
        ok(full == 12, "12 bursts of 8 samples (%d cut short by load)", short_bursts);
        ok(boxes_ok, "every box is whole ms, at least 1 ms tall, and consistent with the others");
        ok(worst_burst_ns < 150000000, "a burst stays within its budget (worst %lld us)",
           (long long) worst_burst_ns / 1000);

        /* Xvfb stamps with CLOCK_MONOTONIC (or its coarse twin): x is CLOCK_MONOTONIC itself. */
        bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &b);
        ok(estimator_range_at(&e, b.from_ns, &lo, &hi) == 0 && lo <= (double) b.to_hi_ns &&
           hi >= (double) b.to_lo_ns, "the model of x holds CLOCK_MONOTONIC");
        diag("model range %.0f ns wide, %.0f ns from CLOCK_MONOTONIC", hi - lo,
             (lo + hi) / 2 - (double) (b.to_lo_ns + b.to_hi_ns) / 2);

        ok(domain_x11_ops.status(d, &st) == 0, "status");
        ok(st.generation == 1, "generation 1 on the first server");
        ok(st.verdict && strcmp(st.verdict, "identity") == 0, "verdict identity (%s)", st.verdict);
        ok(st.same_as && (strcmp(st.same_as, "monotonic") == 0 || strcmp(st.same_as, "monotonic_coarse") == 0),
           "same_as a monotonic clock (%s)", st.same_as ?: "NULL");
        /* Xvfb's offset is 0; the window pins it to within the verdict's margin. */
        ok(st.same_as_uncertainty_ns > 0 && st.same_as_uncertainty_ns <= 2 * X11_MS_NS,
           "same_as_uncertainty_ns %lld: what the window still allows", (long long) st.same_as_uncertainty_ns);
        ok(extra(&st, "probes") && atoll(extra(&st, "probes")) >= 12 * BURST, "probes counted (%s)",
           extra(&st, "probes") ?: "none");
        ok(extra(&st, "rtt_min_ns") && atoll(extra(&st, "rtt_min_ns")) > 0, "rtt_min_ns %s", extra(&st, "rtt_min_ns"));
        ok(extra(&st, "probe_cpu_ns") && atoll(extra(&st, "probe_cpu_ns")) > 0, "probe_cpu_ns %s",
           extra(&st, "probe_cpu_ns"));
}

static void test_tracked(const char *display) {
        X11Config config = { .display = display, .force_tracked = true };
        Domain *d = NULL;
        DomainStatus st = {};
        Sample s[BURST];
        size_t n;

        ok(domain_x11_ops.open("x11", &config, &d) == 0, "open, forced tracked");
        for (int k = 0; k < 6; k++)
                domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(domain_x11_ops.status(d, &st) == 0 && strcmp(st.verdict, "tracked") == 0 && !st.same_as &&
           st.same_as_uncertainty_ns == 0, "force_tracked: tracked, same as nothing");
        domain_x11_ops.close(d);
}

/* The children of the root window, which on our private Xvfb are the probe windows. */
static int root_children(xcb_connection_t *c, xcb_window_t *ret, int n_max) {
        xcb_window_t root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
        xcb_query_tree_reply_t *tree = xcb_query_tree_reply(c, xcb_query_tree(c, root), NULL);
        int n;

        if (!tree)
                return -EIO;
        n = xcb_query_tree_children_length(tree);
        for (int i = 0; i < n && i < n_max; i++)
                ret[i] = xcb_query_tree_children(tree)[i];
        free(tree);
        return n;
}

/* Any client can destroy the window (or spoil its property): each probe then gets an error
 * instead of its event. The domain must answer with a new window, not wait for ever. */
static void test_window_attacked(Domain *d, const char *display) {
        xcb_connection_t *c = xcb_connect(display, NULL);
        xcb_intern_atom_reply_t *atom;
        xcb_window_t old[4], now[4];
        uint32_t bogus = 42;
        int n, r, bursts = 0;

        if (xcb_connection_has_error(c)) {
                ok(false, "a second client connects");
                xcb_disconnect(c);
                return;
        }
        /* Connected, with its window: a burst cut short under load may have dropped both. */
        (void) burst_until_ok(d, INT64_C(10000000000), &bursts);
        n = root_children(c, old, 4);
        ok(n == 1, "one probe window, a child of the root (%d)", n);
        for (int i = 0; i < n && i < 4; i++)
                xcb_destroy_window(c, old[i]);
        /* A round trip: the destruction is done before the domain probes again. */
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));

        r = burst_until_ok(d, INT64_C(5000000000), &bursts);
        ok(r == 0 && bursts <= 3, "window destroyed by another client: full bursts again (burst %d)", bursts);
        ok(root_children(c, now, 4) == 1 && now[0] != old[0], "a new probe window");
        ok(burst_until_identity(d, INT64_C(10000000000)), "still identity");

        /* The property set with another type: our zero-length STRING append is a BadMatch. */
        atom = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, strlen("_TIMECONV_CLOCK_PROBE"),
                                                        "_TIMECONV_CLOCK_PROBE"), NULL);
        if (atom)
                xcb_change_property(c, XCB_PROP_MODE_REPLACE, now[0], atom->atom, XCB_ATOM_INTEGER, 32, 1, &bogus);
        free(atom);
        free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
        r = burst_until_ok(d, INT64_C(5000000000), &bursts);
        ok(r == 0 && bursts <= 3, "property spoiled by another client: full bursts again (burst %d)", bursts);
        ok(root_children(c, old, 4) == 1 && old[0] != now[0], "another new probe window");
        xcb_disconnect(c);
}

/* A server that is alive but silent costs one budget, then nothing until it answers; meanwhile
 * nothing converts through an identity that is not being checked. */
static void test_paused(Domain *d, Xvfb *x) {
        DomainStatus st = {};
        Sample s[BURST];
        int64_t t0;
        size_t n;
        int r;

        ok(burst_until_identity(d, INT64_C(10000000000)), "identity before");
        ok(xvfb_pause(x, true) == 0, "Xvfb stopped");
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(r == -ETIMEDOUT && clock_now_ns(CLOCK_MONOTONIC) - t0 < 150000000,
           "a silent server: -ETIMEDOUT within the budget");
        r = domain_x11_ops.status(d, &st);
        ok(r == 0 && strcmp(st.verdict, "tracked") == 0 && !st.same_as && st.same_as_uncertainty_ns == 0,
           "a probe unanswered: tracked, same as nothing (%s, %s)", st.verdict, st.same_as ?: "NULL");
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(r == -ETIMEDOUT && clock_now_ns(CLOCK_MONOTONIC) - t0 < 5000000,
           "still silent: the next burst does not wait again");
        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        ok(dispatch_when_readable(d, 10000) == 0, "the late answer is dispatched");
        ok(domain_x11_ops.sample_burst(d, s, BURST, &n) == 0 && n == BURST, "probes again");
        ok(is_identity(d), "identity again");
}

/* Silent for several bursts: the domain gives the connection up and connects anew, in a thread
 * that waits for the server (only one, however long it stays silent). */
static void test_stuck_reconnects(Domain *d, Xvfb *x) {
        DomainStatus st = {};
        Sample s[BURST];
        uint64_t generation;
        int64_t t0, worst_ns = 0, until_ns;
        int base = thread_count(), most = 0, r = 0, bursts = 0;
        size_t n;

        ok(domain_x11_ops.status(d, &st) == 0, "status");
        generation = st.generation;
        ok(xvfb_pause(x, true) == 0, "Xvfb stopped");
        for (int i = 0; i < 5 && r != -ENOTCONN; i++)
                r = domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(r == -ENOTCONN && domain_x11_ops.watch_fd(d) == -ENOTCONN, "silent for bursts in a row: disconnected");

        /* Half a second of a daemon's retries: backoffs pass, attempts would start. */
        until_ns = clock_now_ns(CLOCK_MONOTONIC) + INT64_C(500000000);
        while (clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                int threads;

                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = domain_x11_ops.sample_burst(d, s, BURST, &n);
                if (clock_now_ns(CLOCK_MONOTONIC) - t0 > worst_ns)
                        worst_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
                threads = thread_count();
                if (threads > most)
                        most = threads;
                if (r != -ENOTCONN)
                        break;
                (void) poll(NULL, 0, 10);
        }
        ok(r == -ENOTCONN, "while the server is stopped: -ENOTCONN");
        /* A burst that waited on the stopped server would wait for as long as it stays stopped;
         * one descheduled on a loaded machine comes back late, but not a second late. */
        ok(worst_ns < 1000000000, "no burst waits on the stopped server (worst %lld us)", (long long) worst_ns / 1000);
        ok(most <= base + 1, "one connecting thread at most (%d threads, %d before)", most, base);

        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        ok(burst_until_ok(d, INT64_C(10000000000), &bursts) == 0, "the connection made meanwhile is taken up");
        ok(domain_x11_ops.status(d, &st) == 0 && st.generation == generation + 1, "a new generation");
}

/* open() and close() with a server that accepts but never answers its setup. */
static void test_connect_paused(const char *display, Xvfb *x) {
        X11Config config = { .display = display };
        Domain *d = NULL, *gone = NULL;
        DomainStatus st = {};
        Sample s[BURST];
        int64_t t0;
        size_t n;
        int base = thread_count(), r, bursts = 0;

        ok(xvfb_pause(x, true) == 0, "Xvfb stopped");
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = domain_x11_ops.open("x11", &config, &d);
        ok(r == 0 && clock_now_ns(CLOCK_MONOTONIC) - t0 < 150000000, "open returns within its budget (%lld us)",
           (long long) (clock_now_ns(CLOCK_MONOTONIC) - t0) / 1000);
        if (r < 0)
                return;
        ok(domain_x11_ops.status(d, &st) == 0 && strcmp(extra(&st, "connected"), "false") == 0 && !st.same_as,
           "not connected yet, same as nothing");
        ok(domain_x11_ops.watch_fd(d) == -ENOTCONN, "no fd yet");
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(r == -ENOTCONN && clock_now_ns(CLOCK_MONOTONIC) - t0 < 20000000,
           "bursts: -ENOTCONN at once while connecting");

        ok(domain_x11_ops.open("x11", &config, &gone) == 0, "a second domain, connecting too");
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        domain_x11_ops.close(gone);
        ok(clock_now_ns(CLOCK_MONOTONIC) - t0 < 20000000, "close does not wait for the stuck attempt");
        ok(thread_count() <= base + 2, "a thread per attempt (%d, %d before)", thread_count(), base);

        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        ok(burst_until_ok(d, INT64_C(10000000000), &bursts) == 0, "the domain connects once the server answers");
        ok(domain_x11_ops.watch_fd(d) >= 0, "an fd");
        domain_x11_ops.close(d);
}

static void test_restart(Domain *d, Xvfb *x) {
        DomainStatus st = {};
        Sample s[BURST];
        size_t n;
        uint64_t generation;
        int display = x->display, bursts = 0;

        ok(domain_x11_ops.status(d, &st) == 0, "status");
        generation = st.generation;
        ok(xvfb_stop(x) == 0, "Xvfb ended");
        ok(dispatch_when_readable(d, 10000) == -ENOTCONN, "dispatch: -ENOTCONN");
        ok(domain_x11_ops.watch_fd(d) == -ENOTCONN, "no fd while disconnected");
        ok(domain_x11_ops.sample_burst(d, s, BURST, &n) == -ENOTCONN, "sample_burst: -ENOTCONN");

        ok(xvfb_start(display, x) == 0, "a new Xvfb on the same display :%d", display);
        ok(burst_until_ok(d, INT64_C(15000000000), &bursts) == 0, "reconnected and probing");
        ok(domain_x11_ops.watch_fd(d) >= 0, "an fd again");
        ok(domain_x11_ops.status(d, &st) == 0 && st.generation == generation + 1, "a new generation: a new server");
        ok(strcmp(st.verdict, "tracked") == 0, "the verdict starts over with the new server");
}

int main(void) {
        X11Config config = {};
        Domain *d = NULL;
        Xvfb x = {};

        tap_require_program("Xvfb", "xvfb");
        if (xvfb_start(-1, &x) < 0) {
                ok(false, "Xvfb starts");
                return done_testing();
        }
        diag("Xvfb on %s", x.name);
        config.display = x.name;

        test_enumerate(x.name);
        ok(domain_x11_ops.open("x11", &config, &d) == 0, "open x11");
        ok(domain_x11_ops.watch_fd(d) >= 0, "an fd to watch");
        test_probes(d);
        test_tracked(x.name);
        test_window_attacked(d, x.name);
        test_paused(d, &x);
        test_stuck_reconnects(d, &x);
        test_connect_paused(x.name, &x);
        test_restart(d, &x);

        domain_x11_ops.close(d);
        xvfb_stop(&x);
        return done_testing();
}
