/* SPDX-License-Identifier: MIT */

/* A whole input to the parser: a text in memory, or a file the caller reads for us at offsets
 * (the library does no I/O itself). The input is cut into blocks at newlines. Until the format
 * is told, and for Android's dumps, the blocks go through frames_parser_line() one line after
 * the other. A frame log of millions of rows is read by two threads: each reads every other
 * block into rows of its own (reading and parsing are most of the work), and the blocks join
 * the log strictly in turn, so the log gets the same rows in the same order, and the first
 * error of the input is the one reported, as line by line. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "frames-internal.h"
#include "frames-memory.h"

/* Large enough that taking turns costs nothing beside reading a block (~2,600 rows of the
 * probe's), small enough that a block and its rows stay in the cache until they join. */
#define BLOCK_SIZE ((size_t) 1 << 20)
#define N_WORKERS 2
/* What a worker first reads past its block, looking for the end of its last line (a row is a
 * few hundred bytes); twice as much each time after that. */
#define TAIL_READ_SIZE ((size_t) 4 << 10)

typedef struct Text {
        FramesParser *p;
        const char *text;               /* the input in memory, or NULL: read_at() */
        FramesReadAt read_at;
        void *userdata;
        uint64_t size;
        size_t block_size, max_line_size;
        pthread_mutex_t lock;
        pthread_cond_t turn_changed;
        uint64_t turn;                  /* the block whose rows join the log next */
        bool stop;                      /* a block failed: no later block joins */
        int r;                          /* the first error in the order of the input */
        FramesError error;
} Text;

typedef struct Worker {
        Text *t;
        uint64_t first, step;           /* its blocks: first, first + step, ... */
        char *buf;                      /* the bytes read (read_at()) */
        size_t buf_size;
        FramesStagedRow *staged;
        size_t n_staged_allocated;
} Worker;

/* Bytes of the input from offset on: data[0..n), end when they reach the end of the input. */
typedef struct Span {
        uint64_t offset;
        const char *data;
        size_t n;
        bool end;
} Span;

/* sp extended to want bytes, or to the end of the input. 0 or -errno; -ENODATA when read_at()
 * ends before the size the input was said to have. */
static int extend(Worker *w, Span *sp, size_t want) {
        const Text *t = w->t;

        if (t->size - sp->offset <= want) {
                want = (size_t) (t->size - sp->offset);
                sp->end = true;
        }
        if (t->text) {
                sp->data = t->text + sp->offset;
                sp->n = want;
                return 0;
        }
        if (want > w->buf_size) {
                void *buf = w->buf;

                /* Huge pages from the start (frames-memory.h): 4 KiB faults are dear. */
                if (frames_array_grow(&buf, &w->buf_size, want > 2 * w->buf_size ? want : 2 * w->buf_size, 1,
                                      false) < 0)
                        return -ENOMEM;
                w->buf = buf;
        }
        sp->data = w->buf;
        while (sp->n < want) {
                ssize_t k = t->read_at(t->userdata, w->buf + sp->n, want - sp->n, sp->offset + sp->n);

                if (k < 0)
                        return (int) k;
                /* Shorter than it was said to be: it changed while it was read (truncated
                 * and written again, perhaps), and the blocks already read may belong to
                 * another text than the ones still to come. */
                if (k == 0)
                        return -ENODATA;
                sp->n += (size_t) k;
        }
        return 0;
}

/* The lines of block k: s[0..n) (n is 0 when no line begins in it). Block k begins at 0, or
 * right after the first newline at or after byte k * block_size - 1: each line is in the block
 * its first byte is. *ret_beyond when the input ends before block k. 0 or -errno. */
