/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <systemd/sd-daemon.h>

#include "scheduler.h"
#include "cleanup.h"
#include "time-util.h"

/* The first ticks after start-up come quickly: a second burst 10 ms after the first bounds the
 * rates a hundred times tighter than the prior alone, before the first clients ask. */
static const uint64_t warmup_usec[] = { 10 * 1000, 100 * 1000 };
/* How often the kernel's NTP discipline is looked at between bursts (and calls): clients of the
 * shared table never call, and an idle cadence of 30 s would leave a slew unseen that long. */
#define DISCIPLINE_CHECK_USEC (UINT64_C(1) * 1000000)

/* Everything the scheduler tells goes through publish.h, the table first. */
static void scheduler_tell(Scheduler *s, const DaemonChange *ch) {
        if (daemon_publish(s->core, s->bus_api, s->log, ch))
                s->n_publishes++;
}

static void scheduler_publish(Scheduler *s) {
        scheduler_tell(s, &(const DaemonChange) { .models = true });
}

/* A step of domain index (and its views): the new segment is in the table before the signal. */
static void scheduler_emit_discontinuity(Scheduler *s, size_t index, int64_t step_ns, BusDiscontinuityKind kind) {
        DaemonChange ch = {};

        daemon_change_discontinuity(&ch, index, step_ns, kind);
        scheduler_tell(s, &ch);
}

static void scheduler_watch(Scheduler *s, size_t index);

/* In the words ListDomains gives as the reason ("cannot connect to the X server on :3"), so that
 * the log and the bus tell one story; the errno only when the source gave none. */
static void log_unavailable(Scheduler *s, size_t index, int error) {
        const char *name = core_domain_name(s->core, index);
        DomainStatus status;

        if (core_domain_status(s->core, index, &status) >= 0 && status.unavailable_reason &&
            status.unavailable_reason[0])
                log_warning(s->log, "domain '%s' is unavailable: %s", name, status.unavailable_reason);
        else
                log_warning_errno(s->log, error, "domain '%s' is unavailable: %m", name);
}

static void scheduler_on_lost(Scheduler *s, size_t index, int error) {
        log_unavailable(s, index, error);
        scheduler_tell(s, &(const DaemonChange) { .models = true, .changed = true });
}

static int scheduler_on_watch(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        SchedulerWatch *w = userdata;
        Scheduler *s = w->scheduler;
        bool was_available = core_domain_available(s->core, w->index);
        int r;

        r = core_domain_dispatch(s->core, w->index);
        if (r < 0 && was_available)
                scheduler_on_lost(s, w->index, r);
        /* The source may have dropped or replaced its fd. */
        scheduler_watch(s, w->index);
        return 0;
}

/* (Re)creates the io source on the domain's current fd. Cheap (two epoll_ctl), and done after
 * every call into the domain: a reconnection may give the same fd number to a new connection. */
static void scheduler_watch(Scheduler *s, size_t index) {
        SchedulerWatch *w = &s->watches[index];
        int fd, r;

        w->source = sd_event_source_disable_unref(w->source);
        /* While a thread reads a burst, the connection is the thread's. */
        if (burst_worker_busy(s->workers[index].worker))
                return;
        fd = core_domain_watch_fd(s->core, index);
        if (fd < 0)
                return;
        *w = (SchedulerWatch) { .scheduler = s, .index = index };
        r = sd_event_add_io(s->event, &w->source, fd, EPOLLIN, scheduler_on_watch, w);
        if (r < 0) {
                log_warning_errno(s->log, r, "domain '%s': cannot watch its connection: %m",
                                  core_domain_name(s->core, index));
                return;
        }
        (void) sd_event_source_set_description(w->source, "domain-watch");
}

static void scheduler_calibrate(Scheduler *s, size_t index, bool may_repeat);

/* What follows from one burst of domain index (r and burst from core_calibrate()). true when
 * it wrote the table (a step, a change of rate), which then holds this burst's model. */
