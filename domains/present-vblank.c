/* SPDX-License-Identifier: MIT */

/* The msc source's vblank bookkeeping: the PresentNotifyMSC requests outstanding, their
 * PresentCompleteNotify events turned into samples (present-box.c) in a ring the next burst
 * empties, and the frame interval those events measure. */

#include <errno.h>
#include <string.h>
#include <time.h>

#include "present-internal.h"

/* An unanswered request is forgotten after this; its event, if it ever comes, is dropped. */
#define PENDING_MAX_AGE_NS INT64_C(5000000000)
/* Frames between the generation's first and latest samples before their UST interval is
 * believed over the nominal one. */
#define INTERVAL_MIN_FRAMES 60

int present_domain_send_notify(Domain *d, uint64_t target_msc) {
        Pending p = { .serial = ++d->next_serial, .target_msc = target_msc,
                      .sent_ns = clock_now_ns(CLOCK_MONOTONIC) };
        int r;

        if (d->n_pending == PRESENT_PENDING_MAX)
                return -EBUSY;
        r = present_conn_notify(&d->conn, p.serial, target_msc);
        if (r < 0)
                return r;
        d->pending[d->n_pending++] = p;
        return 0;
}

double present_domain_interval_ns(const Domain *d) {
        double measured_ns;

        if (d->have_samples && d->last.msc - d->first.msc >= INTERVAL_MIN_FRAMES &&
            present_interval_between(d->first.ust_us, d->first.msc, d->last.ust_us, d->last.msc, &measured_ns) >= 0)
                return measured_ns;
        return d->info.unit.period_ns;
}

static void push_sample(Domain *d, const Sample *s) {
        if (d->n_ring == PRESENT_RING_MAX) {
                memmove(d->ring, d->ring + 1, (PRESENT_RING_MAX - 1) * sizeof(Sample));
                d->n_ring--;
        }
        d->ring[d->n_ring++] = *s;
}

/* A timer's event is its grid (honest, and no step for its jitter: the lag holds that); any
 * other, a display's, is its UST give or take the jitter. */
static int sample_of(const Domain *d, const PresentEvent *e, Sample *ret) {
        if (d->conn.emulated && d->info.lag_ns > 0 && d->info.unit.period_ns == PRESENT_FAKE_INTERVAL_US * 1000.0 &&
            present_fake_grid_fits(e->ust_us, e->msc))
                return present_fake_grid_sample(e, &d->info.unit, ret);
        return present_event_sample(e, &d->info.unit, &d->jitter, ret);
}

static void handle_event(Domain *d, uint32_t serial, const PresentEvent *e) {
        Sample s;
        size_t i;

        for (i = 0; i < d->n_pending && d->pending[i].serial != serial; i++)
                ;
        if (i == d->n_pending)
                return;         /* forgotten, or of an earlier connection */
        d->known = true;
        d->latest = *e;
        if (present_fake_grid_fits(e->ust_us, e->msc))
                d->grid_fits++;
        else
                d->grid_misfits++;

        /* An answer about another frame than the one asked for (the target had passed) is the
         * current state, not that vblank's time: the fake CRTC's UST is then not on its grid. */
        if (d->pending[i].target_msc != 0 && e->msc != d->pending[i].target_msc)
                d->missed++;
        else if (d->pending[i].target_msc != 0 && sample_of(d, e, &s) >= 0) {
                push_sample(d, &s);
                d->samples++;
                if (!d->have_samples)
                        d->first = *e;
                d->last = *e;
                d->have_samples = true;
        }
        d->pending[i] = d->pending[--d->n_pending];
}

/* Everything the connection has, without blocking. */
int present_domain_drain(Domain *d) {
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);

        for (;;) {
                PresentEvent e;
                uint32_t serial;
                int r;

                r = present_conn_read(&d->conn, &serial, &e);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                handle_event(d, serial, &e);
        }
        for (size_t i = 0; i < d->n_pending;)
                if (now_ns - d->pending[i].sent_ns > PENDING_MAX_AGE_NS)
                        d->pending[i] = d->pending[--d->n_pending];
                else
                        i++;
        return 0;
}

/* The next two frames, once the previous requests are answered. */
int present_domain_queue_targets(Domain *d) {
        uint64_t next_msc;
        int64_t next_ns;
        int r;

        if (d->n_pending > 0 || !d->known)
                return 0;
        r = present_next_vblank(d->latest.ust_us, d->latest.msc, present_domain_interval_ns(d),
                                clock_now_ns(CLOCK_MONOTONIC), &next_ns, &next_msc);
        if (r < 0)
                return r;
        r = present_domain_send_notify(d, next_msc);
        if (r >= 0)
                r = present_domain_send_notify(d, next_msc + 1);
        return r;
}

/* Emulated: the server says it has no display behind Present, or its counter stands on the
 * fake's grid and has never left it. A display's counter leaves the grid at its first event. */
const char *present_domain_verdict(const Domain *d) {
        if (!present_conn_is_open(&d->conn))
                return NULL;
        if (d->conn.variable_refresh && !d->conn.emulated)
                return "variable";
        if (d->conn.emulated && (d->grid_misfits == 0 || !strstr(d->conn.emulated_reason, "msc follows")))
                return "emulated";
        return d->grid_misfits > 0 ? "vblank" : NULL;
}

const char *present_domain_verdict_reason(const Domain *d) {
        const char *verdict = present_domain_verdict(d);

        if (verdict && strcmp(verdict, "emulated") == 0)
                return d->conn.emulated_reason;
        if (verdict && strcmp(verdict, "variable") == 0)
                return "the output can vary its refresh (vrr_capable): while it does, vblanks are not evenly spaced "
                       "and no line predicts them";
        if (verdict)
                return "msc counts the CRTC's vblanks (its events are off Present's fake timer grid)";
        return "";
}
