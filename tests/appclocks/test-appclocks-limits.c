/* SPDX-License-Identifier: MIT */

/* PushSnapshot's limits on the real timeconvd: malformed and hostile snapshots get named errors
 * and change nothing; the quotas (domains per client, domains in all, snapshots per second)
 * answer QuotaExceeded; departed clients' nodes are reused, under their names or others (the
 * shared table is then reissued, and libtimeconv follows); the daemon survives it all.
 * usage: test-appclocks-limits TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "appclocks-client.h"
#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"
#include "timeconv.h"

#define WAIT_MS 10000
#define FILLERS ((BUS_API_APP_DOMAINS_MAX + BUS_API_APP_DOMAINS_PER_CLIENT_MAX - 1) / BUS_API_APP_DOMAINS_PER_CLIENT_MAX)

static void test_malformed(const Harness *h, sd_bus *observer) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *m = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t r_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) - INT64_C(1000000000), v;
        uint64_t u;
        AcDomain d;

        if (harness_connect(h, &m) < 0) {
                ok(false, "a client connects");
                return;
        }
        {
                const BusClockReading one[] = { { "monotonic_raw", r_ns } };
                const BusClockReading twice[] = { { "monotonic_raw", r_ns }, { "dup", 1 }, { "dup", 2 } };
                const BusClockReading none_known[] = { { "lonely", 1 }, { "alone", 2 } };
                const BusClockReading spread[] = { { "monotonic_raw", r_ns }, { "wide", 1 },
                                                   { "monotonic_raw", r_ns + INT64_C(2000000000) } };
                const BusClockReading edge[] = { { "monotonic", INT64_MAX }, { "edge", 1 } };

                check_error("one reading", ac_push(m, one, 1, &e), &e, BUS_ERROR_INVALID_ARGUMENT, EINVAL,
                            "needs at least 2");
                check_error("an application domain twice", ac_push(m, twice, 3, &e), &e,
                            BUS_ERROR_INVALID_ARGUMENT, EINVAL, "clocks[2] 'dup': an application domain named twice");
                check_error("no known domain", ac_push(m, none_known, 2, &e), &e, BUS_ERROR_INVALID_ARGUMENT,
                            EINVAL, "no known domain");
                check_error("known readings 2 s apart", ac_push(m, spread, 3, &e), &e, BUS_ERROR_INVALID_ARGUMENT,
                            EINVAL, "more than 1 s apart");
                check_error("monotonic at INT64_MAX", ac_push(m, edge, 2, &e), &e, BUS_ERROR_OUT_OF_RANGE, ERANGE,
                            "clocks[0] 'monotonic'");
        }
        check_error("a bad name", ac_push2(m, "monotonic_raw", r_ns, "Mic", 1, &e), &e, BUS_ERROR_INVALID_ARGUMENT,
                    EINVAL, "argument 'clocks[1]'");
        ok(ac_domain(observer, "dup", &d) >= 0 && !d.found && ac_domain(observer, "wide", &d) >= 0 && !d.found &&
           ac_domain(observer, "edge", &d) >= 0 && !d.found, "no refused snapshot made a domain");

        /* Values at the edges of int64 for an application domain: an answer, never a crash. */
        is_int(ac_push2(m, "monotonic_raw", r_ns, "order", 1000, NULL), 0, "'order' is made");
        check_error("a snapshot older than the latest", ac_push2(m, "monotonic_raw", r_ns - 1, "order", 999, &e), &e,
                    BUS_ERROR_INVALID_ARGUMENT, EINVAL, "older than the domain's latest");
        (void) ac_push2(m, "monotonic_raw", r_ns + 1000, "order", INT64_MAX, NULL);
        (void) ac_push2(m, "monotonic_raw", r_ns + 2000, "order", INT64_MIN, NULL);
        (void) ac_push2(m, "monotonic_raw", INT64_MAX, "order", INT64_MAX, NULL);
        (void) clock_convert(observer, "monotonic_raw", "order", INT64_MIN, NULL, &v, &u);
        (void) clock_convert(observer, "order", "monotonic_raw", INT64_MAX, NULL, &v, &u);
        ok(clock_convert(observer, "monotonic_raw", "monotonic", r_ns, NULL, &v, &u) >= 0,
           "the daemon answers after values at the edges of int64");
}

