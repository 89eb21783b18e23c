/* SPDX-License-Identifier: MIT */

/* domains/present.c on an X server that accepts connections but never answers (a SIGSTOPped
 * Xvfb), without the daemon: enumerate waits its budget and lists msc all the same (the server
 * may answer later) and gives its attempt up, whose thread ends (its socket shut down,
 * xcb-connect.h); open returns at once with the domain unavailable, bursts say -ENOTCONN at once
 * and never start a second connection thread; a domain closed while it connects gives its attempt
 * up the same way; once the server answers, the domain comes up by itself and every thread is
 * gone. */

#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "present-drive.h"
#include "present.h"
#include "tap.h"
#include "time-util.h"
#include "xcb-connect.h"
#include "xvfb.h"

#define BURST 8
/* CONNECT_WAIT_NS in present.c is 100 ms; the rest is room for a loaded machine. */
#define ENUMERATE_MAX_NS INT64_C(600000000)
/* A burst that only looks at the attempt under way: no wait at all, but a loaded machine. */
#define LOOK_MAX_NS INT64_C(50000000)
#define COME_UP_NS INT64_C(8000000000)

/* The connection attempts' threads of this process, by their name (xcb-connect.h). */
static int count_threads(void) {
        DIR *dir = opendir("/proc/self/task");
        struct dirent *de;
        int n = 0;

        if (!dir)
                return -errno;
        while ((de = readdir(dir))) {
                char path[sizeof(de->d_name) + 32], comm[32] = "";
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;       /* ended meanwhile */
                if (fgets(comm, sizeof(comm), f) && strcmp(comm, X11_CONNECT_THREAD_NAME "\n") == 0)
                        n++;
                fclose(f);
        }
        closedir(dir);
        return n;
}

/* Until this process has want connection threads (an abandoned one ends as soon as it is
 * scheduled: no fd says so), running d's events meanwhile if there is d: the last count. */
static int wait_threads(Domain *d, int want) {
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + COME_UP_NS;
        int n;

        while ((n = count_threads()) != want && clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                if (d)
                        present_run_until(d, clock_now_ns(CLOCK_MONOTONIC) + 20000000);
                else
                        (void) poll(NULL, 0, 20);
        }
        return n;
}

static void test_stopped(Xvfb *x) {
        const X11Config config = { .display = x->name };
        int64_t t0, elapsed_ns, look_max_ns = 0;
        DomainInfo infos[4];
        Domain *d = NULL, *closed = NULL;
        Sample s[BURST];
        DomainStatus st;
        unsigned n_notconn = 0;
        size_t n = 1;
        int r = 0;

        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = domain_present_ops.enumerate(&config, infos, 4, &n);
        elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
        ok(r == 0 && n == 1 && strcmp(infos[0].name, "msc") == 0, "enumerate: lists msc all the same");
        ok(elapsed_ns < ENUMERATE_MAX_NS, "enumerate gives up in time (%lld ms)", (long long) elapsed_ns / 1000000);
        is_int(wait_threads(NULL, 0), 0, "its attempt given up, the attempt's thread ends");

        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = domain_present_ops.open("msc", &config, &d);
        elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
        ok(r == 0 && d, "open: the domain starts unavailable (%lld ms)", (long long) elapsed_ns / 1000000);
        if (!d)
                return;
        ok(elapsed_ns < ENUMERATE_MAX_NS, "open returns in time");

        /* Many bursts, as the daemon's scheduler would try: each only looks at the one attempt. */
        for (int i = 0; i < 20; i++) {
                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = domain_present_ops.sample_burst(d, s, BURST, &n);
                elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
                n_notconn += r == -ENOTCONN;
                if (elapsed_ns > look_max_ns)
                        look_max_ns = elapsed_ns;
        }
        is_int(n_notconn, 20, "20 bursts: -ENOTCONN");
        ok(look_max_ns < LOOK_MAX_NS, "at once (the slowest %lld us)", (long long) look_max_ns / 1000);
        /* Its attempt, and at most one given up at its timeout (X11_CONNECT_TIMEOUT_NS) and
         * ending, on a machine slow enough to take that long for 20 bursts. */
        ok(count_threads() >= 1 && count_threads() <= 2, "one attempt in flight for the domain, not one per burst");
        ok(domain_present_ops.status(d, &st) == 0 && strcmp(present_extra(&st, "connected"), "false") == 0 &&
           st.generation == 0, "status: not connected, generation 0");

        ok(domain_present_ops.open("msc", &config, &closed) == 0 && closed, "a second domain opens");
        closed = domain_present_ops.close(closed);
        is_int(wait_threads(d, 1), 1, "closed while connecting: its attempt is given up, its thread ends");

        ok(xvfb_pause(x, false) == 0, "Xvfb continued");
        r = -ENOTCONN;
        for (int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + COME_UP_NS;
             r < 0 && clock_now_ns(CLOCK_MONOTONIC) < until_ns;) {
                r = domain_present_ops.sample_burst(d, s, BURST, &n);
                if (r < 0)
                        present_run_until(d, clock_now_ns(CLOCK_MONOTONIC) + 20000000);
        }
        ok(r == 0 && n > 0, "the domain comes up by itself: samples");
        ok(domain_present_ops.status(d, &st) == 0 && strcmp(present_extra(&st, "connected"), "true") == 0 &&
           st.generation == 1, "status: connected, generation 1");

        /* A detached thread's end has no fd to wait on: look after each of the domain's events. */
        for (int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + COME_UP_NS;
             count_threads() > 0 && clock_now_ns(CLOCK_MONOTONIC) < until_ns;)
                present_run_until(d, clock_now_ns(CLOCK_MONOTONIC) + 20000000);
        is_int(count_threads(), 0, "the given-up attempts' threads ended on their own");
        domain_present_ops.close(d);
}

int main(void) {
        Xvfb x = {};

        tap_require_program("Xvfb", "xvfb");

        unsetenv("DISPLAY");
        if (xvfb_start(-1, &x) < 0) {
                ok(false, "Xvfb starts");
                return done_testing();
        }
        ok(xvfb_pause(&x, true) == 0, "Xvfb %s stopped: it accepts, never answers", x.name);
        test_stopped(&x);
        /* SIGTERM is not delivered to a stopped process: continue it first. */
        (void) xvfb_pause(&x, false);
        xvfb_stop(&x);
        return done_testing();
}
