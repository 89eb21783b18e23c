/* SPDX-License-Identifier: MIT */

/* See fake-vulkan.h. Only what the vulkan source calls is here; handles are plain pointers to
 * our own structs (we are the loader, so no dispatch tables). */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "fake-vulkan.h"

#define FAKE_DEVICES_MAX 4
#define EXPORT __attribute__((visibility("default")))

struct VkPhysicalDevice_T {
        FakeVulkanDevice spec;
        unsigned index;
};

struct VkInstance_T {
        int unused;
};

struct VkDevice_T {
        struct VkPhysicalDevice_T *physical;
};

static struct VkPhysicalDevice_T fake_devices[FAKE_DEVICES_MAX];
static unsigned fake_n_devices;
static bool fake_lost;
static FakeVulkanState fake_state;

EXPORT void fake_vulkan_configure(const FakeVulkanDevice *devices, unsigned n);
EXPORT void fake_vulkan_set_lost(bool lost);
EXPORT void fake_vulkan_set_offset(unsigned i, int64_t offset_ns);
EXPORT void fake_vulkan_state(FakeVulkanState *ret);
EXPORT PFN_vkVoidFunction vkGetInstanceProcAddr(VkInstance instance, const char *name);

void fake_vulkan_configure(const FakeVulkanDevice *devices, unsigned n) {
        fake_n_devices = n < FAKE_DEVICES_MAX ? n : FAKE_DEVICES_MAX;
        for (unsigned i = 0; i < fake_n_devices; i++)
                fake_devices[i] = (struct VkPhysicalDevice_T) { .spec = devices[i], .index = i };
}

void fake_vulkan_set_lost(bool lost) {
        fake_lost = lost;
}

void fake_vulkan_set_offset(unsigned i, int64_t offset_ns) {
        if (i < fake_n_devices)
                fake_devices[i].spec.offset_ns = offset_ns;
}

void fake_vulkan_state(FakeVulkanState *ret) {
        *ret = fake_state;
}

static VkResult VKAPI_CALL fake_enumerate_version(uint32_t *ret) {
        *ret = VK_API_VERSION_1_3;
        return VK_SUCCESS;
}

static VkResult VKAPI_CALL fake_create_instance(const VkInstanceCreateInfo *info, const VkAllocationCallbacks *a,
                                                VkInstance *ret) {
        if (fake_n_devices == 0)
                return VK_ERROR_INCOMPATIBLE_DRIVER;
        *ret = calloc(1, sizeof(struct VkInstance_T));
        if (!*ret)
                return VK_ERROR_OUT_OF_HOST_MEMORY;
        fake_state.instances++;
        return VK_SUCCESS;
}

static void VKAPI_CALL fake_destroy_instance(VkInstance instance, const VkAllocationCallbacks *a) {
        if (instance)
                fake_state.instances--;
        free(instance);
}

static VkResult VKAPI_CALL fake_enumerate_physical(VkInstance instance, uint32_t *n, VkPhysicalDevice *ret) {
        uint32_t k = *n < fake_n_devices ? *n : fake_n_devices;

        if (!ret) {
                *n = fake_n_devices;
                return VK_SUCCESS;
        }
        for (uint32_t i = 0; i < k; i++)
                ret[i] = &fake_devices[i];
        *n = k;
        return k < fake_n_devices ? VK_INCOMPLETE : VK_SUCCESS;
}

static VkResult VKAPI_CALL fake_enumerate_extensions(VkPhysicalDevice pd, const char *layer, uint32_t *n,
                                                     VkExtensionProperties *ret) {
        const char *names[3];
        uint32_t k = 0;

        if (pd->spec.calibrated)
                names[k++] = pd->spec.khr ? "VK_KHR_calibrated_timestamps" : "VK_EXT_calibrated_timestamps";
        if (pd->spec.pci)
                names[k++] = VK_EXT_PCI_BUS_INFO_EXTENSION_NAME;
        names[k++] = "VK_KHR_swapchain";
        if (!ret) {
                *n = k;
                return VK_SUCCESS;
        }
        if (*n < k)
                k = *n;
        for (uint32_t i = 0; i < k; i++) {
                memset(&ret[i], 0, sizeof(ret[i]));
                strcpy(ret[i].extensionName, names[i]);
                ret[i].specVersion = 1;
        }
        *n = k;
        return VK_SUCCESS;
}

