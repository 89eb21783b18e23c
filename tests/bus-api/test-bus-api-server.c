/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "test-bus-api-server.h"

/* ---- the stub core ---- */

static const BusDomainInfo stub_domains[] = {
        { .name = "alpha", .unit = "ns", .available = true, .reference = "alpha", .resolution_ns = 1,
          .wrap_bits = 64, .monotonic = true, .last_calibrated_ns = 1000, .perfetto_id = 6 },
        { .name = "beta", .unit = "ms", .available = true, .reference = "alpha", .resolution_ns = 1000000, .wrap_bits = 32,
          .monotonic = true, .rate_ppb = -250, .uncertainty_ns = 500000, .rate_uncertainty_ppb = 40,
          .last_calibrated_ns = 2000,
          .perfetto_id = 0x80001234, .verdict = "identity", .has_offset_ns = true, .offset_ns = -5,
          .n_extras = 1, .extras = { { "screen", "0" } } },
        { .name = "gpu0", .unit = "tick", .reference = "alpha", .resolution_ns = 52, .wrap_bits = 36, .monotonic = true,
          .perfetto_id = 0x80000042, .device_name = "llvmpipe (LLVM 15.0.6, 256 bits)",
          .driver = "llvmpipe", .period_ns = 1.5, .n_extras = 1, .extras = { { "uuid", "00ff" } } },
        { .name = "island", .unit = "ns", .available = true, .resolution_ns = 1, .wrap_bits = 64,
          .perfetto_id = 0x80000043 },
};
#define N_STUB (sizeof(stub_domains) / sizeof(stub_domains[0]))

static int stub_resolve(void *core, const char *name, size_t *ret_index) {
        for (size_t i = 0; i < N_STUB; i++)
                if (strcmp(stub_domains[i].name, name) == 0) {
                        *ret_index = i;
                        return 0;
                }
        return -ENOENT;
}

static size_t stub_count_domains(void *core) {
        return N_STUB;
}

static int stub_get_domain(void *core, size_t index, BusDomainInfo *ret) {
        if (index >= N_STUB)
                return -ENOENT;
        *ret = stub_domains[index];
        return 0;
}

/* alpha (ns) <-> beta (ms, offset 7 ms; beta 0 has no calibration, beta < 0 is invalid); island
 * links to nothing; gpu0 is unavailable. */
static int stub_convert(void *core, size_t from_index, size_t to_index, int64_t value,
                        int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        const BusDomainInfo *f, *t;
        const char *from, *to;

        if (from_index >= N_STUB || to_index >= N_STUB)
                return -ENOENT;
        f = &stub_domains[from_index];
        t = &stub_domains[to_index];
        from = f->name;
        to = t->name;
        if (!f->available || !t->available)
                return -ENODEV;
        if (value > STUB_VALUE_MAX || value < -STUB_VALUE_MAX)
                return -ERANGE;
        if (f == t) {
                *ret_value = value;
                *ret_uncertainty_ns = 0;
                return 0;
        }
        if (strcmp(from, "island") == 0 || strcmp(to, "island") == 0)
                return -ENOLINK;
        if (strcmp(from, "beta") == 0 && value > UINT32_MAX)
                return -ERANGE;         /* as the graph refuses a 32-bit wrapping value past its width */
        if (strcmp(from, "beta") == 0 && value < 0)
                return -EINVAL;
        if (strcmp(from, "beta") == 0 && value == 0)
                return -ENODATA;        /* as for a time before the first calibration */
        *ret_value = strcmp(from, "alpha") == 0 ? value / 1000000 + 7 : (value - 7) * 1000000;
        *ret_uncertainty_ns = 500000;
        return 0;
}

static int stub_now(void *core, size_t index, int64_t *ret_value, uint64_t *ret_uncertainty_ns) {
        const BusDomainInfo *d;
        const char *domain;

        if (index >= N_STUB)
                return -ENOENT;
        d = &stub_domains[index];
        domain = d->name;
        if (!d->available)
                return -ENODEV;
        if (strcmp(domain, "island") == 0)
                return -ENODATA;
        *ret_value = strcmp(domain, "alpha") == 0 ? 123456789 : 130;
        *ret_uncertainty_ns = d->uncertainty_ns;
        return 0;
}

static int stub_export_snapshots(void *core, char **ret_json) {
        char *s = strdup("{\"snapshots\":[]}");

        if (!s)
                return -ENOMEM;
        *ret_json = s;
        return 0;
}

static const char *stub_version(void *core) {
        return "9.8.7-test";
}

static const char *stub_reference_domain(void *core) {
        return "alpha";
}

static void stub_client_activity(void *core) {
        StubCore *c = core;

        atomic_fetch_add(&c->activity, 1);
}

static int stub_shared_table_fd(void *core) {
        StubCore *c = core;

        switch (atomic_load(&c->table_mode)) {
        case STUB_TABLE_FD:
                return c->table_fd >= 0 ? c->table_fd : -EBADF;
        case STUB_TABLE_NONE:
                return -ENODEV;
        default:
                return -EIO;
        }
}

