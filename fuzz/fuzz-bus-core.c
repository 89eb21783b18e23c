/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <string.h>

#include "fuzz-bus-core.h"
#include "fuzz-input.h"

typedef struct StubDomain {
        const char *name;
        const char *unit;
        bool available;
} StubDomain;

/* NULL name: a domain that went away between count_domains() and get_domain() (-ESRCH). */
static const StubDomain domains[] = {
        { "monotonic_raw", "ns", true },
        { "monotonic", "ns", true },
        { "x11", "ms", true },
        { NULL, NULL, false },
        { "gpu0", "tick", false },
};

#define N_DOMAINS (sizeof(domains) / sizeof(domains[0]))

bool fuzz_core_knows(const char *name) {
        for (size_t i = 0; i < N_DOMAINS; i++)
                if (domains[i].name && strcmp(domains[i].name, name) == 0)
                        return true;
        return false;
}

unsigned fuzz_core_listed(void) {
        unsigned n = 0;

        for (size_t i = 0; i < N_DOMAINS; i++)
                n += !!domains[i].name;
        return n;
}

/* The handlers validate every name before the core sees it. */
static void check_name(const char *name) {
        fuzz_check(name && bus_domain_name_is_valid(name), "the core got the name '%s'", name ? name : "(null)");
}

static size_t count_domains(void *userdata) {
        return N_DOMAINS;
}

static int get_domain(void *userdata, size_t index, BusDomainInfo *ret) {
        const StubDomain *d;

        fuzz_check(index < N_DOMAINS, "get_domain(%zu) of %zu", index, N_DOMAINS);
        d = &domains[index];
        if (!d->name)
                return -ESRCH;

        ret->name = d->name;
        ret->unit = d->unit;
        ret->available = d->available;
        ret->reference = FUZZ_REFERENCE;
        ret->resolution_ns = 1;
        ret->wrap_bits = strcmp(d->unit, "ms") == 0 ? 32 : 64;
        ret->monotonic = true;
        ret->rate_ppb = -12;
        ret->uncertainty_ns = 100;
        ret->rate_uncertainty_ppb = 4;
        ret->perfetto_id = 64 + (uint32_t) index;
        if (strcmp(d->name, "x11") == 0)
                ret->verdict = "identity";
        if (strcmp(d->name, "gpu0") == 0) {
                ret->device_name = "llvmpipe";
                ret->driver = "fuzz";
                ret->period_ns = 52.083;
                ret->has_offset_ns = true;
                ret->offset_ns = INT64_MIN;
                ret->n_extras = 2;
                ret->extras[0] = (BusDomainExtra) { "pci_bus_id", "0000:01:00.0" };
                ret->extras[1] = (BusDomainExtra) { "uuid", NULL };     /* skipped */
        }
        return 0;
}

/* The injected failure, when this is the call it is meant for. */
static int injected(FuzzCore *c, unsigned call) {
        return c->error != 0 && call == c->fail_at ? -c->error : 0;
}

/* The handlers look each name up once, before they convert. */
static int resolve(void *userdata, const char *name, size_t *ret_index) {
        check_name(name);
        for (size_t i = 0; i < N_DOMAINS; i++)
                if (domains[i].name && strcmp(domains[i].name, name) == 0) {
                        *ret_index = i;
                        return 0;
                }
        return -ENOENT;
}

static void check_index(size_t index) {
        fuzz_check(index < N_DOMAINS && domains[index].name, "the core got the index %zu", index);
}

static int convert(void *userdata, size_t from, size_t to, int64_t value, int64_t *ret_value,
                   uint64_t *ret_uncertainty_ns) {
        FuzzCore *c = userdata;
        unsigned call = c->converts++;
        int r;

        check_index(from);
        check_index(to);
        r = injected(c, call);
        if (r < 0)
                return r;
        *ret_value = fuzz_core_converted(value);
        *ret_uncertainty_ns = FUZZ_CONVERT_UNCERTAINTY_NS;
        return 0;
}

static int now(void *userdata, size_t domain, int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        FuzzCore *c = userdata;
        int r;

        check_index(domain);
        r = injected(c, 0);
        if (r < 0)
                return r;
        *ret_value = FUZZ_NOW_VALUE;
        *ret_uncertainty_ns = FUZZ_NOW_UNCERTAINTY_NS;
        return 0;
}

static int export_snapshots(void *userdata, char **ret_json) {
        FuzzCore *c = userdata;
        int r = injected(c, 0);
        char *json;

        if (r < 0)
                return r;
        json = strdup(FUZZ_EXPORT_JSON);
        if (!json)
                return -ENOMEM;
        *ret_json = json;
        return 0;
}

static const char *version(void *userdata) {
        return FUZZ_VERSION;
}

static const char *reference_domain(void *userdata) {
        return FUZZ_REFERENCE;
}

static void client_activity(void *userdata) {
        FuzzCore *c = userdata;

        c->activity++;
}

static int shared_table_fd(void *userdata) {
        FuzzCore *c = userdata;
        int r = injected(c, 0);

        return r < 0 ? r : c->table_fd;
}

static int push_snapshot(void *userdata, const char *sender, const BusClockReading *clocks, size_t n,
                         BusPushFailure *ret_failure) {
        FuzzCore *c = userdata;
        int r;

        fuzz_check(n >= BUS_API_SNAPSHOT_CLOCKS_MIN && n <= BUS_API_SNAPSHOT_CLOCKS_MAX, "%zu readings", n);
        fuzz_check(ret_failure && ret_failure->index == SIZE_MAX && !ret_failure->reason, "failure not reset");
        for (size_t i = 0; i < n; i++)
                check_name(clocks[i].name);
        r = injected(c, 0);
        if (r < 0) {
                /* The index may point past the readings: the handler must not believe it. */
                ret_failure->index = c->push_failure_index;
                ret_failure->reason = c->push_failure_reason ? "the stub refuses" : NULL;
        }
        return r;
}

const BusCoreOps fuzz_core_ops = {
        .count_domains = count_domains,
        .get_domain = get_domain,
        .resolve = resolve,
        .convert = convert,
        .now = now,
        .export_snapshots = export_snapshots,
        .version = version,
        .reference_domain = reference_domain,
        .client_activity = client_activity,
        .shared_table_fd = shared_table_fd,
        .push_snapshot = push_snapshot,
};
