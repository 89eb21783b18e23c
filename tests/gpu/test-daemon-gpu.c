/* SPDX-License-Identifier: MIT */

/* timeconvd with Mesa's lavapipe on a private bus. lavapipe's device time is CLOCK_MONOTONIC in
 * ns, so the truth is known: Convert("gpu0", "monotonic", v) is v, within its bound, and gpu0's
 * rate against monotonic_raw is monotonic's, within the two uncertainties. Without a driver
 * (VK_ICD_FILENAMES naming nothing) or with --no-gpu the daemon runs without GPU domains.
 * usage: test-daemon-gpu TIMECONVD LAVAPIPE_ICD_JSON */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"

#define SETTLE_TIMEOUT_NS (INT64_C(30) * 1000000000)
#define SETTLED_CALLS 300               /* consecutive conversions with a bound <= 1 us */
#define TARGET_BOUND_NS 1000
#define MEASURE_NS (INT64_C(3) * 1000000000)     /* 30 bursts at --cadence=0.1 */

/* What ListDomains says of one domain (the entries this test reads). */
typedef struct DomainProps {
        bool found;
        char unit[16];
        char view_of[64];
        bool available;
        int64_t rate_ppb;
        uint64_t rate_uncertainty_ppb;
        uint64_t uncertainty_ns;
        double period_ns;
        char device_name[128];
        char driver[64];
        char host_domain[32];
} DomainProps;

static int read_prop(sd_bus_message *reply, const char *key, const char *contents, void *userdata) {
        DomainProps *p = userdata;
        const char *s;
        int r = 0;

        if (strcmp(contents, "s") == 0 && sd_bus_message_read(reply, "v", "s", &s) >= 0) {
                if (strcmp(key, "view_of") == 0)
                        snprintf(p->view_of, sizeof(p->view_of), "%s", s);
                else if (strcmp(key, "device_name") == 0)
                        snprintf(p->device_name, sizeof(p->device_name), "%s", s);
                else if (strcmp(key, "driver") == 0)
                        snprintf(p->driver, sizeof(p->driver), "%s", s);
                else if (strcmp(key, "host_domain") == 0)
                        snprintf(p->host_domain, sizeof(p->host_domain), "%s", s);
        } else if (strcmp(key, "available") == 0 && strcmp(contents, "b") == 0) {
                int b;

                r = sd_bus_message_read(reply, "v", "b", &b);
                p->available = b;
        } else if (strcmp(key, "rate_ppb") == 0 && strcmp(contents, "x") == 0)
                r = sd_bus_message_read(reply, "v", "x", &p->rate_ppb);
        else if (strcmp(key, "rate_uncertainty_ppb") == 0 && strcmp(contents, "t") == 0)
                r = sd_bus_message_read(reply, "v", "t", &p->rate_uncertainty_ppb);
        else if (strcmp(key, "uncertainty_ns") == 0 && strcmp(contents, "t") == 0)
                r = sd_bus_message_read(reply, "v", "t", &p->uncertainty_ns);
        else if (strcmp(key, "period_ns") == 0 && strcmp(contents, "d") == 0)
                r = sd_bus_message_read(reply, "v", "d", &p->period_ns);
        else
                r = sd_bus_message_skip(reply, "v");
        return r;
}

/* The properties of domain name; found is false when it is not listed. */
static int list_domain(sd_bus *bus, const char *name, DomainProps *ret) {
        DomainProps p = { .found = true };
        int r;

        r = clock_domain_properties(bus, name, read_prop, &p, p.unit, sizeof(p.unit));
        if (r == -ENOENT)
                p = (DomainProps) {};
        else if (r < 0)
                return r;
        *ret = p;
        return 0;
}

static bool has_gpu_domain(char **domains) {
        for (char **d = domains; d && *d; d++)
                if (strncmp(*d, "gpu", 3) == 0)
                        return true;
        return false;
}

static char *gpu_alias(char **domains) {
        for (char **d = domains; d && *d; d++)
                if (strncmp(*d, "gpu-", 4) == 0)
                        return *d;
        return NULL;
}

