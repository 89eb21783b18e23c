/* SPDX-License-Identifier: MIT */

#include "publish.h"
#include "time-util.h"

void daemon_change_discontinuity(DaemonChange *ch, size_t index, int64_t step_ns, BusDiscontinuityKind kind) {
        if (ch->n_discontinuities == DAEMON_CHANGE_DISCONTINUITIES_MAX)
                return;
        ch->discontinuities[ch->n_discontinuities++] = (DaemonDiscontinuity) {
                .index = index,
                .step_ns = step_ns,
                .kind = kind,
        };
}

/* A view is the same clock in another unit (x11_us of x11, a GPU's stable name of gpuN): a client
 * that watches only the view must hear of the step as well. The step is in ns, the same for all. */
static void emit_discontinuity(const Core *core, BusApi *api, const Log *log, const DaemonDiscontinuity *disc) {
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);

        for (size_t i = 0; i < core_count(core); i++) {
                const char *name = core_domain_name(core, i);
                int r;

                if (i != disc->index && !core_domain_is_view_of(core, i, disc->index))
                        continue;
                r = bus_api_emit_discontinuity(api, name, now_ns, disc->step_ns, disc->kind);
                if (r < 0)
                        log_warning_errno(log, r, "cannot emit Discontinuity for '%s': %m", name);
        }
}

bool daemon_publish(Core *core, BusApi *api, const Log *log, const DaemonChange *ch) {
        bool table = ch->added || ch->removed || ch->models || ch->n_discontinuities > 0;
        int r;

        if (table)
                core_publish(core);
        if (!api)
                return table;
        for (size_t i = 0; i < ch->n_discontinuities; i++)
                emit_discontinuity(core, api, log, &ch->discontinuities[i]);
        if (ch->added || ch->removed || ch->changed) {
                r = bus_api_emit_domains_changed(api);
                if (r < 0)
                        log_warning_errno(log, r, "cannot emit DomainsChanged: %m");
        }
        return table;
}
