/* SPDX-License-Identifier: MIT */

/* timeconvd: keeps every clock domain calibrated against CLOCK_MONOTONIC_RAW and answers
 * conversions as org.timeconv.Clock1 on the session bus. */

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "options.h"
#include "cleanup.h"
#include "time-util.h"

static void help(void) {
        printf("NAME\n"
               "       timeconvd - clock calibration and timestamp conversion daemon\n"
               "\n"
               "SYNOPSIS\n"
               "       timeconvd [OPTION...]\n"
               "\n"
               "DESCRIPTION\n"
               "       Keeps every clock domain of this session calibrated against\n"
               "       CLOCK_MONOTONIC_RAW with bracketed bursts, and converts timestamps\n"
               "       between them, each answer with an honest error bound, for any process on\n"
               "       the session bus. The domains: the POSIX clocks (realtime,\n"
               "       realtime_coarse, monotonic, monotonic_coarse, monotonic_raw, boottime,\n"
               "       tai; ns), X server time (x11 in ms, x11_us the high-precision time of\n"
               "       the EWMH frame-sync messages), the display's vblank counter (msc, in\n"
               "       frames), the GPUs' timestamps (gpu0, gpu1, ...; in ticks) and the\n"
               "       application clocks that clients push (PushSnapshot). A step of a clock\n"
               "       (suspend, the clock being set) or a restart (an X server, a GPU reset)\n"
               "       is announced with the Discontinuity signal; values from before it still\n"
               "       convert with the model of their time.\n"
               "\n"
               "OPTIONS\n"
               "       -h, --help\n"
               "              Show this help and exit.\n"
               "       --version\n"
               "              Show the version and exit.\n"
               "       --cadence=SECONDS\n"
               "              Time between calibration bursts while clients are active\n"
               "              (default 1).\n"
               "       --idle-cadence=SECONDS\n"
               "              Time between bursts once no client has called for --idle-after\n"
               "              seconds (default 30). A call while idle brings the next burst\n"
               "              forward at once and the cadence back to --cadence.\n"
               "       --idle-after=SECONDS\n"
               "              Idle after this long without a method call, counted from start-up\n"
               "              (default 60). With 0, a call brings one burst at once and the\n"
               "              daemon is idle again right after it.\n"
               "       --log-level=LEVEL\n"
               "              err, warning, notice, info or debug (default info).\n"
               "       --no-x11\n"
               "              Do not offer the X server time domains.\n"
               "       --no-gpu\n"
               "              Do not offer the GPU time domains.\n"
               "       --gpu-software\n"
               "              Also offer Vulkan devices of type CPU (software rasterizers such\n"
               "              as lavapipe), which are left out by default: not a GPU.\n"
               "       --display=NAME\n"
               "              X display for the X server time domains. Without it they follow\n"
               "              the session's display: DISPLAY in the systemd user manager's\n"
               "              environment (read at start, when it changes and at each attempt\n"
               "              to connect), else $DISPLAY; until there is one, x11, x11_us and\n"
               "              msc are listed unavailable with the reason. A server that is not\n"
               "              there yet or goes away leaves the domains unavailable until it\n"
               "              comes back.\n"
               "       --x11-tracked\n"
               "              Model X time from its probes alone, even when it is provably\n"
               "              CLOCK_MONOTONIC in ms (verdict \"tracked\", never \"identity\").\n"
               "\n"
               "       SECONDS is a decimal number, e.g. 0.5, from %g to %g (from 0 for\n"
               "       --idle-after). GPUs are found through the Vulkan loader\n"
               "       (libvulkan.so.1) and VK_EXT_calibrated_timestamps; without either\n"
               "       there are no GPU domains.\n"
               "\n"
               "BUS INTERFACE\n"
               "       Name, object and interface org.timeconv.Clock1 at /org/timeconv/Clock1\n"
               "       on the session bus: ListDomains, Convert, ConvertMany,\n"
               "       ConvertManyMemfd, Now, ExportSnapshots, GetSharedTable and\n"
               "       PushSnapshot; the signals\n"
               "       Discontinuity and DomainsChanged; the\n"
               "       properties Version and ReferenceDomain. Errors are named\n"
               "       org.timeconv.Clock1.Error.*. See org.timeconv.Clock1.xml.\n"
               "\n"
               "LOGGING AND READINESS\n"
               "       Logs go to standard error, one line each, with a <N> syslog priority\n"
               "       prefix that journald understands. Once the first burst of every domain\n"
               "       is in, timeconvd logs \"<6>timeconvd: ready, N domains\" and sends\n"
               "       READY=1 to systemd (Type=notify); it sends WATCHDOG=1 at half the\n"
               "       interval of WatchdogSec=. SIGTERM and SIGINT end it cleanly.\n"
               "\n"
               "ENVIRONMENT\n"
               "       DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR\n"
               "              Where the session bus is.\n"
               "       NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID\n"
               "              Set by systemd for READY=1 and the watchdog.\n"
               "       STATE_DIRECTORY, XDG_STATE_HOME\n"
               "              Where state.json (learned rates, a prior for the next start) is\n"
               "              kept: $STATE_DIRECTORY, else $XDG_STATE_HOME/timeconv, else\n"
               "              ~/.local/state/timeconv.\n"
               "\n"
               "EXIT STATUS\n"
               "       0      clean exit: SIGTERM or SIGINT, --help, --version;\n"
               "       1      cannot run: no session bus, the name is already taken, the bus\n"
               "              connection went away, an internal failure;\n"
               "       64     usage error: an unknown option, a bad value (EX_USAGE, as\n"
               "              timeconv(1)).\n",
               OPTIONS_SECONDS_MIN, OPTIONS_SECONDS_MAX);
}