static int fetch_block(Worker *w, uint64_t k, const char **ret_s, size_t *ret_n, bool *ret_beyond) {
        const Text *t = w->t;
        size_t probe, start, end, max = t->max_line_size;
        Span sp = {};
        const char *nl;
        int r;

        *ret_beyond = false;
        *ret_n = 0;
        /* The byte the next block looks for a newline from, counted from sp.offset. */
        if (k == 0)
                probe = t->block_size - 1;
        else if (k > (t->size - 1) / t->block_size) {
                *ret_beyond = true;
                return 0;
        } else {
                sp.offset = k * t->block_size - 1;
                probe = t->block_size;
        }
        r = extend(w, &sp, probe + 1);
        if (r < 0)
                return r;
        start = 0;
        if (k > 0) {
                nl = memchr(sp.data, '\n', sp.n < probe ? sp.n : probe);
                if (!nl)
                        return 0;       /* in a line that began in an earlier block */
                start = (size_t) (nl - sp.data) + 1;
        }
        if (sp.n <= probe)
                end = sp.n;
        else
                for (size_t from = probe;;) {
                        nl = memchr(sp.data + from, '\n', sp.n - from);
                        if (nl) {
                                end = (size_t) (nl - sp.data) + 1;
                                break;
                        }
                        /* Past the limit, a line too long to read further: the parser refuses
                         * it. */
                        if (sp.end || (max > 0 && sp.n - probe > max)) {
                                end = sp.n;
                                break;
                        }
                        from = sp.n;
                        r = extend(w, &sp, sp.n + (sp.n - probe > TAIL_READ_SIZE ? sp.n - probe : TAIL_READ_SIZE));
                        if (r < 0)
                                return r;
                }
        *ret_s = sp.data + start;
        *ret_n = end - start;
        return 0;
}

/* The next line of *s[0..*n): *ret_line[0..*ret_size), or false at the end. */
static bool next_line(const char **s, size_t *n, const char **ret_line, size_t *ret_size) {
        const char *nl;
        size_t size;

        if (*n == 0)
                return false;
        nl = memchr(*s, '\n', *n);
        size = nl ? (size_t) (nl - *s) : *n;
        *ret_line = *s;
        *ret_size = size;
        *s += size + !!nl;
        *n -= size + !!nl;
        return true;
}

