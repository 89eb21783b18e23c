/* SPDX-License-Identifier: MIT */

/* `timeconv frames` on two large inputs, each made in a memfd (no file on disk; the CLI opens
 * it as /proc/self/fd/N). Android: successive `dumpsys SurfaceFlinger --latency` dumps of 127
 * rows, each half new (a script polling a 60 Hz layer every second): 1,000,000 distinct rows,
 * some 2,000,000 lines, as every row but the newest comes twice; the rows counted are the
 * distinct ones (the frames the input describes), the lines read are reported beside them. The
 * desktop: libtimeconv's frame log of 1,000,000 rows as the probe writes them
 * (timeconv_frame_log_write_record(), every field known, a 60 Hz window and a second one). For
 * each, the floor in the same run is reading the same file and finding its lines; the frames
 * library alone (frames_parser_read(), merge, statistics and report) is timed in this process
 * too. Rows per second of wall time, and of the CLI's CPU time (what the code costs when other
 * work shares the machine; the 1-minute load average says how much did), each the best and the
 * median of five runs, the floor taken right before each. One JSON object.
 * usage: bench-frames TIMECONV */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frames-report.h"
#include "frames-stats.h"
#include "time-util.h"
#include "timeconv-framesync.h"

#define ROWS_MIN 1000000        /* distinct rows of each input: some 0.2 s of the CLI's work */
#define ROWS_PER_DUMP 127
#define NEW_PER_DUMP 64
#define REFRESH_NS INT64_C(16666667)
#define RUNS 5

static volatile uint64_t sink;

/* Writes the dump; the number of distinct rows (frame k is row i of dump d when
 * k = d * NEW_PER_DUMP + i: dump d adds NEW_PER_DUMP new ones to the last), its lines of rows in
 * *ret_lines. */
