/* SPDX-License-Identifier: MIT */

/* Between the core and the state file: what to remember of each domain, and how much of it to
 * believe the next time.
 *
 * A remembered rate is a hint. It becomes the estimator's prior rate +- (its bound + a margin),
 * only for a domain with the same name, source, device and unit, and the estimator drops it as
 * soon as the samples contradict it or bound the rate on their own (the second burst, a second
 * later). The margin covers what moves a rate while the daemon is down:
 *  - within one boot, CLOCK_MONOTONIC_RAW's scale is fixed; a quartz moves by a few ppm with
 *    temperature (a typical oscillator is specified to +-25 ppm over 0-70 °C, so two of them by
 *    at most 50 ppm), and a synchronised NTP daemon's frequency correction changes by a few ppm
 *    an hour: 50 ppm;
 *  - after a reboot the kernel recalibrates the TSC (ppm to tens of ppm) and its NTP frequency
 *    starts at 0 until the NTP daemon restores its drift file (rarely beyond +-100 ppm): 200 ppm.
 * A larger change (an NTP daemon slewing a big offset, a new NTP server, an administrator) is the
 * case the second burst finds; until then, the bound holds at the samples themselves (the boxes
 * pin it there) and only an extrapolation away from them could miss. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "cleanup.h"
#include "time-util.h"

#define STATE_MARGIN_SAME_BOOT_PPB 50000
#define STATE_MARGIN_REBOOT_PPB 200000

/* Which device or server the domain was read from: a GPU's name and bus id, an X display.
 * Equal strings, same clock. */
static void domain_device(const Core *c, size_t index, char ret[STATE_DEVICE_MAX]) {
        static const char *const keys[] = { "pci_bus_id", "uuid", "x11_display" };
        DomainStatus status;
        size_t len = 0;

        ret[0] = 0;
        if (core_domain_status(c, index, &status) < 0)
                return;
        if (status.device_name)
                len += (size_t) snprintf(ret + len, STATE_DEVICE_MAX - len, "device_name=%s;", status.device_name);
        if (status.driver && len < STATE_DEVICE_MAX)
                len += (size_t) snprintf(ret + len, STATE_DEVICE_MAX - len, "driver=%s;", status.driver);
        for (size_t i = 0; i < status.n_extras && i < DOMAIN_EXTRAS_MAX; i++)
                for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
                        if (len < STATE_DEVICE_MAX && status.extras[i].key && status.extras[i].type == 's' &&
                            status.extras[i].s && strcmp(status.extras[i].key, keys[k]) == 0)
                                len += (size_t) snprintf(ret + len, STATE_DEVICE_MAX - len, "%s=%s;",
                                                         keys[k], status.extras[i].s);
        /* Only printable ASCII goes in the file (the parser refuses anything else). */
        for (char *p = ret; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p > 0x7e || *p == '"' || *p == '\\')
                        *p = '?';
}

static void domain_verdict(const Core *c, size_t index, char ret[STATE_VERDICT_MAX]) {
        DomainStatus status;

        ret[0] = 0;
        if (core_domain_status(c, index, &status) < 0 || !status.verdict || strlen(status.verdict) >= STATE_VERDICT_MAX)
                return;
        for (const char *p = status.verdict; *p; p++)
                if (*p < 'a' || *p > 'z')
                        return;
        strcpy(ret, status.verdict);
}

/* The domains whose estimate the file may carry: not the hub (exact by definition), not a
 * view (it has no history of its own). */
static bool domain_keeps_state(const Core *c, size_t index) {
        return !core_domain_is_hub(c, index) && !core_domain_is_view(c, index) && c->domains[index]->ops;
}

