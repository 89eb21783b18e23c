/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Everything fd has left to read (a pipe, a special file, a regular one), in one malloc'd buffer
 * the caller frees: -EFBIG once it holds max_bytes and there is more (SIZE_MAX: no limit),
 * -ENOMEM, or read()'s errno. EINTR is retried. */
int read_fd_whole(int fd, size_t max_bytes, void **ret, size_t *ret_size);

/* All size bytes of buf to fd, write() after write() (a pipe takes a part at a time), EINTR
 * retried: 0, write()'s errno, or -EIO for a write that took nothing. */
int write_fd_whole(int fd, const void *buf, size_t size);
