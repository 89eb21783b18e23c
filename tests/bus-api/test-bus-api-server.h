/* SPDX-License-Identifier: MIT */
#pragma once

/* The server half of test-bus-api: a stub core with known answers (four domains: alpha (ns,
 * the reference), beta (ms, alpha / 1e6 + 7), gpu0 (unavailable), island (no path)), served
 * by bus-api in a thread over one end of a socketpair. PushSnapshot takes any snapshot but one
 * naming "taken" (NameTaken, that entry at fault) or "full" (QuotaExceeded). */

#include <pthread.h>
#include <stdatomic.h>

#include "bus-api.h"

#define STUB_VALUE_MAX 1000000000000000LL     /* |value| beyond: -ERANGE */

/* What the stub's shared_table_fd answers. */
typedef enum StubTable {
        STUB_TABLE_FD,          /* its memfd, sealed, holding STUB_TABLE_TEXT */
        STUB_TABLE_NONE,        /* -ENODEV */
        STUB_TABLE_EIO,         /* -EIO */
} StubTable;

#define STUB_TABLE_TEXT "timeconv stub table\n"

typedef struct StubCore {
        atomic_int activity;
        atomic_int pushes;      /* PushSnapshot calls that reached the core */
        atomic_int push_n;      /* readings in the latest */
        atomic_int push_sender_set; /* whether it had a sender (a socketpair has none) */
        atomic_int table_mode;  /* StubTable */
        int table_fd;
} StubCore;

typedef struct Server {
        int fd;                 /* the server's end of the socketpair; the bus owns it */
        int cmd_read, cmd_write;/* the client asks for signals through this pipe */
        StubCore core;
        BusApi *api;
        atomic_int setup_rc;
        atomic_int emit_bad_rc; /* bus_api_emit_discontinuity() with an invalid name */
        const BusCoreOps *ops;
        pthread_t thread;
} Server;

extern const BusCoreOps stub_ops;

/* Starts the server thread on fd (taken over). Commands written to srv->cmd_write: 'd' emits
 * Discontinuity("beta", 1000, -2000) (after trying an invalid name), 'c' DomainsChanged,
 * 'q' stops. Returns 0 or -errno. */
int server_start(Server *srv, int fd);
/* The same with other callbacks (ops must outlive the server). */
int server_start_with(Server *srv, int fd, const BusCoreOps *ops);

/* server_start_with() on one end of a new socketpair; the other end, for client_new(), in
 * *ret_client_fd. Returns 0 or -errno (then nothing is left open). */
int server_start_pair(Server *srv, const BusCoreOps *ops, int *ret_client_fd);

/* Stops the thread and closes everything server_start() opened. */
void server_stop(Server *srv);
