/* SPDX-License-Identifier: MIT */

/* The X server's clock: domains x11 (ms, 32-bit) and its view x11_us (high-precision X time).
 * Each sample is one probe (x11-conn.c): the server stamped T ms inside our bracket. The logic
 * that needs no server (identity test, verdict window, probe phases) is calibrate/x11-verdict.c. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock-id.h"
#include "domain.h"
#include "splitmix.h"
#include "source-time.h"
#include "x11-conn.h"
#include "x11-verdict.h"
#include "x11.h"

/* A burst (connecting included) never holds the caller longer than this, whatever the server
 * does; nor does open(). */
#define BURST_BUDGET_NS INT64_C(100000000)
#define CONNECT_BUDGET_NS INT64_C(100000000)
/* Bursts in a row without a sample (a probe still unanswered, errors) before we reconnect: a
 * connection that stopped answering may be wedged for good. */
#define FAILED_BURSTS_MAX 3
#define RTT_RING 64

struct Domain {
        DomainInfo info;
        X11Link link;                   /* the display: as configured, or $DISPLAY at open, or followed */
        bool force_tracked;
        X11Conn conn;
        X11Connect *connecting;         /* an attempt under way (x11-conn.h), or NULL */
        unsigned failed_bursts;         /* in a row; 0 after a burst with samples */
        uint64_t generation;            /* +1 per new server (x11_conn_server_id()) */
        uint64_t server_id;             /* of the latest connection ... */
        bool has_server_id;             /* ... if the server could be told */
        X11Verdict verdict;
        X11Planner planner;
        uint64_t rng;                   /* splitmix64 state: the probe phases are spread, not secret */
        int64_t coarse_res_ns;
        /* A probe the coarse clock cannot explain proves the server does not stamp with it;
         * until then a coarse-capable machine's boxes include the coarse clock's lag. */
        bool coarse_excluded;
        uint64_t probes;
        int64_t cpu_total_ns;
        int64_t rtt_ns[RTT_RING];
        size_t n_rtt;
};
_Static_assert(offsetof(struct Domain, info) == 0, "domain_info_first() reads it there");

/* The domain x11, as listed and as opened. */
static DomainInfo x11_info(void) {
        return (DomainInfo) {
                .name = "x11",
                .unit = UNIT_MS_X11,
                .resolution_ns = 1000000,
                .monotonic = true,
                .perfetto_id = clock_id_for_name("x11"),
        };
}

static int x11_enumerate(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n) {
        size_t n = 0;

        if ((!ret_infos && n_max > 0) || !ret_n)
                return -EINVAL;

        /* Listed whenever a display is configured, reachable or not, or followed, there or not:
         * an X server may come later. */
        if (x11_config_display(config) || x11_config_follow(config)) {
                if (n < n_max)
                        ret_infos[n++] = x11_info();
                if (n < n_max)
                        ret_infos[n++] = (DomainInfo) {
                                .name = "x11_us",
                                .unit = UNIT_US_X11,
                                .resolution_ns = 1000,
                                .monotonic = true,
                                .perfetto_id = clock_id_for_name("x11_us"),
                                .view_of = "x11",
                        };
        }
        *ret_n = n;
        return 0;
}

static void disconnect(Domain *d) {
        x11_conn_close(&d->conn);
        d->failed_bursts = 0;
        x11_link_lost(&d->link);
}

/* error: -ETIMEDOUT when the server took the connection but never answered it. */
static void connect_failed(Domain *d, int error) {
        backoff_failed(&d->link.backoff, clock_now_ns(CLOCK_MONOTONIC));
        snprintf(d->link.reason, sizeof(d->link.reason), error == -ETIMEDOUT ? "the X server on %s does not answer" :
                 "cannot connect to the X server on %s", d->link.display.name ?: "?");
        /* The session may have moved on to another display: ask the daemon to look. */
        x11_display_want(d->link.follow);
}

/* Following the session: a new display (or none) replaces the old one, whose connection and
 * attempt are dropped; the new one is tried at once. */