static int stub_push_snapshot(void *core, const char *sender, const BusClockReading *clocks, size_t n,
                              BusPushFailure *ret_failure) {
        StubCore *c = core;

        atomic_fetch_add(&c->pushes, 1);
        atomic_store(&c->push_n, (int) n);
        atomic_store(&c->push_sender_set, sender != NULL);
        for (size_t i = 0; i < n; i++) {
                if (strcmp(clocks[i].name, "taken") == 0) {
                        *ret_failure = (BusPushFailure) { .index = i, .reason = "the domain belongs to another client" };
                        return -EEXIST;
                }
                if (strcmp(clocks[i].name, "full") == 0) {
                        *ret_failure = (BusPushFailure) { .index = SIZE_MAX, .reason = "no room" };
                        return -EDQUOT;
                }
        }
        return 0;
}

/* A sealed memfd as the daemon's would be, holding a known text. */
static int stub_table_new(void) {
        int fd = memfd_create("stub-table", MFD_CLOEXEC | MFD_ALLOW_SEALING);

        if (fd < 0)
                return -errno;
        if (write(fd, STUB_TABLE_TEXT, strlen(STUB_TABLE_TEXT)) != (ssize_t) strlen(STUB_TABLE_TEXT) ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
                int r = -errno;

                close(fd);
                return r < 0 ? r : -EIO;
        }
        return fd;
}

const BusCoreOps stub_ops = {
        .count_domains = stub_count_domains,
        .get_domain = stub_get_domain,
        .resolve = stub_resolve,
        .convert = stub_convert,
        .now = stub_now,
        .export_snapshots = stub_export_snapshots,
        .version = stub_version,
        .reference_domain = stub_reference_domain,
        .client_activity = stub_client_activity,
        .shared_table_fd = stub_shared_table_fd,
        .push_snapshot = stub_push_snapshot,
};

/* ---- the server thread ---- */

static int on_command(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Server *srv = userdata;
        char c = 'q';

        if (read(fd, &c, 1) != 1 || c == 'q')
                return sd_event_exit(sd_event_source_get_event(s), 0);
        if (c == 'd') {
                atomic_store(&srv->emit_bad_rc,
                             bus_api_emit_discontinuity(srv->api, "Bad Name", 0, 0, BUS_DISCONTINUITY_STEP));
                (void) bus_api_emit_discontinuity(srv->api, "beta", 1000, -2000, BUS_DISCONTINUITY_STEP);
        } else if (c == 'c')
                (void) bus_api_emit_domains_changed(srv->api);
        return 0;
}

static void *server_main(void *userdata) {
        Server *srv = userdata;
        sd_event *e = NULL;
        sd_bus *bus = NULL;
        sd_id128_t id;
        int r;

        r = sd_event_new(&e);
        if (r >= 0)
                r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_fd(bus, srv->fd, srv->fd);
        if (r >= 0)
                r = sd_id128_randomize(&id);
        if (r >= 0)
                r = sd_bus_set_server(bus, 1, id);
        if (r >= 0)
                r = sd_bus_set_anonymous(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = bus_api_new(bus, srv->ops, &srv->core, &srv->api);
        if (r >= 0)
                r = sd_bus_attach_event(bus, e, 0);
        if (r >= 0)
                r = sd_event_add_io(e, NULL, srv->cmd_read, EPOLLIN, on_command, srv);
        atomic_store(&srv->setup_rc, r);
        if (r >= 0)
                (void) sd_event_loop(e);

        srv->api = bus_api_free(srv->api);
        if (bus)
                sd_bus_flush_close_unref(bus);
        else
                close(srv->fd);
        sd_event_unref(e);
        return NULL;
}

int server_start(Server *srv, int fd) {
        return server_start_with(srv, fd, &stub_ops);
}

int server_start_with(Server *srv, int fd, const BusCoreOps *ops) {
        int cmd[2];

        *srv = (Server) { .fd = fd, .ops = ops };
        srv->core.table_fd = stub_table_new();
        if (srv->core.table_fd < 0 || pipe(cmd) < 0) {
                int r = srv->core.table_fd < 0 ? srv->core.table_fd : -errno;

                if (srv->core.table_fd >= 0)
                        close(srv->core.table_fd);
                close(fd);
                return r;
        }
        srv->cmd_read = cmd[0];
        srv->cmd_write = cmd[1];
        if (pthread_create(&srv->thread, NULL, server_main, srv) != 0) {
                close(fd);
                close(cmd[0]);
                close(cmd[1]);
                close(srv->core.table_fd);
                return -EAGAIN;
        }
        return 0;
}

int server_start_pair(Server *srv, const BusCoreOps *ops, int *ret_client_fd) {
        int pair[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        r = server_start_with(srv, pair[0], ops);
        if (r < 0) {
                close(pair[1]);
                return r;
        }
        *ret_client_fd = pair[1];
        return 0;
}

void server_stop(Server *srv) {
        (void) !write(srv->cmd_write, "q", 1);
        pthread_join(srv->thread, NULL);
        close(srv->cmd_read);
        close(srv->cmd_write);
        close(srv->core.table_fd);
}
