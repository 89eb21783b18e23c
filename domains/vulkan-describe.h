/* SPDX-License-Identifier: MIT */
#pragma once

/* What the vulkan source says of a device: its domain entries (gpuN and the alias), and the
 * strings of its status (kept here, since DomainStatus only borrows them). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "drm.h"
#include "vulkan-loader.h"

typedef struct GpuDescription {
        bool have_drm;
        DrmNode drm;
        char device_id[40];                             /* PCI address or UUID */
        char driver_version[VK_MAX_DRIVER_INFO_SIZE];
} GpuDescription;

/* Device ticks: period timestampPeriod, wrapping at timestampValidBits below 64. */
int gpu_device_unit(const GpuDeviceInfo *dev, DomainUnit *ret);

/* gpuN (index N), then its view when the device has a PCI address or a UUID and n_max allows.
 * Returns how many entries were written. */
int gpu_device_infos(unsigned index, const GpuDeviceInfo *dev, DomainInfo *ret_infos, size_t n_max);

/* Works out the strings once per device: the DRM node and driver version come from libdrm
 * where the system has the node, else the Vulkan driver's own words. */
void gpu_describe(const GpuDeviceInfo *dev, GpuDescription *ret);

/* The status of an open device; best_max_deviation_ns < 0: none seen yet. */
void gpu_status(const GpuDeviceInfo *dev, GpuDescription *desc, int64_t best_max_deviation_ns,
                uint64_t generation, DomainStatus *ret);
