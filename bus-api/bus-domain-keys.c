/* SPDX-License-Identifier: MIT */

#include <string.h>

#include "bus-domain-keys.h"

/* In the XML's order: always present, present when they apply, source-specific. */
const BusDomainKey bus_domain_keys[] = {
        { "available", 'b', "the domain can be read now" },
        { "reference", 's', "the domain this one is calibrated against" },
        { "resolution_ns", 't', "the smallest step of the clock" },
        { "wrap_bits", 'u', "width of the raw value; 64 when it does not wrap" },
        { "monotonic", 'b', "never goes backwards" },
        { "rate_ppb", 'x', "estimated rate against the reference, minus nominal" },
        { "uncertainty_ns", 't', "current bound of a conversion to the reference" },
        { "rate_uncertainty_ppb", 't', "bound of rate_ppb" },
        { "last_calibrated_ns", 'x', "CLOCK_MONOTONIC time of the last burst; 0 for never" },
        { "perfetto_id", 'u', "Perfetto clock id" },
        { "verdict", 's', "X server time: identity or tracked; msc: emulated or vblank" },
        { "reason", 's', "while not available, why" },
        { "device_name", 's', "GPUs: the device's name" },
        { "driver", 's', "GPUs: the driver's name" },
        { "period_ns", 'd', "GPUs: ns per tick" },
        { "offset_ns", 'x', "offset against CLOCK_MONOTONIC" },
        { "owner", 's', "application domains: the owner's unique bus name" },
        { "same_as", 's', "the domain this one equals right now" },
        { "view_of", 's', "the domain this one is another encoding of" },
        { "x11_display", 's', "the X display" },
        { "x11_server_id", 't', "the token on the X server's root window" },
        { "connected", 'b', "connected to the X server now" },
        { "probes", 't', "probes sent so far" },
        { "rtt_min_ns", 'x', "the best round trip of a probe" },
        { "rtt_p50_ns", 'x', "the median round trip" },
        { "probe_cpu_ns", 'x', "CPU time per probe" },
        { "refresh_interval_ns", 'd', "the screen's refresh interval, measured" },
        { "mode_refresh_hz", 'd', "the refresh rate of the CRTC's mode" },
        { "variable_refresh", 'b', "the output may refresh at a variable rate" },
        { "next_vblank_ns", 'x', "CLOCK_MONOTONIC time of the next vblank" },
        { "next_vblank_msc", 't', "the counter of the next vblank" },
        { "crtc", 's', "the CRTC whose vblanks are counted" },
        { "verdict_reason", 's', "why the verdict" },
        { "samples", 't', "vblank events read so far" },
        { "missed", 't', "vblank events missed so far" },
        { "host_domain", 's', "the host clock the device is calibrated against" },
        { "valid_bits", 'u', "timestampValidBits" },
        { "pci_bus_id", 's', "the stable name's source: the PCI address" },
        { "uuid", 's', "the stable name's source: the device UUID" },
        { "drm_node", 's', "the device's DRM node" },
        { "max_deviation_ns", 'x', "the best maxDeviation of a calibration" },
        { "driver_version", 's', "the driver's version" },
        { "extension", 's', "the Vulkan extension the calibration uses" },
};

const size_t bus_domain_keys_count = sizeof(bus_domain_keys) / sizeof(bus_domain_keys[0]);

const BusDomainKey *bus_domain_key_find(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < bus_domain_keys_count; i++)
                if (strcmp(bus_domain_keys[i].name, name) == 0)
                        return &bus_domain_keys[i];
        return NULL;
}

bool bus_domain_key_allows(const char *name, char signature) {
        const BusDomainKey *k = bus_domain_key_find(name);

        if (!name)
                return false;
        return k ? k->signature == signature : signature == 's';
}
