/* SPDX-License-Identifier: MIT */

/* timeconv convert: values from the arguments or standard input, one output line per input, in
 * order. Offline (--snapshots) each value converts alone; live, runs of good values go to
 * timeconv_convert_many() together, and one by one only when the run failed, to say which. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli-io.h"
#include "cli.h"
#include "fd-util.h"
#include "parse-util.h"

#define BATCH_MAX 4096
/* The text of a batched value is kept for "in"; a longer one (zeros in front) goes alone. */
#define IN_TEXT_MAX 32
/* --snapshots given this many times at most (one machine each) */
#define FILES_MAX 16
#define FILE_MAX_BYTES (1024u * 1024u * 1024u)

typedef struct Convert {
        const struct timeconv_snapshots *snapshots;     /* offline (names resolved in pair), or */
        struct timeconv_snapshots_pair pair;
        struct timeconv *tc;                            /* live */
        const char *from, *to;
        int mode;
        bool json;
        int status;                                     /* the worst exit status so far */
        int fatal;                                      /* != 0: stop, said once on stderr */
        bool unavailable;                               /* a value failed for want of the daemon */
        size_t n_batch;
        int64_t batch[BATCH_MAX];
        char batch_in[BATCH_MAX][IN_TEXT_MAX];
        int64_t batch_out[BATCH_MAX];
        int64_t batch_uncertainty_ns[BATCH_MAX];
        CliOut out;
} Convert;

/* One result line: the value and its bound, or the reason it failed. in is the input as given,
 * spaces included (NULL when it was too long to keep). */
static void emit(Convert *c, const char *in, size_t in_size, const char *reason, int status, int64_t out,
                 int64_t uncertainty_ns) {
        if (reason)
                c->status = cli_worse_status(c->status, status);
        if (!c->json) {
                if (reason) {
                        cli_out_write(&c->out, "error: ", 7);
                        cli_out_str(&c->out, reason);
                } else {
                        cli_out_int(&c->out, out);
                        cli_out_str(&c->out, " \xc2\xb1");
                        cli_out_int(&c->out, uncertainty_ns);
                        cli_out_str(&c->out, " ns");
                }
                cli_out_char(&c->out, '\n');
                return;
        }

        cli_out_write(&c->out, "{\"in\":", 6);
        if (!in)
                cli_out_write(&c->out, "null", 4);
        else
                cli_out_json_string(&c->out, in, in_size);
        if (reason) {
                cli_out_write(&c->out, ",\"error\":", 9);
                cli_out_json_string(&c->out, reason, strlen(reason));
        } else {
                cli_out_write(&c->out, ",\"out\":", 7);
                cli_out_int(&c->out, out);
                cli_out_write(&c->out, ",\"uncertainty_ns\":", 18);
                cli_out_int(&c->out, uncertainty_ns);
        }
        cli_out_write(&c->out, "}\n", 2);
}

/* An unknown or malformed domain fails every value alike: said once, and the run stops. */
static bool live_fatal(Convert *c, int r) {
        if (r != -ENOENT && r != -EINVAL)
                return false;
        if (c->fatal)
                return true;
        if (r == -ENOENT) {
                const char *message = timeconv_last_error_message(c->tc);
                char quoted[80];

                /* The daemon names the domain it does not know: "unknown domain 'x'". */
                snprintf(quoted, sizeof(quoted), "'%s'", c->from);
                c->fatal = cli_unknown_domain(c->tc, message && strstr(message, quoted) ? c->from : c->to);
        } else {
                const char *message = timeconv_last_error_message(c->tc);

                if (!message && cli_name_problem(c->from))
                        fprintf(stderr, "timeconv: --from '%s': %s\n", c->from, cli_name_problem(c->from));
                else if (!message && cli_name_problem(c->to))
                        fprintf(stderr, "timeconv: --to '%s': %s\n", c->to, cli_name_problem(c->to));
                else
                        fprintf(stderr, "timeconv: cannot convert from '%s' to '%s': %s\n", c->from, c->to,
                                cli_reason(c->tc, r));
                c->fatal = EXIT_DATAERR;
        }
        return true;
}

static void emit_live(Convert *c, const char *in, int r, int64_t out, int64_t uncertainty_ns) {
        if (r < 0 && live_fatal(c, r))
                return;
        c->unavailable |= cli_unavailable(r);
        emit(c, in, in ? strlen(in) : 0, r < 0 ? cli_reason(c->tc, r) : NULL, cli_exit_status(r), out,
             uncertainty_ns);
}

/* One value on its own, over D-Bus when it fails through the table, so that a failure carries
 * the daemon's message. */
