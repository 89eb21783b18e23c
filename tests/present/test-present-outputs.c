/* SPDX-License-Identifier: MIT */

/* One vblank domain per monitor (each has its own refresh rate), on Xorg with Debian's dummy driver: a config
 * of our own in a private directory (modelines at 60 and 144 Hz), three outputs lit with xrandr
 * (DUMMY0 and DUMMY2 at 59.94 Hz, DUMMY1 at 143.88 Hz), timeconvd --display on it. ListDomains
 * has msc (DUMMY0's, at the origin) and msc-dummy0..2 with RandR's rates, each `emulated` (the
 * dummy driver's Present is the fake timer) and why; then live, with no restart, each waited
 * for by DomainsChanged: DUMMY2 switched to 144 Hz is followed, DUMMY1 turned off is
 * unavailable with why, DUMMY3 lit gets its domain. Xorg runs as root (CI runs the tests as root).
 * usage: test-present-outputs TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock-client.h"
#include "harness-proc.h"
#include "harness-tap.h"
#include "tap.h"
#include "x11-bus.h"
#include "xvfb.h"

#define WAIT_NS INT64_C(60000000000)
#define HZ_60 59.94
#define HZ_144 143.881

static const char xorg_conf[] =
        "Section \"ServerFlags\"\n"
        "  Option \"AutoAddDevices\" \"false\"\n"
        "  Option \"AutoAddGPU\" \"false\"\n"
        "EndSection\n"
        "Section \"Monitor\"\n"
        "  Identifier \"Monitor0\"\n"
        "  HorizSync 5.0 - 1000.0\n"
        "  VertRefresh 5.0 - 200.0\n"
        "  Modeline \"640x480_60\" 25.175 640 656 752 800 480 490 492 525 -hsync -vsync\n"
        "  Modeline \"640x480_144\" 60.43 640 656 752 800 480 490 492 525 -hsync -vsync\n"
        "EndSection\n"
        "Section \"Device\"\n"
        "  Identifier \"Card0\"\n"
        "  Driver \"dummy\"\n"
        "  VideoRam 65536\n"
        "EndSection\n"
        "Section \"Screen\"\n"
        "  Identifier \"Screen0\"\n"
        "  Device \"Card0\"\n"
        "  Monitor \"Monitor0\"\n"
        "  DefaultDepth 24\n"
        "  SubSection \"Display\"\n"
        "    Depth 24\n"
        "    Modes \"640x480_60\"\n"
        "  EndSubSection\n"
        "EndSection\n";

/* name's ListDomains entry; all zero (listed false) when there is none. */
static X11BusDomain entry(sd_bus *bus, const char *name) {
        X11BusDomain d;

        if (x11_bus_domain(bus, name, &d) < 0)
                d = (X11BusDomain) {};
        return d;
}

/* The names DomainsChanged said changed (or were added) since the last look. */
typedef struct Changes {
        char names[32][64];
        size_t n;
} Changes;

