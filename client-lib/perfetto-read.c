/* SPDX-License-Identifier: MIT */

/* The skimming reader of Perfetto traces (perfetto-read.h): its state, the per-sequence and
 * per-clock tables, the packet loop. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "clock-id.h"
#include "perfetto-read-internal.h"

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


const char *pf_clock_name(uint32_t machine, uint32_t sequence, uint32_t id, char *buf) {
        int n = 0;

        if (machine != 0)
                n = snprintf(buf, PF_CLOCK_NAME_MAX, "m%lu:", (unsigned long) machine);
        /* a builtin clock, or one of timeconv's own, by name (timeconv export writes those) */
        if (sequence == 0 && clock_id_known_name(id, buf + n, PF_CLOCK_NAME_MAX - (size_t) n))
                ;
        else if (sequence != 0)
                snprintf(buf + n, PF_CLOCK_NAME_MAX - (size_t) n, "%lu@%lu", (unsigned long) id,
                         (unsigned long) sequence);
        else
                snprintf(buf + n, PF_CLOCK_NAME_MAX - (size_t) n, "%lu", (unsigned long) id);
        return buf;
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

        return (size_t) ((h * 0x9e3779b97f4a7c15u) >> 40) & (PF_CLOCK_SLOTS - 1);
}

size_t pf_clock_find(const PfReader *r, uint32_t machine, uint32_t sequence, uint32_t id) {
        for (size_t i = clock_slot(machine, sequence, id); r->clock_slots[i]; i = (i + 1) & (PF_CLOCK_SLOTS - 1)) {
                const PfClock *c = &r->clocks[r->clock_slots[i] - 1];

                if (c->id == id && c->sequence == sequence && c->machine == machine)
                        return r->clock_slots[i] - 1;
        }
        return PF_NO_CLOCK;
}

/* The clock's index, added with these properties if new; PF_NO_CLOCK when the table is full. */
size_t pf_clock_add(PfReader *r, uint32_t machine, uint32_t sequence, uint32_t id, int64_t mult, bool incremental) {
        size_t i, found = pf_clock_find(r, machine, sequence, id);

        if (found != PF_NO_CLOCK)
                return found;
        if (r->n_clocks == PF_MAX_CLOCKS)
                return PF_NO_CLOCK;
        for (i = clock_slot(machine, sequence, id); r->clock_slots[i]; i = (i + 1) & (PF_CLOCK_SLOTS - 1))
                ;
        r->clock_slots[i] = (uint32_t) ++r->n_clocks;
        r->clocks[r->n_clocks - 1] = (PfClock) {
                .machine = machine, .sequence = sequence, .id = id, .unit_multiplier_ns = mult,
                .incremental = incremental, .min_ts = INT64_MAX, .max_ts = INT64_MIN,
        };
        return r->n_clocks - 1;
}

bool pf_sequence_scoped(uint32_t id) {
        return id >= PF_CLOCK_SEQUENCE_SCOPED_FIRST && id <= PF_CLOCK_SEQUENCE_SCOPED_LAST;
}


typedef struct PacketFields {
        bool has_ts, cleared;
        uint64_t ts;
        uint32_t clock_id, sequence, flags, machine;
        /* Where these length-delimited fields start, read again when they are there (rarely). */
        const uint8_t *snapshot, *defaults, *remote, *block;
} PacketFields;

/* The error pf_next_field() and pf_expect_wire() give for the field at start, which the fast path
 * below found wrong. */
static int field_error(PfReader *r, const uint8_t *start, const uint8_t *end, unsigned expected_wire) {
        Field f;
        int k = pf_next_field(r, &start, end, &f);

        if (k < 0)
                return k;
        k = pf_expect_wire(r, &f, expected_wire);
        return k < 0 ? k : pf_fail_at(r, f.start, "field %u", f.number);
}

/* The top-level fields of a packet: the hot loop of the reader (most bytes of a trace are in
 * payload fields it skips by their length). */