static int convert_alone(Convert *c, int64_t value, int64_t *ret_out, int64_t *ret_uncertainty_ns) {
        int r = timeconv_convert(c->tc, c->from, c->to, value, ret_out, ret_uncertainty_ns);

        if (r < 0 && !cli_unavailable(r) && timeconv_last_path(c->tc) != TIMECONV_PATH_DBUS &&
            timeconv_set_paths(c->tc, TIMECONV_PATH_DBUS) >= 0) {
                r = timeconv_convert(c->tc, c->from, c->to, value, ret_out, ret_uncertainty_ns);
                (void) timeconv_set_paths(c->tc, TIMECONV_PATH_ANY);
        }
        return r;
}

static void flush_batch(Convert *c) {
        size_t n = c->n_batch;
        int r;

        if (n == 0)
                return;
        c->n_batch = 0;
        if (c->fatal)
                return;
        r = timeconv_convert_many(c->tc, c->from, c->to, c->batch, n, c->batch_out, c->batch_uncertainty_ns);
        if (r < 0 && live_fatal(c, r))
                return;
        for (size_t i = 0; i < n && !c->fatal; i++) {
                int64_t out = 0, uncertainty_ns = 0;

                if (r >= 0)
                        emit_live(c, c->batch_in[i], 0, c->batch_out[i], c->batch_uncertainty_ns[i]);
                else if (cli_unavailable(r))
                        emit_live(c, c->batch_in[i], r, 0, 0);
                else {
                        int k = convert_alone(c, c->batch[i], &out, &uncertainty_ns);
                        emit_live(c, c->batch_in[i], k, out, uncertainty_ns);
                }
        }
}

static void convert_one(Convert *c, const char *in, size_t in_size, bool too_long) {
        int64_t value = 0, out = 0, uncertainty_ns = 0;
        int r;

        if (c->fatal)
                return;
        r = too_long ? -E2BIG : parse_int64(in, in_size, &value);
        /* "in" is the input as given, spaces and all, so that a script can match it with its
         * own; only the value is read without them. */
        if (r < 0) {
                flush_batch(c);         /* keep the order */
                emit(c, too_long ? NULL : in, in_size, r == -E2BIG ? "line too long" :
                     r == -ERANGE ? "value out of range" : "not an integer", EXIT_DATAERR, 0, 0);
                return;
        }
        if (c->tc && in_size < IN_TEXT_MAX) {
                memcpy(c->batch_in[c->n_batch], in, in_size);
                c->batch_in[c->n_batch][in_size] = 0;
                c->batch[c->n_batch++] = value;
                if (c->n_batch == BATCH_MAX)
                        flush_batch(c);
                return;
        }
        if (c->tc) {
                flush_batch(c);
                if (c->fatal)
                        return;
                r = convert_alone(c, value, &out, &uncertainty_ns);
                if (r < 0 && live_fatal(c, r))
                        return;
                c->unavailable |= cli_unavailable(r);
                emit(c, in, in_size, r < 0 ? cli_reason(c->tc, r) : NULL, cli_exit_status(r), out,
                     uncertainty_ns);
                return;
        }
        r = timeconv_snapshots_pair_convert(&c->pair, value, &out, &uncertainty_ns);
        emit(c, in, in_size, r < 0 ? timeconv_strerror(r) : NULL, cli_exit_status(r), out, uncertainty_ns);
}

static int convert_stdin(Convert *c) {
        _cleanup_free_ CliLines *lines = malloc(sizeof(*lines));       /* 1 MiB: too large for the stack */
        const char *line;
        size_t size;
        int r = 0;

        if (!lines) {
                fputs("timeconv: out of memory\n", stderr);
                return -ENOMEM;
        }
        cli_lines_init(lines, STDIN_FILENO);
        while (!c->fatal && (r = cli_lines_next(lines, &line, &size)) > 0)
                convert_one(c, line, size, r == CLI_LINE_TOO_LONG);
        if (r < 0)
                fprintf(stderr, "timeconv: cannot read standard input: %s\n", strerror(-r));
        return r;
}

static bool has_domain(const struct timeconv_snapshots *s, const char *name) {
        for (size_t i = 0; i < timeconv_snapshots_count_domains(s); i++)
                if (strcmp(timeconv_snapshots_domain_name(s, i), name) == 0)
                        return true;
        return false;
}

/* Several machines' files: "mN=FILE" is machine N's, a plain FILE machine 0's. */
typedef struct Machines {
        const char *files[FILES_MAX];
        size_t n_files;
        const char *shared;             /* --shared NAME=BOUND_NS */
        int64_t shared_bound_ns;
} Machines;

static int read_whole(const char *path, char **ret, size_t *ret_size) {
        void *data;
        int fd = open(path, O_RDONLY | O_CLOEXEC), r;

        if (fd < 0)
                return -errno;
        r = read_fd_whole(fd, FILE_MAX_BYTES, &data, ret_size);
        close(fd);
        if (r < 0)
                return r;
        *ret = data;
        return 0;
}

