/* SPDX-License-Identifier: MIT */

/* GPU device time: every physical device with calibrated timestamps (a software rasterizer only
 * when VulkanConfig.software asks) is a domain gpuN (N in enumeration order) in device ticks, with a view named from its PCI address or UUID. Each open
 * domain has its own instance and a minimal logical device; a burst calls
 * vkGetCalibratedTimestamps for DEVICE and the host domain between two reads of
 * CLOCK_MONOTONIC_RAW. A failed call makes the domain unavailable; later bursts try to get a
 * device back after a wait that doubles per failure, and a new device is a new generation. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "burst.h"
#include "cleanup.h"
#include "domain.h"
#include "source-time.h"
#include "vulkan-describe.h"
#include "vulkan-device.h"
#include "vulkan-loader.h"
#include "vulkan-ticks.h"
#include "vulkan.h"

#define GPU_DEVICES_MAX 16
#define GPU_TRIES_PER_SAMPLE 3          /* a burst of n reads at most 3n times */
#define GPU_RETRY_MIN_NS (INT64_C(1) * 1000000000)
#define GPU_RETRY_MAX_NS (INT64_C(64) * 1000000000)

struct Domain {
        DomainInfo info;
        unsigned index;                 /* N of gpuN */
        char *loader;
        bool software;                  /* VulkanConfig.software */

        GpuDeviceInfo device_info;      /* of the latest device */
        VulkanInstance *instance;
        VulkanDevice *device;           /* NULL while unavailable */
        GpuTicks ticks;
        GpuThreshold threshold;
        int read_error;                 /* the first failure of the burst under way */

        uint64_t generation;            /* +1 per device created */
        Backoff retry;                  /* CLOCK_MONOTONIC_RAW */
        int64_t best_max_deviation_ns;  /* -1: none seen */

        GpuDescription description;     /* what status() hands out */
};
_Static_assert(offsetof(struct Domain, info) == 0, "domain_info_first() reads it there");

static bool name_listed(const DomainInfo *infos, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(infos[i].name, name) == 0)
                        return true;
        return false;
}

/* The devices this source offers, in enumeration order: those vulkan_instance_list() gives,
 * without the software rasterizers unless software. gpuN is the Nth of these, so a skipped CPU
 * device takes no number. */
static int list_devices(VulkanInstance *vi, bool software, GpuDeviceInfo *ret_infos, size_t n_max, size_t *ret_n) {
        size_t n = 0, kept = 0;
        int r;

        r = vulkan_instance_list(vi, ret_infos, n_max, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (software || ret_infos[i].type != VK_PHYSICAL_DEVICE_TYPE_CPU)
                        ret_infos[kept++] = ret_infos[i];
        *ret_n = kept;
        return 0;
}

static int vulkan_enumerate(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n) {
        const VulkanConfig *c = config;
        _cleanup_vulkan_instance_ VulkanInstance *vi = NULL;
        GpuDeviceInfo devices[GPU_DEVICES_MAX];
        size_t n_devices = 0, n = 0;
        int r;

        if ((!ret_infos && n_max > 0) || !ret_n)
                return -EINVAL;

        /* No loader, no driver, a driver that fails: no GPU domains, which is not an error. */
        r = vulkan_instance_new(c ? c->loader : NULL, &vi);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && list_devices(vi, c && c->software, devices, GPU_DEVICES_MAX, &n_devices) < 0)
                n_devices = 0;

        for (size_t i = 0; i < n_devices && n < n_max; i++) {
                DomainInfo pair[2];
                int k;

                k = gpu_device_infos((unsigned) i, &devices[i], pair, n_max - n < 2 ? n_max - n : 2);
                if (k < 0)
                        continue;
                /* Two drivers for one device give one UUID: the alias goes to the first. */
                for (int j = 0; j < k; j++)
                        if (!name_listed(ret_infos, n, pair[j].name))
                                ret_infos[n++] = pair[j];
        }

        *ret_n = n;
        return 0;
}

