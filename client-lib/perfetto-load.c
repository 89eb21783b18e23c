/* SPDX-License-Identifier: MIT */

/* A Perfetto trace as a snapshot source (timeconv_snapshots_load_buffer() by content) and the
 * timeconv_trace_* API: a first pass of the reader builds the snapshot graph from the trace's
 * ClockSnapshots and RemoteClockSync brackets; timeconv_trace_place() reads the trace again and
 * places each timestamped packet through that graph, by index (no name lookups per packet). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock-id.h"
#include "fd-util.h"
#include "perfetto-read.h"
#include "timeconv-internal.h"

#define NO_INDEX SIZE_MAX

struct timeconv_trace {
        const uint8_t *data;
        size_t size;
        void *mapping;                  /* what timeconv_trace_load() mapped or read, owned */
        size_t mapping_size;
        bool mapped;

        struct timeconv_snapshots *snapshots;
        PfClock *clocks;                /* as the first pass left them */
        size_t n_clocks;
        size_t *graph_index;            /* per clock: its domain in the graph, or NO_INDEX */
        char (*names)[PF_CLOCK_NAME_MAX];
        uint32_t trace_clock_id;
        uint64_t n_packets;
        char trace_clock_name[PF_CLOCK_NAME_MAX];
};

typedef struct Load {
        SnapshotGraph *graph;
        size_t graph_index[PF_MAX_CLOCKS];
} Load;

bool perfetto_trace_detect(const char *data, size_t size) {
        size_t i = 0;

        /* A trace starts with Trace.packet's key, 0x0a, which is also a newline: a JSON file is
         * one whose first byte after white space opens an object or an array. */
        while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
                i++;
        if (i == size || data[i] == '{' || data[i] == '[')
                return false;
        return data[0] == 0x0a;
}

/* timeconv's X clocks, in the multipliers timeconv export writes them with, are read as live
 * reads them: x11 wraps at 32 bits of ms, x11_us is the X11 µs encoding (its ms part wraps
 * inside the value). Their values then unwrap to the occurrence nearest the snapshots, and
 * answers in them are in wire form, as live gives them. */
static void clock_unit(const PfClock *c, DomainUnit *unit) {
        char name[PF_CLOCK_NAME_MAX];

        if (c->sequence != 0 || !clock_id_known_name(c->id, name, sizeof(name)))
                return;
        if (strcmp(name, "x11") == 0 && c->unit_multiplier_ns == 1000000)
                *unit = UNIT_MS_X11;
        else if (strcmp(name, "x11_us") == 0 && c->unit_multiplier_ns == 1000)
                *unit = UNIT_US_X11;
}

static int load_snapshot(PfReader *r, const PfSnapshot *s, void *userdata) {
        Load *l = userdata;
        SnapshotClock clocks[PF_MAX_SNAPSHOT_CLOCKS];
        char name[PF_CLOCK_NAME_MAX];
        int k;

        /* A snapshot of one clock relates nothing (trace_processor makes no edge of it). */
        if (s->n < 2)
                return 0;
        for (size_t i = 0; i < s->n; i++) {
                const PfClock *c = pf_reader_clock(r, s->readings[i].clock);
                size_t *gi = &l->graph_index[s->readings[i].clock];

                pf_clock_name(c->machine, c->sequence, c->id, name);
                if (*gi == NO_INDEX) {
                        DomainUnit unit = UNIT_NS;

                        unit.period_ns = (double) c->unit_multiplier_ns;
                        clock_unit(c, &unit);
                        k = snapshot_graph_declare(l->graph, name, &unit);
                        if (k == -ENOSPC)
                                return pf_reader_fail(r, s->offset, "more than %d clocks in snapshots",
                                                      SNAPSHOT_FILE_MAX_DOMAINS);
                        if (k >= 0)
                                k = snapshot_graph_find(l->graph, name, gi);
                        if (k < 0)
                                return k == -ENOMEM ? k :
                                        pf_reader_fail(r, s->offset, "clock %s refused (%s)", name, strerror(-k));
                }
                clocks[i] = (SnapshotClock) {
                        .domain = snapshot_graph_name(l->graph, *gi),
                        .ts = s->readings[i].ts,
                        .uncertainty_ns = s->readings[i].uncertainty_ns,
                };
                if (unit_to_ns(&(DomainUnit) { .period_ns = (double) c->unit_multiplier_ns }, clocks[i].ts,
                               &(int64_t) { 0 }) < 0)
                        return pf_reader_fail(r, s->offset, "clock %s: %lld units of %lld ns is out of range",
                                              name, (long long) clocks[i].ts, (long long) c->unit_multiplier_ns);
        }
        k = snapshot_graph_add(l->graph, clocks, s->n);
        if (k == -ENOMEM)
                return k;
        return k < 0 ? pf_reader_fail(r, s->offset, "snapshot refused (%s)", strerror(-k)) : 0;
}