/* Converts CLOCK_MONOTONIC now from gpu0 (or its alias) and back until the bound has been <= 1 us
 * for SETTLED_CALLS calls in a row, for MEASURE_NS at least; every answer must hold the truth. */
static void check_convert(sd_bus *bus, const char *from) {
        unsigned calls = 0, failed = 0, outside = 0, settled = 0;
        uint64_t best_u = UINT64_MAX, settled_max_u = 0;
        int64_t start_ns = clock_now_ns(CLOCK_MONOTONIC), deadline_ns = start_ns + SETTLE_TIMEOUT_NS;

        /* At least MEASURE_NS of bursts, so that the rate is known well enough to be compared. */
        while ((settled < SETTLED_CALLS || clock_now_ns(CLOCK_MONOTONIC) < start_ns + MEASURE_NS) &&
               clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                int64_t v = clock_now_ns(CLOCK_MONOTONIC), got, back;
                uint64_t u, u_back;

                calls++;
                if (clock_convert(bus, from, "monotonic", v, NULL, &got, &u) < 0 ||
                    clock_convert(bus, "monotonic", from, v, NULL, &back, &u_back) < 0) {
                        failed++;
                        settled = 0;
                        continue;
                }
                if (!bracket_holds(got, u, v, v) || !bracket_holds(back, u_back, v, v)) {
                        if (outside++ < 3)
                                diag("%s %" PRIi64 " -> monotonic %" PRIi64 " +- %" PRIu64 ", back %" PRIi64
                                     " +- %" PRIu64, from, v, got, u, back, u_back);
                }
                best_u = u < best_u ? u : best_u;
                if (u <= TARGET_BOUND_NS && u_back <= TARGET_BOUND_NS) {
                        settled++;
                        settled_max_u = u > settled_max_u ? u : settled_max_u;
                } else
                        settled = 0;
        }
        diag("%s: %u calls, best bound %" PRIu64 " ns", from, calls, best_u);
        ok(failed == 0, "Convert(%s <-> monotonic) answers every call (%u failed)", from, failed);
        is_int(outside, 0, "lavapipe's device time is CLOCK_MONOTONIC: every answer holds it");
        ok(settled >= SETTLED_CALLS, "the bound settles at <= 1 us (%u calls in a row, largest %" PRIu64 " ns)",
           settled, settled_max_u);
}

static void check_rate(sd_bus *bus) {
        DomainProps gpu, mono;
        int64_t diff;

        if (list_domain(bus, "gpu0", &gpu) < 0 || list_domain(bus, "monotonic", &mono) < 0) {
                ok(false, "ListDomains answers");
                return;
        }
        diff = gpu.rate_ppb - mono.rate_ppb;
        diag("rate_ppb gpu0 %" PRIi64 " +- %" PRIu64 ", monotonic %" PRIi64 " +- %" PRIu64, gpu.rate_ppb,
             gpu.rate_uncertainty_ppb, mono.rate_ppb, mono.rate_uncertainty_ppb);
        ok((uint64_t) llabs(diff) <= gpu.rate_uncertainty_ppb + mono.rate_uncertainty_ppb + 1,
           "gpu0 runs at monotonic's rate within the uncertainties (%" PRIi64 " ppb apart)", diff);
        ok(gpu.rate_uncertainty_ppb > 0 || diff == 0, "the rate's uncertainty is not hidden");
}

