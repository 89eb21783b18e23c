/* SPDX-License-Identifier: MIT */

/* domains/x11.c against a real Xvfb, without the daemon: listing, probes, the verdict, a server
 * that stops answering, one that exits and one that comes back on the same display. */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock-client.h"
#include "domain.h"
#include "estimator.h"
#include "tap.h"
#include "x11.h"
#include "xvfb.h"

#define BURST 8

static int64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *extra(const DomainStatus *s, const char *key) {
        for (size_t i = 0; i < s->n_extras; i++)
                if (strcmp(s->extras[i].key, key) == 0)
                        return s->extras[i].value;
        return NULL;
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
        DomainStatus st;
        Bracket b;
        double lo, hi;
        int64_t worst_burst_ns = 0;
        bool boxes_ok = true, all_full = true;

        estimator_init(&e, NULL);
        for (int k = 0; k < 12; k++) {
                Sample s[BURST];
                int64_t t0 = now_ns();
                size_t n = 0;
                int r;

                r = domain_x11_ops.sample_burst(d, s, BURST, &n);
                if (now_ns() - t0 > worst_burst_ns)
                        worst_burst_ns = now_ns() - t0;
                if (r < 0 || n != BURST) {
                        all_full = false;
                        continue;
                }
                for (size_t i = 0; i < n; i++) {
                        EstimatorVerdict v;

                        if (sample_validate(&s[i]) < 0 || s[i].x_hi_ns - s[i].x_lo_ns < 1000000 ||
                            s[i].x_lo_ns % 1000000 != 0 || sample_deviation_ns(&s[i]) > 50000000)
                                boxes_ok = false;
                        if (estimator_add(&e, &s[i], &v, NULL) < 0 || v != ESTIMATOR_CONSISTENT)
                                boxes_ok = false;
                }
        }
        ok(all_full, "every burst gives 8 samples");
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
        ok(extra(&st, "probes") && atoll(extra(&st, "probes")) == 12 * BURST, "probes counted");
        ok(extra(&st, "rtt_min_ns") && atoll(extra(&st, "rtt_min_ns")) > 0, "rtt_min_ns %s", extra(&st, "rtt_min_ns"));
        ok(extra(&st, "probe_cpu_ns") && atoll(extra(&st, "probe_cpu_ns")) > 0, "probe_cpu_ns %s",
           extra(&st, "probe_cpu_ns"));
}

static void test_tracked(const char *display) {
        X11Config config = { .display = display, .force_tracked = true };
        Domain *d = NULL;
        DomainStatus st;
        Sample s[BURST];
        size_t n;

        ok(domain_x11_ops.open("x11", &config, &d) == 0, "open, forced tracked");
        for (int k = 0; k < 6; k++)
                domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(domain_x11_ops.status(d, &st) == 0 && strcmp(st.verdict, "tracked") == 0 && !st.same_as,
           "force_tracked: tracked, same as nothing");
        domain_x11_ops.close(d);
}

/* A server that is alive but silent costs one budget, then nothing until it answers. */
static void test_paused(Domain *d, Xvfb *x) {
        Sample s[BURST];
        int64_t t0;
        size_t n;
        int r;

        ok(xvfb_pause(x, true) == 0, "Xvfb stopped");
        t0 = now_ns();
        r = domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(r == -ETIMEDOUT && now_ns() - t0 < 150000000, "a silent server: -ETIMEDOUT within the budget");
        t0 = now_ns();
        r = domain_x11_ops.sample_burst(d, s, BURST, &n);
        ok(r == -ETIMEDOUT && now_ns() - t0 < 5000000, "still silent: the next burst does not wait again");
        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        ok(dispatch_when_readable(d, 10000) == 0, "the late answer is dispatched");
        ok(domain_x11_ops.sample_burst(d, s, BURST, &n) == 0 && n == BURST, "probes again");
}

static void test_restart(Domain *d, Xvfb *x) {
        int64_t deadline_ns;
        DomainStatus st;
        Sample s[BURST];
        size_t n;
        int display = x->display, r;

        ok(xvfb_stop(x) == 0, "Xvfb ended");
        ok(dispatch_when_readable(d, 10000) == -ENOTCONN, "dispatch: -ENOTCONN");
        ok(domain_x11_ops.watch_fd(d) == -ENOTCONN, "no fd while disconnected");
        ok(domain_x11_ops.sample_burst(d, s, BURST, &n) == -ENOTCONN, "sample_burst: -ENOTCONN");

        ok(xvfb_start(display, x) == 0, "a new Xvfb on the same display :%d", display);
        /* The domain retries on its own backoff (100 ms first): keep asking at a daemon's pace. */
        deadline_ns = now_ns() + INT64_C(15000000000);
        do {
                r = domain_x11_ops.sample_burst(d, s, BURST, &n);
                if (r == -ENOTCONN)
                        (void) poll(NULL, 0, 10);
        } while (r == -ENOTCONN && now_ns() < deadline_ns);
        ok(r == 0 && n == BURST, "reconnected and probing");
        ok(domain_x11_ops.watch_fd(d) >= 0, "an fd again");
        ok(domain_x11_ops.status(d, &st) == 0 && st.generation == 2, "generation 2: a new server");
        ok(strcmp(st.verdict, "tracked") == 0, "the verdict starts over with the new server");
}

int main(void) {
        X11Config config = {};
        Domain *d = NULL;
        Xvfb x = {};

        if (!xvfb_available())
                skip_all("no Xvfb");
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
        test_paused(d, &x);
        test_restart(d, &x);

        domain_x11_ops.close(d);
        xvfb_stop(&x);
        return done_testing();
}
