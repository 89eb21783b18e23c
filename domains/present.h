/* SPDX-License-Identifier: MIT */
#pragma once

/* The vblank counters of the screen's CRTCs through the X Present extension: domain "msc" (the
 * CRTC at the origin) and "msc-<output>" per lit CRTC, in frames (unit period: the CRTC's
 * refresh interval as RandR gives it now, Present's fake timer's when it runs on one), modelled
 * from the UST/MSC pairs of PresentNotifyMSC. Its config is the x11 source's X11Config (x11.h):
 * the same display. No display, no Present or RandR, or no CRTC showing anything: it lists
 * nothing. */

#include "domain.h"
#include "x11.h"

#define PRESENT_DOMAIN "msc"
/* One domain per lit CRTC: "msc-" and its output's name, lower-cased ("msc-dp-1"). */
#define PRESENT_DOMAIN_PREFIX "msc-"

extern const DomainOps domain_present_ops;
