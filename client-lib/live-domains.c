/* SPDX-License-Identifier: MIT */

/* ListDomains: a(ssa{sv}) into struct timeconv_domain (live-domain.c has the object and its
 * getters). Strings are kept whole. Each key is read through the contract's key table
 * (bus-domain-keys.h), the daemon's: entries without a getter of their own are kept as typed
 * properties (and those of a type we do not read skipped), so a newer daemon with more
 * properties still reads; a key of the table with another type is refused. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-domain-keys.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "live-domain.h"
#include "live-internal.h"
#include "timeconv-internal.h"

typedef union Variant {
        int b;
        const char *s;
        uint64_t t;
        uint32_t u;
        int64_t x;
        double d;
} Variant;

/* Replaces *dst (never NULL) with a copy of src, whole. */
static int set_string(char **dst, const char *src) {
        char *copy = strdup(src);

        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

/* A key we have no getter for: kept as a property, typed as it came. */
static int take_property(struct timeconv_domain *d, const char *key, char type, const Variant *v) {
        LiveProperty *bigger, *p;

        bigger = realloc(d->properties, (d->n_properties + 1) * sizeof(*bigger));
        if (!bigger)
                return -ENOMEM;
        d->properties = bigger;
        p = &d->properties[d->n_properties];
        *p = (LiveProperty) { .type = type };
        p->key = strdup(key);
        if (!p->key)
                return -ENOMEM;
        switch (type) {
        case 'b':
                p->b = v->b != 0;
                break;
        case 'u':
                p->u = v->u;
                break;
        case 't':
                p->u = v->t;
                break;
        case 'x':
                p->x = v->x;
                break;
        case 'd':
                p->d = v->d;
                break;
        case 's':
                p->s = strdup(v->s);
                if (!p->s) {
                        free(p->key);
                        return -ENOMEM;
                }
                break;
        }
        d->n_properties++;
        return 0;
}

/* Stores key's value into *d when it has a getter, found by its index in the contract's table
 * (bus-domain-keys.h); any other key becomes a property. A key of the table with another type
 * than the table's: -EPROTO. */
static int take_entry(struct timeconv_domain *d, const char *key, char type, const Variant *v) {
        const BusDomainKey *known = bus_domain_key_find(key);

        if (known && known->signature != type)
                return -EPROTO;
        if (!known || bus_domain_key_index(known) >= _BUS_DOMAIN_KEY_COMMON_MAX)
                return take_property(d, key, type, v);

        switch ((BusDomainKeyId) bus_domain_key_index(known)) {
        case BUS_DOMAIN_KEY_AVAILABLE:
                d->flags |= v->b ? TIMECONV_DOMAIN_AVAILABLE : 0;
                break;
        case BUS_DOMAIN_KEY_MONOTONIC:
                d->flags |= v->b ? TIMECONV_DOMAIN_MONOTONIC : 0;
                break;
        case BUS_DOMAIN_KEY_REFERENCE:
                return set_string(&d->reference, v->s);
        case BUS_DOMAIN_KEY_VERDICT:
                return set_string(&d->verdict, v->s);
        case BUS_DOMAIN_KEY_DEVICE_NAME:
                return set_string(&d->device_name, v->s);
        case BUS_DOMAIN_KEY_DRIVER:
                return set_string(&d->driver, v->s);
        case BUS_DOMAIN_KEY_RESOLUTION_NS:
                d->resolution_ns = v->t;
                break;
        case BUS_DOMAIN_KEY_WRAP_BITS:
                d->wrap_bits = v->u;
                break;
        case BUS_DOMAIN_KEY_PERFETTO_ID:
                d->perfetto_id = v->u;
                break;
        case BUS_DOMAIN_KEY_RATE_PPB:
                d->rate_ppb = v->x;
                break;
        case BUS_DOMAIN_KEY_RATE_UNCERTAINTY_PPB:
                d->rate_uncertainty_ppb = v->t;
                d->flags |= TIMECONV_DOMAIN_HAS_RATE_UNCERTAINTY;
                break;
        case BUS_DOMAIN_KEY_UNCERTAINTY_NS:
                d->uncertainty_ns = v->t;
                break;
        case BUS_DOMAIN_KEY_LAST_CALIBRATED_NS:
                d->last_calibrated_ns = v->x;
                break;
        case BUS_DOMAIN_KEY_OFFSET_NS:
                d->offset_ns = v->x;
                d->flags |= TIMECONV_DOMAIN_HAS_OFFSET;
                break;
        case BUS_DOMAIN_KEY_PERIOD_NS:
                d->period_ns = v->d;
                break;
        case BUS_DOMAIN_KEY_REASON:
        case _BUS_DOMAIN_KEY_COMMON_MAX:
                /* reason has no getter of its own: a property, as before */
                return take_property(d, key, type, v);
        }
        return 0;
}

static int read_entry(sd_bus_message *reply, struct timeconv_domain *d) {
        const char *key, *contents;
        Variant v = {};
        char type;
        int r;

        r = sd_bus_message_read(reply, "s", &key);
        if (r >= 0)
                r = sd_bus_message_peek_type(reply, &type, &contents);
        if (r < 0)
                return r;
        if (type != 'v' || strlen(contents) != 1 || !strchr("bstuxd", contents[0]))
                return sd_bus_message_skip(reply, "v");
        r = sd_bus_message_enter_container(reply, 'v', contents);
        if (r >= 0)
                r = sd_bus_message_read_basic(reply, contents[0], &v);
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;
        return take_entry(d, key, contents[0], &v);
}

static int read_domain(sd_bus_message *reply, struct timeconv_domain *d) {
        const char *name, *unit;
        int r;

        r = sd_bus_message_read(reply, "ss", &name, &unit);
        if (r < 0)
                return r;
        if (strlen(name) > BUS_API_DOMAIN_NAME_MAX)
                return -EPROTO;
        r = set_string(&d->name, name);
        if (r >= 0)
                r = set_string(&d->unit, unit);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = read_entry(reply, d);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        return r;
}

static void domains_freep(struct timeconv_domain ***domains) {
        timeconv_domains_free(*domains);
}

/* The entries of a ListDomains reply into a NULL-terminated list. */
static int read_domains(sd_bus_message *reply, struct timeconv_domain ***ret) {
        _cleanup_(domains_freep) struct timeconv_domain **list = NULL;
        size_t n = 0;
        int r;

        list = calloc(1, sizeof(*list));
        if (!list)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(ssa{sv})");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "ssa{sv}")) > 0) {
                struct timeconv_domain **bigger = realloc(list, (n + 2) * sizeof(*list));

                if (!bigger)
                        return -ENOMEM;
                list = bigger;
                list[n + 1] = NULL;
                list[n] = live_domain_new();
                if (!list[n])
                        return -ENOMEM;
                n++;
                r = read_domain(reply, list[n - 1]);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(list);
        return 0;
}

int live_bus_list_domains(struct timeconv *tc, struct timeconv_domain ***ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(tc->bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                           "ListDomains");
        if (r >= 0)
                r = live_bus_call_message(tc, m, &reply);
        if (r < 0)
                return r;

        r = read_domains(reply, ret);
        /* Past the call itself, a failure is a reply we cannot read. */
        if (r < 0 && r != -ENOMEM)
                return -EPROTO;
        return r;
}
