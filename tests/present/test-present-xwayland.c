/* SPDX-License-Identifier: MIT */

/* The vblank domains on a GNOME Wayland session's Xwayland: mutter 43 headless with
 * two virtual monitors (800x600 at 60 Hz and at 144 Hz), its Xwayland, timeconvd --display on
 * it. ListDomains has msc, msc-xwayland0 and msc-xwayland1 with RandR's rates (59.86 and
 * 143.8 Hz), each `emulated` because the server is Xwayland (whose Present is one ~60 Hz timer
 * whatever the monitors' rates); over eight bursts of the 144 Hz output's domain no Discontinuity
 * is announced for the timer's jitter, and a later msc always converts later. mutter is ready
 * when it prints its X display (read from its stderr, never by sleeping).
 * usage: test-present-xwayland TIMECONVD */

#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock-client.h"
#include "harness-proc.h"
#include "harness-tap.h"
#include "tap.h"
#include "x11-bus.h"

#define READY_TIMEOUT_NS (INT64_C(60) * 1000000000)
#define WAIT_NS (INT64_C(60) * 1000000000)

typedef struct Mutter {
        pid_t pid;
        int pidfd, log_fd;              /* its stderr and stdout, read end */
        char dir[64];                   /* its HOME and XDG_RUNTIME_DIR */
        char display[16];
        char xauthority[384];
        char log[8192];                 /* what it printed, the tail when more */
        size_t log_len;
} Mutter;

/* Reads what mutter printed so far, without blocking. */
static void mutter_drain(Mutter *m) {
        char buf[1024];
        ssize_t n;

        while ((n = read(m->log_fd, buf, sizeof(buf))) > 0) {
                if (m->log_len + (size_t) n >= sizeof(m->log))
                        m->log_len = 0;
                memcpy(m->log + m->log_len, buf, (size_t) n);
                m->log_len += (size_t) n;
                m->log[m->log_len] = '\0';
        }
}

/* mutter's Xwayland auth file in its runtime directory. */
static int find_xauthority(Mutter *m) {
        DIR *dir = opendir(m->dir);
        struct dirent *e;
        int r = -ENOENT;

        if (!dir)
                return -errno;
        while ((e = readdir(dir)))
                if (strncmp(e->d_name, ".mutter-Xwaylandauth.", strlen(".mutter-Xwaylandauth.")) == 0) {
                        snprintf(m->xauthority, sizeof(m->xauthority), "%s/%s", m->dir, e->d_name);
                        r = 0;
                        break;
                }
        closedir(dir);
        return r;
}

static int mutter_start(const char *bus_address, Mutter *m) {
        const char *argv[] = { "mutter", "--wayland", "--headless", "--virtual-monitor", "800x600",
                               "--virtual-monitor", "800x600@144", NULL };
        const char *unset[] = { "DISPLAY", "WAYLAND_DISPLAY", "SESSION_MANAGER", "XAUTHORITY", NULL };
        char bus[512], home[96], runtime[96];
        const char *env[] = { bus, home, runtime, "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1", NULL };
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + READY_TIMEOUT_NS;
        int pipe_fd[2], r;
        ProcSpawn s;

        *m = (Mutter) { .pidfd = -1, .log_fd = -1 };
        snprintf(m->dir, sizeof(m->dir), "/tmp/timeconv-xwayland-XXXXXX");
        if (!mkdtemp(m->dir))
                return -errno;
        snprintf(bus, sizeof(bus), "DBUS_SESSION_BUS_ADDRESS=%s", bus_address);
        snprintf(home, sizeof(home), "HOME=%s", m->dir);
        snprintf(runtime, sizeof(runtime), "XDG_RUNTIME_DIR=%s", m->dir);
        if (pipe2(pipe_fd, O_CLOEXEC) < 0)
                return -errno;
        s = (ProcSpawn) { .argv = argv, .env_set = env, .env_unset = unset, .stdout_fd = pipe_fd[1],
                          .stderr_fd = pipe_fd[1], .fd3 = -1 };
        r = proc_spawn(&s, &m->pid, &m->pidfd);
        close(pipe_fd[1]);
        m->log_fd = pipe_fd[0];
        if (r < 0)
                return r;
        (void) fcntl(m->log_fd, F_SETFL, O_NONBLOCK);

        /* "Using public X11 display :N, ..." once its X socket is there. */
        for (;;) {
                struct pollfd pfd[2] = { { .fd = m->log_fd, .events = POLLIN }, { .fd = m->pidfd, .events = POLLIN } };
                const char *line;

                mutter_drain(m);
                line = strstr(m->log, "public X11 display :");
                if (line) {
                        snprintf(m->display, sizeof(m->display), ":%d", atoi(line + strlen("public X11 display :")));
                        return find_xauthority(m);
                }
                if (clock_now_ns(CLOCK_MONOTONIC) >= until_ns)
                        return -ETIMEDOUT;
                r = poll(pfd, 2, proc_ms_left(until_ns));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (pfd[1].revents && !pfd[0].revents)
                        return -ECHILD;
        }
}

static void mutter_stop(Mutter *m) {
        if (m->pid > 0) {
                proc_signal(m->pidfd, SIGTERM);
                if (proc_wait(m->pidfd, m->pid, true, 10000, NULL) == -ETIMEDOUT) {
                        proc_signal(m->pidfd, SIGKILL);
                        (void) proc_wait(m->pidfd, m->pid, true, 5000, NULL);
                }
                close(m->pidfd);
        }
        if (m->log_fd >= 0)
                close(m->log_fd);
        if (m->dir[0])
                (void) proc_rm_rf(m->dir);
        m->pid = 0;
}

