/* SPDX-License-Identifier: MIT */
#pragma once

/* One thread that reads the bursts of one domain whose source talks to a server (x11, msc): a
 * server that is stopped, grabbed by another client or slow then holds this thread, never the
 * event loop and the other domains' clients. The loop hands it a burst and hears back through
 * an eventfd; from burst_worker_start() until the done callback the thread alone uses the
 * Domain, and the loop answers with the status the source gave at the start
 * (burst_worker_status()). At most one burst in flight: a source's own budget bounds it. */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "domain.h"

typedef struct BurstWorker BurstWorker;

/* Called on the loop when a burst ended: take its outcome with burst_worker_result(). */
typedef void (*BurstWorkerDone)(BurstWorker *w, void *userdata);

/* The thread's name (its comm, at most 15 characters), so that one stuck on a server shows in
 * ps -L and a debugger. */
#define BURST_WORKER_THREAD_NAME "burst-worker"

int burst_worker_new(sd_event *event, const DomainOps *ops, Domain *domain, BurstWorkerDone done,
                     void *userdata, BurstWorker **ret);

/* Waits for a burst in flight to end (the source's budget bounds it), ends the thread. Accepts
 * NULL; returns NULL. */
BurstWorker *burst_worker_free(BurstWorker *w);

static inline void burst_worker_freep(BurstWorker **w) {
        burst_worker_free(*w);
}

/* Copies the source's status, then lets the thread read up to n_max samples (at most
 * BURST_WORKER_SAMPLES_MAX). -EBUSY while a burst is in flight. */
#define BURST_WORKER_SAMPLES_MAX 16
int burst_worker_start(BurstWorker *w, size_t n_max);

bool burst_worker_busy(const BurstWorker *w);

/* The status copied at the start of the burst in flight (or of the latest one), empty when the
 * source has none: valid until the next burst_worker_start() or burst_worker_free(). */
const DomainStatus *burst_worker_status(const BurstWorker *w);

/* The outcome of the burst that ended: sample_burst()'s return in *ret_read_result, its samples
 * in *ret_samples (borrowed, valid until the next burst_worker_start()) and *ret_n. -EBUSY while
 * in flight. */
int burst_worker_result(BurstWorker *w, int *ret_read_result, Sample **ret_samples, size_t *ret_n);
