/* SPDX-License-Identifier: MIT */

/* domains/drm.c: relating a GPU to its /dev/dri node. Whatever the machine has, the answers are
 * well-formed: a node that exists is a /dev/dri path, and numbers or addresses that are not a
 * DRM device give an error, never a node.
 *
 * Then what no machine here has, through stand-ins for libdrm's enumeration (defined below,
 * they take the place of libdrm's for domains/drm.c; each passes on to libdrm unless faking):
 * more devices than drm.c's array (drmGetDevices2() returns the total count), and devices whose
 * nodes are files of ours watched with inotify: a primary node must never be opened (that can
 * make us DRM master under a starting compositor), a render node may be. */

#define _GNU_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* As in domains/drm.c: libdrm's drm.h first, before ours can shadow it. */
#include <libdrm/drm.h>
#include <xf86drm.h>

#include "drm.h"
#include "tap.h"

#define DEVICES_ARRAY 64        /* DRM_DEVICES_MAX in drm.c */
#define DEVICES_TOTAL 100       /* what the stand-in says the machine has */

typedef struct Fake {
        bool on;
        char primary[PATH_MAX], render[PATH_MAX];
        char *nodes_primary_only[DRM_NODE_MAX], *nodes_both[DRM_NODE_MAX];
        drmPciBusInfo pci_other, pci_last;
        drmDevice other, last, primary_only, both;
        drmDevicePtr by_devid;
        int freed_count;        /* drmFreeDevices()'s count; -1: not called */
} Fake;

static Fake fake;

int drmGetDevices2(uint32_t flags, drmDevicePtr devices[], int max_devices) {
        int (*real)(uint32_t, drmDevicePtr[], int);

        if (!fake.on) {
                real = (int (*)(uint32_t, drmDevicePtr[], int)) dlsym(RTLD_NEXT, "drmGetDevices2");
                return real ? real(flags, devices, max_devices) : -ENOSYS;
        }
        /* As libdrm: fills what fits, counts them all. The one that matches comes last. */
        for (int i = 0; devices && i < max_devices && i < DEVICES_TOTAL; i++)
                devices[i] = i == max_devices - 1 ? &fake.last : &fake.other;
        return DEVICES_TOTAL;
}

void drmFreeDevices(drmDevicePtr devices[], int count) {
        void (*real)(drmDevicePtr[], int);

        if (!fake.on) {
                real = (void (*)(drmDevicePtr[], int)) dlsym(RTLD_NEXT, "drmFreeDevices");
                if (real)
                        real(devices, count);
                return;
        }
        fake.freed_count = count;
}

int drmGetDeviceFromDevId(dev_t dev_id, uint32_t flags, drmDevicePtr *device) {
        int (*real)(dev_t, uint32_t, drmDevicePtr *);

        if (!fake.on) {
                real = (int (*)(dev_t, uint32_t, drmDevicePtr *)) dlsym(RTLD_NEXT, "drmGetDeviceFromDevId");
                return real ? real(dev_id, flags, device) : -ENOSYS;
        }
        *device = fake.by_devid;
        return 0;
}

void drmFreeDevice(drmDevicePtr *device) {
        void (*real)(drmDevicePtr *);

        if (!fake.on) {
                real = (void (*)(drmDevicePtr *)) dlsym(RTLD_NEXT, "drmFreeDevice");
                if (real)
                        real(device);
                return;
        }
        *device = NULL;
}

static int touch(const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

static void fake_init(const char *dir) {
        snprintf(fake.primary, sizeof(fake.primary), "%s/card0", dir);
        snprintf(fake.render, sizeof(fake.render), "%s/renderD128", dir);
        fake.nodes_primary_only[DRM_NODE_PRIMARY] = fake.primary;
        fake.nodes_both[DRM_NODE_PRIMARY] = fake.primary;
        fake.nodes_both[DRM_NODE_RENDER] = fake.render;
        fake.primary_only = (drmDevice) { .nodes = fake.nodes_primary_only, .available_nodes = 1 << DRM_NODE_PRIMARY };
        fake.both = (drmDevice) { .nodes = fake.nodes_both,
                                  .available_nodes = (1 << DRM_NODE_PRIMARY) | (1 << DRM_NODE_RENDER) };
        fake.pci_other = (drmPciBusInfo) { .domain = 0, .bus = 1, .dev = 0, .func = 0 };
        fake.pci_last = (drmPciBusInfo) { .domain = 0, .bus = 0x42, .dev = 3, .func = 1 };
        fake.other = fake.both;
        fake.other.bustype = DRM_BUS_PCI;
        fake.other.businfo.pci = &fake.pci_other;
        fake.last = fake.both;
        fake.last.bustype = DRM_BUS_PCI;
        fake.last.businfo.pci = &fake.pci_last;
        fake.freed_count = -1;
        fake.on = true;
}

/* The files opened since the last call, as a bit each: 1 primary, 2 render. */
static int opened(int inotify_fd, int wd_primary, int wd_render) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        int seen = 0;
        ssize_t n;

        while ((n = read(inotify_fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *) p;

                        if (e->mask & IN_OPEN)
                                seen |= (e->wd == wd_primary ? 1 : 0) | (e->wd == wd_render ? 2 : 0);
                        p += sizeof(*e) + e->len;
                }
        return seen;
}

/* A character device in /dev whose sysfs entry names a driver (any kind: a serial port will do),
 * and that driver's name. */
static bool find_driver_node(char *ret_path, size_t path_size, char *ret_driver, size_t driver_size) {
        DIR *d = opendir("/dev");
        struct dirent *de;
        bool found = false;

        while (d && !found && (de = readdir(d))) {
                char link[64], target[PATH_MAX];
                const char *name;
                struct stat st;
                ssize_t n;

                snprintf(ret_path, path_size, "/dev/%s", de->d_name);
                if (stat(ret_path, &st) < 0 || !S_ISCHR(st.st_mode))
                        continue;
                snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device/driver", major(st.st_rdev),
                         minor(st.st_rdev));
                n = readlink(link, target, sizeof(target) - 1);
                if (n <= 0)
                        continue;
                target[n] = '\0';
                name = strrchr(target, '/');
                name = name ? name + 1 : target;
                if (strlen(name) >= driver_size || strlen(name) >= sizeof(((DrmNode *) NULL)->driver))
                        continue;
                strcpy(ret_driver, name);
                found = true;
        }
        if (d)
                closedir(d);
        return found;
}

