/* SPDX-License-Identifier: MIT */

/* The vblank counter (domain msc) of the screen's CRTC. The source keeps two PresentNotifyMSC
 * requests for the next frames outstanding; their PresentCompleteNotify events come in through
 * the watched fd (dispatch) and become samples (present-vblank.c, present-box.c) that the next
 * burst hands over, so a burst waits for the server only when it has nothing yet (at most one
 * frame). */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock-id.h"
#include "present-internal.h"
#include "present.h"

/* A burst, connecting included, holds the caller at most this and a set-up, whatever the server
 * does; open() and enumerate() wait CONNECT_WAIT_NS for the server (a live one answers in a ms). */
#define BURST_BUDGET_NS INT64_C(100000000)
#define CONNECT_WAIT_NS INT64_C(100000000)
/* Setting up takes some six round trips (Present, RandR, the CRTC and its output). */
#define SETUP_BUDGET_NS INT64_C(250000000)
/* Present's fake CRTC: the rate to list a domain with before a server answers. */
#define FAKE_INTERVAL_NS (PRESENT_FAKE_INTERVAL_US * 1000.0)

/* lag_ns: 0 for a display's counter; for Present's fake, the window after its grid in which it
 * may report a vblank (present_fake_lag_ns()). */
static DomainInfo present_info_for(const char *name, double interval_ns, int64_t lag_ns) {
        DomainInfo info = {
                .name = PRESENT_DOMAIN,
                /* msc = n names the vblank at which it became n: converting it carries the
                 * model's bound only, a time converts to the last vblank at or before it. */
                .unit = { .period_ns = interval_ns, .events = true },
                .resolution_ns = (int64_t) ceil(interval_ns),
                .monotonic = true,
                .unit_name = "frame",
                .lag_ns = lag_ns,
        };

        snprintf(info.name, sizeof(info.name), "%s", name);
        info.perfetto_id = clock_id_for_name(info.name);
        return info;
}

/* The lag of what conn found: none for a display, the fake's window for a timer or for a server
 * not seen yet (most X servers a session meets without a GPU of their own are fakes). */
static int64_t lag_for(const PresentConn *conn, bool connected) {
        if (connected && !conn->emulated)
                return 0;
        return present_fake_lag_ns(connected && strstr(conn->emulated_reason, "Xwayland"));
}

/* A lit CRTC's domain: "msc-" and its output's name as a domain name may spell it. */
static DomainInfo crtc_info(const PresentConn *conn, const PresentCrtc *crtc) {
        char name[DOMAIN_NAME_MAX], key[PRESENT_OUTPUT_NAME_MAX];

        present_output_key(crtc->output, key, sizeof(key));
        snprintf(name, sizeof(name), "%s%s", PRESENT_DOMAIN_PREFIX, key);
        return present_info_for(name, conn->emulated || crtc->mode_interval_ns <= 0 ? FAKE_INTERVAL_NS :
                                                                                     crtc->mode_interval_ns,
                                conn->emulated ? lag_for(conn, true) : 0);
}

static int present_enumerate(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n) {
        const char *display = x11_config_display(config);
        X11Display *follow = x11_config_follow(config);
        char followed[X11_DISPLAY_REASON_MAX];
        PresentConn conn = {};
        size_t n = 0;
        int r;

        if ((!ret_infos && n_max > 0) || !ret_n)
                return -EINVAL;

        /* The session's display: the one it has now gives the rate; none yet, the fake's. */
        if (follow) {
                if (n_max == 0) {
                        *ret_n = 0;
                        return 0;
                }
                if (x11_display_get(follow, followed, sizeof(followed), NULL) < 0) {
                        ret_infos[0] = present_info_for(PRESENT_DOMAIN, FAKE_INTERVAL_NS, lag_for(NULL, false));
                        *ret_n = 1;
                        return 0;
                }
                display = followed;
        }

        /* A server that answers in time and has Present and a CRTC gives the domain its rate. One
         * that is not there yet, or does not answer now, may come later, as for x11: the domain
         * is listed and opens unavailable. Only a server that says it has no Present, RandR or
         * CRTC rules it out: unlike X time, a vblank counter needs the display hardware. */
        if (!display || n >= n_max) {
                *ret_n = 0;
                return 0;
        }
        r = present_conn_connect(&conn, display, clock_now_ns(CLOCK_MONOTONIC) + CONNECT_WAIT_NS, SETUP_BUDGET_NS);
        if (r >= 0) {
                /* msc (the CRTC at the origin), then one domain per lit CRTC, named by its output. */
                ret_infos[n++] = present_info_for(PRESENT_DOMAIN, present_conn_interval_ns(&conn),
                                                  lag_for(&conn, true));
                for (size_t i = 0; i < conn.n_crtcs && n < n_max; i++)
                        ret_infos[n++] = crtc_info(&conn, &conn.crtcs[i]);
        } else if (r != -EOPNOTSUPP && r != -ENODEV)
                ret_infos[n++] = present_info_for(PRESENT_DOMAIN, FAKE_INTERVAL_NS, lag_for(NULL, false));
        present_conn_close(&conn);
        *ret_n = n;
        return 0;
}

