/* SPDX-License-Identifier: MIT */

/* Writes timeconvd's snapshot history (its JSON export) as Perfetto TracePackets, each a
 * ClockSnapshot on a sequence of its own (field numbers in perfetto-proto.h). A writer remembers
 * the last snapshot it wrote, so that a later export of the same ring (--follow) adds only what
 * is new: the ring's entries never change once taken, so the last packet written is found again
 * byte for byte, and what follows it is new. */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "clock-id.h"
#include "perfetto-proto.h"
#include "timeconv-internal.h"

/* Out of the range traced gives its producers (counted up from 1), so that a concatenation with
 * a recording does not merge our packets into one of its sequences. */
#define WRITER_SEQUENCE_ID 0x74630001u
#define VARINT_MAX 10

/* How one exported domain is written: its clock id, the multiplier of its unit, and for a unit
 * of a fractional period (ticks, frames), that period: those are written in ns. */
typedef struct WriteDomain {
        char name[SNAPSHOT_FILE_MAX_NAME + 1];
        uint32_t clock_id;
        uint64_t unit_multiplier_ns;    /* 1: ns, no field written */
        double to_ns;                   /* > 0: written as round(value * to_ns) ns */
} WriteDomain;

typedef struct Buf {
        uint8_t *data;
        size_t size, allocated;
} Buf;

struct timeconv_perfetto_writer {
        uint32_t sequence_id;
        uint8_t *last;                  /* the last snapshot packet written, as bytes */
        size_t last_size;
        WriteDomain domains[SNAPSHOT_FILE_MAX_DOMAINS];
        size_t n_domains;
};

static int buf_reserve(Buf *b, size_t more) {
        if (more > SIZE_MAX - b->size)
                return -ENOMEM;
        return GREEDY_REALLOC(b->data, b->allocated, b->size + more, 4096);
}

static size_t varint(uint8_t *p, uint64_t v) {
        size_t n = 0;

        for (; v >= 0x80; v >>= 7)
                p[n++] = (uint8_t) (v | 0x80);
        p[n++] = (uint8_t) v;
        return n;
}

static int put_varint(Buf *b, uint64_t v) {
        int r = buf_reserve(b, VARINT_MAX);

        if (r < 0)
                return r;
        b->size += varint(b->data + b->size, v);
        return 0;
}

static int put_field_varint(Buf *b, uint32_t field, uint64_t v) {
        int r = put_varint(b, (uint64_t) field << 3 | PF_WIRE_VARINT);

        return r < 0 ? r : put_varint(b, v);
}

/* A length-delimited field whose body is body[0 .. size). */
static int put_field_bytes(Buf *b, uint32_t field, const uint8_t *body, size_t size) {
        int r = put_varint(b, (uint64_t) field << 3 | PF_WIRE_LEN);

        if (r >= 0)
                r = put_varint(b, size);
        if (r >= 0)
                r = buf_reserve(b, size);
        if (r < 0)
                return r;
        memcpy(b->data + b->size, body, size);
        b->size += size;
        return 0;
}

TIMECONV_EXPORT uint32_t timeconv_perfetto_clock_id(const char *name) {
        return clock_id_for_name(name);
}

TIMECONV_EXPORT int timeconv_perfetto_writer_new(struct timeconv_perfetto_writer **ret) {
        struct timeconv_perfetto_writer *w;

        if (!ret)
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->sequence_id = WRITER_SEQUENCE_ID;
        *ret = w;
        return 0;
}

TIMECONV_EXPORT struct timeconv_perfetto_writer *timeconv_perfetto_writer_free(struct timeconv_perfetto_writer *w) {
        if (!w)
                return NULL;
        free(w->last);
        free(w);
        return NULL;
}

/* The export's "domains": units as perfetto_unit() reads them. */
static int read_domains(struct timeconv_perfetto_writer *w, json_t *domains) {
        json_t *d;
        size_t i;

        w->n_domains = 0;
        json_array_foreach(domains, i, d) {
                const char *name = json_string_value(json_object_get(d, "name"));
                double period_ns = json_number_value(json_object_get(d, "period_ns"));
                WriteDomain *wd = &w->domains[w->n_domains];

                if (!name || strlen(name) > SNAPSHOT_FILE_MAX_NAME || w->n_domains >= SNAPSHOT_FILE_MAX_DOMAINS)
                        return -EBADMSG;
                *wd = (WriteDomain) { .unit_multiplier_ns = 1 };
                strcpy(wd->name, name);
                if (!(period_ns > 0) || period_ns == 1.0 || !(period_ns < 1e18))
                        ;               /* ns, or a unit we cannot scale: as it is */
                else if (period_ns == floor(period_ns))
                        wd->unit_multiplier_ns = (uint64_t) period_ns;
                else
                        wd->to_ns = period_ns;
                w->n_domains++;
        }
        return 0;
}

static const WriteDomain *find_domain(const struct timeconv_perfetto_writer *w, const char *name) {
        for (size_t i = 0; i < w->n_domains; i++)
                if (strcmp(w->domains[i].name, name) == 0)
                        return &w->domains[i];
        return NULL;
}

/* A fractional period has no unit_multiplier_ns: the clock goes in ns, under its own name +
 * ".ns", so that nobody takes those ns for the domain's ticks. */
static uint32_t domain_clock_id(const WriteDomain *d, const char *name) {
        char qualified[SNAPSHOT_FILE_MAX_NAME + 4];

        if (!d || !(d->to_ns > 0))
                return clock_id_for_name(name);
        snprintf(qualified, sizeof(qualified), "%s.ns", name);
        return clock_id_for_name(qualified);
}

