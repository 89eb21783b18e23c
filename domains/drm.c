/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* xf86drm.h includes <drm.h>, which our own drm.h would shadow (domains/ comes first in the
 * include path): libdrm's goes in first under its full name, its guard keeps it from coming back. */
#include <libdrm/drm.h>
#include <xf86drm.h>

#include "drm.h"

#define DRM_DEVICES_MAX 64

/* The driver's name without opening the node: the name of the link
 * /sys/dev/char/MAJ:MIN/device/driver. */
static void sysfs_driver(const char *path, DrmNode *node) {
        char link[64], target[PATH_MAX];
        const char *name;
        struct stat st;
        ssize_t n;

        if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode))
                return;
        snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device/driver", major(st.st_rdev), minor(st.st_rdev));
        n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
                return;
        target[n] = '\0';
        name = strrchr(target, '/');
        name = name ? name + 1 : target;
        /* A name cut short would be another driver's: none rather. */
        if (strlen(name) < sizeof(node->driver))
                memcpy(node->driver, name, strlen(name) + 1);
}

/* Driver name and version from a render node, which needs it to be readable (it usually is).
 * Never a primary node: opening one makes us DRM master while nobody is, and a compositor
 * starting at that instant would fail to become it. */
static void render_node_driver(const char *path, DrmNode *node) {
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
        bool render;

        render = device->available_nodes & (1 << DRM_NODE_RENDER);
        if (render)
                path = device->nodes[DRM_NODE_RENDER];
        else if (device->available_nodes & (1 << DRM_NODE_PRIMARY))
                path = device->nodes[DRM_NODE_PRIMARY];
        else
                return -ENOENT;
        if (!path || strlen(path) >= sizeof(node.path))
                return -ENOENT;

        strcpy(node.path, path);
        if (render)
                render_node_driver(path, &node);
        if (node.driver[0] == '\0')
                sysfs_driver(path, &node);
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

        /* Flags 0: libdrm reads what it needs from sysfs and opens no node. */
        n = drmGetDevices2(0, devices, DRM_DEVICES_MAX);
        if (n < 0)
                return n == -ENODEV ? -ENOENT : n;
        /* n counts every device, also those beyond the array it filled. */
        if (n > DRM_DEVICES_MAX)
                n = DRM_DEVICES_MAX;

        for (int i = 0; i < n; i++)
                if (r == -ENOENT && pci_matches(devices[i], domain, bus, device, function))
                        r = node_of(devices[i], ret);
        drmFreeDevices(devices, n);
        return r;
}