static void set_error(struct timeconv_error *e, int k, const PfReader *reader) {
        if (k == -EBADMSG && reader)
                snapshot_file_set_error(e, 0, 0, "malformed Perfetto trace: ", pf_reader_message(reader));
        else
                snapshot_file_set_error(e, 0, 0, "cannot load the trace: ", strerror(-k));
}

static struct timeconv_trace *trace_free(struct timeconv_trace *t) {
        if (!t)
                return NULL;
        timeconv_snapshots_free(t->snapshots);
        free(t->clocks);
        free(t->graph_index);
        free(t->names);
        if (t->mapped)
                munmap(t->mapping, t->mapping_size);
        else
                free(t->mapping);
        free(t);
        return NULL;
}

/* An empty trace, or NULL with -ENOMEM said in *ret_error. */
static struct timeconv_trace *trace_new(struct timeconv_error *ret_error) {
        struct timeconv_trace *t = calloc(1, sizeof(*t));

        if (!t)
                set_error(ret_error, -ENOMEM, NULL);
        return t;
}

/* The first pass over t->data: the graph, the clocks, the trace clock. */
static int trace_build(struct timeconv_trace *t, struct timeconv_error *ret_error) {
        static const PfScanOps ops = { .snapshot = load_snapshot };
        PfReader *reader = NULL;
        Load *l = NULL;
        int k;

        l = malloc(sizeof(*l));
        t->snapshots = calloc(1, sizeof(*t->snapshots));
        k = l && t->snapshots ? pf_reader_new(&reader) : -ENOMEM;
        if (k >= 0) {
                for (size_t i = 0; i < PF_MAX_CLOCKS; i++)
                        l->graph_index[i] = NO_INDEX;
                k = snapshot_graph_new(&l->graph);
        }
        if (k >= 0) {
                t->snapshots->graph = l->graph;
                k = pf_reader_scan(reader, t->data, t->size, &ops, l);
        }
        if (k >= 0)
                k = snapshot_graph_finalize(l->graph);
        if (k >= 0) {
                t->n_clocks = pf_reader_count_clocks(reader);
                t->clocks = calloc(t->n_clocks + 1, sizeof(*t->clocks));
                t->graph_index = calloc(t->n_clocks + 1, sizeof(*t->graph_index));
                t->names = calloc(t->n_clocks + 1, sizeof(*t->names));
                if (!t->clocks || !t->graph_index || !t->names)
                        k = -ENOMEM;
        }
        if (k >= 0) {
                for (size_t i = 0; i < t->n_clocks; i++) {
                        const PfClock *c = pf_reader_clock(reader, i);

                        t->clocks[i] = *c;
                        t->graph_index[i] = l->graph_index[i];
                        pf_clock_name(c->machine, c->sequence, c->id, t->names[i]);
                }
                t->trace_clock_id = pf_reader_trace_clock_id(reader);
                t->n_packets = pf_reader_count_packets(reader);
                pf_clock_name(0, 0, t->trace_clock_id, t->trace_clock_name);
        } else
                set_error(ret_error, k, reader);
        pf_reader_free(reader);
        free(l);
        return k;
}

int perfetto_snapshots_load(const char *data, size_t size, struct timeconv_snapshots **ret,
                            struct timeconv_error *ret_error) {
        struct timeconv_trace *t = trace_new(ret_error);
        int k;

        if (!t)
                return -ENOMEM;
        t->data = (const uint8_t *) data;
        t->size = size;
        k = trace_build(t, ret_error);
        if (k >= 0) {
                *ret = t->snapshots;
                t->snapshots = NULL;
        }
        trace_free(t);
        return k;
}

