/* SPDX-License-Identifier: MIT */

/* The burst worker (daemon/burst-worker.h) on a source whose burst blocks on a pipe until the
 * test lets it go, so that "while a burst is in flight" is a state the test holds, not a race
 * it hopes to win: the core refuses the busy domain's handle (core_calibrate, dispatch,
 * watch_fd: -EBUSY); the status it shows meanwhile is the copy made at the start, whose strings
 * (the unavailable reason too) stay as they were while the source rewrites its own; the samples
 * are handed over on the loop when the burst ends; and the worker can be freed while a burst
 * is in flight. Every wait is on an fd or the sd-event loop, with a deadline. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burst-worker.h"
#include "cleanup.h"
#include "core.h"
#include "tap.h"
#include "time-util.h"

/* Generous for a loaded 2-core machine: each wait ends as soon as its condition holds. */
#define TIMEOUT_NS (INT64_C(30) * NSEC_PER_SEC)
#define R_START_NS INT64_C(1000000000)
#define OFFSET_NS INT64_C(5000)

#define VERDICT_BEFORE "tracked"
#define REASON_BEFORE "the X server on :1 does not answer"
#define EXTRA_BEFORE "before"

static const Log test_log = { .max_level = LOG_ERR };

/* The source: sample_burst() rewrites every string status() gives, says so on entered_fd, and
 * blocks until a byte comes on gate_fd. */
typedef struct GateConfig {
        int gate_fd;            /* read end, blocking */
        int entered_fd;         /* write end */
} GateConfig;

struct Domain {
        DomainInfo info;
        GateConfig config;
        char verdict[32];
        char reason[64];
        char extra_value[32];
        unsigned bursts;
};

static int gate_open(const char *name, const void *config, Domain **ret) {
        Domain *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        snprintf(d->info.name, sizeof(d->info.name), "%s", name);
        d->info.unit = UNIT_NS;
        d->config = *(const GateConfig *) config;
        snprintf(d->verdict, sizeof(d->verdict), VERDICT_BEFORE);
        snprintf(d->reason, sizeof(d->reason), REASON_BEFORE);
        snprintf(d->extra_value, sizeof(d->extra_value), EXTRA_BEFORE);
        *ret = d;
        return 0;
}

/* Sample i of every burst: 100 ns wide, the domain OFFSET_NS ahead of the reference. */
static Sample gate_sample(size_t i) {
        int64_t r0_ns = R_START_NS + (int64_t) i * 1000;

        return (Sample) { .r0_ns = r0_ns, .r1_ns = r0_ns + 100, .x_lo_ns = r0_ns + 50 + OFFSET_NS,
                          .x_hi_ns = r0_ns + 50 + OFFSET_NS };
}

static int gate_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        char byte = 'e';

        d->bursts++;
        /* As a source does when its server moves on under a burst. */
        snprintf(d->verdict, sizeof(d->verdict), "rewritten %u", d->bursts);
        snprintf(d->reason, sizeof(d->reason), "rewritten by burst %u", d->bursts);
        snprintf(d->extra_value, sizeof(d->extra_value), "rewritten %u", d->bursts);
        if (write(d->config.entered_fd, &byte, 1) != 1 || read(d->config.gate_fd, &byte, 1) != 1)
                return -EIO;
        for (size_t i = 0; i < n_max; i++)
                samples[i] = gate_sample(i);
        *ret_n = n_max;
        return 0;
}

static int gate_watch_fd(Domain *d) {
        return d->config.gate_fd;
}

static int gate_dispatch(Domain *d) {
        return 0;
}

static int gate_status(Domain *d, DomainStatus *ret) {
        *ret = (DomainStatus) {
                .verdict = d->verdict,
                .n_extras = 1,
                .extras = { DOMAIN_EXTRA_S("phase", d->extra_value) },
                .unavailable_reason = d->reason,
        };
        return 0;
}

static const DomainInfo *gate_info(Domain *d) {
        return &d->info;
}

static Domain *gate_close(Domain *d) {
        free(d);
        return NULL;
}

