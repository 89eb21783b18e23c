/* SPDX-License-Identifier: MIT */

/* The scheduler (daemon/scheduler.h) on a core of fake clocks, its sd-event loop driven by hand:
 * which delay it arms after each tick (the warm-up, the cadence, the idle cadence), that a call
 * while idle brings the next tick forward and a call while active does not, that a step is
 * followed by one more burst of that domain at once (and only one), and that a domain whose
 * connection dies is unavailable at once, without waiting for a tick.
 *
 * Nothing here waits for real time: a tick is made due by setting its timer to now (the delay it
 * had is read first), and the fake clock's reference is simulated, so the bursts are the same on
 * every run. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cleanup.h"
#include "core.h"
#include "core-bus.h"
#include "fake.h"
#include "scheduler.h"
#include "tap.h"
#include "time-util.h"

#define USEC_PER_MSEC UINT64_C(1000)
#define LONG_TIME_USEC (UINT64_C(3600) * USEC_PER_SEC)

/* Every fake sample takes the same time, so a burst moves the simulated reference by a known
 * amount and the number of bursts of a tick can be read off the fake clock. */
#define SAMPLE_DEVIATION_NS INT64_C(100)
#define SAMPLE_INTERVAL_NS INT64_C(1000)
#define BURST_R_NS (CORE_BURST_SAMPLES * (SAMPLE_DEVIATION_NS + SAMPLE_INTERVAL_NS))
#define R_START_NS INT64_C(1000000000)
#define STEP_NS INT64_C(1000000)

static const Log test_log = { .max_level = LOG_ERR };

static FakeConfig fake_config(const FakeStep *steps, size_t n_steps) {
        return (FakeConfig) {
                .offset_ns = 5000,
                .rate_ppm = 20,
                .deviation_min_ns = SAMPLE_DEVIATION_NS,
                .deviation_max_ns = SAMPLE_DEVIATION_NS,
                .r_start_ns = R_START_NS,
                .interval_ns = SAMPLE_INTERVAL_NS,
                .steps = steps,
                .n_steps = n_steps,
                .seed = 7,
        };
}

/* A core with one fake domain "f" (node 1; node 0 is the hub). */
static Core *core_with_fake(const FakeStep *steps, size_t n_steps, size_t *ret_index) {
        FakeConfig fc = fake_config(steps, n_steps);
        DomainInfo info = { .name = "f", .unit = UNIT_NS };
        Core *c = NULL;

        if (core_new(&test_log, &c) < 0 || core_add_domain(c, &domain_fake_ops, &info, &fc) < 0 ||
            core_find(c, "f", ret_index) < 0)
                abort();
        return c;
}

static Scheduler *scheduler_started(sd_event *e, Core *c, const SchedulerConfig *config) {
        Scheduler *s = NULL;

        if (scheduler_new(e, c, NULL, &test_log, config, &s) < 0 || scheduler_start(s) < 0)
                abort();
        /* The kernel's NTP discipline is not ours to script: a slew during the test would add
         * a tick that no row expects. */
        (void) sd_event_source_set_enabled(s->discipline_source, SD_EVENT_OFF);
        return s;
}

/* The delay the scheduler armed at its last tick (or call); UINT64_MAX when the timer is off. */
static uint64_t armed_delay_usec(sd_event *e, Scheduler *s) {
        uint64_t at_usec, now_usec;
        int enabled;

        if (sd_event_source_get_enabled(s->tick_source, &enabled) < 0 || enabled == SD_EVENT_OFF)
                return UINT64_MAX;
        if (sd_event_source_get_time(s->tick_source, &at_usec) < 0 ||
            sd_event_now(e, CLOCK_MONOTONIC, &now_usec) < 0)
                return UINT64_MAX;
        /* Armed relative to the loop's cached time, which is still the same iteration's. */
        return at_usec - now_usec;
}

/* Runs the loop until the tick timer has fired once (or nothing happens for a long while);
 * returns how many ticks ran. */
