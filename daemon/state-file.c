/* SPDX-License-Identifier: MIT */

/* Where the state file lives, and reading and writing it safely: reading refuses anything that
 * is not a small regular file of ours (a symlink could point the daemon at any file, a FIFO
 * could block it), writing goes through a temporary file and a rename so that a crash or a full
 * disk at any moment leaves the old file or the new one, never a mix. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "dirent-util.h"
#include "fd-util.h"
#include "time-util.h"

int state_directory(char **ret) {
        const char *e;
        char *dir = NULL;

        /* systemd passes a colon-separated list when a unit has several; ours has one. */
        e = getenv("STATE_DIRECTORY");
        if (e && e[0] == '/')
                dir = strndup(e, strcspn(e, ":"));
        else if ((e = getenv("XDG_STATE_HOME")) && e[0] == '/') {
                if (asprintf(&dir, "%s/timeconv", e) < 0)
                        dir = NULL;
        } else if ((e = getenv("HOME")) && e[0] == '/') {
                if (asprintf(&dir, "%s/.local/state/timeconv", e) < 0)
                        dir = NULL;
        } else
                return -ENOENT;
        if (!dir)
                return -ENOMEM;
        *ret = dir;
        return 0;
}

void state_read_boot_id(char ret[STATE_BOOT_ID_MAX]) {
        _cleanup_(closep) int fd = -1;
        ssize_t n;

        ret[0] = 0;
        fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        n = read(fd, ret, STATE_BOOT_ID_MAX - 1);
        if (n <= 0) {
                ret[0] = 0;
                return;
        }
        ret[n] = 0;
        ret[strcspn(ret, "\n")] = 0;
}

static int fail(StateError *error, int r, const char *code, const char *text) {
        if (error) {
                error->code = code;
                snprintf(error->text, sizeof(error->text), "%s", text);
        }
        return r;
}

int state_load(const char *dir, State *ret, StateError *ret_error) {
        _cleanup_(closep) int dir_fd = -1, fd = -1;
        _cleanup_(freep) char *buf = NULL;
        size_t size = 0;
        struct stat st;

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return fail(ret_error, -errno, errno == ENOENT ? "missing" : "io", "cannot open the directory");
        /* O_NONBLOCK: a FIFO put in our place must not hang the daemon at open. */
        fd = openat(dir_fd, STATE_FILE_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ELOOP)
                return fail(ret_error, -ELOOP, "symlink", "a symbolic link, not followed");
        if (fd < 0)
                return fail(ret_error, -errno, errno == ENOENT ? "missing" : "io", "cannot open the file");
        if (fstat(fd, &st) < 0)
                return fail(ret_error, -errno, "io", "cannot stat the file");
        if (!S_ISREG(st.st_mode))
                return fail(ret_error, -EPERM, "not-regular", "not a regular file");
        if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return fail(ret_error, -EPERM, "not-ours", "owned by another user or writable by others");
        if (st.st_size > STATE_FILE_SIZE_MAX)
                return fail(ret_error, -EFBIG, "too-large", "larger than the limit");

        /* The size may change under us: read at most one byte past the limit, whatever fstat said. */
        buf = malloc(STATE_FILE_SIZE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        while (size <= STATE_FILE_SIZE_MAX) {
                ssize_t n = read(fd, buf + size, STATE_FILE_SIZE_MAX + 1 - size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return fail(ret_error, -errno, "io", "cannot read the file");
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        if (size > STATE_FILE_SIZE_MAX)
                return fail(ret_error, -EFBIG, "too-large", "larger than the limit");
        return state_parse(buf, size, ret, ret_error);
}

/* mkdir -p with mode for each directory it makes. */
static int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_(freep) char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *slash = strchr(p + 1, '/');; slash = strchr(slash + 1, '/')) {
                if (slash)
                        *slash = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                if (!slash)
                        return 0;
                *slash = '/';
        }
}

int state_save(const char *dir, const State *s) {
        _cleanup_(freep) char *text = NULL, *tmp = NULL, *path = NULL;
        _cleanup_(closep) int dir_fd = -1;
        int fd, r;

        r = state_format(s, &text);
        if (r < 0)
                return r;
        r = mkdir_parents(dir, 0700);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, STATE_FILE_NAME) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        if (asprintf(&path, "%s/%s", dir, STATE_FILE_NAME) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;

        /* mkostemp: a new file (O_EXCL), mode 0600, a name nobody can have put there first. */
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = write_fd_whole(fd, text, strlen(text));
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (close_nointr(fd) < 0 && r >= 0)
                r = -EIO;
        /* The rename makes the new content the file in one step; before it, the old one stands. */
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        /* And the rename itself reaches the disk. */
        if (fsync(dir_fd) < 0)
                return -errno;
        return 0;
}

/* mkostemp's names: the template's prefix and six characters of [A-Za-z0-9]. */
static bool is_temp_name(const char *name) {
        static const char prefix[] = "." STATE_FILE_NAME ".";
        size_t n = sizeof(prefix) - 1;

        if (strncmp(name, prefix, n) != 0 || strlen(name) != n + 6)
                return false;
        for (const char *p = name + n; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
                        return false;
        return true;
}

int state_remove_stale(const char *dir) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int removed = 0;

        d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                struct stat st;

                if (!is_temp_name(de->d_name))
                        continue;
                /* Not through a symlink, and only what this user's daemon could have made. */
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                    st.st_uid != geteuid())
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) >= 0)
                        removed++;
        }
        return removed;
}
