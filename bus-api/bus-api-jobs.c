/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "bus-api-jobs.h"
#include "time-util.h"

#define WQUEUE_PAUSE_NS INT64_C(1000000)
#define VALUES_PER_CLOCK_READ 256

static BusJob *job_free(BusJob *j) {
        if (!j)
                return NULL;
        sd_bus_message_unref(j->call);
        sd_bus_message_unref(j->reply);
        free(j->values_copy);
        if (j->map)
                (void) munmap(j->map, j->map_size);
        else {
                free(j->results);
                free(j->uncertainties_ns);
        }
        free(j);
        return NULL;
}

/* Where the slices write their answers, copied into the reply at the end (8 KiB at most). */
static int job_alloc(BusJob *j) {
        /* calloc(0) may return NULL: allocate at least one element. */
        j->results = calloc(j->n ? j->n : 1, sizeof(int64_t));
        j->uncertainties_ns = calloc(j->n ? j->n : 1, sizeof(uint64_t));
        return j->results && j->uncertainties_ns ? 0 : -ENOMEM;
}

/* The round-robin ring of clients with jobs: a singly linked queue. */
static void ring_push(BusApi *a, BusClient *cl) {
        if (cl->ready)
                return;
        cl->ready = true;
        cl->next_ready = NULL;
        if (a->ring_tail)
                a->ring_tail->next_ready = cl;
        else
                a->ring_head = cl;
        a->ring_tail = cl;
}

static BusClient *ring_pop(BusApi *a) {
        BusClient *cl = a->ring_head;

        if (!cl)
                return NULL;
        a->ring_head = cl->next_ready;
        if (!a->ring_head)
                a->ring_tail = NULL;
        cl->next_ready = NULL;
        cl->ready = false;
        return cl;
}

static void ring_remove(BusApi *a, BusClient *cl) {
        BusClient *prev = NULL;

        if (!cl->ready)
                return;
        for (BusClient *i = a->ring_head; i; prev = i, i = i->next_ready)
                if (i == cl) {
                        if (prev)
                                prev->next_ready = i->next_ready;
                        else
                                a->ring_head = i->next_ready;
                        if (a->ring_tail == cl)
                                a->ring_tail = prev;
                        break;
                }
        cl->ready = false;
        cl->next_ready = NULL;
}

/* Converts until the job is done or deadline_ns passes. 1: done, 0: more to do, < 0: a value
 * failed, error set. */
static int job_run(BusApi *a, BusJob *j, int64_t deadline_ns, sd_bus_error *error) {
        while (j->done < j->n) {
                size_t stop = j->done + VALUES_PER_CLOCK_READ < j->n ? j->done + VALUES_PER_CLOCK_READ : j->n;

                for (size_t i = j->done; i < stop; i++) {
                        int64_t value;
                        int r;

                        memcpy(&value, j->values + i * sizeof(int64_t), sizeof(value));
                        r = a->ops->convert(a->core, j->pair.from_index, j->pair.to_index, value, &j->results[i],
                                            &j->uncertainties_ns[i]);
                        if (r < 0) {
                                char where[48];

                                (void) snprintf(where, sizeof(where), "values[%zu]: ", i);
                                return bus_api_domain_error(a, error, r, where, &j->pair, value);
                        }
                }
                j->done = stop;
                if (deadline_ns > 0 && j->done < j->n && clock_now_ns(CLOCK_MONOTONIC) >= deadline_ns)
                        return 0;
        }
        return 1;
}

