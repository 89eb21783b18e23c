/* SPDX-License-Identifier: MIT */

/* The vulkan source against a scripted loader (fake-vulkan.c, argv[1]) whose devices are
 * CLOCK_MONOTONIC_RAW plus an offset: names and aliases, units (52.083 ns ticks, 36 valid bits),
 * samples that hold the truth across a wrap of the counter, the KHR extension and a device
 * without a host domain, a lost device (unavailable, backoff, back with a new generation), and
 * a machine without a loader. */

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "domain-extra.h"
#include "domain.h"
#include "fake-vulkan.h"
#include "tap.h"
#include "time-util.h"
#include "vulkan.h"

#define BURST_SAMPLES 8
#define WRAP_AHEAD_NS INT64_C(100000000)        /* the 36-bit counter wraps 100 ms into the test */
#define INTEL_PERIOD_NS ((double) (float) 52.083333333333336)

static fake_vulkan_configure_fn fake_configure;
static fake_vulkan_set_lost_fn fake_set_lost;
static fake_vulkan_set_offset_fn fake_set_offset;
static fake_vulkan_state_fn fake_state;

static const char *extra(const DomainStatus *s, const char *key) {
        return domain_extra_text(s, key);
}

static bool extra_is(const DomainStatus *s, const char *key, const char *want) {
        const char *v = extra(s, key);

        return v && strcmp(v, want) == 0;
}

/* The device time (in the domain's ns, after unwrapping) at reference r is r + offset_ns; does
 * the box meet that line? */
static bool box_holds(const Sample *s, long double offset_ns) {
        long double lo = (long double) s->r0_ns + offset_ns, hi = (long double) s->r1_ns + offset_ns;

        return s->r0_ns <= s->r1_ns && s->x_lo_ns <= s->x_hi_ns && lo <= (long double) s->x_hi_ns &&
               hi >= (long double) s->x_lo_ns;
}

static void test_enumerate(const VulkanConfig *config) {
        DomainInfo infos[8];
        size_t n = 0;

        is_int(domain_vulkan_ops.enumerate(config, infos, 8, &n), 0, "enumerate");
        is_int(n, 4, "two calibrateable devices, each with its alias; the third has no extension, the "
               "fourth is a CPU");
        if (n != 4)
                return;
        ok(strcmp(infos[0].name, "gpu0") == 0 && infos[0].view_of[0] == '\0', "gpu0");
        ok(strcmp(infos[1].name, "gpu-pci-0000:00:02.0") == 0 && strcmp(infos[1].view_of, "gpu0") == 0,
           "gpu0's alias from its PCI address, as lspci -D writes it: %s", infos[1].name);
        ok(infos[0].unit.period_ns == INTEL_PERIOD_NS && infos[0].unit.wrap_bits == 36,
           "gpu0: fractional period, 36 bits");
        ok(infos[0].resolution_ns == 53, "gpu0: resolution 53 ns (got %lld)", (long long) infos[0].resolution_ns);
        ok(strcmp(infos[2].name, "gpu1") == 0, "the KHR device is gpu1 (enumeration order, skipping one)");
        ok(strcmp(infos[3].name, "gpu-fa000000-0000-0000-0000-000000000002") == 0 &&
           strcmp(infos[3].view_of, "gpu1") == 0, "gpu1's alias from its UUID, 8-4-4-4-12: %s", infos[3].name);
        ok(infos[2].unit.period_ns == 1.0 && infos[2].unit.wrap_bits == 0, "gpu1: 1 ns, 64 bits");

        is_int(domain_vulkan_ops.enumerate(config, infos, 3, &n), 0, "enumerate into 3");
        is_int(n, 3, "as many as there is room for");
}

