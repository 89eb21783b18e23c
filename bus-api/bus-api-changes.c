/* SPDX-License-Identifier: MIT */

/* DomainsChanged says what changed: the domains added, removed, and those whose availability
 * flipped since the previous signal, so that a client need not call ListDomains to find out.
 * The object keeps the list it last announced (taken when it is made, then at each signal). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-api-internal.h"
#include "cleanup.h"

struct BusDomainSeen {
        char name[BUS_API_DOMAIN_NAME_MAX + 1];
        bool available;
};

static void seen_freep(BusDomainSeen **p) {
        free(*p);
}

/* The domains as ListDomains would list them now. */
static int take_list(BusApi *a, BusDomainSeen **ret, size_t *ret_n) {
        size_t n = a->ops->count_domains(a->core), k = 0;
        BusDomainSeen *list = calloc(n > 0 ? n : 1, sizeof(*list));

        if (!list)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                BusDomainInfo d = {};

                if (a->ops->get_domain(a->core, i, &d) < 0 || !d.name || !bus_domain_name_is_valid(d.name))
                        continue;       /* gone (-ESRCH), or not listed either */
                memcpy(list[k].name, d.name, strlen(d.name) + 1);
                list[k].available = d.available;
                k++;
        }
        *ret = list;
        *ret_n = k;
        return 0;
}

static const BusDomainSeen *find(const BusDomainSeen *list, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i].name, name) == 0)
                        return &list[i];
        return NULL;
}

int bus_api_changes_init(BusApi *a) {
        return take_list(a, &a->seen, &a->n_seen);
}

void bus_api_changes_done(BusApi *a) {
        free(a->seen);
        a->seen = NULL;
        a->n_seen = 0;
}

/* Appends, as an "as", the names of `of` missing from other (changed: present in both with
 * another availability). */
static int append_names(sd_bus_message *m, const BusDomainSeen *of, size_t n_of, const BusDomainSeen *other,
                        size_t n_other, bool changed) {
        int r = sd_bus_message_open_container(m, 'a', "s");

        for (size_t i = 0; r >= 0 && i < n_of; i++) {
                const BusDomainSeen *o = find(other, n_other, of[i].name);

                if (changed ? o && o->available != of[i].available : !o)
                        r = sd_bus_message_append(m, "s", of[i].name);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_api_emit_domains_changed(BusApi *a) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(seen_freep) BusDomainSeen *now = NULL;
        size_t n_now;
        int r;

        if (!a)
                return -EINVAL;
        r = take_list(a, &now, &n_now);
        if (r < 0)
                return r;

        r = sd_bus_message_new_signal(a->bus, &m, BUS_API_OBJECT, BUS_API_INTERFACE, "DomainsChanged");
        if (r >= 0)     /* added: listed now, not before */
                r = append_names(m, now, n_now, a->seen, a->n_seen, false);
        if (r >= 0)     /* removed: listed before, not now */
                r = append_names(m, a->seen, a->n_seen, now, n_now, false);
        if (r >= 0)     /* changed: in both, available then and not now or the other way */
                r = append_names(m, now, n_now, a->seen, a->n_seen, true);
        if (r >= 0)
                r = sd_bus_send(a->bus, m, NULL);
        if (r < 0)
                return r;

        free(a->seen);
        a->seen = TAKE_PTR(now);
        a->n_seen = n_now;
        return 0;
}