TIMECONV_EXPORT int timeconv_trace_load_buffer(const void *data, size_t size, struct timeconv_trace **ret,
                                               struct timeconv_error *ret_error) {
        struct timeconv_trace *t;
        int k;

        if ((!data && size > 0) || !ret) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument", "");
                return -EINVAL;
        }
        t = trace_new(ret_error);
        if (!t)
                return -ENOMEM;
        t->data = data;
        t->size = size;
        k = trace_build(t, ret_error);
        if (k < 0) {
                trace_free(t);
                return k;
        }
        *ret = t;
        return 0;
}

TIMECONV_EXPORT int timeconv_trace_load(const char *path, struct timeconv_trace **ret,
                                        struct timeconv_error *ret_error) {
        struct timeconv_trace *t;
        struct stat st;
        int fd, k = 0;

        if (!path || !ret) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument", "");
                return -EINVAL;
        }
        t = trace_new(ret_error);
        if (!t)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                k = -errno;
                snapshot_file_set_error(ret_error, 0, 0, "cannot open the file: ", strerror(-k));
        } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
                t->mapping_size = (size_t) st.st_size;
                t->mapping = mmap(NULL, t->mapping_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (t->mapping == MAP_FAILED) {
                        k = -errno;
                        t->mapping = NULL;
                        snapshot_file_set_error(ret_error, 0, 0, "cannot map the file: ", strerror(-k));
                } else
                        t->mapped = true;
        } else {
                k = read_fd_whole(fd, SIZE_MAX, &t->mapping, &t->mapping_size);      /* a pipe or a special file */
                if (k < 0)
                        snapshot_file_set_error(ret_error, 0, 0, "cannot read the file: ", strerror(-k));
        }
        if (fd >= 0)
                close(fd);
        if (k >= 0) {
                t->data = t->mapping;
                t->size = t->mapping_size;
                k = trace_build(t, ret_error);
        }
        if (k < 0) {
                trace_free(t);
                return k;
        }
        *ret = t;
        return 0;
}

TIMECONV_EXPORT struct timeconv_trace *timeconv_trace_free(struct timeconv_trace *trace) {
        return trace_free(trace);
}

TIMECONV_EXPORT const struct timeconv_snapshots *timeconv_trace_snapshots(const struct timeconv_trace *trace) {
        return trace ? trace->snapshots : NULL;
}

TIMECONV_EXPORT const char *timeconv_trace_clock(const struct timeconv_trace *trace) {
        return trace ? trace->trace_clock_name : NULL;
}

TIMECONV_EXPORT uint64_t timeconv_trace_count_packets(const struct timeconv_trace *trace) {
        return trace ? trace->n_packets : 0;
}

TIMECONV_EXPORT size_t timeconv_trace_count_clocks(const struct timeconv_trace *trace) {
        return trace ? trace->n_clocks : 0;
}

TIMECONV_EXPORT int timeconv_trace_get_clock(const struct timeconv_trace *trace, size_t index,
                                             struct timeconv_trace_clock *ret) {
        const PfClock *c;

        if (!trace || !ret || index >= trace->n_clocks)
                return -EINVAL;
        c = &trace->clocks[index];
        *ret = (struct timeconv_trace_clock) {
                .name = trace->names[index],
                .id = c->id,
                .machine = c->machine,
                .sequence = c->sequence,
                .unit_multiplier_ns = c->unit_multiplier_ns,
                .incremental = c->incremental,
                .snapshots = c->snapshots,
                .min_ts = c->min_ts,
                .max_ts = c->max_ts,
                .in_graph = trace->graph_index[index] != NO_INDEX,
        };
        return 0;
}

typedef struct Place {
        const struct timeconv_trace *trace;
        SnapshotMode mode;
        uint32_t to_machine, to_sequence, to_id;
        size_t to_index;                /* in the graph, or NO_INDEX */
        const char *to_name;
        timeconv_trace_packet_fn fn;
        void *userdata;
        char name[PF_CLOCK_NAME_MAX];
        size_t last_found;              /* find_clock()'s last answer */
} Place;

/* A packet whose clock this pass has not met in a snapshot yet (a producer's file cat'ed
 * before timeconv's export): the clock of the first pass, which read the whole file. Its index
 * among the trace's clocks, or NO_INDEX. */
