/* SPDX-License-Identifier: MIT */

/* timeconv frames: frame statistics from SurfaceFlinger --latency dumps, gfxinfo framestats or
 * libtimeconv's frame log, read from the files given (in order, merged) or standard input. It
 * needs no daemon: the times are all CLOCK_MONOTONIC already. With --probe it measures the
 * running compositor instead (cli-probe.c). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli-io.h"
#include "cli-frames-print.h"
#include "cli-probe.h"
#include "cli.h"
#include "frames-report.h"
#include "frames-stats.h"

#define STDIN_NAME "standard input"

/* The input is read on a thread of its own, a few chunks ahead of the parser: copying a frame
 * log of 2 GB out of the page cache is a third of reading it, and the machine has a second
 * core. The chunks are reused, so no memory is touched fresh after the first round. */
#define CHUNK_SIZE (1024 * 1024)
#define N_CHUNKS 4
/* A line longer than this is an error, as cli_lines_next() has it. */
#define LINE_MAX_SIZE CLI_IN_SIZE

typedef struct Chunk {
        size_t size;
        bool full;              /* the reader's until set, the parser's until cleared */
        bool eof;               /* the last chunk: size may be 0 */
        int error;              /* -errno of the read; the last chunk too */
        char buf[CHUNK_SIZE];
} Chunk;

typedef struct Reader {
        int fd;
        pthread_mutex_t lock;
        pthread_cond_t filled, emptied;
        bool stop;              /* the parser gave up: the reader ends */
        Chunk chunks[N_CHUNKS];
} Reader;

static void *reader_run(void *userdata) {
        Reader *rd = userdata;

        /* Cancelled (when the parser gives up on a pipe that stays open) only inside read(),
         * never holding the lock. */
        (void) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        for (size_t i = 0;; i = (i + 1) % N_CHUNKS) {
                Chunk *ch = &rd->chunks[i];
                bool stop;

                pthread_mutex_lock(&rd->lock);
                while (ch->full && !rd->stop)
                        pthread_cond_wait(&rd->emptied, &rd->lock);
                stop = rd->stop;
                pthread_mutex_unlock(&rd->lock);
                if (stop)
                        return NULL;

                /* Outside the lock: the chunk is the reader's until it says full. */
                ch->size = 0;
                ch->eof = false;
                ch->error = 0;
                /* One read: what a pipe has now goes to the parser now. */
                for (;;) {
                        ssize_t k;
                        int e;

                        (void) pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
                        k = read(rd->fd, ch->buf, sizeof(ch->buf));
                        e = errno;
                        (void) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
                        if (k < 0 && e == EINTR)
                                continue;
                        if (k < 0)
                                ch->error = -e;
                        if (k <= 0)
                                ch->eof = true;
                        else
                                ch->size = (size_t) k;
                        break;
                }

                pthread_mutex_lock(&rd->lock);
                ch->full = true;
                pthread_cond_signal(&rd->filled);
                pthread_mutex_unlock(&rd->lock);
                if (ch->eof)
                        return NULL;
        }
}

static Chunk *reader_take(Reader *rd, size_t i) {
        Chunk *ch = &rd->chunks[i];

        pthread_mutex_lock(&rd->lock);
        while (!ch->full)
                pthread_cond_wait(&rd->filled, &rd->lock);
        pthread_mutex_unlock(&rd->lock);
        return ch;
}

static void reader_give_back(Reader *rd, Chunk *ch) {
        pthread_mutex_lock(&rd->lock);
        ch->full = false;
        pthread_cond_signal(&rd->emptied);
        pthread_mutex_unlock(&rd->lock);
}

typedef struct Frames {
        FramesLog *log;
        FramesFormat format;    /* of the inputs so far; FRAMES_FORMAT_UNKNOWN until one */
        bool mixed;
        Reader reader;          /* 4 MiB: the struct lives on the heap */
        char *carry;            /* a line that spans chunks: LINE_MAX_SIZE */
} Frames;

/* One line to the parser, or the error of a line too long. */
static int parse_line(FramesParser *p, const char *line, size_t size, bool overlong, FramesError *error) {
        if (overlong) {
                error->line = frames_parser_lines(p) + 1;
                snprintf(error->message, sizeof(error->message), "line too long");
                return -EBADMSG;
        }
        return frames_parser_line(p, line, size, error);
}

/* The lines of fd, read on the reader thread, to the parser: 0, or -errno of the read, or what
 * the parser returned. Lines are those of cli_lines_next(): split on '\n', the last one
 * without it when it holds text, longer than LINE_MAX_SIZE an error. */
