/* SPDX-License-Identifier: MIT */

/* The frame parsers (frames/frames-parse.c, -gfxinfo.c, -jsonl.c; the log, -log.c) on the dumps of
 * tests/frames/data and on short texts: which rows become frames, with which times, and which
 * line a malformed dump is refused at.
 * usage: test-frames-parse DATA_DIR */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames-desktop.h"
#include "frames.h"
#include "tap.h"

#define MS INT64_C(1000000)
#define MAX "9223372036854775807"

static const char *data_dir;

static char *slurp(const char *name, size_t *ret_size) {
        char path[4096], *text = NULL;
        size_t size = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", data_dir, name);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        text = malloc(1 << 16);
        if (text)
                size = fread(text, 1, 1 << 16, f);
        fclose(f);
        *ret_size = size;
        return text;
}

/* Parses a data file into a new log; NULL (after a failed test line) when it does not parse. */
static FramesLog *load(const char *name) {
        FramesLog *log = NULL;
        FramesError error = {};
        size_t size = 0;
        char *text = slurp(name, &size);
        int r = -ENOENT;

        if (text && frames_log_new(&log) >= 0)
                r = frames_parse_text(log, text, size, &error);
        free(text);
        ok(r == 0, "%s parses", name);
        if (r < 0) {
                diag("r=%d line %u: %s", r, error.line, error.message);
                return frames_log_free(log);
        }
        return log;
}

/* The frames of a log: Android's series, or the series of its one window. *owned is what to free. */
static const FramesLog *series_of(FramesLog *log, FramesLog **owned) {
        FramesTimedBy by;

        *owned = NULL;
        if (log->n_windows == 1 && log->android_rows == 0 &&
            frames_window_series(&log->windows[0], owned, &by) == 0)
                return *owned;
        return log;
}

static void check_frame(const FramesLog *log, size_t i, int64_t present_ms, int64_t desired_ms,
                        int64_t ready_ms, int64_t refresh_ms, const char *what) {
        const Frame *f = &log->frames[i];
        int64_t desired_ns = desired_ms < 0 ? FRAMES_NO_TIME : desired_ms * MS;
        int64_t ready_ns = ready_ms < 0 ? FRAMES_NO_TIME : ready_ms * MS;

        ok(i < log->n_frames && f->present_ns == present_ms * MS && f->desired_ns == desired_ns &&
           f->ready_ns == ready_ns && f->refresh_ns == refresh_ms * MS, "%s: frame %zu", what, i);
        if (i < log->n_frames && !(f->present_ns == present_ms * MS && f->desired_ns == desired_ns &&
                                   f->ready_ns == ready_ns && f->refresh_ns == refresh_ms * MS))
                diag("got present %lld desired %lld ready %lld refresh %lld", (long long) f->present_ns,
                     (long long) f->desired_ns, (long long) f->ready_ns, (long long) f->refresh_ns);
}

static void check_counts(const FramesLog *log, size_t frames, uint64_t rows, uint64_t pending,
                         uint64_t dropped, uint64_t dumps, const char *what) {
        ok(log->n_frames == frames && log->rows == rows && log->pending == pending &&
           log->dropped == dropped && log->dumps == dumps,
           "%s: %zu frames, %llu rows, %llu pending, %llu dropped, %llu dumps", what, frames,
           (unsigned long long) rows, (unsigned long long) pending, (unsigned long long) dropped,
           (unsigned long long) dumps);
        if (log->n_frames != frames || log->rows != rows || log->pending != pending ||
            log->dropped != dropped || log->dumps != dumps)
                diag("got %zu frames, %llu rows, %llu pending, %llu dropped, %llu dumps", log->n_frames,
                     (unsigned long long) log->rows, (unsigned long long) log->pending,
                     (unsigned long long) log->dropped, (unsigned long long) log->dumps);
}