/* name's ListDomains entry; all zero (listed false) when there is none. */
static X11BusDomain entry(sd_bus *bus, const char *name) {
        X11BusDomain d;

        if (x11_bus_domain(bus, name, &d) < 0)
                d = (X11BusDomain) {};
        return d;
}

/* Waits on the bus (100 ms at most between looks) until name is calibrated with a verdict. */
static bool wait_calibrated(sd_bus *bus, Mutter *m, const char *name, X11BusDomain *ret) {
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + WAIT_NS;

        while (clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                *ret = entry(bus, name);
                if (ret->listed && ret->available && ret->last_calibrated_ns > 0 && ret->verdict[0])
                        return true;
                mutter_drain(m);
                while (sd_bus_process(bus, NULL) > 0)
                        ;
                (void) sd_bus_wait(bus, 100 * 1000);
        }
        return false;
}

static int on_discontinuity(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        unsigned *n = userdata;
        const char *domain;

        if (sd_bus_message_read(msg, "s", &domain) >= 0 && strncmp(domain, "msc", 3) == 0) {
                diag("Discontinuity of %s", domain);
                (*n)++;
        }
        return 0;
}

static void test_domains(sd_bus *bus, Mutter *m) {
        static const struct {
                const char *name;
                double hz;
        } want[] = { { "msc", 59.86 }, { "msc-xwayland0", 59.86 }, { "msc-xwayland1", 143.86 } };
        X11BusDomain e;

        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                bool calibrated = wait_calibrated(bus, m, want[i].name, &e);

                ok(calibrated && fabs(e.mode_refresh_hz - want[i].hz) < 0.5, "%s: listed, calibrated, RandR's %.2f Hz "
                   "(%.3f)", want[i].name, want[i].hz, e.mode_refresh_hz);
                ok(strcmp(e.verdict, "emulated") == 0 && strstr(e.verdict_reason, "Xwayland"),
                   "%s: emulated, because %s", want[i].name, e.verdict_reason);
        }
}

/* Eight bursts of the 144 Hz output's domain: no step for the timer's jitter, answers in order. */
static void test_jitter(sd_bus *bus, Mutter *m) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + WAIT_NS, last_calibrated_ns = 0, prev_msc = -1, prev_ns = 0;
        unsigned n_discontinuities = 0, n_bursts = 0, n_backwards = 0, n_answers = 0;

        ok(sd_bus_match_signal(bus, &slot, NULL, "/org/timeconv/Clock1", "org.timeconv.Clock1", "Discontinuity",
                               on_discontinuity, &n_discontinuities) >= 0, "watching Discontinuity");
        while (n_bursts < 8 && clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                X11BusDomain e;
                int64_t msc_now, v;
                uint64_t unc;

                mutter_drain(m);
                while (sd_bus_process(bus, NULL) > 0)
                        ;
                e = entry(bus, "msc-xwayland1");
                if (!e.available || e.last_calibrated_ns == last_calibrated_ns) {
                        (void) sd_bus_wait(bus, 50 * 1000);
                        continue;
                }
                last_calibrated_ns = e.last_calibrated_ns;
                n_bursts++;
                if (clock_convert(bus, "monotonic", "msc-xwayland1", clock_now_ns(CLOCK_MONOTONIC), NULL, &msc_now,
                                  &unc) < 0)
                        continue;
                for (int64_t msc = msc_now - 2; msc <= msc_now + 3; msc++) {
                        if (clock_convert(bus, "msc-xwayland1", "monotonic", msc, NULL, &v, &unc) < 0)
                                continue;
                        n_answers++;
                        if (prev_msc >= 0 && ((msc > prev_msc && v <= prev_ns) || (msc < prev_msc && v >= prev_ns)))
                                n_backwards++;
                        prev_msc = msc;
                        prev_ns = v;
                }
        }
        while (sd_bus_process(bus, NULL) > 0)
                ;
        ok(n_bursts == 8, "8 bursts of msc-xwayland1 (%u)", n_bursts);
        is_int(n_discontinuities, 0, "no Discontinuity for the msc domains: Xwayland's timer jitter is not a step");
        ok(n_answers >= 40 && n_backwards == 0, "%u answers: a later msc always converts later (%u did not)", n_answers,
           n_backwards);
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        Mutter m = { .pidfd = -1, .log_fd = -1 };
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        tap_require_program("mutter", "mutter");
        tap_require_program("Xwayland", "xwayland");

        r = harness_new(NULL, &h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r >= 0) {
                r = mutter_start(h->bus_address, &m);
                ok(r == 0, "mutter --wayland --headless, two virtual monitors, its Xwayland on %s", m.display);
                if (r < 0)
                        diag("mutter said: %s", m.log);
        }
        if (r >= 0 && setenv("XAUTHORITY", m.xauthority, 1) < 0)
                r = -errno;
        if (r >= 0) {
                r = harness_start_daemon(h, argv[1], (const char *const[]) { "--display", m.display, "--no-gpu", NULL },
                                         HARNESS_READY_TIMEOUT_MS);
                is_int(r, 0, "timeconvd on it says READY=1");
        }
        if (r >= 0)
                r = harness_connect(h, &bus);
        if (r >= 0) {
                test_domains(bus, &m);
                test_jitter(bus, &m);
        }
        mutter_stop(&m);
        return done_testing();
}
