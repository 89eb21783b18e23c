/* SPDX-License-Identifier: MIT */

/* The skimming reader of Perfetto traces (perfetto-read.h): the wire format, the per-sequence and
 * per-clock state, the compressed blocks. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "clock-id.h"
#include "perfetto-proto.h"
#include "perfetto-read.h"

#define NO_BLOCK UINT64_MAX
#define CLOCK_SLOTS (2 * PF_MAX_CLOCKS)
#define SYNC_SIDE_MAX 16
/* trace_processor's rule: two client snapshots further apart belong to different rounds. */
#define SYNC_ROUND_NS (INT64_C(30) * 1000000000)
/* The rate error the snapshot graph allows between two clocks (snapshot-graph.h): a bracket
 * that an earlier, tighter one still beats at its own instant is left out. */
#define BRACKET_RATE_ERROR_PPM 1000
/* A zstd window larger than the largest block we inflate buys nothing but memory. */
#define ZSTD_WINDOW_LOG_MAX 26

typedef struct SeqState {
        uint64_t key;                   /* sequence + 1; 0: a free slot */
        uint32_t default_clock_id;
        bool valid;                     /* its incremental state was cleared once */
        /* The clock its last packet used: id, machine, index, and n_clocks then (a clock
         * added since may be the one a miss missed). */
        uint32_t cached_id, cached_machine;
        size_t cached_clock, cached_n_clocks;
} SeqState;

typedef struct RawClock {
        uint32_t id;
        uint64_t ts;
        uint64_t unit_multiplier_ns;
        bool incremental;
} RawClock;

typedef struct SyncEntry {
        RawClock client[SYNC_SIDE_MAX], host[SYNC_SIDE_MAX];
        size_t n_client, n_host;
} SyncEntry;

typedef struct Field {
        uint32_t number;
        unsigned wire;
        uint64_t value;                 /* varint and fixed */
        const uint8_t *data;            /* length-delimited */
        size_t size;
        const uint8_t *start;
} Field;

struct PfReader {
        PfClock clocks[PF_MAX_CLOCKS];
        size_t n_clocks;
        uint32_t clock_slots[CLOCK_SLOTS];      /* index + 1; 0: free */

        SeqState *seqs;
        size_t seq_capacity, n_seqs;
        SeqState *last_seq;             /* the last one found (packets come in runs) */

        uint32_t trace_clock_id;
        bool trace_clock_set;
        uint32_t initial_trace_clock_id;        /* 0: BOOTTIME until a snapshot says */
        uint64_t n_packets;

        const uint8_t *base;            /* the buffer that offsets count from */
        uint64_t block_offset;          /* the file offset of the block being read, or NO_BLOCK */
        uint8_t *inflated;
        size_t inflated_allocated;
        ZSTD_DCtx *zstd;
        SyncEntry *sync;
        size_t sync_allocated;

        const PfScanOps *ops;
        void *userdata;
        PfReading readings[PF_MAX_SNAPSHOT_CLOCKS];
        char message[PF_MESSAGE_MAX];
};

