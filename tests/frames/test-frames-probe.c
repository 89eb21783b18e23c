/* SPDX-License-Identifier: MIT */

/* timeconv frames --probe against a real compositor: mutter 43 (X11) on a private Xvfb, the real
 * timeconvd on a private bus converting its x11_us times. Without a window manager, and with one
 * that lacks _NET_WM_FRAME_DRAWN, the probe says so and fails. With mutter: every frame's drawn
 * time lies after the frame's end and before its _NET_WM_FRAME_DRAWN arrived, within its bound;
 * --rate 30 begins frames at 30 +- 1 per second; `timeconv frames` on the probe's log gives the
 * very figures of the probe's summary; the plot with the desktop latencies renders.
 * usage: test-frames-probe TIMECONV TIMECONVD */

#define _GNU_SOURCE

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "desktop.h"
#include "harness-proc.h"
#include "harness.h"
#include "probe-child.h"
#include "tap.h"
#include "x11-bus.h"

#define WAIT_MS 30000
#define RUN_MS 120000

static const char *timeconv;
static Harness *h;
static Desktop desktop;
static char dir[] = "/tmp/test-frames-probe-XXXXXX";
static char *out, *err;
static int status;

static bool is_calibrated(const X11BusDomain *d, void *userdata) {
        return d->available && d->last_calibrated_ns > 0;
}

/* What a program said, a TAP comment per line. */
static void diag_text(const char *text) {
        for (const char *line = text; line && *line;) {
                size_t n = strcspn(line, "\n");

                diag("%.*s", (int) n, line);
                line += n + (line[n] == '\n');
        }
}

/* Runs timeconv with args (NULL-terminated) on the private bus; status, out and err. */
static int run(const char *first, ...) {
        va_list ap;
        int r;

        va_start(ap, first);
        r = probe_run_v(h, timeconv, NULL, RUN_MS, &out, &err, &status, first, ap);
        va_end(ap);
        return r;
}

static void test_no_display(void) {
        const char *argv[] = { timeconv, "frames", "--probe", "--frames", "10", NULL };
        const char *env[] = { "DISPLAY=", NULL };
        int st = 0;

        free(err);
        err = NULL;
        ok(harness_run(h, argv, env, RUN_MS, NULL, &err, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 69,
           "no DISPLAY and no --display: exit 69");
        ok(err && strstr(err, "no X display: DISPLAY is not set or empty (--display NAME gives one)"),
           "no DISPLAY and no --display: says so");
        diag_text(err);
}

static void test_no_frame_timing(void) {
        is_int(run("frames", "--probe", "--display", desktop.display, "--frames", "10", NULL), 69,
               "no window manager: exit 69");
        ok(err && strstr(err, "no EWMH window manager runs on"), "no window manager: says so");
        diag_text(err);

        ok(desktop_fake_wm(&desktop, DESKTOP_FAKE_NO_TIMING) == 0, "a window manager without frame timing");
        is_int(run("frames", "--probe", "--display", desktop.display, "--frames", "10", NULL), 69,
               "without _NET_WM_FRAME_DRAWN: exit 69");
        ok(err && strstr(err, "fake-wm") && strstr(err, "does not support _NET_WM_FRAME_DRAWN"),
           "without _NET_WM_FRAME_DRAWN: says so and names it");
        ok(err && strstr(err, "mutter and muffin") && !strstr(err, "KWin"),
           "and names the window managers that do: mutter and muffin, not KWin");
        diag_text(err);
        desktop_fake_wm(&desktop, DESKTOP_FAKE_NONE);
}

typedef struct Row {
        int64_t begin_ns, end_ns, drawn_ns, drawn_unc_ns, drawn_received_ns;
        bool drawn;
} Row;

static void fill_row(json_t *o, void *row) {
        Row *r = row;

        *r = (Row) {
                .begin_ns = probe_json_int(o, "begin_ns"),
                .end_ns = probe_json_int(o, "end_ns"),
                .drawn = json_is_integer(json_object_get(o, "drawn_ns")),
                .drawn_ns = probe_json_int(o, "drawn_ns"),
                .drawn_unc_ns = probe_json_int(o, "drawn_uncertainty_ns"),
                .drawn_received_ns = probe_json_int(o, "drawn_received_ns"),
        };
}

/* The probe's frame log, read with jansson (not the reader under test). */
static Row *read_log(const char *path, size_t *ret_n) {
        return probe_read_log(path, sizeof(Row), fill_row, ret_n);
}

static int compare_int64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return (x > y) - (x < y);
}

/* The rate frames began at, robust to late wake-ups: the median over the pairs of frames half
 * the run apart of their spacing. The probe begins frame k at t0 + k/rate (an absolute timer:
 * lateness never accumulates), so a frame woken late moves only the two pairs it is in; a
 * loaded machine would have to delay most frames by tens of ms to move the median by 1 FPS. */