static int packet_fields(PfReader *r, const uint8_t *p, const uint8_t *end, PacketFields *pf) {
        while (p < end) {
                const uint8_t *start = p;
                uint64_t key, v;
                uint64_t number;
                unsigned wire;

                if (pf_read_varint(&p, end, &key) < 0 || key >> 3 == 0 || key >> 3 > 0x1fffffff)
                        return field_error(r, start, end, PF_WIRE_VARINT);
                number = key >> 3;
                wire = (unsigned) (key & 7);
                if (wire == PF_WIRE_VARINT) {
                        if (pf_read_varint(&p, end, &v) < 0)
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
                        if (pf_read_varint(&p, end, &v) < 0 || v > (uint64_t) (end - p))
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
                /* fixed64, fixed32, or what pf_next_field() refuses */
                p = start;
                {
                        Field f;
                        int k = pf_next_field(r, &p, end, &f);

                        if (k < 0)
                                return k;
                        switch (f.number) {
                        case PF_PACKET_TIMESTAMP:
                        case PF_PACKET_TIMESTAMP_CLOCK_ID:
                        case PF_PACKET_TRUSTED_SEQUENCE_ID:
                        case PF_PACKET_SEQUENCE_FLAGS:
                        case PF_PACKET_INCREMENTAL_STATE_CLEARED:
                        case PF_PACKET_MACHINE_ID:
                                return pf_expect_wire(r, &f, PF_WIRE_VARINT);
                        case PF_PACKET_CLOCK_SNAPSHOT:
                        case PF_PACKET_DEFAULTS:
                        case PF_PACKET_REMOTE_CLOCK_SYNC:
                        case PF_PACKET_COMPRESSED:
                        case PF_PACKET_ZSTD_COMPRESSED:
                                return pf_expect_wire(r, &f, PF_WIRE_LEN);
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

        (void) pf_next_field(r, &start, end, &f);
        return f;
}

static int packet_defaults(PfReader *r, const Field *defaults, SeqState *seq) {
        const uint8_t *p = defaults->data;
        uint32_t clock_id = 0;
        Field f;
        int k;

        while ((k = pf_next_field(r, &p, defaults->data + defaults->size, &f)) > 0)
                if (f.number == PF_DEFAULTS_TIMESTAMP_CLOCK_ID) {
                        k = pf_expect_wire(r, &f, PF_WIRE_VARINT);
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
                .offset = pf_file_offset(r, at),
                .sequence = pf->sequence,
                .machine = pf->machine,
                .ts = (int64_t) pf->ts,
                .clock = PF_NO_CLOCK,
        };

        p.clock_id = pf->clock_id ? pf->clock_id : seq->default_clock_id ? seq->default_clock_id : r->trace_clock_id;
        if ((pf->flags & PF_SEQ_NEEDS_INCREMENTAL_STATE) && !seq->valid)
                p.skip_reason = "incremental state not valid on its sequence";
        else if (pf_sequence_scoped(p.clock_id) && pf->sequence == 0)
                p.skip_reason = "sequence-scoped clock without a sequence";
        else {
                p.clock_sequence = pf_sequence_scoped(p.clock_id) ? pf->sequence : 0;
                if (seq->cached_n_clocks == r->n_clocks && seq->cached_id == p.clock_id &&
                    seq->cached_machine == pf->machine)
                        p.clock = seq->cached_clock;
                else {
                        p.clock = pf_clock_find(r, pf->machine, p.clock_sequence, p.clock_id);
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

                return pf_compressed(r, &f);
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

                return pf_clock_snapshot(r, &f, pf.machine, pf.sequence);
        }
        if (pf.remote) {
                Field f = field_at(r, pf.remote, end);

                return pf_remote_clock_sync(r, &f, pf.machine);
        }
        if (pf.has_ts)
                return packet_timestamp(r, outer->start, &pf, seq, index);
        return 0;
}

int pf_scan_buffer(PfReader *r, const uint8_t *p, const uint8_t *end) {
        Field f;
        int k;

        for (;;) {
                uint64_t len;
                const uint8_t *q = p + 1;

                /* Trace.packet's key and a length that fits: most of a trace, read inline. */
                if (p < end && *p == 0x0a && pf_read_varint(&q, end, &len) >= 0 && len <= (uint64_t) (end - q)) {
                        f = (Field) { .number = PF_TRACE_PACKET, .wire = PF_WIRE_LEN, .data = q, .size = (size_t) len,
                                      .start = p };
                        p = q + len;
                        k = packet(r, &f);
                        if (k < 0)
                                return k;
                        continue;
                }
                k = pf_next_field(r, &p, end, &f);
                if (k <= 0)
                        break;
                if (f.number != PF_TRACE_PACKET)
                        continue;
                k = pf_expect_wire(r, &f, PF_WIRE_LEN);
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
        r->block_offset = PF_NO_BLOCK;
        r->ops = ops;
        r->userdata = userdata;
        r->message[0] = 0;
        return pf_scan_buffer(r, data, data + size);
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
