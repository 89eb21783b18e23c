/* SPDX-License-Identifier: MIT */

/* timeconv monitor marks a discontinuity. A real clock step needs the clock set (root, and
 * every other test on the machine disturbed), so a stand-in daemon owns org.timeconv.Clock1 on
 * a private bus: it answers ListDomains with an X server domain (verdict "identity") and
 * emits Discontinuity right after its first answer, before the monitor asks again; so the
 * second table must carry the mark (the first may too, if the signal came with its answer).
 * Then a stand-in that leaves the bus after its first answer and comes back: monitor --follow
 * waits for it (NameOwnerChanged) and goes on, where it used to end with status 69.
 * usage: test-live-monitor TIMECONVD TIMECONV (the daemon is not used) */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "tap.h"

#define STEP_NS INT64_C(5000000)
#define SERVE_MS 60000

/* How long the second stand-in stays away: long enough for a monitor that does not follow to
 * notice, the length of no wait in the test. */
#define AWAY_MS 400

typedef struct Fake {
        sd_bus *bus;
        int calls;
        bool leaves;            /* gives up the name at its first answer, takes it again later */
        int64_t left_ns;        /* when it left; 0 while it has the name */
        bool stop;              /* set by the test: serve no more */
} Fake;

static int append_domain(sd_bus_message *reply, const char *name, const char *unit, const char *verdict) {
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
        int r;

        r = sd_bus_message_open_container(reply, 'r', "ssa{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "ssa{sv}", name, unit, 7,
                                          "available", "b", 1, "reference", "s", "monotonic_raw",
                                          "rate_ppb", "x", INT64_C(0), "uncertainty_ns", "t", UINT64_C(10),
                                          "last_calibrated_ns", "x", now_ns, "offset_ns", "x", INT64_C(0),
                                          "verdict", "s", verdict);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int list_domains(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        Fake *f = userdata;
        int r;

        /* Gone before the monitor can ask again: the answer still reaches it (sent to its
         * unique name). */
        if (f->leaves && f->calls == 0) {
                r = sd_bus_release_name(f->bus, "org.timeconv.Clock1");
                if (r < 0)
                        return r;
                f->left_ns = clock_now_ns(CLOCK_MONOTONIC);
        }
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssa{sv})");
        if (r >= 0)
                r = append_domain(reply, "monotonic", "ns", "");
        if (r >= 0)
                r = append_domain(reply, "x11", "ms", "identity");
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        if (r >= 0 && ++f->calls == 1 && !f->leaves)
                r = sd_bus_emit_signal(f->bus, "/org/timeconv/Clock1", "org.timeconv.Clock1", "Discontinuity",
                                       "sxx", "x11", clock_now_ns(CLOCK_MONOTONIC), STEP_NS);
        return r < 0 ? r : 1;
}

/* x11 is there but cannot be read, in the daemon's words. */
static int now_unavailable(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name;
        int r;

        (void) userdata;
        r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        return sd_bus_error_setf(error, "org.timeconv.Clock1.Error.Unavailable",
                                 "domain '%s' is unavailable: cannot connect to the X server on :3", name);
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("ListDomains", "", "a(ssa{sv})", list_domains, 0),
        SD_BUS_METHOD("Now", "s", "xt", now_unavailable, 0),
        SD_BUS_SIGNAL("Discontinuity", "sxx", 0),
        SD_BUS_VTABLE_END
};

static void diag_lines(const char *what, const char *text) {
        for (const char *p = text; *p;) {
                size_t n = strcspn(p, "\n");

                diag("%s: %.*s", what, (int) n, p);
                p += n + (p[n] == '\n');
        }
}

/* Serves until the monitor has asked twice (or a minute passed: the monitor failed). */
static void *serve(void *userdata) {
        Fake *f = userdata;
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) SERVE_MS * 1000000;

        while (f->calls < 2 && !__atomic_load_n(&f->stop, __ATOMIC_RELAXED) &&
               clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                int r = sd_bus_process(f->bus, NULL);

                if (r < 0)
                        break;
                if (f->left_ns > 0 && clock_now_ns(CLOCK_MONOTONIC) - f->left_ns > (int64_t) AWAY_MS * 1000000) {
                        f->left_ns = 0;
                        if (sd_bus_request_name(f->bus, "org.timeconv.Clock1", 0) < 0)
                                break;
                }
                if (r == 0)
                        sd_bus_wait(f->bus, 10000);
        }
        sd_bus_flush(f->bus);
        return NULL;
}