int state_from_core(const Core *c, State *ret) {
        State *s = ret;

        memset(s, 0, sizeof(*s));
        state_read_boot_id(s->boot_id);
        for (size_t i = 0; i < core_count(c) && s->n_domains < STATE_DOMAINS_MAX; i++) {
                const CoreDomain *cd = c->domains[i];
                const Segment *seg;
                StateDomain *d = &s->domains[s->n_domains];
                double uncertainty_ppb;

                if (!domain_keeps_state(c, i) || !(seg = history_current(&cd->history)))
                        continue;
                uncertainty_ppb = ceil(seg->model.rate_half * 1e9);
                /* Nothing learned beyond the estimator's own prior (a coarse clock after a few
                 * seconds), or nonsense: nothing to remember. */
                if (!isfinite(uncertainty_ppb) || !isfinite(seg->model.rate) ||
                    uncertainty_ppb >= cd->history.estimator.config.max_rate_error * 1e9 ||
                    llabs(model_rate_ppb(&seg->model)) > STATE_RATE_PPB_MAX)
                        continue;
                *d = (StateDomain) {
                        .unit = cd->info.unit,
                        .rate_ppb = model_rate_ppb(&seg->model),
                        .rate_uncertainty_ppb = (int64_t) uncertainty_ppb,
                        .span_ns = seg->r_end_ns >= seg->r_begin_ns ? seg->r_end_ns - seg->r_begin_ns : 0,
                };
                snprintf(d->name, sizeof(d->name), "%s", cd->info.name);
                snprintf(d->source, sizeof(d->source), "%s", cd->ops->source);
                domain_device(c, i, d->device);
                domain_verdict(c, i, d->verdict);
                s->n_domains++;
        }
        return 0;
}

static const StateDomain *state_find(const State *s, const char *name) {
        for (size_t i = 0; i < s->n_domains; i++)
                if (strcmp(s->domains[i].name, name) == 0)
                        return &s->domains[i];
        return NULL;
}

static bool unit_equal(const DomainUnit *a, const DomainUnit *b) {
        return a->period_ns == b->period_ns && a->wrap_bits == b->wrap_bits && a->truncates == b->truncates &&
               a->events == b->events && a->encoding == b->encoding;
}

static bool same_clock(const StateDomain *a, const StateDomain *b) {
        return strcmp(a->source, b->source) == 0 && strcmp(a->device, b->device) == 0 && unit_equal(&a->unit, &b->unit);
}

void state_merge(const State *known, State *s) {
        bool same_boot = s->boot_id[0] && strcmp(s->boot_id, known->boot_id) == 0;

        for (size_t i = 0; i < known->n_domains; i++) {
                StateDomain kept = known->domains[i];
                StateDomain *d = (StateDomain *) state_find(s, kept.name);

                /* The file will say this boot: what a reboot may have moved goes into the bound,
                 * before it is compared with what this run learned. */
                if (!same_boot)
                        kept.rate_uncertainty_ppb += STATE_MARGIN_REBOOT_PPB - STATE_MARGIN_SAME_BOOT_PPB;
                if (kept.rate_uncertainty_ppb > STATE_RATE_PPB_MAX)
                        continue;
                /* This run learned the domain at least as well (or it is another clock now). */
                if (d && (!same_clock(d, &kept) || d->rate_uncertainty_ppb <= kept.rate_uncertainty_ppb))
                        continue;
                if (d)
                        *d = kept;
                else if (s->n_domains < STATE_DOMAINS_MAX)
                        s->domains[s->n_domains++] = kept;
        }
}

