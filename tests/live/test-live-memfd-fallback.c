/* SPDX-License-Identifier: MIT */

/* timeconv_convert_many() with a daemon that cannot take ConvertManyMemfd. A stand-in daemon
 * owns org.timeconv.Clock1 on a private bus and answers ConvertMany with value + 111 +- 7; to
 * ConvertManyMemfd it answers UnknownMethod, as a daemon older than the method does, or
 * QuotaExceeded, as a daemon with no room for another memfd does, counting the calls.
 *   - an old daemon is asked once: the handle remembers, and later batches go straight to
 *     ConvertMany (no memfd, no failed round trip each);
 *   - until the daemon's owner changes: a new daemon is asked again, once;
 *   - QuotaExceeded is not remembered, and the batch is answered through ConvertMany.
 * usage: test-live-memfd-fallback TIMECONVD (the daemon is not used) */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bus-errors.h"
#include "harness.h"
#include "tap.h"
#include "timeconv.h"

#define N_VALUES 2000           /* more than a ConvertMany takes: the library tries a memfd */

typedef enum Mode {
        MODE_OLD,               /* UnknownMethod */
        MODE_FULL,              /* QuotaExceeded */
} Mode;

typedef struct Fake {
        HarnessStandIn s;
        int mode;               /* Mode, set by the main thread between calls */
        int memfd_calls;
} Fake;

static int convert_many(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const int64_t *values;
        int64_t out[512];
        uint64_t unc[512];
        const char *from, *to;
        size_t size, n;
        int r;

        r = sd_bus_message_read(m, "ss", &from, &to);
        if (r >= 0)
                r = sd_bus_message_read_array(m, 'x', (const void **) &values, &size);
        if (r < 0)
                return r;
        n = size / sizeof(int64_t);
        if (n > 512)
                return sd_bus_error_set(error, BUS_ERROR_INVALID_ARGUMENT, "too many");
        for (size_t i = 0; i < n; i++) {
                out[i] = values[i] + HARNESS_STAND_IN_OFFSET_NS;
                unc[i] = HARNESS_STAND_IN_UNCERTAINTY_NS;
        }
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'x', out, n * sizeof(int64_t));
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 't', unc, n * sizeof(uint64_t));
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int convert_many_memfd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;

        __atomic_add_fetch(&f->memfd_calls, 1, __ATOMIC_RELEASE);
        if (__atomic_load_n(&f->mode, __ATOMIC_ACQUIRE) == MODE_OLD)
                return sd_bus_error_set(error, SD_BUS_ERROR_UNKNOWN_METHOD, "Unknown method ConvertManyMemfd");
        return sd_bus_error_set(error, BUS_ERROR_QUOTA_EXCEEDED, "no room for another memfd");
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Convert", "ssx", "xt", harness_stand_in_convert, 0),
        SD_BUS_METHOD("ConvertMany", "ssax", "axat", convert_many, 0),
        SD_BUS_METHOD("ConvertManyMemfd", "ssht", "", convert_many_memfd, 0),
        SD_BUS_VTABLE_END
};

static int fake_start(const Harness *h, Fake *f) {
        *f = (Fake) {};
        return harness_stand_in_start(h, fake_vtable, f, &f->s);
}

/* One batch of N_VALUES: 0 when every answer is the stand-in's. */
static int batch(struct timeconv *tc) {
        static int64_t values[N_VALUES], out[N_VALUES], unc[N_VALUES];
        int r;

        for (size_t i = 0; i < N_VALUES; i++)
                values[i] = INT64_C(5000000000) + (int64_t) i;
        r = timeconv_convert_many(tc, "monotonic_raw", "monotonic", values, N_VALUES, out, unc);
        if (r < 0)
                return r;
        for (size_t i = 0; i < N_VALUES; i++)
                if (out[i] != values[i] + HARNESS_STAND_IN_OFFSET_NS || unc[i] != HARNESS_STAND_IN_UNCERTAINTY_NS)
                        return -EIO;
        return 0;
}

static int memfd_calls(Fake *f) {
        return __atomic_load_n(&f->memfd_calls, __ATOMIC_ACQUIRE);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        struct timeconv *tc = NULL;
        Fake fake;
        int64_t v = 0, u = 0;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = fake_start(h, &fake);
        if (r >= 0)
                r = timeconv_open_address(h->bus_address, &tc);
        if (r >= 0)
                r = timeconv_set_paths(tc, TIMECONV_PATH_DBUS);
        is_int(r < 0 ? r : 0, 0, "a stand-in daemon without ConvertManyMemfd, and a handle to it");
        if (r < 0)
                return done_testing();

        is_int(batch(tc), 0, "2000 values answered through ConvertMany");
        is_int(memfd_calls(&fake), 1, "after ConvertManyMemfd was tried once");
        is_int(batch(tc), 0, "another batch is answered");
        is_int(batch(tc), 0, "and another");
        is_int(memfd_calls(&fake), 1, "without trying ConvertManyMemfd again: the handle remembers");

        /* Another daemon takes the name. A Convert answered by it comes after the bus driver's
         * NameOwnerChanged on the handle's connection, so the handle has seen the change. */
        harness_stand_in_stop(&fake.s);
        r = fake_start(h, &fake);
        if (r >= 0)
                r = timeconv_convert(tc, "monotonic_raw", "monotonic", 0, &v, &u);
        ok(r >= 0 && v == HARNESS_STAND_IN_OFFSET_NS, "a new stand-in daemon took the name, and answers (%d)", r);
        is_int(batch(tc), 0, "a batch is answered");
        is_int(memfd_calls(&fake), 1, "after ConvertManyMemfd was tried once on the new daemon");
        is_int(batch(tc), 0, "another batch is answered");
        is_int(memfd_calls(&fake), 1, "without trying again");

        /* A daemon with no room for another memfd now may have some later. */
        harness_stand_in_stop(&fake.s);
        r = fake_start(h, &fake);
        if (r >= 0) {
                __atomic_store_n(&fake.mode, MODE_FULL, __ATOMIC_RELEASE);
                r = timeconv_convert(tc, "monotonic_raw", "monotonic", 0, &v, &u);
        }
        ok(r >= 0, "a stand-in daemon whose ConvertManyMemfd is QuotaExceeded took the name (%d)", r);
        is_int(batch(tc), 0, "a batch is answered through ConvertMany");
        is_int(batch(tc), 0, "another too");
        is_int(memfd_calls(&fake), 2, "ConvertManyMemfd was tried for each: QuotaExceeded is not remembered");

        timeconv_free(tc);
        harness_stand_in_stop(&fake.s);
        return done_testing();
}
