/* SPDX-License-Identifier: MIT */

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "vulkan-loader.h"

#define EXTENSIONS_MAX 1024
#define QUEUE_FAMILIES_MAX 64
#define TIME_DOMAINS_MAX 16
#define PHYSICAL_DEVICES_MAX 32

VulkanInstance *vulkan_instance_free(VulkanInstance *vi) {
        if (!vi)
                return NULL;
        if (vi->instance != VK_NULL_HANDLE && vi->destroy_instance)
                vi->destroy_instance(vi->instance, NULL);
        if (vi->dl)
                dlclose(vi->dl);
        free(vi);
        return NULL;
}

int vulkan_result_to_errno(VkResult result) {
        switch (result) {
        case VK_SUCCESS:
        case VK_INCOMPLETE:
                return 0;
        case VK_ERROR_OUT_OF_HOST_MEMORY:
        case VK_ERROR_OUT_OF_DEVICE_MEMORY:
                return -ENOMEM;
        case VK_ERROR_INCOMPATIBLE_DRIVER:
        case VK_ERROR_INITIALIZATION_FAILED:
        case VK_ERROR_DEVICE_LOST:
                return -ENODEV;
        case VK_ERROR_EXTENSION_NOT_PRESENT:
        case VK_ERROR_FEATURE_NOT_PRESENT:
        case VK_ERROR_LAYER_NOT_PRESENT:
                return -EOPNOTSUPP;
        default:
                return -EIO;
        }
}

#define LOAD(vi, field, name)                                                                   \
        ((vi)->field = (__typeof__((vi)->field)) (vi)->get_instance_proc_addr((vi)->instance, name))

int vulkan_instance_new(const char *path, VulkanInstance **ret) {
        _cleanup_vulkan_instance_ VulkanInstance *vi = NULL;
        PFN_vkEnumerateInstanceVersion enumerate_version;
        PFN_vkCreateInstance create_instance;
        uint32_t api_version = VK_API_VERSION_1_0;
        int r;

        if (!ret)
                return -EINVAL;

        vi = calloc(1, sizeof(*vi));
        if (!vi)
                return -ENOMEM;

        vi->dl = dlopen(path ?: VULKAN_LOADER_DEFAULT, RTLD_NOW | RTLD_LOCAL);
        if (!vi->dl)
                return -ENOENT;
        vi->get_instance_proc_addr = (PFN_vkGetInstanceProcAddr) dlsym(vi->dl, "vkGetInstanceProcAddr");
        if (!vi->get_instance_proc_addr)
                return -ENOENT;

        enumerate_version = (PFN_vkEnumerateInstanceVersion)
                vi->get_instance_proc_addr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion");
        create_instance = (PFN_vkCreateInstance) vi->get_instance_proc_addr(VK_NULL_HANDLE, "vkCreateInstance");
        if (!create_instance)
                return -EIO;
        if (enumerate_version && enumerate_version(&api_version) != VK_SUCCESS)
                api_version = VK_API_VERSION_1_0;
        /* 1.1 for vkGetPhysicalDeviceProperties2 (names, UUIDs, PCI and DRM ids); 1.0 still
         * gives what calibration needs. */
        if (api_version > VK_API_VERSION_1_1)
                api_version = VK_API_VERSION_1_1;

        VkApplicationInfo app = {
                .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                .pApplicationName = "timeconvd",
                .pEngineName = "timeconv",
                .apiVersion = api_version,
        };
        VkInstanceCreateInfo create_info = {
                .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                .pApplicationInfo = &app,
        };
        r = vulkan_result_to_errno(create_instance(&create_info, NULL, &vi->instance));
        if (r < 0) {
                vi->instance = VK_NULL_HANDLE;
                return r;
        }

        LOAD(vi, destroy_instance, "vkDestroyInstance");
        LOAD(vi, enumerate_physical_devices, "vkEnumeratePhysicalDevices");
        LOAD(vi, enumerate_device_extensions, "vkEnumerateDeviceExtensionProperties");
        LOAD(vi, get_properties, "vkGetPhysicalDeviceProperties");
        LOAD(vi, get_queue_families, "vkGetPhysicalDeviceQueueFamilyProperties");
        LOAD(vi, create_device, "vkCreateDevice");
        LOAD(vi, get_device_proc_addr, "vkGetDeviceProcAddr");
        if (api_version >= VK_API_VERSION_1_1)
                LOAD(vi, get_properties2, "vkGetPhysicalDeviceProperties2");
        if (!vi->destroy_instance || !vi->enumerate_physical_devices || !vi->enumerate_device_extensions ||
            !vi->get_properties || !vi->get_queue_families || !vi->create_device || !vi->get_device_proc_addr)
                return -EIO;

        *ret = TAKE_PTR(vi);
        return 0;
}

