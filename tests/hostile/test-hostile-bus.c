/* SPDX-License-Identifier: MIT */

/* Clients that never read their replies, or ask for a lot, against the real
 * timeconvd on a private bus with a desktop session bus's limits:
 *   - 3,000 GetSharedTable calls whose replies are not read: each pending reply holds an fd in
 *     the bus daemon, which at its fd limit would drop timeconvd. At most BUS_CLIENT_TABLES_BURST
 *     tables go to one client; the rest are QuotaExceeded, and the daemon stays;
 *   - ConvertMany calls at the limit (BUS_API_CONVERT_MANY_MAX values) whose replies are not
 *     read: at most the calls in flight and the reply bucket of bus-clients.h are served, the
 *     rest QuotaExceeded; the daemon's memory stays bounded and another client is answered all
 *     the while;
 *   - answers up to the limit are whole, in order, and agree with Convert; one value more is
 *     InvalidArgs, and libtimeconv sends a batch of 200,000 values in a memfd the daemon
 *     takes (test-hostile-memfd tests ConvertManyMemfd itself, and the slices' fairness).
 * Every property is one that load cannot flip: counts, order, a memory ceiling far above what
 * the limits allow and far below what an unlimited daemon takes. */

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
#include "timeconv.h"

#define TABLE_CALLS 3000
#define MANY_VALUES BUS_API_CONVERT_MANY_MAX    /* one call at the limit */
/* Unread calls at the limit: four times the reply bucket's burst, more than it and what it
 * refills while they are sent, so that the budget must refuse some. */
#define UNREAD_CALLS (4 * BUS_CLIENT_REPLY_BURST_BYTES / (16 * MANY_VALUES))
#define UNREAD_VICTIM_EVERY (UNREAD_CALLS / 20)
/* More than a ConvertMany takes: timeconv_convert_many() sends them in a memfd. */
#define LIBRARY_VALUES 200000
_Static_assert(LIBRARY_VALUES > 4 * BUS_API_CONVERT_MANY_MAX, "more than a call takes");
#define CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)

typedef struct Tally {
        unsigned replies, ok, quota, other, fds;
        uint64_t order;                 /* 1 + the number of replies before this one, for order */
        uint64_t *clock;
} Tally;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Tally *t = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        t->replies++;
        if (t->clock)
                t->order = ++*t->clock;
        if (!e)
                t->ok++;
        else if (sd_bus_error_has_name(e, BUS_ERROR_QUOTA_EXCEEDED))
                t->quota++;
        else {
                t->other++;
                diag("unexpected error: %s: %s", e->name, e->message);
        }
        if (!e && sd_bus_message_has_signature(m, "h"))
                t->fds++;
        return 0;
}

static int call_async(sd_bus *bus, const char *member, Tally *t, sd_bus_message **ret_call) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, member);
        if (r < 0)
                return r;
        if (ret_call) {
                *ret_call = TAKE_PTR(m);
                return 0;
        }
        return sd_bus_call_async(bus, NULL, m, on_reply, t, CALL_TIMEOUT_USEC);
}

static int convert_many_async(sd_bus *bus, const int64_t *values, size_t n, Tally *t) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = call_async(bus, "ConvertMany", t, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", "monotonic", "boottime");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, m, on_reply, t, CALL_TIMEOUT_USEC);
        return r;
}

/* A Convert from a client that behaves: 0 when answered right away with a value. */
static int victim_convert(sd_bus *victim) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        return sd_bus_call_method(victim, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert", &e, &reply,
                                  "ssx", "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC));
}

static void test_tables(Harness *h, sd_bus *victim) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *hostile = NULL;
        Tally t = {};
        int64_t start_ns;
        unsigned bound;
        int r;

        r = harness_connect(h, &hostile);
        ok(r >= 0, "a hostile client connects");
        if (r < 0)
                return;
        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        for (unsigned i = 0; r >= 0 && i < TABLE_CALLS; i++)
                r = call_async(hostile, "GetSharedTable", &t, NULL);
        if (r >= 0)
                r = sd_bus_flush(hostile);
        ok(r >= 0, "it asks for the shared table %d times and reads no reply", TABLE_CALLS);

        /* The victim's call goes after all of them: the daemon has read every request first. */
        ok(victim_convert(victim) >= 0, "meanwhile another client's Convert is answered");
        ok(harness_daemon_alive(h), "the daemon is still running");

        r = harness_pump(hostile, &t.replies, TABLE_CALLS, 60 * NSEC_PER_SEC);
        ok(r >= 0, "the hostile client's %u replies all arrive in the end (%s)", t.replies, strerror(-r));
        /* The burst, and one a second while the daemon read the calls (it read them all before
         * the last reply came). */
        bound = BUS_CLIENT_TABLES_BURST +
                (unsigned) ((clock_now_ns(CLOCK_MONOTONIC) - start_ns) / NSEC_PER_SEC * BUS_CLIENT_TABLES_PER_S) + 1;
        diag("%u tables, %u QuotaExceeded, %u other errors", t.fds, t.quota, t.other);
        ok(t.fds >= 1 && t.fds <= bound, "it got %u tables, at most %u", t.fds, bound);
        ok(t.quota == TABLE_CALLS - t.fds && t.other == 0, "every other call was QuotaExceeded (%u)", t.quota);
}