static void disconnect(Domain *d) {
        present_conn_close(&d->conn);
        x11_link_lost(&d->link);
}

/* Following the session: a new display (or none) replaces the old one, whose connection is
 * dropped; the new one is tried at once. */
static void follow_display(Domain *d) {
        if (x11_link_follow(&d->link))
                present_conn_close(&d->conn);
}

/* What the server's CRTCs list now; list_epoch moves when a name comes or goes. Written in
 * place, one entry at a time: a burst's thread has a small stack to spare. */
static void relist(Domain *d) {
        size_t n = d->conn.n_crtcs < PRESENT_CRTCS_MAX ? d->conn.n_crtcs : PRESENT_CRTCS_MAX;
        bool same = n == d->n_listed;

        for (size_t i = 0; i < n; i++) {
                DomainInfo info = crtc_info(&d->conn, &d->conn.crtcs[i]);

                same = same && strcmp(info.name, d->listed[i].name) == 0;
                d->listed[i] = info;
        }
        /* Also the first time: a domain opened before its server answered listed none. */
        if (!same)
                d->list_epoch++;
        d->n_listed = n;
}

/* The box of an event off the fake's grid (present-box.h): a display's UST is within half a
 * frame of its vblank; a timer's report (Xwayland's counter is floored) up to a whole one after. */
static void set_jitter(Domain *d) {
        (void) present_jitter_for_interval(d->info.unit.period_ns, &d->jitter);
        if (d->conn.emulated)
                d->jitter.late_ns = 2 * d->jitter.late_ns;
}

/* A new server: a new counter, whose rate the unit must be able to model. */
static int on_connected(Domain *d) {
        double interval_ns = present_conn_interval_ns(&d->conn);
        int r;

        d->generation++;
        backoff_succeeded(&d->link.backoff);
        d->n_pending = 0;
        d->n_ring = 0;
        d->known = d->have_samples = false;
        d->grid_fits = d->grid_misfits = 0;
        relist(d);
        set_jitter(d);
        /* The period is the CRTC's as it is now: a new mode, another refresh, another server give
         * a new unit with the new generation, and the daemon re-makes the node with it. */
        d->mismatch = false;
        d->link.reason[0] = '\0';
        if (interval_ns != d->info.unit.period_ns || lag_for(&d->conn, true) != d->info.lag_ns) {
                d->info.unit.period_ns = interval_ns;
                d->info.resolution_ns = (int64_t) ceil(interval_ns);
                d->info.lag_ns = lag_for(&d->conn, true);
        }
        set_jitter(d);

        /* Where the counter is now, to aim the first targets. */
        r = present_domain_send_notify(d, 0);
        if (r < 0) {
                disconnect(d);
                return r;
        }
        return 0;
}

/* One attempt at a time, kept across calls (present-conn.h): a server that never answers costs
 * one wait until wait_until_ns, then -ENOTCONN at once. 0 when d->conn is set up; a failed
 * attempt makes the next one wait longer (x11_link_init()'s backoff). */