static uint64_t run_until_tick(sd_event *e, Scheduler *s) {
        uint64_t before = s->n_ticks;

        for (int i = 0; i < 20 && s->n_ticks == before; i++)
                if (sd_event_run(e, 5 * USEC_PER_SEC) < 0)
                        break;
        return s->n_ticks - before;
}

/* The armed delay elapses at once: the timer is made due now, and with no slack (the scheduler
 * lets a tick come up to 5 % of its delay late, which would be 1.5 s of an idle cadence). */
static uint64_t fire_tick(sd_event *e, Scheduler *s) {
        uint64_t now_usec;

        if (sd_event_now(e, CLOCK_MONOTONIC, &now_usec) < 0 ||
            sd_event_source_set_time_accuracy(s->tick_source, 1) < 0 ||
            sd_event_source_set_time(s->tick_source, now_usec) < 0)
                return 0;
        return run_until_tick(e, s);
}

static void test_new_arguments(sd_event *e) {
        static const struct {
                const char *name;
                SchedulerConfig config;
        } bad[] = {
                { "cadence 0", { .cadence_usec = 0, .idle_cadence_usec = USEC_PER_SEC } },
                { "idle cadence 0", { .cadence_usec = USEC_PER_SEC, .idle_cadence_usec = 0 } },
        };
        const SchedulerConfig good = { .cadence_usec = USEC_PER_SEC, .idle_cadence_usec = USEC_PER_SEC };
        Scheduler *sentinel = (Scheduler *) &sentinel, *s = sentinel;
        size_t index;
        Core *c = core_with_fake(NULL, 0, &index);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                is_int(scheduler_new(e, c, NULL, &test_log, &bad[i].config, &s), -EINVAL, bad[i].name);
                ok(s == sentinel, "  %s: ret untouched", bad[i].name);
        }
        is_int(scheduler_new(NULL, c, NULL, &test_log, &good, &s), -EINVAL, "no event loop");
        is_int(scheduler_new(e, NULL, NULL, &test_log, &good, &s), -EINVAL, "no core");
        is_int(scheduler_new(e, c, NULL, NULL, &good, &s), -EINVAL, "no log");
        is_int(scheduler_new(e, c, NULL, &test_log, NULL, &s), -EINVAL, "no config");
        ok(s == sentinel && c->activity_hook == NULL, "no failed call registered a hook");
        ok(scheduler_free(NULL) == NULL, "scheduler_free(NULL)");
        core_free(c);
}

/* scheduler_start(): the first tick is synchronous, then the timer is armed for the warm-up. */
static void test_start(sd_event *e) {
        const SchedulerConfig config = { USEC_PER_SEC, 30 * USEC_PER_SEC, LONG_TIME_USEC };
        _cleanup_(scheduler_freep) Scheduler *s = NULL;
        size_t index;
        Core *c = core_with_fake(NULL, 0, &index);
        Domain *fake = c->domains[index]->domain;

        is_int(scheduler_new(e, c, NULL, &test_log, &config, &s), 0, "scheduler_new");
        ok(c->activity_hook != NULL, "the scheduler is the core's activity hook");
        ok(s->n_ticks == 0 && fake_now_ns(fake) == R_START_NS && !c->graph.nodes[index].calibrated,
           "nothing runs before scheduler_start()");
        is_int(scheduler_start(s), 0, "scheduler_start");
        is_int(s->n_ticks, 1, "  one tick ran");
        is_int(fake_now_ns(fake) - R_START_NS, BURST_R_NS, "  the fake domain had one burst");
        ok(c->graph.nodes[index].calibrated && core_domain_available(c, index),
           "  and is calibrated when it returns");
        is_int(armed_delay_usec(e, s), 10 * USEC_PER_MSEC, "  the next tick is armed 10 ms on");
        is_int(scheduler_start(s), -EBUSY, "a second scheduler_start() is -EBUSY");
        is_int(s->n_ticks, 1, "  and runs no tick");

        s = scheduler_free(s);
        ok(c->activity_hook == NULL && c->activity_userdata == NULL,
           "scheduler_free() unregisters the hook: a call after the scheduler left reaches nobody");
        /* Under the sanitizers, a call that still reached the freed scheduler fails here. */
        core_bus_ops.client_activity(c);
        core_free(c);
}

