/* SPDX-License-Identifier: MIT */
#pragma once

/* Application clocks under load: what a client pushes and converts (load-push.c). */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "load.h"
#include "timeconv.h"

#define LOAD_APP_NAME_MAX 32

typedef struct LoadApp {
        char name[LOAD_APP_NAME_MAX];
        int64_t offset_ns;              /* the clock is CLOCK_BOOTTIME + offset_ns */
        int64_t last_push_ns;
        bool supported;                 /* false once the daemon said it has no PushSnapshot */
} LoadApp;

void load_app_name(unsigned index, char ret[LOAD_APP_NAME_MAX]);
int64_t load_app_offset_ns(unsigned index);

int load_push(sd_bus *bus, const char *const *names, const int64_t *values, size_t n, sd_bus_error *error);
int load_push_bracketed(sd_bus *bus, const char *name, int64_t offset_ns, sd_bus_error *error);

/* The client's side: push when due, convert (way % 3: ours -> monotonic over D-Bus, monotonic ->
 * ours through the library, realtime -> client other's over D-Bus). */
bool load_app_due(const LoadApp *a);
int load_app_push(LoadApp *a, sd_bus *bus, LoadClientStats *stats, int64_t deadline_ns);
void load_app_convert(LoadApp *a, sd_bus *bus, struct timeconv *tc, unsigned way, unsigned other,
                      LoadClientStats *stats, int64_t deadline_ns);

/* The hostile client's side: malformed snapshot number i; once, the quotas. */
void load_push_garbage(sd_bus *bus, unsigned i, const LoadShared *shared, LoadClientStats *stats,
                       int64_t deadline_ns);
void load_push_quotas(sd_bus *bus, LoadClientStats *stats, int64_t deadline_ns);