static bool scheduler_calibrated(Scheduler *s, size_t index, bool was_available, int r, const CoreBurst *b,
                                 bool may_repeat) {
        const char *name = core_domain_name(s->core, index);
        CoreBurst burst = *b;

        scheduler_watch(s, index);
        /* A monitor plugged in: its vblank domain joins (the next tick reads it). */
        if (core_relist(s->core) > 0)
                scheduler_tell(s, &(const DaemonChange) { .added = true });
        if (was_available != core_domain_available(s->core, index)) {
                if (r < 0)
                        log_unavailable(s, index, r);
                else
                        log_notice(s->log, "domain '%s' is available again", name);
                scheduler_tell(s, &(const DaemonChange) { .changed = true });
        }
        if (r < 0) {
                log_debug_errno(s->log, r, "domain '%s': burst failed: %m", name);
                return false;
        }

        switch (burst.verdict) {
        case ESTIMATOR_STEP:
                /* Named as the Discontinuity signal names it: a restart is not a step. */
                if (burst.restarted)
                        log_notice(s->log, "discontinuity: '%s' restarted (its clock moved by %+" PRId64 " ns); a new "
                                   "segment starts", name, burst.step_ns);
                else
                        log_notice(s->log, "discontinuity: '%s' stepped by %+" PRId64 " ns; a new segment starts",
                                   name, burst.step_ns);
                /* The new segment goes to the table first (publish.h): a client that converts as
                 * soon as it hears of the step must not get the old model from its fast path. */
                scheduler_emit_discontinuity(s, index, burst.step_ns,
                                             burst.restarted ? BUS_DISCONTINUITY_RESTART : BUS_DISCONTINUITY_STEP);
                if (may_repeat)
                        scheduler_calibrate(s, index, false);
                return true;
        case ESTIMATOR_RATE_CHANGE:
                /* A slew moves no value, but the old model is wrong from here on: clients that
                 * cached a model or a conversion need to hear of it as of a step. */
                log_info(s->log, "the rate of '%s' changed; a new segment starts", name);
                scheduler_emit_discontinuity(s, index, 0, BUS_DISCONTINUITY_RATE);
                return true;
        default:
                return false;
        }
}

/* A burst a thread read has ended: take it in as core_calibrate() would have. */
static void scheduler_on_burst_done(BurstWorker *worker, void *userdata) {
        SchedulerWorker *w = userdata;
        Scheduler *s = w->scheduler;
        CoreBurst burst = {};
        Sample *samples;
        size_t n;
        int read_result, r;

        core_domain_set_busy(s->core, w->index, NULL);
        r = burst_worker_result(worker, &read_result, &samples, &n);
        if (r >= 0)
                r = core_calibrate_samples(s->core, w->index, read_result, samples, n, &burst);
        /* The other domains' models went to the table with the tick; this one's now, unless a
         * step already put it there. */
        if (!scheduler_calibrated(s, w->index, w->was_available, r, &burst, w->may_repeat))
                scheduler_publish(s);
}

/* Whether domain index's bursts are read by a thread: its source has a connection of its own (a
 * server that may stop answering) or says its next burst may block (a GPU reconnecting), and the
 * first tick, which runs before the loop does, is over. A burst still in its thread stays there:
 * the domain is the thread's, not to be asked. */
static bool scheduler_reads_off_loop(Scheduler *s, size_t index) {
        const DomainOps *ops;
        Domain *domain;

        if (!s->tick_source || core_domain_source(s->core, index, &ops, &domain) < 0)
                return false;
        return ops->dispatch || burst_worker_busy(s->workers[index].worker) ||
               (ops->burst_may_block && ops->burst_may_block(domain));
}

/* Hands one burst of domain index to its thread. false: it could not be, read it on the loop. */
static bool scheduler_offload(Scheduler *s, size_t index, bool may_repeat) {
        SchedulerWorker *w = &s->workers[index];
        const DomainOps *ops;
        Domain *domain;
        int r;

        if (!w->worker) {
                w->scheduler = s;
                w->index = index;
                r = core_domain_source(s->core, index, &ops, &domain);
                if (r >= 0)
                        r = burst_worker_new(s->event, ops, domain, scheduler_on_burst_done, w, &w->worker);
                if (r < 0) {
                        /* Tried again at each burst; said once. */
                        if (!w->no_worker_logged)
                                log_warning_errno(s->log, r,
                                                  "domain '%s': no thread for its bursts, read on the loop: %m",
                                                  core_domain_name(s->core, index));
                        w->no_worker_logged = true;
                        return false;
                }
        }
        if (burst_worker_busy(w->worker)) {
                /* Its server is slow to answer: the burst under way is the one this tick wanted. */
                log_debug(s->log, "domain '%s': the last burst is still being read", core_domain_name(s->core, index));
                return true;
        }

        /* The connection is the thread's until the burst ends: nobody else reads from it. */
        s->watches[index].source = sd_event_source_disable_unref(s->watches[index].source);
        w->was_available = core_domain_available(s->core, index);
        w->may_repeat = may_repeat;
        r = burst_worker_start(w->worker, CORE_BURST_SAMPLES);
        if (r < 0) {
                log_warning_errno(s->log, r, "domain '%s': cannot start a burst in its thread: %m",
                                  core_domain_name(s->core, index));
                scheduler_watch(s, index);
                return true;
        }
        core_domain_set_busy(s->core, index, burst_worker_status(w->worker));
        return true;
}