/* gpu0 across the wrap of its 36-bit counter, then lost and back. */
static void test_gpu0(const VulkanConfig *config) {
        const long double wrap_ns = 0x1p36L * INTEL_PERIOD_NS;
        FakeVulkanState state;
        DomainStatus status;
        Domain *d = NULL;
        unsigned bad = 0, wide = 0, bursts = 0, n_fail = 0;
        int64_t until_ns, last_x_ns = 0, offset_ns;
        int r;

        r = domain_vulkan_ops.open("gpu0", config, &d);
        is_int(r, 0, "open gpu0");
        if (r < 0)
                return;

        /* Opening reads no clock: the counter is set to be 4 wraps and WRAP_AHEAD_NS short of the
         * fifth now, and the first reading (the domain counts from there) comes at once. */
        offset_ns = (int64_t) ((0x1p36L * 5 - WRAP_AHEAD_NS / INTEL_PERIOD_NS) * INTEL_PERIOD_NS) -
                    clock_now_ns(CLOCK_MONOTONIC_RAW);
        fake_set_offset(0, offset_ns);
        until_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) + 100 * WRAP_AHEAD_NS;
        while (((long double) last_x_ns <= wrap_ns || bursts < 10) && clock_now_ns(CLOCK_MONOTONIC_RAW) < until_ns) {
                Sample s[BURST_SAMPLES];
                size_t n = 0;

                bursts++;
                if (domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n) < 0 || n == 0) {
                        bad++;
                        continue;
                }
                for (size_t i = 0; i < n; i++) {
                        bad += !box_holds(&s[i], (long double) offset_ns - 4 * wrap_ns);
                        wide += s[i].r1_ns - s[i].r0_ns > 1000;
                        last_x_ns = s[i].x_lo_ns > last_x_ns ? s[i].x_lo_ns : last_x_ns;
                }
        }
        is_int(bad, 0, "every sample holds the truth, across the wrap");
        ok((long double) last_x_ns > wrap_ns, "the count went on past 2^36 ticks (%u bursts)", bursts);
        is_int(wide, 0, "host MONOTONIC_RAW +- 500 ns narrows every window to <= 1 us");

        is_int(domain_vulkan_ops.status(d, &status), 0, "status");
        is_int(status.generation, 1, "generation 1");
        ok(status.device_name && strcmp(status.device_name, "Fake Intel") == 0, "device name");
        ok(status.driver && strcmp(status.driver, "fake") == 0, "driver name");
        ok(extra_is(&status, "pci_bus_id", "0000:00:02.0"), "pci_bus_id");
        ok(extra_is(&status, "valid_bits", "36"), "valid_bits");
        ok(extra_is(&status, "host_domain", "monotonic_raw"), "host_domain");
        ok(extra_is(&status, "max_deviation_ns", "500"), "max_deviation_ns");
        ok(extra_is(&status, "driver_version", "fake 1.0"), "driver_version");
        ok(extra(&status, "uuid") == NULL && extra(&status, "drm_node") == NULL, "no uuid with a PCI id, no DRM node");

        /* Lost: unavailable at once, then retries at most once per wait (1, 2, 4, 4 ... ms). */
        fake_set_lost(true);
        fake_state(&state);
        unsigned calls_before = state.create_device_calls, attempts, n_calls = 0;
        int64_t start_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        r = 0;
        until_ns = start_ns + 30 * INT64_C(1000000);
        while (clock_now_ns(CLOCK_MONOTONIC_RAW) < until_ns) {
                size_t n = 0;
                Sample s[BURST_SAMPLES];

                n_calls++;
                if (domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n) != -ENODEV)
                        n_fail++;
        }
        fake_state(&state);
        attempts = state.create_device_calls - calls_before;
        ok(attempts <= 14, "%u attempts to come back in 30 ms, no more (backoff 1..4 ms)", attempts);
        ok(n_calls > 10 * attempts, "most bursts do not touch the driver (%u bursts)", n_calls);
        /* A loaded machine may not have run us for much of those 30 ms: keep going (5 s at most)
         * until the third attempt, which only a source that keeps retrying makes. */
        until_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) + 5 * INT64_C(1000000000);
        while (attempts < 3 && clock_now_ns(CLOCK_MONOTONIC_RAW) < until_ns) {
                size_t n = 0;
                Sample s[BURST_SAMPLES];

                if (domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n) != -ENODEV)
                        n_fail++;
                fake_state(&state);
                attempts = state.create_device_calls - calls_before;
        }
        ok(attempts >= 3, "and it keeps trying (%u attempts)", attempts);
        is_int(n_fail, 0, "a lost device: every burst fails with -ENODEV");
        is_int(state.devices, 0, "the lost device was destroyed");
        is_int(state.instances, 0, "and its instance");

        /* Back, after a reset: the counter restarts near 0, and counts from there. */
        int64_t reset_offset_ns = 1000 - clock_now_ns(CLOCK_MONOTONIC_RAW);
        fake_set_offset(0, reset_offset_ns);
        fake_set_lost(false);
        until_ns = clock_now_ns(CLOCK_MONOTONIC_RAW) + INT64_C(1000000000);
        bad = 0;
        do {
                Sample s[BURST_SAMPLES];
                size_t n = 0;

                r = domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n);
                for (size_t i = 0; r >= 0 && i < n; i++)
                        bad += !box_holds(&s[i], (long double) reset_offset_ns);
        } while (r < 0 && clock_now_ns(CLOCK_MONOTONIC_RAW) < until_ns);
        is_int(r, 0, "back after the loss");
        is_int(bad, 0, "the new device's samples hold its truth");
        is_int(domain_vulkan_ops.status(d, &status), 0, "status");
        is_int(status.generation, 2, "a new device, a new generation");
        fake_state(&state);
        is_int(state.devices, 1, "one device again");
        is_int(state.duplicate_domains, 0, "no call listed a time domain twice");

        ok(domain_vulkan_ops.close(d) == NULL, "close");
        fake_state(&state);
        ok(state.devices == 0 && state.instances == 0, "close releases device and instance");
}