static void test_unread_many(Harness *h, sd_bus *victim, pid_t daemon_pid, const int64_t *values) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *hostile = NULL;
        int64_t rss0_kib = 0, rss_max_kib = 0, start_ns, elapsed_ns;
        unsigned victim_ok = 0, victim_calls = 0, bound;
        Tally t = {};
        int r;

        (void) proc_rss_kib(daemon_pid, &rss0_kib);
        r = harness_connect(h, &hostile);
        ok(r >= 0, "a hostile client connects");
        if (r < 0)
                return;

        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        for (unsigned i = 0; r >= 0 && i < UNREAD_CALLS; i++) {
                int64_t rss_kib;

                r = convert_many_async(hostile, values, MANY_VALUES, &t);
                if (r >= 0)
                        r = sd_bus_flush(hostile);
                /* Now and then, a client that behaves; and the daemon's memory. Not after each
                 * call: the budget's refill counts the time the calls take to send. */
                if (i % UNREAD_VICTIM_EVERY == 0) {
                        victim_calls++;
                        victim_ok += victim_convert(victim) >= 0;
                }
                if (proc_rss_kib(daemon_pid, &rss_kib) >= 0 && rss_kib > rss_max_kib)
                        rss_max_kib = rss_kib;
        }
        ok(r >= 0, "it sends %u ConvertMany calls of %d values and reads no reply", UNREAD_CALLS, MANY_VALUES);
        ok(victim_ok == victim_calls, "another client's Convert was answered meanwhile (%u of %u)", victim_ok,
           victim_calls);
        ok(harness_daemon_alive(h), "the daemon is still running");

        r = harness_pump(hostile, &t.replies, UNREAD_CALLS, 240 * NSEC_PER_SEC);
        ok(r >= 0, "the hostile client's replies all arrive in the end (%u)", t.replies);
        /* What the limits let through by the time the last reply came (the daemon had taken or
         * refused every call by then): the client's bucket's burst and what it refilled (each
         * reply is 16 bytes a value), and the calls in flight. */
        elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        bound = BUS_CLIENT_JOBS_MAX + BUS_CLIENT_REPLY_BURST_BYTES / (16u * MANY_VALUES) +
                (unsigned) ((uint64_t) elapsed_ns * BUS_CLIENT_REPLY_BYTES_PER_S / NSEC_PER_SEC / (16u * MANY_VALUES)) + 1;
        diag("%u answered, %u QuotaExceeded in %.2f s; daemon RSS %" PRId64 " -> at most %" PRId64 " KiB",
             t.ok, t.quota, (double) elapsed_ns / 1e9, rss0_kib, rss_max_kib);
        /* The bound grows with the time the calls took to send, so on a slow machine it may
         * allow them all: the budget's arithmetic is tested on its own (test-bus-clients). */
        ok(t.ok <= bound && t.ok + t.quota == UNREAD_CALLS,
           "at most %u of its calls were served (%u), the others QuotaExceeded (%u)", bound, t.ok, t.quota);
        ok(t.other == 0, "no other error (%u)", t.other);
        /* 2 jobs hold under 64 KiB, the send queue BUS_JOBS_WQUEUE_MAX replies of 8 KiB; all
         * the calls served at once would need over 64 MiB. Under a sanitizer the daemon's memory is
         * mostly the sanitizer's quarantine. */
#if HOSTILE_SANITIZED
        diag("the daemon grew by %" PRId64 " KiB, under a sanitizer: not judged", rss_max_kib - rss0_kib);
        skip("the daemon's memory under a sanitizer");
#else
        ok(rss_max_kib - rss0_kib < 64 * 1024, "the daemon grew by %" PRId64 " KiB, less than 64 MiB",
           rss_max_kib - rss0_kib);
#endif
}

/* ConvertMany of 1 and up to the limit: as many answers as values, each one's offset (boottime -
 * monotonic, which only a suspend changes) the one Convert gives, within the two bounds. One
 * value more, or 10,000 (a batch a benchmark once sent), is refused with InvalidArgs, saying the limit
 * and what to use instead. */
