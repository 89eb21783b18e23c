/* SPDX-License-Identifier: MIT */
#pragma once

/* The vulkan source's helper to relate a GPU to its /dev/dri node and kernel driver (libdrm).
 * Machines without DRM devices (containers, lavapipe only) have none: -ENOENT. */

#include <stdint.h>

typedef struct DrmNode {
        char path[64];                  /* "/dev/dri/renderD128", or the primary node */
        char driver[32];                /* kernel driver (from sysfs when not a render node), or "" */
        char driver_version[96];        /* "i915 1.6.0 (20201103)"; "" unless a render node opened */
} DrmNode;

/* The node of the device with these numbers (either of its nodes, from VK_EXT_physical_device_drm):
 * its render node when it has one, else the primary one. */
int drm_node_from_devnum(int64_t major, int64_t minor, DrmNode *ret);

/* The same, found by PCI address (VK_EXT_pci_bus_info) for drivers without the DRM extension. */
int drm_node_from_pci(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function, DrmNode *ret);
