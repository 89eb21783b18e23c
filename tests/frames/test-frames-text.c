/* SPDX-License-Identifier: MIT */

/* frames/frames-text.c: a whole input read in blocks, a frame log on two threads, gives the log
 * that line by line gives (frames_parser_line() on each line, the reference here): the same
 * windows, rows, frames, wide latencies and begin times, the same lines counted, and the same
 * error at the same line. Blocks of 1 byte to more than the input, cut anywhere: in a line, at
 * a CR of a CRLF, in a run of one window's rows, before a last line without a newline. A file
 * that shrinks while it is read is an error, never a log of two texts. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames-internal.h"
#include "tap.h"

typedef struct Result {
        FramesLog *log;
        int r;
        FramesError error;
        unsigned lines;
} Result;

static void result_done(Result *res) {
        res->log = frames_log_free(res->log);
}

/* The reference: each line to frames_parser_line(), as a caller feeding lines would. */
static Result by_lines(const char *text, size_t size, size_t max_line_size) {
        Result res = { .error = { .line = 7777 } };
        FramesParser *p;

        if (frames_log_new(&res.log) < 0 || frames_parser_new(res.log, &p) < 0)
                abort();
        while (size > 0 && res.r >= 0) {
                const char *nl = memchr(text, '\n', size);
                size_t n = nl ? (size_t) (nl - text) : size;

                if (max_line_size > 0 && n >= max_line_size)
                        res.r = frames_fail(&res.error, frames_parser_lines(p) + 1, "line too long");
                else
                        res.r = frames_parser_line(p, text, n, &res.error);
                text += n + !!nl;
                size -= n + !!nl;
        }
        if (res.r >= 0)
                res.r = frames_parser_finish(p, &res.error);
        res.lines = frames_parser_lines(p);
        frames_parser_free(p);
        return res;
}

typedef struct Source {
        const char *text;
        size_t size;
        size_t max_read;        /* short reads: at most this much at once */
} Source;

static ssize_t read_at(void *userdata, void *buf, size_t size, uint64_t offset) {
        const Source *src = userdata;

        if (offset >= src->size)
                return 0;
        if (size > src->size - offset)
                size = src->size - offset;
        if (size > src->max_read)
                size = src->max_read;
        memcpy(buf, src->text + offset, size);
        return (ssize_t) size;
}

static Result by_blocks(const char *text, size_t size, size_t max_line_size, size_t block_size, unsigned n_workers,
                        bool read) {
        Result res = { .error = { .line = 7777 } };
        Source src = { text, size, 3 + block_size / 2 };
        FramesParser *p;

        if (frames_log_new(&res.log) < 0 || frames_parser_new(res.log, &p) < 0)
                abort();
        res.r = read ? frames_parser_input(p, NULL, read_at, &src, size, max_line_size, block_size, n_workers,
                                           &res.error) :
                       frames_parser_input(p, text, NULL, NULL, size, max_line_size, block_size, n_workers,
                                           &res.error);
        if (res.r >= 0)
                res.r = frames_parser_finish(p, &res.error);
        res.lines = frames_parser_lines(p);
        frames_parser_free(p);
        return res;
}

static bool same_wide(const FramesWindow *u, const FramesWindow *v) {
        /* Field by field: the struct has padding. */
        for (size_t i = 0; i < u->n_wide; i++)
                if (u->wide[i].row != v->wide[i].row || u->wide[i].latency != v->wide[i].latency ||
                    u->wide[i].value_ns != v->wide[i].value_ns)
                        return false;
        return true;
}

static bool same_window(const FramesWindow *u, const FramesWindow *v) {
        return u->id == v->id && u->n_rows == v->n_rows && u->n_begun == v->n_begun &&
               u->first_begin_ns == v->first_begin_ns && u->last_begin_ns == v->last_begin_ns &&
               u->n_wide == v->n_wide &&
               (u->n_rows == 0 || (memcmp(u->rows, v->rows, u->n_rows * sizeof(*u->rows)) == 0 &&
                                   memcmp(u->frames, v->frames, u->n_rows * sizeof(*u->frames)) == 0)) &&
               same_wide(u, v);
}

/* The same outcome: the same error at the same line, or the same log. */
static bool same(const Result *a, const Result *b) {
        const FramesLog *x = a->log, *y = b->log;

        if (a->r != b->r)
                return false;
        if (a->r == -EBADMSG)
                return a->error.line == b->error.line && strcmp(a->error.message, b->error.message) == 0;
        if (a->r < 0)
                return true;
        if (a->lines != b->lines || x->rows != y->rows || x->dumps != y->dumps || x->n_frames != y->n_frames ||
            x->n_windows != y->n_windows || x->pending != y->pending || x->dropped != y->dropped)
                return false;
        if (x->n_frames > 0 && memcmp(x->frames, y->frames, x->n_frames * sizeof(*x->frames)) != 0)
                return false;
        for (size_t i = 0; i < x->n_windows; i++)
                if (!same_window(&x->windows[i], &y->windows[i]))
                        return false;
        return true;
}

