/* SPDX-License-Identifier: MIT */

/* The place where clock sources plug in. Each source exports one DomainOps (domains/domain.h)
 * and lists what it can open on this machine; every domain it lists becomes a node of the graph
 * with its own History. The POSIX clocks are always there; the X server time and the GPU sources
 * come with their own issues and go in sources_open() below, behind --no-x11, --no-gpu and
 * --display. */

#include <errno.h>
#include <stdlib.h>

#include "sources.h"
#include "util.h"

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

/* X server time (x11, x11_us) on options->display, unless --no-x11. */
static int open_x11(Core *core, const Options *options, const Log *log) {
        if (options->no_x11)
                return 0;
        log_debug(log, "source 'x11' (display %s): not built into this version",
                  options->display ?: "$DISPLAY");
        return 0;
}

/* GPU device time (gpuN), unless --no-gpu. */
static int open_gpu(Core *core, const Options *options, const Log *log) {
        if (options->no_gpu)
                return 0;
        log_debug(log, "source 'gpu': not built into this version");
        return 0;
}

int sources_open(Core *core, const Options *options, const Log *log) {
        int r;

        r = open_source(core, &domain_posix_ops, NULL, log);
        if (r < 0)
                return r;

        /* Optional sources: their failures leave the daemon running with what it has. */
        (void) open_x11(core, options, log);
        (void) open_gpu(core, options, log);

        return (int) core_count(core);
}
