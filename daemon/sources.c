/* SPDX-License-Identifier: MIT */

/* The place where clock sources plug in. Each source exports one DomainOps (domains/domain.h)
 * and lists what it can open on this machine; every domain it lists becomes a node of the graph
 * with its own History (a view shares the History of the domain it shows). The POSIX clocks
 * are always there; the X server time and the GPU sources are optional, behind --no-x11,
 * --display and --no-gpu. Without --display, the X domains are there from the start and follow
 * the session's display (daemon/session-env.c): unavailable, with the reason, until there is one. */

#include <errno.h>
#include <stdlib.h>

#include "present.h"
#include "sources.h"
#include "cleanup.h"
#include "time-util.h"
#include "vulkan.h"
#include "x11.h"

/* Opens every domain ops lists, with config; returns how many were added. */
static int open_source(Core *core, const DomainOps *ops, const void *config, const Log *log) {
        _cleanup_(freep) DomainInfo *infos = NULL;
        size_t n = 0;
        int r, added = 0;

        infos = calloc(CORE_DOMAINS_MAX, sizeof(DomainInfo));
        if (!infos)
                return -ENOMEM;

        r = ops->enumerate(config, infos, CORE_DOMAINS_MAX, &n);
        if (r < 0)
                return log_warning_errno(log, r, "source '%s': cannot list its domains: %m", ops->source);

        for (size_t i = 0; i < n; i++) {
                r = core_add_domain(core, ops, &infos[i], config);
                if (r < 0) {
                        log_warning_errno(log, r, "source '%s': cannot add domain '%s': %m",
                                          ops->source, infos[i].name);
                        continue;
                }
                log_debug(log, "source '%s': domain '%s' added", ops->source, infos[i].name);
                added++;
        }
        return added;
}

/* X server time (x11, x11_us) on options->display, else on the session's, unless --no-x11. */
static int open_x11(Core *core, const Options *options, X11Display *x11_display, const Log *log) {
        const X11Config config = {
                .display = options->display,
                .follow = options->display ? NULL : x11_display,
                .force_tracked = options->x11_tracked,
        };
        char name[X11_DISPLAY_REASON_MAX];
        int r;

        if (options->no_x11)
                return 0;
        r = open_source(core, &domain_x11_ops, &config, log);
        if (r == 0) {
                log_info(log, "no X display (--display or $DISPLAY): no X server time domains");
                return 0;
        }
        if (config.follow && x11_display_get(config.follow, name, sizeof(name), NULL) == -ENXIO)
                log_info(log, "no X display yet: x11, x11_us and msc are unavailable until the session has one");
        /* The screen's vblank counter (msc) through the Present extension, on the same display. */
        if (open_source(core, &domain_present_ops, &config, log) == 0)
                log_info(log, "no X Present extension or no CRTC: no msc domain");
        /* A monitor plugged in later gets its domain then (RandR tells the msc domains). */
        else if (core_set_relist(core, &domain_present_ops, &config, sizeof(config)) < 0)
                log_warning(log, "msc: monitors plugged in later will get no domain until a restart");
        return r;
}

/* GPU device time (gpuN and its stable alias), unless --no-gpu; software rasterizers only with
 * --gpu-software. */
static int open_gpu(Core *core, const Options *options, const Log *log) {
        const VulkanConfig config = {
                .software = options->gpu_software,
        };
        int r;

        if (options->no_gpu)
                return 0;
        r = open_source(core, &domain_vulkan_ops, &config, log);
        if (r == 0)
                log_info(log, "no GPU with calibrated timestamps (or no Vulkan loader): no GPU domains%s",
                         options->gpu_software ? "" : " (software rasterizers need --gpu-software)");
        return r;
}

int sources_open(Core *core, const Options *options, X11Display *x11_display, const Log *log) {
        int r;

        r = open_source(core, &domain_posix_ops, NULL, log);
        if (r < 0)
                return r;

        /* Optional sources: their failures leave the daemon running with what it has. */
        (void) open_x11(core, options, x11_display, log);
        (void) open_gpu(core, options, log);

        return (int) core_count(core);
}
