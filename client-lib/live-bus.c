/* SPDX-License-Identifier: MIT */

/* The D-Bus path: one method call of org.timeconv.Clock1 per request. Named errors become their
 * errno through the shared map (bus-errors.h), looked up here rather than registered with
 * sd-bus, which would be process-wide state. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bus-errors.h"
#include "cleanup.h"
#include "live-internal.h"

int live_bus_errno(const sd_bus_error *error, int r) {
        if (error && sd_bus_error_is_set(error)) {
                for (const sd_bus_error_map *m = bus_timeconv_errors; m->name; m++)
                        if (sd_bus_error_has_name(error, m->name))
                                return -m->code;
                if (sd_bus_error_has_name(error, SD_BUS_ERROR_UNKNOWN_METHOD) ||
                    sd_bus_error_has_name(error, SD_BUS_ERROR_UNKNOWN_INTERFACE))
                        return -EOPNOTSUPP;
                /* No owner, and no way to start one. */
                if (sd_bus_error_has_name(error, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
                    sd_bus_error_has_name(error, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                        return -EHOSTDOWN;
        }
        if (r == -ENOTCONN || r == -ECONNRESET || r == -EPIPE)
                return -ECONNRESET;
        return r < 0 ? r : -EIO;
}

int live_dispatch(struct timeconv *tc) {
        int r;

        do
                r = sd_bus_process(tc->bus, NULL);
        while (r > 0);
        return r;
}

int live_bus_call_message(struct timeconv *tc, sd_bus_message *m, sd_bus_message **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(tc->bus, m, LIVE_CALL_TIMEOUT_USEC, &error, ret);
        live_error_save(tc, &error);
        if (r < 0)
                r = live_bus_errno(&error, r);
        (void) live_dispatch(tc);
        return r < 0 ? r : 0;
}

/* Calls method; the reply stays in *ret. */
static int call(struct timeconv *tc, const char *method, sd_bus_message **ret, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(tc->bus, &m, BUS_API_SERVICE, BUS_API_OBJECT,
                                           BUS_API_INTERFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        return r < 0 ? r : live_bus_call_message(tc, m, ret);
}

static int take_uncertainty(uint64_t u, int64_t *ret) {
        if (u > (uint64_t) INT64_MAX)
                return -ERANGE;
        if (ret)
                *ret = (int64_t) u;
        return 0;
}

/* An answer of Convert or Now: a value and its bound. */
static int read_value(sd_bus_message *reply, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int64_t value;
        uint64_t u;
        int r;

        if (sd_bus_message_read(reply, "xt", &value, &u) < 0)
                return -EPROTO;
        r = take_uncertainty(u, ret_uncertainty_ns);
        if (r < 0)
                return r;
        *ret_value = value;
        return 0;
}

int live_bus_convert(struct timeconv *tc, const char *from, const char *to, int64_t value,
                     int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = call(tc, "Convert", &reply, "ssx", from, to, value);
        return r < 0 ? r : read_value(reply, ret_value, ret_uncertainty_ns);
}

int live_bus_now(struct timeconv *tc, const char *domain, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = call(tc, "Now", &reply, "s", domain);
        return r < 0 ? r : read_value(reply, ret_value, ret_uncertainty_ns);
}

/* The answers of ConvertMany or ConvertManyMemfd, checked and copied out (values and out_values
 * may be one array: the answers are read from the reply or the memfd). */
static int take_answers(const void *results, const void *uncertainties, size_t n, int64_t *out_values,
                        int64_t *out_uncertainty_ns) {
        for (size_t i = 0; i < n; i++) {
                uint64_t u;

                memcpy(&u, (const uint8_t *) uncertainties + i * sizeof(u), sizeof(u));
                if (u > (uint64_t) INT64_MAX)
                        return -ERANGE;
        }
        memmove(out_values, results, n * sizeof(int64_t));
        if (out_uncertainty_ns)
                memcpy(out_uncertainty_ns, uncertainties, n * sizeof(int64_t));
        return 0;
}

static int read_array(sd_bus_message *reply, char type, size_t n, const void **ret) {
        const void *p;
        size_t size;

        if (sd_bus_message_read_array(reply, type, &p, &size) < 0 || size != n * 8)
                return -EPROTO;
        *ret = p;
        return 0;
}

int live_bus_convert_many(struct timeconv *tc, const char *from, const char *to, const int64_t *values,
                          size_t n, int64_t *out_values, int64_t *out_uncertainty_ns) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const void *results, *uncertainties;
        int r;

        if (n > BUS_API_CONVERT_MANY_MAX)
                return -E2BIG;  /* the caller splits */
        r = sd_bus_message_new_method_call(tc->bus, &m, BUS_API_SERVICE, BUS_API_OBJECT,
                                           BUS_API_INTERFACE, "ConvertMany");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", from, to);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
        if (r >= 0)
                r = live_bus_call_message(tc, m, &reply);
        if (r < 0)
                return r;

        r = read_array(reply, 'x', n, &results);
        if (r < 0)
                return r;
        r = read_array(reply, 't', n, &uncertainties);
        if (r < 0)
                return r;
        return take_answers(results, uncertainties, n, out_values, out_uncertainty_ns);
}

int live_bus_convert_many_memfd(struct timeconv *tc, const char *from, const char *to, const int64_t *values,
                                size_t n, int64_t *out_values, int64_t *out_uncertainty_ns) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size = BUS_API_MEMFD_BYTES(n);
        unsigned owner_changes = tc->owner_changes;
        uint8_t *map;
        int r;

        if (n > BUS_API_CONVERT_MANY_MEMFD_MAX)
                return -E2BIG;  /* the caller splits */
        if (n == 0)
                return 0;
        /* This daemon said it has no such method: not a memfd and a round trip more each batch. */
        if (tc->memfd_none && tc->memfd_none_owner_changes == owner_changes)
                return -EOPNOTSUPP;
        /* No memfd here (a seccomp filter, no memory for one): the caller sends ConvertMany calls,
         * which need none. Sealed before the daemon sees it: it maps only a memfd that cannot
         * shrink under it. */
        fd = memfd_create("timeconv-many", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0 || ftruncate(fd, (off_t) size) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
                return -EOPNOTSUPP;
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return -EOPNOTSUPP;
        memcpy(map, values, n * sizeof(int64_t));

        r = sd_bus_message_new_method_call(tc->bus, &m, BUS_API_SERVICE, BUS_API_OBJECT,
                                           BUS_API_INTERFACE, "ConvertManyMemfd");
        if (r >= 0)
                r = sd_bus_message_append(m, "ssht", from, to, fd, (uint64_t) n);
        if (r >= 0)
                r = live_bus_call_message(tc, m, NULL);
        /* Unless the owner changed meanwhile: the answer may be the old daemon's. */
        if (r == -EOPNOTSUPP && owner_changes == tc->owner_changes) {
                tc->memfd_none = true;
                tc->memfd_none_owner_changes = owner_changes;
        }
        if (r >= 0)
                r = take_answers(map + n * sizeof(int64_t), map + 2 * n * sizeof(int64_t), n, out_values,
                                 out_uncertainty_ns);
        (void) munmap(map, size);
        return r;
}

int live_bus_export(struct timeconv *tc, char **ret_json) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *json;
        char *copy;
        int r;

        r = call(tc, "ExportSnapshots", &reply, NULL);
        if (r < 0)
                return r;
        if (sd_bus_message_read(reply, "s", &json) < 0)
                return -EPROTO;
        copy = strdup(json);
        if (!copy)
                return -ENOMEM;
        *ret_json = copy;
        return 0;
}

int live_bus_get_shared_table(struct timeconv *tc, int *ret_fd) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd, r;

        r = call(tc, "GetSharedTable", &reply, NULL);
        if (r < 0)
                return r;
        if (sd_bus_message_read(reply, "h", &fd) < 0)
                return -EPROTO;
        /* The message owns its fd and closes it with the message. */
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}