static const DomainOps gate_ops = {
        .source = "gate",
        .open = gate_open,
        .sample_burst = gate_sample_burst,
        .watch_fd = gate_watch_fd,
        .dispatch = gate_dispatch,
        .status = gate_status,
        .info = gate_info,
        .close = gate_close,
};

typedef struct Test {
        sd_event *event;
        Core *core;
        size_t index;
        Domain *domain;
        int gate[2];
        int entered[2];
        unsigned done;
} Test;

static void on_done(BurstWorker *w, void *userdata) {
        Test *t = userdata;

        t->done++;
}

/* Waits for fd to be readable, up to the deadline; reads one byte. */
static bool wait_byte(int fd, int64_t deadline_ns) {
        char byte;

        for (;;) {
                int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                int r;

                if (left_ns <= 0)
                        return false;
                r = poll(&pfd, 1, (int) (left_ns / NSEC_PER_MSEC) + 1);
                if (r < 0 && errno != EINTR)
                        return false;
                if (r > 0)
                        return read(fd, &byte, 1) == 1;
        }
}

/* Runs the loop until the done callback came (count above since), up to the deadline. */
static bool run_until_done(Test *t, unsigned since) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS;

        while (t->done == since) {
                int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);

                if (left_ns <= 0 || sd_event_run(t->event, (uint64_t) left_ns / 1000 + 1) < 0)
                        return false;
        }
        return true;
}

/* Whether p points into the source's Domain: a status string that would change under a burst. */
static bool in_domain(const Test *t, const char *p) {
        return p >= (const char *) t->domain && p < (const char *) (t->domain + 1);
}

static void test_setup(Test *t) {
        GateConfig config;
        DomainInfo info = { .name = "gate", .unit = UNIT_NS };
        const DomainOps *ops;

        *t = (Test) { .gate = { -EBADF, -EBADF }, .entered = { -EBADF, -EBADF } };
        if (sd_event_new(&t->event) < 0)
                bail_out("no sd-event loop");
        if (pipe2(t->gate, O_CLOEXEC) < 0 || pipe2(t->entered, O_CLOEXEC) < 0)
                bail_out("pipe2: %m");
        config = (GateConfig) { .gate_fd = t->gate[0], .entered_fd = t->entered[1] };
        if (core_new(&test_log, &t->core) < 0 || core_add_domain(t->core, &gate_ops, &info, &config) < 0 ||
            core_find(t->core, "gate", &t->index) < 0 || core_domain_source(t->core, t->index, &ops, &t->domain) < 0)
                bail_out("a core with the gate source");
}

static void test_teardown(Test *t) {
        t->core = core_free(t->core);
        t->event = sd_event_unref(t->event);
        for (size_t i = 0; i < 2; i++) {
                closep(&t->gate[i]);
                closep(&t->entered[i]);
        }
}

static void test_arguments(Test *t) {
        BurstWorker *sentinel = (BurstWorker *) &sentinel, *w = sentinel;
        int read_result;
        Sample *samples;
        size_t n;

        is_int(burst_worker_new(NULL, &gate_ops, t->domain, on_done, t, &w), -EINVAL, "no loop: -EINVAL");
        is_int(burst_worker_new(t->event, NULL, t->domain, on_done, t, &w), -EINVAL, "no ops: -EINVAL");
        is_int(burst_worker_new(t->event, &gate_ops, NULL, on_done, t, &w), -EINVAL, "no domain: -EINVAL");
        is_int(burst_worker_new(t->event, &gate_ops, t->domain, NULL, t, &w), -EINVAL, "no callback: -EINVAL");
        ok(w == sentinel, "  ret untouched");
        ok(burst_worker_free(NULL) == NULL, "burst_worker_free(NULL)");
        ok(!burst_worker_busy(NULL), "NULL is not busy");
        ok(burst_worker_status(NULL) == NULL, "NULL has no status");
        is_int(burst_worker_start(NULL, 1), -EINVAL, "burst_worker_start(NULL)");
        is_int(burst_worker_result(NULL, &read_result, &samples, &n), -EINVAL, "burst_worker_result(NULL)");

        is_int(burst_worker_new(t->event, &gate_ops, t->domain, on_done, t, &w), 0, "burst_worker_new");
        if (w == sentinel)
                return;
        is_int(burst_worker_start(w, 0), -EINVAL, "no samples wanted: -EINVAL");
        is_int(burst_worker_start(w, BURST_WORKER_SAMPLES_MAX + 1), -EINVAL, "more than it holds: -EINVAL");
        ok(!burst_worker_busy(w), "  and nothing is in flight");
        ok(burst_worker_free(w) == NULL, "an idle worker is freed");
}