static int connect_step(Domain *d, int64_t wait_until_ns) {
        X11Link *l = &d->link;
        int r;

        follow_display(d);
        if (!present_conn_is_connecting(&d->conn) && !backoff_due(&l->backoff, clock_now_ns(CLOCK_MONOTONIC)))
                return -ENOTCONN;
        if (!l->display.name) {
                /* x11 asks the daemon to look for a display; msc only waits for it. */
                backoff_failed(&l->backoff, clock_now_ns(CLOCK_MONOTONIC));
                return -ENOTCONN;
        }
        r = present_conn_connect(&d->conn, l->display.name, wait_until_ns, SETUP_BUDGET_NS);
        if (r == -EINPROGRESS || r == -ETIMEDOUT)
                snprintf(l->reason, sizeof(l->reason), "the X server on %s does not answer", l->display.name);
        else if (r == -ENODEV && d->conn.output[0])
                snprintf(l->reason, sizeof(l->reason), "output %s of the X server on %s shows nothing (RandR)",
                         d->conn.output, l->display.name);
        else if (r == -EOPNOTSUPP || r == -ENODEV)
                snprintf(l->reason, sizeof(l->reason), "the X server on %s has %s", l->display.name,
                         r == -ENODEV ? "no CRTC showing anything" : "no Present or RandR extension");
        else if (r < 0)
                snprintf(l->reason, sizeof(l->reason), "cannot connect to the X server on %s", l->display.name);
        if (r < 0 && r != -EINPROGRESS)
                backoff_failed(&l->backoff, clock_now_ns(CLOCK_MONOTONIC));
        return r < 0 ? -ENOTCONN : 0;
}

static int present_open(const char *name, const void *config, Domain **ret) {
        double interval_ns;
        Domain *d;
        int r;

        if (!name || !ret)
                return -EINVAL;
        /* "msc", or "msc-" and an output's key that fits. */
        if (strcmp(name, PRESENT_DOMAIN) != 0 &&
            (strncmp(name, PRESENT_DOMAIN_PREFIX, strlen(PRESENT_DOMAIN_PREFIX)) != 0 ||
             !name[strlen(PRESENT_DOMAIN_PREFIX)] ||
             strlen(name) - strlen(PRESENT_DOMAIN_PREFIX) >= PRESENT_OUTPUT_NAME_MAX))
                return -ENOENT;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        r = x11_link_init(&d->link, config);
        if (r < 0) {
                free(d);
                return r;
        }
        if (strcmp(name, PRESENT_DOMAIN) != 0)
                snprintf(d->conn.output, sizeof(d->conn.output), "%s", name + strlen(PRESENT_DOMAIN_PREFIX));

        /* The unit is fixed for the domain's life: its period is the CRTC's as found now. Not
         * reachable (or answering) now is not a failure: the domain starts unavailable, at the
         * fake's rate; a later burst finishes an attempt still under way. */
        r = connect_step(d, clock_now_ns(CLOCK_MONOTONIC) + CONNECT_WAIT_NS);
        interval_ns = r >= 0 ? present_conn_interval_ns(&d->conn) : FAKE_INTERVAL_NS;
        d->info = present_info_for(name, interval_ns, lag_for(&d->conn, r >= 0));
        set_jitter(d);
        if (r >= 0)
                (void) on_connected(d);
        *ret = d;
        return 0;
}

/* After a RandR notify: the CRTC this domain counts as RandR has it now. Another CRTC, mode,
 * place or output (or none) is another counter: the connection closes, with why, and the next
 * burst counts anew (a new generation, the unit of the new mode). 1 when it closed. */
static int follow_randr(Domain *d, int64_t deadline_ns) {
        const PresentCrtc *crtc;
        PresentCrtc was = {};
        int r;

        crtc = present_conn_find(&d->conn, d->conn.output);
        if (crtc)
                was = *crtc;
        r = present_conn_crtcs(&d->conn, deadline_ns);
        if (r < 0)
                return r;
        relist(d);
        crtc = present_conn_find(&d->conn, d->conn.output);
        if (crtc && crtc->crtc == was.crtc && crtc->mode_interval_ns == was.mode_interval_ns && crtc->x == was.x &&
            crtc->y == was.y && crtc->variable_refresh == was.variable_refresh && strcmp(crtc->output, was.output) == 0)
                return 0;
        present_conn_close(&d->conn);
        if (crtc)
                snprintf(d->link.reason, sizeof(d->link.reason), "the CRTC of %s changed (RandR): counting anew",
                         was.output[0] ? was.output : "the screen");
        else
                snprintf(d->link.reason, sizeof(d->link.reason), "%s shows nothing now (RandR)",
                         was.output[0] ? was.output : "the screen");
        return 1;
}

