/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock-id.h"
#include "domain.h"
#include "ntp-state.h"
#include "units.h"

typedef struct PosixClock {
        const char *name;
        clockid_t clock;
        bool monotonic;         /* realtime and tai can be set back */
        bool coarse;            /* lags the true time by up to four ticks, see posix_probe() */
} PosixClock;

static const PosixClock posix_clocks[] = {
        { "realtime",           CLOCK_REALTIME,         false, false },
        { "realtime_coarse",    CLOCK_REALTIME_COARSE,  false, true  },
        { "monotonic",          CLOCK_MONOTONIC,        true,  false },
        { "monotonic_coarse",   CLOCK_MONOTONIC_COARSE, true,  true  },
        { "monotonic_raw",      CLOCK_MONOTONIC_RAW,    true,  false },
        { "boottime",           CLOCK_BOOTTIME,         true,  false },
        { "tai",                CLOCK_TAI,              false, false },
};

#define N_POSIX_CLOCKS (sizeof(posix_clocks) / sizeof(posix_clocks[0]))

struct Domain {
        DomainInfo info;
        clockid_t clock;
        bool steered;                   /* NTP steers its rate: all but monotonic_raw */
        bool ntp_known;                 /* adjtimex() answers here */
        NtpState ntp_epoch;             /* the discipline since the last change */
        NtpState ntp_last;              /* at the last burst */
        int64_t pll_peak_ppb;           /* the largest PLL correction since the last change */
        uint64_t rate_epoch;
        int64_t rate_change_ppb, rate_change_margin_ppb;
};
_Static_assert(offsetof(struct Domain, info) == 0, "domain_info_first() reads it there");

static inline int64_t timespec_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* Fills info when the clock works here: detected, not assumed (old kernels, seccomp, ...). */
static int posix_probe(const PosixClock *c, DomainInfo *ret) {
        struct timespec res, now;
        int64_t res_ns;

        if (clock_getres(c->clock, &res) < 0 || clock_gettime(c->clock, &now) < 0)
                return -errno;
        res_ns = timespec_ns(&res);

        *ret = (DomainInfo) {
                .unit = UNIT_NS,
                .resolution_ns = res_ns > 0 ? res_ns : 1,
                .monotonic = c->monotonic,
                .perfetto_id = clock_id_for_name(c->name),
        };
        /* A coarse clock holds the time of the last whole tick interval the kernel accumulated,
         * and that happens at a tick that may itself be late: idle here, lags reach 1.23 ticks;
         * with 32 busy clients on two CPUs a reading trailed by more than two. Four ticks it is
         * (16 ms at HZ=250): a coarse clock is coarse, and its bound must say so. */
        if (c->coarse)
                ret->lag_ns = 4 * ret->resolution_ns;
        strcpy(ret->name, c->name);
        return 0;
}

static int posix_enumerate(const void *config, DomainInfo *ret_infos, size_t n_max, size_t *ret_n) {
        size_t n = 0;

        if ((!ret_infos && n_max > 0) || !ret_n)
                return -EINVAL;

        for (size_t i = 0; i < N_POSIX_CLOCKS && n < n_max; i++)
                if (posix_probe(&posix_clocks[i], &ret_infos[n]) >= 0)
                        n++;
        *ret_n = n;
        return 0;
}

static int posix_open(const char *name, const void *config, Domain **ret) {
        const PosixClock *c = NULL;
        DomainInfo info;
        Domain *d;
        int r;

        if (!name || !ret)
                return -EINVAL;
        for (size_t i = 0; i < N_POSIX_CLOCKS; i++)
                if (strcmp(posix_clocks[i].name, name) == 0)
                        c = &posix_clocks[i];
        if (!c)
                return -ENOENT;
        r = posix_probe(c, &info);
        if (r < 0)
                return r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->info = info;
        d->clock = c->clock;
        d->steered = c->clock != CLOCK_MONOTONIC_RAW;
        *ret = d;
        return 0;
}

/* One loop per clock: called with a constant clock so that nothing but the three
 * clock_gettime() calls sits between r0 and r1. */
static inline __attribute__((always_inline)) int posix_burst_of(clockid_t clock, Sample *samples,
                                                                size_t n_max, size_t *ret_n) {
        for (size_t i = 0; i < n_max; i++) {
                struct timespec a, x, b;
                int ka, kx, kb;

                ka = clock_gettime(CLOCK_MONOTONIC_RAW, &a);
                kx = clock_gettime(clock, &x);
                kb = clock_gettime(CLOCK_MONOTONIC_RAW, &b);
                if (ka < 0 || kx < 0 || kb < 0)
                        return -errno;

                samples[i] = (Sample) {
                        .r0_ns = timespec_ns(&a),
                        .r1_ns = timespec_ns(&b),
                        .x_lo_ns = timespec_ns(&x),
                        .x_hi_ns = timespec_ns(&x),
                };
        }
        *ret_n = n_max;
        return 0;
}

