/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "alloc-util.h"
#include "cleanup.h"
#include "fd-util.h"

int read_fd_whole(int fd, size_t max_bytes, void **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        for (;;) {
                /* One byte past the limit at most: enough to tell "more" from "exactly max_bytes". */
                size_t room = max_bytes - size, want;
                ssize_t n;

                if (size == allocated) {
                        /* Doubling: a pipe of unknown length costs log2(size) copies. */
                        int r = GREEDY_REALLOC(buf, allocated, size + 1, 64 * 1024);

                        if (r < 0)
                                return r;
                }
                want = allocated - size;
                if (room < SIZE_MAX && want > room + 1)
                        want = room + 1;
                n = read(fd, buf + size, want);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > max_bytes)
                        return -EFBIG;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

int write_fd_whole(int fd, const void *buf, size_t size) {
        const char *p = buf;

        while (size > 0) {
                ssize_t n = write(fd, p, size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                p += n;
                size -= (size_t) n;
        }
        return 0;
}
