/* SPDX-License-Identifier: MIT */

#include <string.h>

#include "bus-domain-keys.h"

/* In the XML's order: always present, present when they apply, source-specific. The first ones
 * sit at their BusDomainKeyId; the source-specific ones follow them. */
const BusDomainKey bus_domain_keys[] = {
        [BUS_DOMAIN_KEY_AVAILABLE] = { "available", 'b', "the domain can be read now" },
        [BUS_DOMAIN_KEY_REFERENCE] = { "reference", 's', "the domain this one is calibrated against" },
        [BUS_DOMAIN_KEY_RESOLUTION_NS] = { "resolution_ns", 't', "the smallest step of the clock" },
        [BUS_DOMAIN_KEY_WRAP_BITS] = { "wrap_bits", 'u', "width of the raw value; 64 when it does not wrap" },
        [BUS_DOMAIN_KEY_MONOTONIC] = { "monotonic", 'b', "never goes backwards" },
        [BUS_DOMAIN_KEY_RATE_PPB] = { "rate_ppb", 'x', "estimated rate against the reference, minus nominal" },
        [BUS_DOMAIN_KEY_UNCERTAINTY_NS] = { "uncertainty_ns", 't', "current bound of a conversion to the reference" },
        [BUS_DOMAIN_KEY_RATE_UNCERTAINTY_PPB] = { "rate_uncertainty_ppb", 't', "bound of rate_ppb" },
        [BUS_DOMAIN_KEY_LAST_CALIBRATED_NS] = { "last_calibrated_ns", 'x',
                  "CLOCK_MONOTONIC time of the last burst; 0 for never" },
        [BUS_DOMAIN_KEY_PERFETTO_ID] = { "perfetto_id", 'u', "Perfetto clock id" },
        [BUS_DOMAIN_KEY_VERDICT] = { "verdict", 's', "X server time: identity or tracked; msc: emulated or vblank" },
        [BUS_DOMAIN_KEY_REASON] = { "reason", 's', "while not available, why" },
        [BUS_DOMAIN_KEY_DEVICE_NAME] = { "device_name", 's', "GPUs: the device's name" },
        [BUS_DOMAIN_KEY_DRIVER] = { "driver", 's', "GPUs: the driver's name" },
        [BUS_DOMAIN_KEY_PERIOD_NS] = { "period_ns", 'd', "GPUs: ns per tick" },
        [BUS_DOMAIN_KEY_OFFSET_NS] = { "offset_ns", 'x', "offset against CLOCK_MONOTONIC" },
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