static int job_reply(BusJob *j) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        /* ListDomains: the answer is made. */
        if (j->reply)
                return sd_bus_send(NULL, j->reply, NULL);
        r = sd_bus_message_new_method_return(j->call, &reply);
        if (r < 0)
                return r;
        /* ConvertManyMemfd: the answers are in the caller's memfd already. */
        if (j->map)
                return sd_bus_send(NULL, reply, NULL);
        r = sd_bus_message_append_array(reply, 'x', j->results, j->n * sizeof(int64_t));
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 't', j->uncertainties_ns, j->n * sizeof(uint64_t));
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Runs a slice of j; 1 when it was answered (with its values or an error). */
static int job_slice(BusApi *a, BusJob *j, int64_t deadline_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        BusPair p;
        int r;

        if (j->reply) {
                (void) job_reply(j);
                return 1;
        }
        /* Between slices an application clock may have left and its slot gone to another domain:
         * the indices are looked up again, and a change ends the call. */
        r = bus_api_resolve(a, j->pair.from, j->pair.to, &p, &error);
        if (r >= 0 && (p.from_index != j->pair.from_index || p.to_index != j->pair.to_index))
                r = bus_timeconv_error_setf(&error, -ENODEV, "'%s' or '%s' went away while the values were "
                                            "converted", j->pair.from, j->pair.to);
        if (r >= 0)
                r = job_run(a, j, deadline_ns, &error);
        if (r == 0)
                return 0;
        if (r > 0) {
                r = job_reply(j);
                /* An answer that could not be built (no memory): say so rather than leave the
                 * caller to its timeout. */
                if (r < 0 && r != -ENOTCONN && r != -ECONNRESET) {
                        (void) bus_timeconv_error_setf(&error, r, "the answer could not be built: %s", strerror(-r));
                        (void) sd_bus_reply_method_error(j->call, &error);
                }
        } else
                r = sd_bus_reply_method_error(j->call, &error);
        /* A reply that cannot be sent (the client left) is nobody's loss: the job is over. */
        return 1;
}

static void client_pop_job(BusApi *a, BusClient *cl) {
        BusJob *j = cl->jobs_head;

        cl->jobs_head = j->next;
        if (!cl->jobs_head)
                cl->jobs_tail = NULL;
        cl->jobs--;
        if (j->map)
                a->memfd_jobs--;
        else if (!j->reply)
                a->values_queued -= j->n;
        job_free(j);
}

static void arm(BusApi *a, int64_t delay_ns) {
        uint64_t now_usec;

        if (!a->jobs_source)
                return;
        if (!a->ring_head) {
                (void) sd_event_source_set_enabled(a->jobs_source, SD_EVENT_OFF);
                return;
        }
        if (sd_event_now(sd_event_source_get_event(a->jobs_source), CLOCK_MONOTONIC, &now_usec) < 0)
                now_usec = (uint64_t) clock_now_ns(CLOCK_MONOTONIC) / 1000;
        (void) sd_event_source_set_time(a->jobs_source, now_usec + (uint64_t) (delay_ns / 1000));
        (void) sd_event_source_set_enabled(a->jobs_source, SD_EVENT_ONESHOT);
}

static int on_jobs(sd_event_source *s, uint64_t usec, void *userdata) {
        BusApi *a = userdata;
        BusClient *cl;

        /* Replies the bus daemon has not taken yet: more would only grow our queue, and delay
         * everyone's small answers behind them. */
        if (bus_api_sending(a, BUS_JOBS_WQUEUE_MAX)) {
                arm(a, WQUEUE_PAUSE_NS);
                return 0;
        }

        cl = ring_pop(a);
        if (cl && job_slice(a, cl->jobs_head, clock_now_ns(CLOCK_MONOTONIC) + BUS_JOBS_SLICE_NS) > 0)
                client_pop_job(a, cl);
        if (cl && cl->jobs_head)
                ring_push(a, cl);
        arm(a, 0);
        return 0;
}

bool bus_api_sending(BusApi *a, uint64_t queued_max) {
        int fd = sd_bus_get_fd(a->bus), outq_bytes = 0;
        uint64_t queued = 0;

        if (sd_bus_get_n_queued_write(a->bus, &queued) >= 0 && queued > queued_max)
                return true;
        /* What the kernel holds for the bus daemon, ahead of anything sent now. */
        return fd >= 0 && ioctl(fd, SIOCOUTQ, &outq_bytes) >= 0 && outq_bytes > BUS_JOBS_OUTQ_BYTES;
}

/* Made at the first job, when the bus has its event loop (the daemon attaches it after making the
 * object). */
