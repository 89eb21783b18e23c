/* SPDX-License-Identifier: MIT */

/* The parent of a load run: the private bus, Xvfb and timeconvd; the client processes; the X
 * restart; the tally. Nothing here sleeps to synchronise: readiness is READY=1 and the X
 * verdict on the bus, the end of a client is its pidfd, and its leaving the bus is the bus
 * daemon's NameOwnerChanged. */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock-client.h"
#include "harness-proc.h"
#include "load.h"
#include "x11-bus.h"

#define X11_WAIT_MS 20000
#define REAP_GRACE_MS 15000
#define NAMES_WAIT_MS 10000

static bool x11_identity(const X11BusDomain *d, void *userdata) {
        return d->available && strcmp(d->verdict, "identity") == 0;
}

/* Identity, from a burst after *userdata (CLOCK_MONOTONIC ns): against the new server. */
static bool x11_identity_since(const X11BusDomain *d, void *userdata) {
        return x11_identity(d, NULL) && d->last_calibrated_ns > *(const int64_t *) userdata;
}

/* Every unique name that comes onto the bus, and whether it left again. */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        LoadRun *run = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || name[0] != ':')
                return 0;
        if (!old_owner[0] && new_owner[0]) {
                if (run->n_names == run->names_cap) {
                        size_t cap = run->names_cap ? 2 * run->names_cap : 64;
                        char **names = realloc(run->names, cap * sizeof(char *));
                        bool *gone = names ? realloc(run->names_gone, cap * sizeof(bool)) : NULL;

                        if (names)
                                run->names = names;
                        if (!gone) {
                                run->names_lost = true;
                                return 0;
                        }
                        run->names_gone = gone;
                        run->names_cap = cap;
                }
                run->names[run->n_names] = strdup(name);
                if (run->names[run->n_names])
                        run->names_gone[run->n_names++] = false;
                else
                        run->names_lost = true;
        } else if (old_owner[0] && !new_owner[0])
                for (size_t i = 0; i < run->n_names; i++)
                        if (strcmp(run->names[i], name) == 0)
                                run->names_gone[i] = true;
        return 0;
}

static void names_clear(LoadRun *run) {
        for (size_t i = 0; i < run->n_names; i++)
                free(run->names[i]);
        run->n_names = 0;
        run->names_lost = false;
}

static bool names_all_gone(const LoadRun *run) {
        if (run->names_lost)
                return false;
        for (size_t i = 0; i < run->n_names; i++)
                if (!run->names_gone[i])
                        return false;
        return true;
}

/* Handles the parent's bus until deadline_ns (CLOCK_MONOTONIC) or, with until_gone, until every
 * name seen has left. */
static int pump_bus(LoadRun *run, int64_t deadline_ns, bool until_gone) {
        for (;;) {
                int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                int r;

                if (until_gone && names_all_gone(run))
                        return 0;
                if (left_ns <= 0)
                        return until_gone ? -ETIMEDOUT : 0;
                r = sd_bus_process(run->bus, NULL);
                if (r < 0)
                        return r;
                if (r == 0) {
                        r = sd_bus_wait(run->bus, (uint64_t) (left_ns / 1000));
                        if (r < 0 && r != -EINTR)
                                return r;
                }
        }
}

