/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>

#include "model.h"

const Model MODEL_IDENTITY = {
        .r_c_ns = 0,
        .x_c_ns = 0,
        .rate = 0.0,
        .half_ns = 0.0,
        .rate_half = 0.0,
};

int64_t model_rate_ppb(const Model *m) {
        return (int64_t) llround(m->rate * 1e9);
}