static double begin_rate(const Row *rows, size_t n) {
        size_t half = n / 2;
        int64_t *d = calloc(half, sizeof(*d));
        double rate;

        if (!d || half == 0) {
                free(d);
                return 0;
        }
        for (size_t i = 0; i < half; i++)
                d[i] = rows[i + half].begin_ns - rows[i].begin_ns;
        qsort(d, half, sizeof(*d), compare_int64);
        rate = (double) half / ((double) d[half / 2] / 1e9);
        free(d);
        return rate;
}

static void test_fast(void) {
        char log[128], svg[128], png[128];
        json_t *probe, *again;
        size_t n = 0, drawn = 0, outside = 0;
        Row *rows;

        snprintf(log, sizeof(log), "%s/fast.jsonl", dir);
        snprintf(svg, sizeof(svg), "%s/fast.svg", dir);
        snprintf(png, sizeof(png), "%s/fast.png", dir);
        is_int(run("frames", "--probe", "--display", desktop.display, "--frames", "120", "--log", log, "--json",
                   "--plot", svg, NULL), 0, "mutter, as fast as it lets: exit 0");
        if (status != 0)
                diag_text(err);
        probe = json_loads(out ? out : "", 0, NULL);
        ok(probe && !strcmp(json_string_value(json_object_get(json_object_get(probe, "probe"), "compositor")),
                            "Mutter"), "the compositor is named: Mutter");

        rows = read_log(log, &n);
        is_int(n, 120, "a log row per frame");
        for (size_t i = 0; rows && i < n; i++) {
                const Row *r = &rows[i];

                if (!r->drawn)
                        continue;
                drawn++;
                /* After the frame ended, before its message arrived, within the bound. */
                if (r->drawn_unc_ns < 0 || r->drawn_ns + r->drawn_unc_ns < r->end_ns ||
                    r->drawn_ns - r->drawn_unc_ns > r->drawn_received_ns) {
                        if (outside++ < 3)
                                diag("frame %zu: end %lld, drawn %lld +- %lld, arrived %lld", i, (long long) r->end_ns,
                                     (long long) r->drawn_ns, (long long) r->drawn_unc_ns,
                                     (long long) r->drawn_received_ns);
                }
        }
        ok(drawn >= n * 9 / 10 && n > 0, "%zu of %zu frames drawn (at least 90 %%)", drawn, n);
        is_int(outside, 0, "every drawn time lies in [frame end, FRAME_DRAWN arrival] within its bound");
        free(rows);

        is_int(run("frames", "--json", log, NULL), 0, "timeconv frames on the probe's log: exit 0");
        again = json_loads(out ? out : "", 0, NULL);
        ok(probe && again && json_equal(json_object_get(json_object_get(probe, "report"), "windows"),
                                        json_object_get(again, "windows")),
           "timeconv frames on the log: the same figures as the probe's summary");
        ok(again && json_integer_value(json_object_get(json_object_get(json_array_get(json_object_get(again, "windows"),
                   0), "desktop"), "drawn")) == (json_int_t) drawn, "and the same frames drawn");
        json_decref(again);
        json_decref(probe);

        is_int(run("frames", log, NULL), 0, "text: exit 0");
        ok(out && strstr(out, "timed by        ") && strstr(out, "end->drawn      mean") &&
           strstr(out, "FRAME_DRAWN msg mean"), "text: timed by, end->drawn, message latency");
        ok(out && (strstr(out, "timed by        drawn") || strstr(out, "timed by        presented")),
           "timed by drawn or presented, as the compositor gave");

        /* The plot of the probe's own run renders. */
        {
                const char *argv[] = { "rsvg-convert", "-o", png, svg, NULL };
                char *svg_text = NULL;
                int st = -1;

                ok(proc_read_file(svg, &svg_text, NULL) == 0 && strstr(svg_text, "class=\"end-to-drawn\" d=\"M"),
                   "--plot: the desktop latencies are drawn");
                free(svg_text);
                ok(harness_run(h, argv, NULL, RUN_MS, NULL, NULL, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
                   access(png, R_OK) == 0, "rsvg-convert renders the plot");
        }
}

static void test_rate(void) {
        char log[128];
        size_t n = 0;
        Row *rows;
        double rate;

        snprintf(log, sizeof(log), "%s/rate.jsonl", dir);
        is_int(run("frames", "--probe", "--display", desktop.display, "--rate", "30", "--frames", "150", "--log", log,
                   NULL), 0, "--rate 30: exit 0");
        if (status != 0)
                diag_text(err);
        rows = read_log(log, &n);
        is_int(n, 150, "--rate 30: 150 frames begun");
        rate = rows ? begin_rate(rows, n) : 0;
        ok(rate >= 29 && rate <= 31, "--rate 30: frames begun at %.3f per second (30 +- 1)", rate);
        free(rows);
}

/* A window manager that lists _NET_WM_FRAME_DRAWN and never sends it: the probe gives up after
 * one silence of 2 s, not 2 s per frame (300 frames: 10 minutes before), says so, exits 69, and
 * writes the frames it began; the report says why its figures are missing. */
static void test_silent_wm(void) {
        char log[128];
        size_t n = 0, drawn = 0;
        Row *rows;

        snprintf(log, sizeof(log), "%s/silent.jsonl", dir);
        ok(desktop_fake_wm(&desktop, DESKTOP_FAKE_SILENT) == 0, "a window manager that lists _NET_WM_FRAME_DRAWN");
        is_int(run("frames", "--probe", "--display", desktop.display, "--frames", "300", "--log", log, NULL), 69,
               "it never sends one: exit 69 (within the test's timeout, far below 300 x 2 s)");
        ok(err && strstr(err, "fake-wm lists _NET_WM_FRAME_DRAWN but sent none"), "says it never answered");
        diag_text(err);
        rows = read_log(log, &n);
        for (size_t i = 0; rows && i < n; i++)
                drawn += rows[i].drawn;
        ok(rows && n >= 1 && n < 300 && drawn == 0, "--log holds the %zu frames begun, none drawn", n);
        free(rows);
        ok(out && strstr(out, "end->drawn      n/a (no frame was drawn)") && !strstr(out, "no frame end times") &&
           strstr(out, "causality       n/a (no frame was drawn)"), "the report's reasons: no frame was drawn");
        ok(out && strstr(out, "stopped         the window manager fake-wm"), "the summary says why it stopped");
        desktop_fake_wm(&desktop, DESKTOP_FAKE_NONE);
}

/* --display naming another X server than timeconvd's: refused before a frame, both named. */
static void test_other_server(void) {
        Desktop other;

        if (desktop_start_x(&other) < 0) {
                ok(false, "a second Xvfb");
                return;
        }
        ok(run("frames", "--probe", "--display", other.display, "--frames", "10", NULL) == 69,
           "--display %s, timeconvd on %s: exit 69", other.display, desktop.display);
        ok(err && strstr(err, "is not timeconvd's") && strstr(err, other.display) && strstr(err, desktop.display),
           "says the server is not timeconvd's, and names both displays");
        diag_text(err);
        desktop_stop(&other);
}

/* An unwritable --log: exit 74 naming the file, before a frame is drawn. */
static void test_log_unwritable(void) {
        is_int(run("frames", "--probe", "--display", desktop.display, "--frames", "10", "--log",
                   "/nonexistent-dir/x.jsonl", NULL), 74, "--log /nonexistent-dir/x.jsonl: exit 74");
        ok(err && strstr(err, "/nonexistent-dir/x.jsonl") && strstr(err, strerror(ENOENT)) && !strstr(err, "x11_us"),
           "names the file and why, not timeconvd");
        ok(err && !strstr(err, "measuring"), "before measuring");
        diag_text(err);
}

/* Runs the probe in the background until it says the compositor draws its frames, then kill()
 * (the compositor, the X server); the probe must end within 60 s. *ret_status its exit
 * status; -1 when it did not end. */
static int run_and_kill(const char *const *argv, int (*kill_it)(void), char **ret_err) {
        ProbeChild c;
        int st = 0, exit_status = -1;

        ok(probe_child_start(&c, h->bus_address, argv) == 0 &&
           probe_child_wait_for(&c, "draws the probe's frames", 60000) == 0, "the probe measures");
        ok(kill_it() == 0, "killed");
        if (probe_child_finish(&c, 60000, &st) == 0 && WIFEXITED(st))
                exit_status = WEXITSTATUS(st);
        ok(exit_status >= 0, "the probe ended within 60 s");
        *ret_err = strdup(c.err ? c.err : "");
        probe_child_done(&c);
        return exit_status;
}

static int kill_mutter(void) {
        return desktop_kill_wm(&desktop);
}

static int kill_x(void) {
        return proc_signal(desktop.xvfb.pidfd, SIGKILL);
}

/* The drawn rows of the log, and all. */
static size_t drawn_rows(const char *log, size_t *ret_n) {
        size_t n = 0, drawn = 0;
        Row *rows = read_log(log, &n);

        for (size_t i = 0; rows && i < n; i++)
                drawn += rows[i].drawn;
        free(rows);
        *ret_n = n;
        return drawn;
}

/* mutter killed mid-run: noticed at once (its check window is destroyed), said, exit 69, the
 * frames measured in the log. 1000 frames would take 17 s and more at 60 Hz, 2000 s at 2 s each. */
static void test_kill_mutter(void) {
        char log[128], *e = NULL;
        const char *argv[] = { timeconv, "frames", "--probe", "--display", desktop.display, "--frames", "1000",
                               "--log", log, NULL };
        size_t n = 0, drawn;

        snprintf(log, sizeof(log), "%s/kill.jsonl", dir);
        is_int(run_and_kill(argv, kill_mutter, &e), 69, "mutter killed mid-run: exit 69");
        ok(e && strstr(e, "the window manager Mutter went away") && strstr(e, "the frames measured are in"),
           "says mutter went away and where the frames are");
        diag_text(e);
        drawn = drawn_rows(log, &n);
        ok(n >= 1 && n < 1000 && drawn >= 1, "--log holds the frames measured (%zu begun, %zu drawn)", n, drawn);
        free(e);
}

/* The X server killed mid-run: exit 69, the frames measured before it went are in the log,
 * converted (timeconvd converts each as it comes, while its calibration of that server lasts). */
static void test_kill_x(void) {
        char log[128], *e = NULL;
        const char *argv[] = { timeconv, "frames", "--probe", "--display", desktop.display, "--rate", "30",
                               "--frames", "600", "--log", log, NULL };
        size_t n = 0, drawn;

        snprintf(log, sizeof(log), "%s/x.jsonl", dir);
        is_int(run_and_kill(argv, kill_x, &e), 69, "the X server killed mid-run: exit 69");
        ok(e && strstr(e, "the X connection broke"), "says the X connection broke");
        diag_text(e);
        drawn = drawn_rows(log, &n);
        ok(n >= 1 && n < 600 && drawn >= 1, "--log holds the frames measured, converted (%zu begun, %zu drawn)", n,
           drawn);
        free(e);
}

/* The probe's own CPU at 60 FPS beside mutter: reported, not judged (a sanitizer build costs
 * more); bench figures are in the README. */
static void report_cpu(void) {
        json_t *j;

        is_int(run("frames", "--probe", "--display", desktop.display, "--rate", "60", "--frames", "240", "--json",
                   NULL), 0, "--rate 60: exit 0");
        j = json_loads(out ? out : "", 0, NULL);
        ok(j && json_is_number(json_object_get(json_object_get(j, "probe"), "cpu_percent")),
           "the probe reports its CPU");
        diag("probe CPU at 60 FPS: %.2f %% of one core; compositor rate %.3f FPS",
             json_number_value(json_object_get(json_object_get(j, "probe"), "cpu_percent")),
             json_number_value(json_object_get(json_object_get(j, "report"), "fps")));
        json_decref(j);
}

int main(int argc, char **argv) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        const char *args[] = { "--display", NULL, NULL };
        X11BusDomain d = {};
        char *log = NULL;

        tap_args(argc, argv, 2, "TIMECONV TIMECONVD");
        tap_require_program("Xvfb", "xvfb");
        tap_require_program("mutter", "mutter");
        tap_require_program("rsvg-convert", "librsvg2-bin");
        timeconv = argv[1];
        if (!mkdtemp(dir))
                bail_out("mkdtemp: %m");

        ok(desktop_start_x(&desktop) == 0, "Xvfb started (%s)", desktop.display);
        args[1] = desktop.display;
        ok(harness_new(NULL, &h) == 0, "private bus");
        ok(h && harness_start_daemon(h, argv[2], args, HARNESS_READY_TIMEOUT_MS) == 0, "timeconvd --display %s",
           desktop.display);
        ok(h && harness_connect(h, &bus) == 0, "connected");
        if (tap_failed_)
                goto finish;
        ok(x11_bus_wait_for(bus, "x11_us", is_calibrated, NULL, WAIT_MS, &d) == 0, "x11_us calibrated (verdict %s)",
           d.verdict);

        test_no_display();
        test_no_frame_timing();
        test_silent_wm();
        test_other_server();
        ok(desktop_start_mutter(&desktop, h->bus_address) == 0,
           "mutter --x11 ready: _NET_SUPPORTING_WM_CHECK, _NET_WM_FRAME_DRAWN in _NET_SUPPORTED");
        if (tap_failed_) {
                if (proc_read_file(desktop.wm_log, &log, NULL) == 0)
                        diag("mutter: %s", log);
                goto finish;
        }
        test_fast();
        test_rate();
        report_cpu();
        test_log_unwritable();
        test_kill_mutter();
        ok(desktop_start_mutter(&desktop, h->bus_address) == 0, "mutter --x11 again");
        /* Last: the X server goes for good. */
        if (!tap_failed_)
                test_kill_x();
finish:
        free(log);
        desktop_stop(&desktop);
        h = harness_free(h);
        proc_rm_rf(dir);
        free(out);
        free(err);
        return done_testing();
}
