/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Everything fd has left to read (a pipe, a special file, a regular one), in one malloc'd buffer
 * the caller frees: -EFBIG once it holds max_bytes and there is more (SIZE_MAX: no limit),
 * -ENOMEM, or read()'s errno. EINTR is retried. */
int read_fd_whole(int fd, size_t max_bytes, void **ret, size_t *ret_size);