static int parse_input(Frames *c, FramesParser *p, int fd, FramesError *error) {
        Reader *rd = &c->reader;
        size_t n_carry = 0;
        bool overlong = false;
        pthread_t thread;
        int r = 0;

        rd->fd = fd;
        rd->stop = false;
        for (size_t i = 0; i < N_CHUNKS; i++)
                rd->chunks[i].full = false;
        r = -pthread_create(&thread, NULL, reader_run, rd);
        if (r < 0)
                return r;

        for (size_t i = 0; r >= 0; i = (i + 1) % N_CHUNKS) {
                Chunk *ch = reader_take(rd, i);
                const char *s = ch->buf, *end = ch->buf + ch->size;
                bool eof = ch->eof;

                while (r >= 0 && s < end) {
                        const char *nl = memchr(s, '\n', (size_t) (end - s));
                        size_t n = (size_t) ((nl ? nl : end) - s);

                        if (n_carry == 0 && !overlong && nl && n < LINE_MAX_SIZE) {
                                /* The common case: the line lies in the chunk. */
                                r = parse_line(p, s, n, false, error);
                                s = nl + 1;
                                continue;
                        }
                        /* A line that began in an earlier chunk or ends in a later one. */
                        if (!overlong && n_carry + n < LINE_MAX_SIZE) {
                                memcpy(c->carry + n_carry, s, n);
                                n_carry += n;
                        } else
                                overlong = true;
                        s += n;
                        if (nl) {
                                r = parse_line(p, c->carry, n_carry, overlong, error);
                                n_carry = 0;
                                overlong = false;
                                s++;
                        }
                }
                if (r >= 0 && ch->error < 0)
                        r = ch->error;
                else if (r >= 0 && eof && (n_carry > 0 || overlong))
                        r = parse_line(p, c->carry, n_carry, overlong, error);
                reader_give_back(rd, ch);
                if (eof)
                        break;
        }

        pthread_mutex_lock(&rd->lock);
        rd->stop = true;
        pthread_cond_signal(&rd->emptied);
        pthread_mutex_unlock(&rd->lock);
        /* Past the end it has returned; else it may wait in read() for a pipe's writer. */
        (void) pthread_cancel(thread);
        (void) pthread_join(thread, NULL);
        return r;
}

static ssize_t read_at(void *userdata, void *buf, size_t size, uint64_t offset) {
        int fd = *(int *) userdata;
        ssize_t k;

        do
                k = pread(fd, buf, size, (off_t) offset);
        while (k < 0 && errno == EINTR);
        return k < 0 ? -errno : k;
}

/* A regular file is read where the parser needs it: a large frame log by two threads at once
 * (frames_parser_read()). 1 when it was, 0 when fd is not a regular file (the reader's then),
 * or what the parser returned. */
static int parse_file(FramesParser *p, int fd, FramesError *error) {
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
                return 0;
        r = frames_parser_read(p, read_at, &fd, (uint64_t) st.st_size, LINE_MAX_SIZE, error);
        return r < 0 ? r : 1;
}

/* Reads one input into the log: 0 or an exit status. */
static int read_input(Frames *c, const char *name, int fd, bool whole_file) {
        FramesParser *p = NULL;
        FramesError error = {};
        int r;

        r = frames_parser_new(c->log, &p);
        if (r < 0)
                goto oom;
        /* A hint: the kernel may read further ahead. */
        (void) posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        /* Standard input is read from where it stands, even when it is a file. */
        r = whole_file ? parse_file(p, fd, &error) : 0;
        if (r == 0)
                r = parse_input(c, p, fd, &error);
        if (r >= 0)
                r = frames_parser_finish(p, &error);
        if (r >= 0 && frames_parser_format(p) != FRAMES_FORMAT_UNKNOWN) {
                c->mixed |= c->format != FRAMES_FORMAT_UNKNOWN && c->format != frames_parser_format(p);
                c->format = frames_parser_format(p);
        }
        frames_parser_free(p);
        if (r == -ENOMEM)
                goto oom;
        if (r == -EBADMSG) {
                if (error.line > 0)
                        fprintf(stderr, "timeconv: %s:%u: %s\n", name, error.line, error.message);
                else
                        fprintf(stderr, "timeconv: %s: %s\n", name, error.message);
                return EXIT_DATAERR;
        }
        if (r == -ENODATA) {
                fprintf(stderr, "timeconv: %s: ended before the size it had when reading began (was it truncated "
                        "while being read?)\n", name);
                return EXIT_NOINPUT;
        }
        if (r < 0) {
                fprintf(stderr, "timeconv: %s: cannot read: %s\n", name, strerror(-r));
                return EXIT_NOINPUT;
        }
        return 0;
oom:
        fputs("timeconv: out of memory\n", stderr);
        return EXIT_FAILURE;
}

