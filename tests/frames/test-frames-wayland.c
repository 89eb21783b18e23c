/* SPDX-License-Identifier: MIT */

/* timeconv frames --probe on Wayland, against two real compositors and the real timeconvd on a
 * private bus. weston's headless backend presents in CLOCK_MONOTONIC_RAW: every presented time
 * is converted to CLOCK_MONOTONIC with a bound that holds the offset between the two clocks as
 * this test reads it around the run. mutter 43 --headless presents in CLOCK_MONOTONIC (the
 * identity) on two virtual monitors, 60 and 144 Hz: fullscreen on each, the frames land on it
 * and carry its refresh. Averages over at least 50 frames, never one frame's timing; what load
 * changes (how many frames make it) is held to loose bounds, what it cannot change (a display
 * does not present faster than it refreshes, a frame is not presented before its commit) to
 * tight ones. `timeconv frames` on the logs gives the probe's figures, per output.
 * usage: test-frames-wayland TIMECONV TIMECONVD */

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

#include "compositor.h"
#include "harness-proc.h"
#include "harness.h"
#include "probe-child.h"
#include "tap.h"

#define RUN_MS 120000

/* is_int() with a formatted name. */
#define is_intf(got, want, ...)                                                                  \
        do {                                                                                     \
                long long got_ = (long long) (got), want_ = (long long) (want);                  \
                                                                                                 \
                ok(got_ == want_, __VA_ARGS__);                                                  \
                if (got_ != want_)                                                               \
                        diag("got %lld, want %lld", got_, want_);                                \
        } while (0)
#define MIN_FRAMES 50

static const char *timeconv;
static Harness *h;
static char dir[] = "/tmp/test-frames-wayland-XXXXXX";
static char *out, *err;
static int status;

/* timeconv with args (NULL-terminated) on the private bus, a client of compositor c (may be
 * NULL); status, out and err. */
static int run(const Compositor *c, const char *first, ...) {
        const char *env[] = { c ? c->env_runtime : "WAYLAND_DISPLAY=", c ? c->env_display : NULL, NULL };
        va_list ap;
        int r;

        va_start(ap, first);
        r = probe_run_v(h, timeconv, env, RUN_MS, &out, &err, &status, first, ap);
        va_end(ap);
        if (r < 0)
                return r;
        if (status != 0)
                diag("timeconv %s ...: exit %d: %s", first, status, err ? err : "");
        return status;
}

typedef struct Row {
        int64_t commit_ns, raw_ns, presented_ns, unc_ns, refresh_ns, seq, flags;
        char output[64];
        bool presented, discarded;
} Row;

static void fill_row(json_t *o, void *row) {
        Row *r = row;

        *r = (Row) {
                .commit_ns = probe_json_int(o, "commit_ns"),
                .raw_ns = probe_json_int(o, "presented_raw_ns"),
                .presented_ns = probe_json_int(o, "presented_ns"),
                .unc_ns = probe_json_int(o, "presented_uncertainty_ns"),
                .refresh_ns = probe_json_int(o, "refresh_interval_ns"),
                .seq = probe_json_int(o, "seq"),
                .flags = probe_json_int(o, "presentation_flags"),
                .presented = json_is_integer(json_object_get(o, "presented_ns")),
                .discarded = json_is_true(json_object_get(o, "discarded")),
        };
        snprintf(r->output, sizeof(r->output), "%s", json_string_value(json_object_get(o, "output")) ?: "");
}

/* The probe's log, read with jansson (not the reader under test). */
static Row *read_log(const char *path, size_t *ret_n) {
        return probe_read_log(path, sizeof(Row), fill_row, ret_n);
}

/* CLOCK_MONOTONIC - CLOCK_MONOTONIC_RAW, bracketed: the truth lies in [*lo, *hi]. */
static void raw_offset(int64_t *lo, int64_t *hi) {
        int64_t r0 = clock_now_ns(CLOCK_MONOTONIC_RAW), m = clock_now_ns(CLOCK_MONOTONIC),
                r1 = clock_now_ns(CLOCK_MONOTONIC_RAW);

        *lo = m - r1;
        *hi = m - r0;
}