static void VKAPI_CALL fake_get_properties(VkPhysicalDevice pd, VkPhysicalDeviceProperties *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->apiVersion = VK_API_VERSION_1_3;
        ret->driverVersion = 0x1234;
        ret->vendorID = 0x8086;
        ret->deviceType = pd->spec.cpu ? VK_PHYSICAL_DEVICE_TYPE_CPU : VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
        strcpy(ret->deviceName, pd->spec.name);
        ret->limits.timestampPeriod = (float) pd->spec.period_ns;
}

static void VKAPI_CALL fake_get_properties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2 *ret) {
        fake_get_properties(pd, &ret->properties);
        for (VkBaseOutStructure *s = ret->pNext; s; s = s->pNext)
                switch (s->sType) {
                case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES: {
                        VkPhysicalDeviceIDProperties *id = (VkPhysicalDeviceIDProperties *) s;

                        memset(id->deviceUUID, 0, VK_UUID_SIZE);
                        id->deviceUUID[0] = 0xfa;
                        id->deviceUUID[15] = (uint8_t) pd->index;
                        break;
                }
                case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES: {
                        VkPhysicalDeviceDriverProperties *d = (VkPhysicalDeviceDriverProperties *) s;

                        strcpy(d->driverName, "fake");
                        strcpy(d->driverInfo, "fake 1.0");
                        break;
                }
                case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT: {
                        VkPhysicalDevicePCIBusInfoPropertiesEXT *p = (VkPhysicalDevicePCIBusInfoPropertiesEXT *) s;

                        p->pciDomain = 0;
                        p->pciBus = 0;
                        p->pciDevice = 2;
                        p->pciFunction = 0;
                        break;
                }
                default:
                        break;
                }
}

static void VKAPI_CALL fake_get_queue_families(VkPhysicalDevice pd, uint32_t *n, VkQueueFamilyProperties *ret) {
        if (!ret) {
                *n = 2;
                return;
        }
        /* A transfer queue without timestamps first: the source must pick the second. */
        if (*n >= 1)
                ret[0] = (VkQueueFamilyProperties) { .queueFlags = VK_QUEUE_TRANSFER_BIT, .queueCount = 1 };
        if (*n >= 2)
                ret[1] = (VkQueueFamilyProperties) {
                        .queueFlags = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT,
                        .queueCount = 1,
                        .timestampValidBits = pd->spec.valid_bits,
                };
        *n = *n < 2 ? *n : 2;
}

static VkResult VKAPI_CALL fake_get_time_domains(VkPhysicalDevice pd, uint32_t *n, VkTimeDomainEXT *ret) {
        VkTimeDomainEXT domains[3] = { VK_TIME_DOMAIN_DEVICE_EXT, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT,
                                       VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT };
        uint32_t k = pd->spec.host_none ? 1 : pd->spec.host_raw ? 3 : 2;

        if (!ret) {
                *n = k;
                return VK_SUCCESS;
        }
        if (*n < k)
                k = *n;
        memcpy(ret, domains, k * sizeof(VkTimeDomainEXT));
        *n = k;
        return VK_SUCCESS;
}

static VkResult VKAPI_CALL fake_create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *info,
                                              const VkAllocationCallbacks *a, VkDevice *ret) {
        fake_state.create_device_calls++;
        if (fake_lost)
                return VK_ERROR_INITIALIZATION_FAILED;
        if (info->queueCreateInfoCount != 1 || info->pQueueCreateInfos[0].queueFamilyIndex != 1 ||
            info->enabledExtensionCount != 1)
                return VK_ERROR_FEATURE_NOT_PRESENT;
        *ret = calloc(1, sizeof(struct VkDevice_T));
        if (!*ret)
                return VK_ERROR_OUT_OF_HOST_MEMORY;
        (*ret)->physical = pd;
        fake_state.devices++;
        return VK_SUCCESS;
}