/* The delay armed after each tick, from the start on, for each configuration. */
static void test_cadence(sd_event *e) {
        static const struct {
                const char *name;
                SchedulerConfig config;
                uint64_t delays_usec[5];
                bool idle;
        } rows[] = {
                { "active", { USEC_PER_SEC, 30 * USEC_PER_SEC, LONG_TIME_USEC },
                  { 10 * USEC_PER_MSEC, 100 * USEC_PER_MSEC, USEC_PER_SEC, USEC_PER_SEC, USEC_PER_SEC }, false },
                { "idle at once", { USEC_PER_SEC, 30 * USEC_PER_SEC, 0 },
                  { 10 * USEC_PER_MSEC, 100 * USEC_PER_MSEC, 30 * USEC_PER_SEC, 30 * USEC_PER_SEC, 30 * USEC_PER_SEC },
                  true },
                { "cadence below the warm-up", { 5 * USEC_PER_MSEC, USEC_PER_SEC, LONG_TIME_USEC },
                  { 5 * USEC_PER_MSEC, 5 * USEC_PER_MSEC, 5 * USEC_PER_MSEC, 5 * USEC_PER_MSEC, 5 * USEC_PER_MSEC },
                  false },
                { "cadence within the warm-up", { 50 * USEC_PER_MSEC, USEC_PER_SEC, LONG_TIME_USEC },
                  { 10 * USEC_PER_MSEC, 50 * USEC_PER_MSEC, 50 * USEC_PER_MSEC, 50 * USEC_PER_MSEC, 50 * USEC_PER_MSEC },
                  false },
                { "idle cadence equal to the cadence", { 2 * USEC_PER_SEC, 2 * USEC_PER_SEC, 0 },
                  { 10 * USEC_PER_MSEC, 100 * USEC_PER_MSEC, 2 * USEC_PER_SEC, 2 * USEC_PER_SEC, 2 * USEC_PER_SEC },
                  true },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                size_t index;
                Core *c = core_with_fake(NULL, 0, &index);
                Scheduler *s = scheduler_started(e, c, &rows[i].config);
                bool delays_ok = true;

                for (size_t k = 0; k < ELEMENTSOF(rows[i].delays_usec); k++) {
                        uint64_t got = armed_delay_usec(e, s);

                        if (got != rows[i].delays_usec[k]) {
                                diag("%s: after tick %zu the delay is %" PRIu64 " us, want %" PRIu64, rows[i].name,
                                     k + 1, got, rows[i].delays_usec[k]);
                                delays_ok = false;
                        }
                        if (k + 1 < ELEMENTSOF(rows[i].delays_usec) && fire_tick(e, s) != 1) {
                                diag("%s: tick %zu did not run", rows[i].name, k + 2);
                                delays_ok = false;
                        }
                }
                ok(delays_ok, "%s: the delays after each tick", rows[i].name);
                ok(s->idle == rows[i].idle, "%s: %s", rows[i].name, rows[i].idle ? "idle" : "not idle");
                is_int(fake_now_ns(c->domains[index]->domain) - R_START_NS,
                       ELEMENTSOF(rows[i].delays_usec) * BURST_R_NS, "  one burst per tick");
                scheduler_free(s);
                core_free(c);
        }
}

/* A call (through the core's bus ops, as the bus makes it) while idle: active again and a tick
 * at once; a call while active leaves the timer alone. */