static void follow_display(Domain *d) {
        if (!x11_link_follow(&d->link))
                return;
        x11_conn_close(&d->conn);
        d->connecting = x11_connect_abandon(d->connecting);
        d->failed_bursts = 0;
}

/* What we name a server that has no name yet: random, so that a restarted server (on the same
 * display, within the same ms) never gets its predecessor's. */
static uint64_t server_token(Domain *d) {
        uint64_t token;

        if (getrandom(&token, sizeof(token), GRND_NONBLOCK) == (ssize_t) sizeof(token))
                return token;
        return splitmix64_next(&d->rng);
}

/* Connecting never blocks beyond deadline_ns: an attempt runs in a thread (xcb-connect.h). The
 * call that starts one waits for it until deadline_ns (a live server answers in a ms); later
 * calls only look, so a server that never answers costs one wait, then -ENOTCONN at once until
 * the attempt times out (X11_CONNECT_TIMEOUT_NS) or a new display replaces it. -ENOTCONN until
 * connected; on failure the next attempt waits longer. */
static int try_connect(Domain *d, int64_t deadline_ns) {
        xcb_connection_t *xcb;
        int64_t wait_until_ns = 0;
        uint64_t server_id = 0;
        bool has_server_id = true;
        int screen, r;

        follow_display(d);
        if (!d->connecting) {
                if (!backoff_due(&d->link.backoff, clock_now_ns(CLOCK_MONOTONIC)))
                        return -ENOTCONN;
                if (!d->link.display.name) {
                        /* Each attempt without a display asks the daemon to look for one. */
                        backoff_failed(&d->link.backoff, clock_now_ns(CLOCK_MONOTONIC));
                        x11_display_want(d->link.follow);
                        return -ENOTCONN;
                }
                r = x11_connect_start(d->link.display.name, &d->connecting);
                if (r < 0) {
                        connect_failed(d, r);
                        return -ENOTCONN;
                }
                wait_until_ns = deadline_ns;
        }
        r = x11_connect_finish(d->connecting, wait_until_ns, &xcb, &screen);
        if (r == -EINPROGRESS) {
                snprintf(d->link.reason, sizeof(d->link.reason), "the X server on %s does not answer",
                         d->link.display.name);
                /* The session may have moved on while this one keeps us waiting: the daemon
                 * looks (at most every SESSION_ENV_READ_SPACING_USEC), and a new display
                 * replaces this attempt at the next burst. */
                x11_display_want(d->link.follow);
                return -ENOTCONN;
        }
        d->connecting = NULL;
        if (r >= 0)
                r = x11_conn_setup(&d->conn, xcb, screen, deadline_ns);
        if (r >= 0) {
                r = x11_conn_server_id(&d->conn, server_token(d), deadline_ns, &server_id);
                if (r == -EIO) {
                        /* Cannot be told: every connection may be to another server. */
                        has_server_id = false;
                        r = 0;
                } else if (r < 0)
                        x11_conn_close(&d->conn);
        }
        if (r < 0) {
                connect_failed(d, r);
                return -ENOTCONN;
        }

        backoff_succeeded(&d->link.backoff);
        d->failed_bursts = 0;
        d->link.reason[0] = '\0';
        x11_planner_init(&d->planner);
        d->n_rtt = 0;
        /* The same server after a reconnection (a grab or a stop outlasted a few bursts): the
         * same clock. A new server: a new clock, judged afresh. */
        if (has_server_id && d->has_server_id && server_id == d->server_id)
                return 0;
        d->server_id = server_id;
        d->has_server_id = has_server_id;
        d->generation++;
        d->coarse_excluded = false;
        x11_verdict_reset(&d->verdict);
        return 0;
}

