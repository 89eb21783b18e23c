/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared between the files of the bus_api library only. */

#include <stdlib.h>
#include <systemd/sd-event.h>

#include "bus-api.h"
#include "bus-clients.h"
#include "cleanup.h"

typedef struct BusDomainSeen BusDomainSeen;

/* Estimates of an answer's bytes on the bus, for the budget of every reply (bus-api-filter.c): a
 * small message (header, names, a few numbers), ListDomains' entry per domain (10 typed entries
 * and a few strings; 5.3 KiB for the 14 of a desktop), sd-bus's introspection of our object
 * (about 5 KiB). */
#define BUS_API_REPLY_BYTES_MIN 128u
#define BUS_API_LIST_DOMAIN_BYTES 384u
#define BUS_API_INTROSPECT_BYTES 8192u
/* Answers queued to the bus daemon beyond which GetSharedTable is refused: each one holds an fd
 * of the daemon's until it is written. */
#define BUS_API_FD_REPLIES_QUEUED_MAX 64
/* Answers queued to the bus daemon from which, once they are sent, the memory they took is given
 * back (BusCoreOps.release_memory): 20,000 answers of a flood, errors or not, held 2-13 MiB of
 * heap for good. */
#define BUS_API_RELEASE_AFTER_QUEUED 1024
#define BUS_API_RELEASE_CHECK_USEC 250000

struct BusApi {
        sd_bus *bus;
        sd_bus_slot *slot;
        sd_bus_slot *filter_slot;               /* bus-api-filter.c */
        sd_event_source *release_source;        /* memory given back once a long queue is sent */
        bool release_pending;
        const BusCoreOps *ops;
        void *core;

        /* What each client may cost (bus-clients.h), and the ConvertMany slices (bus-api-jobs.h). */
        BusClients *clients;
        sd_event_source *jobs_source;
        BusClient *ring_head, *ring_tail;       /* clients with jobs, in turn */
        size_t values_queued;
        size_t memfd_jobs;                      /* ConvertManyMemfd calls queued, over all clients */

        /* The domains as DomainsChanged last announced them (bus-api-changes.c). */
        BusDomainSeen *seen;
        size_t n_seen;
};

/* bus-api-changes.c: the list DomainsChanged compares with, taken at the start and dropped. */
int bus_api_changes_init(BusApi *a);
void bus_api_changes_done(BusApi *a);

/* bus-api-filter.c: every call from a client takes its answer's bytes from its budget first. */
int bus_api_filter_add(BusApi *a);
void bus_api_filter_done(BusApi *a);
/* Asks for the memory to be given back (BusCoreOps.release_memory) once nothing waits to be sent:
 * after a long queue of answers, and after a client left, whose record, queue and answers were
 * freed. Calls in a row ask once. */
void bus_api_release_arm(BusApi *a);

/* bus-api-jobs.c: whether answers wait to be sent: more than queued_max in sd-bus's queue, or more
 * than BUS_JOBS_OUTQ_BYTES in the bus socket, which the bus daemon has not read yet. */
bool bus_api_sending(BusApi *a, uint64_t queued_max);

/* The record of the caller of m (bus-clients.h); QuotaExceeded when too many are tracked. NULL
 * on a connection without a bus: no limits there. */
int bus_api_client(BusApi *a, sd_bus_message *m, BusClient **ret, sd_bus_error *error);

/* QuotaExceeded for a large reply that the buckets of bus-clients.h do not allow now. */
int bus_api_reply_quota_error(sd_bus_error *error);

/* Tells the core a call was refused at the daemon's limit of open files (BusCoreOps.out_of_fds). */
void bus_api_out_of_fds(BusApi *a, int errnum);

/* Tells the core a client is active; every method handler calls it first. */
void bus_api_touch(BusApi *a);

/* 0 when name is a valid domain name, else InvalidArgument naming the argument arg. */
int bus_api_validate_domain(const char *arg, const char *name, sd_bus_error *error);
/* Reads the names of a conversion, the first two arguments of m, and validates them. */
int bus_api_read_pair_names(sd_bus_message *m, const char **ret_from, const char **ret_to, sd_bus_error *error);

/* The domains of one conversion, each looked up once: from and to (to NULL for a reading of
 * from alone, Now) with their core indices. */
typedef struct BusPair {
        const char *from, *to;
        size_t from_index, to_index;
} BusPair;

/* Looks up from, then to (may be NULL): UnknownDomain naming the first that is not there. */
int bus_api_resolve(BusApi *a, const char *from, const char *to, BusPair *ret, sd_bus_error *error);

/* What a batch (ConvertMany, ConvertManyMemfd) needs before it becomes a job: the pair, looked
 * up once for all its values, and the calling client, whose budget the job spends. */
int bus_api_batch_open(BusApi *a, sd_bus_message *m, const char *from, const char *to, BusPair *ret_pair,
                       BusClient **ret_client, sd_bus_error *error);

/* Turns the core's error r for a conversion of value over p (p->to NULL: for reading p->from)
 * into our named error with a message saying which domain or value is at fault; where ("" or
 * "values[3]: ") prefixes it. Returns the negative errno. */
int bus_api_domain_error(BusApi *a, sd_bus_error *error, int r, const char *where, const BusPair *p,
                         int64_t value);

int bus_api_method_list_domains(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_api_method_convert(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_api_method_convert_many(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* bus-api-memfd.c */
int bus_api_method_convert_many_memfd(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_api_method_now(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_api_method_export_snapshots(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_api_method_get_shared_table(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_api_method_push_snapshot(sd_bus_message *m, void *userdata, sd_bus_error *error);
