/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdint.h>

#include "model.h"
#include "tap.h"

static void test_identity(void) {
        int64_t x = 0, unc = 0;

        ok(model_forward(&MODEL_IDENTITY, 123456789, 0, &x, &unc) == 0 && x == 123456789 && unc <= 1,
           "identity forward is exact (x=%" PRId64 ", unc=%" PRId64 ")", x, unc);
        ok(model_inverse(&MODEL_IDENTITY, -42, 7, &x, &unc) == 0 && x == -42 && unc >= 7 && unc <= 8,
           "identity inverse keeps the input bound (unc=%" PRId64 ")", unc);
}

static const struct {
        Model m;
        int64_t r_ns;
        int64_t want_x_ns;
        int64_t want_unc_ns;    /* expected bound, computed by hand, rounded up */
} forward_table[] = {
        /* 100 ppm fast, 1 s after the centre: x moves 1 s + 100 µs. */
        { { 1000, 5000, 100e-6, 10.0, 1e-6 }, 1000 + 1000000000, 5000 + 1000000000 + 100000, 1011 },
        /* 250 ppm slow, 2 s before the centre. */
        { { 0, 0, -250e-6, 0.0, 0.0 }, -2000000000, -2000000000 + 500000, 1 },
        /* Bound grows linearly with the distance: 3 s * 2e-9 + 5. */
        { { 0, 1, 0.0, 5.0, 2e-9 }, 3000000000, 3000000001, 12 },
};

static void test_forward_table(void) {
        for (size_t i = 0; i < sizeof(forward_table) / sizeof(forward_table[0]); i++) {
                int64_t x = 0, unc = 0;
                int r = model_forward(&forward_table[i].m, forward_table[i].r_ns, 0, &x, &unc);

                ok(r == 0 && x == forward_table[i].want_x_ns && unc == forward_table[i].want_unc_ns,
                   "forward row %zu: x=%" PRId64 " unc=%" PRId64, i, x, unc);
        }
}

static void test_round_trip(void) {
        Model m = { 1700000000000000000, 12345, 37.5e-6, 20.0, 1e-8 };
        int bad = 0;

        for (int64_t r_ns = m.r_c_ns - 100000000000; r_ns <= m.r_c_ns + 100000000000; r_ns += 997000001) {
                int64_t x, unc_x, back, unc_back;

                if (model_forward(&m, r_ns, 0, &x, &unc_x) < 0 || model_inverse(&m, x, 0, &back, &unc_back) < 0 ||
                    back < r_ns - 1 || back > r_ns + 1 || unc_back < unc_x - 1)
                        bad++;
        }
        is_int(bad, 0, "inverse(forward(r)) == r within 1 ns over +-100 s");
}

static void test_input_uncertainty(void) {
        Model m = { 0, 0, 0.0, 3.0, 0.0 };
        int64_t x = 0, unc = 0;

        ok(model_forward(&m, 10, 500000, &x, &unc) == 0 && unc >= 500003 && unc <= 500004,
           "input uncertainty carries through forward (%" PRId64 ")", unc);
        ok(model_forward(&m, 10, -1, &x, &unc) == -EINVAL, "negative input uncertainty is -EINVAL");
}

static void test_overflow(void) {
        Model m = { 0, INT64_MAX - 10, 0.0, 0.0, 0.0 };
        Model far = { INT64_MIN, 0, 0.0, 0.0, 0.0 };
        Model fast = { 0, 0, 1e-3, 0.0, 0.0 };
        int64_t x = 0, unc = 0;

        is_int(model_forward(&m, 11, 0, &x, &unc), -ERANGE, "x past INT64_MAX is -ERANGE");
        is_int(model_forward(&far, INT64_MAX, 0, &x, &unc), -ERANGE, "r - r_c overflowing is -ERANGE");
        is_int(model_forward(&fast, INT64_MAX - 1000, 0, &x, &unc), -ERANGE, "rate pushing past INT64_MAX is -ERANGE");
        is_int(model_inverse(&m, INT64_MIN, 0, &x, &unc), -ERANGE, "inverse overflow is -ERANGE");
}

static void test_rate_ppb(void) {
        Model m = { 0, 0, -12.3456e-6, 0, 0 };

        is_int(model_rate_ppb(&m), -12346, "rate in ppb, rounded");
}

int main(void) {
        test_identity();
        test_forward_table();
        test_round_trip();
        test_input_uncertainty();
        test_overflow();
        test_rate_ppb();
        return done_testing();
}
