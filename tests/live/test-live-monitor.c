/* SPDX-License-Identifier: MIT */

/* timeconv monitor marks a discontinuity. A real clock step needs the clock set (root, and
 * every other test on the machine disturbed), so a stand-in daemon owns org.timeconv.Clock1 on
 * a private bus: it answers ListDomains with an X server domain (verdict "identity") and
 * emits Discontinuity right after its first answer, before the monitor asks again; so the
 * second table must carry the mark (the first may too, if the signal came with its answer).
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

typedef struct Fake {
        sd_bus *bus;
        int calls;
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
        if (r >= 0 && ++f->calls == 1)
                r = sd_bus_emit_signal(f->bus, "/org/timeconv/Clock1", "org.timeconv.Clock1", "Discontinuity",
                                       "sxx", "x11", clock_now_ns(CLOCK_MONOTONIC), STEP_NS);
        return r < 0 ? r : 1;
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("ListDomains", "", "a(ssa{sv})", list_domains, 0),
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

        while (f->calls < 2 && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                int r = sd_bus_process(f->bus, NULL);

                if (r < 0)
                        break;
                if (r == 0)
                        sd_bus_wait(f->bus, 100000);
        }
        sd_bus_flush(f->bus);
        return NULL;
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
        sd_bus_flush_close_unref(fake.bus);
        return done_testing();
}