int state_apply(const State *s, Core *c, const Log *log) {
        char boot_id[STATE_BOOT_ID_MAX];
        int64_t margin_ppb;
        int applied = 0, r;

        state_read_boot_id(boot_id);
        margin_ppb = boot_id[0] && strcmp(boot_id, s->boot_id) == 0 ? STATE_MARGIN_SAME_BOOT_PPB
                                                                     : STATE_MARGIN_REBOOT_PPB;

        for (size_t i = 0; i < s->n_domains; i++) {
                const char *name = s->domains[i].name;
                size_t index;

                if (graph_find(&c->graph, name, &index) < 0 || !domain_keeps_state(c, index))
                        log_info(log, "state: no calibrated domain '%s' here now, its remembered rate is ignored", name);
        }

        for (size_t i = 0; i < core_count(c); i++) {
                CoreDomain *cd = c->domains[i];
                const StateDomain *d;
                char device[STATE_DEVICE_MAX];
                double half_ppb;

                if (!domain_keeps_state(c, i) || !(d = state_find(s, cd->info.name)))
                        continue;
                domain_device(c, i, device);
                if (strcmp(d->source, cd->ops->source) != 0 || strcmp(d->device, device) != 0 ||
                    !unit_equal(&d->unit, &cd->info.unit)) {
                        log_info(log, "state: domain '%s' was another clock last time (source, device or unit), "
                                 "its remembered rate is not used", d->name);
                        continue;
                }
                half_ppb = (double) (d->rate_uncertainty_ppb + margin_ppb);
                r = history_set_rate_prior(&cd->history, ((double) d->rate_ppb - half_ppb) * 1e-9,
                                           ((double) d->rate_ppb + half_ppb) * 1e-9);
                if (r < 0) {
                        log_warning_errno(log, r, "state: domain '%s': remembered rate %+.3f ppm not used: %m",
                                          d->name, (double) d->rate_ppb * 1e-3);
                        continue;
                }
                log_info(log, "state: domain '%s' starts from its remembered rate %+.3f ppm +- %.3f ppm "
                         "(a hint until the samples confirm it)", d->name, (double) d->rate_ppb * 1e-3, half_ppb * 1e-3);
                if (d->verdict[0])
                        log_info(log, "state: domain '%s' had the verdict '%s' last time; the probes decide again",
                                 d->name, d->verdict);
                applied++;
        }
        return applied;
}

void state_restore(Core *c, const Log *log, char **ret_dir) {
        _cleanup_(freep) State *s = NULL;
        StateError error = {};
        char *dir = NULL;
        int r;

        *ret_dir = NULL;
        r = state_directory(&dir);
        if (r < 0) {
                log_warning_errno(log, r, "state: no state directory ($STATE_DIRECTORY, $XDG_STATE_HOME or "
                                  "$HOME), learned rates are not kept: %m");
                return;
        }
        *ret_dir = dir;
        r = state_remove_stale(dir);
        if (r > 0)
                log_info(log, "state: removed %d temporary file(s) of a save that was interrupted", r);
        s = malloc(sizeof(*s));
        if (!s)
                return;
        r = state_load(dir, s, &error);
        if (r == -ENOENT)
                log_info(log, "state: no %s/%s, a cold start", dir, STATE_FILE_NAME);
        else if (r < 0)
                log_warning_errno(log, r, "state: %s/%s ignored (%s: %s): %m", dir, STATE_FILE_NAME,
                                  error.code ?: "error", error.code ? error.text : "");
        else
                (void) state_apply(s, c, log);
}

void state_store(const Core *c, const char *dir, const Log *log) {
        _cleanup_(freep) State *s = NULL, *known = NULL;
        int r;

        if (!dir)
                return;
        s = malloc(sizeof(*s));
        known = malloc(sizeof(*known));
        if (!s || !known)
                return;
        r = state_from_core(c, s);
        /* What the file knows and this run did not learn stays (a file refused now is not merged:
         * it was refused at start too, and nothing of it was used). */
        if (r >= 0 && state_load(dir, known, NULL) >= 0)
                state_merge(known, s);
        if (r >= 0)
                r = state_save(dir, s);
        if (r < 0)
                log_warning_errno(log, r, "state: cannot save %s/%s: %m", dir, STATE_FILE_NAME);
        else
                log_debug(log, "state: %zu domains saved in %s/%s", s->n_domains, dir, STATE_FILE_NAME);
}