static int x11_open(const char *name, const void *config, Domain **ret) {
        const X11Config *c = config;
        struct timespec res;
        Domain *d;
        int r;

        if (!name || !ret)
                return -EINVAL;
        if (strcmp(name, "x11") != 0)
                return -ENOENT;         /* x11_us is a view: never opened */

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        r = x11_link_init(&d->link, c);
        if (r < 0) {
                free(d);
                return r;
        }
        d->info = x11_info();
        d->force_tracked = c && c->force_tracked;
        d->coarse_res_ns = clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 ?
                (int64_t) res.tv_sec * 1000000000 + res.tv_nsec : 0;
        d->rng = (uint64_t) clock_now_ns(CLOCK_MONOTONIC_RAW) ^ ((uint64_t) getpid() << 32) ^ (uintptr_t) d;
        x11_verdict_init(&d->verdict, d->coarse_res_ns);
        x11_planner_init(&d->planner);

        /* Not reachable now is not a failure: the domain starts unavailable. */
        (void) try_connect(d, clock_now_ns(CLOCK_MONOTONIC) + CONNECT_BUDGET_NS);
        *ret = d;
        return 0;
}

/* Sleeps until the planned start (at most about a ms), learning how late wake-ups come; a
 * wake-up so late that the probe would miss its edge plans once more. */
static void wait_for_phase(Domain *d) {
        for (int attempt = 0; attempt < 2; attempt++) {
                int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC), wake_ns, target_ns;
                struct timespec ts;

                target_ns = x11_planner_next(&d->planner, now_ns, splitmix64_next(&d->rng), &wake_ns);
                if (wake_ns <= now_ns)
                        return;
                ts = (struct timespec) { .tv_sec = wake_ns / 1000000000, .tv_nsec = wake_ns % 1000000000 };
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
                if (x11_planner_woke(&d->planner, wake_ns, target_ns, clock_now_ns(CLOCK_MONOTONIC)))
                        return;
        }
}

/* Accounts one probe and turns it into the estimator's box. */
static void take_probe(Domain *d, const X11Probe *p, int64_t cpu_ns, Sample *ret) {
        unsigned consistent = x11_probe_consistency(p, d->coarse_res_ns);
        bool coarse_possible = d->coarse_res_ns > 0 && d->coarse_res_ns <= X11_MS_NS;
        int64_t lag_ns;

        if (coarse_possible && !(consistent & X11_CONSISTENT_COARSE))
                d->coarse_excluded = true;
        /* posix.c's measured worst lag of a coarse clock: two ticks. */
        lag_ns = coarse_possible && !d->coarse_excluded ? 2 * d->coarse_res_ns : 0;

        x11_verdict_add(&d->verdict, p);
        x11_planner_add(&d->planner, p);
        d->probes++;
        d->cpu_total_ns += cpu_ns;
        d->rtt_ns[d->n_rtt++ % RTT_RING] = p->raw1_ns - p->raw0_ns;
        (void) x11_probe_sample(p, lag_ns, ret);
}

static int x11_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        int64_t deadline_ns;
        size_t n = 0;
        int r = 0;

        if (!d || (!samples && n_max > 0) || !ret_n)
                return -EINVAL;

        deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + BURST_BUDGET_NS;
        /* The session's display may have changed since the last burst, connected or not. */
        follow_display(d);
        if (!x11_conn_is_open(&d->conn)) {
                r = try_connect(d, deadline_ns);
                if (r < 0)
                        return r;
        }

        r = x11_conn_drain(&d->conn);
        if (r < 0) {
                disconnect(d);
                return r;
        }
        /* The last burst's final probe is still unanswered: the server is stuck or far away.
         * Waiting again would only hold the caller once more. */
        if (d->conn.pending)
                r = -ETIMEDOUT;

        while (r >= 0 && n < n_max) {
                X11Probe p;
                int64_t cpu0_ns;

                wait_for_phase(d);
                /* A probe sent past the deadline could only time out and stay pending. */
                if (clock_now_ns(CLOCK_MONOTONIC) >= deadline_ns) {
                        r = -ETIMEDOUT;
                        break;
                }
                cpu0_ns = clock_now_ns(CLOCK_THREAD_CPUTIME_ID);
                r = x11_conn_probe(&d->conn, deadline_ns, &p);
                if (r == -ENOTCONN) {
                        disconnect(d);
                        return r;
                }
                if (r == -EAGAIN) {
                        /* Refused (our window was destroyed): the next probe has a new one. */
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                take_probe(d, &p, clock_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0_ns, &samples[n++]);
        }
        if (n == 0) {
                /* Silent or refusing for several bursts: maybe a fresh connection fares better. */
                if (++d->failed_bursts >= FAILED_BURSTS_MAX) {
                        disconnect(d);
                        return -ENOTCONN;
                }
                snprintf(d->link.reason, sizeof(d->link.reason), "the X server on %s does not answer",
                         d->link.display.name);
                return r < 0 ? r : -ENODATA;
        }
        d->failed_bursts = 0;
        d->link.reason[0] = '\0';
        *ret_n = n;
        return 0;
}

