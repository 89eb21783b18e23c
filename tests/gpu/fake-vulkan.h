/* SPDX-License-Identifier: MIT */
#pragma once

/* A stand-in for the Vulkan loader (libfake-vulkan.so, given to the vulkan source as
 * VulkanConfig.loader): scripted physical devices whose clocks are CLOCK_MONOTONIC_RAW plus an
 * offset, so the truth is known, and a switch that loses the device. The test dlopens the same
 * file to reach the controls below: one copy of the library, one state. */

#include <stdbool.h>
#include <stdint.h>

typedef struct FakeVulkanDevice {
        const char *name;
        bool calibrated;                /* offers a calibrated-timestamps extension */
        bool khr;                       /* VK_KHR_calibrated_timestamps instead of the EXT */
        bool host_raw;                  /* time domains DEVICE + MONOTONIC + MONOTONIC_RAW */
        bool host_none;                 /* DEVICE only (else DEVICE + MONOTONIC) */
        bool pci;                       /* VK_EXT_pci_bus_info, at 0000:00:02.0 */
        bool cpu;                       /* VK_PHYSICAL_DEVICE_TYPE_CPU (a software rasterizer) */
        double period_ns;
        unsigned valid_bits;
        int64_t offset_ns;              /* device time = CLOCK_MONOTONIC_RAW + offset */
        uint64_t max_deviation_ns;
} FakeVulkanDevice;

typedef struct FakeVulkanState {
        unsigned instances;             /* alive now */
        unsigned devices;               /* logical devices alive now */
        unsigned create_device_calls;
        unsigned duplicate_domains;     /* calls that listed a time domain twice */
        unsigned calls;                 /* of vkGetCalibratedTimestamps */
} FakeVulkanState;

typedef void (*fake_vulkan_configure_fn)(const FakeVulkanDevice *devices, unsigned n);
/* lost: calls on existing devices fail with VK_ERROR_DEVICE_LOST and no device can be created. */
typedef void (*fake_vulkan_set_lost_fn)(bool lost);
/* The device's clock after a reset: a new offset for device index i. */
typedef void (*fake_vulkan_set_offset_fn)(unsigned i, int64_t offset_ns);
typedef void (*fake_vulkan_state_fn)(FakeVulkanState *ret);
