/* SPDX-License-Identifier: MIT */

/* The public entry points around the loader: version, errors, reading a file, conversion. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fd-util.h"
#include "timeconv-internal.h"

TIMECONV_EXPORT const char *timeconv_version(void) {
        return TIMECONV_VERSION;
}

TIMECONV_EXPORT const char *timeconv_strerror(int error) {
        switch (error) {
        case 0:
                return "success";
        case -ENOENT:
                return "unknown domain";
        case -ENOLINK:
                return "no path between the domains";
        case -ERANGE:
                return "out of range";
        case -EINVAL:
                return "invalid argument";
        case -EBADMSG:
                return "malformed snapshot file";
        case -ENOMEM:
                return "out of memory";
        case -ENODEV:
                return "domain unavailable or not calibrated yet";
        case -EHOSTDOWN:
                return "timeconvd is not running";
        case -ECONNRESET:
                return "the bus connection was lost";
        case -ETIMEDOUT:
                return "timeconvd did not answer";
        case -EDQUOT:
                return "timeconvd refused: too many requests";
        case -EOPNOTSUPP:
                return "not supported by the allowed paths";
        case -EPROTO:
                return "unexpected answer from timeconvd";
        case -ENOSPC:
                return "too many domain names";
        case -ECONNREFUSED:
                return "cannot connect to the bus";
        case -EEXIST:
                return "the domain belongs to another client";
        default:
                return "unexpected error";
        }
}

TIMECONV_EXPORT struct timeconv_snapshots *timeconv_snapshots_free(struct timeconv_snapshots *snapshots) {
        if (!snapshots)
                return NULL;
        snapshot_graph_free(snapshots->graph);
        free(snapshots);
        return NULL;
}

TIMECONV_EXPORT size_t timeconv_snapshots_count_domains(const struct timeconv_snapshots *snapshots) {
        return snapshots ? snapshot_graph_count(snapshots->graph) : 0;
}

TIMECONV_EXPORT const char *timeconv_snapshots_domain_name(const struct timeconv_snapshots *snapshots,
                                                           size_t index) {
        return snapshots ? snapshot_graph_name(snapshots->graph, index) : NULL;
}

TIMECONV_EXPORT int timeconv_snapshots_pair(const struct timeconv_snapshots *snapshots, int mode, const char *from,
                                            const char *to, struct timeconv_snapshots_pair *ret_pair) {
        size_t from_index, to_index;
        int r;

        if (!snapshots || !from || !to || !ret_pair ||
            (mode != TIMECONV_MODE_NEAREST && mode != TIMECONV_MODE_DRIFT))
                return -EINVAL;
        r = snapshot_graph_find(snapshots->graph, from, &from_index);
        if (r >= 0)
                r = snapshot_graph_find(snapshots->graph, to, &to_index);
        if (r < 0)
                return r;
        *ret_pair = (struct timeconv_snapshots_pair) {
                .snapshots = snapshots, .from = from_index, .to = to_index, .mode = mode,
        };
        return 0;
}

TIMECONV_EXPORT int timeconv_snapshots_pair_convert(const struct timeconv_snapshots_pair *pair, int64_t value,
                                                    int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        if (!pair || !pair->snapshots ||
            (pair->mode != TIMECONV_MODE_NEAREST && pair->mode != TIMECONV_MODE_DRIFT))
                return -EINVAL;
        return snapshot_graph_convert(pair->snapshots->graph,
                                      pair->mode == TIMECONV_MODE_DRIFT ? SNAPSHOT_MODE_DRIFT : SNAPSHOT_MODE_NEAREST,
                                      pair->from, pair->to, value, ret_value, ret_uncertainty_ns);
}

TIMECONV_EXPORT int timeconv_snapshots_convert(const struct timeconv_snapshots *snapshots, int mode,
                                               const char *from, const char *to, int64_t value,
                                               int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        struct timeconv_snapshots_pair pair;
        int r;

        if (!ret_value)
                return -EINVAL;
        r = timeconv_snapshots_pair(snapshots, mode, from, to, &pair);
        if (r < 0)
                return r;
        return timeconv_snapshots_pair_convert(&pair, value, ret_value, ret_uncertainty_ns);
}

TIMECONV_EXPORT int timeconv_snapshots_load(const char *path, struct timeconv_snapshots **ret,
                                            struct timeconv_error *ret_error) {
        void *data = NULL;
        size_t size = 0;
        int fd, r;

        if (!path || !ret) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument", "");
                return -EINVAL;
        }
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                snapshot_file_set_error(ret_error, 0, 0, "cannot open the file: ", strerror(-r));
                return r;
        }
        /* The whole file, so that errors can be located in its text. */
        r = read_fd_whole(fd, SNAPSHOT_FILE_MAX_BYTES, &data, &size);
        close(fd);
        if (r < 0) {
                snapshot_file_set_error(ret_error, 0, 0, "cannot read the file: ",
                          r == -EFBIG ? "larger than 1 GiB" : strerror(-r));
                return r;
        }
        r = timeconv_snapshots_load_buffer(data, size, ret, ret_error);
        free(data);
        return r;
}