/* "m1=b.json" -> machine 1, "b.json"; anything else is machine 0's file. */
static const char *file_machine(const char *arg, unsigned *ret_machine) {
        const char *eq = strchr(arg, '=');
        int64_t n;

        *ret_machine = 0;
        if (arg[0] != 'm' || !eq || eq == arg + 1 || parse_int64(arg + 1, (size_t) (eq - arg - 1), &n) < 0 ||
            n < 1 || n > UINT32_MAX || strspn(arg + 1, "0123456789") != (size_t) (eq - arg - 1))
                return arg;
        *ret_machine = (unsigned) n;
        return eq + 1;
}

static int load_machines(const Machines *m, struct timeconv_snapshots **ret) {
        struct timeconv_snapshot_source sources[FILES_MAX];
        char *data[FILES_MAX] = {};
        struct timeconv_error error;
        int r = 0;

        for (size_t i = 0; i < m->n_files && r >= 0; i++) {
                const char *path = file_machine(m->files[i], &sources[i].machine);

                r = read_whole(path, &data[i], &sources[i].size);
                if (r < 0)
                        fprintf(stderr, "timeconv: %s: cannot read the file: %s\n", path, strerror(-r));
                sources[i].data = data[i];
        }
        if (r >= 0) {
                r = timeconv_snapshots_load_machines(sources, m->n_files, m->shared, m->shared_bound_ns, ret, &error);
                if (r < 0)
                        fprintf(stderr, "timeconv: %s%s%s\n", error.message,
                                error.line > 0 ? " (in one of the files; load each alone to see which)" : "",
                                r == -EINVAL ? " (--snapshots: one FILE of machine 0, the others mN=FILE)" : "");
                r = r < 0 ? (r == -EBADMSG || r == -EINVAL ? EXIT_DATAERR : EXIT_NOINPUT) : 0;
        } else
                r = EXIT_NOINPUT;
        for (size_t i = 0; i < m->n_files; i++)
                free(data[i]);
        return r;
}

static int load_snapshots(const Machines *m, Convert *c, struct timeconv_snapshots **ret) {
        struct timeconv_error error;
        const char *file = m->files[0];
        int r;

        if (m->n_files > 1) {
                r = load_machines(m, ret);
                if (r != 0)
                        return r;
                file = "the snapshots";
        } else
                r = timeconv_snapshots_load(file, ret, &error);
        if (r < 0) {
                if (error.line > 0)
                        fprintf(stderr, "timeconv: %s:%u:%u: %s\n", file, error.line, error.column,
                                error.message);
                else
                        fprintf(stderr, "timeconv: %s: %s\n", file, error.message);
                return r == -EBADMSG ? EXIT_DATAERR : EXIT_NOINPUT;
        }
        if (timeconv_snapshots_count_domains(*ret) == 0) {
                /* {"snapshots": []}: nothing to list after "they have:". */
                fprintf(stderr, "timeconv: %s: the file has no snapshots\n", file);
                *ret = timeconv_snapshots_free(*ret);
                return EXIT_DATAERR;
        }
        for (const char *const *d = (const char *const[]) { c->from, c->to, NULL }; *d; d++)
                if (!has_domain(*ret, *d)) {
                        fprintf(stderr, "timeconv: %s: no domain '%s' in the snapshots; they have:", file, *d);
                        for (size_t i = 0; i < timeconv_snapshots_count_domains(*ret); i++)
                                fprintf(stderr, "%s %s", i == 0 ? "" : ",",
                                        timeconv_snapshots_domain_name(*ret, i));
                        fputc('\n', stderr);
                        *ret = timeconv_snapshots_free(*ret);
                        return EXIT_DATAERR;
                }
        /* Resolved once: a value then costs its conversion, not two name lookups. */
        r = timeconv_snapshots_pair(*ret, c->mode, c->from, c->to, &c->pair);
        if (r < 0) {
                fprintf(stderr, "timeconv: %s: %s\n", file, timeconv_strerror(r));
                *ret = timeconv_snapshots_free(*ret);
                return EXIT_DATAERR;
        }
        return 0;
}

static int run(Convert *c, int argc, char **argv) {
        int r = 0, status;

        cli_out_init(&c->out, STDOUT_FILENO);
        if (optind < argc)
                for (int i = optind; i < argc && !c->fatal; i++)
                        convert_one(c, argv[i], strlen(argv[i]), false);
        else
                r = convert_stdin(c);
        flush_batch(c);
        /* Input that cannot be read (a directory, an I/O error) is 66, as for a file: 74 is
         * for what we write. */
        status = c->fatal ? c->fatal : r < 0 ? EXIT_NOINPUT : c->status;
        if (cli_out_flush(&c->out) < 0) {
                fprintf(stderr, "timeconv: cannot write: %s\n", strerror(-c->out.error));
                status = EXIT_IOERR;
        }
        if (c->unavailable && !c->fatal)
                fputs("timeconv: timeconvd is not available\n", stderr);
        return status;
}

