/* SPDX-License-Identifier: MIT */

/* keep-modules.so: an LD_PRELOAD shim for the sanitizer run that makes dlclose() keep every
 * module loaded. LeakSanitizer names the module of each frame when the process exits; a Vulkan
 * driver (lavapipe and its LLVM) that the loader has unloaded by then shows as "<unknown
 * module>", and a leak of its own one-time initialisation could neither be read nor suppressed.
 * Kept loaded, its frames carry the driver's name and fuzz/lsan.supp can name it.
 *
 * Built without sanitizers (it is also preloaded into dbus-daemon and Xvfb); a sanitized
 * process then needs ASAN_OPTIONS=verify_asan_link_order=0, which .ci/run sets. */

#include <dlfcn.h>

__attribute__((visibility("default"))) int dlclose(void *handle);

int dlclose(void *handle) {
        /* The handle stays valid for the life of the process: a later dlopen() of the same
         * module returns it again with its reference count raised, as after a real unload and
         * reload, less the reinitialisation. */
        (void) handle;
        return 0;
}
