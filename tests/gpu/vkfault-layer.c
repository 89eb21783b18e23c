/* SPDX-License-Identifier: MIT */

/* VK_LAYER_TIMECONV_fault: an explicit Vulkan layer for the tests, loaded by the real loader
 * (VK_LAYER_PATH, VK_INSTANCE_LAYERS) into a real timeconvd. It passes everything through to the
 * driver, except that while the file named by $TIMECONV_VKFAULT_FILE exists the device is "lost":
 * vkGetCalibratedTimestamps{EXT,KHR} and vkCreateDevice answer VK_ERROR_DEVICE_LOST, as a GPU
 * that hung or fell off the bus would. A device created while the file $TIMECONV_VKFAULT_RESET_FILE
 * exists counts the number of ticks it holds ahead of the driver, as a reset counter may, so that
 * a test can tell the models before and after a loss apart. While $TIMECONV_VKFAULT_HOLD_FILE
 * exists, vkCreateInstance does not return (as a driver waking a GPU may take seconds), after
 * creating that name with ".held" appended to say it holds. Files, not memory, carry this: the
 * loader unloads the layer with the daemon's last instance. The next links of each instance and
 * device live in small tables, keyed by the loader's dispatch pointer, with the lost file's last
 * verdict beside them, all guarded by one lock. */

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <vulkan/vk_layer.h>

#define FAULT_FILE_ENV "TIMECONV_VKFAULT_FILE"
#define FAULT_RESET_ENV "TIMECONV_VKFAULT_RESET_FILE"
#define FAULT_HOLD_ENV "TIMECONV_VKFAULT_HOLD_FILE"
/* A held vkCreateInstance looks at the file this often, and gives up holding after this long. */
#define FAULT_HOLD_POLL_NS 5000000
#define FAULT_HOLD_MAX_NS (INT64_C(60) * 1000000000)
#define FAULT_SLOTS 32          /* the daemon holds one instance per domain and one to enumerate */
/* The caller brackets vkGetCalibratedTimestamps with its own clock reads: a stat() in every call
 * (a microsecond here) would widen every sample, so the file is looked at once a millisecond. */
#define FAULT_CHECK_NS 1000000

typedef struct FaultInstance {
        void *key;              /* the loader's dispatch table: NULL for a free slot */
        VkInstance instance;
        PFN_vkGetInstanceProcAddr next_gipa;
        PFN_vkDestroyInstance next_destroy_instance;
} FaultInstance;

typedef struct FaultDevice {
        void *key;
        PFN_vkGetDeviceProcAddr next_gdpa;
        PFN_vkDestroyDevice next_destroy_device;
        PFN_vkGetCalibratedTimestampsEXT next_calibrated_ext;
        PFN_vkGetCalibratedTimestampsEXT next_calibrated_khr;   /* the same signature */
        uint64_t offset_ticks;  /* added to its DEVICE time domain readings */
} FaultDevice;

static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static FaultInstance fault_instances[FAULT_SLOTS];
static FaultDevice fault_devices[FAULT_SLOTS];
static int64_t fault_checked_ns = -1;   /* CLOCK_MONOTONIC of the last stat() */
static bool fault_lost;

/* Dispatchable handles start with the loader's dispatch pointer; a physical device shares its
 * instance's. */
static void *dispatch_key(const void *handle) {
        return *(void *const *) handle;
}

static bool device_lost(void) {
        struct timespec ts;
        int64_t now_ns;
        bool lost;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        now_ns = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
        pthread_mutex_lock(&fault_lock);
        if (fault_checked_ns < 0 || now_ns - fault_checked_ns >= FAULT_CHECK_NS) {
                const char *path = getenv(FAULT_FILE_ENV);
                struct stat st;

                fault_lost = path && *path && stat(path, &st) == 0;
                fault_checked_ns = now_ns;
        }
        lost = fault_lost;
        pthread_mutex_unlock(&fault_lock);
        return lost;
}