/* A primary-only device whose node is a real character device: its driver comes from sysfs,
 * and the node still is not opened. */
static void test_sysfs_driver(void) {
        char path[PATH_MAX], driver[64], *nodes[DRM_NODE_MAX] = {};
        drmDevice device = { .nodes = nodes, .available_nodes = 1 << DRM_NODE_PRIMARY };
        int inotify_fd, wd;
        DrmNode node = {};
        int r;

        if (!find_driver_node(path, sizeof(path), driver, sizeof(driver))) {
                skip("no character device in /dev names its driver in sysfs");
                return;
        }
        nodes[DRM_NODE_PRIMARY] = path;
        inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        wd = inotify_add_watch(inotify_fd, path, IN_OPEN);
        fake.by_devid = &device;
        r = drm_node_from_devnum(226, 0, &node);
        ok(r == 0 && strcmp(node.driver, driver) == 0, "%s as a primary node: driver \"%s\" from sysfs (%d, \"%s\")",
           path, driver, r, node.driver);
        if (wd >= 0)
                is_int(opened(inotify_fd, wd, -1), 0, "  without opening it");
        else
                skip("cannot watch it with inotify");
        close(inotify_fd);
}

static void test_fakes(void) {
        char dir[] = "/tmp/test-drm-XXXXXX";
        int inotify_fd, wd_primary, wd_render;
        DrmNode node;
        int r;

        if (!mkdtemp(dir)) {
                ok(false, "mkdtemp: %m");
                return;
        }
        fake_init(dir);
        ok(touch(fake.primary) == 0 && touch(fake.render) == 0, "stand-in nodes %s, %s", fake.primary, fake.render);
        inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        wd_primary = inotify_add_watch(inotify_fd, fake.primary, IN_OPEN);
        wd_render = inotify_add_watch(inotify_fd, fake.render, IN_OPEN);
        ok(inotify_fd >= 0 && wd_primary >= 0 && wd_render >= 0, "watch them for IN_OPEN");

        /* More devices than the array: the count is clamped, and the last filled one found. */
        node = (DrmNode) {};
        r = drm_node_from_pci(0, 0x42, 3, 1, &node);
        ok(r == 0 && strcmp(node.path, fake.render) == 0, "the device in the array's last slot is found (%d)", r);
        is_int(fake.freed_count, DEVICES_ARRAY, "drmFreeDevices() gets the entries filled, not the total count");
        (void) opened(inotify_fd, wd_primary, wd_render);

        /* A device with only a primary node: named, never opened. */
        fake.by_devid = &fake.primary_only;
        node = (DrmNode) {};
        r = drm_node_from_devnum(226, 0, &node);
        ok(r == 0 && strcmp(node.path, fake.primary) == 0, "a primary-only device gives its primary node (%d)", r);
        is_int(opened(inotify_fd, wd_primary, wd_render), 0, "  which is not opened");
        ok(node.driver_version[0] == '\0', "  so there is no driver version");

        /* Both nodes: the render node, which may be opened for the driver's version. */
        fake.by_devid = &fake.both;
        node = (DrmNode) {};
        r = drm_node_from_devnum(226, 128, &node);
        ok(r == 0 && strcmp(node.path, fake.render) == 0, "a device with both nodes gives its render node (%d)", r);
        is_int(opened(inotify_fd, wd_primary, wd_render) & 1, 0, "  and its primary node is not opened");
        test_sysfs_driver();

        fake.on = false;
        close(inotify_fd);
        unlink(fake.primary);
        unlink(fake.render);
        rmdir(dir);
}

int main(void) {
        struct stat st;
        DrmNode node = { .path = "untouched" };
        int r;

        /* /dev/null is a character device, but not a DRM one. */
        ok(stat("/dev/null", &st) == 0, "stat /dev/null");
        r = drm_node_from_devnum(major(st.st_rdev), minor(st.st_rdev), &node);
        ok(r < 0 && strcmp(node.path, "untouched") == 0, "/dev/null's numbers are no DRM node (%d)", r);
        is_int(drm_node_from_devnum(-1, 0, &node), -EINVAL, "negative major");
        is_int(drm_node_from_devnum(226, 128, NULL), -EINVAL, "NULL ret");

        /* A PCI address no machine has (function 7 of device 31 on bus 255, domain 0xffff). */
        r = drm_node_from_pci(0xffff, 0xff, 0x1f, 7, &node);
        ok(r < 0 && strcmp(node.path, "untouched") == 0, "an absent PCI address has no node (%d)", r);

        /* Where the machine has render nodes, the first one resolves to itself. */
        if (stat("/dev/dri/renderD128", &st) == 0) {
                r = drm_node_from_devnum(major(st.st_rdev), minor(st.st_rdev), &node);
                ok(r == 0 && strcmp(node.path, "/dev/dri/renderD128") == 0, "renderD128 is found (%s)", node.path);
                diag("driver %s, version %s", node.driver, node.driver_version);
        } else
                skip("no /dev/dri/renderD128 here");

        test_fakes();
        return done_testing();
}
