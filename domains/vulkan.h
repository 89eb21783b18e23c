/* SPDX-License-Identifier: MIT */
#pragma once

/* GPU device clocks through Vulkan (domains gpuN and their stable aliases): what
 * domain_vulkan_ops takes as config. Which drivers the loader sees is the loader's business
 * (VK_ICD_FILENAMES and friends in the environment). */

#include <stdbool.h>
#include <stdint.h>

typedef struct VulkanConfig {
        const char *loader;             /* NULL: "libvulkan.so.1", loaded at run time */
        /* The wait before the first attempt to get a lost device back; it doubles per failed
         * attempt up to retry_max_ns. 0: 1 s and 64 s. */
        int64_t retry_min_ns;
        int64_t retry_max_ns;
        /* Also offer devices of type CPU (lavapipe, SwiftShader). A software rasterizer is not a
         * GPU: its "device time" is the host's clock, and its driver costs tens of MB and a
         * thread per core, so it is left out unless asked for (tests, machines without a GPU). */
        bool software;
} VulkanConfig;