static void test_surfaceflinger(void) {
        FramesLog *log;

        /* Two "0 0 0" rows, a ready time still pending, a whole row pending. */
        if ((log = load("sf-basic.txt"))) {
                check_counts(log, 6, 9, 1, 2, 1, "sf-basic");
                check_frame(log, 0, 1010, 1000, 1005, 16, "sf-basic");
                check_frame(log, 3, 1074, 1048, 1070, 16, "sf-basic");
                check_frame(log, 5, 1106, 1096, -1, 16, "sf-basic: INT64_MAX ready time unknown");
                frames_log_free(log);
        }
        /* Dump 2 repeats two frames of dump 1 and presents the frame dump 1 had pending. */
        if ((log = load("sf-overlap.txt"))) {
                check_counts(log, 5, 8, 1, 2, 2, "sf-overlap");
                for (size_t i = 0; i < 5; i++)
                        check_frame(log, i, 1010 + 16 * (int64_t) i, 1000 + 16 * (int64_t) i,
                                    (int64_t[]) { 1005, 1020, 1038, 1050, 1070 }[i], 16, "sf-overlap");
                frames_log_free(log);
        }
        if ((log = load("sf-refresh-change.txt"))) {
                check_counts(log, 7, 7, 0, 0, 2, "sf-refresh-change");
                check_frame(log, 2, 1042, 1032, -1, 16, "sf-refresh-change: before, ready 0 unknown");
                check_frame(log, 3, 1050, 1046, -1, 8, "sf-refresh-change: after");
                frames_log_free(log);
        }
        /* CRLF line ends, nothing but unused rows. */
        if ((log = load("sf-zero.txt"))) {
                check_counts(log, 0, 2, 0, 2, 1, "sf-zero");
                frames_log_free(log);
        }
}

static void test_gfxinfo(void) {
        FramesLog *log;

        /* Android 6-11 columns: present is FrameCompleted; Flags 1 leaves the desired time out. */
        if ((log = load("gfxinfo-android10.txt"))) {
                check_counts(log, 4, 4, 0, 0, 1, "gfxinfo 6-11");
                check_frame(log, 0, 1020, -1, -1, 0, "gfxinfo 6-11: flagged frame");
                check_frame(log, 1, 1030, 1016, -1, 0, "gfxinfo 6-11");
                check_frame(log, 3, 1090, 1048, -1, 0, "gfxinfo 6-11");
                frames_log_free(log);
        }
        /* Android 12+ columns: DisplayPresentTime, GpuCompleted, FrameInterval; two sections that
         * overlap, the first with a present time of 0 (pending). */
        if ((log = load("gfxinfo-android12.txt"))) {
                check_counts(log, 5, 7, 1, 1, 2, "gfxinfo 12+");
                check_frame(log, 0, 1032, 1000, 1012, 16, "gfxinfo 12+");
                check_frame(log, 3, 1096, 1064, 1072, 16, "gfxinfo 12+: pending in the first section");
                check_frame(log, 4, 1112, 1080, 1092, 16, "gfxinfo 12+");
                frames_log_free(log);
        }
}