/* monitor --json --follow --count 2 against a stand-in that leaves after its first answer. */
static void check_follow(const char *tc_path) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL;
        Fake fake = { .leaves = true };
        const char *stopped, *started, *last;
        pthread_t thread;
        int r, status = 0;

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_stand_in(h, fake_vtable, &fake, &fake.bus);
        is_int(r < 0 ? r : 0, 0, "a second stand-in, which leaves the bus after its first answer and comes back");
        if (r < 0)
                return;
        r = -pthread_create(&thread, NULL, serve, &fake);
        if (r >= 0)
                r = harness_run(h, (const char *const[]) { tc_path, "monitor", "--json", "--follow", "--count", "2",
                                                           "--interval", "0.01", NULL },
                                NULL, SERVE_MS, &out, &err, &status);
        if (r >= 0)
                pthread_join(thread, NULL);
        ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "monitor --follow outlives the daemon's absence and exits 0 after its two tables (status %d)",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        stopped = out ? strstr(out, "{\"event\":\"daemon\"") : NULL;
        ok(stopped && strstr(stopped, "\"running\":false"), "it says the daemon stopped");
        started = stopped ? strstr(stopped, "\"running\":true") : NULL;
        ok(started, "then that it started again");
        last = started ? strstr(started, "{\"event\":\"domains\"") : NULL;
        ok(last && strstr(last, "\"domains\":[{\"name\":\"monotonic\""), "and shows the domains after it came back");
        is_int(fake.calls, 2, "the stand-in answered twice, before and after");
        if (out && !last)
                diag_lines("stdout", out);
        if (err && *err)
                diag_lines("stderr", err);
        sd_bus_flush_close_unref(fake.bus);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL;
        Fake fake = {};
        pthread_t thread;
        const char *second, *mark;
        int r, status = 0;

        tap_args(argc, argv, 2, "TIMECONVD TIMECONV");

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_stand_in(h, fake_vtable, &fake, &fake.bus);
        r = r < 0 ? r : 0;
        is_int(r, 0, "a stand-in daemon owns org.timeconv.Clock1 on a private bus");
        if (r < 0)
                return done_testing();

        r = -pthread_create(&thread, NULL, serve, &fake);
        if (r >= 0)
                r = harness_run(h, (const char *const[]) { argv[2], "monitor", "--count", "2", "--interval", "0.01",
                                                           NULL },
                                NULL, SERVE_MS, &out, &err, &status);
        if (r >= 0)
                pthread_join(thread, NULL);
        is_int(r, 0, "timeconv monitor --count 2 runs");
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "and exits 0");
        if (err && *err)
                diag_lines("stderr", err);
        is_int(fake.calls, 2, "it asked for the domains twice");

        ok(out && strstr(out, "identity"), "the first table shows the X verdict");
        ok(out && strstr(out, "! discontinuity x11 kind=step step_ns=5000000 monotonic_ns="),
           "off a terminal, the discontinuity is a line of its own");
        second = out ? strstr(out, "DOMAIN ") : NULL;
        second = second ? strstr(second + 1, "DOMAIN ") : NULL;
        ok(second && strstr(second, "\nx11 ") && strstr(strstr(second, "\nx11 "), "! discontinuity +5000000 ns"),
           "the second table marks x11's row with the step");
        mark = out ? strstr(out, "! discontinuity x11 ") : NULL;
        ok(second && mark && mark < second, "the event line comes before the second table");
        if (out && (!second || !strstr(second, "! discontinuity +")))
                diag_lines("stdout", out);
        /* The reason names the domain; the CLI does not say it twice. */
        sd_bus_flush_close_unref(fake.bus);
        fake = (Fake) {};
        r = harness_stand_in(h, fake_vtable, &fake, &fake.bus);
        r = r < 0 ? r : -pthread_create(&thread, NULL, serve, &fake);
        free(out);
        free(err);
        out = err = NULL;
        if (r >= 0)
                r = harness_run(h, (const char *const[]) { argv[2], "now", "x11", NULL }, NULL, SERVE_MS, &out, &err,
                                &status);
        __atomic_store_n(&fake.stop, true, __ATOMIC_RELAXED);
        if (r >= 0)
                pthread_join(thread, NULL);
        ok(r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 69, "now x11, unavailable: exit 69");
        ok(err && strcmp(err, "timeconv: now: domain 'x11' is unavailable: cannot connect to the X server "
                              "on :3\n") == 0,
           "the daemon's reason, the domain named once (%s)", err ? err : "");
        sd_bus_flush_close_unref(fake.bus);
        check_follow(argv[2]);
        return done_testing();
}
