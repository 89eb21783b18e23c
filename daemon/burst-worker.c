/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "burst-worker.h"
#include "cleanup.h"

/* Room for the copied status's strings: a verdict, a few names, the unavailable reason and up to
 * DOMAIN_EXTRAS_MAX key-value pairs of short strings. A string that does not fit is left out, as
 * if unset. */
#define STATUS_STRINGS_MAX 2048

struct BurstWorker {
        const DomainOps *ops;
        Domain *domain;
        BurstWorkerDone done;
        void *userdata;
        int event_fd;
        sd_event_source *event_source;
        pthread_t thread;
        bool thread_started;

        /* Between the loop and the thread. */
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool requested;
        bool finished;
        bool quit;

        /* The loop's alone: from burst_worker_start() until the result was handed over. */
        bool busy;
        DomainStatus status;
        char strings[STATUS_STRINGS_MAX];

        /* The thread's while busy, the loop's once finished was seen under the lock. */
        size_t n_max;
        Sample samples[BURST_WORKER_SAMPLES_MAX];
        size_t n;
        int read_result;
};

static void *worker_thread(void *userdata) {
        BurstWorker *w = userdata;

        for (;;) {
                size_t n = 0, n_max;
                int r;

                pthread_mutex_lock(&w->lock);
                while (!w->requested && !w->quit)
                        pthread_cond_wait(&w->cond, &w->lock);
                if (w->quit) {
                        pthread_mutex_unlock(&w->lock);
                        return NULL;
                }
                w->requested = false;
                n_max = w->n_max;
                pthread_mutex_unlock(&w->lock);

                r = w->ops->sample_burst(w->domain, w->samples, n_max, &n);

                pthread_mutex_lock(&w->lock);
                w->read_result = r;
                w->n = r < 0 ? 0 : n;
                w->finished = true;
                pthread_mutex_unlock(&w->lock);
                /* Cannot fail short of a counter at its maximum, which one write per burst never
                 * reaches; the loop reads it to zero each time. */
                (void) eventfd_write(w->event_fd, 1);
        }
}

static int worker_on_event(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        BurstWorker *w = userdata;
        eventfd_t value;
        bool finished;

        (void) eventfd_read(fd, &value);
        pthread_mutex_lock(&w->lock);
        finished = w->finished;
        w->finished = false;
        pthread_mutex_unlock(&w->lock);
        if (!finished || !w->busy)
                return 0;
        w->busy = false;
        w->done(w, w->userdata);
        return 0;
}

int burst_worker_new(sd_event *event, const DomainOps *ops, Domain *domain, BurstWorkerDone done,
                     void *userdata, BurstWorker **ret) {
        _cleanup_(burst_worker_freep) BurstWorker *w = NULL;
        pthread_attr_t attr;
        sigset_t all, old;
        int r;

        if (!event || !ops || !ops->sample_burst || !domain || !done || !ret)
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->ops = ops;
        w->domain = domain;
        w->done = done;
        w->userdata = userdata;
        w->event_fd = -1;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cond, NULL);

        w->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->event_fd < 0)
                return -errno;
        r = sd_event_add_io(event, &w->event_source, w->event_fd, EPOLLIN, worker_on_event, w);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(w->event_source, "burst-worker");

        /* With every signal blocked: the daemon's signals (SIGTERM on a signalfd) stay the loop's. */
        pthread_attr_init(&attr);
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        r = -pthread_create(&w->thread, &attr, worker_thread, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (r < 0)
                return r;
        w->thread_started = true;
        (void) pthread_setname_np(w->thread, BURST_WORKER_THREAD_NAME);

        *ret = TAKE_PTR(w);
        return 0;
}

BurstWorker *burst_worker_free(BurstWorker *w) {
        if (!w)
                return NULL;
        if (w->thread_started) {
                pthread_mutex_lock(&w->lock);
                w->quit = true;
                pthread_cond_signal(&w->cond);
                pthread_mutex_unlock(&w->lock);
                pthread_join(w->thread, NULL);
        }
        sd_event_source_disable_unref(w->event_source);
        if (w->event_fd >= 0)
                close(w->event_fd);
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
}

/* Copies s into the worker's string room; NULL when s is NULL or does not fit. */
static const char *copy_string(BurstWorker *w, size_t *used, const char *s) {
        size_t len;
        char *p;

        if (!s)
                return NULL;
        len = strlen(s) + 1;
        if (len > sizeof(w->strings) - *used)
                return NULL;
        p = w->strings + *used;
        memcpy(p, s, len);
        *used += len;
        return p;
}

/* The source's status, deep: every string it gave (the unavailable reason too) points into the
 * Domain, which is the thread's from now on and which it rewrites. */
static void copy_status(BurstWorker *w) {
        DomainStatus s = {};
        size_t used = 0;

        /* A source without one: an empty status, as core_domain_status() shows for it anyway. */
        w->status = (DomainStatus) {};
        if (!w->ops->status || w->ops->status(w->domain, &s) < 0)
                return;
        w->status = s;
        w->status.verdict = copy_string(w, &used, s.verdict);
        w->status.same_as = copy_string(w, &used, s.same_as);
        w->status.device_name = copy_string(w, &used, s.device_name);
        w->status.driver = copy_string(w, &used, s.driver);
        w->status.unavailable_reason = copy_string(w, &used, s.unavailable_reason);
        /* Not copied: the list is read once the burst is over (core_relist()), never from here. */
        w->status.listed = NULL;
        w->status.n_listed = 0;
        w->status.n_extras = 0;
        for (size_t i = 0; i < s.n_extras && i < DOMAIN_EXTRAS_MAX; i++) {
                DomainExtra e = s.extras[i];

                e.key = copy_string(w, &used, e.key);
                if (e.type == 's')
                        e.s = copy_string(w, &used, e.s);
                if (e.key && (e.type != 's' || e.s))
                        w->status.extras[w->status.n_extras++] = e;
        }
}

int burst_worker_start(BurstWorker *w, size_t n_max) {
        if (!w || n_max == 0 || n_max > BURST_WORKER_SAMPLES_MAX)
                return -EINVAL;
        if (w->busy)
                return -EBUSY;

        copy_status(w);
        w->busy = true;
        pthread_mutex_lock(&w->lock);
        w->n_max = n_max;
        w->requested = true;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
        return 0;
}

bool burst_worker_busy(const BurstWorker *w) {
        return w && w->busy;
}

const DomainStatus *burst_worker_status(const BurstWorker *w) {
        return w ? &w->status : NULL;
}

int burst_worker_result(BurstWorker *w, int *ret_read_result, Sample **ret_samples, size_t *ret_n) {
        if (!w || !ret_read_result || !ret_samples || !ret_n)
                return -EINVAL;
        if (w->busy)
                return -EBUSY;
        *ret_read_result = w->read_result;
        *ret_samples = w->samples;
        *ret_n = w->n;
        return 0;
}