static void test_jsonl(void) {
        FramesLog *log, *series;
        FramesTimedBy by;

        /* The older writer's rows: no window, timed by presentation where the log has any. */
        if ((log = load("frames.jsonl"))) {
                ok(log->n_windows == 1 && log->windows[0].id == FRAMES_NO_WINDOW && log->rows == 4 &&
                   log->android_rows == 0, "frame log: one window, not named");
                if (log->n_windows == 1 && frames_window_series(&log->windows[0], &series, &by) == 0) {
                        is_int(by, FRAMES_TIMED_BY_PRESENTED, "frame log: timed by presented");
                        check_counts(series, 3, 4, 1, 0, 1, "frame log");
                        check_frame(series, 0, 1016, 1000, -1, 16, "frame log");
                        check_frame(series, 2, 1064, 1048, -1, 16, "frame log: after a null presented_ns");
                        frames_log_free(series);
                }
                frames_log_free(log);
        }
        /* Two windows interleaved, nothing presented, a frame never drawn. */
        if ((log = load("desktop.jsonl"))) {
                ok(log->n_windows == 2 && log->windows[0].id == 0x200003 && log->windows[1].id == 0x400005 &&
                   log->windows[0].n_rows == 5 && log->windows[1].n_rows == 3, "desktop: rows by window");
                if (log->n_windows == 2 && frames_window_series(&log->windows[0], &series, &by) == 0) {
                        is_int(by, FRAMES_TIMED_BY_DRAWN, "desktop: no presentation, timed by drawn");
                        check_counts(series, 4, 4, 0, 0, 1, "desktop: window 0x200003, one never drawn");
                        check_frame(series, 1, 1018, -1, -1, 16, "desktop: the drawn time stands as present");
                        frames_log_free(series);
                }
                if (log->n_windows == 2) {
                        const FramesWindow *w = &log->windows[0];
                        const Frame *f = &w->frames[0], *never_f = &w->frames[2];

                        /* Begun at 1000, ended 1001, drawn 1002 (sent as 1002000 us), FRAME_DRAWN at
                         * 1003, FRAME_TIMINGS at 1020. */
                        ok(f->desired_ns == 1002 * MS && f->present_ns == FRAMES_NO_TIME &&
                           f->ready_ns == FRAMES_NO_TIME && f->refresh_ns == 16 * MS &&
                           frames_window_latency(w, 0, FRAMES_END_TO_DRAWN) == 1 * MS &&
                           frames_window_latency(w, 0, FRAMES_DRAWN_MESSAGE) == 1 * MS &&
                           frames_window_latency(w, 0, FRAMES_TIMINGS_MESSAGE) == 18 * MS &&
                           frames_window_latency(w, 0, FRAMES_CLOCK_OFFSET) == 0 &&
                           w->rows[0].flags == (FRAMES_ROW_IDENTITY | FRAMES_ROW_CAUSAL),
                           "desktop: a row's latencies, its clock and causality");
                        /* Sent 0.5 ms after its conversion; its FRAME_DRAWN came 1 ms before it. */
                        ok(frames_window_latency(w, 4, FRAMES_CLOCK_OFFSET) == 500000 &&
                           frames_window_latency(w, 4, FRAMES_DRAWN_MESSAGE) == -1 * MS &&
                           w->rows[4].flags == (FRAMES_ROW_CAUSAL | FRAMES_ROW_CAUSAL_OUTSIDE),
                           "desktop: not identity, outside its causal window");
                        ok(never_f->desired_ns == FRAMES_NO_TIME &&
                           frames_window_latency(w, 2, FRAMES_END_TO_DRAWN) == FRAMES_NO_TIME &&
                           w->rows[2].flags == 0, "desktop: a frame never drawn");
                        ok(w->n_begun == 5 && w->first_begin_ns == 1000 * MS && w->last_begin_ns == 1064 * MS,
                           "desktop: begin times counted, never drawn included");
                }
                frames_log_free(log);
        }
}

/* A row read by the fast path and the same row as jansson reads it (blanks, other key order,
 * a key this reader does not know) give the same row. */
static void test_jsonl_paths(void) {
        static const char *const rows[][2] = {
                { "{\"window\":7,\"counter\":8,\"begin_ns\":-5,\"end_ns\":0,\"drawn_x11_us\":123,"
                  "\"presentation_offset_us\":-16,\"drawn_ns\":999999999999999999,\"drawn_uncertainty_ns\":1,"
                  "\"presented_ns\":null,\"presented_uncertainty_ns\":null,\"refresh_interval_ns\":16,"
                  "\"frame_delay_us\":-2,\"drawn_received_ns\":3,\"timings_received_ns\":null}",
                  "{ \"counter\": 8, \"window\": 7, \"begin_ns\": -5, \"end_ns\": 0, \"drawn_x11_us\": 123,"
                  "\"presentation_offset_us\": -16, \"drawn_ns\": 999999999999999999, \"new\": \"x\","
                  "\"drawn_uncertainty_ns\": 1, \"refresh_interval_ns\": 16, \"frame_delay_us\": -2,"
                  "\"drawn_received_ns\": 3 }" },
                { "{\"counter\":4,\"drawn_ns\":null}", "{\"drawn_ns\":null, \"counter\":4}" },
                /* 19 digits: past the fast path's 18. */
                { "{\"counter\":4,\"drawn_ns\":9223372036854775807}",
                  "{\"counter\": 4, \"drawn_ns\": 9223372036854775807}" },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                FramesLog *a = NULL, *b = NULL;
                FramesError error;
                bool same;

                if (frames_log_new(&a) < 0 || frames_log_new(&b) < 0)
                        abort();
                same = frames_parse_text(a, rows[i][0], strlen(rows[i][0]), &error) == 0 &&
                       frames_parse_text(b, rows[i][1], strlen(rows[i][1]), &error) == 0 &&
                       a->n_windows == 1 && b->n_windows == 1 && a->windows[0].id == b->windows[0].id &&
                       memcmp(a->windows[0].rows, b->windows[0].rows, sizeof(FramesWindowRow)) == 0 &&
                       memcmp(a->windows[0].frames, b->windows[0].frames, sizeof(Frame)) == 0 &&
                       a->windows[0].first_begin_ns == b->windows[0].first_begin_ns;
                ok(same, "frame log row %zu: the fast path reads what jansson reads", i);
                frames_log_free(a);
                frames_log_free(b);
        }
}