/* Every ConvertManyMemfd call in flight holds the fds its message carried; the daemon's own
 * memfds, state file and X connections need some left over. systemd hands services a soft limit
 * of 1024 and a hard one far above; nothing here uses select(), so the soft limit goes up to the
 * hard one. */
static void nofile_raise(const Log *log) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                (void) log_debug_errno(log, errno, "cannot raise the limit of open files to %llu: %m",
                                       (unsigned long long) rl.rlim_max);
        else
                log_debug(log, "limit of open files raised to %llu", (unsigned long long) rl.rlim_max);
}

static int run(int argc, char *argv[]) {
        Log log = LOG_INIT;
        Options options;
        _cleanup_(daemon_freep) Daemon *d = NULL;       /* after log: freed while log still lives */
        int r;

        r = options_parse(argc, argv, &log, &options);
        if (r < 0)
                return DAEMON_EXIT_USAGE;
        log.max_level = options.log_level;

        switch (options.action) {
        case OPTIONS_HELP:
                help();
                return DAEMON_EXIT_OK;
        case OPTIONS_VERSION:
                printf("timeconvd %s\n", TIMECONV_VERSION);
                return DAEMON_EXIT_OK;
        case OPTIONS_RUN:
                break;
        }

        /* glibc raises its mmap threshold after freeing a large block, so that one huge request
         * (ConvertMany of a million values) would leave the next ones on the heap for good: keep
         * large buffers in their own mappings, returned to the system when freed. */
        (void) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        /* One arena: the X connect threads (domains/xcb-connect.c) are short and rare, but two
         * at once (x11's and msc's, after an X server restart) made glibc create a second
         * arena, 64-132 KiB resident for good, at random. Nothing here is malloc-bound. */
        (void) mallopt(M_ARENA_MAX, 1);
        nofile_raise(&log);

        r = daemon_new(&log, &options, &d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        r = daemon_open_domains(d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        r = daemon_connect_bus(d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        r = daemon_start(d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;

        return daemon_loop(d);
}

int main(int argc, char *argv[]) {
        return run(argc, argv);
}