static int read_file(Frames *c, const char *name) {
        int fd, status;

        if (strcmp(name, "-") == 0)
                return read_input(c, STDIN_NAME, STDIN_FILENO, false);
        fd = open(name, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "timeconv: %s: %s\n", name, strerror(errno));
                return EXIT_NOINPUT;
        }
        status = read_input(c, name, fd, true);
        close(fd);
        return status;
}

static int report(Frames *c, bool json, const char *plot, int64_t refresh_ns, int64_t window) {
        const char *format = c->mixed ? "mixed" : frames_format_name(c->format);
        FramesReport *r;
        int k, status;

        k = frames_report_new(c->log, format, refresh_ns, window, &r);
        if (k == -ENOENT) {
                fprintf(stderr, c->format == FRAMES_FORMAT_JSONL && !c->mixed ? "timeconv: no window 0x%" PRIx64
                        " in the %s\n" : "timeconv: no window 0x%" PRIx64 " in the input: --window picks one of a "
                        "frame log, and %s has none\n", (uint64_t) window, format);
                return EXIT_FAILURE;
        }
        if (k < 0) {
                fputs("timeconv: out of memory\n", stderr);
                return EXIT_FAILURE;
        }
        status = cli_frames_print(r, json, plot);
        frames_report_free(r);
        return status;
}

static int parse_hz(const char *s, int64_t *ret_refresh_ns) {
        double hz;

        if (parse_double(s, 1, 10000, &hz) < 0)
                return -EINVAL;
        *ret_refresh_ns = llround(1e9 / hz);
        return 0;
}

int cli_cmd_frames(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "plot", required_argument, NULL, 'p' },
                { "refresh-hz", required_argument, NULL, 'r' },
                { "window", required_argument, NULL, 'w' },
                CLI_COMMON_OPTIONS,
                {}
        };
        const char *plot = NULL;
        int64_t refresh_ns = 0, window = FRAMES_NO_WINDOW;
        bool json = false;
        int opt, status = 0;
        Frames *c;

        /* The probe has options of its own. */
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strcmp(argv[i], "--probe") == 0)
                        return cli_probe(argc, argv);

        while ((opt = getopt_long(argc, argv, "jp:r:w:h", options, NULL)) >= 0)
                switch (opt) {
                case 'j':
                        json = true;
                        break;
                case 'p':
                        plot = optarg;
                        break;
                case 'r':
                        if (parse_hz(optarg, &refresh_ns) < 0)
                                return cli_usage_error("bad --refresh-hz '%s' (1 to 10000)", optarg);
                        break;
                case 'w': {
                        char *end;

                        errno = 0;
                        window = (int64_t) strtoll(optarg, &end, 0);
                        if (errno != 0 || end == optarg || *end != '\0' || window < 0 || window > UINT32_MAX)
                                return cli_usage_error("bad --window '%s' (an X window id: 0x1a00003, 27262979)",
                                                       optarg);
                        break;
                }
                default:
                        return cli_common_option(opt, "frames");
                }

        c = calloc(1, sizeof(*c));
        if (c)
                c->carry = malloc(LINE_MAX_SIZE);
        if (!c || !c->carry || pthread_mutex_init(&c->reader.lock, NULL) != 0 ||
            pthread_cond_init(&c->reader.filled, NULL) != 0 || pthread_cond_init(&c->reader.emptied, NULL) != 0 ||
            frames_log_new(&c->log) < 0) {
                if (c)
                        free(c->carry);
                free(c);
                fputs("timeconv: out of memory\n", stderr);
                return EXIT_FAILURE;
        }
        if (optind == argc)
                status = read_file(c, "-");
        for (int i = optind; i < argc && status == 0; i++)
                status = read_file(c, argv[i]);
        if (status == 0)
                status = report(c, json, plot, refresh_ns, window);
        frames_log_free(c->log);
        pthread_cond_destroy(&c->reader.emptied);
        pthread_cond_destroy(&c->reader.filled);
        pthread_mutex_destroy(&c->reader.lock);
        free(c->carry);
        free(c);
        return status;
}
