/* SPDX-License-Identifier: MIT */

/* basic/fd-util.c: read_fd_whole() takes exactly up to its limit, from a pipe and from a file of
 * every size around the limit and around its 64 KiB first allocation; write_fd_whole() writes
 * what it is given. */

#define _GNU_SOURCE

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fd-util.h"
#include "tap.h"

/* A file (memfd) or, when small enough for the pipe's buffer, a pipe holding size bytes of a
 * known pattern, positioned at its start; -errno. */
static int source(bool pipe_wanted, size_t size, int *ret_fd) {
        char *data = malloc(size ? size : 1);
        int fd[2], r = 0;

        if (!data)
                return -ENOMEM;
        for (size_t i = 0; i < size; i++)
                data[i] = (char) (i * 7 + 3);
        if (pipe_wanted) {
                if (pipe(fd) < 0)
                        r = -errno;
        } else {
                fd[0] = fd[1] = memfd_create("fd-util", MFD_CLOEXEC);
                if (fd[0] < 0)
                        r = -errno;
        }
        if (r >= 0)
                r = write_fd_whole(fd[1], data, size);
        if (r >= 0 && pipe_wanted)
                close(fd[1]);
        if (r >= 0 && !pipe_wanted && lseek(fd[0], 0, SEEK_SET) < 0)
                r = -errno;
        free(data);
        if (r < 0)
                return r;
        *ret_fd = fd[0];
        return 0;
}

static void check(bool pipe_wanted, size_t size, size_t max_bytes) {
        void *data = NULL;
        size_t got = 0;
        bool same = true;
        int fd, r;

        r = source(pipe_wanted, size, &fd);
        if (r < 0) {
                ok(false, "%zu bytes in a %s: %s", size, pipe_wanted ? "pipe" : "file", strerror(-r));
                return;
        }
        r = read_fd_whole(fd, max_bytes, &data, &got);
        close(fd);
        if (r == 0)
                for (size_t i = 0; i < got; i++)
                        same &= ((char *) data)[i] == (char) (i * 7 + 3);
        if (size <= max_bytes)
                ok(r == 0 && got == size && same, "%zu bytes from a %s, limit %zu: all of them (%d, %zu)", size,
                   pipe_wanted ? "pipe" : "file", max_bytes, r, got);
        else
                ok(r == -EFBIG, "%zu bytes from a %s, limit %zu: -EFBIG (%d)", size, pipe_wanted ? "pipe" : "file",
                   max_bytes, r);
        free(data);
}

int main(void) {
        static const size_t limits[] = { 0, 1, 1000, 65536, 300000 };

        for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
                for (int d = -1; d <= 1; d++) {
                        size_t size = limits[i] + (size_t) d;

                        if (d < 0 && limits[i] == 0)
                                continue;
                        check(false, size, limits[i]);
                        if (size < 32768)
                                check(true, size, limits[i]);
                }
        check(false, 300000, SIZE_MAX);
        return done_testing();
}