static bool has_extension(const VkExtensionProperties *extensions, uint32_t n, const char *name) {
        for (uint32_t i = 0; i < n; i++)
                if (strcmp(extensions[i].extensionName, name) == 0)
                        return true;
        return false;
}

/* Names, UUID, PCI and DRM ids: each struct only where the device says it fills it. */
static void probe_properties(VulkanInstance *vi, const VkPhysicalDeviceProperties *props,
                             const VkExtensionProperties *extensions, uint32_t n_extensions, GpuDeviceInfo *info) {
        VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
        VkPhysicalDeviceDriverProperties driver = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES };
        VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {
                .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT,
        };
        VkPhysicalDeviceDrmPropertiesEXT drm = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRM_PROPERTIES_EXT };
        VkPhysicalDeviceProperties2 props2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
        bool want_id, want_driver, want_pci, want_drm;
        void **next = &props2.pNext;

        if (!vi->get_properties2 || props->apiVersion < VK_API_VERSION_1_1)
                return;

        want_id = true;
        want_driver = props->apiVersion >= VK_API_VERSION_1_2 ||
                      has_extension(extensions, n_extensions, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
        want_pci = has_extension(extensions, n_extensions, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
        want_drm = has_extension(extensions, n_extensions, VK_EXT_PHYSICAL_DEVICE_DRM_EXTENSION_NAME);

        if (want_id) {
                *next = &id;
                next = &id.pNext;
        }
        if (want_driver) {
                *next = &driver;
                next = &driver.pNext;
        }
        if (want_pci) {
                *next = &pci;
                next = &pci.pNext;
        }
        if (want_drm) {
                *next = &drm;
                next = &drm.pNext;
        }
        vi->get_properties2(info->physical, &props2);

        if (want_id) {
                static const uint8_t zero[VK_UUID_SIZE];

                info->have_uuid = memcmp(id.deviceUUID, zero, VK_UUID_SIZE) != 0;
                memcpy(info->uuid, id.deviceUUID, VK_UUID_SIZE);
        }
        if (want_driver) {
                memcpy(info->driver_name, driver.driverName, sizeof(info->driver_name));
                info->driver_name[sizeof(info->driver_name) - 1] = '\0';
                memcpy(info->driver_info, driver.driverInfo, sizeof(info->driver_info));
                info->driver_info[sizeof(info->driver_info) - 1] = '\0';
        }
        if (want_pci) {
                info->have_pci = true;
                info->pci_domain = pci.pciDomain;
                info->pci_bus = pci.pciBus;
                info->pci_device = pci.pciDevice;
                info->pci_function = pci.pciFunction;
        }
        if (want_drm) {
                info->have_render = drm.hasRender;
                info->have_primary = drm.hasPrimary;
                info->render_major = drm.renderMajor;
                info->render_minor = drm.renderMinor;
                info->primary_major = drm.primaryMajor;
                info->primary_minor = drm.primaryMinor;
        }
}

/* DEVICE must be offered; the host domain is CLOCK_MONOTONIC_RAW (our reference, so the driver's
 * deviation narrows our bracket) when offered, else CLOCK_MONOTONIC, else none. */
static int probe_time_domains(VulkanInstance *vi, GpuDeviceInfo *info) {
        VkTimeDomainEXT domains[TIME_DOMAINS_MAX];
        uint32_t n = TIME_DOMAINS_MAX;
        bool device = false, raw = false, mono = false;
        int r;

        r = vulkan_result_to_errno(info->get_time_domains(info->physical, &n, domains));
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                device = device || domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
                raw = raw || domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT;
                mono = mono || domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
        }
        if (!device)
                return -EOPNOTSUPP;

        info->have_host = raw || mono;
        info->host_is_raw = raw;
        return 0;
}

static int probe_queue(VulkanInstance *vi, GpuDeviceInfo *info) {
        VkQueueFamilyProperties families[QUEUE_FAMILIES_MAX];
        uint32_t n = QUEUE_FAMILIES_MAX;

        vi->get_queue_families(info->physical, &n, families);
        for (uint32_t i = 0; i < n; i++)
                if (families[i].timestampValidBits > 0 && families[i].queueCount > 0) {
                        info->queue_family = i;
                        info->valid_bits = families[i].timestampValidBits;
                        return 0;
                }
        return -EOPNOTSUPP;
}

