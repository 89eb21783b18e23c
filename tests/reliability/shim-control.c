/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shim-control.h"

int shim_connect(const char *path, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (!path || strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

static int parse_reply(char *text, ShimReply *ret) {
        ShimReply reply = {};
        char *save = NULL, *field;
        long long raw_ns;
        unsigned wakes;
        int consumed = 0;

        if (sscanf(text, "ok %lld %u %n", &raw_ns, &wakes, &consumed) < 2 || consumed == 0)
                return strncmp(text, "error", 5) == 0 ? -EIO : -EBADMSG;
        reply.raw_ns = raw_ns;
        reply.wakes = wakes;
        for (field = strtok_r(text + consumed, " ", &save); field; field = strtok_r(NULL, " ", &save)) {
                ShimClock *c;
                long long offset_ns, rate_ppb, anchor_ns;
                char *colon = strchr(field, ':');

                if (!colon || (size_t) (colon - field) >= sizeof(c->name) || reply.n_clocks == SHIM_CLOCKS_MAX)
                        return -EBADMSG;
                if (sscanf(colon + 1, "%lld:%lld:%lld", &offset_ns, &rate_ppb, &anchor_ns) != 3)
                        return -EBADMSG;
                c = &reply.clocks[reply.n_clocks++];
                memcpy(c->name, field, (size_t) (colon - field));
                c->name[colon - field] = 0;
                c->offset_ns = offset_ns;
                c->rate_ppb = rate_ppb;
                c->anchor_ns = anchor_ns;
        }
        *ret = reply;
        return 0;
}

int shim_command(int fd, const char *command, ShimReply *ret) {
        char reply[1024];
        ShimReply parsed;
        ssize_t n;
        int r;

        if (send(fd, command, strlen(command), MSG_NOSIGNAL) < 0)
                return -errno;
        do
                n = recv(fd, reply, sizeof(reply) - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return -ECONNRESET;
        reply[n] = 0;
        r = parse_reply(reply, &parsed);
        if (r < 0)
                return r;
        if (ret)
                *ret = parsed;
        return 0;
}

const ShimClock *shim_reply_clock(const ShimReply *reply, const char *name) {
        for (size_t i = 0; i < reply->n_clocks; i++)
                if (strcmp(reply->clocks[i].name, name) == 0)
                        return &reply->clocks[i];
        return NULL;
}

int64_t shim_shifted_ns(const ShimClock *c, int64_t value_ns) {
        return value_ns + c->offset_ns + (int64_t) ((__int128) (value_ns - c->anchor_ns) * c->rate_ppb / 1000000000);
}