static int present_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        int64_t deadline_ns;
        size_t n;
        int r;

        if (!d || (!samples && n_max > 0) || !ret_n)
                return -EINVAL;

        deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + BURST_BUDGET_NS;
        /* The session's display may have changed since the last burst, connected or not. */
        follow_display(d);
        /* So may its CRTCs: this burst says so (the domain unavailable, with why), the next
         * counts anew. */
        if (present_conn_is_open(&d->conn)) {
                r = present_domain_drain(d);
                if (r >= 0 && d->conn.randr_changed)
                        r = follow_randr(d, deadline_ns);
                if (r < 0) {
                        disconnect(d);
                        return -ENOTCONN;
                }
                if (r > 0)
                        return -ENOTCONN;
        }
        if (!present_conn_is_open(&d->conn)) {
                r = connect_step(d, deadline_ns);
                if (r >= 0)
                        r = on_connected(d);
                if (r < 0)
                        return r;
        }
        if (d->mismatch)
                return -ERANGE;

        /* Nothing collected yet (the first bursts): wait for the next frame, within the budget. */
        for (;;) {
                r = present_domain_drain(d);
                if (r >= 0)
                        r = present_domain_queue_targets(d);
                if (r == -ENOTCONN) {
                        disconnect(d);
                        return r;
                }
                if (r < 0 || d->n_ring > 0)
                        break;
                r = present_conn_wait(&d->conn, deadline_ns);
                if (r < 0)
                        break;
        }

        n = d->n_ring < n_max ? d->n_ring : n_max;
        if (n == 0)
                return r < 0 ? r : -ENODATA;
        memcpy(samples, d->ring + (d->n_ring - n), n * sizeof(Sample));
        d->n_ring = 0;
        *ret_n = n;
        return 0;
}

static int present_watch_fd(Domain *d) {
        return d ? present_conn_fd(&d->conn) : -EINVAL;
}

static int present_dispatch(Domain *d) {
        int r;

        if (!d)
                return -EINVAL;
        r = present_domain_drain(d);
        if (r < 0 && present_conn_is_open(&d->conn))
                disconnect(d);
        return r;
}

static int present_status(Domain *d, DomainStatus *ret) {
        /* Most wanted first: the bus may show only the first few. */
        DomainStatus s = {};
        uint64_t next_msc = 0;
        int64_t next_ns = 0;

        if (!d || !ret)
                return -EINVAL;

        if (d->have_samples)
                (void) present_next_vblank(d->last.ust_us, d->last.msc, present_domain_interval_ns(d),
                                           clock_now_ns(CLOCK_MONOTONIC), &next_ns, &next_msc);
        s.generation = d->generation;
        s.extras[s.n_extras++] = DOMAIN_EXTRA_S("verdict_reason", present_domain_verdict_reason(d));
        s.extras[s.n_extras++] = DOMAIN_EXTRA_D("refresh_interval_ns", round(present_domain_interval_ns(d)));
        s.extras[s.n_extras++] = DOMAIN_EXTRA_D("mode_refresh_hz", d->conn.mode_interval_ns > 0 ?
                                                round(1e12 / d->conn.mode_interval_ns) / 1e3 : 0.0);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_B("variable_refresh", d->conn.variable_refresh);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_X("next_vblank_ns", next_ns);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_T("next_vblank_msc", next_msc);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_S("crtc", d->conn.crtc_name);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_S("x11_display", d->link.display.name ?: "");
        s.extras[s.n_extras++] = DOMAIN_EXTRA_T("samples", d->samples);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_T("missed", d->missed);
        s.extras[s.n_extras++] = DOMAIN_EXTRA_B("connected", present_conn_is_open(&d->conn));
        s.verdict = present_domain_verdict(d);
        s.list_epoch = d->list_epoch;
        s.listed = d->listed;
        s.n_listed = d->n_listed;
        s.unavailable_reason = x11_link_reason(&d->link);
        *ret = s;
        return 0;
}

static Domain *present_close(Domain *d) {
        if (!d)
                return NULL;
        present_conn_close(&d->conn);
        x11_link_done(&d->link);
        free(d);
        return NULL;
}

DOMAIN_OPS_DEFINE(present, .watch_fd = present_watch_fd, .dispatch = present_dispatch,
                  .status = present_status);