int load_setup(const char *daemon, bool with_x11, LoadRun *run) {
        const char *args[] = { "--no-gpu", "--cadence", "0.2", "--display", NULL, NULL };
        int r;

        *run = (LoadRun) {};
        /* meson test sets it: glibc would then write every page calloc() hands out, and the daemon's
         * memory would not be what it is in a session. */
        (void) unsetenv("MALLOC_PERTURB_");
        if (with_x11) {
                r = xvfb_start(-1, &run->xvfb);
                if (r < 0)
                        return r;
                run->have_x11 = true;
                args[4] = run->xvfb.name;
        } else
                args[3] = "--no-x11";
        r = harness_new(NULL, &run->harness);
        if (r >= 0)
                r = harness_start_daemon(run->harness, daemon, args, HARNESS_READY_TIMEOUT_MS);
        if (r >= 0)
                r = harness_connect(run->harness, &run->bus);
        if (r >= 0)
                r = sd_bus_match_signal(run->bus, &run->names_slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus", "NameOwnerChanged", on_name_owner_changed, run);
        if (r >= 0 && with_x11)
                r = x11_bus_wait_for(run->bus, "x11", x11_identity, NULL, X11_WAIT_MS, NULL);
        return r;
}

void load_teardown(LoadRun *run) {
        run->names_slot = sd_bus_slot_unref(run->names_slot);
        run->bus = sd_bus_flush_close_unref(run->bus);
        run->harness = harness_free(run->harness);
        if (run->have_x11)
                xvfb_stop(&run->xvfb);
        names_clear(run);
        free(run->names);
        free(run->names_gone);
        run->names = NULL;
        run->names_gone = NULL;
}

static int fork_client(LoadRun *run, const LoadConfig *config, LoadMode mode, unsigned index, LoadShared *shared,
                       pid_t *ret_pid, int *ret_pidfd) {
        pid_t parent = getpid(), pid;
        int pidfd;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                if (mode == LOAD_MODE_GARBAGE)
                        load_garbage_run(run->harness->bus_address, index, config->call_deadline_ns, shared,
                                         &shared->clients[index]);
                else
                        load_client_run(run->harness->bus_address, mode, index, config->call_deadline_ns, shared,
                                        &shared->clients[index]);
                _exit(0);
        }
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return -errno;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return (x > y) - (x < y);
}

static void tally(const LoadShared *shared, unsigned n, LoadResult *res) {
        size_t n_lat = 0, k = 0;
        int64_t *all;

        for (unsigned i = 0; i < n; i++) {
                const LoadClientStats *s = &shared->clients[i];
                LoadClientStats *t = &res->total;

                t->bus_calls += s->bus_calls;
                t->table_calls += s->table_calls;
                t->checked += s->checked;
                t->wrong += s->wrong;
                t->wrong_coarse += s->wrong_coarse;
                t->coarse_lag_beyond += s->coarse_lag_beyond;
                t->errors += s->errors;
                t->stalls += s->stalls;
                t->x11_unavailable += s->x11_unavailable;
                t->x11_after_restart += s->x11_after_restart;
                t->garbage_refused += s->garbage_refused;
                t->oversized_ok += s->oversized_ok;
                t->pushes += s->pushes;
                t->app_checked += s->app_checked;
                t->app_absent += s->app_absent;
                t->push_unsupported += s->push_unsupported;
                if (s->max_latency_ns > t->max_latency_ns)
                        t->max_latency_ns = s->max_latency_ns;
                if (!t->failure[0] && s->failure[0])
                        snprintf(t->failure, sizeof(t->failure), "client %u: %.180s", i, s->failure);
                if (!t->failure_coarse[0] && s->failure_coarse[0])
                        snprintf(t->failure_coarse, sizeof(t->failure_coarse), "client %u: %.180s", i,
                                 s->failure_coarse);
                n_lat += s->n_latencies;
        }
        all = n_lat ? malloc(n_lat * sizeof(int64_t)) : NULL;
        if (!all)
                return;
        for (unsigned i = 0; i < n; i++) {
                memcpy(all + k, shared->clients[i].latencies_ns, shared->clients[i].n_latencies * sizeof(int64_t));
                k += shared->clients[i].n_latencies;
        }
        qsort(all, n_lat, sizeof(int64_t), cmp_i64);
        res->p50_ns = all[(n_lat - 1) / 2];
        res->p99_ns = all[(size_t) ((double) (n_lat - 1) * 0.99)];
        free(all);
}

/* Stops the old server and starts a new one on the same display, then follows the daemon on the
 * bus until it has calibrated X time against the new one. */