static uint64_t write_dump(FILE *f, uint64_t *ret_lines) {
        uint64_t rows = 0, lines = 0;
        int64_t base_ns = INT64_C(123456789000000);

        for (uint64_t dump = 0; rows < ROWS_MIN; dump++) {
                fprintf(f, "%" PRId64 "\n", REFRESH_NS);
                rows = dump * NEW_PER_DUMP + ROWS_PER_DUMP;
                for (uint64_t i = 0; i < ROWS_PER_DUMP; i++, lines++) {
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
        *ret_lines = lines;
        return rows;
}

/* The frame log: window 0x1a00003 at 60 Hz, a frame of window 0x2c00005 every tenth row. Every
 * row is distinct, one a line. */
static uint64_t write_log(FILE *f, uint64_t *ret_lines) {
        int64_t t_ns = INT64_C(123456789000000);
        uint64_t rows;

        for (rows = 0; rows < ROWS_MIN; rows++) {
                bool other = rows % 10 == 9;
                int64_t begin_ns = t_ns + (int64_t) (rows % 7) * 30000;
                int64_t drawn_ns = begin_ns + 4000000 + (int64_t) (rows % 13) * 1000;
                struct timeconv_frame_record rec = {
                        .times = {
                                .counter = 4 * (rows + 1),
                                .flags = TIMECONV_FRAME_PRESENTED | TIMECONV_FRAME_REFRESH_INTERVAL |
                                         TIMECONV_FRAME_DELAY,
                                .drawn_ns = drawn_ns,
                                .drawn_uncertainty_ns = 1500,
                                .presented_ns = drawn_ns + 12000000,
                                .presented_uncertainty_ns = 1500,
                                .refresh_interval_ns = REFRESH_NS,
                                .frame_delay_us = 2000,
                        },
                        .record_flags = TIMECONV_FRAME_RECORD_WINDOW | TIMECONV_FRAME_RECORD_DRAWN |
                                        TIMECONV_FRAME_RECORD_BEGIN | TIMECONV_FRAME_RECORD_END |
                                        TIMECONV_FRAME_RECORD_RAW | TIMECONV_FRAME_RECORD_DRAWN_RECEIVED |
                                        TIMECONV_FRAME_RECORD_TIMINGS_RECEIVED,
                        .window = other ? 0x2c00005 : 0x1a00003,
                        .begin_ns = begin_ns,
                        .end_ns = begin_ns + 2000000,
                        .drawn_x11_us = (uint64_t) (drawn_ns / 1000),
                        .presentation_offset_us = 12000,
                        .drawn_received_ns = drawn_ns + 200000,
                        .timings_received_ns = drawn_ns + 12300000,
                };

                if (timeconv_frame_log_write_record(f, &rec) < 0)
                        return 0;
                if (!other)
                        t_ns += REFRESH_NS;
        }
        *ret_lines = rows;
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

static int64_t rusage_ns(const struct rusage *u) {
        return ((int64_t) u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1000000000 +
               ((int64_t) u->ru_utime.tv_usec + u->ru_stime.tv_usec) * 1000;
}

/* The CLI's wall time, and in *ret_cpu_ns its CPU time (user and system): on a machine others
 * load, the CPU time says what the code costs, the wall time what the machine gave it. */
static int64_t cli_ns(const char *timeconv, const char *path, int64_t *ret_cpu_ns) {
        int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);
        struct rusage u;
        int status;
        pid_t pid = fork();

        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                if (null < 0 || dup2(null, 1) < 0)
                        _exit(127);
                execl(timeconv, timeconv, "frames", "--json", path, (char *) NULL);
                _exit(127);
        }
        if (pid < 0 || wait4(pid, &status, 0, &u) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        *ret_cpu_ns = rusage_ns(&u);
        return clock_now_ns(CLOCK_MONOTONIC) - t0;
}

static ssize_t read_at(void *userdata, void *buf, size_t size, uint64_t offset) {
        ssize_t k = pread(*(int *) userdata, buf, size, (off_t) offset);

        return k < 0 ? -errno : k;
}

/* The library as the CLI drives it (frames_parser_read(): the file read where its two threads
 * need it), the merge, statistics and report, without the process around it. */
static int64_t lib_ns(const char *path, size_t *ret_frames) {
        struct stat st;
        FramesReport *report = NULL;
        FramesParser *p = NULL;
        FramesLog *log = NULL;
        FramesError error;
        int64_t t0;
        int fd = open(path, O_RDONLY | O_CLOEXEC), r;

        if (fd < 0 || fstat(fd, &st) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        t0 = clock_now_ns(CLOCK_MONOTONIC);
        r = frames_log_new(&log);
        if (r >= 0)
                r = frames_parser_new(log, &p);
        if (r >= 0)
                r = frames_parser_read(p, read_at, &fd, (uint64_t) st.st_size, 0, &error);
        if (r >= 0)
                r = frames_parser_finish(p, &error);
        if (r >= 0)
                r = frames_report_new(log, "bench", 0, FRAMES_NO_WINDOW, &report);
        t0 = clock_now_ns(CLOCK_MONOTONIC) - t0;
        close(fd);
        if (r >= 0) {
                size_t frames = 0;

                for (size_t i = 0; i < report->n_sections; i++) {
                        frames += report->sections[i].stats.n_frames;
                        sink += (uint64_t) report->sections[i].stats.perfdog_jank;
                }
                *ret_frames = frames;
        }
        frames_report_free(report);
        frames_parser_free(p);
        frames_log_free(log);
        return r < 0 ? -1 : t0;
}

static int compare_ns(const void *x, const void *y) {
        int64_t a = *(const int64_t *) x, b = *(const int64_t *) y;

        return (a > b) - (a < b);
}

/* Sorts t[0..RUNS): the best is t[0], the median t[RUNS / 2]; -1 when a run failed. */
static int64_t sort_runs(int64_t *t) {
        qsort(t, RUNS, sizeof(*t), compare_ns);
        return t[0];
}

typedef struct Figures {
        uint64_t rows;          /* distinct */
        uint64_t lines;         /* rows in the input, repeated ones included */
        size_t frames;
        long long file_bytes;
        double cli_rows_per_s, lib_rows_per_s, floor_rows_per_s, cli_over_floor, lib_over_floor;
        double cli_cpu_rows_per_s;
        /* The median run of each: on a machine others share, the best is the luckiest. */
        double cli_median_rows_per_s, cli_cpu_median_rows_per_s, floor_median_rows_per_s;
} Figures;

/* Writes the input with write into a memfd, times the CLI, the library and the floor on it (best
 * and median of RUNS). */
static int measure(const char *timeconv, uint64_t (*write)(FILE *f, uint64_t *ret_lines), Figures *ret) {
        int64_t floor_t[RUNS], cli_t[RUNS], lib_t[RUNS], cpu_t[RUNS];
        size_t frames = 0;
        uint64_t rows, lines = 0;
        struct stat st;
        char path[64];
        FILE *f;
        /* Not close-on-exec: the CLI opens it by its /proc/self/fd path. */
        int fd = memfd_create("bench-frames", 0), fd_write;

        fd_write = fd >= 0 ? dup(fd) : -1;
        f = fd_write >= 0 ? fdopen(fd_write, "w") : NULL;
        if (!f) {
                fprintf(stderr, "bench-frames: cannot make a memfd: %m\n");
                if (fd_write >= 0)
                        close(fd_write);
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        rows = write(f, &lines);
        if (fclose(f) != 0 || rows == 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "bench-frames: cannot write the input\n");
                close(fd);
                return -1;
        }
        for (int i = 0; i < RUNS; i++) {
                /* The floor right before each CLI run: both see the machine as it was then. */
                floor_t[i] = floor_ns(path);
                cpu_t[i] = -1;
                cli_t[i] = cli_ns(timeconv, path, &cpu_t[i]);
                lib_t[i] = lib_ns(path, &frames);
        }
        close(fd);
        if (sort_runs(floor_t) <= 0 || sort_runs(cli_t) <= 0 || sort_runs(lib_t) <= 0 || sort_runs(cpu_t) <= 0) {
                fprintf(stderr, "bench-frames: a run failed\n");
                return -1;
        }
        *ret = (Figures) {
                .rows = rows,
                .lines = lines,
                .frames = frames,
                .file_bytes = (long long) st.st_size,
                .cli_rows_per_s = rows / (cli_t[0] / 1e9),
                .lib_rows_per_s = rows / (lib_t[0] / 1e9),
                .floor_rows_per_s = rows / (floor_t[0] / 1e9),
                .cli_cpu_rows_per_s = rows / (cpu_t[0] / 1e9),
                .cli_over_floor = (double) cli_t[0] / (double) floor_t[0],
                .lib_over_floor = (double) lib_t[0] / (double) floor_t[0],
                .cli_median_rows_per_s = rows / (cli_t[RUNS / 2] / 1e9),
                .cli_cpu_median_rows_per_s = rows / (cpu_t[RUNS / 2] / 1e9),
                .floor_median_rows_per_s = rows / (floor_t[RUNS / 2] / 1e9),
        };
        return 0;
}

int main(int argc, char **argv) {
        Figures android, log;
        double load = -1;

        if (argc != 2) {
                fprintf(stderr, "usage: %s TIMECONV\n", argv[0]);
                return 2;
        }
        if (measure(argv[1], write_dump, &android) < 0 || measure(argv[1], write_log, &log) < 0)
                return 1;
        /* What else ran: wall-clock figures are only as good as the machine was idle. */
        if (getloadavg(&load, 1) != 1)
                load = -1;
        /* The Android keys as they were (rows now distinct); the frame log's under "log_". */
        printf("{\"rows\":%" PRIu64 ",\"input_lines\":%" PRIu64 ",\"frames\":%zu,\"file_bytes\":%lld,"
               "\"frames_rows_per_s\":%.0f,\"frames_lib_rows_per_s\":%.0f,\"floor_read_rows_per_s\":%.0f,"
               "\"cli_over_floor\":%.2f,\"lib_over_floor\":%.2f,\"frames_rows_per_cpu_s\":%.0f,"
               "\"frames_median_rows_per_s\":%.0f,\"frames_median_rows_per_cpu_s\":%.0f,"
               "\"floor_read_median_rows_per_s\":%.0f,"
               "\"log_rows\":%" PRIu64 ",\"log_input_lines\":%" PRIu64 ",\"log_frames\":%zu,\"log_file_bytes\":%lld,"
               "\"log_rows_per_s\":%.0f,\"log_lib_rows_per_s\":%.0f,\"log_floor_read_rows_per_s\":%.0f,"
               "\"log_cli_over_floor\":%.2f,\"log_lib_over_floor\":%.2f,\"log_rows_per_cpu_s\":%.0f,"
               "\"log_median_rows_per_s\":%.0f,\"log_median_rows_per_cpu_s\":%.0f,"
               "\"log_floor_read_median_rows_per_s\":%.0f,"
               "\"load_average_1min\":%.2f,"
               "\"targets\":{\"rows_at_least_1000000\":%s,\"android_rows_per_s_at_least_5000000\":%s,"
               "\"log_rows_per_s_at_least_5000000\":%s}}\n",
               android.rows, android.lines, android.frames, android.file_bytes, android.cli_rows_per_s,
               android.lib_rows_per_s, android.floor_rows_per_s, android.cli_over_floor, android.lib_over_floor,
               android.cli_cpu_rows_per_s, android.cli_median_rows_per_s, android.cli_cpu_median_rows_per_s,
               android.floor_median_rows_per_s,
               log.rows, log.lines, log.frames, log.file_bytes, log.cli_rows_per_s, log.lib_rows_per_s,
               log.floor_rows_per_s, log.cli_over_floor, log.lib_over_floor, log.cli_cpu_rows_per_s,
               log.cli_median_rows_per_s, log.cli_cpu_median_rows_per_s, log.floor_median_rows_per_s, load,
               android.rows >= ROWS_MIN && log.rows >= ROWS_MIN ? "true" : "false",
               android.cli_rows_per_s >= 5e6 ? "true" : "false", log.cli_rows_per_s >= 5e6 ? "true" : "false");
        return 0;
}
