/* SPDX-License-Identifier: MIT */

/* Steps while clients convert: three D-Bus clients and one libtimeconv client (its fast path,
 * and values from before the steps, which go over D-Bus) convert monotonic instants to
 * boottime, realtime and tai without pause while the shim makes a suspend, a backward clock set
 * and a TAI change. No call may fail or take long (a stall), every client must go on after each
 * step, and every answer must hold the truth of its instant: the offset in force then, or,
 * between a step and its announcement (when the daemon cannot know yet), either of the two.
 * usage: test-steps-clients TIMECONVD CLOCKSHIFT_SO */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "steps-check.h"
#include "timeconv.h"

#define N_BUS_CLIENTS 3
#define N_CLIENTS (N_BUS_CLIENTS + 1)
#define CALLS_MAX 40000
#define CALLS_BETWEEN_STEPS 200
#define STALL_NS INT64_C(250000000)
#define PROGRESS_TIMEOUT_MS 10000
#define N_STEPS 3
#define S_NS INT64_C(1000000000)

static const char *const args[] = { "--no-x11", "--no-gpu", "--cadence", "0.1", NULL };

static const StepsDomain domains[] = {
        { "boottime", CLOCK_BOOTTIME },
        { "realtime", CLOCK_REALTIME },
        { "tai", CLOCK_TAI },
};

#define N_DOMAINS (sizeof(domains) / sizeof(domains[0]))

/* The steps: what moves, by how much, and each domain's offset after it. */
static const struct {
        const char *clocks;
        int64_t jump_ns;
        int64_t offset_after_ns[N_DOMAINS];
} plan[N_STEPS] = {
        { "boottime,realtime,tai", 2 * S_NS, { 2 * S_NS, 2 * S_NS, 2 * S_NS } },
        { "realtime,tai", -3 * S_NS, { 2 * S_NS, -1 * S_NS, -1 * S_NS } },
        { "tai", 1 * S_NS, { 2 * S_NS, -1 * S_NS, 0 } },
};

typedef struct Call {
        int64_t m_ns;                   /* the monotonic instant converted */
        int64_t lo_ns, hi_ns;           /* the true (unshifted) target clock around it */
        int64_t value_ns;
        uint64_t uncertainty_ns;
        int64_t latency_ns;
        uint8_t domain;
        int8_t error;                   /* -errno, 0 */
} Call;

typedef struct Client {
        pthread_t thread;
        const Harness *harness;
        bool library;
        Call calls[CALLS_MAX];
        _Atomic size_t n_calls;
        StepsEra before[N_DOMAINS];     /* readings from before every step (library client) */
        size_t n_old, n_old_wrong;
        int error;                      /* a setup failure */
} Client;

static atomic_bool stop;
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER;

/* The fewest calls a D-Bus client made; the library client is the last of the array. */
static size_t slowest_bus_client(const Client *library) {
        size_t n = SIZE_MAX;

        for (const Client *c = library - N_BUS_CLIENTS; c < library; c++)
                if (c->error >= 0 && atomic_load(&c->n_calls) < n)
                        n = atomic_load(&c->n_calls);
        return n;
}

static int convert(Client *c, sd_bus *bus, struct timeconv *tc, const char *to, int64_t m_ns, int64_t *ret_v,
                   uint64_t *ret_u) {
        int64_t u;
        int r;

        if (!c->library)
                return clock_convert(bus, "monotonic", to, m_ns, NULL, ret_v, ret_u);
        r = timeconv_convert(tc, "monotonic", to, m_ns, ret_v, &u);
        if (r >= 0)
                *ret_u = (uint64_t) u;
        return r;
}