/* One burst of domain index and what follows from it. may_repeat: a step is followed by a second
 * burst at once (only one, so that a clock stepping all the time cannot hold the loop). */
static void scheduler_calibrate(Scheduler *s, size_t index, bool may_repeat) {
        bool was_available = core_domain_available(s->core, index);
        CoreBurst burst = {};
        int r;

        if (scheduler_reads_off_loop(s, index) && scheduler_offload(s, index, may_repeat))
                return;
        r = core_calibrate(s->core, index, &burst);
        scheduler_calibrated(s, index, was_available, r, &burst, may_repeat);
}

/* The kernel's discipline as of now, and whether it changed since the last look. */
static bool scheduler_discipline_changed(Scheduler *s) {
        NtpState now;
        bool changed;

        if (ntp_state_read(&now) < 0)
                return false;
        changed = s->ntp_known && ntp_state_changed(&s->ntp, &now);
        s->ntp = now;
        s->ntp_known = true;
        return changed;
}

static void scheduler_tick(Scheduler *s) {
        (void) scheduler_discipline_changed(s);
        for (size_t i = 0; i < core_count(s->core); i++)
                if (!core_domain_is_hub(s->core, i) && !core_domain_is_view(s->core, i))
                        scheduler_calibrate(s, i, true);
        core_snapshot(s->core);
        /* read at the top of this tick: the kernel's maxerror grows 500 us a second, no more */
        if (s->ntp_known)
                core_snapshot_utc(s->core, s->ntp.utc_maxerror_ns, s->ntp.utc_esterror_ns);
        scheduler_publish(s);
        s->n_ticks++;
}

static uint64_t scheduler_now_usec(Scheduler *s) {
        uint64_t usec = 0;

        /* The loop's cached time: no system call per method call. */
        (void) sd_event_now(s->event, CLOCK_MONOTONIC, &usec);
        return usec;
}

static void scheduler_set_idle(Scheduler *s, bool idle) {
        if (s->idle == idle)
                return;
        s->idle = idle;
        log_debug(s->log, "%s: a burst every %.3g s", idle ? "no client for a while" : "a client is active",
                  (double) (idle ? s->config.idle_cadence_usec : s->config.cadence_usec) / 1e6);
        (void) sd_notifyf(false, "STATUS=%s: %zu domains, a burst every %.3g s",
                          idle ? "Idle" : "Active", core_count(s->core),
                          (double) (idle ? s->config.idle_cadence_usec : s->config.cadence_usec) / 1e6);
}

static int scheduler_arm(Scheduler *s, uint64_t delay_usec) {
        int r;

        /* Bursts need no precision: let the kernel coalesce the wake-up within 5 % of the delay. */
        r = sd_event_source_set_time_accuracy(s->tick_source, delay_usec / 20 + 1);
        if (r >= 0)
                r = sd_event_source_set_time_relative(s->tick_source, delay_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->tick_source, SD_EVENT_ONESHOT);
        return r;
}

static uint64_t scheduler_next_delay_usec(Scheduler *s) {
        uint64_t now_usec = scheduler_now_usec(s);

        if (s->n_ticks <= ELEMENTSOF(warmup_usec)) {
                uint64_t delay_usec = warmup_usec[s->n_ticks - 1];

                return delay_usec < s->config.cadence_usec ? delay_usec : s->config.cadence_usec;
        }
        scheduler_set_idle(s, now_usec >= s->last_activity_usec &&
                              now_usec - s->last_activity_usec >= s->config.idle_after_usec);
        return s->idle ? s->config.idle_cadence_usec : s->config.cadence_usec;
}

static int scheduler_on_tick(sd_event_source *source, uint64_t usec, void *userdata) {
        Scheduler *s = userdata;
        uint64_t delay_usec;
        int r;

        scheduler_tick(s);
        delay_usec = scheduler_next_delay_usec(s);
        log_debug(s->log, "tick %" PRIu64 " done, the next in %.3g s", s->n_ticks, (double) delay_usec / 1e6);
        r = scheduler_arm(s, delay_usec);
        if (r < 0)
                /* Without the timer nothing calibrates any more: better to stop than to lie. */
                return log_error_errno(s->log, r, "cannot re-arm the calibration timer: %m");
        return 0;
}

