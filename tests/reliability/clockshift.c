/* SPDX-License-Identifier: MIT */

/* clockshift: an LD_PRELOAD shim that moves the POSIX clocks of the process it is loaded into,
 * on command, so that the tests can make timeconvd live through a suspend, a clock set or an NTP
 * slew without touching the machine's clocks.
 *
 * It interposes the public clock_gettime() (glibc reaches the vDSO from inside it, so this is
 * the one door every caller outside libc goes through), gettimeofday(), time() and
 * timespec_get(); and adjtimex(), whose read-only form reports monotonic's rate in its
 * frequency, as the kernel would of an NTP daemon's slew. Each clock id has an offset and a rate: value' = value + offset_ns +
 * (value - anchor_ns) * rate_ppb / 1e9. The coarse and alarm variants follow their clock.
 *
 * With TIMECONV_SHIM_SOCKET set, a thread listens there (SOCK_SEQPACKET, one text command per
 * packet, one reply per command; see shim-control.h). It also remembers every timerfd armed
 * with TFD_TIMER_CANCEL_ON_SET: the kernel cannot be told that a clock only this process sees
 * was set, so on "wake" the shim makes those timers expire at once, which wakes their owner the
 * same way the kernel's cancellation would. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SHIFT_CLOCKS 16                 /* clock ids 0 .. 15: every POSIX clock Linux has */
#define WAKE_FDS_MAX 8
#define COMMAND_MAX 512

typedef struct Shift {
        int64_t offset_ns;
        int64_t rate_ppb;
        int64_t anchor_ns;              /* the clock's own reading when rate_ppb took effect */
} Shift;

/* One writer (the control thread), any number of readers: a sequence counter, odd while the
 * writer is at work. */
static uint64_t shift_seq;
static Shift shifts[SHIFT_CLOCKS];

static int wake_fds[WAKE_FDS_MAX];
static unsigned n_wake_fds;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_timerfd_settime)(int, int, const struct itimerspec *, struct itimerspec *);
static int (*real_adjtimex)(struct timex *);

static void resolve(void) {
        if (!real_clock_gettime)
                real_clock_gettime = (int (*)(clockid_t, struct timespec *)) dlsym(RTLD_NEXT, "clock_gettime");
        if (!real_timerfd_settime)
                real_timerfd_settime = (int (*)(int, int, const struct itimerspec *, struct itimerspec *))
                        dlsym(RTLD_NEXT, "timerfd_settime");
        if (!real_adjtimex)
                real_adjtimex = (int (*)(struct timex *)) dlsym(RTLD_NEXT, "adjtimex");
}

/* The shift of clock id, consistent with itself. */
static Shift shift_get(clockid_t id) {
        Shift s;
        uint64_t seq;

        do {
                seq = __atomic_load_n(&shift_seq, __ATOMIC_ACQUIRE);
                s.offset_ns = __atomic_load_n(&shifts[id].offset_ns, __ATOMIC_RELAXED);
                s.rate_ppb = __atomic_load_n(&shifts[id].rate_ppb, __ATOMIC_RELAXED);
                s.anchor_ns = __atomic_load_n(&shifts[id].anchor_ns, __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
        } while ((seq & 1) || seq != __atomic_load_n(&shift_seq, __ATOMIC_RELAXED));
        return s;
}

static void shift_put(clockid_t id, const Shift *s) {
        __atomic_store_n(&shifts[id].offset_ns, s->offset_ns, __ATOMIC_RELAXED);
        __atomic_store_n(&shifts[id].rate_ppb, s->rate_ppb, __ATOMIC_RELAXED);
        __atomic_store_n(&shifts[id].anchor_ns, s->anchor_ns, __ATOMIC_RELAXED);
}

/* The same formula as shim-control.c's shim_shifted_ns(): the tests compute the truth with it. */
static int64_t shifted_ns(const Shift *s, int64_t value_ns) {
        return value_ns + s->offset_ns + (int64_t) ((__int128) (value_ns - s->anchor_ns) * s->rate_ppb / 1000000000);
}

static int64_t ts_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * 1000000000 + ts->tv_nsec;
}

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec *ts) {
        Shift s;
        int64_t ns;
        int r;

        resolve();
        r = real_clock_gettime(id, ts);
        if (r < 0 || id < 0 || id >= SHIFT_CLOCKS)
                return r;
        s = shift_get(id);
        if (s.offset_ns == 0 && s.rate_ppb == 0)
                return r;
        ns = shifted_ns(&s, ts_ns(ts));
        ts->tv_sec = ns / 1000000000;
        ts->tv_nsec = ns % 1000000000;
        if (ts->tv_nsec < 0) {
                ts->tv_nsec += 1000000000;
                ts->tv_sec--;
        }
        return r;
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
        struct timespec ts;

        if (tz)
                memset(tz, 0, sizeof(struct timezone));
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return -1;
        *tv = (struct timeval) { .tv_sec = ts.tv_sec, .tv_usec = ts.tv_nsec / 1000 };
        return 0;
}