static void test_per_client(const Harness *h) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *q = NULL, *rl = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t r_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) - INT64_C(1000000000), start_ns, elapsed_ns;
        int n_ok = 0, n_quota = 0, n_other = 0, limit;

        if (harness_connect(h, &q) < 0 || harness_connect(h, &rl) < 0) {
                ok(false, "two clients connect");
                return;
        }
        for (int i = 0; i < BUS_API_APP_DOMAINS_PER_CLIENT_MAX; i++) {
                char name[32];

                snprintf(name, sizeof(name), "q-%d", i);
                n_ok += ac_push2(q, "monotonic_raw", r_ns, name, 0, NULL) >= 0;
        }
        ok(n_ok == BUS_API_APP_DOMAINS_PER_CLIENT_MAX, "a client makes %d domains (%d)",
           BUS_API_APP_DOMAINS_PER_CLIENT_MAX, n_ok);
        check_error("and not one more", ac_push2(q, "monotonic_raw", r_ns, "q-more", 0, &e), &e,
                    BUS_ERROR_QUOTA_EXCEEDED, EDQUOT, "at most 8 application domains per client");
        is_int(ac_push2(q, "monotonic_raw", r_ns + 1, "q-0", 1, NULL), 0, "it still feeds those it has");

        /* Snapshots per second: a burst, then the sustained rate; a refusal books nothing. */
        n_ok = 0;
        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < 1000 && n_quota == 0; i++) {
                int r = ac_push2(rl, "monotonic_raw", r_ns + i, "rate", i, &e);

                n_ok += r >= 0;
                n_quota += r == -EDQUOT && sd_bus_error_has_name(&e, BUS_ERROR_QUOTA_EXCEEDED);
                n_other += r < 0 && r != -EDQUOT;
                sd_bus_error_free(&e);
        }
        elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        limit = BUS_API_SNAPSHOTS_BURST + (int) (elapsed_ns * BUS_API_SNAPSHOTS_PER_S / INT64_C(1000000000)) + 1;
        ok(n_quota == 1 && n_other == 0 && n_ok >= BUS_API_SNAPSHOTS_BURST && n_ok <= limit,
           "pushing as fast as it can: %d snapshots in %.1f ms, then QuotaExceeded (burst %d, at most %d)", n_ok,
           (double) elapsed_ns / 1e6, BUS_API_SNAPSHOTS_BURST, limit);
        n_ok = 0;
        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        /* Polls the daemon until the budget refills: it answers at once either way. */
        while (n_ok == 0 && clock_now_ns(CLOCK_MONOTONIC) - start_ns < INT64_C(5000000000))
                n_ok = ac_push2(rl, "monotonic_raw", r_ns + 5000, "rate", 5000, NULL) >= 0;
        ok(n_ok == 1, "a rate, not a ban: a snapshot is taken again after %.1f ms",
           (double) (clock_now_ns(CLOCK_MONOTONIC) - start_ns) / 1e6);
}

/* Fills the daemon with domains from new clients, empties it, fills it again with other names:
 * those reuse the departed nodes, renamed, and the table is reissued. */