static size_t find_clock(Place *pl, const PfPacket *p) {
        const struct timeconv_trace *t = pl->trace;

        if (pl->last_found < t->n_clocks && t->clocks[pl->last_found].id == p->clock_id &&
            t->clocks[pl->last_found].machine == p->machine && t->clocks[pl->last_found].sequence == p->clock_sequence)
                return pl->last_found;
        for (size_t i = 0; i < t->n_clocks; i++)
                if (t->clocks[i].id == p->clock_id && t->clocks[i].machine == p->machine &&
                    t->clocks[i].sequence == p->clock_sequence)
                        return pl->last_found = i;
        return NO_INDEX;
}

static int place_packet(PfReader *r, const PfPacket *p, void *userdata) {
        Place *pl = userdata;
        const struct timeconv_trace *t = pl->trace;
        struct timeconv_trace_packet out = {
                .index = p->index,
                .offset = p->offset,
                .sequence = p->sequence,
                .machine = p->machine,
                .ts = p->ts,
        };
        size_t from;
        int k;

        (void) r;
        if (p->clock != PF_NO_CLOCK && p->clock < t->n_clocks) {
                out.clock = t->names[p->clock];
                from = t->graph_index[p->clock];
        } else if ((from = find_clock(pl, p)) != NO_INDEX) {
                out.clock = t->names[from];
                from = t->graph_index[from];
        } else {
                out.clock = pf_clock_name(p->machine, p->clock_sequence, p->clock_id, pl->name);
                from = NO_INDEX;
        }
        if (p->skip_reason) {
                out.error = -EINVAL;
                out.reason = p->skip_reason;
        } else if (p->machine == pl->to_machine && p->clock_sequence == pl->to_sequence && p->clock_id == pl->to_id) {
                out.trace_ts = p->ts;
        } else if (from == NO_INDEX) {
                out.error = -ENOENT;
                out.reason = "its clock is in no snapshot";
        } else if (pl->to_index == NO_INDEX) {
                out.error = -ENOLINK;
                out.reason = "the target clock is in no snapshot";
        } else {
                k = snapshot_graph_convert(t->snapshots->graph, pl->mode, from, pl->to_index, p->ts, &out.trace_ts,
                                           &out.uncertainty_ns);
                if (k < 0) {
                        out.error = k;
                        out.reason = timeconv_strerror(k);
                }
        }
        return pl->fn(&out, pl->userdata);
}

TIMECONV_EXPORT int timeconv_trace_place(const struct timeconv_trace *trace, int mode, const char *to,
                                         timeconv_trace_packet_fn fn, void *userdata,
                                         struct timeconv_error *ret_error) {
        static const PfScanOps ops = { .packet = place_packet };
        Place pl = { .trace = trace, .fn = fn, .userdata = userdata, .to_index = NO_INDEX, .last_found = NO_INDEX };
        PfReader *reader = NULL;
        bool found = false;
        int k;

        if (!trace || !fn || (mode != TIMECONV_MODE_NEAREST && mode != TIMECONV_MODE_DRIFT)) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument", "");
                return -EINVAL;
        }
        pl.mode = mode == TIMECONV_MODE_DRIFT ? SNAPSHOT_MODE_DRIFT : SNAPSHOT_MODE_NEAREST;
        pl.to_name = to ? to : trace->trace_clock_name;
        pl.to_id = trace->trace_clock_id;
        for (size_t i = 0; i < trace->n_clocks; i++)
                if (strcmp(trace->names[i], pl.to_name) == 0) {
                        pl.to_machine = trace->clocks[i].machine;
                        pl.to_sequence = trace->clocks[i].sequence;
                        pl.to_id = trace->clocks[i].id;
                        pl.to_index = trace->graph_index[i];
                        found = true;
                        break;
                }
        if (to && !found && strcmp(to, trace->trace_clock_name) != 0) {
                snapshot_file_set_error(ret_error, 0, 0, "unknown clock: ", to);
                return -ENOENT;
        }
        k = pf_reader_new(&reader);
        if (k >= 0) {
                pf_reader_set_trace_clock(reader, trace->trace_clock_id);
                k = pf_reader_scan(reader, trace->data, trace->size, &ops, &pl);
        }
        /* The first pass read the same bytes: only a callback's own error can stop this one. */
        if (k < 0)
                set_error(ret_error, k, reader);
        pf_reader_free(reader);
        return k;
}