__attribute__((visibility("default"))) time_t time(time_t *ret) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return (time_t) -1;
        if (ret)
                *ret = ts.tv_sec;
        return ts.tv_sec;
}

__attribute__((visibility("default"))) int timespec_get(struct timespec *ts, int base) {
        if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, ts) < 0)
                return 0;
        return base;
}

/* A read of the discipline: the kernel's frequency (ppm, 16 fractional bits) plus the slew the
 * shim gives monotonic, which is what an NTP daemon's slew looks like from here. */
__attribute__((visibility("default"))) int adjtimex(struct timex *tx) {
        Shift s;
        int r;

        resolve();
        r = real_adjtimex(tx);
        if (r < 0 || tx->modes != 0)
                return r;
        s = shift_get(CLOCK_MONOTONIC);
        tx->freq += (long) (s.rate_ppb * 65536 / 1000);
        return r;
}

__attribute__((visibility("default"))) int timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                                                           struct itimerspec *old_value) {
        resolve();
        if (flags & TFD_TIMER_CANCEL_ON_SET) {
                bool known = false;

                pthread_mutex_lock(&wake_lock);
                for (unsigned i = 0; i < n_wake_fds; i++)
                        known |= wake_fds[i] == fd;
                if (!known && n_wake_fds < WAKE_FDS_MAX)
                        wake_fds[n_wake_fds++] = fd;
                pthread_mutex_unlock(&wake_lock);
        }
        return real_timerfd_settime(fd, flags, new_value, old_value);
}

/* What the kernel does after a clock was set: every cancel-on-set timer fires. Ours expire
 * instead (an absolute time long past): their owner wakes up and re-arms them just the same. */
static unsigned wake_all(void) {
        const struct itimerspec past = { .it_value = { .tv_sec = 0, .tv_nsec = 1 } };
        unsigned n = 0;

        pthread_mutex_lock(&wake_lock);
        for (unsigned i = 0; i < n_wake_fds; i++)
                if (real_timerfd_settime(wake_fds[i], TFD_TIMER_ABSTIME, &past, NULL) >= 0)
                        n++;
        pthread_mutex_unlock(&wake_lock);
        return n;
}

/* A clock name and the ids that move with it. */
static int clock_group(const char *name, clockid_t ret_ids[3], size_t *ret_n) {
        static const struct {
                const char *name;
                clockid_t ids[3];
                size_t n;
        } groups[] = {
                { "realtime", { CLOCK_REALTIME, CLOCK_REALTIME_COARSE, CLOCK_REALTIME_ALARM }, 3 },
                { "monotonic", { CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE }, 2 },
                { "monotonic_raw", { CLOCK_MONOTONIC_RAW }, 1 },
                { "boottime", { CLOCK_BOOTTIME, CLOCK_BOOTTIME_ALARM }, 2 },
                { "tai", { CLOCK_TAI }, 1 },
        };

        for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
                if (strcmp(groups[i].name, name) == 0) {
                        memcpy(ret_ids, groups[i].ids, sizeof(groups[i].ids));
                        *ret_n = groups[i].n;
                        return 0;
                }
        return -ENOENT;
}

static int64_t real_ns(clockid_t id) {
        struct timespec ts;

        real_clock_gettime(id, &ts);
        return ts_ns(&ts);
}