/* Whether dev is the device this domain was opened on. */
static bool same_device(const Domain *d, const GpuDeviceInfo *dev, size_t position) {
        const GpuDeviceInfo *old = &d->device_info;

        if (old->have_uuid)
                return dev->have_uuid && memcmp(old->uuid, dev->uuid, VK_UUID_SIZE) == 0;
        if (old->have_pci)
                return dev->have_pci && old->pci_domain == dev->pci_domain && old->pci_bus == dev->pci_bus &&
                       old->pci_device == dev->pci_device && old->pci_function == dev->pci_function;
        return position == d->index;
}

/* This domain's device among those listed: the first time the one at its index (-ENOENT: the
 * name gpuN names no device), after that the same hardware (-ENODEV: the device went away). */
static int gpu_find(const Domain *d, const GpuDeviceInfo *devices, size_t n, const GpuDeviceInfo **ret) {
        for (size_t i = 0; i < n; i++)
                if (d->generation == 0 ? i == d->index : same_device(d, &devices[i], i)) {
                        *ret = &devices[i];
                        return 0;
                }
        return d->generation == 0 ? -ENOENT : -ENODEV;
}

/* A new instance and device for this domain (gpu_find()). Errors travel up as the loader, the
 * driver or gpu_find() named them. */
static int gpu_connect(Domain *d) {
        _cleanup_vulkan_instance_ VulkanInstance *vi = NULL;
        _cleanup_(vulkan_device_freep) VulkanDevice *vd = NULL;
        GpuDeviceInfo devices[GPU_DEVICES_MAX];
        const GpuDeviceInfo *dev;
        DomainUnit unit;
        size_t n = 0;
        int r;

        r = vulkan_instance_new(d->loader, &vi);
        if (r < 0)
                return r;
        r = list_devices(vi, d->software, devices, GPU_DEVICES_MAX, &n);
        if (r < 0)
                return r;
        r = gpu_find(d, devices, n, &dev);
        if (r < 0)
                return r;

        r = gpu_device_unit(dev, &unit);
        if (r < 0)
                return r;
        /* The daemon keeps the unit it was told at enumeration: a device that changed it is not
         * the one we know. */
        if (d->generation > 0 && (unit.period_ns != d->info.unit.period_ns || unit.wrap_bits != d->info.unit.wrap_bits))
                return -ENODEV;

        r = vulkan_device_new(vi, dev, &vd);
        if (r < 0)
                return r;

        d->device = vulkan_device_free(d->device);
        d->instance = vulkan_instance_free(d->instance);
        d->instance = TAKE_PTR(vi);
        d->device = TAKE_PTR(vd);
        d->device_info = *dev;
        d->info.unit = unit;
        (void) gpu_ticks_init(&d->ticks, dev->period_ns, dev->valid_bits);
        d->generation++;
        backoff_succeeded(&d->retry);
        gpu_describe(&d->device_info, &d->description);
        return 0;
}

static void gpu_disconnect(Domain *d, int64_t now_ns) {
        d->device = vulkan_device_free(d->device);
        d->instance = vulkan_instance_free(d->instance);
        backoff_failed(&d->retry, now_ns);
}

/* "gpuN" with N in decimal, no sign and no leading zero. */
static int parse_gpu_name(const char *name, unsigned *ret) {
        unsigned long v;
        char *end;

        if (strncmp(name, "gpu", 3) != 0 || name[3] < '0' || name[3] > '9' || (name[3] == '0' && name[4]))
                return -ENOENT;
        errno = 0;
        v = strtoul(name + 3, &end, 10);
        if (errno != 0 || *end || v >= GPU_DEVICES_MAX)
                return -ENOENT;
        *ret = (unsigned) v;
        return 0;
}

static Domain *vulkan_close(Domain *d);

static inline void vulkan_closep(Domain **d) {
        vulkan_close(*d);
}

static int vulkan_open(const char *name, const void *config, Domain **ret) {
        const VulkanConfig *c = config;
        _cleanup_(vulkan_closep) Domain *d = NULL;
        DomainInfo infos[2];
        unsigned index;
        int r;

        if (!name || !ret)
                return -EINVAL;
        r = parse_gpu_name(name, &index);
        if (r < 0)
                return r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->index = index;
        d->software = c && c->software;
        d->best_max_deviation_ns = -1;
        backoff_init(&d->retry, c && c->retry_min_ns > 0 ? c->retry_min_ns : GPU_RETRY_MIN_NS,
                     c && c->retry_max_ns > 0 ? c->retry_max_ns : GPU_RETRY_MAX_NS);
        if (c && c->loader) {
                d->loader = strdup(c->loader);
                if (!d->loader)
                        return -ENOMEM;
        }

        r = gpu_connect(d);
        if (r < 0)
                return r;
        if (gpu_device_infos(index, &d->device_info, infos, 1) != 1)
                return -EIO;
        d->info = infos[0];

        *ret = TAKE_PTR(d);
        return 0;
}