static void test_activity(sd_event *e) {
        const SchedulerConfig idle_config = { USEC_PER_SEC, 30 * USEC_PER_SEC, 0 };
        const SchedulerConfig active_config = { USEC_PER_SEC, 30 * USEC_PER_SEC, LONG_TIME_USEC };
        uint64_t at_before_usec = 0, at_after_usec = 1;
        size_t index;
        Core *c = core_with_fake(NULL, 0, &index);
        Scheduler *s = scheduler_started(e, c, &idle_config);

        fire_tick(e, s);
        fire_tick(e, s);
        ok(s->idle && armed_delay_usec(e, s) == 30 * USEC_PER_SEC, "idle after the warm-up, 30 s to the next tick");
        core_bus_ops.client_activity(c);
        ok(!s->idle, "a call leaves idle");
        is_int(armed_delay_usec(e, s), 0, "  and brings the next tick forward to now");
        is_int(run_until_tick(e, s), 1, "  which runs without forcing the timer");
        ok(s->idle && armed_delay_usec(e, s) == 30 * USEC_PER_SEC, "  nobody called since: idle again");
        scheduler_free(s);
        core_free(c);

        c = core_with_fake(NULL, 0, &index);
        s = scheduler_started(e, c, &active_config);
        fire_tick(e, s);
        fire_tick(e, s);
        (void) sd_event_source_get_time(s->tick_source, &at_before_usec);
        core_bus_ops.client_activity(c);
        (void) sd_event_source_get_time(s->tick_source, &at_after_usec);
        ok(!s->idle && at_before_usec == at_after_usec, "a call while active leaves the next tick where it was");
        scheduler_free(s);
        core_free(c);
}

/* Bursts of the fake domain in each of the first ticks: a step is followed by a second burst at
 * once, and a clock that steps in that one too gets no third. Burst k starts at
 * R_START_NS + k * BURST_R_NS; a step placed in the gap before it is seen by all its samples. */
static void test_steps(sd_event *e) {
#define BEFORE_BURST(k) (R_START_NS + (k) * BURST_R_NS - SAMPLE_INTERVAL_NS / 2)
        static const FakeStep one[] = { { BEFORE_BURST(2), STEP_NS } };
        static const FakeStep four[] = {
                { BEFORE_BURST(2), STEP_NS }, { BEFORE_BURST(3), -STEP_NS },
                { BEFORE_BURST(4), STEP_NS }, { BEFORE_BURST(5), -STEP_NS },
        };
        static const FakeStep late[] = { { BEFORE_BURST(4), -STEP_NS } };
        static const struct {
                const char *name;
                const FakeStep *steps;
                size_t n_steps;
                int64_t bursts[5];      /* in ticks 1..5 */
                size_t segments;        /* after them */
        } rows[] = {
                { "no step", NULL, 0, { 1, 1, 1, 1, 1 }, 1 },
                { "a step in the third burst", one, ELEMENTSOF(one), { 1, 1, 2, 1, 1 }, 2 },
                { "a step in each of four bursts", four, ELEMENTSOF(four), { 1, 1, 2, 2, 1 }, 5 },
                { "a step back in the fifth burst", late, ELEMENTSOF(late), { 1, 1, 1, 1, 2 }, 2 },
        };
        const SchedulerConfig config = { USEC_PER_SEC, 30 * USEC_PER_SEC, LONG_TIME_USEC };
#undef BEFORE_BURST

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                size_t index;
                Core *c = core_with_fake(rows[i].steps, rows[i].n_steps, &index);
                Domain *fake = c->domains[index]->domain;
                int64_t r_ns = fake_now_ns(fake);
                Scheduler *s = scheduler_started(e, c, &config);
                bool bursts_ok = true;

                for (size_t k = 0; k < ELEMENTSOF(rows[i].bursts); k++) {
                        int64_t bursts;

                        if (k > 0 && fire_tick(e, s) != 1)
                                bursts_ok = false;
                        bursts = (fake_now_ns(fake) - r_ns) / BURST_R_NS;
                        if (bursts != rows[i].bursts[k]) {
                                diag("%s: tick %zu made %" PRId64 " bursts, want %" PRId64, rows[i].name, k + 1,
                                     bursts, rows[i].bursts[k]);
                                bursts_ok = false;
                        }
                        r_ns = fake_now_ns(fake);
                }
                ok(bursts_ok, "%s: bursts per tick", rows[i].name);
                is_int(history_count(core_domain_history(c, index)), rows[i].segments, "  segments after them");
                ok(core_domain_available(c, index) && c->graph.nodes[index].calibrated, "  calibrated at the end");
                scheduler_free(s);
                core_free(c);
        }
}