/* gpu1: the KHR extension, 1 ns, no host domain: our bracket alone. */
static void test_gpu1(const VulkanConfig *config, int64_t offset_ns) {
        DomainStatus status;
        Domain *d = NULL;
        Sample s[BURST_SAMPLES];
        size_t n = 0;
        unsigned bad = 0;
        int r;

        r = domain_vulkan_ops.open("gpu1", config, &d);
        is_int(r, 0, "open gpu1");
        if (r < 0)
                return;
        for (int b = 0; b < 100; b++) {
                if (domain_vulkan_ops.sample_burst(d, s, BURST_SAMPLES, &n) < 0 || n == 0) {
                        bad++;
                        continue;
                }
                for (size_t i = 0; i < n; i++)
                        bad += !box_holds(&s[i], (long double) offset_ns);
        }
        is_int(bad, 0, "KHR, no host domain: samples hold the truth");
        is_int(domain_vulkan_ops.status(d, &status), 0, "status");
        ok(extra_is(&status, "host_domain", "none"), "host_domain none");
        ok(extra_is(&status, "extension", "VK_KHR_calibrated_timestamps"), "uses the KHR extension");
        ok(extra_is(&status, "uuid", "fa000000-0000-0000-0000-000000000002"), "uuid, 8-4-4-4-12");
        domain_vulkan_ops.close(d);
}

/* A software rasterizer (type CPU) only when asked, and then after the GPUs it follows. */
static void test_software(const VulkanConfig *config) {
        VulkanConfig software = *config;
        DomainInfo infos[8];
        Domain *d = NULL;
        size_t n = 0;

        is_int(domain_vulkan_ops.open("gpu2", config, &d), -ENOENT, "the CPU device is no gpu2 unless asked");
        software.software = true;
        is_int(domain_vulkan_ops.enumerate(&software, infos, 8, &n), 0, "enumerate with software rasterizers");
        is_int(n, 6, "three devices and their aliases");
        if (n == 6)
                ok(strcmp(infos[4].name, "gpu2") == 0 &&
                   strcmp(infos[5].name, "gpu-fa000000-0000-0000-0000-000000000003") == 0 &&
                   strcmp(infos[5].view_of, "gpu2") == 0, "the CPU device is gpu2, alias %s", infos[5].name);
        is_int(domain_vulkan_ops.open("gpu2", &software, &d), 0, "asked, gpu2 opens");
        d = domain_vulkan_ops.close(d);
}

static void test_no_loader(void) {
        const VulkanConfig none = { .loader = "/nonexistent/libvulkan.so.1" };
        DomainInfo infos[4];
        Domain *d = NULL;
        size_t n = 99;

        is_int(domain_vulkan_ops.enumerate(&none, infos, 4, &n), 0, "no loader: enumerate succeeds");
        is_int(n, 0, "no loader: no GPU domains");
        is_int(domain_vulkan_ops.open("gpu0", &none, &d), -ENOENT, "no loader: gpu0 cannot be opened");
}

static void test_no_driver(const VulkanConfig *config) {
        DomainInfo infos[4];
        size_t n = 99;

        fake_configure(NULL, 0);
        is_int(domain_vulkan_ops.enumerate(config, infos, 4, &n), 0, "no driver: enumerate succeeds");
        is_int(n, 0, "no driver: no GPU domains");
}

int main(int argc, char **argv) {
        void *dl;
        int64_t now_ns;

        tap_args(argc, argv, 1, "LIBFAKE_VULKAN");
        dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        ok(dl != NULL, "fake loader opened: %s", dl ? argv[1] : dlerror());
        if (!dl)
                return done_testing();
        fake_configure = (fake_vulkan_configure_fn) dlsym(dl, "fake_vulkan_configure");
        fake_set_lost = (fake_vulkan_set_lost_fn) dlsym(dl, "fake_vulkan_set_lost");
        fake_set_offset = (fake_vulkan_set_offset_fn) dlsym(dl, "fake_vulkan_set_offset");
        fake_state = (fake_vulkan_state_fn) dlsym(dl, "fake_vulkan_state");

        now_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        const FakeVulkanDevice devices[] = {
                {
                        .name = "Fake Intel", .calibrated = true, .host_raw = true, .pci = true,
                        .period_ns = INTEL_PERIOD_NS, .valid_bits = 36, .max_deviation_ns = 500,
                },
                { .name = "No Calibration", .calibrated = false, .period_ns = 1.0, .valid_bits = 64 },
                {
                        .name = "Fake KHR", .calibrated = true, .khr = true, .host_none = true,
                        .period_ns = 1.0, .valid_bits = 64, .offset_ns = -now_ns + 12345,
                },
                { .name = "Fake llvmpipe", .calibrated = true, .cpu = true, .period_ns = 1.0, .valid_bits = 64 },
        };
        fake_configure(devices, 4);

        const VulkanConfig config = {
                .loader = argv[1],
                .retry_min_ns = INT64_C(1000000),
                .retry_max_ns = INT64_C(4000000),
        };
        test_enumerate(&config);
        test_gpu0(&config);
        test_gpu1(&config, devices[2].offset_ns);
        test_software(&config);
        test_no_loader();
        test_no_driver(&config);

        dlclose(dl);
        return done_testing();
}
