/* SPDX-License-Identifier: MIT */

/* The vulkan source on Mesa's lavapipe, in process: a CPU device, left out unless
 * VulkanConfig.software asks; asked, it lists gpu0 and its alias (the UUID in 8-4-4-4-12 form),
 * opens it, and its samples hold the truth (lavapipe's device time is CLOCK_MONOTONIC in ns). meson sets
 * VK_ICD_FILENAMES to lavapipe's ICD file; argv[1] (optional) is that file, to skip without it. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domain-extra.h"
#include "domain.h"
#include "tap.h"
#include "time-util.h"
#include "vulkan.h"

#define BURSTS 200
#define BURST_SAMPLES 8

static const char *extra(const DomainStatus *s, const char *key) {
        return domain_extra_text(s, key);
}

static const VulkanConfig software = { .software = true };

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex. */
static bool is_uuid_text(const char *s) {
        for (size_t i = 0; i < 36; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return s[36] == '\0';
}

static void test_enumerate(void) {
        DomainInfo infos[8];
        size_t n = 99;
        int r;

        r = domain_vulkan_ops.enumerate(NULL, infos, 8, &n);
        is_int(r, 0, "enumerate, software rasterizers not asked for");
        is_int(n, 0, "lavapipe is a CPU device: no GPU domain");
        is_int(domain_vulkan_ops.open("gpu0", NULL, &(Domain *) { NULL }), -ENOENT,
               "and gpu0 cannot be opened without asking");

        r = domain_vulkan_ops.enumerate(&software, infos, 8, &n);
        is_int(r, 0, "enumerate with VulkanConfig.software");
        ok(n == 2, "lavapipe: gpu0 and its alias (got %zu)", n);
        if (n < 2)
                return;
        ok(strcmp(infos[0].name, "gpu0") == 0 && infos[0].view_of[0] == '\0', "first is gpu0, not a view");
        ok(infos[0].unit.period_ns == 1.0 && infos[0].unit.wrap_bits == 0, "lavapipe: ns ticks, 64 bits");
        ok(strncmp(infos[1].name, "gpu-", 4) == 0 && is_uuid_text(infos[1].name + 4),
           "alias from the UUID, 8-4-4-4-12: %s", infos[1].name);
        ok(strcmp(infos[1].view_of, "gpu0") == 0, "the alias is a view of gpu0");
        ok(infos[0].perfetto_id != infos[1].perfetto_id && (infos[0].perfetto_id & 0x80000000u),
           "perfetto ids of their own");

        is_int(domain_vulkan_ops.enumerate(&software, infos, 1, &n), 0, "enumerate, room for one");
        is_int(n, 1, "one entry when there is room for one");
}

static void test_samples(void) {
        Domain *d = NULL;
        DomainStatus status;
        int64_t best_ns = INT64_MAX;
        unsigned n_bad = 0, n_samples = 0;
        int r;

        r = domain_vulkan_ops.open("gpu0", &software, &d);
        is_int(r, 0, "open gpu0");
        if (r < 0)
                return;
        is_int(domain_vulkan_ops.open("gpu7", &software, &(Domain *) { NULL }), -ENOENT, "open gpu7: no such device");
        is_int(domain_vulkan_ops.open("gpu01", &software, &(Domain *) { NULL }), -ENOENT, "open gpu01: not a name");
        is_int(domain_vulkan_ops.watch_fd(d), -EOPNOTSUPP, "no fd to watch");

        for (int b = 0; b < BURSTS; b++) {
                Sample s[BURST_SAMPLES];
                size_t n = 0;
                int64_t mono0, mono1;

                mono0 = clock_now_ns(CLOCK_MONOTONIC);
                r = domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n);
                mono1 = clock_now_ns(CLOCK_MONOTONIC);
                if (r < 0 || n == 0) {
                        n_bad++;
                        continue;
                }
                for (size_t i = 0; i < n; i++) {
                        /* The device read lies between the two CLOCK_MONOTONIC reads around the burst. */
                        if (s[i].x_hi_ns < mono0 || s[i].x_lo_ns > mono1 || s[i].r0_ns > s[i].r1_ns)
                                n_bad++;
                        if (s[i].r1_ns - s[i].r0_ns < best_ns)
                                best_ns = s[i].r1_ns - s[i].r0_ns;
                        n_samples++;
                }
        }
        is_int(n_bad, 0, "every burst gives samples that hold CLOCK_MONOTONIC");
        ok(n_samples >= BURSTS, "%u samples", n_samples);
        ok(best_ns < 100000, "best deviation %lld ns", (long long) best_ns);

        r = domain_vulkan_ops.status(d, &status);
        is_int(r, 0, "status");
        is_int(status.generation, 1, "generation 1");
        ok(status.device_name && strncmp(status.device_name, "llvmpipe", 8) == 0, "device name %s",
           status.device_name ?: "(null)");
        ok(status.driver && strcmp(status.driver, "llvmpipe") == 0, "driver %s", status.driver ?: "(null)");
        ok(extra(&status, "host_domain") && strcmp(extra(&status, "host_domain"), "monotonic") == 0,
           "host domain monotonic");
        ok(extra(&status, "valid_bits") && strcmp(extra(&status, "valid_bits"), "64") == 0, "64 valid bits");
        ok(extra(&status, "uuid") && is_uuid_text(extra(&status, "uuid")), "uuid given, 8-4-4-4-12: %s",
           extra(&status, "uuid") ?: "(none)");
        ok(extra(&status, "max_deviation_ns") != NULL, "max deviation given");
        ok(status.n_extras <= DOMAIN_EXTRAS_MAX, "at most DOMAIN_EXTRAS_MAX extras");
        for (size_t i = 0; i < status.n_extras; i++)
                diag("%s = %s", status.extras[i].key, extra(&status, status.extras[i].key));

        ok(domain_vulkan_ops.close(d) == NULL, "close");
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 1, "LAVAPIPE_ICD_JSON");
        tap_require_file(argv[1], "mesa-vulkan-drivers");
        test_enumerate();
        test_samples();
        return done_testing();
}
