/* SPDX-License-Identifier: MIT */
#pragma once

/* When to calibrate, and what to do about what a burst finds. One timer drives ticks; a tick is
 * one burst per domain and then one snapshot. Ticks come every cadence_usec while clients are
 * active and every idle_cadence_usec once nobody has called for idle_after_usec; a call while
 * idle brings the next tick forward at once. A step closes the domain's segment: the scheduler
 * logs it, has Discontinuity emitted (publish.h) and bursts that domain again at once. When CLOCK_REALTIME is set,
 * a tick runs at once. A domain with a connection of its own (X) has its fd watched between
 * bursts, so that a server that goes away makes the domain unavailable at once; after the first
 * tick its bursts are read by a thread of its own (burst-worker.h) and taken in when they end,
 * so that a stopped or grabbed server never holds the loop. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "burst-worker.h"
#include "bus-api.h"
#include "core.h"
#include "log.h"
#include "ntp-state.h"
#include "publish.h"
#include "realtime-watch.h"

typedef struct SchedulerConfig {
        uint64_t cadence_usec;
        uint64_t idle_cadence_usec;
        uint64_t idle_after_usec;
} SchedulerConfig;

typedef struct Scheduler Scheduler;

/* The event source on one domain's watch fd (an X connection), and whose it is. */
typedef struct SchedulerWatch {
        Scheduler *scheduler;
        size_t index;
        sd_event_source *source;        /* NULL: the domain has no fd now */
} SchedulerWatch;

/* The thread that reads one domain's bursts when its source has a connection of its own. */
typedef struct SchedulerWorker {
        Scheduler *scheduler;
        size_t index;
        BurstWorker *worker;            /* NULL: none yet (made at the domain's first burst) */
        bool no_worker_logged;          /* it could not be made, and the log said so once */
        bool was_available;             /* as of the start of the burst in flight */
        bool may_repeat;                /* of the burst in flight, see scheduler_calibrate() */
} SchedulerWorker;

struct Scheduler {
        sd_event *event;
        Core *core;
        BusApi *bus_api;                /* NULL: no signals */
        const Log *log;
        SchedulerConfig config;
        sd_event_source *tick_source;
        sd_event_source *discipline_source;     /* the NTP discipline's check between bursts */
        RealtimeWatch *realtime_watch;
        uint64_t last_activity_usec;    /* CLOCK_MONOTONIC of the latest method call, or the start */
        uint64_t n_ticks;
        uint64_t n_publishes;           /* writes of the shared table */
        bool idle;
        bool ntp_known;                 /* ntp holds the kernel's discipline as of the last check */
        NtpState ntp;
        SchedulerWatch watches[CORE_DOMAINS_MAX];
        SchedulerWorker workers[CORE_DOMAINS_MAX];
};

/* Registers as the core's activity hook; nothing runs before scheduler_start(). */
int scheduler_new(sd_event *event, Core *core, BusApi *bus_api, const Log *log, const SchedulerConfig *config,
                  Scheduler **ret);
Scheduler *scheduler_free(Scheduler *s);

static inline void scheduler_freep(Scheduler **s) {
        scheduler_free(*s);
}

/* Runs the first tick synchronously (every domain gets its first burst before this returns),
 * then arms the timer and the realtime watch. */
int scheduler_start(Scheduler *s);

/* A client called: remember when, and leave idle at once. */
void scheduler_client_activity(Scheduler *s);