/* The ticks a device created now runs ahead: 0 without the reset file. */
static uint64_t reset_offset_ticks(void) {
        const char *path = getenv(FAULT_RESET_ENV);
        unsigned long long ticks = 0;
        FILE *f;

        f = path && *path ? fopen(path, "re") : NULL;
        if (!f)
                return 0;
        if (fscanf(f, "%llu", &ticks) != 1)
                ticks = 0;
        fclose(f);
        return ticks;
}

static bool instance_find(void *key, FaultInstance *ret) {
        bool found = false;

        pthread_mutex_lock(&fault_lock);
        for (size_t i = 0; i < FAULT_SLOTS && !found; i++)
                if (fault_instances[i].key == key) {
                        *ret = fault_instances[i];
                        found = true;
                }
        pthread_mutex_unlock(&fault_lock);
        return found;
}

static bool device_find(void *key, FaultDevice *ret) {
        bool found = false;

        pthread_mutex_lock(&fault_lock);
        for (size_t i = 0; i < FAULT_SLOTS && !found; i++)
                if (fault_devices[i].key == key) {
                        *ret = fault_devices[i];
                        found = true;
                }
        pthread_mutex_unlock(&fault_lock);
        return found;
}

/* Stores an entry in the first free slot of table (FAULT_SLOTS slots of size bytes, key first). */
static bool slot_store(void *table, size_t size, const void *entry) {
        bool stored = false;

        pthread_mutex_lock(&fault_lock);
        for (size_t i = 0; i < FAULT_SLOTS && !stored; i++) {
                char *slot = (char *) table + i * size;

                if (*(void **) slot == NULL) {
                        memcpy(slot, entry, size);
                        stored = true;
                }
        }
        pthread_mutex_unlock(&fault_lock);
        return stored;
}

static void slot_clear(void *table, size_t size, void *key) {
        pthread_mutex_lock(&fault_lock);
        for (size_t i = 0; i < FAULT_SLOTS; i++) {
                char *slot = (char *) table + i * size;

                if (*(void **) slot == key) {
                        memset(slot, 0, size);
                        break;
                }
        }
        pthread_mutex_unlock(&fault_lock);
}

/* The loader's link for this layer in a create-info chain; NULL if there is none. The instance
 * and device structures both start with sType, pNext, function. */
static void *chain_link(const void *next, VkStructureType type) {
        for (const VkBaseInStructure *s = next; s; s = s->pNext)
                if (s->sType == type && ((const VkLayerInstanceCreateInfo *) s)->function == VK_LAYER_LINK_INFO)
                        return (void *) s;
        return NULL;
}

/* A slow driver: while the hold file exists, and at most FAULT_HOLD_MAX_NS. */
static void hold_while_asked(void) {
        const char *path = getenv(FAULT_HOLD_ENV);
        const struct timespec poll_ts = { .tv_nsec = FAULT_HOLD_POLL_NS };
        char held[4096];
        struct stat st;
        FILE *f;

        if (!path || !*path || stat(path, &st) < 0)
                return;
        if (snprintf(held, sizeof(held), "%s.held", path) >= (int) sizeof(held))
                return;
        f = fopen(held, "we");
        if (f)
                fclose(f);
        for (int64_t waited_ns = 0; waited_ns < FAULT_HOLD_MAX_NS && stat(path, &st) == 0;
             waited_ns += FAULT_HOLD_POLL_NS)
                nanosleep(&poll_ts, NULL);
}