/* The probe's JSON and its "report"; NULL when out is not JSON. */
static json_t *probe_json(void) {
        return json_loads(out ? out : "", 0, NULL);
}

static json_t *output_named(json_t *probe, const char *name) {
        json_t *outputs = json_object_get(json_object_get(probe, "probe"), "outputs"), *o;
        size_t i;

        json_array_foreach(outputs, i, o)
                if (json_string_value(json_object_get(o, "name")) &&
                    !strcmp(json_string_value(json_object_get(o, "name")), name))
                        return o;
        return NULL;
}

/* The rate of the frames presented on output: (n - 1) over their span. */
static double presented_fps(const Row *rows, size_t n, const char *output, size_t *ret_n) {
        int64_t first = 0, last = 0;
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                if (!rows[i].presented || strcmp(rows[i].output, output) != 0)
                        continue;
                if (k++ == 0)
                        first = rows[i].presented_ns;
                last = rows[i].presented_ns;
        }
        *ret_n = k;
        return k >= 2 && last > first ? (double) (k - 1) / ((double) (last - first) / 1e9) : 0;
}

/* `timeconv frames LOG --json` gives the probe's own report. */
static void same_report(json_t *probe, const char *log, const char *what) {
        json_t *again;

        is_intf(run(NULL, "frames", log, "--json", NULL), 0, "%s: timeconv frames on the log: exit 0", what);
        again = json_loads(out ? out : "", 0, NULL);
        ok(again && json_equal(again, json_object_get(probe, "report")),
           "%s: timeconv frames on the log gives the probe's report", what);
        ok(again && !strcmp(json_string_value(json_object_get(again, "timed_by")) ?: "", "presented"),
           "%s: timed by presented", what);
        json_decref(again);
}

static void test_weston(void) {
        Compositor c;
        int64_t lo0, hi0, lo1, hi1;
        size_t n = 0, presented = 0, on_output = 0, outside = 0, before_commit = 0, other = 0;
        char log[128];
        json_t *probe, *o;
        double fps;
        Row *rows;

        ok(compositor_start_weston(&c, h->bus_address) == 0, "weston (headless backend) runs");
        snprintf(log, sizeof(log), "%s/weston.jsonl", dir);
        raw_offset(&lo0, &hi0);
        is_intf(run(&c, "frames", "--probe", "--frames", "150", "--log", log, "--json", NULL), 0,
               "weston: the probe runs (no X at all)");
        raw_offset(&lo1, &hi1);
        ok(err && strstr(err, "timeconv: the compositor draws the probe's frames; measuring 150\n"),
           "weston: the readiness line, as on X");
        probe = probe_json();
        ok(probe && json_is_null(json_object_get(json_object_get(probe, "probe"), "stopped")),
           "weston: not stopped (\"stopped\": null)");
        ok(probe && !strcmp(json_string_value(json_object_get(json_object_get(probe, "probe"), "clock")) ?: "",
                            "monotonic_raw"), "weston: presents in CLOCK_MONOTONIC_RAW");
        o = output_named(probe, "headless");
        ok(o && json_integer_value(json_object_get(o, "refresh_mhz")) == 60000,
           "weston: one output 'headless' (xdg-output's name), 60 Hz");

        rows = read_log(log, &n);
        is_intf(n, 150, "weston: a log row per frame");
        for (size_t i = 0; rows && i < n; i++) {
                const Row *r = &rows[i];
                int64_t offset;

                if (!r->presented)
                        continue;
                presented++;
                on_output += !strcmp(r->output, "headless");
                offset = r->presented_ns - r->raw_ns;
                /* The offset as converted lies in the offsets read before and after, within its bound. */
                if (r->unc_ns < 0 || offset + r->unc_ns < (lo0 < lo1 ? lo0 : lo1) ||
                    offset - r->unc_ns > (hi0 > hi1 ? hi0 : hi1)) {
                        if (outside++ < 3)
                                diag("frame %zu: monotonic - raw %lld +- %lld, read [%lld, %lld] and [%lld, %lld]", i,
                                     (long long) offset, (long long) r->unc_ns, (long long) lo0, (long long) hi0,
                                     (long long) lo1, (long long) hi1);
                }
                before_commit += r->presented_ns + r->unc_ns < r->commit_ns;
                /* What weston 10's headless backend gives: its timer's refresh, no flags, no counter. */
                other += r->refresh_ns != 16666666 || r->flags != 0 || r->seq != 0;
        }
        ok(presented >= 100, "weston: %zu of %zu frames presented (at least 100)", presented, n);
        is_intf(on_output, presented, "weston: every presented frame names the output 'headless'");
        is_intf(outside, 0, "weston: every presented time converted from MONOTONIC_RAW with a bound that holds");
        is_intf(before_commit, 0, "weston: no frame presented before its commit");
        is_intf(other, 0, "weston: every frame refresh 16.666666 ms, flags 0, seq 0 (what the headless backend gives)");
        fps = presented_fps(rows, n, "headless", &presented);
        ok(presented >= MIN_FRAMES && fps > 20 && fps < 60 * 1.02,
           "weston: %.2f FPS over %zu presented frames (20 to 61.2: never faster than the output)", fps, presented);
        same_report(probe, log, "weston");
        json_decref(probe);
        free(rows);
        compositor_stop(&c, tap_failed_ > 0);
}