/* A source with a connection of its own (as X): a pipe stands for it. */
static struct {
        int fds[2];
        bool connected;
        int dispatch_error;     /* what the next dispatch finds */
        unsigned n_dispatch;
} conn = { .fds = { -EBADF, -EBADF } };

struct Domain {
        Domain *fake;
};

static int conn_open(const char *name, const void *config, Domain **ret) {
        Domain *d = calloc(1, sizeof(*d));
        int r;

        if (!d)
                return -ENOMEM;
        r = domain_fake_ops.open(name, config, &d->fake);
        if (r < 0) {
                free(d);
                return r;
        }
        *ret = d;
        return 0;
}

static int conn_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        if (!conn.connected)
                return -ENOTCONN;
        return domain_fake_ops.sample_burst(d->fake, samples, n_max, ret_n);
}

static int conn_watch_fd(Domain *d) {
        return conn.connected ? conn.fds[0] : -ENOTCONN;
}

static int conn_dispatch(Domain *d) {
        char byte;

        conn.n_dispatch++;
        /* Drain it, or the level-triggered watch fires again. */
        if (read(conn.fds[0], &byte, 1) != 1)
                return -EIO;
        if (conn.dispatch_error < 0)
                conn.connected = false;
        return conn.dispatch_error;
}

static const DomainInfo *conn_info(Domain *d) {
        return domain_fake_ops.info(d->fake);
}

static Domain *conn_close(Domain *d) {
        if (d) {
                domain_fake_ops.close(d->fake);
                free(d);
        }
        return NULL;
}

static const DomainOps conn_ops = {
        .source = "conn",
        .open = conn_open,
        .sample_burst = conn_sample_burst,
        .watch_fd = conn_watch_fd,
        .dispatch = conn_dispatch,
        .info = conn_info,
        .close = conn_close,
};

static unsigned run_until_dispatch(sd_event *e) {
        unsigned before = conn.n_dispatch;

        for (int i = 0; i < 20 && conn.n_dispatch == before; i++)
                if (sd_event_run(e, 5 * USEC_PER_SEC) < 0)
                        break;
        return conn.n_dispatch - before;
}

/* Runs the loop until the domain is available and its connection watched: at once when its
 * bursts are read on the loop, when the burst ends when a thread reads them. */
static bool run_until_watched(sd_event *e, Scheduler *s, size_t index) {
        for (int i = 0; i < 20 && !(core_domain_available(s->core, index) && s->watches[index].source); i++)
                if (sd_event_run(e, 5 * USEC_PER_SEC) < 0)
                        break;
        return core_domain_available(s->core, index) && s->watches[index].source;
}

static void test_watch(sd_event *e) {
        /* After the warm-up no tick comes for an hour: whatever happens below is the watch's. */
        const SchedulerConfig config = { LONG_TIME_USEC, LONG_TIME_USEC, LONG_TIME_USEC };
        FakeConfig fc = fake_config(NULL, 0);
        DomainInfo info = { .name = "conn", .unit = UNIT_NS };
        Scheduler *s;
        size_t index;
        uint64_t ticks;
        Core *c = NULL;

        if (pipe2(conn.fds, O_CLOEXEC | O_NONBLOCK) < 0) {
                ok(false, "pipe2: %m");
                return;
        }
        conn.connected = true;
        if (core_new(&test_log, &c) < 0 || core_add_domain(c, &conn_ops, &info, &fc) < 0 ||
            core_find(c, "conn", &index) < 0)
                abort();
        s = scheduler_started(e, c, &config);
        fire_tick(e, s);
        fire_tick(e, s);
        ticks = s->n_ticks;
        ok(run_until_watched(e, s, index), "the connection is watched");

        is_int(write(conn.fds[1], "x", 1), 1, "the server sends something");
        is_int(run_until_dispatch(e), 1, "  it is dispatched");
        ok(core_domain_available(c, index) && s->watches[index].source != NULL, "  the domain stays available");

        conn.dispatch_error = -ECONNRESET;
        is_int(write(conn.fds[1], "x", 1), 1, "the server goes away");
        is_int(run_until_dispatch(e), 1, "  the broken connection is dispatched");
        ok(!core_domain_available(c, index), "  the domain is unavailable at once");
        ok(s->watches[index].source == NULL, "  and no longer watched (it has no fd)");
        is_int(s->n_ticks, ticks, "  without a tick");

        conn.connected = true;
        conn.dispatch_error = 0;
        is_int(fire_tick(e, s), 1, "a tick after the server came back");
        ok(run_until_watched(e, s, index), "  available and watched again");

        scheduler_free(s);
        core_free(c);
        close(conn.fds[0]);
        close(conn.fds[1]);
}

