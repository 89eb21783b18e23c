/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* xf86drm.h includes <drm.h>, which our own drm.h would shadow (domains/ comes first in the
 * include path): libdrm's goes in first under its full name, its guard keeps it from coming back. */
#include <libdrm/drm.h>
#include <xf86drm.h>

#include "drm.h"

#define DRM_DEVICES_MAX 64

/* Driver name and version: needs the node to be readable (render nodes usually are). */
static void node_driver(const char *path, DrmNode *node) {
        drmVersionPtr version;
        int fd;

        fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        version = drmGetVersion(fd);
        close(fd);
        if (!version)
                return;

        snprintf(node->driver, sizeof(node->driver), "%.*s", version->name_len, version->name ?: "");
        snprintf(node->driver_version, sizeof(node->driver_version), "%s %d.%d.%d (%.*s)", node->driver,
                 version->version_major, version->version_minor, version->version_patchlevel,
                 version->date_len, version->date ?: "");
        drmFreeVersion(version);
}

static int node_of(drmDevicePtr device, DrmNode *ret) {
        DrmNode node = {};
        const char *path;

        if (device->available_nodes & (1 << DRM_NODE_RENDER))
                path = device->nodes[DRM_NODE_RENDER];
        else if (device->available_nodes & (1 << DRM_NODE_PRIMARY))
                path = device->nodes[DRM_NODE_PRIMARY];
        else
                return -ENOENT;
        if (!path || strlen(path) >= sizeof(node.path))
                return -ENOENT;

        strcpy(node.path, path);
        node_driver(path, &node);
        *ret = node;
        return 0;
}

int drm_node_from_devnum(int64_t major, int64_t minor, DrmNode *ret) {
        drmDevicePtr device = NULL;
        int r;

        if (!ret || major < 0 || minor < 0 || major > UINT32_MAX || minor > UINT32_MAX)
                return -EINVAL;

        r = drmGetDeviceFromDevId(makedev((unsigned) major, (unsigned) minor), 0, &device);
        if (r < 0 || !device)
                return r < 0 ? r : -ENOENT;
        r = node_of(device, ret);
        drmFreeDevice(&device);
        return r;
}

static bool pci_matches(drmDevicePtr device, uint32_t domain, uint32_t bus, uint32_t dev, uint32_t function) {
        return device->bustype == DRM_BUS_PCI && device->businfo.pci &&
               device->businfo.pci->domain == domain && device->businfo.pci->bus == bus &&
               device->businfo.pci->dev == dev && device->businfo.pci->func == function;
}

int drm_node_from_pci(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function, DrmNode *ret) {
        drmDevicePtr devices[DRM_DEVICES_MAX];
        int n, r = -ENOENT;

        if (!ret)
                return -EINVAL;

        n = drmGetDevices2(0, devices, DRM_DEVICES_MAX);
        if (n < 0)
                return n == -ENODEV ? -ENOENT : n;

        for (int i = 0; i < n; i++)
                if (r == -ENOENT && pci_matches(devices[i], domain, bus, device, function))
                        r = node_of(devices[i], ret);
        drmFreeDevices(devices, n);
        return r;
}