/* The probe fullscreen on output (refresh_ns its refresh as mutter rounds it); the log to log.
 * The probe's JSON. */
static json_t *mutter_output(const Compositor *c, const char *output, int64_t refresh_ns, double hz, const char *log) {
        size_t n = 0, presented = 0, on_output = 0, identity = 0, other = 0, seq_back = 0, vsync = 0;
        int64_t last_seq = -1;
        json_t *probe;
        double fps;
        Row *rows;

        is_intf(run(c, "frames", "--probe", "--output", output, "--frames", "150", "--log", log, "--json", NULL), 0,
               "mutter: the probe fullscreen on %s", output);
        probe = probe_json();
        ok(probe && !strcmp(json_string_value(json_object_get(json_object_get(probe, "probe"), "clock")) ?: "",
                            "monotonic"), "mutter: presents in CLOCK_MONOTONIC");
        rows = read_log(log, &n);
        is_intf(n, 150, "mutter %s: a log row per frame", output);
        for (size_t i = 0; rows && i < n; i++) {
                const Row *r = &rows[i];

                if (!r->presented)
                        continue;
                presented++;
                identity += r->unc_ns >= 0 && llabs(r->presented_ns - r->raw_ns) <= r->unc_ns;
                if (strcmp(r->output, output) != 0)
                        continue;
                on_output++;
                /* mutter 43 headless: the refresh of the monitor, hw completion only. */
                other += llabs(r->refresh_ns - refresh_ns) > 1 || r->flags != 4;
                /* Its seq counts the surface's presentations, not the display's vblanks. */
                seq_back += r->seq <= last_seq;
                last_seq = r->seq;
                vsync += !!(r->flags & 1);
        }
        is_intf(identity, presented, "mutter %s: every presented time converted (the identity) within its bound",
                output);
        ok(on_output >= 100, "mutter %s: %zu of %zu frames presented on it (at least 100)", output, on_output, n);
        is_intf(other, 0, "mutter %s: refresh %.6f ms and flags hw_completion on every frame", output,
               (double) refresh_ns / 1e6);
        is_intf(seq_back, 0, "mutter %s: seq increases frame after frame (the surface's count)", output);
        /* Without the vsync flag a presented time is when mutter's headless frame clock finished
         * the frame, not a vblank: its frames come at the refresh on average, give or take the
         * clock's scheduling, which has been seen 7 % faster over 150 frames. */
        fps = presented_fps(rows, n, output, &presented);
        ok(presented >= MIN_FRAMES && fps > 20 && fps < hz * (vsync == on_output ? 1.02 : 1.25),
           "mutter %s: %.2f FPS over %zu presented frames (20 to %.1f)", output, fps, presented,
           hz * (vsync == on_output ? 1.02 : 1.25));
        same_report(probe, log, output);
        free(rows);
        return probe;
}

