/* SPDX-License-Identifier: MIT */

/* The clocks of a Perfetto trace: ClockSnapshot packets checked against what is known of their
 * clocks (perfetto-read.h), and RemoteClockSync made into brackets. */

#include <errno.h>
#include <stdlib.h>

#include "alloc-util.h"
#include "perfetto-read-internal.h"

/* trace_processor's rule: two client snapshots further apart belong to different rounds. */
#define SYNC_ROUND_NS (INT64_C(30) * 1000000000)
/* The rate error the snapshot graph allows between two clocks (snapshot-graph.h): a bracket
 * that an earlier, tighter one still beats at its own instant is left out. */
#define BRACKET_RATE_ERROR_PPM 1000

static int parse_clock(PfReader *r, const uint8_t *p, const uint8_t *end, RawClock *ret) {
        RawClock c = { .unit_multiplier_ns = 1 };
        Field f;
        int k;

        while ((k = pf_next_field(r, &p, end, &f)) > 0) {
                switch (f.number) {
                case PF_CLOCK_ID:
                case PF_CLOCK_TIMESTAMP:
                case PF_CLOCK_IS_INCREMENTAL:
                case PF_CLOCK_UNIT_MULTIPLIER_NS:
                        k = pf_expect_wire(r, &f, PF_WIRE_VARINT);
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

        while ((k = pf_next_field(r, &p, end, &f)) > 0) {
                if (f.number == PF_SNAPSHOT_CLOCKS) {
                        k = pf_expect_wire(r, &f, PF_WIRE_LEN);
                        if (k < 0)
                                return k;
                        if (n == max)
                                return pf_fail_at(r, f.start, "more than %zu clocks in one snapshot", max);
                        k = parse_clock(r, f.data, f.data + f.size, &clocks[n++]);
                        if (k < 0)
                                return k;
                } else if (f.number == PF_SNAPSHOT_PRIMARY_TRACE_CLOCK) {
                        k = pf_expect_wire(r, &f, PF_WIRE_VARINT);
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
                uint32_t seq = pf_sequence_scoped(c->id) ? sequence : 0;
                size_t index;
                PfClock *clock;

                if (pf_sequence_scoped(c->id) && sequence == 0)
                        return pf_fail_at(r, at, "sequence-scoped clock %u in a snapshot without a sequence", c->id);
                if (c->incremental && seq == 0)
                        return pf_fail_at(r, at, "clock %u is incremental but not sequence-scoped", c->id);
                if (c->unit_multiplier_ns > INT64_MAX)
                        return pf_fail_at(r, at, "clock %u: unit_multiplier_ns %llu", c->id,
                                       (unsigned long long) c->unit_multiplier_ns);
                for (size_t j = 0; j < i; j++)
                        if (r->readings[j].clock == pf_clock_find(r, m, seq, c->id))
                                return pf_fail_at(r, at, "clock %s twice in one snapshot",
                                               pf_clock_name(m, seq, c->id, name));
                index = pf_clock_add(r, m, seq, c->id, (int64_t) c->unit_multiplier_ns, c->incremental);
                if (index == PF_NO_CLOCK)
                        return pf_fail_at(r, at, "more than %d clocks", PF_MAX_CLOCKS);
                clock = &r->clocks[index];
                if (clock->unit_multiplier_ns != (int64_t) c->unit_multiplier_ns ||
                    clock->incremental != c->incremental)
                        return pf_fail_at(r, at, "clock %s: unit_multiplier_ns %llu, is_incremental %d, first "
                                       "seen with %lld, %d", pf_clock_name(m, seq, c->id, name),
                                       (unsigned long long) c->unit_multiplier_ns, c->incremental,
                                       (long long) clock->unit_multiplier_ns, clock->incremental);
                if (m == 0 && seq == 0 && c->id == r->trace_clock_id && c->unit_multiplier_ns != 1)
                        return pf_fail_at(r, at, "the trace clock %s must count ns (unit_multiplier_ns %llu)",
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
                PfSnapshot s = { .offset = pf_file_offset(r, at), .readings = r->readings, .n = n };

                return r->ops->snapshot(r, &s, r->userdata);
        }
        return 0;
}

int pf_clock_snapshot(PfReader *r, const Field *f, uint32_t machine, uint32_t sequence) {
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
        RawClock clocks[2 * PF_SYNC_SIDE_MAX];
        uint32_t machines[2 * PF_SYNC_SIDE_MAX];
        int64_t uncertainty_ns[2 * PF_SYNC_SIDE_MAX];
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

int pf_remote_clock_sync(PfReader *r, const Field *remote, uint32_t machine) {
        const uint8_t *p = remote->data, *end = remote->data + remote->size;
        int64_t last_mid = 0, last_half = -1;
        size_t n = 0;
        Field f;
        int k;

        if (machine == 0)
                return pf_fail_at(r, remote->start, "remote_clock_sync in a packet of the host (machine_id 0)");
        while ((k = pf_next_field(r, &p, end, &f)) > 0) {
                const uint8_t *q;
                Field g;
                SyncEntry *e;

                if (f.number != PF_REMOTE_SYNCED_CLOCKS)
                        continue;
                k = pf_expect_wire(r, &f, PF_WIRE_LEN);
                if (k < 0)
                        return k;
                if (n == PF_MAX_SYNCED_CLOCKS)
                        return pf_fail_at(r, f.start, "more than %d synced_clocks", PF_MAX_SYNCED_CLOCKS);
                if (GREEDY_REALLOC(r->sync, r->sync_allocated, n + 1, 16) < 0)
                        return -ENOMEM;
                e = &r->sync[n++];
                e->n_client = e->n_host = 0;
                q = f.data;
                while ((k = pf_next_field(r, &q, f.data + f.size, &g)) > 0) {
                        if (g.number != PF_SYNCED_CLIENT_CLOCKS && g.number != PF_SYNCED_HOST_CLOCKS)
                                continue;
                        bool client = g.number == PF_SYNCED_CLIENT_CLOCKS;

                        k = pf_expect_wire(r, &g, PF_WIRE_LEN);
                        if (k >= 0)
                                k = parse_snapshot(r, g.data, g.data + g.size, client ? e->client : e->host,
                                                   PF_SYNC_SIDE_MAX, client ? &e->n_client : &e->n_host, NULL);
                        if (k < 0)
                                return k;
                }
                if (k < 0)
                        return k;
                for (size_t i = 0; i < e->n_client + e->n_host; i++) {
                        const RawClock *c = i < e->n_client ? &e->client[i] : &e->host[i - e->n_client];

                        /* As trace_processor takes them: machine clocks, in ns, absolute. */
                        if (c->incremental || c->unit_multiplier_ns != 1 || pf_sequence_scoped(c->id))
                                return pf_fail_at(r, f.start, "synced clock %u is not a plain clock in ns", c->id);
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
