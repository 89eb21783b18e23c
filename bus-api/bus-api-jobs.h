/* SPDX-License-Identifier: MIT */
#pragma once

/* ConvertMany, cut into slices so that one client's values (milliseconds of work at the limit)
 * never make the others wait: a call becomes a job in its client's queue; the event loop runs
 * one slice (BUS_JOBS_SLICE_NS of work) at a time, taking the clients with work in turn, and the
 * bus's own messages in between (the jobs' event source has the bus's priority), so a Convert
 * waits about one slice. While the daemon's send queue is long (a bus daemon that does not
 * read), slices pause. On a bus with no event loop (tests that drive it by hand), or for a peer
 * of our own without a bus (cl NULL), a job runs whole at once. */

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-api-internal.h"
#include "bus-clients.h"

/* 100 µs: a Convert that comes in while a slice runs waits for its end, which is what the
 * others' p99 pays under a large ConvertMany (1 ms made it 5-7 times the unloaded one). */
#define BUS_JOBS_SLICE_NS INT64_C(100000)
#define BUS_JOBS_VALUES_MAX 2000000             /* ConvertMany's queued, over all clients; more: QuotaExceeded */
/* ConvertManyMemfd calls in flight over all clients; more: QuotaExceeded. Each holds its call
 * (and every fd the caller attached to it, up to 253) and a mapping of up to 1.5 MiB until it is
 * answered: 2 per client alone would let 4096 clients take the daemon's fds (its own memfds, the
 * state file, the X connection) and address space. A caller refused may send ConvertMany
 * calls instead (libtimeconv does). */
#define BUS_JOBS_MEMFD_MAX 32
/* Replies queued to the bus daemon beyond which jobs pause: none. A client that never reads gets
 * its 4 MiB/s of replies (bus-clients.h), and each one queued ahead delays every small answer
 * behind it by the time the bus daemon takes to pass it on (8 KiB at the limit now). Measured
 * when the budget was 16 MiB/s and a reply at the limit 256 KiB (bench-hostile, attack 2): 64
 * allowed, p99 0.6-14 s; none, p99 8 ms, max 40 ms, the do-nothing service's p99 14 ms. */
#define BUS_JOBS_WQUEUE_MAX 0
/* Bytes in the bus socket not yet read by the bus daemon (SIOCOUTQ) beyond which jobs pause too:
 * a reply at the limit (8 KiB). sd-bus asks for an 8 MiB send buffer, where a thousand replies at
 * the limit would sit ahead of every small answer, unseen by sd-bus's queue. With 128 KiB, 32
 * such replies could wait there; the victim's p99 under a stream of calls at the limit
 * (bench-hostile, attack 4) was 1.8-3.1 times its quiet one with 128 KiB, 0.9-1.4 with 8 KiB, in
 * the same minutes (then the socket's buffer itself was made that small; but with it, each 16 KiB
 * of a flood's small answers waited for the daemon to be woken, and on a loaded machine the
 * others' answers behind them waited seconds: the buffer stays large, and the pause looks at
 * it). */
#define BUS_JOBS_OUTQ_BYTES (8 << 10)

/* A queued job holds neither the call nor anything of it: the call's fds (those its signature
 * names and those it does not, up to 253) would stay open in the daemon for as long as the job
 * waits, and many clients' jobs would take every fd the daemon may open; its body may be 4 KiB of
 * values or, for ListDomains, nothing worth keeping. The job keeps what it needs: an empty sealed
 * message with the call's sender and serial to address the answer to (bus_api_reply_address()),
 * the names, a copy of the values. A job that runs at once uses the call itself. */
struct BusJob {
        BusJob *next;
        sd_bus_message *call;           /* the call, or its reply address once queued */
        sd_bus_message *reply;          /* ListDomains: the answer, made already; sent as it is */
        BusPair pair;
        char names[2][BUS_API_DOMAIN_NAME_MAX + 1];     /* pair.from, pair.to once queued */
        const uint8_t *values;          /* n int64_t, not promised to be aligned */
        uint8_t *values_copy;           /* ConvertMany, queued: where values points */
        size_t n, done;
        int64_t *results;
        uint64_t *uncertainties_ns;
        /* ConvertManyMemfd: the caller's memfd, mapped; values, results and uncertainties_ns
         * point into it, and the reply is empty. NULL: ConvertMany, answered in its reply. */
        uint8_t *map;
        size_t map_size;
};

/* Ends the jobs' event source (the jobs themselves go with their clients). */
void bus_api_jobs_done(BusApi *a);

/* Queues the ConvertMany call m of client cl (from, to already resolved). 1: queued, answered
 * later; < 0: refused, error set (QuotaExceeded for the limits of bus-clients.h). */
int bus_api_jobs_submit(BusApi *a, sd_bus_message *m, BusClient *cl, const BusPair *pair,
                        const void *values, size_t n, sd_bus_error *error);

/* The same for ConvertManyMemfd: map (map_size bytes, BUS_API_MEMFD_BYTES(n) at least) holds
 * the values and takes the answers. The job owns map from here on, refused or not. */
int bus_api_jobs_submit_memfd(BusApi *a, sd_bus_message *m, BusClient *cl, const BusPair *pair,
                              void *map, size_t map_size, size_t n, sd_bus_error *error);

/* 0 when cl may have one more call with a large answer in flight; else QuotaExceeded, error set,
 * its message ending in refused. ListDomains asks before it builds its answer. */
int bus_api_jobs_room(const BusClient *cl, const char *refused, sd_bus_error *error);

/* ListDomains: reply (made already) is queued to be sent in turn with the other clients' large
 * answers, when the daemon's send queue is empty, so that it never waits ahead of a small answer
 * to someone else. 1: queued (or sent); < 0: refused (QuotaExceeded: calls in flight), error set.
 * Takes a reference of reply. */
int bus_api_jobs_submit_reply(BusApi *a, sd_bus_message *m, BusClient *cl, sd_bus_message *reply,
                              sd_bus_error *error);

/* An empty method call, sealed, with m's sender, serial, path and member: sd-bus makes a reply
 * (sd_bus_message_new_method_return(), _error()) to m from it, while m itself, its body and its
 * fds are let go. */
int bus_api_reply_address(sd_bus_message *m, sd_bus_message **ret);

/* The client left: its jobs go without an answer. */
void bus_api_jobs_drop_client(BusApi *a, BusClient *cl);