static int x11_watch_fd(Domain *d) {
        return d ? x11_conn_fd(&d->conn) : -EINVAL;
}

static int x11_dispatch(Domain *d) {
        int r;

        if (!d)
                return -EINVAL;
        r = x11_conn_drain(&d->conn);
        if (r < 0 && x11_conn_is_open(&d->conn))
                disconnect(d);
        return r;
}

static int64_t rtt_stat_ns(const Domain *d, bool median) {
        int64_t v[RTT_RING];
        size_t n = d->n_rtt < RTT_RING ? d->n_rtt : RTT_RING;

        for (size_t i = 0; i < n; i++) {
                int64_t x = d->rtt_ns[i];
                size_t j;

                for (j = i; j > 0 && v[j - 1] > x; j--)
                        v[j] = v[j - 1];
                v[j] = x;
        }
        return n == 0 ? 0 : median ? v[n / 2] : v[0];
}

static int x11_status(Domain *d, DomainStatus *ret) {
        X11Identity identity;
        DomainStatus s = {};
        /* Most wanted first: the bus may show only the first few. */

        if (!d || !ret)
                return -EINVAL;

        /* Only while the identity is being checked: connected, the last burst answered, no
         * probe outstanding. Else nothing may convert through it. */
        identity = x11_conn_is_open(&d->conn) && !d->conn.pending && d->failed_bursts == 0 && !d->force_tracked ?
                x11_verdict_get(&d->verdict) : X11_IDENTITY_NONE;
        s.generation = d->generation;
        s.verdict = identity == X11_IDENTITY_NONE ? "tracked" : "identity";
        s.same_as = identity == X11_IDENTITY_MONOTONIC ? "monotonic" :
                    identity == X11_IDENTITY_COARSE ? "monotonic_coarse" : NULL;
        s.same_as_uncertainty_ns = x11_verdict_residual_ns(&d->verdict, identity);

        s.extras[s.n_extras++] = DOMAIN_EXTRA_X("rtt_min_ns", rtt_stat_ns(d, false));
        s.extras[s.n_extras++] = DOMAIN_EXTRA_X("probe_cpu_ns", d->probes > 0 ? d->cpu_total_ns / (int64_t) d->probes : 0);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_T("probes", d->probes);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_S("x11_display", d->link.display.name ?: "");
        s.extras[s.n_extras++] = DOMAIN_EXTRA_X("rtt_p50_ns", rtt_stat_ns(d, true));
        s.extras[s.n_extras++] = DOMAIN_EXTRA_B("connected", x11_conn_is_open(&d->conn));
        /* Which server the calibration is of (a client on another display can tell): only while
         * connected to one that could be told. */
        if (x11_conn_is_open(&d->conn) && d->has_server_id)
                s.extras[s.n_extras++] = DOMAIN_EXTRA_T("x11_server_id", d->server_id);
        s.unavailable_reason = x11_link_reason(&d->link);
        *ret = s;
        return 0;
}

static Domain *x11_close(Domain *d) {
        if (!d)
                return NULL;
        x11_conn_close(&d->conn);
        /* A thread still waiting on a dead server is left to end (and clean up) on its own. */
        d->connecting = x11_connect_abandon(d->connecting);
        x11_link_done(&d->link);
        free(d);
        return NULL;
}

DOMAIN_OPS_DEFINE(x11, .watch_fd = x11_watch_fd, .dispatch = x11_dispatch, .status = x11_status);