static VKAPI_ATTR VkResult VKAPI_CALL fault_CreateInstance(const VkInstanceCreateInfo *info,
                                                           const VkAllocationCallbacks *allocator,
                                                           VkInstance *ret) {
        VkLayerInstanceCreateInfo *link = chain_link(info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
        PFN_vkGetInstanceProcAddr next_gipa;
        PFN_vkCreateInstance next_create;
        FaultInstance entry;
        VkResult result;

        if (!link || !link->u.pLayerInfo)
                return VK_ERROR_INITIALIZATION_FAILED;
        next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
        next_create = (PFN_vkCreateInstance) next_gipa(VK_NULL_HANDLE, "vkCreateInstance");
        if (!next_create)
                return VK_ERROR_INITIALIZATION_FAILED;
        /* The next layer finds its own link where ours was. */
        link->u.pLayerInfo = link->u.pLayerInfo->pNext;

        hold_while_asked();
        result = next_create(info, allocator, ret);
        if (result != VK_SUCCESS)
                return result;

        entry = (FaultInstance) {
                .key = dispatch_key(*ret),
                .instance = *ret,
                .next_gipa = next_gipa,
                .next_destroy_instance = (PFN_vkDestroyInstance) next_gipa(*ret, "vkDestroyInstance"),
        };
        if (!entry.next_destroy_instance || !slot_store(fault_instances, sizeof(FaultInstance), &entry)) {
                if (entry.next_destroy_instance)
                        entry.next_destroy_instance(*ret, allocator);
                return VK_ERROR_OUT_OF_HOST_MEMORY;
        }
        return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fault_DestroyInstance(VkInstance instance, const VkAllocationCallbacks *allocator) {
        FaultInstance entry;

        if (!instance || !instance_find(dispatch_key(instance), &entry))
                return;
        slot_clear(fault_instances, sizeof(FaultInstance), entry.key);
        entry.next_destroy_instance(instance, allocator);
}

static VKAPI_ATTR VkResult VKAPI_CALL fault_CreateDevice(VkPhysicalDevice physical, const VkDeviceCreateInfo *info,
                                                         const VkAllocationCallbacks *allocator, VkDevice *ret) {
        VkLayerDeviceCreateInfo *link = chain_link(info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
        PFN_vkGetInstanceProcAddr next_gipa;
        PFN_vkGetDeviceProcAddr next_gdpa;
        PFN_vkCreateDevice next_create;
        FaultInstance instance;
        FaultDevice entry;
        VkResult result;

        if (device_lost())
                return VK_ERROR_DEVICE_LOST;
        if (!link || !link->u.pLayerInfo || !instance_find(dispatch_key(physical), &instance))
                return VK_ERROR_INITIALIZATION_FAILED;
        next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
        next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
        next_create = (PFN_vkCreateDevice) next_gipa(instance.instance, "vkCreateDevice");
        if (!next_create)
                return VK_ERROR_INITIALIZATION_FAILED;
        link->u.pLayerInfo = link->u.pLayerInfo->pNext;

        result = next_create(physical, info, allocator, ret);
        if (result != VK_SUCCESS)
                return result;

        entry = (FaultDevice) {
                .key = dispatch_key(*ret),
                .next_gdpa = next_gdpa,
                .next_destroy_device = (PFN_vkDestroyDevice) next_gdpa(*ret, "vkDestroyDevice"),
                .next_calibrated_ext = (PFN_vkGetCalibratedTimestampsEXT)
                        next_gdpa(*ret, "vkGetCalibratedTimestampsEXT"),
                .next_calibrated_khr = (PFN_vkGetCalibratedTimestampsEXT)
                        next_gdpa(*ret, "vkGetCalibratedTimestampsKHR"),
                .offset_ticks = reset_offset_ticks(),
        };
        if (!entry.next_destroy_device || !slot_store(fault_devices, sizeof(FaultDevice), &entry)) {
                if (entry.next_destroy_device)
                        entry.next_destroy_device(*ret, allocator);
                return VK_ERROR_OUT_OF_HOST_MEMORY;
        }
        return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fault_DestroyDevice(VkDevice device, const VkAllocationCallbacks *allocator) {
        FaultDevice entry;

        if (!device || !device_find(dispatch_key(device), &entry))
                return;
        slot_clear(fault_devices, sizeof(FaultDevice), entry.key);
        entry.next_destroy_device(device, allocator);
}

static VkResult calibrated(VkDevice device, bool khr, uint32_t n, const VkCalibratedTimestampInfoEXT *infos,
                           uint64_t *timestamps, uint64_t *max_deviation) {
        PFN_vkGetCalibratedTimestampsEXT next;
        FaultDevice entry;
        VkResult result;

        if (device_lost())
                return VK_ERROR_DEVICE_LOST;
        if (!device_find(dispatch_key(device), &entry))
                return VK_ERROR_DEVICE_LOST;
        next = khr ? entry.next_calibrated_khr : entry.next_calibrated_ext;
        if (!next)
                return VK_ERROR_EXTENSION_NOT_PRESENT;
        result = next(device, n, infos, timestamps, max_deviation);
        if (result == VK_SUCCESS)
                for (uint32_t i = 0; i < n; i++)
                        if (infos[i].timeDomain == VK_TIME_DOMAIN_DEVICE_EXT)
                                timestamps[i] += entry.offset_ticks;
        return result;
}

static VKAPI_ATTR VkResult VKAPI_CALL fault_GetCalibratedTimestampsEXT(VkDevice device, uint32_t n,
                                                                       const VkCalibratedTimestampInfoEXT *infos,
                                                                       uint64_t *timestamps, uint64_t *max_deviation) {
        return calibrated(device, false, n, infos, timestamps, max_deviation);
}

static VKAPI_ATTR VkResult VKAPI_CALL fault_GetCalibratedTimestampsKHR(VkDevice device, uint32_t n,
                                                                       const VkCalibratedTimestampInfoEXT *infos,
                                                                       uint64_t *timestamps, uint64_t *max_deviation) {
        return calibrated(device, true, n, infos, timestamps, max_deviation);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fault_GetDeviceProcAddr(VkDevice device, const char *name);

/* Ours for the names we wrap (the calibrated ones only where the driver has them), else NULL. */
static PFN_vkVoidFunction own_device_function(const char *name, PFN_vkVoidFunction next) {
        if (strcmp(name, "vkGetDeviceProcAddr") == 0)
                return (PFN_vkVoidFunction) fault_GetDeviceProcAddr;
        if (strcmp(name, "vkDestroyDevice") == 0)
                return (PFN_vkVoidFunction) fault_DestroyDevice;
        if (strcmp(name, "vkGetCalibratedTimestampsEXT") == 0)
                return next ? (PFN_vkVoidFunction) fault_GetCalibratedTimestampsEXT : NULL;
        if (strcmp(name, "vkGetCalibratedTimestampsKHR") == 0)
                return next ? (PFN_vkVoidFunction) fault_GetCalibratedTimestampsKHR : NULL;
        return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fault_GetDeviceProcAddr(VkDevice device, const char *name) {
        PFN_vkVoidFunction next, own;
        FaultDevice entry;

        if (!device || !name || !device_find(dispatch_key(device), &entry))
                return NULL;
        next = entry.next_gdpa(device, name);
        own = own_device_function(name, next);
        return own ? own : next;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fault_GetInstanceProcAddr(VkInstance instance, const char *name) {
        PFN_vkVoidFunction next;
        FaultInstance entry;

        if (!name)
                return NULL;
        if (strcmp(name, "vkGetInstanceProcAddr") == 0)
                return (PFN_vkVoidFunction) fault_GetInstanceProcAddr;
        if (strcmp(name, "vkCreateInstance") == 0)
                return (PFN_vkVoidFunction) fault_CreateInstance;
        if (strcmp(name, "vkDestroyInstance") == 0)
                return (PFN_vkVoidFunction) fault_DestroyInstance;
        if (strcmp(name, "vkCreateDevice") == 0)
                return (PFN_vkVoidFunction) fault_CreateDevice;

        if (!instance || !instance_find(dispatch_key(instance), &entry))
                return NULL;
        next = entry.next_gipa(instance, name);
        if (strcmp(name, "vkGetDeviceProcAddr") == 0 || strcmp(name, "vkDestroyDevice") == 0 ||
            strncmp(name, "vkGetCalibratedTimestamps", 25) == 0) {
                PFN_vkVoidFunction own = own_device_function(name, next);

                return own ? own : next;
        }
        return next;
}

/* The one exported symbol: the loader finds it by name in a layer of interface version 2. */
VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v) {
        if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || v->loaderLayerInterfaceVersion < 2)
                return VK_ERROR_INITIALIZATION_FAILED;
        v->loaderLayerInterfaceVersion = 2;
        v->pfnGetInstanceProcAddr = fault_GetInstanceProcAddr;
        v->pfnGetDeviceProcAddr = fault_GetDeviceProcAddr;
        v->pfnGetPhysicalDeviceProcAddr = NULL;
        return VK_SUCCESS;
}