static void VKAPI_CALL fake_destroy_device(VkDevice device, const VkAllocationCallbacks *a) {
        if (device)
                fake_state.devices--;
        free(device);
}

static VkResult VKAPI_CALL fake_get_calibrated(VkDevice device, uint32_t n, const VkCalibratedTimestampInfoEXT *infos,
                                               uint64_t *timestamps, uint64_t *max_deviation) {
        const FakeVulkanDevice *spec = &device->physical->spec;
        struct timespec ts;
        int64_t raw_ns, mono_ns;
        uint64_t mask = spec->valid_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << spec->valid_bits) - 1;

        fake_state.calls++;
        if (fake_lost)
                return VK_ERROR_DEVICE_LOST;
        for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = 0; j < i; j++)
                        if (infos[i].timeDomain == infos[j].timeDomain) {
                                fake_state.duplicate_domains++;
                                return VK_ERROR_UNKNOWN;
                        }

        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        raw_ns = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        mono_ns = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
        for (uint32_t i = 0; i < n; i++)
                switch (infos[i].timeDomain) {
                case VK_TIME_DOMAIN_DEVICE_EXT:
                        /* The counter rounds: it reads c when the device time is within half a tick of c. */
                        timestamps[i] = (uint64_t) llround((double) (raw_ns + spec->offset_ns) /
                                                           (double) (float) spec->period_ns) & mask;
                        break;
                case VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT:
                        timestamps[i] = (uint64_t) raw_ns;
                        break;
                case VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT:
                        timestamps[i] = (uint64_t) mono_ns;
                        break;
                default:
                        return VK_ERROR_UNKNOWN;
                }
        *max_deviation = spec->max_deviation_ns;
        return VK_SUCCESS;
}

static PFN_vkVoidFunction VKAPI_CALL fake_get_device_proc_addr(VkDevice device, const char *name) {
        bool khr = device->physical->spec.khr;

        if (strcmp(name, "vkDestroyDevice") == 0)
                return (PFN_vkVoidFunction) fake_destroy_device;
        if (strcmp(name, khr ? "vkGetCalibratedTimestampsKHR" : "vkGetCalibratedTimestampsEXT") == 0)
                return (PFN_vkVoidFunction) fake_get_calibrated;
        return NULL;
}

static const struct {
        const char *name;
        PFN_vkVoidFunction fn;
} fake_functions[] = {
        { "vkEnumerateInstanceVersion", (PFN_vkVoidFunction) fake_enumerate_version },
        { "vkCreateInstance", (PFN_vkVoidFunction) fake_create_instance },
        { "vkDestroyInstance", (PFN_vkVoidFunction) fake_destroy_instance },
        { "vkEnumeratePhysicalDevices", (PFN_vkVoidFunction) fake_enumerate_physical },
        { "vkEnumerateDeviceExtensionProperties", (PFN_vkVoidFunction) fake_enumerate_extensions },
        { "vkGetPhysicalDeviceProperties", (PFN_vkVoidFunction) fake_get_properties },
        { "vkGetPhysicalDeviceProperties2", (PFN_vkVoidFunction) fake_get_properties2 },
        { "vkGetPhysicalDeviceQueueFamilyProperties", (PFN_vkVoidFunction) fake_get_queue_families },
        { "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT", (PFN_vkVoidFunction) fake_get_time_domains },
        { "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR", (PFN_vkVoidFunction) fake_get_time_domains },
        { "vkCreateDevice", (PFN_vkVoidFunction) fake_create_device },
        { "vkGetDeviceProcAddr", (PFN_vkVoidFunction) fake_get_device_proc_addr },
};

PFN_vkVoidFunction vkGetInstanceProcAddr(VkInstance instance, const char *name) {
        for (size_t i = 0; i < sizeof(fake_functions) / sizeof(fake_functions[0]); i++)
                if (strcmp(fake_functions[i].name, name) == 0)
                        return fake_functions[i].fn;
        return NULL;
}
