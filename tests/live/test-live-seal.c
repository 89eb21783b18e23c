/* SPDX-License-Identifier: MIT */

/* libtimeconv maps only a sealed table. A stand-in daemon owns org.timeconv.Clock1 on a private
 * bus and answers GetSharedTable with a memfd holding a valid table (monotonic = monotonic_raw +
 * 1000 s), sealed as timeconvd seals it, not sealed at all, or sealed against shrinking only
 * (still writable); it answers Convert with value + 111 +- 7, so each answer says which path
 * gave it. An unsealed table must not be mapped (it could shrink under the client: SIGBUS, which
 * this test then does to it) and the conversion goes over D-Bus. The sealed one is the control:
 * mapped, and the table answers.
 * usage: test-live-seal TIMECONVD (the daemon is not used) */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"
#include "shared-table.h"
#include "tap.h"
#include "timeconv.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define TABLE_NAME "timeconv-fake-table"
#define TABLE_OFFSET_NS INT64_C(1000000000000)
#define VALUE_NS INT64_C(5000000000)

typedef enum Mode {
        MODE_SEALED,            /* as timeconvd: shrink, grow, future-write, seal */
        MODE_UNSEALED,          /* a memfd without MFD_ALLOW_SEALING */
        MODE_SHRINK_ONLY,       /* cannot shrink, but anyone may map it writable */
} Mode;

typedef struct Fake {
        HarnessStandIn s;
        int mode;               /* Mode, set by the main thread between clients */
        int table_fd;           /* the last table handed out, kept to shrink it */
        int table_calls;
} Fake;