/* A core with one domain of the conn source (its bursts read by a thread once the scheduler
 * runs), a fake clock with steps underneath. */
static Core *core_with_conn(const FakeStep *steps, size_t n_steps, size_t *ret_index) {
        FakeConfig fc = fake_config(steps, n_steps);
        DomainInfo info = { .name = "conn", .unit = UNIT_NS };
        Core *c = NULL;

        if (pipe2(conn.fds, O_CLOEXEC | O_NONBLOCK) < 0)
                bail_out("pipe2: %m");
        conn.connected = true;
        conn.dispatch_error = 0;
        if (core_new(&test_log, &c) < 0 || core_add_domain(c, &conn_ops, &info, &fc) < 0 ||
            core_find(c, "conn", ret_index) < 0)
                abort();
        return c;
}

static void conn_close_fds(void) {
        closep(&conn.fds[0]);
        closep(&conn.fds[1]);
        conn.fds[0] = conn.fds[1] = -EBADF;
}

/* No tick comes by itself (the warm-up's are pushed an hour out), and the burst a thread reads,
 * with the one a step adds, have ended and been taken in. */
static bool settle(sd_event *e, Scheduler *s, size_t index) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + 30 * NSEC_PER_SEC;
        uint64_t now_usec;

        if (sd_event_now(e, CLOCK_MONOTONIC, &now_usec) < 0 ||
            sd_event_source_set_time(s->tick_source, now_usec + LONG_TIME_USEC) < 0)
                return false;
        while (burst_worker_busy(s->workers[index].worker))
                if (clock_now_ns(CLOCK_MONOTONIC) >= deadline_ns || sd_event_run(e, USEC_PER_SEC) < 0)
                        return false;
        return true;
}

/* A burst read by a thread: the table is written once when it is taken in, a step or not (the
 * step's write is that one), and once more for the burst the step adds. */
static void test_offloaded_publishes(sd_event *e) {
        static const FakeStep step[] = { { R_START_NS + 2 * BURST_R_NS - SAMPLE_INTERVAL_NS / 2, STEP_NS } };
        const SchedulerConfig config = { LONG_TIME_USEC, LONG_TIME_USEC, LONG_TIME_USEC };
        size_t index;
        Core *c = core_with_conn(step, ELEMENTSOF(step), &index);
        Domain *fake = c->domains[index]->domain->fake;
        Scheduler *s = scheduler_started(e, c, &config);
        uint64_t publishes = s->n_publishes;
        int64_t r_ns = fake_now_ns(fake);

        is_int(fire_tick(e, s), 1, "a tick of a domain whose bursts a thread reads");
        ok(s->workers[index].worker && settle(e, s, index), "  its burst was read by the thread and taken in");
        is_int((fake_now_ns(fake) - r_ns) / BURST_R_NS, 1, "  one burst");
        is_int(s->n_publishes - publishes, 2, "  the table was written by the tick and once for the burst");

        publishes = s->n_publishes;
        r_ns = fake_now_ns(fake);
        is_int(fire_tick(e, s), 1, "a tick whose burst steps");
        ok(settle(e, s, index), "  its bursts were taken in");
        is_int((fake_now_ns(fake) - r_ns) / BURST_R_NS, 2, "  two bursts: the step's and the one it adds");
        is_int(history_count(core_domain_history(c, index)), 2, "  a new segment");
        is_int(s->n_publishes - publishes, 3, "  the table was written by the tick, once for the step, once after");

        scheduler_free(s);
        core_free(c);
        conn_close_fds();
}