/* text must parse to n frames (n >= 0), or fail at line (n < 0). */
static void expect(const char *text, int n, unsigned line, const char *what) {
        FramesError error = { .line = 9999 };
        FramesLog *log = NULL, *owned = NULL;
        int r;

        if (frames_log_new(&log) < 0)
                return (void) ok(0, "%s: log", what);
        r = frames_parse_text(log, text, strlen(text), &error);
        if (n >= 0) {
                ok(r == 0 && series_of(log, &owned)->n_frames == (size_t) n, "%s: %d frames", what, n);
                frames_log_free(owned);
                if (r < 0)
                        diag("line %u: %s", error.line, error.message);
        } else {
                ok(r == -EBADMSG && error.line == line, "%s: refused at line %u", what, line);
                diag("%s: line %u: %s", what, error.line, error.message);
        }
        frames_log_free(log);
}

/* Numbers of every length, read by the fast path (up to 18 digits) or jansson (19), through
 * begin_ns, which the window keeps as it is read: each comes back as written. */
static void test_jsonl_numbers(void) {
        uint64_t state = 0x9e3779b97f4a7c15;
        int wrong = 0;

        for (int i = 0; i < 4000; i++) {
                int digits = 1 + i % 19;
                uint64_t u = 0;
                int64_t v, got;
                FramesLog *log = NULL;
                FramesError error;
                char line[128];

                for (int d = 0; d < digits; d++) {
                        state = state * 6364136223846793005u + 1442695040888963407u;
                        u = u * 10 + (state >> 33) % 10;
                }
                /* A time is positive and below INT64_MAX (pending). */
                v = (int64_t) (u % (uint64_t) INT64_MAX);
                v += v == 0;
                snprintf(line, sizeof(line), "{\"window\":%lld,\"counter\":4,\"begin_ns\":%lld,\"drawn_ns\":null}",
                         (long long) (i % 3), (long long) v);
                if (frames_log_new(&log) < 0)
                        abort();
                got = frames_parse_text(log, line, strlen(line), &error) == 0 && log->n_windows == 1 ?
                        log->windows[0].first_begin_ns : -1;
                if (got != v && wrong++ < 3)
                        diag("%s: got %lld", line, (long long) got);
                frames_log_free(log);
        }
        is_int(wrong, 0, "frame log: 4000 numbers of 1 to 19 digits read back as written");
}

/* Whether two logs hold the same windows and rows (the wide values field by field: padding). */
static bool same_logs(const FramesLog *a, const FramesLog *b) {
        if (a->rows != b->rows || a->n_windows != b->n_windows)
                return false;
        for (size_t i = 0; i < a->n_windows; i++) {
                const FramesWindow *u = &a->windows[i], *v = &b->windows[i];

                if (u->id != v->id || u->n_rows != v->n_rows || u->n_begun != v->n_begun ||
                    u->first_begin_ns != v->first_begin_ns || u->last_begin_ns != v->last_begin_ns ||
                    u->n_wide != v->n_wide || memcmp(u->frames, v->frames, u->n_rows * sizeof(Frame)) != 0 ||
                    memcmp(u->rows, v->rows, u->n_rows * sizeof(FramesWindowRow)) != 0)
                        return false;
                for (size_t k = 0; k < u->n_wide; k++)
                        if (u->wide[k].row != v->wide[k].row || u->wide[k].latency != v->wide[k].latency ||
                            u->wide[k].value_ns != v->wide[k].value_ns)
                                return false;
        }
        return true;
}