/* One burst held in flight, then let go. */
static void test_burst(Test *t) {
        _cleanup_(burst_worker_freep) BurstWorker *w = NULL;
        DomainStatus status = {};
        CoreBurst burst = {};
        const DomainStatus *copy;
        Sample *samples = NULL;
        int read_result = -1, r;
        size_t n = 0;
        bool samples_ok = true;

        if (burst_worker_new(t->event, &gate_ops, t->domain, on_done, t, &w) < 0) {
                ok(false, "burst_worker_new");
                return;
        }
        is_int(burst_worker_start(w, CORE_BURST_SAMPLES), 0, "a burst starts");
        copy = burst_worker_status(w);
        core_domain_set_busy(t->core, t->index, copy);
        ok(wait_byte(t->entered[0], clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS),
           "  the thread is in sample_burst(), which rewrote the source's strings and waits on the pipe");
        ok(burst_worker_busy(w), "while it is in flight, the worker is busy");
        is_int(burst_worker_start(w, CORE_BURST_SAMPLES), -EBUSY, "  a second burst: -EBUSY");
        is_int(burst_worker_result(w, &read_result, &samples, &n), -EBUSY, "  its result: -EBUSY");
        is_int(core_calibrate(t->core, t->index, &burst), -EBUSY, "  core_calibrate(): -EBUSY");
        is_int(core_domain_dispatch(t->core, t->index), -EBUSY, "  core_domain_dispatch(): -EBUSY");
        is_int(core_domain_watch_fd(t->core, t->index), -EBUSY, "  core_domain_watch_fd(): -EBUSY");
        is_int(core_calibrate_samples(t->core, t->index, 0, NULL, 0, &burst), -EINVAL,
               "  core_calibrate_samples(): -EINVAL");

        r = core_domain_status(t->core, t->index, &status);
        is_int(r, 0, "  core_domain_status() gives the copy made at the start");
        ok(status.verdict && strcmp(status.verdict, VERDICT_BEFORE) == 0 && !in_domain(t, status.verdict),
           "  its verdict is the one from before the burst, a copy: %s", status.verdict ?: "(null)");
        ok(status.unavailable_reason && strcmp(status.unavailable_reason, REASON_BEFORE) == 0 &&
           !in_domain(t, status.unavailable_reason),
           "  its unavailable reason too: %s", status.unavailable_reason ?: "(null)");
        ok(status.n_extras == 1 && strcmp(status.extras[0].key, "phase") == 0 &&
           strcmp(status.extras[0].s, EXTRA_BEFORE) == 0 && !in_domain(t, status.extras[0].s),
           "  and its extras: %s", status.n_extras == 1 ? status.extras[0].s : "(none)");
        is_int(t->done, 0, "  no done callback yet");

        is_int(write(t->gate[1], "g", 1), 1, "the source's server answers");
        ok(run_until_done(t, 0), "  the loop hears that the burst ended");
        is_int(t->done, 1, "  once");
        ok(!burst_worker_busy(w), "  the worker is idle");
        r = burst_worker_result(w, &read_result, &samples, &n);
        ok(r == 0 && read_result == 0 && n == CORE_BURST_SAMPLES,
           "  the result: %d, sample_burst() %d, %zu samples", r, read_result, n);
        for (size_t i = 0; r == 0 && i < n; i++) {
                Sample want = gate_sample(i);

                samples_ok = samples_ok && memcmp(&samples[i], &want, sizeof(want)) == 0;
        }
        ok(r == 0 && samples_ok, "  the samples are the ones the thread read");
        ok(strcmp(copy->unavailable_reason ?: "", REASON_BEFORE) == 0,
           "  the copy stays until the next start: %s", copy->unavailable_reason ?: "(null)");

        core_domain_set_busy(t->core, t->index, NULL);
        is_int(core_calibrate_samples(t->core, t->index, read_result, samples, n, &burst), 0,
               "  the core takes them in on the loop");
        ok(core_domain_available(t->core, t->index), "  the domain is available");
        r = core_domain_status(t->core, t->index, &status);
        ok(r == 0 && status.unavailable_reason && strcmp(status.unavailable_reason, "rewritten by burst 1") == 0,
           "  and its status is the source's own again: %s", status.unavailable_reason ?: "(null)");

        /* The next start copies afresh. */
        is_int(burst_worker_start(w, 1), 0, "the next burst starts");
        core_domain_set_busy(t->core, t->index, burst_worker_status(w));
        ok(wait_byte(t->entered[0], clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS), "  the thread is in it");
        r = core_domain_status(t->core, t->index, &status);
        ok(r == 0 && status.unavailable_reason && strcmp(status.unavailable_reason, "rewritten by burst 1") == 0,
           "  its status is the one from before it: %s", status.unavailable_reason ?: "(null)");
        is_int(write(t->gate[1], "g", 1), 1, "  let go");
        ok(run_until_done(t, 1), "  it ends");
        core_domain_set_busy(t->core, t->index, NULL);
        ok(burst_worker_result(w, &read_result, &samples, &n) == 0 && read_result == 0 && n == 1,
           "  with the one sample asked for");
}