/* "step DELTA_NS CLOCKS [wake]" adds DELTA_NS to each clock's offset; "rate PPB CLOCKS [wake]"
 * gives them a new rate from now on (what they gained at the old one stays in the offset);
 * "wake" only wakes. CLOCKS is a comma-separated list of names. The reply is
 * "ok RAW_NS WAKES" and, per clock of a step or rate, " NAME:OFFSET_NS:RATE_PPB:ANCHOR_NS";
 * RAW_NS is CLOCK_MONOTONIC_RAW once the change is in force. */
static void handle(const char *command, char *reply, size_t size) {
        char verb[16] = "", list[256] = "", extra[16] = "", changed[COMMAND_MAX] = "", *save = NULL;
        long long amount = 0;
        size_t len = 0;
        int n_fields;
        bool wake;

        n_fields = sscanf(command, "%15s %lld %255s %15s", verb, &amount, list, extra);
        wake = strcmp(verb, "wake") == 0 || (n_fields == 4 && strcmp(extra, "wake") == 0);
        if (strcmp(verb, "wake") != 0) {
                if (n_fields < 3 || (strcmp(verb, "step") != 0 && strcmp(verb, "rate") != 0) ||
                    (n_fields == 4 && !wake)) {
                        snprintf(reply, size, "error bad command");
                        return;
                }
                /* Every name first, so that a bad list changes nothing. */
                for (char *name = strtok_r(strdupa(list), ",", &save); name; name = strtok_r(NULL, ",", &save)) {
                        clockid_t ids[3];
                        size_t n_ids;

                        if (clock_group(name, ids, &n_ids) < 0) {
                                snprintf(reply, size, "error unknown clock %s", name);
                                return;
                        }
                }
                __atomic_store_n(&shift_seq, shift_seq + 1, __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_RELEASE);
                for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
                        clockid_t ids[3];
                        size_t n_ids = 0;
                        int k;

                        (void) clock_group(name, ids, &n_ids);
                        for (size_t i = 0; i < n_ids; i++) {
                                Shift s = shifts[ids[i]];

                                if (strcmp(verb, "step") == 0)
                                        s.offset_ns += amount;
                                else {
                                        int64_t now_ns = real_ns(ids[i]);

                                        s.offset_ns = shifted_ns(&s, now_ns) - now_ns;
                                        s.anchor_ns = now_ns;
                                        s.rate_ppb = amount;
                                }
                                shift_put(ids[i], &s);
                        }
                        /* The first id of a group stands for it. */
                        k = snprintf(changed + len, sizeof(changed) - len, " %s:%" PRIi64 ":%" PRIi64 ":%" PRIi64,
                                     name, shifts[ids[0]].offset_ns, shifts[ids[0]].rate_ppb,
                                     shifts[ids[0]].anchor_ns);
                        if (k > 0 && (size_t) k < sizeof(changed) - len)
                                len += (size_t) k;
                }
                __atomic_store_n(&shift_seq, shift_seq + 1, __ATOMIC_RELEASE);
        }
        snprintf(reply, size, "ok %" PRIi64 " %u%s", real_ns(CLOCK_MONOTONIC_RAW), wake ? wake_all() : 0, changed);
}

static void *control_thread(void *userdata) {
        int listen_fd = (int) (intptr_t) userdata;

        for (;;) {
                int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return NULL;
                }
                for (;;) {
                        char command[COMMAND_MAX], reply[COMMAND_MAX];
                        ssize_t n = recv(fd, command, sizeof(command) - 1, 0);

                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0)
                                break;
                        command[n] = 0;
                        handle(command, reply, sizeof(reply));
                        if (send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
                                break;
                }
                close(fd);
        }
}

__attribute__((constructor)) static void clockshift_init(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = getenv("TIMECONV_SHIM_SOCKET");
        sigset_t all, saved;
        pthread_t thread;
        int fd;

        resolve();
        if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
                return;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 4) < 0) {
                close(fd);
                return;
        }
        /* The thread takes no signal: SIGTERM and friends stay the host program's business. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &saved);
        if (pthread_create(&thread, NULL, control_thread, (void *) (intptr_t) fd) == 0)
                pthread_detach(thread);
        else
                close(fd);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
}