static void check_listing(sd_bus *bus, char **domains) {
        DomainProps gpu, alias;
        char *alias_name = gpu_alias(domains);

        ok(list_domain(bus, "gpu0", &gpu) >= 0 && gpu.found, "gpu0 is listed");
        ok(gpu.available, "gpu0 is available");
        /* A GPU's unit is its tick, whatever the period; lavapipe's is 1 ns. */
        ok(strcmp(gpu.unit, "tick") == 0 && gpu.period_ns == 1.0,
           "gpu0's unit: lavapipe ticks are ns (unit \"%s\")", gpu.unit);
        ok(strncmp(gpu.device_name, "llvmpipe", 8) == 0, "device_name \"%s\"", gpu.device_name);
        ok(strcmp(gpu.driver, "llvmpipe") == 0, "driver \"%s\"", gpu.driver);
        ok(strcmp(gpu.host_domain, "monotonic") == 0, "host_domain \"%s\"", gpu.host_domain);
        /* lavapipe has no PCI address: its alias is the UUID, as 8-4-4-4-12 hex digits. */
        ok(alias_name && strlen(alias_name) == 4 + 36 && alias_name[12] == '-' && alias_name[17] == '-' &&
           alias_name[22] == '-' && alias_name[27] == '-' &&
           strspn(alias_name + 4, "0123456789abcdef-") == 36,
           "a stable alias is listed, the UUID in 8-4-4-4-12 form: %s", alias_name ?: "(none)");
        if (alias_name)
                ok(list_domain(bus, alias_name, &alias) >= 0 && strcmp(alias.view_of, "gpu0") == 0,
                   "the alias is a view of gpu0 (view_of \"%s\")", alias.view_of);
}

/* A daemon with env and args (NULL: the harness's usual --no-x11 --no-gpu) has no GPU domain,
 * and gpu0 is an UnknownDomain. */
static void check_without_gpu(const char *daemon, const char *why, const char *icd, const char *const *args) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(clock_strv_freep) char **domains = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int64_t v;
        uint64_t u;
        int r;

        setenv("VK_ICD_FILENAMES", icd, 1);
        r = harness_new(NULL, &h);
        if (r >= 0)
                r = args ? harness_start_daemon(h, daemon, args, HARNESS_READY_TIMEOUT_MS) :
                           harness_start_timeconvd(h, daemon, NULL);
        is_int(r, 0, why);
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = clock_list_domains(bus, &domains);
        is_int(r, 0, "ListDomains answers");
        ok(domains && clock_strv_contains(domains, "monotonic") && !has_gpu_domain(domains),
           "the POSIX domains and no GPU domain");
        r = bus ? clock_convert(bus, "gpu0", "monotonic", 0, &error, &v, &u) : -ENOTCONN;
        ok(r == -ENOENT && sd_bus_error_has_name(&error, BUS_ERROR_UNKNOWN_DOMAIN), "gpu0 is an UnknownDomain");
        ok(harness_daemon_alive(h), "the daemon keeps running");
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(clock_strv_freep) char **domains = NULL;
        /* lavapipe is a CPU device: without --gpu-software the daemon leaves it out. */
        const char *const args[] = { "--no-x11", "--gpu-software", "--cadence=0.1", NULL };
        const char *const args_default[] = { "--no-x11", "--cadence=0.1", NULL };
        int r;

        tap_args(argc, argv, 2, "TIMECONVD LAVAPIPE_ICD_JSON");
        tap_require_file(argv[2], "mesa-vulkan-drivers");

        setenv("VK_ICD_FILENAMES", argv[2], 1);
        r = harness_new(NULL, &h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return done_testing();
        r = harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS);
        is_int(r, 0, "timeconvd starts on lavapipe and says READY=1");
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0)
                r = clock_list_domains(bus, &domains);
        is_int(r, 0, "ListDomains answers");
        if (r < 0)
                return done_testing();

        check_listing(bus, domains);
        check_convert(bus, "gpu0");
        if (gpu_alias(domains))
                check_convert(bus, gpu_alias(domains));
        check_rate(bus);
        ok(harness_daemon_alive(h), "the daemon keeps running");
        bus = sd_bus_flush_close_unref(bus);
        h = harness_free(h);

        check_without_gpu(argv[1], "VK_ICD_FILENAMES naming nothing: timeconvd starts",
                          "/nonexistent/icd.json", args);
        check_without_gpu(argv[1], "--no-gpu: timeconvd starts", argv[2], NULL);
        check_without_gpu(argv[1], "lavapipe without --gpu-software: timeconvd starts", argv[2], args_default);
        return done_testing();
}
