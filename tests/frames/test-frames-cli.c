/* SPDX-License-Identifier: MIT */

/* `timeconv frames` end to end: its exit statuses, the keys and values of --json (jansson),
 * files and standard input merged alike, and --plot rendered by a real SVG renderer
 * (rsvg-convert) to a PNG of the size the SVG declares.
 * usage: test-frames-cli TIMECONV DATA_DIR */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define PLOT_WIDTH 960
#define PLOT_HEIGHT 480
#define PLOT_DESKTOP_HEIGHT 744

static const char *tc_path, *data_dir;
static char tmp_dir[] = "/tmp/test-frames-cli-XXXXXX";
static char *out, *err;

static char *read_fd(int fd) {
        off_t size = lseek(fd, 0, SEEK_END);
        char *text = malloc(size > 0 ? (size_t) size + 1 : 1);

        if (!text)
                abort();
        text[0] = '\0';
        if (size > 0 && pread(fd, text, (size_t) size, 0) == size)
                text[size] = '\0';
        close(fd);
        return text;
}

/* Runs argv[0] with argv, standard input from stdin_path (NULL: /dev/null); its exit status, or
 * -1. out and err hold what it wrote. */
static int run_in(const char *stdin_path, const char *const *argv) {
        int fd_out = memfd_create("out", MFD_CLOEXEC), fd_err = memfd_create("err", MFD_CLOEXEC);
        int status = 0;
        pid_t pid;

        free(out);
        free(err);
        out = err = NULL;
        if (fd_out < 0 || fd_err < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);

                if (in < 0 || dup2(in, 0) < 0 || dup2(fd_out, 1) < 0 || dup2(fd_err, 2) < 0)
                        _exit(127);
                execv(argv[0], (char *const *) argv);
                execvp(argv[0], (char *const *) argv);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0)
                return -1;
        out = read_fd(fd_out);
        err = read_fd(fd_err);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* timeconv frames ARGS... (NULL-terminated), file names relative to DATA_DIR when marked '@'. */
static int frames(const char *stdin_path, ...) {
        static char paths[16][4096];
        const char *argv[20] = { tc_path, "frames" };
        size_t n = 2;
        va_list ap;

        va_start(ap, stdin_path);
        for (const char *a; n < 18 && (a = va_arg(ap, const char *));) {
                if (a[0] == '@') {
                        snprintf(paths[n], sizeof(paths[n]), "%s/%s", data_dir, a + 1);
                        a = paths[n];
                }
                argv[n++] = a;
        }
        va_end(ap);
        argv[n] = NULL;
        return run_in(stdin_path, argv);
}

/* A usage error's exit status: 2, or EX_USAGE (64) since the CLI took sysexits.h's. */
static bool usage(int status) {
        if (status != 2 && status != 64)
                diag("exit status %d", status);
        return status == 2 || status == 64;
}

static json_t *json_out(void) {
        json_error_t e;
        json_t *j = json_loads(out ? out : "", 0, &e);

        if (!j)
                diag("not JSON: %s: %s", e.text, out ? out : "");
        return j;
}

/* The value at a dotted path such as "janks.chromium", NULL when a key is missing. */
static json_t *at(json_t *j, const char *path) {
        char key[64];

        while (j && *path) {
                size_t n = strcspn(path, ".");

                snprintf(key, sizeof(key), "%.*s", (int) n, path);
                j = json_object_get(j, key);
                path += n + (path[n] == '.');
        }
        return j;
}

