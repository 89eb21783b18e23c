/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "harness-proc.h"
#include "time-util.h"

int proc_ms_left(int64_t deadline_ns) {
        int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);

        if (left_ns <= 0)
                return 0;
        /* Round up, so that poll() does not spin on a deadline less than 1 ms away. */
        return (int) ((left_ns + 999999) / 1000000);
}

/* Only async-signal-safe calls and _exit() from here on: we are a forked child. */
static void __attribute__((noreturn)) child(const ProcSpawn *s, pid_t parent) {
        int null_fd;

        /* If the test dies, so does everything it started. The check closes the race with a
         * parent that died before prctl(). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(127);

        null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd < 0)
                _exit(127);
        if (dup2(null_fd, STDIN_FILENO) < 0 ||
            dup2(s->stdout_fd >= 0 ? s->stdout_fd : null_fd, STDOUT_FILENO) < 0 ||
            dup2(s->stderr_fd >= 0 ? s->stderr_fd : null_fd, STDERR_FILENO) < 0)
                _exit(127);
        if (s->fd3 == 3) {
                if (fcntl(3, F_SETFD, 0) < 0)
                        _exit(127);
        } else if (s->fd3 >= 0 && dup2(s->fd3, 3) < 0)
                _exit(127);

        /* Single-threaded until exec: changing the environment here is safe enough. */
        for (const char *const *u = s->env_unset; u && *u; u++)
                unsetenv(*u);
        for (const char *const *e = s->env_set; e && *e; e++)
                putenv((char *) *e);

        execvp(s->argv[0], (char *const *) s->argv);
        _exit(127);
}

int proc_spawn(const ProcSpawn *s, pid_t *ret_pid, int *ret_pidfd) {
        pid_t parent = getpid(), pid;
        int pidfd;

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                child(s, parent);

        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                int r = -errno;

                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return r;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

int proc_pidfd_open(pid_t pid, int *ret_pidfd) {
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);

        if (pidfd < 0)
                return -errno;
        *ret_pidfd = pidfd;
        return 0;
}

int proc_signal(int pidfd, int sig) {
        if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
                return -errno;
        return 0;
}

int proc_wait(int pidfd, pid_t pid, bool is_child, int timeout_ms, int *ret_status) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        int status = 0;

        for (;;) {
                struct pollfd p = { .fd = pidfd, .events = POLLIN };
                int n = poll(&p, 1, timeout_ms < 0 ? -1 : proc_ms_left(deadline_ns));

                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0)
                        break;
                if (n == 0)
                        return -ETIMEDOUT;
        }
        if (is_child && waitpid(pid, &status, 0) < 0)
                return -errno;
        if (ret_status)
                *ret_status = status;
        return 0;
}

int proc_read_fd(int fd, char **ret, size_t *ret_size) {
        size_t size = 0, allocated = 4096;
        char *buf = malloc(allocated);

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                if (allocated - size < 2048) {
                        char *b = realloc(buf, allocated * 2);

                        if (!b) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = b;
                        allocated *= 2;
                }
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;

                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        buf[size] = 0;
        *ret = buf;
        if (ret_size)
                *ret_size = size;
        return 0;
}

int proc_read_file(const char *path, char **ret, size_t *ret_size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), r;

        if (fd < 0)
                return -errno;
        r = proc_read_fd(fd, ret, ret_size);
        close(fd);
        return r;
}

int proc_write_file(const char *path, const char *text) {
        size_t len = strlen(text);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), r = 0;

        if (fd < 0)
                return -errno;
        if (write(fd, text, len) != (ssize_t) len)
                r = -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int proc_rm_rf(const char *path) {
        if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
                return -errno;
        return 0;
}

/* One "Key:   N kB" line of /proc/PID/status (never its first line, Name:). */
static int status_kib(const char *status, const char *key, int64_t *ret) {
        char line[32];
        const char *p;
        long long kib;

        snprintf(line, sizeof(line), "\n%s:", key);
        p = strstr(status, line);
        if (!p || sscanf(p + strlen(line), "%lld", &kib) != 1)
                return -EBADMSG;
        *ret = kib;
        return 0;
}

static int read_status(pid_t pid, char **ret) {
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        return proc_read_file(path, ret, NULL);
}

int proc_rss_kib(pid_t pid, int64_t *ret) {
        _cleanup_free_ char *status = NULL;
        int r;

        r = read_status(pid, &status);
        return r < 0 ? r : status_kib(status, "VmRSS", ret);
}

int proc_count_fds(pid_t pid) {
        char path[64];
        DIR *d;
        int n = 0;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        if (!d)
                return -errno;
        for (struct dirent *e; (e = readdir(d)); )
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
}

int proc_usage(pid_t pid, ProcUsage *ret) {
        _cleanup_free_ char *status = NULL;
        ProcUsage u;
        int r;

        r = read_status(pid, &status);
        if (r < 0)
                return r;
        if (status_kib(status, "VmRSS", &u.rss_kib) < 0 || status_kib(status, "RssAnon", &u.rss_anon_kib) < 0 ||
            status_kib(status, "RssFile", &u.rss_file_kib) < 0 || status_kib(status, "RssShmem", &u.rss_shmem_kib) < 0)
                return -EBADMSG;
        u.n_fds = proc_count_fds(pid);
        if (u.n_fds < 0)
                return u.n_fds;
        *ret = u;
        return 0;
}

size_t proc_count_in(const char *text, const char *what) {
        size_t n = 0;

        for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
                n++;
        return n;
}

int proc_wait_log(const char *path, size_t offset, const char *what, size_t n, int timeout_ms, size_t *ret_size,
                  char **ret_text) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000;
        int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK), r;
        char events[4096];

        if (fd < 0 || inotify_add_watch(fd, path, IN_MODIFY) < 0) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return r;
        }
        for (;;) {
                char *text = NULL;
                size_t size = 0;

                r = proc_read_file(path, &text, &size);
                if (r >= 0 && proc_count_in(text + (offset <= size ? offset : size), what) >= n) {
                        *ret_size = size;
                        if (ret_text)
                                *ret_text = text;
                        else
                                free(text);
                        break;
                }
                free(text);
                if (r < 0)
                        break;
                r = poll(&(struct pollfd) { .fd = fd, .events = POLLIN }, 1, proc_ms_left(deadline_ns));
                if (r == 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                while (read(fd, events, sizeof(events)) > 0)
                        ;
        }
        close(fd);
        return r < 0 ? r : 0;
}
