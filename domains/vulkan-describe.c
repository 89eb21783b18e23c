/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock-id.h"
#include "vulkan-describe.h"
#include "vulkan-ticks.h"

int gpu_device_unit(const GpuDeviceInfo *dev, DomainUnit *ret) {
        GpuTicks ticks;
        int r;

        r = gpu_ticks_init(&ticks, dev->period_ns, dev->valid_bits);
        if (r < 0)
                return r;
        *ret = ticks.unit;
        return 0;
}

int gpu_device_infos(unsigned index, const GpuDeviceInfo *dev, DomainInfo *ret_infos, size_t n_max) {
        DomainInfo gpu = { .monotonic = true, .unit_name = "tick" };
        char alias[DOMAIN_NAME_MAX];
        double res;
        int r;

        if (n_max == 0)
                return 0;
        r = gpu_device_unit(dev, &gpu.unit);
        if (r < 0)
                return r;
        snprintf(gpu.name, sizeof(gpu.name), "gpu%u", index);
        /* One tick, rounded up to whole ns. */
        res = dev->period_ns < 1.0 ? 1.0 : dev->period_ns;
        gpu.resolution_ns = (int64_t) res + ((double) (int64_t) res < res);
        gpu.perfetto_id = clock_id_for_name(gpu.name);
        ret_infos[0] = gpu;

        if (n_max < 2 || vulkan_device_alias(dev, alias, sizeof(alias)) < 0)
                return 1;
        ret_infos[1] = gpu;
        strcpy(ret_infos[1].name, alias);
        ret_infos[1].perfetto_id = clock_id_for_name(alias);
        strcpy(ret_infos[1].view_of, gpu.name);
        return 2;
}

void gpu_describe(const GpuDeviceInfo *dev, GpuDescription *ret) {
        GpuDescription d = {};
        int r = -ENOENT;

        if (vulkan_device_id(dev, d.device_id, sizeof(d.device_id)) < 0)
                d.device_id[0] = '\0';
        if (dev->driver_info[0])
                snprintf(d.driver_version, sizeof(d.driver_version), "%s", dev->driver_info);
        else
                snprintf(d.driver_version, sizeof(d.driver_version), "0x%08x", dev->driver_version);

        if (dev->have_render)
                r = drm_node_from_devnum(dev->render_major, dev->render_minor, &d.drm);
        else if (dev->have_primary)
                r = drm_node_from_devnum(dev->primary_major, dev->primary_minor, &d.drm);
        else if (dev->have_pci)
                r = drm_node_from_pci(dev->pci_domain, dev->pci_bus, dev->pci_device, dev->pci_function, &d.drm);
        d.have_drm = r >= 0;
        if (d.have_drm && d.drm.driver_version[0])
                snprintf(d.driver_version, sizeof(d.driver_version), "%s", d.drm.driver_version);
        *ret = d;
}

static void add_extra(DomainStatus *s, DomainExtra e) {
        if (s->n_extras < DOMAIN_EXTRAS_MAX)
                s->extras[s->n_extras++] = e;
}

/* A string entry only when there is something to say. */
static void add_string(DomainStatus *s, const char *key, const char *value) {
        if (value && value[0])
                add_extra(s, DOMAIN_EXTRA_S(key, value));
}

void gpu_status(const GpuDeviceInfo *dev, GpuDescription *desc, int64_t best_max_deviation_ns,
                uint64_t generation, DomainStatus *ret) {
        DomainStatus s = {
                .generation = generation,
                .device_name = dev->device_name,
                .driver = dev->driver_name[0] ? dev->driver_name : NULL,
        };

        /* Most telling first: a consumer with less room than DOMAIN_EXTRAS_MAX keeps these. */
        add_string(&s, "host_domain", !dev->have_host ? "none" : dev->host_is_raw ? "monotonic_raw" : "monotonic");
        add_extra(&s, DOMAIN_EXTRA_U("valid_bits", dev->valid_bits));
        add_string(&s, dev->have_pci ? "pci_bus_id" : "uuid", desc->device_id);
        if (desc->have_drm)
                add_string(&s, "drm_node", desc->drm.path);
        if (best_max_deviation_ns >= 0)
                add_extra(&s, DOMAIN_EXTRA_X("max_deviation_ns", best_max_deviation_ns));
        add_string(&s, "driver_version", desc->driver_version);
        add_string(&s, "extension", dev->extension);
        *ret = s;
}
