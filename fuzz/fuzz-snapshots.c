/* SPDX-License-Identifier: MIT */

/* The JSON snapshot-file loader (timeconv_snapshots_load_buffer()) on any bytes; what loads is
 * then converted between its domains in both modes, at values that probe the edges, checking
 * the promises of timeconv.h and snapshot-graph.h. */

#include <errno.h>

#include "fuzz-input.h"
#include "timeconv.h"

/* Conversions are pairs of the first few domains: enough to reach every code path of a hop. */
#define DOMAINS_TRIED 6

static void check_convert(const struct timeconv_snapshots *s, int mode, const char *from, const char *to,
                          int64_t value) {
        int64_t result = 111, uncertainty_ns = 222;
        int r;

        r = timeconv_snapshots_convert(s, mode, from, to, value, &result, &uncertainty_ns);
        fuzz_check(r == 0 || r == -ENOENT || r == -ENOLINK || r == -ERANGE || r == -EINVAL,
                   "%s -> %s %lld: %d", from, to, (long long) value, r);
        if (r < 0) {
                fuzz_check(result == 111 && uncertainty_ns == 222, "written on failure %d", r);
                return;
        }
        fuzz_check(uncertainty_ns >= 0, "%s -> %s %lld: uncertainty %lld", from, to, (long long) value,
                   (long long) uncertainty_ns);
        if (strcmp(from, to) == 0)
                fuzz_check(result == value, "%s to itself: %lld -> %lld", from, (long long) value,
                           (long long) result);
}

static void check_loaded(const struct timeconv_snapshots *s, uint64_t seed) {
        const int64_t values[] = {
                0, 1, -1, 1000, INT64_MIN, INT64_MAX, INT64_C(1000000000000000000), (int64_t) seed,
        };
        size_t n = timeconv_snapshots_count_domains(s);
        const char *names[DOMAINS_TRIED];

        fuzz_check(n <= 256, "%zu domains", n);
        fuzz_check(!timeconv_snapshots_domain_name(s, n), "a name past the end");
        for (size_t i = 0; i < n; i++) {
                const char *name = timeconv_snapshots_domain_name(s, i);

                fuzz_check(name && *name && strlen(name) <= 63, "domain %zu", i);
                if (i < DOMAINS_TRIED)
                        names[i] = name;
        }
        if (n > DOMAINS_TRIED)
                n = DOMAINS_TRIED;

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
                                check_convert(s, TIMECONV_MODE_NEAREST, names[i], names[j], values[k]);
                                check_convert(s, TIMECONV_MODE_DRIFT, names[i], names[j], values[k]);
                        }
        if (n > 0)
                check_convert(s, TIMECONV_MODE_NEAREST, names[0], "no-such-domain", 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct timeconv_snapshots *s = (struct timeconv_snapshots *) &size;   /* a sentinel */
        struct timeconv_error error = { .line = 12345 };
        uint64_t seed = 0;
        int r;

        /* One value to convert comes from the input itself, so the fuzzer can steer it. */
        for (size_t i = 0; i < size; i++)
                seed = seed * 1099511628211u + data[i];

        r = timeconv_snapshots_load_buffer((const char *) data, size, &s, &error);
        fuzz_check(r == 0 || r == -EBADMSG || r == -ENOMEM, "load returned %d", r);
        if (r < 0) {
                fuzz_check(s == (struct timeconv_snapshots *) &size, "ret written on failure");
                fuzz_check(memchr(error.message, 0, sizeof(error.message)), "message not terminated");
                fuzz_check(r != -EBADMSG || error.message[0], "a refusal without a message");
                return 0;
        }

        fuzz_check(s, "no snapshots on success");
        check_loaded(s, seed);
        timeconv_snapshots_free(s);
        return 0;
}