/* Block sizes from 1 to past the input's size (some forty of them), from memory and
 * through short reads, on one thread and two: how many differed from the reference. */
static int differing(const char *text, size_t max_line_size, const Result *ref) {
        size_t size = strlen(text);
        int wrong = 0;

        for (size_t block = 1; block <= size + 2; block += block < 16 ? 1 : block / 4) {
                for (int mode = 0; mode < 4; mode++) {
                        Result res = by_blocks(text, size, max_line_size, block, mode % 2 ? 2 : 1, mode >= 2);

                        if (!same(ref, &res) && wrong++ < 3)
                                diag("block %zu, %u thread(s)%s: r=%d line %u (%s), %llu rows, %u lines",
                                     block, mode % 2 ? 2 : 1, mode >= 2 ? ", read" : "", res.r, res.error.line,
                                     res.r == -EBADMSG ? res.error.message : "", res.log ?
                                     (unsigned long long) res.log->rows : 0ULL, res.lines);
                        result_done(&res);
                }
        }
        return wrong;
}

/* A frame log of n rows: three windows in runs, rows the fast path reads and rows it leaves to
 * jansson, nulls, a latency too wide for 32 bits, blank lines, CRLF. */
static char *make_log(size_t n_rows, bool final_newline) {
        size_t size = n_rows * 512 + 64, at = 0;
        char *text = malloc(size);
        int64_t t = 1000000000;

        if (!text)
                abort();
        for (size_t i = 0; i < n_rows; i++, t += 16666667) {
                int64_t window = i % 11 < 7 ? 0x1a00003 : i % 11 < 10 ? 0x2c00005 : 0x3e00007;
                const char *eol = i % 5 == 3 ? "\r\n" : "\n";

                if (i % 17 == 5)
                        at += (size_t) snprintf(text + at, size - at, "\n  \r\n");
                if (i % 13 == 4)
                        /* jansson's: blanks, another order, a key unknown here. */
                        at += (size_t) snprintf(text + at, size - at,
                                                "{ \"counter\": %zu, \"window\": %lld, \"drawn_ns\": %lld, "
                                                "\"x\": [1], \"presented_ns\": null }%s",
                                                4 * i, (long long) window, (long long) t, eol);
                else
                        at += (size_t) snprintf(text + at, size - at,
                                                "{\"window\":%lld,\"counter\":%zu,\"begin_ns\":%lld,\"end_ns\":%lld,"
                                                "\"drawn_x11_us\":%lld,\"presentation_offset_us\":12000,"
                                                "\"drawn_ns\":%lld,\"drawn_uncertainty_ns\":1500,\"presented_ns\":%lld,"
                                                "\"presented_uncertainty_ns\":1500,\"refresh_interval_ns\":16666667,"
                                                "\"frame_delay_us\":null,\"drawn_received_ns\":%lld,"
                                                "\"timings_received_ns\":%lld}%s",
                                                (long long) window, 4 * i, (long long) (t - 4000000),
                                                (long long) (t - (i % 23 == 0 ? 3000000000 : 2000000)),
                                                (long long) (t / 1000), (long long) t, (long long) (t + 12000000),
                                                (long long) (t + 200000), (long long) (t + 12300000), eol);
        }
        if (!final_newline && at > 0 && text[at - 1] == '\n')
                text[--at] = '\0';
        if (!final_newline && at > 0 && text[at - 1] == '\r')
                text[--at] = '\0';
        return text;
}

static void test_log(void) {
        for (int final_newline = 0; final_newline < 2; final_newline++) {
                char *text = make_log(40, final_newline);
                Result ref = by_lines(text, strlen(text), 0);
                size_t n_wide = 0;

                for (size_t i = 0; ref.log && i < ref.log->n_windows; i++)
                        n_wide += ref.log->windows[i].n_wide;
                ok(ref.r == 0 && ref.log->n_windows == 3 && ref.log->rows == 40 && n_wide > 0,
                   "frame log%s: line by line, 40 rows of 3 windows, wide latencies among them",
                   final_newline ? "" : " without a final newline");
                is_int(differing(text, 0, &ref), 0, final_newline ? "frame log: blocks of many sizes give its log" :
                       "frame log without a final newline: blocks of many sizes give its log");
                result_done(&ref);
                free(text);
        }
}

/* text with line inserted after its line at (rounded up to a whole line). */
static char *insert_line(const char *text, size_t at, const char *line) {
        size_t size = strlen(text);
        char *t = malloc(size + strlen(line) + 1);

        if (!t)
                abort();
        while (at > 0 && at < size && text[at - 1] != '\n')
                at++;
        memcpy(t, text, at);
        strcpy(t + at, line);
        strcat(t, text + at);
        return t;
}

