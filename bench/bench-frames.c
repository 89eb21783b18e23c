/* SPDX-License-Identifier: MIT */

/* `timeconv frames` on a large concatenated dump: successive `dumpsys SurfaceFlinger --latency`
 * dumps of 127 rows, each half new (a script polling a 60 Hz layer every second), 5,000,000 rows
 * and more. The floor, in the same run, is reading the same file and finding its lines; the
 * frames library alone (parse, merge, statistics) is timed in this process too. One JSON object.
 * usage: bench-frames TIMECONV */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frames-stats.h"
#include "time-util.h"

#define ROWS_MIN 5000000
#define ROWS_PER_DUMP 127
#define NEW_PER_DUMP 64
#define REFRESH_NS INT64_C(16666667)
#define RUNS 3

static volatile uint64_t sink;

/* Writes the dump; the number of rows. */
static uint64_t write_dump(FILE *f) {
        uint64_t rows = 0;
        int64_t base_ns = INT64_C(123456789000000);

        for (uint64_t dump = 0; rows < ROWS_MIN; dump++) {
                fprintf(f, "%" PRId64 "\n", REFRESH_NS);
                for (uint64_t i = 0; i < ROWS_PER_DUMP; i++, rows++) {
                        uint64_t k = dump * NEW_PER_DUMP + i;
                        /* A late frame every 97, a little jitter on all. */
                        int64_t present_ns = base_ns + (int64_t) k * REFRESH_NS + (int64_t) (k / 97) * REFRESH_NS +
                                             (int64_t) (k % 13) * 20000;

                        if (i == ROWS_PER_DUMP - 1)     /* the newest fence has not signalled */
                                fprintf(f, "%" PRId64 "\t9223372036854775807\t9223372036854775807\n",
                                        present_ns - 2 * REFRESH_NS);
                        else
                                fprintf(f, "%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", present_ns - 2 * REFRESH_NS,
                                        present_ns, present_ns - REFRESH_NS / 2);
                }
        }
        return rows;
}

/* read() the file and count its lines, as the CLI's reader must at least. */
static int64_t floor_ns(const char *path) {
        static char buf[1 << 20];
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
        uint64_t lines = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t k;

        if (fd < 0)
                return -1;
        while ((k = read(fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; (p = memchr(p, '\n', (size_t) (buf + k - p))); p++)
                        lines++;
        close(fd);
        sink += lines;
        return clock_now_ns(CLOCK_MONOTONIC) - t0;
}

static int64_t cli_ns(const char *timeconv, const char *path) {
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
        int status;
        pid_t pid = fork();

        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                if (null < 0 || dup2(null, 1) < 0)
                        _exit(127);
                execl(timeconv, timeconv, "frames", "--json", path, (char *) NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        return clock_now_ns(CLOCK_MONOTONIC) - t0;
}

static int64_t lib_ns(const char *path, size_t *ret_frames) {
        struct stat st;
        FramesLog *log = NULL;
        FramesError error;
        FramesStats s;
        int64_t t0;
        char *text;
        int fd = open(path, O_RDONLY | O_CLOEXEC), r;

        if (fd < 0 || fstat(fd, &st) < 0)
                return -1;
        text = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        close(fd);
        if (text == MAP_FAILED)
                return -1;
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = frames_log_new(&log);
        if (r >= 0)
                r = frames_parse_text(log, text, (size_t) st.st_size, &error);
        if (r >= 0)
                r = frames_stats_compute(log->frames, log->n_frames, 0, &s);
        t0 = clock_now_ns(CLOCK_MONOTONIC) - t0;
        if (r >= 0) {
                *ret_frames = log->n_frames;
                sink += (uint64_t) s.perfdog_jank;
                frames_stats_done(&s);
        }
        frames_log_free(log);
        munmap(text, (size_t) st.st_size);
        return r < 0 ? -1 : t0;
}

static int64_t best(int64_t a, int64_t b) {
        return a < 0 ? b : b < 0 || a < b ? a : b;
}

int main(int argc, char **argv) {
        char path[] = "/tmp/bench-frames-XXXXXX";
        int64_t floor_best = -1, cli_best = -1, lib_best = -1;
        size_t frames = 0;
        uint64_t rows;
        struct stat st;
        FILE *f;
        int fd;

        if (argc != 2) {
                fprintf(stderr, "usage: %s TIMECONV\n", argv[0]);
                return 2;
        }
        fd = mkstemp(path);
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
                fprintf(stderr, "bench-frames: cannot create %s: %m\n", path);
                return 1;
        }
        rows = write_dump(f);
        if (fclose(f) != 0 || stat(path, &st) < 0) {
                fprintf(stderr, "bench-frames: cannot write %s\n", path);
                unlink(path);
                return 1;
        }
        for (int i = 0; i < RUNS; i++) {
                floor_best = best(floor_best, floor_ns(path));
                cli_best = best(cli_best, cli_ns(argv[1], path));
                lib_best = best(lib_best, lib_ns(path, &frames));
        }
        unlink(path);
        if (floor_best <= 0 || cli_best <= 0 || lib_best <= 0) {
                fprintf(stderr, "bench-frames: a run failed\n");
                return 1;
        }
        printf("{\"rows\":%" PRIu64 ",\"frames\":%zu,\"file_bytes\":%lld,"
               "\"frames_rows_per_s\":%.0f,\"frames_lib_rows_per_s\":%.0f,\"floor_read_rows_per_s\":%.0f,"
               "\"cli_over_floor\":%.2f,\"lib_over_floor\":%.2f,"
               "\"targets\":{\"rows_at_least_5000000\":%s}}\n",
               rows, frames, (long long) st.st_size, rows / (cli_best / 1e9), rows / (lib_best / 1e9),
               rows / (floor_best / 1e9), (double) cli_best / (double) floor_best,
               (double) lib_best / (double) floor_best, rows >= ROWS_MIN ? "true" : "false");
        return 0;
}
