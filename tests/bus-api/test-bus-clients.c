/* SPDX-License-Identifier: MIT */

/* bus-api/bus-clients.c: the budgets of one client, on times of our own (the token buckets take
 * the time as an argument), so that every figure is exact. */

#include <errno.h>
#include <inttypes.h>

#include "bus-clients.h"
#include "bus-errors.h"
#include "tap.h"
#include "time-util.h"

#define T0 (INT64_C(1000) * NSEC_PER_SEC)

static void test_bucket(void) {
        BusBucket b = { 8, T0 };

        for (int i = 0; i < 8; i++)
                ok(bus_bucket_take(&b, 1, T0, 8, 1), "a full bucket of 8 gives token %d", i + 1);
        ok(!bus_bucket_take(&b, 1, T0, 8, 1), "the ninth at the same time is refused");
        ok(!bus_bucket_take(&b, 1, T0 + NSEC_PER_SEC - 1, 8, 1), "and 1 ns short of a second later");
        ok(bus_bucket_take(&b, 1, T0 + NSEC_PER_SEC, 8, 1), "one a second: a token after 1 s");
        ok(!bus_bucket_take(&b, 1, T0 + NSEC_PER_SEC, 8, 1), "only one");

        /* Frequent calls must not lose a slow rate to rounding. */
        b = (BusBucket) { 0, T0 };
        {
                unsigned taken = 0;

                _Static_assert(BUS_CLIENT_REPLY_BYTES_PER_S / (16 * BUS_API_CONVERT_MANY_MAX) < 1000,
                       "the client asks faster than the rate refills");
        for (int64_t t = T0; t < T0 + NSEC_PER_SEC; t += NSEC_PER_SEC / 100)
                        taken += bus_bucket_take(&b, 1, t, 8, 1);
                is_int((int) taken, 0, "asked 100 times within the first second: no token");
        }
        is_int((int) bus_bucket_peek(&b, T0 + NSEC_PER_SEC, 8, 1), 1, "asked 100 times in a second, 1 token after it");
        is_int((int) bus_bucket_peek(&b, T0 + 20 * NSEC_PER_SEC, 8, 1), 8, "never more than the burst");
        is_int((int) bus_bucket_peek(&b, T0 + 10 * NSEC_PER_SEC, 8, 1), 8, "time going back adds nothing");

        b = (BusBucket) { 0, T0 };
        is_int((int) (bus_bucket_peek(&b, T0 + 1000 * NSEC_PER_SEC, 8, 1)), 8,
               "after a long while (past the 100 s the arithmetic allows), full");
        b = (BusBucket) { 0, T0 };
        ok(bus_bucket_peek(&b, T0 + NSEC_PER_SEC / 2, BUS_CLIENT_REPLY_BURST_BYTES, BUS_CLIENT_REPLY_BYTES_PER_S) ==
           BUS_CLIENT_REPLY_BYTES_PER_S / 2, "bytes: half a second gives half the rate");
        ok(!bus_bucket_take(&b, BUS_CLIENT_REPLY_BYTES_PER_S, T0 + NSEC_PER_SEC / 2, BUS_CLIENT_REPLY_BURST_BYTES,
                            BUS_CLIENT_REPLY_BYTES_PER_S) &&
           bus_bucket_peek(&b, T0 + NSEC_PER_SEC / 2, BUS_CLIENT_REPLY_BURST_BYTES, BUS_CLIENT_REPLY_BYTES_PER_S) ==
           BUS_CLIENT_REPLY_BYTES_PER_S / 2, "a refused take takes nothing");
}

/* What a client that never reads its replies gets of ConvertMany calls at the limit (16 bytes a
 * value: 8 KiB each), sent as fast as it likes (1000 a second, more than the rate refills) for
 * 10 s: the burst, then the rate. */
