/* SPDX-License-Identifier: MIT */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirent-util.h"
#include "x11-display.h"
#include "xwayland.h"

bool xwayland_session_is_wayland(const char *wayland_display, const char *session_type) {
        return (wayland_display && wayland_display[0]) || (session_type && strcmp(session_type, "wayland") == 0);
}

int xwayland_display_number(const char *display, unsigned *ret) {
        const char *colon;
        unsigned long n;
        char *end;

        if (!display)
                return -EINVAL;
        colon = strrchr(display, ':');
        /* ":N" and "unix:N" are this machine's; "host:N" is not (and "host::N" is DECnet). */
        if (!colon || (colon != display && strncmp(display, "unix:", 5) != 0) || !isdigit((unsigned char) colon[1]))
                return -EINVAL;
        errno = 0;
        n = strtoul(colon + 1, &end, 10);
        if (errno != 0 || n > 65535 || (*end && *end != '.'))
                return -EINVAL;
        *ret = (unsigned) n;
        return 0;
}

/* Up to size - 1 bytes of a file, NUL-terminated; how many, or -errno. */
static ssize_t read_small(int dir_fd, const char *path, char *buf, size_t size) {
        int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        if (n < 0)
                n = -errno;
        close(fd);
        if (n >= 0)
                buf[n] = 0;
        return n;
}

/* Whether pid (a directory of proc) is Xwayland with the argument want (":N"). */
static bool serves(int proc_fd, const char *pid, const char *want) {
        char path[64], buf[4096];
        ssize_t n;

        snprintf(path, sizeof(path), "%s/comm", pid);
        if (read_small(proc_fd, path, buf, sizeof(buf)) <= 0 || strcmp(buf, "Xwayland\n") != 0)
                return false;
        snprintf(path, sizeof(path), "%s/cmdline", pid);
        n = read_small(proc_fd, path, buf, sizeof(buf));
        /* The arguments, NUL-separated (argv[0] too: it is never ":N"). */
        for (ssize_t i = 0; i < n; i += (ssize_t) strlen(buf + i) + 1)
                if (strcmp(buf + i, want) == 0)
                        return true;
        return false;
}

int xwayland_find(const char *proc, unsigned display_number, pid_t *ret_pid) {
        _cleanup_closedir_ DIR *d = opendir(proc);
        char want[16];
        struct dirent *e;

        if (!d)
                return -errno;
        snprintf(want, sizeof(want), ":%u", display_number);
        while ((e = readdir(d))) {
                char *end;
                long pid;

                if (!isdigit((unsigned char) e->d_name[0]))
                        continue;
                pid = strtol(e->d_name, &end, 10);
                if (*end || pid <= 0 || !serves(dirfd(d), e->d_name, want))
                        continue;
                *ret_pid = (pid_t) pid;
                return 0;
        }
        return -ESRCH;
}

void xwayland_reason(const char *display, char *reason, size_t size) {
        snprintf(reason, size, "Wayland session: no Xwayland runs on %s (timeconvd does not start one; it "
                 "connects once Xwayland runs)", display);
}

int xwayland_display_set(X11Display *x, const char *name, bool wayland, const char *no_display, pid_t *ret_pid) {
        char reason[X11_DISPLAY_REASON_MAX];
        unsigned n;
        pid_t pid = 0;
        int r;

        /* Not a display of this machine (ssh -X, another host): no Xwayland of ours. */
        if (!name || !name[0] || !wayland || xwayland_display_number(name, &n) < 0) {
                r = x11_display_set(x, name, no_display);
                if (r >= 0)
                        *ret_pid = 0;
                return r;
        }
        if (xwayland_find("/proc", n, &pid) < 0) {
                xwayland_reason(name, reason, sizeof(reason));
                r = x11_display_set(x, NULL, reason);
                if (r >= 0)
                        *ret_pid = 0;
                return r;
        }
        r = x11_display_set(x, name, no_display);
        if (r >= 0)
                *ret_pid = pid;
        return r;
}