/* The two logs as one: a section per output, each with its monitor's refresh. */
static void test_per_output(const char *log0, const char *log1) {
        char both[160], *a = NULL, *b = NULL, *text = NULL;
        json_t *report, *w;
        size_t i, sections = 0;

        snprintf(both, sizeof(both), "%s/both.jsonl", dir);
        ok(proc_read_file(log0, &a, NULL) >= 0 && proc_read_file(log1, &b, NULL) >= 0 &&
           asprintf(&text, "%s%s", a, b) > 0 && proc_write_file(both, text) >= 0, "the two logs as one");
        is_intf(run(NULL, "frames", both, "--json", NULL), 0, "timeconv frames on both: exit 0");
        report = json_loads(out ? out : "", 0, NULL);
        json_array_foreach(json_object_get(report, "windows"), i, w) {
                const char *output = json_string_value(json_object_get(json_object_get(w, "wayland"), "output"));
                double refresh_ms = json_real_value(json_object_get(w, "refresh_period_ms"));

                if (!output)
                        continue;
                if (!strcmp(output, "Meta-0"))
                        sections += refresh_ms > 16.6 && refresh_ms < 16.7;
                else if (!strcmp(output, "Meta-1"))
                        sections += refresh_ms > 6.9 && refresh_ms < 7.0;
        }
        is_intf(sections, 2, "a section for Meta-0 (16.667 ms) and one for Meta-1 (6.944 ms)");
        json_decref(report);
        free(a);
        free(b);
        free(text);
}

static void test_mutter(void) {
        char log0[128], log1[128];
        Compositor c;
        json_t *probe, *o0, *o1;

        ok(compositor_start_mutter(&c, h->bus_address) == 0, "mutter --wayland --headless, two virtual monitors");
        is_intf(run(&c, "frames", "--probe", "--output", "DP-9", "--frames", "10", NULL), 69,
               "mutter: no output DP-9: exit 69");
        ok(err && strstr(err, "has no output 'DP-9' (it has: Meta-0, Meta-1)"), "mutter: says so, naming them");
        snprintf(log0, sizeof(log0), "%s/meta0.jsonl", dir);
        snprintf(log1, sizeof(log1), "%s/meta1.jsonl", dir);
        probe = mutter_output(&c, "Meta-1", 6944445, 144, log1);
        o0 = output_named(probe, "Meta-0");
        o1 = output_named(probe, "Meta-1");
        ok(o0 && o1 && json_integer_value(json_object_get(o0, "refresh_mhz")) == 60000 &&
           json_integer_value(json_object_get(o1, "refresh_mhz")) == 144000,
           "mutter: outputs Meta-0 at 60 Hz and Meta-1 at 144 Hz (xdg-output's names)");
        json_decref(probe);
        json_decref(mutter_output(&c, "Meta-0", 16666667, 60, log0));
        test_per_output(log0, log1);
        compositor_stop(&c, tap_failed_ > 0);
}

/* --log is opened before anything is measured: a log that cannot be written ends the probe
 * there, status 74, before any frame. */
static void test_log_first(void) {
        Compositor c;

        ok(compositor_start_weston(&c, h->bus_address) == 0, "weston runs (for --log)");
        is_intf(run(&c, "frames", "--probe", "--frames", "10", "--log", "/nonexistent-dir/x.jsonl", NULL), 74,
                "an unwritable --log: exit 74");
        ok(err && strstr(err, "cannot write the frame log /nonexistent-dir/x.jsonl: No such file or directory"),
           "an unwritable --log: names the file and why");
        ok(err && !strstr(err, "measuring"), "an unwritable --log: nothing was measured");
        compositor_stop(&c, tap_failed_ > 0);
}

/* The probe on weston in the background (1000 frames at 60 Hz: 16 s at least), until it says it
 * measures; then sig to weston. The probe's exit status, its stderr in *ret_err. */