static void *client_run(void *userdata) {
        Client *c = userdata;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        struct timeconv *tc = NULL;

        c->error = c->library ? timeconv_open_address(c->harness->bus_address, &tc) : harness_connect(c->harness, &bus);
        if (c->error < 0)
                return NULL;
        for (size_t i = 0; !atomic_load(&stop); i++) {
                size_t d = i % N_DOMAINS, n;

                /* The table answers in nanoseconds: the library client keeps pace with the
                 * slowest D-Bus client, so that its calls spread over the steps like theirs. */
                if (c->library && i % 2 == 0) {
                        pthread_mutex_lock(&progress_lock);
                        while (!atomic_load(&stop) && atomic_load(&c->n_calls) > slowest_bus_client(c))
                                pthread_cond_wait(&progress, &progress_lock);
                        pthread_mutex_unlock(&progress_lock);
                }
                n = atomic_load(&c->n_calls);
                Call *call;
                Bracket b;
                int64_t t0, v = 0;
                uint64_t u = 0;
                int r;

                /* The library client also converts readings from before the steps: the table
                 * cannot answer those, D-Bus does, with the model of their time. */
                if (c->library && i % 2 == 1) {
                        const StepsEra *e = &c->before[d];
                        int64_t lo = e->mono.to_lo_ns + e->offset_ns, hi = e->mono.to_hi_ns + e->offset_ns;

                        r = convert(c, bus, tc, domains[d].name, e->mono.from_ns, &v, &u);
                        c->n_old++;
                        c->n_old_wrong += r < 0 || !bracket_holds(v, u, lo, hi);
                        continue;
                }
                if (n == CALLS_MAX)
                        break;
                bracket_read(CLOCK_MONOTONIC, domains[d].id, &b);
                t0 = clock_now_ns(CLOCK_MONOTONIC);
                r = convert(c, bus, tc, domains[d].name, b.from_ns, &v, &u);
                call = &c->calls[n];
                *call = (Call) {
                        .m_ns = b.from_ns,
                        .lo_ns = b.to_lo_ns,
                        .hi_ns = b.to_hi_ns,
                        .value_ns = v,
                        .uncertainty_ns = u,
                        .latency_ns = clock_now_ns(CLOCK_MONOTONIC) - t0,
                        .domain = (uint8_t) d,
                        .error = (int8_t) (r < 0 ? (r < -127 ? -127 : r) : 0),
                };
                atomic_store(&c->n_calls, n + 1);
                pthread_mutex_lock(&progress_lock);
                pthread_cond_broadcast(&progress);
                pthread_mutex_unlock(&progress_lock);
        }
        timeconv_free(tc);
        return NULL;
}

/* Waits until every client made want_more calls since *marks (then updated); false on a stall. */
static bool wait_progress(Client *clients, size_t *marks, size_t want_more) {
        int64_t deadline_ns = clock_now_ns(CLOCK_REALTIME) + (int64_t) PROGRESS_TIMEOUT_MS * 1000000;
        struct timespec deadline = { .tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000 };
        bool done = false;

        pthread_mutex_lock(&progress_lock);
        for (;;) {
                done = true;
                for (size_t i = 0; i < N_CLIENTS; i++)
                        done &= clients[i].error < 0 ||
                                atomic_load(&clients[i].n_calls) >= marks[i] + want_more ||
                                atomic_load(&clients[i].n_calls) == CALLS_MAX;
                if (done || pthread_cond_timedwait(&progress, &progress_lock, &deadline) == ETIMEDOUT)
                        break;
        }
        pthread_mutex_unlock(&progress_lock);
        for (size_t i = 0; i < N_CLIENTS; i++)
                marks[i] = atomic_load(&clients[i].n_calls);
        return done;
}