static int jobs_source_make(BusApi *a) {
        sd_event *e = sd_bus_get_event(a->bus);
        int r;

        if (a->jobs_source || !e)
                return 0;
        /* Accuracy 1 µs: the default (250 ms) would let sd-event put a slice off that long. */
        r = sd_event_add_time(e, &a->jobs_source, CLOCK_MONOTONIC, 0, 1, on_jobs, a);
        if (r < 0)
                return r;
        /* The bus's own priority: sd-event then takes a slice and the bus's messages in turn, so
         * neither starves the other. */
        r = sd_event_source_set_priority(a->jobs_source, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_event_source_set_enabled(a->jobs_source, SD_EVENT_OFF);
        if (r >= 0)
                (void) sd_event_source_set_description(a->jobs_source, "bus-jobs");
        return r;
}

void bus_api_jobs_done(BusApi *a) {
        a->jobs_source = sd_event_source_disable_unref(a->jobs_source);
}

void bus_api_jobs_drop_client(BusApi *a, BusClient *cl) {
        ring_remove(a, cl);
        while (cl->jobs_head)
                client_pop_job(a, cl);
        arm(a, 0);
}

int bus_api_reply_address(sd_bus_message *m, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *t = NULL;
        const char *sender = sd_bus_message_get_sender(m);
        uint64_t cookie;
        int r;

        r = sd_bus_message_get_cookie(m, &cookie);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_call(sd_bus_message_get_bus(m), &t, NULL, sd_bus_message_get_path(m),
                                           sd_bus_message_get_interface(m), sd_bus_message_get_member(m));
        if (r >= 0 && sender)
                r = sd_bus_message_set_sender(t, sender);
        if (r >= 0)
                r = sd_bus_message_set_expect_reply(t, sd_bus_message_get_expect_reply(m));
        if (r >= 0)
                r = sd_bus_message_seal(t, cookie, 0);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

/* What a job keeps of its call once it waits: the reply address, the names, the values. */
static int job_detach(BusJob *j) {
        sd_bus_message *address = NULL;
        int r;

        r = bus_api_reply_address(j->call, &address);
        if (r < 0)
                return r;
        if (!j->map && !j->reply) {
                j->values_copy = malloc(j->n ? j->n * sizeof(int64_t) : 1);
                if (!j->values_copy) {
                        sd_bus_message_unref(address);
                        return -ENOMEM;
                }
                memcpy(j->values_copy, j->values, j->n * sizeof(int64_t));
                j->values = j->values_copy;
        }
        if (j->pair.from) {
                (void) snprintf(j->names[0], sizeof(j->names[0]), "%s", j->pair.from);
                j->pair.from = j->names[0];
        }
        if (j->pair.to) {
                (void) snprintf(j->names[1], sizeof(j->names[1]), "%s", j->pair.to);
                j->pair.to = j->names[1];
        }
        sd_bus_message_unref(j->call);
        j->call = address;
        return 0;
}

/* Queues j (or, without an event loop, runs it whole now). Takes j. */
static int job_queue(BusApi *a, BusClient *cl, BusJob *j) {
        int r;

        r = jobs_source_make(a);
        if (r < 0) {
                job_free(j);
                return r;
        }
        if (!a->jobs_source || !cl) {
                /* No event loop to come back from, or a peer of our own: the whole job now. */
                job_slice(a, j, 0);
                job_free(j);
                return 1;
        }
        r = job_detach(j);
        if (r < 0) {
                job_free(j);
                return r;
        }

        if (cl->jobs_tail)
                cl->jobs_tail->next = j;
        else
                cl->jobs_head = j;
        cl->jobs_tail = j;
        cl->jobs++;
        if (j->map)
                a->memfd_jobs++;
        else if (!j->reply)
                a->values_queued += j->n;
        ring_push(a, cl);
        arm(a, 0);
        return 1;
}

/* The limits of calls in flight and of values converted a second, which both kinds of call
 * share, and of values queued, which only ConvertMany's hold in the daemon's memory (a memfd's
 * are in its caller's). A memfd job holds its call (with every fd the caller attached) and a
 * mapping until it ends: those are counted over all clients too, so that many clients cannot
 * run the daemon out of fds or maps. */
int bus_api_jobs_room(const BusClient *cl, const char *refused, sd_bus_error *error) {
        if (cl && cl->jobs >= BUS_CLIENT_JOBS_MAX)
                return bus_timeconv_error_setf(error, -EDQUOT, "%u calls of this client with large answers "
                                               "(ListDomains, ConvertMany, ConvertManyMemfd) are in flight "
                                               "already, at most %d: %s", cl->jobs, BUS_CLIENT_JOBS_MAX,
                                               refused);
        return 0;
}

static int jobs_admit(BusApi *a, BusClient *cl, size_t n, bool memfd, sd_bus_error *error) {
        const char *method = memfd ? "ConvertManyMemfd" : "ConvertMany";
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
        int r;

        r = bus_api_jobs_room(cl, memfd ? "ConvertManyMemfd refused" : "ConvertMany refused", error);
        if (r < 0)
                return r;
        if (cl && memfd && a->memfd_jobs >= BUS_JOBS_MEMFD_MAX)
                return bus_timeconv_error_setf(error, -EDQUOT, "the daemon has %zu ConvertManyMemfd calls in "
                                               "flight, at most %d: try again later, or use ConvertMany",
                                               a->memfd_jobs, BUS_JOBS_MEMFD_MAX);
        if (cl && !memfd && a->values_queued + n > BUS_JOBS_VALUES_MAX)
                return bus_timeconv_error_setf(error, -EDQUOT, "the daemon has %zu values queued, at most %d: "
                                               "try again later", a->values_queued, BUS_JOBS_VALUES_MAX);
        /* Taken by the caller once nothing else can refuse the call. */
        if (cl && bus_bucket_peek(&cl->values, now_ns, BUS_CLIENT_VALUES_BURST, BUS_CLIENT_VALUES_PER_S) < n)
                return bus_timeconv_error_setf(error, -EDQUOT, "ConvertMany and ConvertManyMemfd convert %u M "
                                               "values at once and %u M a second for a client: %s refused, "
                                               "try again later, or convert through the shared table "
                                               "(libtimeconv)", BUS_CLIENT_VALUES_BURST >> 20,
                                               BUS_CLIENT_VALUES_PER_S >> 20, method);
        return 0;
}

int bus_api_jobs_submit(BusApi *a, sd_bus_message *m, BusClient *cl, const BusPair *pair,
                        const void *values, size_t n, sd_bus_error *error) {
        uint64_t reply_bytes = (uint64_t) n * (sizeof(int64_t) + sizeof(uint64_t));
        BusJob *j;
        int r;

        r = jobs_admit(a, cl, n, false, error);
        if (r < 0)
                return r;
        if (cl && !bus_client_take_reply_bytes(cl, reply_bytes, clock_now_ns(CLOCK_MONOTONIC)))
                return bus_api_reply_quota_error(error);

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (BusJob) {
                .call = sd_bus_message_ref(m),
                .pair = *pair,
                .values = values,
                .n = n,
        };
        r = job_alloc(j);
        if (r < 0) {
                job_free(j);
                return r;
        }
        if (cl)
                (void) bus_client_take_values(cl, n, clock_now_ns(CLOCK_MONOTONIC));
        return job_queue(a, cl, j);
}

int bus_api_jobs_submit_memfd(BusApi *a, sd_bus_message *m, BusClient *cl, const BusPair *pair,
                              void *map, size_t map_size, size_t n, sd_bus_error *error) {
        uint8_t *p = map;
        BusJob *j;
        int r;

        /* The reply is empty: no budget of large replies to take; the values are the caller's
         * memory, not the daemon's, but their conversion is the daemon's time. */
        r = jobs_admit(a, cl, n, true, error);
        j = r < 0 ? NULL : calloc(1, sizeof(*j));
        if (!j) {
                (void) munmap(map, map_size);
                return r < 0 ? r : -ENOMEM;
        }
        if (cl)
                (void) bus_client_take_values(cl, n, clock_now_ns(CLOCK_MONOTONIC));
        *j = (BusJob) {
                .call = sd_bus_message_ref(m),
                .pair = *pair,
                .values = p,
                .n = n,
                .results = (int64_t *) (void *) (p + n * sizeof(int64_t)),
                .uncertainties_ns = (uint64_t *) (void *) (p + 2 * n * sizeof(int64_t)),
                .map = p,
                .map_size = map_size,
        };
        return job_queue(a, cl, j);
}

int bus_api_jobs_submit_reply(BusApi *a, sd_bus_message *m, BusClient *cl, sd_bus_message *reply,
                              sd_bus_error *error) {
        BusJob *j;
        int r;

        r = bus_api_jobs_room(cl, "read your answers", error);
        if (r < 0)
                return r;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (BusJob) {
                .call = sd_bus_message_ref(m),
                .reply = sd_bus_message_ref(reply),
        };
        return job_queue(a, cl, j);
}