static int run_and_signal(Compositor *c, const char *log, int sig, char **ret_err) {
        const char *argv[] = { "env", c->env_runtime, c->env_display, timeconv, "frames", "--probe", "--frames", "1000",
                               "--rate", "60", "--log", log, NULL };
        ProbeChild child;
        int st = -1;

        ok(probe_child_start(&child, h->bus_address, argv) == 0 &&
           probe_child_wait_for(&child, "draws the probe's frames", 60000) == 0, "weston: the probe measures");
        ok(proc_signal(c->pidfd, sig) == 0, "weston: signal %d", sig);
        /* Within 60 s: the run would take 16 s at least, a silent weston 2 s a frame. */
        ok(probe_child_finish(&child, 60000, &st) == 0 && WIFEXITED(st), "the probe ends");
        *ret_err = child.err ? strdup(child.err) : NULL;
        if (tap_failed_ && child.err)
                diag("%s", child.err);
        probe_child_done(&child);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The log's rows, and how many of them presented. */
static size_t log_rows(const char *log, size_t *ret_presented) {
        size_t n = 0, presented = 0;
        Row *rows = read_log(log, &n);

        for (size_t i = 0; rows && i < n; i++)
                presented += rows[i].presented;
        free(rows);
        *ret_presented = presented;
        return n;
}

/* weston killed mid-run: the probe ends there (the connection closed), prints and writes the
 * frames measured until then, exit 69. */
static void test_kill_weston(void) {
        Compositor c;
        char log[128], *e = NULL;
        size_t n, presented;

        snprintf(log, sizeof(log), "%s/kill.jsonl", dir);
        ok(compositor_start_weston(&c, h->bus_address) == 0, "weston runs (to be killed)");
        is_intf(run_and_signal(&c, log, SIGKILL, &e), 69, "weston killed mid-run: exit 69");
        ok(e && strstr(e, "the Wayland compositor") && strstr(e, "closed the connection") &&
           strstr(e, "the frames measured are in"), "weston killed: says so, and where the frames are");
        n = log_rows(log, &presented);
        ok(n >= 1 && n < 1000, "weston killed: the log has the %zu frames committed before", n);
        ok(presented >= 1, "weston killed: %zu of them presented, converted", presented);
        free(e);
        compositor_stop(&c, false);
}

/* weston stopped (SIGSTOP) mid-run: the connection stays, nothing answers; the probe ends after
 * the silence limit (2 s), not 2 s a frame, with the frames measured, exit 69. */
static void test_silent_weston(void) {
        Compositor c;
        char log[128], *e = NULL;
        size_t n, presented;

        snprintf(log, sizeof(log), "%s/silent.jsonl", dir);
        ok(compositor_start_weston(&c, h->bus_address) == 0, "weston runs (to be stopped)");
        is_intf(run_and_signal(&c, log, SIGSTOP, &e), 69, "weston silent mid-run: exit 69");
        ok(e && strstr(e, "stopped answering the probe's frames") && strstr(e, "the frames measured are in"),
           "weston silent: says so, and where the frames are");
        if (e && strstr(e, "timeconv: the Wayland"))
                diag("%s", strstr(e, "timeconv: the Wayland"));
        n = log_rows(log, &presented);
        ok(n >= 1 && n < 1000, "weston silent: the log has the %zu frames committed before", n);
        ok(presented >= 1, "weston silent: %zu of them presented, converted", presented);
        free(e);
        (void) proc_signal(c.pidfd, SIGCONT);
        compositor_stop(&c, tap_failed_ > 0);
}

static void test_no_compositor(void) {
        const Compositor none = { .env_runtime = "XDG_RUNTIME_DIR=/nonexistent",
                                  .env_display = "WAYLAND_DISPLAY=wl-none" };

        is_intf(run(&none, "frames", "--probe", "--frames", "10", NULL), 69,
                "no compositor at WAYLAND_DISPLAY: exit 69");
        ok(err && strstr(err, "cannot connect to the Wayland compositor 'wl-none'"), "no compositor: says so");
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 2, "TIMECONV TIMECONVD");
        timeconv = argv[1];
        tap_require_program("weston", "weston");
        tap_require_program("mutter", "mutter");
        if (!mkdtemp(dir))
                bail_out("mkdtemp: %m");
        if (harness_new_started(argv[2], NULL, &h, NULL) < 0)
                bail_out("a private bus and timeconvd");
        test_no_compositor();
        test_weston();
        test_log_first();
        test_kill_weston();
        test_silent_weston();
        test_mutter();
        h = harness_free(h);
        free(out);
        free(err);
        proc_rm_rf(dir);
        return done_testing();
}