/* The first argument before "--" that getopt would take for an option but is a negative number
 * ("-5"), skipping the values of the options that take one; NULL if none. */
static const char *negative_value(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (strcmp(a, "--") == 0)
                        return NULL;
                if (a[0] == '-' && a[1] >= '0' && a[1] <= '9')
                        return a;
                if (a[0] == '-' && a[1] == '-')
                        i += !strchr(a, '=') && (strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0 ||
                                                 strcmp(a, "--snapshots") == 0 || strcmp(a, "--mode") == 0 ||
                                                 strcmp(a, "--shared") == 0);
                else if (a[0] == '-' && a[1]) {
                        /* A cluster ("-jf A"): an option that takes a value ends it. */
                        size_t k = strcspn(a + 1, "ftsm");

                        i += a[1 + k] && !a[2 + k];
                }
        }
        return NULL;
}

int cli_cmd_convert(int argc, char **argv) {
        static const struct option options[] = {
                { "from", required_argument, NULL, 'f' },
                { "to", required_argument, NULL, 't' },
                { "snapshots", required_argument, NULL, 's' },
                { "mode", required_argument, NULL, 'm' },
                { "shared", required_argument, NULL, 'S' },
                { "json", no_argument, NULL, 'j' },
                CLI_COMMON_OPTIONS,
                {}
        };
        struct timeconv_snapshots *snapshots = NULL;
        Machines m = {};
        bool mode_set = false;
        _cleanup_free_ Convert *c = NULL;
        int opt, r;

        if (negative_value(argc, argv)) {
                fprintf(stderr, "timeconv: '%s' reads as an option: put negative values after '--' "
                        "(timeconv convert --from A --to B -- %s)\nTry 'timeconv convert --help'.\n",
                        negative_value(argc, argv), negative_value(argc, argv));
                return EXIT_USAGE;
        }
        c = calloc(1, sizeof(*c));      /* the batch and output buffers: too large for the stack */
        if (!c) {
                fputs("timeconv: out of memory\n", stderr);
                return EXIT_FAILURE;
        }
        c->mode = TIMECONV_MODE_DRIFT;
        while ((opt = getopt_long(argc, argv, "f:t:s:m:jh", options, NULL)) >= 0)
                switch (opt) {
                case 'f':
                        c->from = optarg;
                        break;
                case 't':
                        c->to = optarg;
                        break;
                case 's':
                        if (m.n_files == FILES_MAX)
                                return cli_usage_error("%s", "more than 16 --snapshots");
                        m.files[m.n_files++] = optarg;
                        break;
                case 'S': {
                        char *eq = strrchr(optarg, '=');

                        /* no bound: the files' (the kernels' maxerror in timeconvd's exports) */
                        m.shared_bound_ns = TIMECONV_SHARED_BOUND_FROM_FILES;
                        if (eq && (eq == optarg || parse_int64(eq + 1, strlen(eq + 1), &m.shared_bound_ns) < 0 ||
                                   m.shared_bound_ns < 0))
                                return cli_usage_error("--shared takes CLOCK or CLOCK=BOUND_NS, as realtime=2000000 "
                                                       "(got '%s')", optarg);
                        if (eq)
                                *eq = 0;        /* our own argv: the clock's name ends there */
                        m.shared = optarg;
                        break;
                }
                case 'm':
                        mode_set = true;
                        r = cli_parse_mode(optarg, &c->mode);
                        if (r != 0)
                                return r;
                        break;
                case 'j':
                        c->json = true;
                        break;
                default:
                        return cli_common_option(opt, "convert");
                }
        if (!c->from || !c->to)
                return cli_usage_error("%s", "convert needs --from and --to");
        if (mode_set && m.n_files == 0)
                return cli_usage_error("%s", "--mode needs --snapshots (live conversion has no mode)");
        if ((m.n_files > 1) != (m.shared != NULL))
                return cli_usage_error("%s", m.shared ? "--shared relates the files of several --snapshots" :
                                       "several --snapshots need --shared CLOCK=BOUND_NS (the clock they share)");

        r = m.n_files ? load_snapshots(&m, c, &snapshots) : cli_open(&c->tc);
        if (r == 0) {
                c->snapshots = snapshots;
                r = run(c, argc, argv);
        }
        timeconv_snapshots_free(snapshots);
        timeconv_free(c->tc);
        return r;
}