static int restart_x(LoadRun *run, LoadShared *shared, LoadResult *res) {
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC), gone_ns;
        int display = run->xvfb.display, r;

        __atomic_store_n(&shared->x11_down_ns, t0, __ATOMIC_RELEASE);
        r = xvfb_stop(&run->xvfb);
        gone_ns = clock_now_ns(CLOCK_MONOTONIC);
        if (r >= 0)
                r = xvfb_start(display, &run->xvfb);
        if (r < 0) {
                run->have_x11 = false;
                return r;
        }
        /* Any burst after the old server was gone met the new one. */
        r = x11_bus_wait_for(run->bus, "x11", x11_identity_since, &gone_ns, X11_WAIT_MS, NULL);
        if (r < 0)
                return r;
        res->x_back_after_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
        __atomic_store_n(&shared->x11_back_ns, clock_now_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
        res->x_restarted = true;
        return 0;
}

int load_phase(LoadRun *run, const LoadConfig *config, LoadMode mode, LoadResult *ret) {
        unsigned n = config->n_clients + (config->garbage ? 1 : 0);
        size_t size = sizeof(LoadShared) + n * sizeof(LoadClientStats);
        pid_t pids[LOAD_CLIENTS_MAX + 1];
        int pidfds[LOAD_CLIENTS_MAX + 1];
        LoadResult res = {};
        LoadShared *shared;
        int64_t t0, end_ns, reap_ns;
        unsigned started = 0;
        int r = 0;

        if (config->n_clients > LOAD_CLIENTS_MAX)
                return -EINVAL;
        shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared == MAP_FAILED)
                return -errno;
        shared->with_x11 = run->have_x11;
        shared->n_clients = config->n_clients;
        names_clear(run);
        fflush(NULL);

        t0 = clock_now_ns(CLOCK_MONOTONIC);
        end_ns = t0 + config->duration_ns;
        for (; started < n && r >= 0; started++)
                r = fork_client(run, config, started < config->n_clients ? mode : LOAD_MODE_GARBAGE, started, shared,
                                &pids[started], &pidfds[started]);
        if (r < 0)
                started--;

        if (r >= 0 && config->restart_x && run->have_x11) {
                r = pump_bus(run, t0 + config->duration_ns / 3, false);
                if (r >= 0)
                        r = restart_x(run, shared, &res);
        }
        if (r >= 0)
                r = pump_bus(run, end_ns, false);
        __atomic_store_n(&shared->stop, 1, __ATOMIC_RELEASE);

        /* Each client finishes the call in hand (at most a deadline) and leaves. */
        reap_ns = clock_now_ns(CLOCK_MONOTONIC) + config->call_deadline_ns + (int64_t) REAP_GRACE_MS * 1000000;
        for (unsigned i = 0; i < started; i++) {
                int status = 0, k;

                k = proc_wait(pidfds[i], pids[i], true, proc_ms_left(reap_ns), &status);
                if (k == -ETIMEDOUT) {
                        proc_signal(pidfds[i], SIGKILL);
                        proc_wait(pidfds[i], pids[i], true, -1, NULL);
                        res.clients_killed++;
                } else if (k >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                        res.clients_exited++;
                close(pidfds[i]);
        }
        res.elapsed_ns = clock_now_ns(CLOCK_MONOTONIC) - t0;
        tally(shared, started, &res);
        munmap(shared, size);

        /* Their connections are gone from the bus daemon; our next call reaches timeconvd after
         * the NameOwnerChanged that told it so. */
        res.names_gone = pump_bus(run, clock_now_ns(CLOCK_MONOTONIC) + (int64_t) NAMES_WAIT_MS * 1000000,
                                  true) >= 0;
        *ret = res;
        return r;
}

int load_usage(LoadRun *run, LoadUsage *ret) {
        LoadUsage u;
        int r;

        r = load_check_alive(run);
        if (r < 0)
                return r;
        r = proc_usage(run->harness->daemon_pid, &u);
        if (r < 0)
                return r;
        *ret = u;
        return 0;
}

int load_check_alive(LoadRun *run) {
        Bracket b;
        int64_t v;
        uint64_t unc;
        int r;

        bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
        r = clock_convert(run->bus, "monotonic", "boottime", b.from_ns, NULL, &v, &unc);
        if (r < 0)
                return r;
        return bracket_holds(v, unc, b.to_lo_ns, b.to_hi_ns) ? 0 : -EBADMSG;
}