static void test_answers(sd_bus *client, const int64_t *values) {
        static const size_t sizes[] = { 1, MANY_VALUES - 1, MANY_VALUES, MANY_VALUES + 1, 10000 };

        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL, *one = NULL;
                const int64_t *out = NULL;
                const uint64_t *unc = NULL;
                size_t n = sizes[k], out_size = 0, unc_size = 0, bad = 0;
                int64_t one_value = 0;
                uint64_t one_unc = 0;
                int r;

                r = sd_bus_message_new_method_call(client, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                                   "ConvertMany");
                if (r >= 0)
                        r = sd_bus_message_append(m, "ss", "monotonic", "boottime");
                if (r >= 0)
                        r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
                if (r >= 0)
                        r = sd_bus_call(client, m, CALL_TIMEOUT_USEC, &e, &reply);
                if (r >= 0)
                        r = sd_bus_message_read_array(reply, 'x', (const void **) &out, &out_size);
                if (r >= 0)
                        r = sd_bus_message_read_array(reply, 't', (const void **) &unc, &unc_size);
                if (r >= 0)
                        r = sd_bus_call_method(client, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert",
                                               &e, &one, "ssx", "monotonic", "boottime", values[0]);
                if (r >= 0)
                        r = sd_bus_message_read(one, "xt", &one_value, &one_unc);
                for (size_t i = 0; r >= 0 && out_size == n * sizeof(int64_t) && unc_size == out_size && i < n; i++) {
                        int64_t gap = (out[i] - values[i]) - (one_value - values[0]);

                        if ((uint64_t) (gap < 0 ? -gap : gap) > unc[i] + one_unc)
                                bad++;
                }
                if (n > MANY_VALUES) {
                        char want[64];

                        (void) snprintf(want, sizeof(want), "%zu values, at most %d", n, MANY_VALUES);
                        ok(r == -EINVAL && sd_bus_error_has_name(&e, BUS_ERROR_INVALID_ARGUMENT) && e.message &&
                           strstr(e.message, want) && strstr(e.message, "timeconv_convert_many()"),
                           "ConvertMany of %zu values: InvalidArgs (%s)", n, e.message ? e.message : "");
                        continue;
                }
                ok(r >= 0 && out_size == n * sizeof(int64_t) && unc_size == out_size && bad == 0,
                   "ConvertMany of %zu values: %zu answers, each within its bound of Convert's", n,
                   out_size / sizeof(int64_t));
                if (r < 0 || bad)
                        diag("r=%d bad=%zu %s", r, bad, e.message ? e.message : "");
        }
}

/* libtimeconv over D-Bus alone (no shared table): LIBRARY_VALUES in one timeconv_convert_many()
 * go in a memfd the daemon takes, and come back whole, in order, each within its bound of the
 * one Convert gives for the first. */
static void test_library_many(Harness *h, const int64_t *values) {
        _cleanup_free_ int64_t *out = malloc(LIBRARY_VALUES * sizeof(int64_t));
        _cleanup_free_ int64_t *unc = malloc(LIBRARY_VALUES * sizeof(int64_t));
        struct timeconv *tc = NULL;
        int64_t one_value = 0, one_unc = 0;
        size_t bad = 0;
        int r;

        r = out && unc ? timeconv_open_address(h->bus_address, &tc) : -ENOMEM;
        if (r >= 0)
                r = timeconv_set_paths(tc, TIMECONV_PATH_DBUS);
        if (r >= 0)
                r = timeconv_convert_many(tc, "monotonic", "boottime", values, LIBRARY_VALUES, out, unc);
        ok(r >= 0 && timeconv_last_path(tc) == TIMECONV_PATH_DBUS,
           "libtimeconv, D-Bus only: convert_many() of %d values answers over D-Bus (%s)", LIBRARY_VALUES,
           strerror(r < 0 ? -r : 0));
        if (r >= 0)
                r = timeconv_convert(tc, "monotonic", "boottime", values[0], &one_value, &one_unc);
        for (size_t i = 0; r >= 0 && i < LIBRARY_VALUES; i++) {
                int64_t gap = (out[i] - values[i]) - (one_value - values[0]);

                if (unc[i] < 0 || (uint64_t) (gap < 0 ? -gap : gap) > (uint64_t) unc[i] + (uint64_t) one_unc)
                        bad++;
        }
        ok(r >= 0 && bad == 0, "  each of the %d answers within its bound of Convert's (%zu outside)",
           LIBRARY_VALUES, bad);
        tc = timeconv_free(tc);
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *victim = NULL;
        _cleanup_free_ int64_t *values = NULL;
        pid_t daemon_pid = 0;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_new_started(argv[1], NULL, &h, &victim);
        if (r >= 0)
                r = harness_name_pid(victim, BUS_API_SERVICE, &daemon_pid);
        if (r < 0)
                bail_out("the daemon on the bus: %s", strerror(-r));

        values = malloc(LIBRARY_VALUES * sizeof(int64_t));
        if (!values)
                bail_out("out of memory");
        for (size_t i = 0; i < LIBRARY_VALUES; i++)
                values[i] = clock_now_ns(CLOCK_MONOTONIC) - (int64_t) i;

        test_tables(h, victim);
        test_answers(victim, values);
        test_library_many(h, values);
        test_unread_many(h, victim, daemon_pid, values);

        return done_testing();
}
