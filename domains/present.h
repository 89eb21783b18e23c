/* SPDX-License-Identifier: MIT */
#pragma once

/* The vblank counter of the screen's CRTC through the X Present extension: domain "msc", in
 * frames (unit period: the CRTC's nominal refresh interval), modelled from the UST/MSC pairs of
 * PresentNotifyMSC. Its config is the x11 source's X11Config (x11.h): the same display. No
 * display, no Present or RandR, or no CRTC showing anything: it lists nothing. */

#include "domain.h"
#include "x11.h"

#define PRESENT_DOMAIN "msc"

extern const DomainOps domain_present_ops;
