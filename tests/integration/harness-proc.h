/* SPDX-License-Identifier: MIT */
#pragma once

/* Process plumbing for the harness: spawning with a parent-death signal, waiting on a pidfd
 * with a timeout, reading files, removing a tree. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ProcSpawn {
        const char *const *argv;        /* argv[0] is looked up in PATH */
        const char *const *env_set;     /* "NAME=value", NULL-terminated; may be NULL */
        const char *const *env_unset;   /* names, NULL-terminated; may be NULL */
        int stdout_fd;                  /* -1: /dev/null */
        int stderr_fd;                  /* -1: /dev/null */
        int fd3;                        /* given to the child as fd 3; -1: none */
} ProcSpawn;

/* Forks and execs; the child gets SIGKILL when we die. *ret_pidfd refers to the child. */
int proc_spawn(const ProcSpawn *s, pid_t *ret_pid, int *ret_pidfd);

/* A pidfd for a process that is not our child (e.g. one the bus started). */
int proc_pidfd_open(pid_t pid, int *ret_pidfd);

int proc_signal(int pidfd, int sig);

/* Waits up to timeout_ms (< 0: forever) for the process to end; reaps it when is_child and
 * writes its wait status to *ret_status (0 otherwise). -ETIMEDOUT when it still runs. */
int proc_wait(int pidfd, pid_t pid, bool is_child, int timeout_ms, int *ret_status);

/* Milliseconds left until deadline_ns (CLOCK_MONOTONIC), never negative. */
int proc_ms_left(int64_t deadline_ns);

/* The whole of a file (or of fd to its end), NUL-terminated, malloc'ed. */
int proc_read_file(const char *path, char **ret, size_t *ret_size);

/* How often what stands in text. */
size_t proc_count_in(const char *text, const char *what);

/* Waits up to timeout_ms (on inotify, never sleeping) until the file at path, from offset on,
 * holds what n times: 0 with *ret_size its size then and *ret_text (may be NULL) its text. */
int proc_wait_log(const char *path, size_t offset, const char *what, size_t n, int timeout_ms, size_t *ret_size,
                  char **ret_text);

/* The resident set of process pid, in KiB (VmRSS); -EBADMSG when /proc says nothing of it. */
int proc_rss_kib(pid_t pid, int64_t *ret);

/* Resident memory from /proc/PID/status, and open fds. rss_kib (VmRSS) is the sum of the other
 * three. File pages are the binary's and libraries' text and data, mapped (64 KiB at a time)
 * when a code path first runs: clean, shared, dropped by the kernel at will. Anonymous and shmem
 * pages (the heap, mappings, the shared table's memfd) are the memory a process holds: a leak
 * shows there. */
typedef struct ProcUsage {
        int64_t rss_kib;
        int64_t rss_anon_kib;
        int64_t rss_file_kib;
        int64_t rss_shmem_kib;
        int n_fds;
} ProcUsage;

int proc_usage(pid_t pid, ProcUsage *ret);

/* What a process holds: anonymous and shmem, not file pages. */
static inline int64_t proc_usage_held_kib(const ProcUsage *u) {
        return u->rss_anon_kib + u->rss_shmem_kib;
}

/* The number of open fds of pid, or -errno. */
int proc_count_fds(pid_t pid);
int proc_read_fd(int fd, char **ret, size_t *ret_size);

int proc_write_file(const char *path, const char *text);

/* rm -rf, without following symlinks. */
int proc_rm_rf(const char *path);