/* Lines through the parser, one after the other. */
static int lines_in_turn(Text *t, const char *s, size_t n, FramesError *ret_error) {
        const char *line;
        size_t size;

        while (next_line(&s, &n, &line, &size)) {
                int r;

                if (t->max_line_size > 0 && size >= t->max_line_size)
                        return frames_fail(ret_error, t->p->line + 1, "line too long");
                r = frames_parser_line(t->p, line, size, ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The frame log's lines of s[0..n) to w->staged: 0 or an error, with ret_error->line counted
 * from the block's first line. Either way the rows read (before the error: they join the log as
 * line by line they would have) in *ret_rows, the lines in *ret_lines. */
static int lines_staged(Worker *w, const char *s, size_t n, unsigned *ret_lines, size_t *ret_rows,
                        FramesError *ret_error) {
        size_t max = w->t->max_line_size, size;
        const char *line;
        unsigned lines = 0;

        *ret_lines = 0;
        *ret_rows = 0;
        while (next_line(&s, &n, &line, &size)) {
                int r;

                *ret_lines = ++lines;
                if (max > 0 && size >= max)
                        return frames_fail(ret_error, lines, "line too long");
                parse_trim(&line, &size);
                if (size == 0)
                        continue;
                if (*ret_rows == w->n_staged_allocated) {
                        void *staged = w->staged;

                        if (frames_array_grow(&staged, &w->n_staged_allocated,
                                              w->n_staged_allocated ? 2 * w->n_staged_allocated : 1024,
                                              sizeof(FramesStagedRow), false) < 0)
                                return -ENOMEM;
                        w->staged = staged;
                }
                r = frames_jsonl_row(lines, line, size, &w->staged[*ret_rows], ret_error);
                if (r < 0)
                        return r;
                ++*ret_rows;
        }
        return 0;
}

static void *worker_run(void *userdata) {
        Worker *w = userdata;
        Text *t = w->t;

        for (uint64_t k = w->first;; k += w->step) {
                FramesError error = {};
                size_t n = 0, rows = 0;
                unsigned lines = 0;
                const char *s = NULL;
                bool beyond, stop;
                int r;

                r = fetch_block(w, k, &s, &n, &beyond);
                if (r >= 0 && beyond)
                        break;
                if (r >= 0)
                        r = lines_staged(w, s, n, &lines, &rows, &error);

                pthread_mutex_lock(&t->lock);
                while (t->turn != k && !t->stop)
                        pthread_cond_wait(&t->turn_changed, &t->lock);
                stop = t->stop;
                pthread_mutex_unlock(&t->lock);
                if (stop)
                        break;

                /* Until the turn moves on, the log and the parser are this thread's alone. */
                for (size_t i = 0; i < rows; i++) {
                        int q = frames_log_add_staged(t->p->log, &w->staged[i]);

                        if (q < 0) {
                                r = q;
                                break;
                        }
                }
                if (r == -EBADMSG)
                        error.line += t->p->line;
                t->p->line += lines;
                t->error = error;
                t->r = r;

                pthread_mutex_lock(&t->lock);
                t->stop = r < 0;
                t->turn = k + 1;
                pthread_cond_broadcast(&t->turn_changed);
                pthread_mutex_unlock(&t->lock);
                if (r < 0)
                        break;
        }
        return NULL;
}

static int run(Text *t, unsigned n_workers, FramesError *ret_error) {
        Worker w[N_WORKERS] = { { .t = t, .step = 1 }, { .t = t, .step = 2 } };
        pthread_t thread;
        bool threaded = false;
        uint64_t k = 0;
        int r = 0;

        /* Block by block, line by line, until the frame log is told. */
        for (; t->p->format != FRAMES_FORMAT_JSONL && r >= 0; k++) {
                const char *s = NULL;
                size_t n = 0;
                bool beyond;

                r = fetch_block(&w[0], k, &s, &n, &beyond);
                if (r >= 0 && beyond)
                        goto finish;
                if (r >= 0)
                        r = lines_in_turn(t, s, n, ret_error);
        }
        if (r < 0)
                goto finish;

        if (pthread_mutex_init(&t->lock, NULL) != 0) {
                r = -ENOMEM;
                goto finish;
        }
        if (pthread_cond_init(&t->turn_changed, NULL) != 0) {
                pthread_mutex_destroy(&t->lock);
                r = -ENOMEM;
                goto finish;
        }
        t->turn = w[0].first = k;
        /* A second thread when there is another block; without one (none to be had), alone. */
        if (n_workers >= 2 && k + 1 <= (t->size - 1) / t->block_size) {
                w[1].first = k + 1;
                threaded = pthread_create(&thread, NULL, worker_run, &w[1]) == 0;
                if (threaded)
                        w[0].step = 2;
        }
        worker_run(&w[0]);
        if (threaded)
                (void) pthread_join(thread, NULL);
        pthread_cond_destroy(&t->turn_changed);
        pthread_mutex_destroy(&t->lock);
        r = t->r;
        if (r == -EBADMSG)
                *ret_error = t->error;
finish:
        for (size_t i = 0; i < N_WORKERS; i++) {
                frames_array_free(w[i].buf, w[i].buf_size, 1);
                frames_array_free(w[i].staged, w[i].n_staged_allocated, sizeof(FramesStagedRow));
        }
        return r;
}

int frames_parser_input(FramesParser *p, const char *text, FramesReadAt read_at, void *userdata, uint64_t size,
                        size_t max_line_size, size_t block_size, unsigned n_workers, FramesError *ret_error) {
        Text t = {
                .p = p,
                .text = text,
                .read_at = read_at,
                .userdata = userdata,
                .size = size,
                .block_size = block_size > 0 ? block_size : 1,
                .max_line_size = max_line_size,
        };

        if (size == 0)
                return 0;
        return run(&t, n_workers, ret_error);
}

int frames_parser_text(FramesParser *p, const char *text, size_t size, size_t max_line_size,
                       FramesError *ret_error) {
        return frames_parser_input(p, text, NULL, NULL, size, max_line_size, BLOCK_SIZE, N_WORKERS, ret_error);
}

int frames_parser_read(FramesParser *p, FramesReadAt read_at, void *userdata, uint64_t size,
                       size_t max_line_size, FramesError *ret_error) {
        return frames_parser_input(p, NULL, read_at, userdata, size, max_line_size, BLOCK_SIZE, N_WORKERS,
                                   ret_error);
}