static int gpu_read_sample(void *userdata, Sample *ret) {
        Domain *d = userdata;
        const GpuDeviceInfo *dev = &d->device_info;
        GpuReading reading;
        Sample s;
        int64_t count, max_deviation_ns;
        int r;

        /* Once a call failed the device is gone: the rest of the burst must not touch it. */
        if (d->read_error < 0)
                return d->read_error;

        r = vulkan_device_read(d->device, &reading);
        if (r >= 0)
                r = gpu_ticks_unwrap(&d->ticks, reading.device_ticks, reading.r0_ns, &count);
        if (r >= 0)
                r = gpu_ticks_interval(&d->ticks.unit, count, &s.x_lo_ns, &s.x_hi_ns);
        if (r < 0) {
                d->read_error = r;
                return r;
        }
        gpu_read_window(reading.r0_ns, reading.r1_ns, dev->have_host && dev->host_is_raw, reading.host_ns,
                        reading.max_deviation_ns, &s.r0_ns, &s.r1_ns);

        max_deviation_ns = reading.max_deviation_ns > INT64_MAX ? INT64_MAX : (int64_t) reading.max_deviation_ns;
        if (dev->have_host && (d->best_max_deviation_ns < 0 || max_deviation_ns < d->best_max_deviation_ns))
                d->best_max_deviation_ns = max_deviation_ns;

        *ret = s;
        return 0;
}

static int vulkan_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        unsigned max_tries;
        size_t n = 0;
        int64_t now_ns;
        int r;

        if (!d || (!samples && n_max > 0) || !ret_n)
                return -EINVAL;
        if (n_max == 0) {
                *ret_n = 0;
                return 0;
        }

        if (!d->device) {
                now_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
                if (!backoff_due(&d->retry, now_ns))
                        return -ENODEV;
                r = gpu_connect(d);
                if (r < 0) {
                        gpu_disconnect(d, now_ns);
                        return r;
                }
        }

        max_tries = n_max > UINT_MAX / GPU_TRIES_PER_SAMPLE ? UINT_MAX : (unsigned) n_max * GPU_TRIES_PER_SAMPLE;
        d->read_error = 0;
        r = burst_collect(gpu_read_sample, d, max_tries, gpu_threshold_good_ns(&d->threshold), samples, n_max, &n);
        /* A call that failed (device lost) condemns the device even when earlier reads were good. */
        if (d->read_error < 0)
                r = d->read_error;
        if (r < 0) {
                gpu_disconnect(d, clock_now_ns(CLOCK_MONOTONIC_RAW));
                return r;
        }

        gpu_threshold_update(&d->threshold, sample_deviation_ns(&samples[0]));
        *ret_n = n;
        return 0;
}

/* A reconnection creates a Vulkan instance and enumerates devices: the driver may take its time
 * (seconds for a GPU waking up), which no event loop should wait for. */
static bool vulkan_burst_may_block(Domain *d) {
        return d && !d->device;
}

static int vulkan_watch_fd(Domain *d) {
        return -EOPNOTSUPP;
}

static int vulkan_status(Domain *d, DomainStatus *ret) {
        if (!d || !ret)
                return -EINVAL;
        gpu_status(&d->device_info, &d->description, d->best_max_deviation_ns, d->generation, ret);
        return 0;
}

static Domain *vulkan_close(Domain *d) {
        if (!d)
                return NULL;
        vulkan_device_free(d->device);
        vulkan_instance_free(d->instance);
        free(d->loader);
        free(d);
        return NULL;
}

DOMAIN_OPS_DEFINE(vulkan, .watch_fd = vulkan_watch_fd, .status = vulkan_status,
                  .burst_may_block = vulkan_burst_may_block);
