/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-floor.h"
#include "bus-errors.h"
#include "cleanup.h"

static int floor_convert_many(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const bool *echo = userdata;
        const char *from, *to;
        const void *values;
        size_t size;
        int r;

        r = sd_bus_message_read(m, "ss", &from, &to);
        if (r >= 0)
                r = sd_bus_message_read_array(m, 'x', &values, &size);
        if (r < 0)
                return r;
        if (!*echo)
                return sd_bus_reply_method_return(m, "axat", 0, 0);
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'x', values, size);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 't', values, size);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* ConvertManyMemfd: the memfd mapped, the values copied to where the answers go (echo), as the
 * daemon would; nothing checked. The empty object does not map it. */
static int floor_convert_many_memfd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const bool *echo = userdata;
        const char *from, *to;
        uint64_t count;
        size_t size;
        uint8_t *map;
        int fd, r;

        r = sd_bus_message_read(m, "ssht", &from, &to, &fd, &count);
        if (r < 0)
                return r;
        if (!*echo || count == 0 || count > BUS_API_CONVERT_MANY_MEMFD_MAX)
                return sd_bus_reply_method_return(m, NULL);
        size = BUS_API_MEMFD_BYTES((size_t) count);
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return -errno;
        memcpy(map + count * sizeof(int64_t), map, count * sizeof(int64_t));
        memcpy(map + 2 * count * sizeof(int64_t), map, count * sizeof(int64_t));
        (void) munmap(map, size);
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable floor_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Convert", "ssx", "xt", harness_stand_in_convert, 0),
        SD_BUS_METHOD("ConvertMany", "ssax", "axat", floor_convert_many, 0),
        SD_BUS_METHOD("ConvertManyMemfd", "ssht", "", floor_convert_many_memfd, 0),
        SD_BUS_VTABLE_END,
};

static _Noreturn void floor_serve(const Harness *h, int ready_fd) {
        static const bool empty = false, echo = true;
        sd_bus *bus = NULL;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (harness_connect(h, &bus) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, BENCH_FLOOR_OBJECT_EMPTY, BUS_API_INTERFACE, floor_vtable,
                                     (void *) &empty) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, BENCH_FLOOR_OBJECT_ECHO, BUS_API_INTERFACE, floor_vtable,
                                     (void *) &echo) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, floor_vtable, (void *) &empty) < 0 ||
            sd_bus_request_name(bus, BENCH_FLOOR_SERVICE, 0) < 0 || write(ready_fd, "", 1) != 1)
                _exit(1);
        for (;;) {
                int r = sd_bus_process(bus, NULL);

                if (r < 0)
                        _exit(0);
                if (r == 0)
                        (void) sd_bus_wait(bus, UINT64_MAX);
        }
}

int bench_floor_start(const Harness *h, pid_t *ret_pid) {
        int ready[2];
        pid_t pid;
        char c;

        if (pipe(ready) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                close(ready[0]);
                close(ready[1]);
                return -errno;
        }
        if (pid == 0) {
                close(ready[0]);
                floor_serve(h, ready[1]);
        }
        close(ready[1]);
        /* The name is owned once the byte comes: no sleep, no poll of the bus. */
        if (read(ready[0], &c, 1) != 1) {
                close(ready[0]);
                bench_floor_stop(pid);
                return -EIO;
        }
        close(ready[0]);
        *ret_pid = pid;
        return 0;
}

void bench_floor_stop(pid_t pid) {
        if (pid <= 0)
                return;
        (void) kill(pid, SIGTERM);
        (void) waitpid(pid, NULL, 0);
}
