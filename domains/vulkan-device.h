/* SPDX-License-Identifier: MIT */
#pragma once

/* A minimal logical device with the calibrated-timestamps extension, and one bracketed call of
 * vkGetCalibratedTimestamps on it. */

#include <stdint.h>

#include "vulkan-loader.h"

typedef struct VulkanDevice {
        VkDevice device;
        PFN_vkDestroyDevice destroy_device;
        PFN_vkGetCalibratedTimestampsEXT get_calibrated_timestamps;
        /* DEVICE, then the host domain if any: never one domain twice (the spec forbids it). */
        VkCalibratedTimestampInfoEXT infos[2];
        uint32_t n_infos;
} VulkanDevice;

/* One reading: CLOCK_MONOTONIC_RAW before and after the call, and what the call gave. */
typedef struct GpuReading {
        int64_t r0_ns;
        int64_t r1_ns;
        uint64_t device_ticks;
        uint64_t host_ns;               /* unset when the device has no host domain */
        uint64_t max_deviation_ns;
} GpuReading;

/* The driver's error (vulkan_result_to_errno()) when the device cannot be created: -ENODEV
 * lost or not initialised, -ENOMEM, ...; -EOPNOTSUPP when it lacks the functions we call. */
int vulkan_device_new(VulkanInstance *vi, const GpuDeviceInfo *info, VulkanDevice **ret);
VulkanDevice *vulkan_device_free(VulkanDevice *vd);

static inline void vulkan_device_freep(VulkanDevice **vd) {
        vulkan_device_free(*vd);
}

/* The driver's error (vulkan_result_to_errno(): -ENODEV for VK_ERROR_DEVICE_LOST) when the call
 * fails: whatever it was, the device is no use any more. */
int vulkan_device_read(VulkanDevice *vd, GpuReading *ret);