static void test_in_all(const Harness *h, sd_bus *observer, AcSignals *sig, const char *round, size_t owned_before,
                        int64_t r_ns) {
        sd_bus *fillers[FILLERS + 1] = {};
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const AcTruth t = { r_ns, INT64_C(42000000000), 3000 };
        size_t made = 0, owned = 0, outside = 0;
        bool refused = false;

        for (size_t k = 0; k <= FILLERS && !refused; k++) {
                if (harness_connect(h, &fillers[k]) < 0)
                        break;
                for (int i = 0; i < BUS_API_APP_DOMAINS_PER_CLIENT_MAX && !refused; i++) {
                        char name[32];
                        int r;

                        snprintf(name, sizeof(name), "%s-%zu-%d", round, k, i);
                        r = ac_push2(fillers[k], "monotonic_raw", r_ns, name, ac_truth_x(&t, r_ns), &e);
                        if (r >= 0) {
                                int64_t v;
                                uint64_t u;

                                made++;
                                if (clock_convert(observer, "monotonic_raw", name, r_ns, NULL, &v, &u) < 0 ||
                                    !ac_holds(v, u, ac_truth_x(&t, r_ns)))
                                        outside++;
                        } else {
                                refused = true;
                                check_error("the domain past the limit", r, &e, BUS_ERROR_QUOTA_EXCEEDED, EDQUOT,
                                            "the daemon holds as many application domains as it can");
                        }
                }
        }
        if (ac_count_owned(observer, &owned) < 0)
                owned = 0;
        ok(refused && owned == BUS_API_APP_DOMAINS_MAX && made + owned_before == owned,
           "%s: %zu new domains, %zu in all, the most there may be", round, made, owned);
        is_int(outside, 0, "each converts to its truth");

        for (size_t k = 0; k <= FILLERS; k++)
                fillers[k] = sd_bus_flush_close_unref(fillers[k]);
        is_int(ac_wait_owned(observer, sig, owned_before, WAIT_MS), 0, "the clients leave, their domains go");
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *observer = NULL, *keeper = NULL;
        int64_t r_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) - INT64_C(1000000000), v, tu;
        const AcTruth t = { r_ns, INT64_C(42000000000), 3000 };
        struct timeconv *tc = NULL;
        AcSignals sig = {};
        size_t owned = 0;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        r = harness_tap_start(argv[1], NULL, &h, &observer);
        if (r >= 0)
                r = ac_signals_watch(observer, &sig);
        if (r >= 0)
                r = harness_connect(h, &keeper);
        is_int(r, 0, "an observer connects and listens");
        if (r < 0)
                return done_testing();

        test_malformed(h, observer);
        test_per_client(h);

        /* A client of the table from before the renames below. */
        r = timeconv_open_address(h->bus_address, &tc);
        if (r >= 0)
                r = timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        if (r >= 0)
                r = timeconv_convert(tc, "monotonic_raw", "monotonic", r_ns, &v, &tu);
        is_int(r, 0, "libtimeconv maps the table");

        is_int(ac_push2(keeper, "monotonic_raw", r_ns, "keeper", 0, NULL), 0, "one more client keeps a domain");
        r = ac_count_owned(observer, &owned);
        ok(r >= 0 && owned == 1, "one domain has an owner (%zu)", owned);
        test_in_all(h, observer, &sig, "fill", owned, r_ns);
        test_in_all(h, observer, &sig, "again", owned, r_ns);

        /* Its table was retired (nodes renamed): the library finds the new one at its periodic
         * check (every 1024 table calls), or at once for a name it knew. */
        is_int(ac_push2(keeper, "monotonic_raw", r_ns + 1, "keeper", ac_truth_x(&t, r_ns + 1) - ac_truth_x(&t, r_ns),
                        NULL), 0, "the keeper pushes again");
        {
                int tries = 0;

                while (tries++ < 4096 && (r = timeconv_convert(tc, "monotonic_raw", "keeper", r_ns, &v, &tu)) < 0)
                        ;
                ok(r >= 0 && timeconv_last_path(tc) == TIMECONV_PATH_TABLE && ac_holds(v, (uint64_t) tu, 0),
                   "libtimeconv converts through the new table (%d, after %d tries)", r, tries);
        }
        timeconv_free(tc);

        ok(harness_daemon_alive(h), "the daemon is still running");
        ac_signals_unwatch(&sig);
        return done_testing();
}