/* One TracePacket { timestamp (BOOTTIME's reading), clock_snapshot, sequence id } into out. */
static int snapshot_packet(const struct timeconv_perfetto_writer *w, json_t *snapshot, Buf *out) {
        Buf snap = {}, clock = {};
        json_t *clocks = json_object_get(snapshot, "clocks"), *c;
        bool has_boottime = false;
        int64_t boottime = 0;
        size_t i;
        int r = json_is_array(clocks) ? 0 : -EBADMSG;

        json_array_foreach(clocks, i, c) {
                const char *name = json_string_value(json_object_get(c, "domain"));
                json_t *ts = json_object_get(c, "ts");
                const WriteDomain *d;
                int64_t v;

                if (r < 0)
                        break;
                if (!name || !json_is_integer(ts)) {
                        r = -EBADMSG;
                        break;
                }
                d = find_domain(w, name);
                v = json_integer_value(ts);
                if (d && d->to_ns > 0) {
                        double ns = round((double) v * d->to_ns);

                        if (!(fabs(ns) < 9.2e18)) {
                                r = -ERANGE;
                                break;
                        }
                        v = (int64_t) ns;
                }
                if (strcmp(name, "boottime") == 0) {
                        has_boottime = true;
                        boottime = v;
                }
                clock.size = 0;
                r = put_field_varint(&clock, PF_CLOCK_ID, domain_clock_id(d, name));
                if (r >= 0)
                        r = put_field_varint(&clock, PF_CLOCK_TIMESTAMP, (uint64_t) v);
                if (r >= 0 && d && d->unit_multiplier_ns != 1)
                        r = put_field_varint(&clock, PF_CLOCK_UNIT_MULTIPLIER_NS, d->unit_multiplier_ns);
                if (r >= 0)
                        r = put_field_bytes(&snap, PF_SNAPSHOT_CLOCKS, clock.data, clock.size);
        }
        /* BOOTTIME is Perfetto's default trace clock: say so, as traced does. */
        if (r >= 0)
                r = put_field_varint(&snap, PF_SNAPSHOT_PRIMARY_TRACE_CLOCK, PF_CLOCK_BOOTTIME);

        clock.size = 0;         /* now the packet */
        if (r >= 0 && has_boottime)
                r = put_field_varint(&clock, PF_PACKET_TIMESTAMP, (uint64_t) boottime);
        if (r >= 0)
                r = put_field_bytes(&clock, PF_PACKET_CLOCK_SNAPSHOT, snap.data, snap.size);
        if (r >= 0)
                r = put_field_varint(&clock, PF_PACKET_TRUSTED_SEQUENCE_ID, w->sequence_id);
        if (r >= 0)
                r = put_field_bytes(out, PF_TRACE_PACKET, clock.data, clock.size);
        free(snap.data);
        free(clock.data);
        return r;
}

TIMECONV_EXPORT int timeconv_perfetto_writer_add_export(struct timeconv_perfetto_writer *w, const char *json,
                                                        size_t size, char **ret_data, size_t *ret_size,
                                                        size_t *ret_n_snapshots) {
        json_t *root, *snapshots, *s;
        Buf out = {};
        size_t i, start = 0, n = 0, *ends = NULL;
        int r;

        if (!w || !json || !ret_data || !ret_size)
                return -EINVAL;
        root = json_loadb(json, size, 0, NULL);
        snapshots = json_object_get(root, "snapshots");
        r = json_is_array(snapshots) ? read_domains(w, json_object_get(root, "domains")) : -EBADMSG;
        if (r >= 0) {
                ends = calloc(json_array_size(snapshots) + 1, sizeof(*ends));
                r = ends ? 0 : -ENOMEM;
        }
        /* Every snapshot as a packet, and where each ends; what follows the last one written
         * before (if this export still holds it) is new. */
        json_array_foreach(snapshots, i, s) {
                size_t begin = out.size;

                if (r < 0)
                        break;
                r = snapshot_packet(w, s, &out);
                ends[i] = out.size;
                if (r >= 0 && w->last && out.size - begin == w->last_size &&
                    memcmp(out.data + begin, w->last, w->last_size) == 0)
                        start = i + 1;
        }
        n = r >= 0 ? json_array_size(snapshots) : 0;
        json_decref(root);
        if (r >= 0 && n > start) {
                /* the last packet, as bytes, for the next export to find */
                size_t from = start == 0 ? 0 : ends[start - 1], last_begin = n >= 2 ? ends[n - 2] : 0;

                free(w->last);
                w->last_size = 0;
                w->last = malloc(ends[n - 1] - last_begin);
                r = w->last ? 0 : -ENOMEM;
                if (r >= 0) {
                        w->last_size = ends[n - 1] - last_begin;
                        memcpy(w->last, out.data + last_begin, w->last_size);
                        memmove(out.data, out.data + from, ends[n - 1] - from);
                        out.size = ends[n - 1] - from;
                }
        } else if (r >= 0)
                out.size = 0;
        free(ends);
        if (r < 0) {
                free(out.data);
                return r;
        }
        if (!out.data)
                out.data = malloc(1);           /* an empty answer is still freeable and not NULL */
        if (!out.data)
                return -ENOMEM;
        *ret_data = (char *) out.data;
        *ret_size = out.size;
        if (ret_n_snapshots)
                *ret_n_snapshots = n - (n > start ? start : n);
        return 0;
}
