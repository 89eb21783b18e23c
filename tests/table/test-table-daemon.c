/* SPDX-License-Identifier: MIT */

/* The shared table of the real timeconvd on a private bus: GetSharedTable hands out an fd that
 * maps read-only and not writable; conversions through it hold the truth the test reads from
 * the kernel and agree with Convert over D-Bus within the two bounds; a daemon that stops
 * retires its table.
 * usage: test-table-daemon TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "shared-table.h"
#include "tap.h"

#define CALLS 500

typedef struct Mapping {
        void *mem;
        size_t size;
} Mapping;

static int get_table(sd_bus *bus, int *ret_fd) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r, fd;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "GetSharedTable", &error,
                               &reply, NULL);
        if (r < 0) {
                diag("GetSharedTable: %s: %s", error.name ? error.name : "?", error.message ? error.message : "");
                return r;
        }
        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return r;
        /* The reply owns its fd. */
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

static void check_mapping(int fd, Mapping *ret) {
        struct stat st = {};
        int r = fstat(fd, &st);

        ok(r == 0 && st.st_size > 0, "the fd has a size (%jd bytes)", (intmax_t) st.st_size);
        errno = 0;
        ok(mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EPERM,
           "it does not map writable (EPERM)");
        ret->size = (size_t) st.st_size;
        ret->mem = mmap(NULL, ret->size, PROT_READ, MAP_SHARED, fd, 0);
        ok(ret->mem != MAP_FAILED, "it maps read-only");
        if (ret->mem == MAP_FAILED) {
                ret->mem = NULL;
                return;
        }
        errno = 0;
        ok(mprotect(ret->mem, ret->size, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
           "and cannot be made writable (EACCES)");
        is_int(shared_table_validate(ret->mem, ret->size), 0, "it is a valid table");
        ok(shared_table_alive(ret->mem, clock_now_ns(CLOCK_MONOTONIC)), "its heartbeat is recent");
}

/* Through the table and over the bus, against the kernel's clocks. */
static void check_pair(sd_bus *bus, const void *mem, size_t size, const char *from, clockid_t from_id,
                       const char *to, clockid_t to_id) {
        int failed = 0, outside_table = 0, outside_bus = 0, disagree = 0;
        size_t i_from, i_to;
        uint64_t max_u = 0;

        if (shared_table_find(mem, size, from, &i_from) < 0 || shared_table_find(mem, size, to, &i_to) < 0) {
                ok(false, "%s and %s are in the table", from, to);
                return;
        }
        for (int k = 0; k < CALLS; k++) {
                int64_t v_t = 0, u_t = 0, v_b;
                uint64_t u_b;
                Bracket b;

                bracket_read(from_id, to_id, &b);
                if (shared_table_convert(mem, size, i_from, i_to, b.from_ns, INT64_MIN, &v_t, &u_t) < 0 ||
                    clock_convert(bus, from, to, b.from_ns, NULL, &v_b, &u_b) < 0) {
                        failed++;
                        continue;
                }
                if (!bracket_holds(v_t, (uint64_t) u_t, b.to_lo_ns, b.to_hi_ns) && outside_table++ < 3)
                        diag("table: %s %" PRIi64 " -> %s %" PRIi64 " +- %" PRIi64 ", truth in [%" PRIi64 ", %" PRIi64
                             "]", from, b.from_ns, to, v_t, u_t, b.to_lo_ns, b.to_hi_ns);
                outside_bus += !bracket_holds(v_b, u_b, b.to_lo_ns, b.to_hi_ns);
                /* The daemon may publish between the two: each answer holds the truth, so they
                 * lie within the sum of the bounds of each other. */
                disagree += !bracket_holds(v_t, (uint64_t) u_t + u_b, v_b, v_b);
                if ((uint64_t) u_t > max_u)
                        max_u = (uint64_t) u_t;
        }
        diag("%s -> %s: largest table uncertainty %" PRIu64 " ns", from, to, max_u);
        is_int(failed, 0, "every conversion through the table and over the bus succeeds");
        is_int(outside_table, 0, "through the table the truth lies within the bound, every time");
        is_int(outside_bus, 0, "over the bus too");
        is_int(disagree, 0, "the two agree within their bounds");
}

static void check_now(const void *mem, size_t size) {
        size_t mono;
        int outside = 0, failed = 0;

        if (shared_table_find(mem, size, "monotonic", &mono) < 0) {
                ok(false, "monotonic is in the table");
                return;
        }
        for (int k = 0; k < CALLS; k++) {
                int64_t lo = clock_now_ns(CLOCK_MONOTONIC), v = 0, u = 0, hi;

                if (shared_table_from_hub(mem, size, mono, clock_now_ns(CLOCK_MONOTONIC_RAW), &v, &u) < 0) {
                        failed++;
                        continue;
                }
                hi = clock_now_ns(CLOCK_MONOTONIC);
                outside += !bracket_holds(v, (uint64_t) u, lo, hi);
        }
        ok(failed == 0 && outside == 0, "now(monotonic) from the hub's clock lies within its bound (%d outside)",
           outside);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        Mapping map = {};
        int r, fd = -1;

        tap_args(argc, argv, 1, "TIMECONVD");
        r = harness_tap_start(argv[1], NULL, &h, &bus);
        if (r >= 0)
                r = get_table(bus, &fd);
        is_int(r, 0, "GetSharedTable gives an fd");
        if (r < 0)
                return done_testing();

        check_mapping(fd, &map);
        if (map.mem) {
                check_pair(bus, map.mem, map.size, "monotonic", CLOCK_MONOTONIC, "boottime", CLOCK_BOOTTIME);
                check_pair(bus, map.mem, map.size, "realtime", CLOCK_REALTIME, "monotonic", CLOCK_MONOTONIC);
                check_now(map.mem, map.size);

                is_int(harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, NULL, NULL), 0, "the daemon stops");
                is_int(shared_table_validate(map.mem, map.size), -ESTALE,
                       "a daemon that stopped has retired its table: -ESTALE");
                ok(!shared_table_alive(map.mem, clock_now_ns(CLOCK_MONOTONIC)), "it is not alive");
                munmap(map.mem, map.size);
        }
        close(fd);
        return done_testing();
}
