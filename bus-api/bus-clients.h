/* SPDX-License-Identifier: MIT */
#pragma once

/* What each client on the bus may cost the daemon. A client on the same bus is not trusted: it
 * may call and never read its replies, so the daemon counts, per client (its unique bus name;
 * the record goes when the bus driver says the client left):
 *   - calls with large answers in flight (ListDomains, ConvertMany, ConvertManyMemfd; queued or
 *     being worked on, bus-api-jobs.h);
 *   - bytes of every reply, estimated when the call comes in (bus-api-filter.c);
 *   - copies of the shared table handed out (each pending reply holds an fd in the bus daemon);
 *   - bytes of large replies (ConvertMany, ExportSnapshots), as a token bucket: a client that
 *     never reads can make the bus daemon hold at most a bucket and its refill, and what the
 *     daemon itself queues stays bounded;
 *   - values converted by ConvertMany and ConvertManyMemfd, as a token bucket: the daemon's CPU.
 * Beyond a limit the call is refused with QuotaExceeded; nothing waits. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#define BUS_DRIVER_NAME "org.freedesktop.DBus"

#define BUS_CLIENTS_MAX 4096                    /* tracked at once; more: QuotaExceeded */
#define BUS_CLIENT_JOBS_MAX 2                   /* ListDomains, ConvertMany(Memfd) calls in flight per client */
/* GetSharedTable replies per client: 8 at once (each unread one holds an fd in the bus
 * daemon), then one a second, so that a handle that fetches the table again after every
 * restart or retirement is never locked out. */
#define BUS_CLIENT_TABLES_BURST 8
#define BUS_CLIENT_TABLES_PER_S 1
/* A large reply is one message: the bus daemon reads it whole before the small replies behind
 * it on our connection, so its bytes are everyone's wait. Per client, 8 MiB at once (1024
 * ConvertMany replies at the limit, 8 KiB each), 4 MiB/s after; over all clients, 16 MiB at once,
 * 8 MiB/s. (bench-hostile, a client that never reads, when a reply at the limit was 256 KiB: at
 * 16 MiB/s the others waited up to 1 s, at 4 MiB/s up to 140 ms.) More goes in a memfd
 * (ConvertManyMemfd) or through the shared table, which cost the bus nothing. */
#define BUS_CLIENT_REPLY_BURST_BYTES (8u << 20)
#define BUS_CLIENT_REPLY_BYTES_PER_S (4u << 20)
#define BUS_CLIENTS_REPLY_BURST_BYTES (16u << 20)
#define BUS_CLIENTS_REPLY_BYTES_PER_S (8u << 20)
/* Every reply, whatever the method, as its estimated bytes (bus-api-filter.c), taken when the call
 * comes in: 4 MiB at once, 4 MiB/s after. Small answers (Convert, Now: 128 bytes counted) pass 32
 * thousand a second, above what one client waiting for each answer reaches (bench-hostile's
 * victim, 8-16 thousand a second: at 1 MiB/s it was refused); ListDomains (3-17 KiB) or
 * Introspect (8 KiB counted), a few hundred, which the calls in flight and the send queue bound
 * further (bus-api-jobs.h). Beyond it the call is refused with QuotaExceeded at once, a small
 * error, before any work or reply is made. */
#define BUS_CLIENT_REPLIES_BURST_BYTES (4u << 20)
#define BUS_CLIENT_REPLIES_BYTES_PER_S (4u << 20)
/* Values converted for one client by ConvertMany and ConvertManyMemfd together: 8 M at once (128
 * calls of ConvertManyMemfd at the limit), 2 M a second after, about a tenth of a core here
 * (~60 ns a value). Without it a client that keeps 2 memfd calls in flight has a core to itself
 * for as long as it likes. ConvertMany's reply budget binds first (4 MiB/s is 256 K values/s). */
#define BUS_CLIENT_VALUES_BURST (8u << 20)
#define BUS_CLIENT_VALUES_PER_S (2u << 20)

/* A token bucket: up to burst tokens, per_s more each second. */
typedef struct BusBucket {
        uint64_t tokens;
        int64_t refilled_ns;            /* CLOCK_MONOTONIC up to which time is counted in */
} BusBucket;

/* Takes n tokens: true if there were enough, false (nothing taken) if not. */
bool bus_bucket_take(BusBucket *b, uint64_t n, int64_t now_ns, uint64_t burst, uint64_t per_s);
/* How many tokens there are now. */
uint64_t bus_bucket_peek(BusBucket *b, int64_t now_ns, uint64_t burst, uint64_t per_s);

typedef struct BusClients BusClients;
typedef struct BusJob BusJob;

typedef struct BusClient {
        BusClients *clients;
        char *name;                     /* unique bus name */
        sd_bus_slot *owner_query;       /* GetNameOwner in flight: is it still there? */
        struct BusClient *next_in_bucket;
        unsigned jobs;                  /* ListDomains, ConvertMany(Memfd) calls not yet answered */
        BusBucket tables;               /* shared tables it may be handed */
        BusBucket reply_bytes;          /* large replies (ConvertMany, ExportSnapshots) */
        BusBucket replies;              /* every reply, estimated (BUS_CLIENT_REPLIES_*) */
        BusBucket values;               /* values it may have converted (ConvertMany, ConvertManyMemfd) */
        BusJob *jobs_head, *jobs_tail;  /* this client's queue, oldest first (bus-jobs.c) */
        struct BusClient *next_ready;   /* in the round-robin ring of clients with jobs */
        bool ready;
} BusClient;

/* gone (may be NULL) is called with a client's record just before it is freed, so that its
 * queued work can be dropped. */
int bus_clients_new(sd_bus *bus, void (*gone)(BusClient *client, void *userdata), void *userdata,
                    BusClients **ret);
BusClients *bus_clients_free(BusClients *c);

/* The record of sender, made on first use. When BUS_CLIENTS_MAX are tracked, records that have
 * nothing queued and all their budgets back are let go first; -EDQUOT when none is. */
int bus_clients_get(BusClients *c, const char *sender, BusClient **ret);

size_t bus_clients_count(const BusClients *c);

/* Takes bytes from the client's reply bucket and from all clients' together: true if both had
 * enough (the reply may be sent), false otherwise (refuse the call; nothing is taken). */
bool bus_client_take_reply_bytes(BusClient *cl, uint64_t bytes, int64_t now_ns);

/* Whether a large reply of at least bytes could be sent now: asked before the work of one whose
 * size is known only after it (ExportSnapshots). Takes nothing. */
bool bus_client_may_reply_bytes(BusClient *cl, uint64_t bytes, int64_t now_ns);

/* Takes the estimated bytes of a reply from the client's budget of every reply: false (nothing
 * taken) when it has had its share for now. */
bool bus_client_take_replies(BusClient *cl, uint64_t bytes, int64_t now_ns);

/* Takes n values from the client's budget of conversions: false (nothing taken) when it has had
 * its share for now. */
bool bus_client_take_values(BusClient *cl, uint64_t n, int64_t now_ns);

/* Takes one of the client's shared tables: false when it has had its share for now. */
bool bus_client_take_table(BusClient *cl, int64_t now_ns);

static inline void bus_clients_freep(BusClients **c) {
        bus_clients_free(*c);
}
