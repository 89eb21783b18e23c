/* SPDX-License-Identifier: MIT */
#pragma once

/* The Vulkan loader, opened at run time (a machine without it still runs the daemon), an
 * instance of it, and what the vulkan source needs to know of each physical device that offers
 * calibrated timestamps. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#define VULKAN_LOADER_DEFAULT "libvulkan.so.1"

/* Promoted from the EXT in Vulkan 1.3.280 with the same types and values; older headers lack it. */
#define VULKAN_KHR_CALIBRATED_TIMESTAMPS "VK_KHR_calibrated_timestamps"

typedef struct VulkanInstance {
        void *dl;
        VkInstance instance;
        PFN_vkGetInstanceProcAddr get_instance_proc_addr;
        PFN_vkDestroyInstance destroy_instance;
        PFN_vkEnumeratePhysicalDevices enumerate_physical_devices;
        PFN_vkEnumerateDeviceExtensionProperties enumerate_device_extensions;
        PFN_vkGetPhysicalDeviceProperties get_properties;
        PFN_vkGetPhysicalDeviceProperties2 get_properties2;     /* NULL before Vulkan 1.1 */
        PFN_vkGetPhysicalDeviceQueueFamilyProperties get_queue_families;
        PFN_vkCreateDevice create_device;
        PFN_vkGetDeviceProcAddr get_device_proc_addr;
} VulkanInstance;

typedef struct GpuDeviceInfo {
        VkPhysicalDevice physical;
        char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
        char driver_name[VK_MAX_DRIVER_NAME_SIZE];      /* "" when the driver does not say */
        char driver_info[VK_MAX_DRIVER_INFO_SIZE];
        uint32_t driver_version;
        uint32_t vendor_id;
        VkPhysicalDeviceType type;                      /* CPU: a software rasterizer (lavapipe) */
        bool have_uuid;
        uint8_t uuid[VK_UUID_SIZE];
        bool have_pci;
        uint32_t pci_domain, pci_bus, pci_device, pci_function;
        bool have_render, have_primary;                 /* VK_EXT_physical_device_drm */
        int64_t render_major, render_minor, primary_major, primary_minor;
        double period_ns;                               /* timestampPeriod */
        unsigned valid_bits;                            /* of queue_family */
        uint32_t queue_family;
        const char *extension;                          /* the calibrated-timestamps one we use */
        PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT get_time_domains;
        bool host_is_raw;                               /* host domain CLOCK_MONOTONIC_RAW */
        bool have_host;                                 /* false: DEVICE only, our bracket alone */
} GpuDeviceInfo;

/* The errno of a VkResult, the one place a driver's answer becomes ours: 0 for VK_SUCCESS and
 * VK_INCOMPLETE (a full array is not a failure); -ENOMEM out of memory, -ENODEV no driver or no
 * device (incompatible, not initialised, lost), -EOPNOTSUPP an extension or feature missing,
 * -EIO anything else. */
int vulkan_result_to_errno(VkResult result);

/* Opens the loader (path NULL: VULKAN_LOADER_DEFAULT) and creates an instance. -ENOENT when there
 * is no loader, -EIO when it lacks an entry point, else the driver's error
 * (vulkan_result_to_errno(): -ENODEV when it has no driver, no ICD). */
int vulkan_instance_new(const char *path, VulkanInstance **ret);
VulkanInstance *vulkan_instance_free(VulkanInstance *vi);

static inline void vulkan_instance_freep(VulkanInstance **vi) {
        vulkan_instance_free(*vi);
}

#define _cleanup_vulkan_instance_ __attribute__((cleanup(vulkan_instance_freep)))

/* The physical devices that can be calibrated (the extension, a DEVICE time domain, a queue
 * with timestamps), in enumeration order, up to n_max. Fails with the driver's error only when
 * it cannot enumerate at all. */
int vulkan_instance_list(VulkanInstance *vi, GpuDeviceInfo *ret_infos, size_t n_max, size_t *ret_n);

/* The stable name of a device: "gpu-pci-DDDD:BB:DD.F" from its PCI address (as lspci -D and
 * sysfs write it), else "gpu-" and its UUID as 8-4-4-4-12 hex digits; -ENODATA when it has
 * neither. */
int vulkan_device_alias(const GpuDeviceInfo *info, char *ret, size_t size);

/* "0000:01:00.0", or the UUID as 8-4-4-4-12 hex digits; -ENODATA when it has neither. */
int vulkan_device_id(const GpuDeviceInfo *info, char *ret, size_t size);