/* A table of the hub and monotonic with an exact model x = r + 1000 s. */
static int table_memfd(Mode mode, int *ret_fd) {
        static const Model m = { .r_c_ns = 0, .x_c_ns = TABLE_OFFSET_NS, .half_ns = 10.0 };
        static const int seals[] = {
                [MODE_SEALED] = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL,
                [MODE_UNSEALED] = 0,
                [MODE_SHRINK_ONLY] = F_SEAL_SHRINK | F_SEAL_GROW,
        };
        size_t size = shared_table_size(GRAPH_NODES_MAX);
        static History h;
        ClockGraph g;
        void *mem;
        int fd, r = 0;

        history_init(&h, NULL);
        graph_init(&g, "monotonic_raw");
        if (graph_add(&g, "monotonic", &UNIT_NS, &h, NULL) < 0 || model_prepare(&m, &g.nodes[1].current) < 0)
                return -EINVAL;
        g.nodes[1].current_r_begin_ns = INT64_MIN;
        g.nodes[1].current_x_begin_ns = INT64_MIN;
        g.nodes[1].calibrated = true;
        graph_rebuild(&g);

        fd = memfd_create(TABLE_NAME, MFD_CLOEXEC | (mode == MODE_UNSEALED ? 0 : MFD_ALLOW_SEALING));
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0)
                r = -errno;
        mem = r < 0 ? MAP_FAILED : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r >= 0 && mem == MAP_FAILED)
                r = -errno;
        if (r >= 0) {
                r = shared_table_init(mem, size, GRAPH_NODES_MAX);
                if (r >= 0)
                        r = shared_table_publish(mem, size, &g);
                shared_table_heartbeat(mem, clock_now_ns(CLOCK_MONOTONIC), INT64_C(3600000000000));
                munmap(mem, size);
        }
        if (r >= 0 && seals[mode] != 0 && fcntl(fd, F_ADD_SEALS, seals[mode]) < 0)
                r = -errno;
        if (r < 0) {
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

static int get_shared_table(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;
        int fd, r;

        r = table_memfd(__atomic_load_n(&f->mode, __ATOMIC_ACQUIRE), &fd);
        if (r < 0)
                return r;
        if (f->table_fd >= 0)
                close(f->table_fd);
        f->table_fd = fd;
        __atomic_add_fetch(&f->table_calls, 1, __ATOMIC_RELEASE);
        return sd_bus_reply_method_return(m, "h", fd);
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Convert", "ssx", "xt", harness_stand_in_convert, 0),
        SD_BUS_METHOD("GetSharedTable", "", "h", get_shared_table, 0),
        SD_BUS_VTABLE_END
};

/* Whether this process maps the fake's memfd. */
static bool table_mapped(void) {
        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        bool found = false;
        FILE *maps = fopen("/proc/self/maps", "re");

        if (!maps)
                return false;
        while (getline(&line, &n, maps) > 0)
                found = found || strstr(line, "/memfd:" TABLE_NAME) != NULL;
        fclose(maps);
        return found;
}

static void on_sigbus(int sig) {
        static const char msg[] = "not ok - the client died of SIGBUS: it had mapped a table that shrank\n";

        (void) !write(STDOUT_FILENO, msg, sizeof(msg) - 1);
        _exit(1);
}

static void check_mode(const Harness *h, Fake *f, Mode mode, const char *what) {
        struct timeconv *tc = NULL;
        int64_t v = 0, u = 0;
        int calls, r;

        __atomic_store_n(&f->mode, mode, __ATOMIC_RELEASE);
        calls = __atomic_load_n(&f->table_calls, __ATOMIC_ACQUIRE);
        r = timeconv_open_address(h->bus_address, &tc);
        if (r >= 0)
                r = timeconv_convert(tc, "monotonic_raw", "monotonic", VALUE_NS, &v, &u);
        ok(r == 0, "%s: the conversion answers (%d)", what, r);
        ok(__atomic_load_n(&f->table_calls, __ATOMIC_ACQUIRE) == calls + 1, "%s: the library asked for the table",
           what);
        if (mode == MODE_SEALED) {
                ok(table_mapped(), "%s: it is mapped", what);
                ok(timeconv_last_path(tc) == TIMECONV_PATH_TABLE && v == VALUE_NS + TABLE_OFFSET_NS && u <= 20,
                   "%s: the table answers (%" PRIi64 " +- %" PRIi64 ")", what, v, u);
                timeconv_free(tc);
                return;
        }
        ok(!table_mapped(), "%s: it is not mapped", what);
        ok(timeconv_last_path(tc) == TIMECONV_PATH_DBUS && v == VALUE_NS + HARNESS_STAND_IN_OFFSET_NS &&
           u == HARNESS_STAND_IN_UNCERTAINTY_NS,
           "%s: D-Bus answers (%" PRIi64 " +- %" PRIi64 ")", what, v, u);

        /* What an unsealed table allows: shrunk under a client that mapped it, its next read
         * is SIGBUS. The library never mapped it, so it answers as before. */
        if (mode == MODE_UNSEALED) {
                ok(ftruncate(f->table_fd, 0) == 0, "%s: the fake shrinks it to nothing", what);
                r = timeconv_convert(tc, "monotonic_raw", "monotonic", VALUE_NS, &v, &u);
                ok(r == 0 && timeconv_last_path(tc) == TIMECONV_PATH_DBUS && v == VALUE_NS + HARNESS_STAND_IN_OFFSET_NS,
                   "%s: the next conversion goes over D-Bus too", what);
        }
        timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        is_int(timeconv_convert(tc, "monotonic_raw", "monotonic", VALUE_NS, &v, &u), -EOPNOTSUPP,
               "table only: -EOPNOTSUPP");
        timeconv_free(tc);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        Fake fake = { .table_fd = -1 };
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");
        signal(SIGBUS, on_sigbus);

        r = harness_new(NULL, &h);
        if (r >= 0)
                r = harness_stand_in_start(h, fake_vtable, &fake, &fake.s);
        is_int(r < 0 ? r : 0, 0, "a stand-in daemon owns org.timeconv.Clock1 on a private bus");
        if (r < 0)
                return done_testing();

        check_mode(h, &fake, MODE_SEALED, "a sealed table");
        check_mode(h, &fake, MODE_UNSEALED, "an unsealed table");
        check_mode(h, &fake, MODE_SHRINK_ONLY, "a table sealed against shrinking only");

        harness_stand_in_stop(&fake.s);
        if (fake.table_fd >= 0)
                close(fake.table_fd);
        return done_testing();
}