/* Rows as libtimeconv writes them (every key, in order: the straight-through path), each value
 * of 1 to 19 digits, negative or null at random, against the same row as jansson reads it (a
 * blank after the brace): the same rows, or the same error at the same line. */
static void test_jsonl_canonical(void) {
        static const char *const names[] = {
                "window", "counter", "begin_ns", "end_ns", "drawn_x11_us", "presentation_offset_us", "drawn_ns",
                "drawn_uncertainty_ns", "presented_ns", "presented_uncertainty_ns", "refresh_interval_ns",
                "frame_delay_us", "drawn_received_ns", "timings_received_ns",
        };
        uint64_t state = 0x2545f4914f6cdd1d;
        int wrong = 0, accepted = 0;

        for (int i = 0; i < 3000; i++) {
                char line[1024] = "{", blanked[1040];
                size_t at = 1;
                FramesLog *a = NULL, *b = NULL;
                FramesError ea = {}, eb = {};
                int ra, rb;

                for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
                        int digits, kind;

                        state = state * 6364136223846793005u + 1442695040888963407u;
                        kind = (int) (state >> 60);
                        /* Mostly the lengths of times (10 to 16 digits), any length else. */
                        digits = kind < 10 ? 10 + (int) ((state >> 33) % 7) : 1 + (int) ((state >> 33) % 19);
                        at += (size_t) snprintf(line + at, sizeof(line) - at, "\"%s\":", names[k]);
                        if (kind == 15 && k != 1)
                                at += (size_t) snprintf(line + at, sizeof(line) - at, "null");
                        else {
                                if (kind == 14 && k != 1)
                                        line[at++] = '-';
                                for (int d = 0; d < digits; d++) {
                                        state = state * 6364136223846793005u + 1442695040888963407u;
                                        line[at++] = (char) ('0' + (d == 0 && digits > 1 ? 1 + (state >> 33) % 9 :
                                                                    (state >> 33) % 10));
                                }
                        }
                        line[at++] = k + 1 < sizeof(names) / sizeof(names[0]) ? ',' : '}';
                }
                line[at] = '\0';
                snprintf(blanked, sizeof(blanked), "{ %s", line + 1);
                if (frames_log_new(&a) < 0 || frames_log_new(&b) < 0)
                        abort();
                ra = frames_parse_text(a, line, strlen(line), &ea);
                rb = frames_parse_text(b, blanked, strlen(blanked), &eb);
                accepted += ra == 0;
                if (!(ra == rb && (ra < 0 ? ea.line == eb.line && strcmp(ea.message, eb.message) == 0 :
                                   same_logs(a, b))) && wrong++ < 3)
                        diag("%s: %d (%s) against jansson's %d (%s)", line, ra, ra < 0 ? ea.message : "", rb,
                             rb < 0 ? eb.message : "");
                frames_log_free(a);
                frames_log_free(b);
        }
        is_int(wrong, 0, "frame log: 3000 rows as libtimeconv writes them read as jansson reads them");
        ok(accepted > 1000, "frame log: of them, %d rows accepted (the others refused alike)", accepted);
}