static void scheduler_on_realtime_changed(void *userdata) {
        Scheduler *s = userdata;

        log_info(s->log, "CLOCK_REALTIME was set: calibrating every domain now");
        scheduler_tick(s);
}

static int scheduler_on_discipline_check(sd_event_source *source, uint64_t usec, void *userdata) {
        Scheduler *s = userdata;

        if (scheduler_discipline_changed(s)) {
                log_info(s->log, "the kernel's NTP discipline changed: calibrating now");
                scheduler_tick(s);
        }
        return sd_event_source_set_time_relative(source, DISCIPLINE_CHECK_USEC);
}

static void scheduler_on_activity(void *userdata) {
        scheduler_client_activity(userdata);
}

void scheduler_client_activity(Scheduler *s) {
        int r;

        /* An answer must not come from a model the kernel already said is wrong: when an NTP
         * daemon changed the rate since the last burst, calibrate before the call is answered
         * (one adjtimex() per call, against the some 100 us a call costs anyway). */
        if (s->tick_source && scheduler_discipline_changed(s)) {
                log_info(s->log, "the kernel's NTP discipline changed since the last burst: calibrating now");
                scheduler_tick(s);
        }

        s->last_activity_usec = scheduler_now_usec(s);
        if (!s->idle || !s->tick_source)
                return;
        scheduler_set_idle(s, false);
        r = scheduler_arm(s, 0);
        if (r < 0)
                log_warning_errno(s->log, r, "cannot bring the next burst forward: %m");
}

int scheduler_new(sd_event *event, Core *core, BusApi *bus_api, const Log *log, const SchedulerConfig *config,
                  Scheduler **ret) {
        Scheduler *s;

        if (!event || !core || !log || !config || !ret)
                return -EINVAL;
        if (config->cadence_usec == 0 || config->idle_cadence_usec == 0)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        s->core = core;
        s->bus_api = bus_api;
        s->log = log;
        s->config = *config;
        core_set_activity_hook(core, scheduler_on_activity, s);
        *ret = s;
        return 0;
}

Scheduler *scheduler_free(Scheduler *s) {
        if (!s)
                return NULL;
        core_set_activity_hook(s->core, NULL, NULL);
        /* First: a burst in flight ends (within its source's budget) before anything it uses goes. */
        for (size_t i = 0; i < ELEMENTSOF(s->workers); i++)
                if (s->workers[i].worker) {
                        s->workers[i].worker = burst_worker_free(s->workers[i].worker);
                        core_domain_set_busy(s->core, i, NULL);
                }
        for (size_t i = 0; i < ELEMENTSOF(s->watches); i++)
                sd_event_source_disable_unref(s->watches[i].source);
        realtime_watch_free(s->realtime_watch);
        sd_event_source_disable_unref(s->tick_source);
        sd_event_source_disable_unref(s->discipline_source);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

int scheduler_start(Scheduler *s) {
        int r;

        if (s->tick_source)
                return -EBUSY;
        s->last_activity_usec = scheduler_now_usec(s);
        scheduler_tick(s);

        r = sd_event_add_time_relative(s->event, &s->tick_source, CLOCK_MONOTONIC, 0, 0, scheduler_on_tick, s);
        if (r < 0)
                return log_error_errno(s->log, r, "cannot add the calibration timer: %m");
        (void) sd_event_source_set_description(s->tick_source, "calibration-tick");
        (void) sd_event_source_set_exit_on_failure(s->tick_source, true);
        r = scheduler_arm(s, scheduler_next_delay_usec(s));
        if (r < 0)
                return log_error_errno(s->log, r, "cannot arm the calibration timer: %m");

        /* The check needs no precision either: it may wait up to a tenth for other wake-ups. */
        r = sd_event_add_time_relative(s->event, &s->discipline_source, CLOCK_MONOTONIC, DISCIPLINE_CHECK_USEC,
                                       DISCIPLINE_CHECK_USEC / 10, scheduler_on_discipline_check, s);
        if (r >= 0) {
                (void) sd_event_source_set_description(s->discipline_source, "ntp-discipline-check");
                r = sd_event_source_set_enabled(s->discipline_source, SD_EVENT_ON);
        }
        if (r < 0)
                /* Slews are still found, at the next burst or call. */
                log_warning_errno(s->log, r, "cannot watch the kernel's NTP discipline: %m");

        r = realtime_watch_new(s->event, scheduler_on_realtime_changed, s, &s->realtime_watch);
        if (r < 0)
                /* Steps of realtime are still found, one tick late. */
                log_warning_errno(s->log, r, "cannot watch for CLOCK_REALTIME being set: %m");
        return 0;
}