/* Where no thread can be made (here: no fd left for its eventfd), each burst is read on the loop
 * and the log says so once, not at every tick. */
static void test_no_worker(sd_event *e) {
        const SchedulerConfig config = { LONG_TIME_USEC, LONG_TIME_USEC, LONG_TIME_USEC };
        const Log warning_log = { .max_level = LOG_WARNING };
        _cleanup_close_ int log_fd = -EBADF, saved_stderr = -EBADF;
        _cleanup_free_ char *text = NULL;
        struct rlimit limit, none;
        Scheduler *s = NULL;
        size_t index, said = 0;
        uint64_t ticks = 0;
        Core *c = core_with_conn(NULL, 0, &index);
        Domain *fake = c->domains[index]->domain->fake;
        int64_t r_ns;
        int lowest_free;
        off_t size;

        log_fd = memfd_create("scheduler-log", MFD_CLOEXEC);
        saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        if (log_fd < 0 || saved_stderr < 0 || dup2(log_fd, STDERR_FILENO) < 0)
                bail_out("the log into a memfd: %m");
        if (scheduler_new(e, c, NULL, &warning_log, &config, &s) < 0 || scheduler_start(s) < 0)
                abort();
        (void) sd_event_source_set_enabled(s->discipline_source, SD_EVENT_OFF);
        r_ns = fake_now_ns(fake);

        /* From here on no new fd: the lowest free one is over the limit. */
        lowest_free = fcntl(log_fd, F_DUPFD_CLOEXEC, 0);
        if (lowest_free < 0 || getrlimit(RLIMIT_NOFILE, &limit) < 0)
                bail_out("the fd limit: %m");
        close(lowest_free);
        none = (struct rlimit) { .rlim_cur = (rlim_t) lowest_free, .rlim_max = limit.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &none) < 0)
                bail_out("setrlimit: %m");
        for (int i = 0; i < 3; i++)
                ticks += fire_tick(e, s);
        (void) setrlimit(RLIMIT_NOFILE, &limit);

        (void) dup2(saved_stderr, STDERR_FILENO);
        size = lseek(log_fd, 0, SEEK_END);
        text = size >= 0 ? calloc(1, (size_t) size + 1) : NULL;
        if (!text || pread(log_fd, text, (size_t) size, 0) != size)
                bail_out("reading the log back");
        for (const char *p = text; (p = strstr(p, "no thread for its bursts")); p++)
                said++;

        is_int(ticks, 3, "three ticks with no thread to be had");
        ok(!s->workers[index].worker, "  no thread was made");
        is_int((fake_now_ns(fake) - r_ns) / BURST_R_NS, 3, "  each read its burst on the loop");
        ok(core_domain_available(c, index), "  the domain is available");
        is_int(said, 1, "  the log said so once");
        if (said != 1)
                diag("the log: %s", text);

        scheduler_free(s);
        core_free(c);
        conn_close_fds();
}

int main(void) {
        sd_event *e = NULL;

        /* sd_notify() must not reach a service manager that runs this test. */
        unsetenv("NOTIFY_SOCKET");
        if (sd_event_new(&e) < 0)
                bail_out("no sd-event loop");
        /* From its first iteration on, sd_event_now() is the loop's cached time, the one the
         * scheduler arms its timer against: delays read back exactly. */
        (void) sd_event_run(e, 0);

        test_new_arguments(e);
        test_start(e);
        test_cadence(e);
        test_activity(e);
        test_steps(e);
        test_watch(e);
        test_offloaded_publishes(e);
        test_no_worker(e);

        sd_event_unref(e);
        return done_testing();
}