/* A bad row in the middle, a line too long: the rows before it and the error at its line,
 * whichever block (and thread) it falls in. */
static void test_errors(void) {
        char *text = make_log(30, true), *bad, padded[800];
        size_t size = strlen(text);
        Result ref;

        bad = insert_line(text, size / 2, "{\"window\":1,\"counter\":-4,\"drawn_ns\":null}\n");
        ref = by_lines(bad, strlen(bad), 0);
        ok(ref.r == -EBADMSG && ref.error.line > 10, "a negative counter mid-log: refused at line %u",
           ref.error.line);
        is_int(differing(bad, 0, &ref), 0, "a negative counter mid-log: the same line, whatever the blocks");
        result_done(&ref);
        free(bad);

        ref = by_lines(text, size, 600);
        ok(ref.r == 0, "the log's lines are below 600 bytes");
        is_int(differing(text, 600, &ref), 0, "the log's lines are below 600 bytes, whatever the blocks");
        result_done(&ref);
        snprintf(padded, sizeof(padded), "{\"counter\":4,\"drawn_ns\":null%700s}\n", "");
        bad = insert_line(text, size / 3, padded);
        ref = by_lines(bad, strlen(bad), 600);
        ok(ref.r == -EBADMSG && strcmp(ref.error.message, "line too long") == 0 && ref.error.line > 5,
           "a line of 700 bytes, the limit 600: refused at line %u: %s", ref.error.line, ref.error.message);
        is_int(differing(bad, 600, &ref), 0, "a line too long: the same line, whatever the blocks");
        result_done(&ref);
        free(bad);
        free(text);
}

/* Not a frame log: the same, line by line in order (no thread). */
static void test_other_formats(void) {
        static const char *const texts[] = {
                "\n\n16666667\n1 10 2\n5 20 9\r\n16666667\n5 20 9\n7 30 9223372036854775807\n8 40 9",
                "16666667\n1 10 2\nadb: error: device offline\n1 20 2\n",
                "---PROFILEDATA---\nFlags,IntendedVsync,FrameCompleted,\n0,1000,2000,\n0,2000,3000,\n"
                "---PROFILEDATA---\n",
                "\n \n\t\n",
        };

        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                Result ref = by_lines(texts[i], strlen(texts[i]), 0);

                is_int(differing(texts[i], 0, &ref), 0, "Android's dumps and blank text: blocks give the same");
                result_done(&ref);
        }
}

/* The library's own blocks (1 MiB) on two threads, a log of several blocks. */
static void test_large(void) {
        char *text = make_log(12000, false);
        size_t size = strlen(text);
        Result ref = by_lines(text, size, 0), res = { .error = { .line = 7777 } };
        Source src = { text, size, size };
        FramesParser *p;

        ok(size > 3 << 20, "a log of %zu bytes: several blocks", size);
        if (frames_log_new(&res.log) < 0 || frames_parser_new(res.log, &p) < 0)
                abort();
        res.r = frames_parser_text(p, text, size, 0, &res.error);
        res.lines = frames_parser_lines(p);
        frames_parser_free(p);
        ok(same(&ref, &res), "frames_parser_text(): the log line by line gives");
        result_done(&res);

        res = (Result) {};
        if (frames_log_new(&res.log) < 0 || frames_parser_new(res.log, &p) < 0)
                abort();
        res.r = frames_parser_read(p, read_at, &src, size, 1 << 20, &res.error);
        res.lines = frames_parser_lines(p);
        frames_parser_free(p);
        ok(same(&ref, &res), "frames_parser_read(): the log line by line gives");
        result_done(&res);
        result_done(&ref);
        free(text);
}

/* A file that shrinks while it is read: read_at() gives less than the size said, in the first
 * block or a later one, on one thread or two, in a log or before the format is told. */
static void test_shrunk(void) {
        char *text = make_log(3000, true);
        size_t size = strlen(text);

        for (size_t cut = 0; cut < size; cut += size / 5 + 1)
                for (unsigned n_workers = 1; n_workers <= 2; n_workers++) {
                        Source src = { text, cut, size };
                        Result res = { .error = { .line = 7777 } };
                        FramesParser *p;

                        if (frames_log_new(&res.log) < 0 || frames_parser_new(res.log, &p) < 0)
                                abort();
                        res.r = frames_parser_input(p, NULL, read_at, &src, size, 0, 64 << 10, n_workers,
                                                    &res.error);
                        frames_parser_free(p);
                        ok(res.r == -ENODATA, "%zu of %zu bytes left, %u thread(s): -ENODATA (%d)", cut, size,
                           n_workers, res.r);
                        result_done(&res);
                }
        free(text);
}

int main(void) {
        test_log();
        test_shrunk();
        test_errors();
        test_other_formats();
        test_large();
        return done_testing();
}
