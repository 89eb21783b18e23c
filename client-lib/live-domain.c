/* SPDX-License-Identifier: MIT */

/* struct timeconv_domain: the object ListDomains fills (live-domains.c) and its getters. A getter
 * of NULL answers "" or 0, as a domain the daemon said nothing of. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "live-domain.h"
#include "timeconv-internal.h"

static void domain_free(struct timeconv_domain *d) {
        if (!d)
                return;
        free(d->name);
        free(d->unit);
        free(d->reference);
        free(d->verdict);
        free(d->device_name);
        free(d->driver);
        for (size_t i = 0; i < d->n_properties; i++) {
                free(d->properties[i].key);
                free(d->properties[i].s);
        }
        free(d->properties);
        free(d);
}

struct timeconv_domain *live_domain_new(void) {
        struct timeconv_domain *d = calloc(1, sizeof(*d));

        if (!d)
                return NULL;
        d->name = strdup("");
        d->unit = strdup("");
        d->reference = strdup("");
        d->verdict = strdup("");
        d->device_name = strdup("");
        d->driver = strdup("");
        if (!d->name || !d->unit || !d->reference || !d->verdict || !d->device_name || !d->driver) {
                domain_free(d);
                return NULL;
        }
        return d;
}

TIMECONV_EXPORT struct timeconv_domain **timeconv_domains_free(struct timeconv_domain **domains) {
        if (!domains)
                return NULL;
        for (struct timeconv_domain **d = domains; *d; d++)
                domain_free(*d);
        free(domains);
        return NULL;
}

TIMECONV_EXPORT const char *timeconv_domain_get_name(const struct timeconv_domain *d) {
        return d ? d->name : "";
}

TIMECONV_EXPORT const char *timeconv_domain_get_unit(const struct timeconv_domain *d) {
        return d ? d->unit : "";
}

TIMECONV_EXPORT const char *timeconv_domain_get_reference(const struct timeconv_domain *d) {
        return d ? d->reference : "";
}

TIMECONV_EXPORT const char *timeconv_domain_get_verdict(const struct timeconv_domain *d) {
        return d ? d->verdict : "";
}

TIMECONV_EXPORT const char *timeconv_domain_get_device_name(const struct timeconv_domain *d) {
        return d ? d->device_name : "";
}

TIMECONV_EXPORT const char *timeconv_domain_get_driver(const struct timeconv_domain *d) {
        return d ? d->driver : "";
}

TIMECONV_EXPORT unsigned timeconv_domain_get_flags(const struct timeconv_domain *d) {
        return d ? d->flags : 0;
}

TIMECONV_EXPORT unsigned timeconv_domain_get_wrap_bits(const struct timeconv_domain *d) {
        return d ? d->wrap_bits : 0;
}

TIMECONV_EXPORT uint32_t timeconv_domain_get_perfetto_id(const struct timeconv_domain *d) {
        return d ? d->perfetto_id : 0;
}

TIMECONV_EXPORT uint64_t timeconv_domain_get_resolution_ns(const struct timeconv_domain *d) {
        return d ? d->resolution_ns : 0;
}

TIMECONV_EXPORT int64_t timeconv_domain_get_rate_ppb(const struct timeconv_domain *d) {
        return d ? d->rate_ppb : 0;
}

TIMECONV_EXPORT uint64_t timeconv_domain_get_rate_uncertainty_ppb(const struct timeconv_domain *d) {
        return d ? d->rate_uncertainty_ppb : 0;
}

TIMECONV_EXPORT uint64_t timeconv_domain_get_uncertainty_ns(const struct timeconv_domain *d) {
        return d ? d->uncertainty_ns : 0;
}

TIMECONV_EXPORT int64_t timeconv_domain_get_last_calibrated_ns(const struct timeconv_domain *d) {
        return d ? d->last_calibrated_ns : 0;
}

TIMECONV_EXPORT int64_t timeconv_domain_get_offset_ns(const struct timeconv_domain *d) {
        return d ? d->offset_ns : 0;
}

TIMECONV_EXPORT double timeconv_domain_get_period_ns(const struct timeconv_domain *d) {
        return d ? d->period_ns : 0;
}

TIMECONV_EXPORT size_t timeconv_domain_count_properties(const struct timeconv_domain *d) {
        return d ? d->n_properties : 0;
}

TIMECONV_EXPORT const char *timeconv_domain_get_property_key(const struct timeconv_domain *d, size_t index) {
        return d && index < d->n_properties ? d->properties[index].key : NULL;
}

TIMECONV_EXPORT char timeconv_domain_get_property_type(const struct timeconv_domain *d, size_t index) {
        return d && index < d->n_properties ? d->properties[index].type : 0;
}

/* The property key of d if it is of one of types (their letters). */
static int find(const struct timeconv_domain *d, const char *key, const char *types, const LiveProperty **ret) {
        if (!d || !key || !ret)
                return -EINVAL;
        for (size_t i = 0; i < d->n_properties; i++)
                if (strcmp(d->properties[i].key, key) == 0) {
                        if (!strchr(types, d->properties[i].type))
                                return -EINVAL;
                        *ret = &d->properties[i];
                        return 0;
                }
        return -ENOENT;
}

TIMECONV_EXPORT int timeconv_domain_get_property_bool(const struct timeconv_domain *d, const char *key, int *ret) {
        const LiveProperty *p;
        int r = find(d, key, "b", &p);

        if (r >= 0 && ret)
                *ret = p->b;
        return r;
}

TIMECONV_EXPORT int timeconv_domain_get_property_uint(const struct timeconv_domain *d, const char *key,
                                                      uint64_t *ret) {
        const LiveProperty *p;
        int r = find(d, key, "ut", &p);

        if (r >= 0 && ret)
                *ret = p->u;
        return r;
}

TIMECONV_EXPORT int timeconv_domain_get_property_int(const struct timeconv_domain *d, const char *key,
                                                     int64_t *ret) {
        const LiveProperty *p;
        int r = find(d, key, "x", &p);

        if (r >= 0 && ret)
                *ret = p->x;
        return r;
}

TIMECONV_EXPORT int timeconv_domain_get_property_double(const struct timeconv_domain *d, const char *key,
                                                        double *ret) {
        const LiveProperty *p;
        int r = find(d, key, "d", &p);

        if (r >= 0 && ret)
                *ret = p->d;
        return r;
}

TIMECONV_EXPORT int timeconv_domain_get_property_string(const struct timeconv_domain *d, const char *key,
                                                        const char **ret) {
        const LiveProperty *p;
        int r = find(d, key, "s", &p);

        if (r >= 0 && ret)
                *ret = p->s;
        return r;
}