int main(int argc, char **argv) {
        _cleanup_(steps_freep) Steps *s = NULL;
        Client *clients;
        size_t marks[N_CLIENTS] = {};
        int64_t t_command[N_STEPS], t_known[N_STEPS];
        size_t n_calls = 0, n_failed = 0, n_wrong = 0, n_ambiguous = 0, n_old = 0, n_old_wrong = 0;
        int64_t max_latency_ns = 0;
        int r;

        tap_args(argc, argv, 2, "TIMECONVD CLOCKSHIFT_SO");

        r = steps_tap_start(argv[1], argv[2], args, "timeconvd with the shim on a private bus", &s);
        clients = calloc(N_CLIENTS, sizeof(*clients));
        if (r < 0 || !clients)
                return done_testing();

        for (size_t i = 0; i < N_CLIENTS; i++) {
                clients[i].harness = s->harness;
                clients[i].library = i == N_BUS_CLIENTS;
                for (size_t d = 0; d < N_DOMAINS; d++)
                        steps_era_read(domains[d].id, 0, &clients[i].before[d]);
                r = pthread_create(&clients[i].thread, NULL, client_run, &clients[i]);
                if (r != 0)
                        clients[i].error = -r;
        }
        ok(wait_progress(clients, marks, CALLS_BETWEEN_STEPS), "every client converts");

        for (size_t k = 0; k < N_STEPS; k++) {
                size_t since = s->n_events, index;
                ShimReply reply;

                t_command[k] = clock_now_ns(CLOCK_MONOTONIC);
                r = steps_shim(s, &reply, "step %" PRIi64 " %s wake", plan[k].jump_ns, plan[k].clocks);
                ok(r == 0 && reply.wakes == 1, "step %zu: %+" PRIi64 " ns of %s, the daemon woken", k,
                   plan[k].jump_ns, plan[k].clocks);
                t_known[k] = t_command[k];
                for (size_t d = 0; d < N_DOMAINS; d++) {
                        int64_t before_ns = k ? plan[k - 1].offset_after_ns[d] : 0;

                        if (plan[k].offset_after_ns[d] == before_ns)
                                continue;
                        r = steps_wait(s, domains[d].name, since, STEPS_DETECT_MS, &index);
                        ok(r == 0, "step %zu: Discontinuity for '%s' while clients convert", k, domains[d].name);
                        if (r == 0 && s->events[index].received_ns > t_known[k])
                                t_known[k] = s->events[index].received_ns;
                }
                ok(wait_progress(clients, marks, CALLS_BETWEEN_STEPS),
                   "step %zu: every client goes on (%d more calls each within %d ms)", k, CALLS_BETWEEN_STEPS,
                   PROGRESS_TIMEOUT_MS);
        }
        pthread_mutex_lock(&progress_lock);
        atomic_store(&stop, true);
        pthread_cond_broadcast(&progress);
        pthread_mutex_unlock(&progress_lock);
        for (size_t i = 0; i < N_CLIENTS; i++)
                pthread_join(clients[i].thread, NULL);

        for (size_t i = 0; i < N_CLIENTS; i++) {
                Client *c = &clients[i];

                ok(c->error >= 0, "client %zu (%s) connected", i, c->library ? "libtimeconv" : "D-Bus");
                n_old += c->n_old;
                n_old_wrong += c->n_old_wrong;
                for (size_t j = 0; j < atomic_load(&c->n_calls); j++) {
                        const Call *call = &c->calls[j];
                        int64_t offset_ns = 0, other_ns = INT64_MIN;
                        bool holds;

                        n_calls++;
                        if (call->latency_ns > max_latency_ns)
                                max_latency_ns = call->latency_ns;
                        if (call->error < 0) {
                                if (n_failed++ < 3)
                                        diag("client %zu: call %zu failed: %s", i, j, strerror(-call->error));
                                continue;
                        }
                        /* The offset in force at the instant; between a step and the last of its
                         * signals, the one before it is right too. */
                        for (size_t k = 0; k < N_STEPS; k++) {
                                if (call->m_ns >= t_command[k])
                                        offset_ns = plan[k].offset_after_ns[call->domain];
                                if (call->m_ns >= t_command[k] && call->m_ns <= t_known[k])
                                        other_ns = k ? plan[k - 1].offset_after_ns[call->domain] : 0;
                        }
                        holds = bracket_holds(call->value_ns, call->uncertainty_ns, call->lo_ns + offset_ns,
                                              call->hi_ns + offset_ns);
                        if (!holds && other_ns != INT64_MIN) {
                                holds = bracket_holds(call->value_ns, call->uncertainty_ns, call->lo_ns + other_ns,
                                                      call->hi_ns + other_ns);
                                n_ambiguous += holds;
                        }
                        if (!holds && n_wrong++ < 3)
                                diag("client %zu: monotonic %" PRIi64 " -> %s %" PRIi64 " +- %" PRIu64
                                     ", truth [%" PRIi64 ", %" PRIi64 "] + %" PRIi64, i, call->m_ns,
                                     domains[call->domain].name, call->value_ns, call->uncertainty_ns, call->lo_ns,
                                     call->hi_ns, offset_ns);
                }
        }
        diag("%zu calls, %zu answered with the offset of before a step they followed (the daemon not "
             "yet told), the slowest %.3f ms; %zu conversions of values from before the steps",
             n_calls, n_ambiguous, (double) max_latency_ns / 1e6, n_old);
        is_int(n_failed, 0, "no call failed");
        is_int(n_wrong, 0, "every answer holds the truth of its instant");
        ok(n_old > 0 && n_old_wrong == 0, "values from before the steps convert with their model, %zu of %zu",
           n_old - n_old_wrong, n_old);
        ok(max_latency_ns < STALL_NS, "no call took %.0f ms or more (the slowest %.3f ms)", (double) STALL_NS / 1e6,
           (double) max_latency_ns / 1e6);
        ok(harness_daemon_alive(s->harness), "the daemon lives on");
        free(clients);
        return done_testing();
}