static int on_domains_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Changes *c = userdata;
        const char *name;

        /* added, removed, changed: the names of the first and the last. */
        for (int k = 0; k < 3; k++) {
                if (sd_bus_message_enter_container(m, 'a', "s") < 0)
                        return 0;
                while (sd_bus_message_read(m, "s", &name) > 0)
                        if (k != 1 && c->n < 32)
                                snprintf(c->names[c->n++], sizeof(c->names[0]), "%s", name);
                if (sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

static bool changes_take(Changes *c, const char *name) {
        bool seen = false;

        for (size_t i = 0; i < c->n; i++)
                seen |= strcmp(c->names[i], name) == 0;
        c->n = 0;
        return seen;
}

/* Waits on the bus (signals, 100 ms at most between looks) until name's entry passes want. */
static bool wait_entry(sd_bus *bus, const char *name, bool (*want)(const X11BusDomain *e, const void *arg),
                       const void *arg, X11BusDomain *ret) {
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + WAIT_NS;

        while (clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                *ret = entry(bus, name);
                if (want(ret, arg))
                        return true;
                while (sd_bus_process(bus, NULL) > 0)
                        ;
                (void) sd_bus_wait(bus, 100 * 1000);
        }
        return false;
}

/* Waits for a DomainsChanged that names name. */
static bool wait_changed(sd_bus *bus, Changes *c, const char *name) {
        int64_t until_ns = clock_now_ns(CLOCK_MONOTONIC) + WAIT_NS;

        while (clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                while (sd_bus_process(bus, NULL) > 0)
                        ;
                if (changes_take(c, name))
                        return true;
                (void) sd_bus_wait(bus, 1000 * 1000);
        }
        return false;
}

static bool available_at(const X11BusDomain *e, const void *arg) {
        return e->listed && e->available && e->verdict[0] && fabs(e->mode_refresh_hz - *(const double *) arg) < 0.01;
}

static bool unavailable(const X11BusDomain *e, const void *arg) {
        return e->listed && !e->available && strstr(e->reason, (const char *) arg);
}

static int xrandr(const char *display, const char *const *args) {
        const char *argv[16] = { "xrandr", "-display", display };
        ProcSpawn s = { .argv = argv, .stdout_fd = -1, .stderr_fd = -1, .fd3 = -1 };
        int pidfd, status = 0, r;
        size_t n = 3;
        pid_t pid;

        for (; *args && n < 15; args++)
                argv[n++] = *args;
        r = proc_spawn(&s, &pid, &pidfd);
        if (r < 0)
                return r;
        r = proc_wait(pidfd, pid, true, 20000, &status);
        close(pidfd);
        if (r < 0)
                return r;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static void test_outputs(sd_bus *bus) {
        static const struct {
                const char *name;
                double hz;
        } want[] = { { "msc", HZ_60 }, { "msc-dummy0", HZ_60 }, { "msc-dummy1", HZ_144 }, { "msc-dummy2", HZ_60 } };
        X11BusDomain e, first;

        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                bool listed = wait_entry(bus, want[i].name, available_at, &want[i].hz, &e);

                ok(listed, "%s: listed, RandR's %.2f Hz (%.3f)", want[i].name, want[i].hz, e.mode_refresh_hz);
                ok(strcmp(e.verdict, "emulated") == 0 && strstr(e.verdict_reason, "timer"),
                   "%s: emulated, the dummy driver's Present is a timer (%s: %s)", want[i].name, e.verdict,
                   e.verdict_reason);
                if (i == 0)
                        first = e;
                if (i == 1)
                        ok(strcmp(first.crtc, e.crtc) == 0 && strstr(e.crtc, "DUMMY0"),
                           "msc counts the CRTC at the origin: DUMMY0's (%s, %s)", first.crtc, e.crtc);
        }
        ok(!entry(bus, "msc-dummy3").listed, "no domain for an output that shows nothing (DUMMY3)");
}

static void test_live(sd_bus *bus, const char *display) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        Changes changes = {};
        const double hz_144 = HZ_144, hz_60 = HZ_60;
        bool followed;
        X11BusDomain e;

        ok(sd_bus_match_signal(bus, &slot, NULL, "/org/timeconv/Clock1", "org.timeconv.Clock1", "DomainsChanged",
                               on_domains_changed, &changes) >= 0, "watching DomainsChanged");
        while (sd_bus_process(bus, NULL) > 0)
                ;
        changes.n = 0;

        is_int(xrandr(display, (const char *const[]) { "--output", "DUMMY2", "--mode", "640x480_144", NULL }), 0,
               "xrandr: DUMMY2 to 144 Hz");
        ok(wait_changed(bus, &changes, "msc-dummy2"), "DomainsChanged names msc-dummy2");
        followed = wait_entry(bus, "msc-dummy2", available_at, &hz_144, &e);
        ok(followed, "msc-dummy2 follows: RandR's %.2f Hz now (%.3f), no restart", HZ_144, e.mode_refresh_hz);

        is_int(xrandr(display, (const char *const[]) { "--output", "DUMMY1", "--off", NULL }), 0, "xrandr: DUMMY1 off");
        ok(wait_changed(bus, &changes, "msc-dummy1"), "DomainsChanged names msc-dummy1");
        followed = wait_entry(bus, "msc-dummy1", unavailable, "shows nothing", &e);
        ok(followed, "msc-dummy1: unavailable, because %s", e.reason);
        e = entry(bus, "msc-dummy0");
        ok(e.available, "msc-dummy0 is still there");

        /* A monitor plugged in: its domain joins. */
        is_int(xrandr(display, (const char *const[]) { "--addmode", "DUMMY3", "640x480_60", NULL }), 0,
               "xrandr: a 60 Hz mode for DUMMY3");
        is_int(xrandr(display, (const char *const[]) { "--output", "DUMMY3", "--mode", "640x480_60", "--pos", "1920x0",
                                                       NULL }), 0, "xrandr: DUMMY3 lit");
        ok(wait_changed(bus, &changes, "msc-dummy3"), "DomainsChanged adds msc-dummy3");
        followed = wait_entry(bus, "msc-dummy3", available_at, &hz_60, &e);
        ok(followed && strcmp(e.verdict, "emulated") == 0, "msc-dummy3: RandR's %.2f Hz (%.3f), %s, no restart",
           HZ_60, e.mode_refresh_hz, e.verdict);
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        char dir[] = "/tmp/timeconv-xorg-XXXXXX", conf[64], log[64];
        Xvfb x = {};
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        if (geteuid() != 0)
                skip_all("Xorg with the dummy driver runs as root here (CI runs the tests as root)");
        tap_require_program("Xorg", "xserver-xorg-core");
        tap_require_file("/usr/lib/xorg/modules/drivers/dummy_drv.so", "xserver-xorg-video-dummy");
        tap_require_program("xrandr", "x11-xserver-utils");

        if (!mkdtemp(dir))
                bail_out("mkdtemp: %s", strerror(errno));
        snprintf(conf, sizeof(conf), "%s/xorg.conf", dir);
        snprintf(log, sizeof(log), "%s/xorg.log", dir);
        if (proc_write_file(conf, xorg_conf) < 0)
                bail_out("cannot write %s", conf);
        r = xvfb_start_argv((const char *const[]) { "Xorg", "-config", conf, "-logfile", log, "-noreset", "-nolisten",
                                                    "tcp", "-displayfd", "3", NULL }, &x);
        ok(r == 0, "Xorg with the dummy driver started (%s)", x.name);
        if (r >= 0) {
                ok(xrandr(x.name, (const char *const[]) { "--addmode", "DUMMY1", "640x480_144", NULL }) == 0 &&
                   xrandr(x.name, (const char *const[]) { "--addmode", "DUMMY2", "640x480_60", NULL }) == 0 &&
                   xrandr(x.name, (const char *const[]) { "--addmode", "DUMMY2", "640x480_144", NULL }) == 0 &&
                   xrandr(x.name, (const char *const[]) { "--output", "DUMMY1", "--mode", "640x480_144", "--pos",
                                                          "640x0", NULL }) == 0 &&
                   xrandr(x.name, (const char *const[]) { "--output", "DUMMY2", "--mode", "640x480_60", "--pos",
                                                          "1280x0", NULL }) == 0,
                   "xrandr: three outputs lit, DUMMY1 at 144 Hz");
                if (harness_tap_start(argv[1], (const char *const[]) { "--display", x.name, "--no-gpu", NULL }, &h,
                                      &bus) >= 0) {
                        test_outputs(bus);
                        test_live(bus, x.name);
                }
        }
        xvfb_stop(&x);
        (void) proc_rm_rf(dir);
        return done_testing();
}