int pf_reader_new(PfReader **ret) {
        PfReader *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

PfReader *pf_reader_free(PfReader *r) {
        if (!r)
                return NULL;
        free(r->seqs);
        free(r->inflated);
        free(r->sync);
        ZSTD_freeDCtx(r->zstd);
        free(r);
        return NULL;
}

static int vfail(PfReader *r, uint64_t offset, bool in_block, const char *fmt, va_list ap) {
        int n;

        if (in_block && r->block_offset != NO_BLOCK)
                n = snprintf(r->message, sizeof(r->message), "byte %llu of the block compressed at byte %llu: ",
                             (unsigned long long) offset, (unsigned long long) r->block_offset);
        else
                n = snprintf(r->message, sizeof(r->message), "byte %llu: ", (unsigned long long) offset);
        if (n >= 0 && (size_t) n < sizeof(r->message))
                vsnprintf(r->message + n, sizeof(r->message) - (size_t) n, fmt, ap);
        return -EBADMSG;
}

int pf_reader_fail(PfReader *r, uint64_t offset, const char *fmt, ...) {
        va_list ap;
        int ret;

        va_start(ap, fmt);
        ret = vfail(r, offset, false, fmt, ap);
        va_end(ap);
        return ret;
}

/* Fails at p, a position in the buffer being read (the file or an inflated block). */
static int fail_at(PfReader *r, const uint8_t *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(PfReader *r, const uint8_t *p, const char *fmt, ...) {
        va_list ap;
        int ret;

        va_start(ap, fmt);
        ret = vfail(r, (uint64_t) (p - r->base), true, fmt, ap);
        va_end(ap);
        return ret;
}

/* The file offset that a packet event carries: its own, or its block's. */
static uint64_t file_offset(const PfReader *r, const uint8_t *p) {
        return r->block_offset != NO_BLOCK ? r->block_offset : (uint64_t) (p - r->base);
}

const char *pf_clock_name(uint32_t machine, uint32_t sequence, uint32_t id, char *buf) {
        const char *builtin = sequence == 0 ? clock_id_builtin_name(id) : NULL;
        int n = 0;

        if (machine != 0)
                n = snprintf(buf, PF_CLOCK_NAME_MAX, "m%lu:", (unsigned long) machine);
        if (builtin)
                snprintf(buf + n, PF_CLOCK_NAME_MAX - (size_t) n, "%s", builtin);
        else if (sequence != 0)
                snprintf(buf + n, PF_CLOCK_NAME_MAX - (size_t) n, "%lu@%lu", (unsigned long) id,
                         (unsigned long) sequence);
        else
                snprintf(buf + n, PF_CLOCK_NAME_MAX - (size_t) n, "%lu", (unsigned long) id);
        return buf;
}

/* 0, -EPIPE (the input ends inside it) or -EOVERFLOW (more than 64 bits, or an 11th byte). */
static inline int read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *ret) {
        const uint8_t *p = *pp;
        uint64_t v = 0;

        if (p < end && *p < 0x80) {
                *ret = *p;
                *pp = p + 1;
                return 0;
        }
        if (end - p >= 10) {
                /* Far from the end: no bounds check per byte. */
                for (unsigned i = 0; i < 10; i++) {
                        uint8_t b = p[i];

                        v |= (uint64_t) (b & 0x7f) << (7 * i);
                        if (b < 0x80) {
                                if (i == 9 && b > 1)
                                        return -EOVERFLOW;
                                *ret = v;
                                *pp = p + i + 1;
                                return 0;
                        }
                }
                return -EOVERFLOW;
        }
        for (unsigned shift = 0; shift < 64; shift += 7) {
                uint8_t b;

                if (p >= end)
                        return -EPIPE;
                b = *p++;
                if (shift == 63 && b > 1)
                        return -EOVERFLOW;
                v |= (uint64_t) (b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        *pp = p;
                        return 0;
                }
        }
        return -EOVERFLOW;
}

/* Reads the field at *pp: 1 when one was read, 0 at the end, or an error. */
static int next_field(PfReader *r, const uint8_t **pp, const uint8_t *end, Field *f) {
        const uint8_t *p = *pp;
        uint64_t key, len;
        int k;

        if (p >= end)
                return 0;
        f->start = p;
        k = read_varint(&p, end, &key);
        if (k < 0)
                return fail_at(r, f->start, "%s field key", k == -EPIPE ? "truncated" : "over-long");
        if (key >> 3 == 0 || key >> 3 > 0x1fffffff)
                return fail_at(r, f->start, "field number %llu", (unsigned long long) (key >> 3));
        f->number = (uint32_t) (key >> 3);
        f->wire = (unsigned) (key & 7);
        switch (f->wire) {
        case PF_WIRE_VARINT:
                k = read_varint(&p, end, &f->value);
                if (k < 0)
                        return fail_at(r, f->start, "field %u: %s varint", f->number,
                                       k == -EPIPE ? "truncated" : "over-long");
                break;
        case PF_WIRE_FIXED64:
        case PF_WIRE_FIXED32: {
                size_t n = f->wire == PF_WIRE_FIXED64 ? 8 : 4;

                if ((size_t) (end - p) < n)
                        return fail_at(r, f->start, "field %u: truncated fixed%zu", f->number, n * 8);
                f->value = 0;
                for (size_t i = n; i > 0; i--)
                        f->value = f->value << 8 | p[i - 1];
                p += n;
                break;
        }
        case PF_WIRE_LEN:
                k = read_varint(&p, end, &len);
                if (k < 0)
                        return fail_at(r, f->start, "field %u: %s length", f->number,
                                       k == -EPIPE ? "truncated" : "over-long");
                if (len > (uint64_t) (end - p))
                        return fail_at(r, f->start, "field %u: length %llu past the end (%zu bytes left)",
                                       f->number, (unsigned long long) len, (size_t) (end - p));
                f->data = p;
                f->size = (size_t) len;
                p += len;
                break;
        default:
                return fail_at(r, f->start, "field %u: wire type %u (groups and unknown types are not read)",
                               f->number, f->wire);
        }
        *pp = p;
        return 1;
}

static int expect_wire(PfReader *r, const Field *f, unsigned wire) {
        static const char *const names[] = { "varint", "fixed64", "length-delimited", "group", "group end",
                                             "fixed32" };

        if (f->wire == wire)
                return 0;
        return fail_at(r, f->start, "field %u: wire type %s, expected %s", f->number, names[f->wire],
                       names[wire]);
}

static SeqState *seq_get(PfReader *r, uint32_t sequence) {
        uint64_t key = (uint64_t) sequence + 1;
        size_t i;

        if (r->last_seq && r->last_seq->key == key)
                return r->last_seq;
        r->last_seq = NULL;

        if (2 * (r->n_seqs + 1) > r->seq_capacity) {
                size_t capacity = r->seq_capacity ? 2 * r->seq_capacity : 64;
                SeqState *s = calloc(capacity, sizeof(*s));

                if (!s)
                        return NULL;
                for (size_t j = 0; j < r->seq_capacity; j++)
                        if (r->seqs[j].key) {
                                for (i = (size_t) (r->seqs[j].key * 0x9e3779b97f4a7c15u) & (capacity - 1);
                                     s[i].key; i = (i + 1) & (capacity - 1))
                                        ;
                                s[i] = r->seqs[j];
                        }
                free(r->seqs);
                r->seqs = s;
                r->seq_capacity = capacity;
                r->last_seq = NULL;
        }
        for (i = (size_t) (key * 0x9e3779b97f4a7c15u) & (r->seq_capacity - 1); r->seqs[i].key;
             i = (i + 1) & (r->seq_capacity - 1))
                if (r->seqs[i].key == key)
                        return r->last_seq = &r->seqs[i];
        r->seqs[i] = (SeqState) { .key = key, .cached_n_clocks = SIZE_MAX };
        r->n_seqs++;
        return &r->seqs[i];
}

static size_t clock_slot(uint32_t machine, uint32_t sequence, uint32_t id) {
        uint64_t h = ((uint64_t) machine * 0x9e3779b1u) ^ ((uint64_t) sequence << 32) ^ id;

        return (size_t) ((h * 0x9e3779b97f4a7c15u) >> 40) & (CLOCK_SLOTS - 1);
}

static size_t clock_find(const PfReader *r, uint32_t machine, uint32_t sequence, uint32_t id) {
        for (size_t i = clock_slot(machine, sequence, id); r->clock_slots[i]; i = (i + 1) & (CLOCK_SLOTS - 1)) {
                const PfClock *c = &r->clocks[r->clock_slots[i] - 1];

                if (c->id == id && c->sequence == sequence && c->machine == machine)
                        return r->clock_slots[i] - 1;
        }
        return PF_NO_CLOCK;
}

/* The clock's index, added with these properties if new; PF_NO_CLOCK when the table is full. */
static size_t clock_add(PfReader *r, uint32_t machine, uint32_t sequence, uint32_t id, int64_t mult, bool incremental) {
        size_t i, found = clock_find(r, machine, sequence, id);

        if (found != PF_NO_CLOCK)
                return found;
        if (r->n_clocks == PF_MAX_CLOCKS)
                return PF_NO_CLOCK;
        for (i = clock_slot(machine, sequence, id); r->clock_slots[i]; i = (i + 1) & (CLOCK_SLOTS - 1))
                ;
        r->clock_slots[i] = (uint32_t) ++r->n_clocks;
        r->clocks[r->n_clocks - 1] = (PfClock) {
                .machine = machine, .sequence = sequence, .id = id, .unit_multiplier_ns = mult,
                .incremental = incremental, .min_ts = INT64_MAX, .max_ts = INT64_MIN,
        };
        return r->n_clocks - 1;
}

static bool sequence_scoped(uint32_t id) {
        return id >= PF_CLOCK_SEQUENCE_SCOPED_FIRST && id <= PF_CLOCK_SEQUENCE_SCOPED_LAST;
}

static int parse_clock(PfReader *r, const uint8_t *p, const uint8_t *end, RawClock *ret) {
        RawClock c = { .unit_multiplier_ns = 1 };
        Field f;
        int k;

        while ((k = next_field(r, &p, end, &f)) > 0) {
                switch (f.number) {
                case PF_CLOCK_ID:
                case PF_CLOCK_TIMESTAMP:
                case PF_CLOCK_IS_INCREMENTAL:
                case PF_CLOCK_UNIT_MULTIPLIER_NS:
                        k = expect_wire(r, &f, PF_WIRE_VARINT);
                        if (k < 0)
                                return k;
                        if (f.number == PF_CLOCK_ID)
                                c.id = (uint32_t) f.value;
                        else if (f.number == PF_CLOCK_TIMESTAMP)
                                c.ts = f.value;
                        else if (f.number == PF_CLOCK_IS_INCREMENTAL)
                                c.incremental = f.value != 0;
                        else
                                c.unit_multiplier_ns = f.value ? f.value : 1;
                        break;
                default:
                        break;
                }
        }
        if (k < 0)
                return k;
        *ret = c;
        return 0;
}

/* A ClockSnapshot message: its clocks (at most max) and its primary_trace_clock (0 if none). */
static int parse_snapshot(PfReader *r, const uint8_t *p, const uint8_t *end, RawClock *clocks, size_t max,
                          size_t *ret_n, uint32_t *ret_primary) {
        uint32_t primary = 0;
        size_t n = 0;
        Field f;
        int k;

        while ((k = next_field(r, &p, end, &f)) > 0) {
                if (f.number == PF_SNAPSHOT_CLOCKS) {
                        k = expect_wire(r, &f, PF_WIRE_LEN);
                        if (k < 0)
                                return k;
                        if (n == max)
                                return fail_at(r, f.start, "more than %zu clocks in one snapshot", max);
                        k = parse_clock(r, f.data, f.data + f.size, &clocks[n++]);
                        if (k < 0)
                                return k;
                } else if (f.number == PF_SNAPSHOT_PRIMARY_TRACE_CLOCK) {
                        k = expect_wire(r, &f, PF_WIRE_VARINT);
                        if (k < 0)
                                return k;
                        primary = (uint32_t) f.value;
                }
        }
        if (k < 0)
                return k;
        *ret_n = n;
        if (ret_primary)
                *ret_primary = primary;
        return 0;
}

/* Checks the readings of one snapshot (of machine, on sequence) against what is known of their
 * clocks, records them and reports the snapshot. uncertainty_ns may be NULL (all exact). at is
 * where the snapshot is, for errors. */
static int add_snapshot(PfReader *r, const uint8_t *at, uint32_t machine, uint32_t sequence,
                        const uint32_t *machines, const RawClock *clocks, const int64_t *uncertainty_ns,
                        size_t n) {
        char name[PF_CLOCK_NAME_MAX];

        for (size_t i = 0; i < n; i++) {
                const RawClock *c = &clocks[i];
                uint32_t m = machines ? machines[i] : machine;
                uint32_t seq = sequence_scoped(c->id) ? sequence : 0;
                size_t index;
                PfClock *clock;

                if (sequence_scoped(c->id) && sequence == 0)
                        return fail_at(r, at, "sequence-scoped clock %u in a snapshot without a sequence", c->id);
                if (c->incremental && seq == 0)
                        return fail_at(r, at, "clock %u is incremental but not sequence-scoped", c->id);
                if (c->unit_multiplier_ns > INT64_MAX)
                        return fail_at(r, at, "clock %u: unit_multiplier_ns %llu", c->id,
                                       (unsigned long long) c->unit_multiplier_ns);
                for (size_t j = 0; j < i; j++)
                        if (r->readings[j].clock == clock_find(r, m, seq, c->id))
                                return fail_at(r, at, "clock %s twice in one snapshot",
                                               pf_clock_name(m, seq, c->id, name));
                index = clock_add(r, m, seq, c->id, (int64_t) c->unit_multiplier_ns, c->incremental);
                if (index == PF_NO_CLOCK)
                        return fail_at(r, at, "more than %d clocks", PF_MAX_CLOCKS);
                clock = &r->clocks[index];
                if (clock->unit_multiplier_ns != (int64_t) c->unit_multiplier_ns ||
                    clock->incremental != c->incremental)
                        return fail_at(r, at, "clock %s: unit_multiplier_ns %llu, is_incremental %d, first "
                                       "seen with %lld, %d", pf_clock_name(m, seq, c->id, name),
                                       (unsigned long long) c->unit_multiplier_ns, c->incremental,
                                       (long long) clock->unit_multiplier_ns, clock->incremental);
                if (m == 0 && seq == 0 && c->id == r->trace_clock_id && c->unit_multiplier_ns != 1)
                        return fail_at(r, at, "the trace clock %s must count ns (unit_multiplier_ns %llu)",
                                       pf_clock_name(m, seq, c->id, name),
                                       (unsigned long long) c->unit_multiplier_ns);
                r->readings[i] = (PfReading) {
                        .clock = index,
                        .ts = (int64_t) c->ts,
                        .uncertainty_ns = uncertainty_ns ? uncertainty_ns[i] : 0,
                };
        }
        for (size_t i = 0; i < n; i++) {
                PfClock *clock = &r->clocks[r->readings[i].clock];
                int64_t ts = r->readings[i].ts;

                /* An incremental clock's snapshot value is absolute: later deltas start from it. */
                clock->last_ts = ts;
                clock->snapshots++;
                clock->min_ts = ts < clock->min_ts ? ts : clock->min_ts;
                clock->max_ts = ts > clock->max_ts ? ts : clock->max_ts;
        }
        if (r->ops && r->ops->snapshot) {
                PfSnapshot s = { .offset = file_offset(r, at), .readings = r->readings, .n = n };

                return r->ops->snapshot(r, &s, r->userdata);
        }
        return 0;
}

static int clock_snapshot(PfReader *r, const Field *f, uint32_t machine, uint32_t sequence) {
        RawClock clocks[PF_MAX_SNAPSHOT_CLOCKS];
        uint32_t primary;
        size_t n;
        int k;

        k = parse_snapshot(r, f->data, f->data + f->size, clocks, PF_MAX_SNAPSHOT_CLOCKS, &n, &primary);
        if (k < 0)
                return k;
        /* The first primary_trace_clock holds: trace_processor refuses to change the trace clock
         * once a timestamp was converted to it. */
        if (primary && !r->trace_clock_set) {
                r->trace_clock_id = primary;
                r->trace_clock_set = true;
        }
        return add_snapshot(r, f->start, machine, sequence, NULL, clocks, NULL, n);
}

static const RawClock *find_raw(const RawClock *clocks, size_t n, uint32_t id) {
        for (size_t i = 0; i < n; i++)
                if (clocks[i].id == id)
                        return &clocks[i];
        return NULL;
}

/* The host snapshot of a, taken between the client snapshots of a and b: each client clock read
 * in both is at their middle, within half their distance, when the host clocks were read. */
static int add_bracket(PfReader *r, const uint8_t *at, uint32_t machine, const SyncEntry *a, const SyncEntry *b,
                       int64_t *last_mid, int64_t *last_half) {
        const RawClock *boot_a = find_raw(a->client, a->n_client, PF_CLOCK_BOOTTIME);
        const RawClock *boot_b = find_raw(b->client, b->n_client, PF_CLOCK_BOOTTIME);
        RawClock clocks[2 * SYNC_SIDE_MAX];
        uint32_t machines[2 * SYNC_SIDE_MAX];
        int64_t uncertainty_ns[2 * SYNC_SIDE_MAX];
        size_t n = 0, n_client;

        if (boot_a && boot_b && (boot_b->ts < boot_a->ts || boot_b->ts - boot_a->ts >= (uint64_t) SYNC_ROUND_NS))
                return 0;
        for (size_t i = 0; i < a->n_client; i++) {
                const RawClock *later = find_raw(b->client, b->n_client, a->client[i].id);
                uint64_t t1 = a->client[i].ts, width;

                if (!later || later->ts < t1)
                        continue;
                width = later->ts - t1;
                /* A bound wider than a snapshot reading may carry says nothing anyway. */
                if (width > UINT64_C(1) << 58)
                        continue;
                clocks[n] = (RawClock) { .id = a->client[i].id, .ts = t1 + width / 2, .unit_multiplier_ns = 1 };
                machines[n] = machine;
                uncertainty_ns[n++] = (int64_t) (width - width / 2);
        }
        n_client = n;
        for (size_t i = 0; i < a->n_host; i++) {
                clocks[n] = (RawClock) { .id = a->host[i].id, .ts = a->host[i].ts, .unit_multiplier_ns = 1 };
                machines[n] = 0;
                uncertainty_ns[n++] = 0;
        }
        if (n_client == 0 || n == n_client)
                return 0;
        /* Nearest takes the latest snapshot at or before a value: a wide bracket (one across two
         * rounds of the relay) after a tight one would replace it where the tight one, its bound
         * grown by the rate error, is still the better (the graph compares nothing itself). */
        if (*last_half >= 0 && (int64_t) clocks[0].ts >= *last_mid &&
            uncertainty_ns[0] >= *last_half + ((int64_t) clocks[0].ts - *last_mid) / (1000000 / BRACKET_RATE_ERROR_PPM))
                return 0;
        *last_mid = (int64_t) clocks[0].ts;
        *last_half = uncertainty_ns[0];
        return add_snapshot(r, at, machine, 0, machines, clocks, uncertainty_ns, n);
}

static int remote_clock_sync(PfReader *r, const Field *remote, uint32_t machine) {
        const uint8_t *p = remote->data, *end = remote->data + remote->size;
        int64_t last_mid = 0, last_half = -1;
        size_t n = 0;
        Field f;
        int k;

        if (machine == 0)
                return fail_at(r, remote->start, "remote_clock_sync in a packet of the host (machine_id 0)");
        while ((k = next_field(r, &p, end, &f)) > 0) {
                const uint8_t *q;
                Field g;
                SyncEntry *e;

                if (f.number != PF_REMOTE_SYNCED_CLOCKS)
                        continue;
                k = expect_wire(r, &f, PF_WIRE_LEN);
                if (k < 0)
                        return k;
                if (n == PF_MAX_SYNCED_CLOCKS)
                        return fail_at(r, f.start, "more than %d synced_clocks", PF_MAX_SYNCED_CLOCKS);
                if (n == r->sync_allocated) {
                        size_t allocated = r->sync_allocated ? 2 * r->sync_allocated : 16;
                        SyncEntry *s = realloc(r->sync, allocated * sizeof(*s));

                        if (!s)
                                return -ENOMEM;
                        r->sync = s;
                        r->sync_allocated = allocated;
                }
                e = &r->sync[n++];
                e->n_client = e->n_host = 0;
                q = f.data;
                while ((k = next_field(r, &q, f.data + f.size, &g)) > 0) {
                        if (g.number != PF_SYNCED_CLIENT_CLOCKS && g.number != PF_SYNCED_HOST_CLOCKS)
                                continue;
                        k = expect_wire(r, &g, PF_WIRE_LEN);
                        if (k >= 0)
                                k = g.number == PF_SYNCED_CLIENT_CLOCKS ?
                                        parse_snapshot(r, g.data, g.data + g.size, e->client, SYNC_SIDE_MAX,
                                                       &e->n_client, NULL) :
                                        parse_snapshot(r, g.data, g.data + g.size, e->host, SYNC_SIDE_MAX,
                                                       &e->n_host, NULL);
                        if (k < 0)
                                return k;
                }
                if (k < 0)
                        return k;
                for (size_t i = 0; i < e->n_client + e->n_host; i++) {
                        const RawClock *c = i < e->n_client ? &e->client[i] : &e->host[i - e->n_client];

                        /* As trace_processor takes them: machine clocks, in ns, absolute. */
                        if (c->incremental || c->unit_multiplier_ns != 1 || sequence_scoped(c->id))
                                return fail_at(r, f.start, "synced clock %u is not a plain clock in ns", c->id);
                }
        }
        if (k < 0)
                return k;
        /* In time order, so that no clock seems to go backwards: a bracket's middle lies between
         * the client snapshots around it. */
        for (size_t i = 0; i < n; i++) {
                k = i > 0 ? add_bracket(r, remote->start, machine, &r->sync[i - 1], &r->sync[i], &last_mid,
                                        &last_half) : 0;
                if (k >= 0)
                        k = add_snapshot(r, remote->start, machine, 0, NULL, r->sync[i].client, NULL,
                                         r->sync[i].n_client);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* Makes room for at least one more byte in r->inflated, up to the bound. */
static int grow_inflated(PfReader *r, const uint8_t *at) {
        size_t allocated;
        uint8_t *p;

        if (r->inflated_allocated >= PF_INFLATE_MAX_BYTES)
                return fail_at(r, at, "compressed block inflates past %u MiB", PF_INFLATE_MAX_BYTES >> 20);
        allocated = r->inflated_allocated ? 2 * r->inflated_allocated : 256 * 1024;
        if (allocated > PF_INFLATE_MAX_BYTES)
                allocated = PF_INFLATE_MAX_BYTES;
        p = realloc(r->inflated, allocated);
        if (!p)
                return -ENOMEM;
        r->inflated = p;
        r->inflated_allocated = allocated;
        return 0;
}

static int inflate_zlib(PfReader *r, const Field *f, size_t *ret_size) {
        z_stream zs = { 0 };
        int z, k = 0;

        if (f->size > UINT32_MAX)
                return fail_at(r, f->start, "compressed block of %zu bytes", f->size);
        if (inflateInit(&zs) != Z_OK)
                return -ENOMEM;
        zs.next_in = (Bytef *) f->data;
        zs.avail_in = (uInt) f->size;
        for (;;) {
                if (zs.total_out == r->inflated_allocated) {
                        k = grow_inflated(r, f->start);
                        if (k < 0)
                                break;
                }
                zs.next_out = r->inflated + zs.total_out;
                zs.avail_out = (uInt) (r->inflated_allocated - zs.total_out);
                z = inflate(&zs, Z_NO_FLUSH);
                if (z == Z_STREAM_END)
                        break;
                if (z == Z_MEM_ERROR) {
                        k = -ENOMEM;
                        break;
                }
                if (z != Z_OK && z != Z_BUF_ERROR) {
                        k = fail_at(r, f->start, "compressed block: %s", zs.msg ? zs.msg : "not a zlib stream");
                        break;
                }
                if (zs.avail_out > 0 && zs.avail_in == 0) {
                        k = fail_at(r, f->start, "compressed block ends inside its stream");
                        break;
                }
        }
        if (k >= 0)
                *ret_size = zs.total_out;
        inflateEnd(&zs);
        return k;
}

static int inflate_zstd(PfReader *r, const Field *f, size_t *ret_size) {
        ZSTD_inBuffer in = { .src = f->data, .size = f->size };
        ZSTD_outBuffer out = { 0 };
        unsigned long long content;
        size_t z;
        int k;

        if (!r->zstd) {
                r->zstd = ZSTD_createDCtx();
                if (!r->zstd)
                        return -ENOMEM;
                ZSTD_DCtx_setParameter(r->zstd, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
        }
        /* A frame that says its size (Perfetto's do) inflates in one call, faster than a stream;
         * what does not fit (more frames after it) goes the streaming way, bounded as well. */
        content = ZSTD_getFrameContentSize(f->data, f->size);
        if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != ZSTD_CONTENTSIZE_ERROR &&
            content <= PF_INFLATE_MAX_BYTES) {
                while (r->inflated_allocated < content) {
                        k = grow_inflated(r, f->start);
                        if (k < 0)
                                return k;
                }
                z = ZSTD_decompressDCtx(r->zstd, r->inflated, r->inflated_allocated, f->data, f->size);
                if (!ZSTD_isError(z)) {
                        *ret_size = z;
                        return 0;
                }
                if (ZSTD_getErrorCode(z) != ZSTD_error_dstSize_tooSmall)
                        return fail_at(r, f->start, "zstd block: %s", ZSTD_getErrorName(z));
        }
        ZSTD_DCtx_reset(r->zstd, ZSTD_reset_session_only);
        for (;;) {
                if (out.pos == r->inflated_allocated) {
                        k = grow_inflated(r, f->start);
                        if (k < 0)
                                return k;
                }
                out.dst = r->inflated;
                out.size = r->inflated_allocated;
                z = ZSTD_decompressStream(r->zstd, &out, &in);
                if (ZSTD_isError(z))
                        return fail_at(r, f->start, "zstd block: %s", ZSTD_getErrorName(z));
                if (in.pos == in.size && (z == 0 || out.pos < out.size)) {
                        if (z != 0)
                                return fail_at(r, f->start, "zstd block ends inside its frame");
                        break;
                }
        }
        *ret_size = out.pos;
        return 0;
}

static int scan_buffer(PfReader *r, const uint8_t *p, const uint8_t *end);

static int compressed(PfReader *r, const Field *f) {
        const uint8_t *base = r->base;
        size_t size = 0;
        int k;

        if (r->block_offset != NO_BLOCK)
                return fail_at(r, f->start, "a compressed block inside a compressed block");
        k = f->number == PF_PACKET_COMPRESSED ? inflate_zlib(r, f, &size) : inflate_zstd(r, f, &size);
        if (k < 0)
                return k;
        r->block_offset = (uint64_t) (f->start - base);
        r->base = r->inflated;
        k = scan_buffer(r, r->inflated, r->inflated + size);
        r->base = base;
        r->block_offset = NO_BLOCK;
        return k;
}

typedef struct PacketFields {
        bool has_ts, cleared;
        uint64_t ts;
        uint32_t clock_id, sequence, flags, machine;
        /* Where these length-delimited fields start, read again when they are there (rarely). */
        const uint8_t *snapshot, *defaults, *remote, *block;
} PacketFields;

/* The error next_field() and expect_wire() give for the field at start, which the fast path
 * below found wrong. */
static int field_error(PfReader *r, const uint8_t *start, const uint8_t *end, unsigned expected_wire) {
        Field f;
        int k = next_field(r, &start, end, &f);

        if (k < 0)
                return k;
        k = expect_wire(r, &f, expected_wire);
        return k < 0 ? k : fail_at(r, f.start, "field %u", f.number);
}

/* The top-level fields of a packet: the hot loop of the reader (most bytes of a trace are in
 * payload fields it skips by their length). */
static int packet_fields(PfReader *r, const uint8_t *p, const uint8_t *end, PacketFields *pf) {
        while (p < end) {
                const uint8_t *start = p;
                uint64_t key, v;
                uint64_t number;
                unsigned wire;

                if (read_varint(&p, end, &key) < 0 || key >> 3 == 0 || key >> 3 > 0x1fffffff)
                        return field_error(r, start, end, PF_WIRE_VARINT);
                number = key >> 3;
                wire = (unsigned) (key & 7);
                if (wire == PF_WIRE_VARINT) {
                        if (read_varint(&p, end, &v) < 0)
                                return field_error(r, start, end, PF_WIRE_VARINT);
                        switch (number) {
                        case PF_PACKET_TIMESTAMP:
                                pf->has_ts = true;
                                pf->ts = v;
                                break;
                        case PF_PACKET_TIMESTAMP_CLOCK_ID:
                                pf->clock_id = (uint32_t) v;
                                break;
                        case PF_PACKET_TRUSTED_SEQUENCE_ID:
                                pf->sequence = (uint32_t) v;
                                break;
                        case PF_PACKET_SEQUENCE_FLAGS:
                                pf->flags = (uint32_t) v;
                                break;
                        case PF_PACKET_INCREMENTAL_STATE_CLEARED:
                                pf->cleared = v != 0;
                                break;
                        case PF_PACKET_MACHINE_ID:
                                pf->machine = (uint32_t) v;
                                break;
                        case PF_PACKET_CLOCK_SNAPSHOT:
                        case PF_PACKET_DEFAULTS:
                        case PF_PACKET_REMOTE_CLOCK_SYNC:
                        case PF_PACKET_COMPRESSED:
                        case PF_PACKET_ZSTD_COMPRESSED:
                                return field_error(r, start, end, PF_WIRE_LEN);
                        default:
                                break;
                        }
                        continue;
                }
                if (wire == PF_WIRE_LEN) {
                        if (read_varint(&p, end, &v) < 0 || v > (uint64_t) (end - p))
                                return field_error(r, start, end, PF_WIRE_LEN);
                        p += v;
                        switch (number) {
                        case PF_PACKET_CLOCK_SNAPSHOT:
                                pf->snapshot = start;
                                break;
                        case PF_PACKET_DEFAULTS:
                                pf->defaults = start;
                                break;
                        case PF_PACKET_REMOTE_CLOCK_SYNC:
                                pf->remote = start;
                                break;
                        case PF_PACKET_COMPRESSED:
                        case PF_PACKET_ZSTD_COMPRESSED:
                                pf->block = start;
                                break;
                        case PF_PACKET_TIMESTAMP:
                        case PF_PACKET_TIMESTAMP_CLOCK_ID:
                        case PF_PACKET_TRUSTED_SEQUENCE_ID:
                        case PF_PACKET_SEQUENCE_FLAGS:
                        case PF_PACKET_INCREMENTAL_STATE_CLEARED:
                        case PF_PACKET_MACHINE_ID:
                                return field_error(r, start, end, PF_WIRE_VARINT);
                        default:
                                break;
                        }
                        continue;
                }
                /* fixed64, fixed32, or what next_field() refuses */
                p = start;
                {
                        Field f;
                        int k = next_field(r, &p, end, &f);

                        if (k < 0)
                                return k;
                        switch (f.number) {
                        case PF_PACKET_TIMESTAMP:
                        case PF_PACKET_TIMESTAMP_CLOCK_ID:
                        case PF_PACKET_TRUSTED_SEQUENCE_ID:
                        case PF_PACKET_SEQUENCE_FLAGS:
                        case PF_PACKET_INCREMENTAL_STATE_CLEARED:
                        case PF_PACKET_MACHINE_ID:
                                return expect_wire(r, &f, PF_WIRE_VARINT);
                        case PF_PACKET_CLOCK_SNAPSHOT:
                        case PF_PACKET_DEFAULTS:
                        case PF_PACKET_REMOTE_CLOCK_SYNC:
                        case PF_PACKET_COMPRESSED:
                        case PF_PACKET_ZSTD_COMPRESSED:
                                return expect_wire(r, &f, PF_WIRE_LEN);
                        default:
                                break;
                        }
                }
        }
        return 0;
}

/* The length-delimited field that starts at start (already checked by packet_fields()). */
static Field field_at(PfReader *r, const uint8_t *start, const uint8_t *end) {
        Field f = { 0 };

        (void) next_field(r, &start, end, &f);
        return f;
}

static int packet_defaults(PfReader *r, const Field *defaults, SeqState *seq) {
        const uint8_t *p = defaults->data;
        uint32_t clock_id = 0;
        Field f;
        int k;

        while ((k = next_field(r, &p, defaults->data + defaults->size, &f)) > 0)
                if (f.number == PF_DEFAULTS_TIMESTAMP_CLOCK_ID) {
                        k = expect_wire(r, &f, PF_WIRE_VARINT);
                        if (k < 0)
                                return k;
                        clock_id = (uint32_t) f.value;
                }
        if (k < 0)
                return k;
        /* New defaults replace the old ones whole, as trace_processor keeps the last message. */
        seq->default_clock_id = clock_id;
        return 0;
}

static int packet_timestamp(PfReader *r, const uint8_t *at, const PacketFields *pf, SeqState *seq, uint64_t index) {
        PfPacket p = {
                .index = index,
                .offset = file_offset(r, at),
                .sequence = pf->sequence,
                .machine = pf->machine,
                .ts = (int64_t) pf->ts,
                .clock = PF_NO_CLOCK,
        };

        p.clock_id = pf->clock_id ? pf->clock_id : seq->default_clock_id ? seq->default_clock_id : r->trace_clock_id;
        if ((pf->flags & PF_SEQ_NEEDS_INCREMENTAL_STATE) && !seq->valid)
                p.skip_reason = "incremental state not valid on its sequence";
        else if (sequence_scoped(p.clock_id) && pf->sequence == 0)
                p.skip_reason = "sequence-scoped clock without a sequence";
        else {
                p.clock_sequence = sequence_scoped(p.clock_id) ? pf->sequence : 0;
                if (seq->cached_n_clocks == r->n_clocks && seq->cached_id == p.clock_id &&
                    seq->cached_machine == pf->machine)
                        p.clock = seq->cached_clock;
                else {
                        p.clock = clock_find(r, pf->machine, p.clock_sequence, p.clock_id);
                        seq->cached_id = p.clock_id;
                        seq->cached_machine = pf->machine;
                        seq->cached_clock = p.clock;
                        seq->cached_n_clocks = r->n_clocks;
                }
                if (p.clock != PF_NO_CLOCK && r->clocks[p.clock].incremental) {
                        PfClock *c = &r->clocks[p.clock];

                        if (__builtin_add_overflow(c->last_ts, p.ts, &p.ts))
                                p.skip_reason = "incremental timestamp out of range";
                        else
                                c->last_ts = p.ts;
                }
        }
        return r->ops && r->ops->packet ? r->ops->packet(r, &p, r->userdata) : 0;
}

static int packet(PfReader *r, const Field *outer) {
        const uint8_t *end = outer->data + outer->size;
        PacketFields pf = { 0 };
        SeqState *seq;
        uint64_t index;
        int k;

        k = packet_fields(r, outer->data, end, &pf);
        if (k < 0)
                return k;
        if (pf.block) {
                Field f = field_at(r, pf.block, end);

                return compressed(r, &f);
        }
        index = r->n_packets++;
        seq = seq_get(r, pf.sequence);
        if (!seq)
                return -ENOMEM;
        if (pf.cleared || (pf.flags & PF_SEQ_INCREMENTAL_STATE_CLEARED)) {
                seq->default_clock_id = 0;
                seq->valid = true;
        }
        if (pf.defaults) {
                Field f = field_at(r, pf.defaults, end);

                k = packet_defaults(r, &f, seq);
                if (k < 0)
                        return k;
        }
        /* As in trace_processor, the timestamps of these two are not placed. */
        if (pf.snapshot) {
                Field f = field_at(r, pf.snapshot, end);

                return clock_snapshot(r, &f, pf.machine, pf.sequence);
        }
        if (pf.remote) {
                Field f = field_at(r, pf.remote, end);

                return remote_clock_sync(r, &f, pf.machine);
        }
        if (pf.has_ts)
                return packet_timestamp(r, outer->start, &pf, seq, index);
        return 0;
}

static int scan_buffer(PfReader *r, const uint8_t *p, const uint8_t *end) {
        Field f;
        int k;

        while ((k = next_field(r, &p, end, &f)) > 0) {
                if (f.number != PF_TRACE_PACKET)
                        continue;
                k = expect_wire(r, &f, PF_WIRE_LEN);
                if (k >= 0)
                        k = packet(r, &f);
                if (k < 0)
                        return k;
        }
        return k;
}

int pf_reader_scan(PfReader *r, const uint8_t *data, size_t size, const PfScanOps *ops, void *userdata) {
        if (!data && size > 0)
                return -EINVAL;
        memset(r->clock_slots, 0, sizeof(r->clock_slots));
        r->n_clocks = 0;
        if (r->seqs)
                memset(r->seqs, 0, r->seq_capacity * sizeof(*r->seqs));
        r->n_seqs = 0;
        r->last_seq = NULL;
        r->trace_clock_id = r->initial_trace_clock_id ? r->initial_trace_clock_id : PF_CLOCK_BOOTTIME;
        r->trace_clock_set = r->initial_trace_clock_id != 0;
        r->n_packets = 0;
        r->base = data;
        r->block_offset = NO_BLOCK;
        r->ops = ops;
        r->userdata = userdata;
        r->message[0] = 0;
        return scan_buffer(r, data, data + size);
}

size_t pf_reader_count_clocks(const PfReader *r) {
        return r->n_clocks;
}

const PfClock *pf_reader_clock(const PfReader *r, size_t index) {
        return index < r->n_clocks ? &r->clocks[index] : NULL;
}

void pf_reader_set_trace_clock(PfReader *r, uint32_t id) {
        r->initial_trace_clock_id = id;
}

uint32_t pf_reader_trace_clock_id(const PfReader *r) {
        return r->trace_clock_id;
}

uint64_t pf_reader_count_packets(const PfReader *r) {
        return r->n_packets;
}

const char *pf_reader_message(const PfReader *r) {
        return r->message;
}
