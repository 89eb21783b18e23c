/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "cleanup.h"
#include "time-util.h"
#include "vulkan-device.h"

VulkanDevice *vulkan_device_free(VulkanDevice *vd) {
        if (!vd)
                return NULL;
        if (vd->device != VK_NULL_HANDLE && vd->destroy_device)
                vd->destroy_device(vd->device, NULL);
        free(vd);
        return NULL;
}

int vulkan_device_new(VulkanInstance *vi, const GpuDeviceInfo *info, VulkanDevice **ret) {
        static const float priority = 1.0f;
        const char *extensions[] = { info->extension };
        _cleanup_(vulkan_device_freep) VulkanDevice *vd = NULL;
        bool khr;
        int r;

        if (!vi || !info || !info->extension || !ret)
                return -EINVAL;

        vd = calloc(1, sizeof(*vd));
        if (!vd)
                return -ENOMEM;

        VkDeviceQueueCreateInfo queue = {
                .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                .queueFamilyIndex = info->queue_family,
                .queueCount = 1,
                .pQueuePriorities = &priority,
        };
        VkDeviceCreateInfo create_info = {
                .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                .queueCreateInfoCount = 1,
                .pQueueCreateInfos = &queue,
                .enabledExtensionCount = 1,
                .ppEnabledExtensionNames = extensions,
        };
        r = vulkan_result_to_errno(vi->create_device(info->physical, &create_info, NULL, &vd->device));
        if (r < 0) {
                vd->device = VK_NULL_HANDLE;
                return r;
        }

        khr = info->extension[3] == 'K';        /* "VK_KHR_..." */
        vd->destroy_device = (PFN_vkDestroyDevice) vi->get_device_proc_addr(vd->device, "vkDestroyDevice");
        vd->get_calibrated_timestamps = (PFN_vkGetCalibratedTimestampsEXT) vi->get_device_proc_addr(
                vd->device, khr ? "vkGetCalibratedTimestampsKHR" : "vkGetCalibratedTimestampsEXT");
        if (!vd->destroy_device)
                vd->device = VK_NULL_HANDLE;    /* leaks it rather than crash */
        if (!vd->destroy_device || !vd->get_calibrated_timestamps)
                return -EOPNOTSUPP;     /* the driver lacks what it said it had */

        /* The KHR structure type has the EXT's value (a promotion keeps it). */
        vd->infos[vd->n_infos++] = (VkCalibratedTimestampInfoEXT) {
                .sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT,
        };
        if (info->have_host)
                vd->infos[vd->n_infos++] = (VkCalibratedTimestampInfoEXT) {
                        .sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                        .timeDomain = info->host_is_raw ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT
                                                        : VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT,
                };

        *ret = TAKE_PTR(vd);
        return 0;
}

int vulkan_device_read(VulkanDevice *vd, GpuReading *ret) {
        uint64_t timestamps[2] = {}, max_deviation_ns = 0;
        int64_t r0_ns, r1_ns;
        VkResult result;
        int r;

        if (!vd || !ret)
                return -EINVAL;

        r0_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        result = vd->get_calibrated_timestamps(vd->device, vd->n_infos, vd->infos, timestamps, &max_deviation_ns);
        r1_ns = clock_now_ns(CLOCK_MONOTONIC_RAW);
        r = vulkan_result_to_errno(result);
        if (r < 0)
                return r;

        *ret = (GpuReading) {
                .r0_ns = r0_ns,
                .r1_ns = r1_ns,
                .device_ticks = timestamps[0],
                .host_ns = timestamps[1],
                .max_deviation_ns = max_deviation_ns,
        };
        return 0;
}
