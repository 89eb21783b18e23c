/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by domains/present.c (the DomainOps: connecting, bursts, status) and
 * domains/present-vblank.c (the PresentNotifyMSC requests and their events) only: not
 * installed, not part of the source's interface (present.h). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "present-box.h"
#include "present-conn.h"
#include "source-time.h"
#include "x11.h"

#define PRESENT_PENDING_MAX 4
#define PRESENT_RING_MAX 16

typedef struct Pending {
        uint32_t serial;
        uint64_t target_msc;            /* 0: the current (ust, msc), not a sample */
        int64_t sent_ns;
} Pending;

struct Domain {
        DomainInfo info;
        X11Link link;                   /* the display, the wait between attempts, why not */
        PresentConn conn;
        uint64_t generation;            /* +1 per new server connection */
        PresentJitter jitter;
        /* The server's CRTC runs at a rate the unit's period cannot model (a new server, another
         * mode): no samples until the core can re-make the domain. */
        bool mismatch;
        uint32_t next_serial;
        Pending pending[PRESENT_PENDING_MAX];
        size_t n_pending;
        bool known;                     /* latest (ust, msc) of any kind, to aim the next targets */
        PresentEvent latest;
        bool have_samples;              /* first and last sample events of this generation */
        PresentEvent first, last;
        Sample ring[PRESENT_RING_MAX];
        size_t n_ring;
        uint64_t samples, missed;
        /* Events on the fake CRTC's grid and off it (present_fake_grid_fits()), this generation. */
        uint64_t grid_fits, grid_misfits;
        /* The per-output domains the server's CRTCs give now (DomainStatus.listed), and +1 each
         * time they differ from before (a monitor plugged in or out). */
        DomainInfo listed[PRESENT_CRTCS_MAX];
        size_t n_listed;
        uint64_t list_epoch;
};
_Static_assert(offsetof(struct Domain, info) == 0, "domain_info_first() reads it there");

/* present-vblank.c */

/* Sends PresentNotifyMSC for target_msc (0: the current (ust, msc)) and remembers it as pending.
 * -EBUSY when PRESENT_PENDING_MAX are outstanding, else as present_conn_notify(). */
int present_domain_send_notify(Domain *d, uint64_t target_msc);

/* The frame interval: measured over this generation's samples once they span enough frames,
 * else the unit's nominal one. */
double present_domain_interval_ns(const Domain *d);

/* Takes every event the connection has, without blocking, into the ring and forgets requests
 * unanswered for too long. -ENOTCONN when the connection failed. */
int present_domain_drain(Domain *d);

/* Asks for the next two frames once the previous requests are answered. */
int present_domain_queue_targets(Domain *d);

/* "emulated" (Present counts a timer), "variable" (a variable-refresh output), "vblank" (a
 * display's counter, once events say so) or NULL (not yet known), and why, for the status. */
const char *present_domain_verdict(const Domain *d);
const char *present_domain_verdict_reason(const Domain *d);