/* burst_worker_free() joins the thread, which waits on the pipe: the free runs in a thread of the
 * test's, which says when it starts, and the test lets the burst go after that. */
typedef struct Freer {
        BurstWorker *worker;
        int started_fd;         /* write end: "about to free" */
        int freed_fd;           /* write end: "freed" */
} Freer;

static void *freer_thread(void *userdata) {
        Freer *f = userdata;

        (void) !write(f->started_fd, "s", 1);
        f->worker = burst_worker_free(f->worker);
        (void) !write(f->freed_fd, "f", 1);
        return NULL;
}

static void test_free_in_flight(Test *t) {
        _cleanup_close_ int started_r = -EBADF, started_w = -EBADF, freed_r = -EBADF, freed_w = -EBADF;
        int fds[2][2];
        Freer f = {};
        pthread_t thread;
        unsigned done = t->done;
        bool freed;

        if (pipe2(fds[0], O_CLOEXEC) < 0 || pipe2(fds[1], O_CLOEXEC) < 0)
                bail_out("pipe2: %m");
        started_r = fds[0][0], started_w = fds[0][1], freed_r = fds[1][0], freed_w = fds[1][1];
        f = (Freer) { .started_fd = started_w, .freed_fd = freed_w };

        if (burst_worker_new(t->event, &gate_ops, t->domain, on_done, t, &f.worker) < 0) {
                ok(false, "burst_worker_new");
                return;
        }
        is_int(burst_worker_start(f.worker, CORE_BURST_SAMPLES), 0, "a burst starts");
        ok(wait_byte(t->entered[0], clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS), "  the thread is in it");
        /* From here until it is joined, the loop is the freer's: this thread only waits on fds. */
        if (pthread_create(&thread, NULL, freer_thread, &f) != 0)
                bail_out("pthread_create");
        ok(wait_byte(started_r, clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS), "burst_worker_free() starts");
        is_int(write(t->gate[1], "g", 1), 1, "  the burst is let go after that");
        freed = wait_byte(freed_r, clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS);
        ok(freed, "  the free returns: the thread ended");
        if (!freed)
                bail_out("burst_worker_free() did not return");
        pthread_join(thread, NULL);
        ok(f.worker == NULL, "  and gave back NULL");
        is_int(sd_event_run(t->event, 0) >= 0, 1, "the loop runs on");
        is_int(t->done, done, "  and no done callback comes for the freed worker");
}

int main(void) {
        Test t;

        test_setup(&t);
        test_arguments(&t);
        test_burst(&t);
        test_free_in_flight(&t);
        test_teardown(&t);
        return done_testing();
}
