/* SPDX-License-Identifier: MIT */

/* domains/drm.c: relating a GPU to its /dev/dri node. Whatever the machine has, the answers are
 * well-formed: a node that exists is a /dev/dri path, and numbers or addresses that are not a
 * DRM device give an error, never a node. */

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "drm.h"
#include "tap.h"

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

        return done_testing();
}