static int probe_device(VulkanInstance *vi, VkPhysicalDevice physical, GpuDeviceInfo *ret) {
        _cleanup_free_ VkExtensionProperties *extensions = NULL;
        VkPhysicalDeviceProperties props;
        GpuDeviceInfo info = { .physical = physical };
        uint32_t n_extensions = EXTENSIONS_MAX;
        int r;

        extensions = calloc(EXTENSIONS_MAX, sizeof(VkExtensionProperties));
        if (!extensions)
                return -ENOMEM;
        r = vulkan_result_to_errno(vi->enumerate_device_extensions(physical, NULL, &n_extensions, extensions));
        if (r < 0)
                return r;

        if (has_extension(extensions, n_extensions, VULKAN_KHR_CALIBRATED_TIMESTAMPS)) {
                info.extension = VULKAN_KHR_CALIBRATED_TIMESTAMPS;
                info.get_time_domains = (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)
                        vi->get_instance_proc_addr(vi->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR");
        }
        if (!info.get_time_domains && has_extension(extensions, n_extensions, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) {
                info.extension = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
                info.get_time_domains = (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)
                        vi->get_instance_proc_addr(vi->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
        }
        if (!info.get_time_domains)
                return -EOPNOTSUPP;

        vi->get_properties(physical, &props);
        if (!(props.limits.timestampPeriod > 0.0f))
                return -EOPNOTSUPP;
        memcpy(info.device_name, props.deviceName, sizeof(info.device_name));
        info.device_name[sizeof(info.device_name) - 1] = '\0';
        info.driver_version = props.driverVersion;
        info.vendor_id = props.vendorID;
        info.type = props.deviceType;
        info.period_ns = props.limits.timestampPeriod;

        r = probe_queue(vi, &info);
        if (r < 0)
                return r;
        r = probe_time_domains(vi, &info);
        if (r < 0)
                return r;
        probe_properties(vi, &props, extensions, n_extensions, &info);

        *ret = info;
        return 0;
}

int vulkan_instance_list(VulkanInstance *vi, GpuDeviceInfo *ret_infos, size_t n_max, size_t *ret_n) {
        VkPhysicalDevice physical[PHYSICAL_DEVICES_MAX];
        uint32_t n_physical = PHYSICAL_DEVICES_MAX;
        size_t n = 0;
        int r;

        if (!vi || (!ret_infos && n_max > 0) || !ret_n)
                return -EINVAL;

        r = vulkan_result_to_errno(vi->enumerate_physical_devices(vi->instance, &n_physical, physical));
        if (r < 0)
                return r;

        /* A device that cannot be calibrated (or fails to say) is left out; the others stay. */
        for (uint32_t i = 0; i < n_physical && n < n_max; i++)
                if (probe_device(vi, physical[i], &ret_infos[n]) >= 0)
                        n++;

        *ret_n = n;
        return 0;
}

/* The usual text of a UUID (RFC 4122): 8-4-4-4-12 hex digits. */
static int uuid_text(const uint8_t uuid[VK_UUID_SIZE], char *ret, size_t size) {
        size_t k = 0;

        if (size < 2 * VK_UUID_SIZE + 4 + 1)
                return -ENOBUFS;
        for (size_t i = 0; i < VK_UUID_SIZE; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        ret[k++] = '-';
                sprintf(ret + k, "%02x", uuid[i]);
                k += 2;
        }
        return 0;
}

int vulkan_device_id(const GpuDeviceInfo *info, char *ret, size_t size) {
        int k;

        if (!info || !ret)
                return -EINVAL;
        if (info->have_pci) {
                k = snprintf(ret, size, "%04x:%02x:%02x.%x", info->pci_domain, info->pci_bus,
                             info->pci_device, info->pci_function);
                return k < 0 || (size_t) k >= size ? -ENOBUFS : 0;
        }
        if (info->have_uuid)
                return uuid_text(info->uuid, ret, size);
        return -ENODATA;
}

int vulkan_device_alias(const GpuDeviceInfo *info, char *ret, size_t size) {
        char id[64];
        int k, r;

        if (!ret)
                return -EINVAL;
        r = vulkan_device_id(info, id, sizeof(id));
        if (r < 0)
                return r;
        /* "pci-" says which kind of id follows: a PCI address, else a UUID. */
        k = snprintf(ret, size, "gpu-%s%s", info->have_pci ? "pci-" : "", id);
        return k < 0 || (size_t) k >= size ? -ENOBUFS : 0;
}