static void test_text(void) {
        static const char gfx12_head[] = "---PROFILEDATA---\nFlags,IntendedVsync,FrameCompleted,DisplayPresentTime,\n";

        expect("", 0, 0, "empty input");
        expect("\n\n  \n", 0, 0, "blank lines");
        expect("16000000\n1 10 2\n", 1, 0, "no newline at the end");
        expect("16000000\n1 10 2\n\n16000000\n\n1 20 2\n", 2, 0, "blank lines between dumps");
        expect("16000000\n1 10 2\nadb: error: device offline\n1 20 2\n", -1, 3, "a line of text in a dump");
        expect("16000000\n1 10 2\n1 20\n", -1, 3, "two columns");
        expect("16000000\n1 10 2 4\n", -1, 2, "four columns");
        expect("16000000\n1 10x 2\n", -1, 2, "a number with a suffix");
        expect("16000000\n1 99999999999999999999 2\n", -1, 2, "a number out of range");
        expect("-16000000\n", -1, 1, "a negative refresh period");
        expect("16000000\n1 " MAX " " MAX "\n1 " MAX " " MAX "\n", 0, 0, "only pending rows");
        expect("16000000\n1 30 2\n1 20 2\n1 30 2\n1 40 2\n", 2, 0, "present times going back");

        expect("Applications Graphics Acceleration Info:\nno frames here\n", -1, 1,
               "gfxinfo without PROFILEDATA");
        expect("\n\nhello\n", -1, 3, "text: the error names its first line");
        expect("---PROFILEDATA---\n---PROFILEDATA---\n", 0, 0, "gfxinfo: a window without frames");
        expect("---PROFILEDATA---\nVsync,Foo,\n", -1, 2, "gfxinfo: header without the columns");
        {
                char text[512];

                snprintf(text, sizeof(text), "%s0,100,120,0,\n0,116,136,0,\n---PROFILEDATA---\n", gfx12_head);
                expect(text, 2, 0, "gfxinfo: no present times, FrameCompleted instead");
                snprintf(text, sizeof(text), "%s0,100,120,150,\n0,116,136,\n---PROFILEDATA---\n", gfx12_head);
                expect(text, -1, 4, "gfxinfo: a row short of a column");
                snprintf(text, sizeof(text), "%s0,100,120,150,\n0,116,abc,166,\n---PROFILEDATA---\n", gfx12_head);
                expect(text, -1, 4, "gfxinfo: a column not an integer");
                snprintf(text, sizeof(text), "%s0,100,120,150,\n0,116,136,166,\n", gfx12_head);
                expect(text, 2, 0, "gfxinfo: a section cut after its last row");
        }

        expect("{\"counter\":1,\"drawn_ns\":5,\"presented_ns\":10}\n{\"counter\":2,\"drawn_ns\":6}\n", 1, 0,
               "frame log: presented_ns may be absent");
        expect("{\"counter\":1,\"drawn_ns\":5,\"presented_ns\":10}\n{\"counter\":2}\n", -1, 2,
               "frame log: no drawn_ns");
        expect("{\"counter\":1,\"drawn_ns\":5,\"presented_ns\":10}\n{\"counter\":2,\"drawn_ns\":6,", -1, 2,
               "frame log: a line cut short");
        expect("{\"counter\":1,\"drawn_ns\":5,\"presented_ns\":\"10\"}\n", -1, 1,
               "frame log: a string for a time");
        expect("{\"counter\":1,\"drawn_ns\":5}\n[1,2]\n", -1, 2, "frame log: an array");
        expect("{\"counter\":1,\"drawn_ns\":5,\"drawn_ns\":6}\n", -1, 1, "frame log: a key twice");
        expect("{\"counter\":null,\"drawn_ns\":5}\n", -1, 1, "frame log: a null counter");
        expect("{\"counter\":-4,\"drawn_ns\":5}\n", -1, 1, "frame log: a negative counter");
        expect("{\"window\":-1,\"counter\":4,\"drawn_ns\":5}\n", -1, 1, "frame log: a negative window");
        expect("{\"counter\":4,\"drawn_ns\":05}\n", -1, 1, "frame log: a leading zero (not JSON)");
        expect("{\"counter\":4,\"drawn_ns\":5.5}\n", -1, 1, "frame log: a fraction");
        expect("{\"counter\":4,\"drawn_ns\":null}\n{\"counter\":8,\"drawn_ns\":5}\n", 1, 0,
               "frame log: a frame never drawn is no frame");
}

int main(int argc, char **argv) {
        tap_args(argc, argv, 1, "DATA_DIR");
        data_dir = argv[1];
        test_surfaceflinger();
        test_gfxinfo();
        test_jsonl();
        test_jsonl_paths();
        test_jsonl_numbers();
        test_jsonl_canonical();
        test_text();
        return done_testing();
}