/* A coarse clock's reading is the time of the last tick, at most its fine clock's time then,
 * and the fine clock read right after it is later still: so the fine time the model follows lies
 * in [coarse, fine after], whatever the kernel's lag was (no assumption at all here; only a
 * conversion to a reading has to assume a lag, see DomainInfo.lag_ns). */
static inline __attribute__((always_inline)) int posix_burst_coarse(clockid_t coarse, clockid_t fine, Sample *samples,
                                                                    size_t n_max, size_t *ret_n) {
        for (size_t i = 0; i < n_max; i++) {
                struct timespec a, x, f, b;

                if (clock_gettime(CLOCK_MONOTONIC_RAW, &a) < 0 || clock_gettime(coarse, &x) < 0 ||
                    clock_gettime(fine, &f) < 0 || clock_gettime(CLOCK_MONOTONIC_RAW, &b) < 0)
                        return -errno;
                samples[i] = (Sample) {
                        .r0_ns = timespec_ns(&a),
                        .r1_ns = timespec_ns(&b),
                        .x_lo_ns = timespec_ns(&x),
                        .x_hi_ns = timespec_ns(&f) > timespec_ns(&x) ? timespec_ns(&f) : timespec_ns(&x),
                };
        }
        *ret_n = n_max;
        return 0;
}

/* The reference against itself: one read is exact. */
static int posix_burst_raw(Sample *samples, size_t n_max, size_t *ret_n) {
        for (size_t i = 0; i < n_max; i++) {
                struct timespec a;
                int64_t a_ns;

                if (clock_gettime(CLOCK_MONOTONIC_RAW, &a) < 0)
                        return -errno;
                a_ns = timespec_ns(&a);
                samples[i] = (Sample) { .r0_ns = a_ns, .r1_ns = a_ns, .x_lo_ns = a_ns, .x_hi_ns = a_ns };
        }
        *ret_n = n_max;
        return 0;
}

static int posix_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        switch (d->clock) {
        case CLOCK_REALTIME:
                return posix_burst_of(CLOCK_REALTIME, samples, n_max, ret_n);
        case CLOCK_REALTIME_COARSE:
                return posix_burst_coarse(CLOCK_REALTIME_COARSE, CLOCK_REALTIME, samples, n_max, ret_n);
        case CLOCK_MONOTONIC:
                return posix_burst_of(CLOCK_MONOTONIC, samples, n_max, ret_n);
        case CLOCK_MONOTONIC_COARSE:
                return posix_burst_coarse(CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC, samples, n_max, ret_n);
        case CLOCK_MONOTONIC_RAW:
                return posix_burst_raw(samples, n_max, ret_n);
        case CLOCK_BOOTTIME:
                return posix_burst_of(CLOCK_BOOTTIME, samples, n_max, ret_n);
        case CLOCK_TAI:
                return posix_burst_of(CLOCK_TAI, samples, n_max, ret_n);
        default:
                return -EINVAL;
        }
}

/* A new reading of the discipline, after a burst that ran wholly under it. */
static void posix_note_ntp(Domain *d, const NtpState *now) {
        if (!d->ntp_known) {
                d->ntp_known = true;
                d->ntp_epoch = d->ntp_last = *now;
                d->pll_peak_ppb = llabs(now->pll_rate_ppb);
                return;
        }
        if (ntp_state_changed(&d->ntp_last, now)) {
                ntp_state_rate_change(&d->ntp_epoch, now, d->pll_peak_ppb, &d->rate_change_ppb,
                                      &d->rate_change_margin_ppb);
                d->rate_epoch++;
                d->ntp_epoch = *now;
                d->pll_peak_ppb = 0;
        }
        if (llabs(now->pll_rate_ppb) > d->pll_peak_ppb)
                d->pll_peak_ppb = llabs(now->pll_rate_ppb);
        d->ntp_last = *now;
}

static int posix_sample_burst(Domain *d, Sample *samples, size_t n_max, size_t *ret_n) {
        NtpState before, after;
        int r;

        if (!d || (!samples && n_max > 0) || !ret_n)
                return -EINVAL;
        if (!d->steered || ntp_state_read(&before) < 0)
                return posix_burst(d, samples, n_max, ret_n);

        /* A burst that straddles a change of rate would mix two lines: take it again, once. */
        for (int attempt = 0; attempt < 2; attempt++) {
                r = posix_burst(d, samples, n_max, ret_n);
                if (r < 0)
                        return r;
                if (ntp_state_read(&after) < 0)
                        return 0;
                if (!ntp_state_changed(&before, &after)) {
                        posix_note_ntp(d, &after);
                        return 0;
                }
                before = after;
        }
        return -EAGAIN;
}

static int posix_status(Domain *d, DomainStatus *ret) {
        if (!d || !ret)
                return -EINVAL;
        *ret = (DomainStatus) {
                .rate_epoch = d->rate_epoch,
                .rate_change_ppb = d->rate_change_ppb,
                .rate_change_margin_ppb = d->rate_change_margin_ppb,
        };
        return 0;
}

static Domain *posix_close(Domain *d) {
        free(d);
        return NULL;
}

DOMAIN_OPS_DEFINE(posix, .watch_fd = domain_no_watch_fd, .status = posix_status);
