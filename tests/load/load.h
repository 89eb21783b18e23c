/* SPDX-License-Identifier: MIT */
#pragma once

/* timeconvd under load, for test-load and bench-load: a private bus and Xvfb, the real daemon,
 * client processes that convert (libtimeconv's shared table, D-Bus Convert, ConvertMany, Now,
 * X time) and check every answer against the truth, one hostile client, an X server restart in
 * the middle, and the daemon's RSS and fds before and after. The processes report through a
 * shared mapping: one LoadClientStats each, written only by its owner. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness-proc.h"
#include "harness.h"
#include "xvfb.h"

#define LOAD_CLIENTS_MAX 64
#define LOAD_LATENCIES_MAX 32768        /* per client; beyond, every call still counts */
#define LOAD_FAILURE_MAX 200

typedef enum LoadMode {
        LOAD_MODE_MIX,                  /* the conversions, each checked */
        LOAD_MODE_FLOOR,                /* org.freedesktop.DBus.GetId: the bus daemon alone */
        LOAD_MODE_GARBAGE,              /* malformed and oversized calls */
} LoadMode;

typedef struct LoadClientStats {
        uint64_t bus_calls;             /* method calls answered by timeconvd (or the bus: floor) */
        uint64_t table_calls;           /* conversions the shared table answered in the process */
        uint64_t checked;               /* answers compared with the truth */
        uint64_t wrong;                 /* ... whose bound missed it, but for: */
        uint64_t wrong_coarse;          /* ... those of conversions to or from a _coarse domain */
        uint64_t coarse_lag_beyond;     /* coarse answers not judged: the kernel's coarse clock
                                         * trailed by more than the lag the daemon declares */
        uint64_t errors;                /* failures that should not happen */
        uint64_t stalls;                /* calls slower than the deadline, or timed out */
        uint64_t x11_unavailable;       /* Unavailable for X time: expected while X restarts */
        uint64_t x11_after_restart;     /* X time answers, checked, after the new server is up */
        uint64_t garbage_refused;       /* malformed calls answered with the right error */
        uint64_t oversized_ok;          /* ConvertMany at the limit, answered and checked */
        uint64_t pushes;                /* snapshots of its application clock taken */
        uint64_t app_checked;           /* answers about application clocks checked */
        uint64_t app_absent;            /* another client's clock not there (yet, or any more) */
        int app_ready;                  /* its application clock exists: others may use it */
        int push_unsupported;           /* the daemon has no PushSnapshot */
        int64_t max_latency_ns;
        size_t n_latencies;
        char failure[LOAD_FAILURE_MAX]; /* the first wrong answer or error, for the log */
        char failure_coarse[LOAD_FAILURE_MAX];
        int64_t latencies_ns[LOAD_LATENCIES_MAX];       /* bus calls */
} LoadClientStats;

typedef struct LoadShared {
        int stop;                       /* set by the parent: finish the call in hand and leave */
        int with_x11;                   /* the daemon has X time */
        unsigned n_clients;             /* the well-behaved ones: indexes 0 .. n_clients - 1 */
        int64_t x11_down_ns;            /* CLOCK_MONOTONIC just before the X server is stopped */
        int64_t x11_back_ns;            /* ... once the daemon calibrated the new one */
        LoadClientStats clients[];
} LoadShared;

typedef struct LoadConfig {
        const char *daemon;
        unsigned n_clients;
        int64_t duration_ns;
        int64_t call_deadline_ns;
        bool garbage;                   /* one more client, hostile */
        bool restart_x;                 /* restart Xvfb a third into the run */
} LoadConfig;

/* The daemon's memory and fds (harness-proc.h). */
typedef ProcUsage LoadUsage;

typedef struct LoadRun {
        Harness *harness;
        sd_bus *bus;                    /* the parent's own connection */
        sd_bus_slot *names_slot;
        Xvfb xvfb;
        bool have_x11;
        char **names;                   /* unique names seen on the bus during a phase */
        bool *names_gone;
        size_t n_names, names_cap;
        bool names_lost;                /* out of memory: one may be missing */
} LoadRun;

typedef struct LoadResult {
        LoadClientStats total;          /* sums; max_latency_ns the max; no latencies */
        int64_t elapsed_ns;
        int64_t p50_ns, p99_ns;         /* of the bus calls */
        unsigned clients_exited;        /* cleanly, by themselves */
        unsigned clients_killed;
        bool x_restarted;               /* the new server came back during the run */
        int64_t x_back_after_ns;        /* from stopping the old server to the new one calibrated */
        bool names_gone;                /* every client connection left the bus */
} LoadResult;

/* The client side (load-client.c, load-garbage.c): runs in a forked process until shared->stop. */
void load_client_run(const char *bus_address, LoadMode mode, unsigned index, int64_t deadline_ns,
                     LoadShared *shared, LoadClientStats *stats);
void load_garbage_run(const char *bus_address, unsigned index, int64_t deadline_ns, LoadShared *shared,
                      LoadClientStats *stats);
void load_stats_fail(LoadClientStats *stats, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void load_stats_latency(LoadClientStats *stats, int64_t latency_ns, int64_t deadline_ns);

/* The parent (load-run.c). */
int load_setup(const char *daemon, bool with_x11, LoadRun *run);
void load_teardown(LoadRun *run);
/* Forks the clients (and the hostile one), restarts X if asked, stops them after the duration,
 * reaps them and waits for their connections to leave the bus. */
int load_phase(LoadRun *run, const LoadConfig *config, LoadMode mode, LoadResult *ret);
/* The daemon's resident memory and open fds, after a round trip (it handled all before). */
int load_usage(LoadRun *run, LoadUsage *ret);
/* A single conversion, checked: the daemon still answers right. */
int load_check_alive(LoadRun *run);