static void test_json(void) {
        static const char *const keys[] = {
                "frames", "fps", "fps_per_second", "frame_interval_ms.mean", "frame_interval_ms.p50",
                "frame_interval_ms.p90", "frame_interval_ms.p99", "frame_interval_ms.min",
                "frame_interval_ms.max", "jitter_ms", "present_latency_ms.mean",
                "present_latency_ms.max", "janks.perfdog_jank", "janks.perfdog_bigjank",
                "janks.chromium", "late_frames", "ready_to_present_ms.mean", "refresh_period_ms",
        };
        bool all = true, nulls = true;
        json_t *j;

        is_int(frames(NULL, "--json", "@sf-basic.txt", NULL), 0, "--json: exit 0");
        j = json_out();
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (!at(j, keys[i])) {
                        diag("no key %s", keys[i]);
                        all = false;
                }
        ok(j && all, "--json: every key is there");
        ok(json_integer_value(at(j, "frames")) == 6 &&
           json_real_value(at(j, "frame_interval_ms.p90")) == 32.0 &&
           json_real_value(at(j, "jitter_ms")) == 6.4 &&
           json_integer_value(at(j, "janks.chromium")) == 1 &&
           json_integer_value(at(j, "late_frames")) == 1, "--json: the figures of sf-basic");
        json_decref(j);

        /* Nothing computable without two frames: null, not 0, and a failure. */
        is_int(frames(NULL, "--json", "@sf-zero.txt", NULL), 1, "no frames: exit 1");
        ok(strstr(err, "no figure could be computed") != NULL, "no frames: says so");
        j = json_out();
        for (size_t i = 1; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (i != 2 && !json_is_null(at(j, keys[i]))) {
                        diag("%s is not null", keys[i]);
                        nulls = false;
                }
        ok(j && json_integer_value(at(j, "frames")) == 0 && nulls, "no frames: every figure null");
        json_decref(j);

        is_int(frames(NULL, "--json", "--refresh-hz", "62.5", "@gfxinfo-android10.txt", NULL), 0,
               "--refresh-hz: exit 0");
        j = json_out();
        ok(json_integer_value(at(j, "late_frames")) == 1 && json_integer_value(at(j, "janks.chromium")) == 1 &&
           json_real_value(at(j, "refresh_period_ms")) == 16.0, "--refresh-hz 62.5: a 16 ms period");
        json_decref(j);

        is_int(frames(NULL, "--json", "@frames.jsonl", NULL), 0, "frame log: exit 0");
        j = json_out();
        ok(json_integer_value(at(j, "frames")) == 3 && json_integer_value(at(j, "rows.pending")) == 1 &&
           !strcmp(json_string_value(at(j, "format")), "frame log"), "frame log: 3 frames, 1 pending");
        json_decref(j);
}

/* The frame log by window: desktop.jsonl (its figures in test-frames-stats.c). */
static void test_desktop(void) {
        json_t *j;

        is_int(frames(NULL, "@desktop.jsonl", NULL), 0, "desktop: exit 0");
        ok(strstr(out, "sections        2") && strstr(out, "window          0x200003: 5 rows, 4 drawn (1 never)") &&
           strstr(out, "window          0x400005: 3 rows") && strstr(out, "timed by        drawn (no presentation"),
           "desktop text: a section per window, timed by drawn");
        ok(strstr(out, "end->drawn      mean 9.000 ms, p50 1.000") &&
           strstr(out, "drawn->presented n/a (no presentation times)") &&
           strstr(out, "FRAME_DRAWN msg mean 0.750 ms") &&
           strstr(out, "not identity: sent - converted p50 0.000 ms (identity on 3 of 4 frames)") &&
           strstr(out, "1 of 4 drawn times outside"), "desktop text: latencies, clock, causality");
        ok(strstr(out, "present latency n/a (no frame has a desired present time)\n") &&
           strstr(out, "ready->present  n/a (no frame has a ready time)\n") &&
           strstr(out, "late frames     n/a (no frame has a desired present time)\n") && !strstr(out, "n/a ms"),
           "desktop text: the figures of Android's times say why they are n/a");

        is_int(frames(NULL, "--json", "@desktop.jsonl", NULL), 0, "desktop --json: exit 0");
        j = json_out();
        ok(json_array_size(at(j, "windows")) == 2 && !at(j, "fps") &&
           json_integer_value(at(json_array_get(at(j, "windows"), 0), "window")) == 0x200003 &&
           !strcmp(json_string_value(at(json_array_get(at(j, "windows"), 0), "timed_by")), "drawn") &&
           json_real_value(at(json_array_get(at(j, "windows"), 1), "fps")) == 31.25 &&
           json_real_value(at(json_array_get(at(j, "windows"), 0), "desktop.end_to_drawn_ms.p90")) == 17.0 &&
           json_is_null(at(json_array_get(at(j, "windows"), 0), "desktop.drawn_to_presented_ms.p50")),
           "desktop --json: two windows, no figures at the top");
        json_decref(j);

        is_int(frames(NULL, "--json", "--window", "0x400005", "@desktop.jsonl", NULL), 0, "--window: exit 0");
        j = json_out();
        ok(json_array_size(at(j, "windows")) == 1 && json_real_value(at(j, "fps")) == 31.25 &&
           json_integer_value(at(j, "rows.read")) == 3, "--window 0x400005: its figures at the top");
        json_decref(j);
        is_int(frames(NULL, "--window", "4194309", "@desktop.jsonl", NULL), 0, "--window in decimal");
        is_int(frames(NULL, "--window", "0x1234", "@desktop.jsonl", NULL), 1, "--window not in the log: exit 1");
        ok(strstr(err, "no window 0x1234") != NULL, "and says which");
        ok(usage(frames(NULL, "--window", "x", "@desktop.jsonl", NULL)), "--window x: a usage error");

        /* The older writer's rows, with presentation: timed by it. */
        is_int(frames(NULL, "@frames.jsonl", NULL), 0, "frames.jsonl text: exit 0");
        ok(strstr(out, "timed by        presented") != NULL, "frames.jsonl: timed by presented");
        is_int(frames(NULL, "@sf-basic.txt", NULL), 0, "sf-basic text: exit 0");
        ok(strstr(out, "timed by        actual present") != NULL, "Android: timed by actual present");
        /* Rows never drawn, nothing else: nothing at all to compute. */
        is_int(frames(NULL, "-", NULL), 1, "empty input: exit 1");
}

static void test_inputs(void) {
        char path[4096], *from_file;

        /* Standard input reads like the file. */
        frames(NULL, "--json", "@gfxinfo-android12.txt", NULL);
        from_file = strdup(out);
        snprintf(path, sizeof(path), "%s/gfxinfo-android12.txt", data_dir);
        is_int(frames(path, "--json", NULL), 0, "standard input: exit 0");
        ok(from_file && strcmp(from_file, out) == 0, "standard input: the same report");
        is_int(frames(path, "--json", "-", NULL), 0, "\"-\": exit 0");
        ok(from_file && strcmp(from_file, out) == 0, "\"-\": the same report");
        free(from_file);

        /* A second copy of a dump repeats every frame: none is counted twice. */
        is_int(frames(NULL, "--json", "@sf-basic.txt", "@sf-basic.txt", NULL), 0, "the same file twice");
        {
                json_t *j = json_out();

                ok(json_integer_value(at(j, "frames")) == 6 && json_integer_value(at(j, "dumps")) == 2,
                   "the same file twice: 6 frames from 2 dumps");
                json_decref(j);
        }
        is_int(frames(NULL, "@sf-basic.txt", NULL), 0, "text: exit 0");
        ok(strstr(out, "PerfDog Jank 0") && strstr(out, "PerfDog BigJank 0") && strstr(out, "Chromium 1") &&
           strstr(out, "6 over 0.096 s"), "text: janks named, frames counted");
        ok(strstr(out, "present latency mean 12.667 ms, max 26.000 ms (actual - desired present time, 6 frames)\n") &&
           strstr(out, "ready->present  mean 4.400 ms, max 6.000 ms (5 frames)\n") &&
           strstr(out, "late frames     1 (presented more than one refresh period after the desired time)\n"),
           "text: latencies and late frames");
        is_int(frames(NULL, "@gfxinfo-android10.txt", NULL), 0, "gfxinfo before Android 12: exit 0");
        ok(strstr(out, "ready->present  n/a (no frame has a ready time)\n") &&
           strstr(out, "late frames     n/a (no refresh period: --refresh-hz gives one)\n"),
           "gfxinfo before Android 12: no ready times, no refresh period, and says so");
}

static void test_errors(void) {
        is_int(frames(NULL, "@sf-garbage.txt", NULL), 65, "garbage line: exit 65");
        ok(strstr(err, "sf-garbage.txt:4:") != NULL, "garbage line: the error names file and line");
        diag("%s", err);
        is_int(frames(NULL, "@sf-basic.txt", "@gfxinfo-android10.txt", "@sf-garbage.txt", NULL), 65,
               "garbage in the third file: exit 65");
        is_int(frames(NULL, "/nonexistent/dump.txt", NULL), 66, "missing file: exit 66");
        ok(strstr(err, "/nonexistent/dump.txt") != NULL, "missing file: named");
        is_int(frames(NULL, "/", NULL), 66, "a directory: exit 66");
        ok(usage(frames(NULL, "--bogus", NULL)), "unknown option: a usage error");
        ok(usage(frames(NULL, "--refresh-hz", "0", "@sf-basic.txt", NULL)), "--refresh-hz 0: a usage error");
        is_int(frames(NULL, "--plot", "/nonexistent/plot.svg", "@sf-basic.txt", NULL), 74,
               "unwritable plot: exit 74");
}

static unsigned count(const char *text, const char *what) {
        unsigned n = 0;

        for (const char *p = text; (p = strstr(p, what)); p++)
                n++;
        return n;
}

static uint32_t be32(const unsigned char *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* --plot of input (a data file, or a path when absolute): renders to a PNG of the declared size. */
static void plot(const char *input, unsigned want_perfdog, unsigned want_chromium, const char *what, int status,
                 unsigned height, const char *must_have) {
        char svg[4096], png[4096], in[4096];
        unsigned char head[24] = {};
        int fd;

        snprintf(svg, sizeof(svg), "%s/plot.svg", tmp_dir);
        snprintf(png, sizeof(png), "%s/plot.png", tmp_dir);
        snprintf(in, sizeof(in), input[0] == '/' ? "%.0s%s" : "%s/%s", data_dir, input);
        unlink(png);
        ok(frames(NULL, "--plot", svg, in, NULL) == status, "--plot: exit %d", status);
        fd = open(svg, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                char *text = read_fd(fd);

                /* Each kind once in the legend, then once per jank. */
                ok(count(text, "class=\"perfdog-jank\"") + count(text, "class=\"perfdog-bigjank\"") ==
                   2 + want_perfdog && count(text, "class=\"chromium-jank\"") == 1 + want_chromium,
                   "%s: %u PerfDog and %u Chromium janks marked", what, want_perfdog, want_chromium);
                if (must_have)
                        ok(strstr(text, must_have) != NULL, "%s: the SVG has %s", what, must_have);
                free(text);
        } else
                ok(0, "%s: the SVG is there", what);

        is_int(run_in(NULL, (const char *const[]) { "rsvg-convert", "-o", png, svg, NULL }), 0,
               "rsvg-convert renders it");
        ok(err && err[0] == '\0', "%s: rsvg-convert says nothing", what);
        if (err && err[0])
                diag("%s", err);
        fd = open(png, O_RDONLY | O_CLOEXEC);
        ok(fd >= 0 && read(fd, head, sizeof(head)) == sizeof(head) &&
           memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(head + 12, "IHDR", 4) == 0 &&
           be32(head + 16) == PLOT_WIDTH && be32(head + 20) == height,
           "%s: a %dx%u PNG", what, PLOT_WIDTH, height);
        if (fd >= 0)
                close(fd);
        unlink(svg);
        unlink(png);
}

/* Ten minutes at 60 Hz with a PerfDog BigJank (and Chromium jank) every 1000 frames: the
 * plot is drawn as a bar per pixel column. */
static int write_long_dump(char *path, size_t size) {
        int64_t t = 1000000000, p = 16666667;
        FILE *f;

        snprintf(path, size, "%s/long.txt", tmp_dir);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "%lld\n", (long long) p);
        for (int i = 0; i < 36000; i++) {
                t += i % 1000 == 500 ? 10 * p : p + (i % 7) * 10000;
                fprintf(f, "%lld\t%lld\t%lld\n", (long long) (t - 2 * p), (long long) t, (long long) (t - p));
        }
        return fclose(f) == 0 ? 0 : -EIO;
}

int main(int argc, char **argv) {
        char long_dump[4096];

        tap_args(argc, argv, 2, "TIMECONV DATA_DIR");
        tap_require_program("rsvg-convert", "librsvg2-bin");
        tc_path = argv[1];
        data_dir = argv[2];
        if (!mkdtemp(tmp_dir)) {
                ok(0, "mkdtemp");
                return done_testing();
        }
        test_json();
        test_desktop();
        test_inputs();
        test_errors();
        plot("sf-basic.txt", 0, 1, "sf-basic", 0, PLOT_HEIGHT, NULL);
        plot("sf-zero.txt", 0, 0, "no frames", 1, PLOT_HEIGHT, NULL);
        /* A window of the frame log: its desktop latencies in a panel below. */
        plot("desktop.jsonl", 0, 1, "desktop", 0, PLOT_DESKTOP_HEIGHT, "class=\"end-to-drawn\" d=\"M");
        if (write_long_dump(long_dump, sizeof(long_dump)) == 0) {
                plot(long_dump, 36, 36, "36000 frames", 0, PLOT_HEIGHT, NULL);
                unlink(long_dump);
        } else
                ok(0, "writing a long dump");
        rmdir(tmp_dir);
        free(out);
        free(err);
        return done_testing();
}