static void test_reply_budget_over_time(void) {
        BusBucket client = { BUS_CLIENT_REPLY_BURST_BYTES, T0 }, all = { BUS_CLIENTS_REPLY_BURST_BYTES, T0 };
        const uint64_t reply = UINT64_C(16) * BUS_API_CONVERT_MANY_MAX;
        const unsigned burst = (unsigned) (BUS_CLIENT_REPLY_BURST_BYTES / reply);
        const unsigned per_s = (unsigned) (BUS_CLIENT_REPLY_BYTES_PER_S / reply);
        unsigned served = 0, asked = 0;

        _Static_assert(BUS_CLIENT_REPLY_BYTES_PER_S / (16 * BUS_API_CONVERT_MANY_MAX) < 1000,
                       "the client asks faster than the rate refills");
        for (int64_t t = T0; t <= T0 + 10 * NSEC_PER_SEC; t += NSEC_PER_SEC / 1000, asked++)
                if (bus_bucket_peek(&client, t, BUS_CLIENT_REPLY_BURST_BYTES, BUS_CLIENT_REPLY_BYTES_PER_S) >= reply &&
                    bus_bucket_peek(&all, t, BUS_CLIENTS_REPLY_BURST_BYTES, BUS_CLIENTS_REPLY_BYTES_PER_S) >= reply) {
                        client.tokens -= reply;
                        all.tokens -= reply;
                        served++;
                }
        diag("%u of %u calls served in 10 s", served, asked);
        /* 8 MiB at once, then 4 MiB/s: 1024 + 10 * 512 = 6144 replies of 8 KiB. */
        ok(served >= burst + 10 * per_s - 1 && served <= burst + 10 * per_s + 1,
           "a client asking 1000 times a second for 10 s gets %u replies of %u KiB (%u + 10 * %u)", served,
           (unsigned) (reply >> 10), burst, per_s);
}

/* What a client gets of ConvertManyMemfd calls at the limit, sent as fast as it likes (1000 a
 * second, more than the budget refills) for 10 s: the burst, then the rate; ConvertMany's values
 * come out of the same budget. */
static void test_values_budget_over_time(void) {
        const int64_t end = T0 + 10 * NSEC_PER_SEC;
        BusClient cl = {};
        const uint64_t call = BUS_API_CONVERT_MANY_MEMFD_MAX;
        const unsigned burst = (unsigned) (BUS_CLIENT_VALUES_BURST / call);
        const unsigned per_s = (unsigned) (BUS_CLIENT_VALUES_PER_S / call);
        unsigned served = 0;

        cl.values = (BusBucket) { BUS_CLIENT_VALUES_BURST, T0 };
        _Static_assert(BUS_CLIENT_VALUES_PER_S / BUS_API_CONVERT_MANY_MEMFD_MAX < 1000,
                       "the client asks faster than the rate refills");
        for (int64_t t = T0; t <= end; t += NSEC_PER_SEC / 1000)
                served += bus_client_take_values(&cl, call, t);
        diag("%u calls of %u values served in 10 s", served, (unsigned) call);
        ok(served >= burst + 10 * per_s - 1 && served <= burst + 10 * per_s + 1,
           "a client asking 1000 times a second for 10 s gets %u calls of %u values (%u + 10 * %u)", served,
           (unsigned) call, burst, per_s);
        ok(bus_client_take_values(&cl, bus_bucket_peek(&cl.values, end, BUS_CLIENT_VALUES_BURST,
                                                       BUS_CLIENT_VALUES_PER_S), end) &&
           !bus_client_take_values(&cl, BUS_API_CONVERT_MANY_MAX, end),
           "the rest taken, a ConvertMany at the limit is refused: one budget for both");
        ok(bus_client_take_values(&cl, BUS_API_CONVERT_MANY_MAX, end + NSEC_PER_SEC / 1000),
           "and served a millisecond later, when %u values have come back", BUS_CLIENT_VALUES_PER_S / 1000);
}

int main(void) {
        test_bucket();
        test_reply_budget_over_time();
        test_values_budget_over_time();
        return done_testing();
}
