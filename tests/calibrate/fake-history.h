/* SPDX-License-Identifier: MIT */
#pragma once

/* A History calibrated from a fake domain (30 s of bursts of 8, 100 ms apart): the models the
 * shared table's test and its benchmark publish. On a config the fake refuses, h stays empty. */

#include "fake.h"
#include "history.h"

static inline void fake_history_calibrate(const char *name, FakeConfig *config, History *h) {
        Domain *d = NULL;

        history_init(h, NULL);
        if (domain_fake_ops.open(name, config, &d) < 0)
                return;
        for (int i = 0; i < 300; i++) {
                Sample s[8];
                size_t n = 0;

                domain_fake_ops.sample_burst(d, s, 8, &n);
                for (size_t k = 0; k < n; k++)
                        history_add(h, &s[k], NULL);
                fake_advance(d, 100000000);
        }
        domain_fake_ops.close(d);
}
