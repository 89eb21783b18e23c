/* SPDX-License-Identifier: MIT */

/* Floods of calls with answers of a few KiB, against the real timeconvd on a
 * private bus with a desktop session bus's limits: 20,000 ListDomains, then 20,000 Introspect
 * (answered by sd-bus itself, not by a handler of ours), sent without reading a reply. Before,
 * the daemon queued every answer on its bus connection, ahead of everyone's: +156 MB, and the
 * others' Convert waited seconds. Now:
 *   - the flooder gets QuotaExceeded for most of its calls, at once, and every call an answer;
 *   - another client's Convert is answered all the while, and the daemon stays;
 *   - the daemon's memory grows by far less than the answers would take, and once the flooder
 *     has left it is back near where it started.
 * Every property is one that load cannot flip: counts, error names, memory ceilings far from
 * both what the budget allows and what an unlimited daemon takes. How long the others wait is
 * bench-hostile's to measure (attacks 8-10). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-clients.h"
#include "bus-errors.h"
#include "harness-proc.h"
#include "harness.h"
#include "tap.h"

#define FLOOD_CALLS 20000
#define VICTIM_EVERY (FLOOD_CALLS / 20)
#define CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)
/* What the answers to the accepted calls may hold in the daemon: the budget's burst and its
 * refill over the flood, and the calls in flight, are a few MiB; all 20,000 answers, over 100. */
#define GROWTH_MAX_KIB (24 * 1024)
/* Once the flooder has gone: what the daemon keeps of it. */
#define LEFT_MAX_KIB (4 * 1024)

typedef struct Tally {
        unsigned replies, ok, quota, other;
} Tally;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Tally *t = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        t->replies++;
        if (!e)
                t->ok++;
        else if (sd_bus_error_has_name(e, BUS_ERROR_QUOTA_EXCEEDED))
                t->quota++;
        else if (t->other++ < 3)
                diag("unexpected error: %s: %s", e->name, e->message);
        return 0;
}

static int victim_convert(sd_bus *victim) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int64_t value;
        uint64_t unc;
        int r;

        r = sd_bus_call_method(victim, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert", &e, &reply,
                               "ssx", "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC));
        if (r < 0)
                diag("the victim's Convert: %s", e.message ? e.message : strerror(-r));
        return r < 0 ? r : sd_bus_message_read(reply, "xt", &value, &unc);
}

/* What the daemon holds (anonymous and shmem), once it stops going down: the bus daemon may
 * still be taking answers when the flooder's last one has come. */
static int64_t held_kib(pid_t pid, sd_bus *victim) {
        int64_t kib = INT64_MAX;

        for (int i = 0; i < 20; i++) {
                ProcUsage u;
                int64_t now_kib;

                (void) victim_convert(victim);
                if (proc_usage(pid, &u) < 0)
                        return 0;
                now_kib = proc_usage_held_kib(&u);
                if (now_kib >= kib)
                        break;
                kib = now_kib;
        }
        return kib;
}

static void flood(Harness *h, sd_bus *victim, pid_t pid, const char *interface, const char *member) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *hostile = NULL;
        int64_t held0_kib, peak_kib = 0;
        unsigned victim_ok = 0, victim_calls = 0;
        Tally t = {};
        int r;

        held0_kib = held_kib(pid, victim);
        r = harness_connect(h, &hostile);
        ok(r >= 0, "%s: a hostile client connects", member);
        if (r < 0)
                return;
        for (unsigned i = 0; r >= 0 && i < FLOOD_CALLS; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                r = sd_bus_message_new_method_call(hostile, &m, BUS_API_SERVICE, BUS_API_OBJECT, interface, member);
                if (r >= 0)
                        r = sd_bus_call_async(hostile, NULL, m, on_reply, &t, CALL_TIMEOUT_USEC);
                if (r >= 0 && i % VICTIM_EVERY == VICTIM_EVERY - 1) {
                        ProcUsage u;

                        r = sd_bus_flush(hostile);
                        victim_calls++;
                        victim_ok += victim_convert(victim) >= 0;
                        if (proc_usage(pid, &u) >= 0 && proc_usage_held_kib(&u) > peak_kib)
                                peak_kib = proc_usage_held_kib(&u);
                }
        }
        if (r >= 0)
                r = sd_bus_flush(hostile);
        ok(r >= 0, "%s: it sends %d calls and reads no answer", member, FLOOD_CALLS);
        ok(victim_ok == victim_calls, "%s: another client's Convert was answered meanwhile (%u of %u)", member,
           victim_ok, victim_calls);
        ok(harness_daemon_alive(h), "%s: the daemon is still running", member);

        r = harness_pump(hostile, &t.replies, FLOOD_CALLS, 240 * NSEC_PER_SEC);
        diag("%s: %u answered, %u QuotaExceeded, %u other errors; daemon RSS at most %" PRId64 " KiB, held %" PRId64
             " KiB before", member, t.ok, t.quota, t.other, peak_kib, held0_kib);
        ok(r >= 0 && t.replies == FLOOD_CALLS, "%s: every call has an answer (%u)", member, t.replies);
        ok(t.quota > 0 && t.ok + t.quota == FLOOD_CALLS && t.other == 0,
           "%s: most were QuotaExceeded (%u), the rest answered (%u)", member, t.quota, t.ok);
        ok(t.ok < FLOOD_CALLS / 2, "%s: fewer than half were answered (%u)", member, t.ok);
#if HOSTILE_SANITIZED
        diag("%s: the daemon grew by %" PRId64 " KiB, under a sanitizer: not judged", member, peak_kib - held0_kib);
        skip("the daemon's memory under a sanitizer");
        skip("the daemon's memory after the flooder left, under a sanitizer");
#else
        ok(peak_kib - held0_kib < GROWTH_MAX_KIB, "%s: the daemon grew by %" PRId64 " KiB, less than %d", member,
           peak_kib - held0_kib, GROWTH_MAX_KIB);
        hostile = sd_bus_flush_close_unref(hostile);
        int64_t left_kib = held_kib(pid, victim);
        ok(left_kib - held0_kib < LEFT_MAX_KIB, "%s: once it left, the daemon holds %" PRId64 " KiB more than "
           "before, less than %d", member, left_kib - held0_kib, LEFT_MAX_KIB);
#endif
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *victim = NULL;
        pid_t pid = 0;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_new_started(argv[1], NULL, &h, &victim);
        if (r >= 0)
                r = harness_name_pid(victim, BUS_API_SERVICE, &pid);
        if (r < 0)
                bail_out("the daemon on the bus: %s", strerror(-r));

        flood(h, victim, pid, BUS_API_INTERFACE, "ListDomains");
        flood(h, victim, pid, "org.freedesktop.DBus.Introspectable", "Introspect");

        return done_testing();
}
