/* SPDX-License-Identifier: MIT */

/* GetSharedTable in the org.timeconv.Clock1 vtable, against test-bus-api's stub core (server
 * thread, socketpair): the fd it hands out is the core's memfd, passed as a descriptor of the
 * client's own; Unavailable when the core has no table or no callback; the core's other
 * errors pass through. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-api.h"
#include "harness-tap.h"
#include "tap.h"
#include "test-bus-api-client.h"
#include "test-bus-api-server.h"

/* Calls GetSharedTable; on success *ret_fd is a dup of the fd it carried (the caller closes it). */
static int get_shared_table(sd_bus *c, sd_bus_error *e, int *ret_fd) {
        sd_bus_message *reply = NULL;
        int r, fd = -1;

        r = call(c, "GetSharedTable", e, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0) {
                /* The reply owns fd: keep a copy of our own. */
                fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                r = fd < 0 ? -errno : 0;
        }
        sd_bus_message_unref(reply);
        if (r < 0)
                return r;
        *ret_fd = fd;
        return 0;
}

static void test_get_shared_table(sd_bus *c, StubCore *core) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        struct stat st = {}, st_ours = {};
        int r, fd = -1;
        void *mem;

        r = get_shared_table(c, &e, &fd);
        is_int(r, 0, "GetSharedTable answers with an fd");
        if (r >= 0) {
                ok(fstat(fd, &st) == 0 && fstat(core->table_fd, &st_ours) == 0 && st.st_ino == st_ours.st_ino &&
                   st.st_dev == st_ours.st_dev, "the fd is the core's memfd, passed over the socket");
                ok(fd != core->table_fd, "the client got a descriptor of its own");
                mem = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
                ok(mem != MAP_FAILED && (size_t) st.st_size == strlen(STUB_TABLE_TEXT) &&
                   memcmp(mem, STUB_TABLE_TEXT, strlen(STUB_TABLE_TEXT)) == 0, "it maps and reads the core's table");
                if (mem != MAP_FAILED)
                        munmap(mem, (size_t) st.st_size);
                ok(mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED,
                   "the sealed memfd does not map writable in the client");
                close(fd);
        }
        sd_bus_error_free(&e);

        atomic_store(&core->table_mode, STUB_TABLE_NONE);
        r = get_shared_table(c, &e, &fd);
        check_error("GetSharedTable without a table", r, &e, BUS_ERROR_UNAVAILABLE, ENODEV, "no shared table");
        sd_bus_error_free(&e);

        atomic_store(&core->table_mode, STUB_TABLE_EIO);
        r = get_shared_table(c, &e, &fd);
        check_error("GetSharedTable when the core fails", r, &e, SD_BUS_ERROR_IO_ERROR, EIO,
                    "cannot hand out the shared table");
        sd_bus_error_free(&e);
        atomic_store(&core->table_mode, STUB_TABLE_FD);

        r = call(c, "GetSharedTable", &e, NULL, "s", "alpha");
        check_error("GetSharedTable with an argument", r, &e, SD_BUS_ERROR_INVALID_ARGS, EINVAL, NULL);
        sd_bus_error_free(&e);
}

/* A core without a shared_table_fd callback: GetSharedTable is Unavailable. */
static void test_get_shared_table_missing(void) {
        static BusCoreOps ops;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *client = NULL;
        Server srv;
        int client_fd, r, fd = -1;

        ops = stub_ops;
        ops.shared_table_fd = NULL;
        r = server_start_pair(&srv, &ops, &client_fd);
        if (r >= 0) {
                r = client_new(client_fd, &client);
                if (r >= 0) {
                        r = get_shared_table(client, &e, &fd);
                        check_error("GetSharedTable of a core with no callback", r, &e, BUS_ERROR_UNAVAILABLE,
                                    ENODEV, "no shared table");
                        sd_bus_error_free(&e);
                        sd_bus_flush_close_unref(client);
                }
                server_stop(&srv);
        } else
                ok(false, "a second server starts: %s", strerror(-r));
}

int main(void) {
        sd_bus *client = NULL;
        Server srv;
        int client_fd, r;

        is_int(bus_timeconv_errors_register(), 0, "the client registers the error map");
        r = server_start_pair(&srv, &stub_ops, &client_fd);
        is_int(r, 0, "the server thread starts on a socketpair");
        if (r < 0)
                return done_testing();
        r = client_new(client_fd, &client);
        is_int(r, 0, "client connects over the socketpair");
        if (r >= 0)
                test_get_shared_table(client, &srv.core);
        sd_bus_flush_close_unref(client);
        server_stop(&srv);

        test_get_shared_table_missing();
        return done_testing();
}
