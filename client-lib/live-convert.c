/* SPDX-License-Identifier: MIT */

/* Live conversions: the shared table first when allowed, D-Bus for what it cannot answer. The
 * table runs the daemon's own conversion code on the daemon's models, so an answer by either
 * path is the same answer. */

#include <errno.h>
#include <string.h>

#include "bus-errors.h"
#include "live-table.h"
#include "timeconv-internal.h"

/* What the table says when it is the only path allowed: errors about the request itself as they
 * are, "cannot answer this here" (not mapped, before the segment, busy) as -EOPNOTSUPP. */
static int table_only_error(int r) {
        return r == -ERANGE || r == -ENODEV || r == -ENOLINK || r == -ENOENT || r == -EINVAL ? r : -EOPNOTSUPP;
}

/* Only an answer out of range is final: anything else the daemon may still answer. */
static bool table_final(const struct timeconv *tc, int r) {
        return !(tc->paths & TIMECONV_PATH_DBUS) || r == -ERANGE;
}

/* Keeps the record of table indices (src, dst) in the handle's pair cache under ids (from, to),
 * when the table answers for the pair with a record that needs no reading of the clock. now()
 * keeps the hub's record to a domain under from = LIVE_IDS_MAX. */
static void pair_remember(struct timeconv *tc, unsigned from, unsigned to, size_t src, size_t dst) {
        LivePair *p = &tc->pairs[live_pair_slot(from, to)];
        const uint64_t *latch;
        ConvRecord rec;
        uint64_t seq;

        if (tc->table.state != LIVE_TABLE_MAPPED || !tc->table.resolved || src == SIZE_MAX || dst == SIZE_MAX)
                return;
        if (shared_table_read_pair_latched(tc->table.mem, tc->table.size, src, dst, &rec, &seq, &latch) < 0 ||
            (rec.flags & CONV_RECORD_HINT_NOW))
                return;
        *p = (LivePair) {
                .latch = latch,
                .seq = seq,
                .from = from,
                .to = to,
                .rec = rec,
        };
        if (conv_hot_init(&rec, &p->hot_rec) >= 0)
                p->hot_from = from + 1;
}

/* The kept record applied: its hot form where it has one (the same answer, fewer branches),
 * the record for what the hot form leaves to it. */
static inline __attribute__((always_inline)) int pair_convert(const LivePair *p, int64_t value, int64_t *ret_value,
                                                             int64_t *ret_uncertainty_ns) {
        if (__builtin_expect(p->hot_from != 0, 1) &&
            __builtin_expect(conv_hot_convert(&p->hot_rec, value, ret_value, ret_uncertainty_ns) == 0, 1))
                return 0;
        return conv_record_convert(&p->rec, value, ret_value, ret_uncertainty_ns);
}

/* The pair's kept record, if it is still the table's. */
static inline const LivePair *pair_kept(const struct timeconv *tc, unsigned from, unsigned to) {
        const LivePair *p = &tc->pairs[live_pair_slot(from, to)];

        if (__builtin_expect(!p->latch || p->from != from || p->to != to ||
                             !shared_table_copy_current(p->latch, p->seq), 0))
                return NULL;
        return p;
}

/* The table's answer for one value, as id_slow() takes it: the kept record, else the table read
 * afresh and the pair kept. 0, or CONV_RECORD_MISS or -errno where the table does not answer. */
static inline __attribute__((always_inline)) int id_table(struct timeconv *tc, bool now, unsigned from, unsigned to,
                                                         int64_t value, int64_t *ret_value,
                                                         int64_t *ret_uncertainty_ns) {
        const LivePair *p;
        int r;

        if (__builtin_expect(--tc->checks_left == 0, 0))
                live_check_bus(tc);
        /* A kept pair without a hot form (a target that truncates, as x11 or msc), or a value its
         * hot form leaves to the record. */
        p = pair_kept(tc, from, to);
        if (p && pair_convert(p, now ? clock_now_ns(CLOCK_MONOTONIC_RAW) : value, ret_value, ret_uncertainty_ns) == 0)
                return 0;
        r = now ? live_table_now(tc, to, ret_value, ret_uncertainty_ns) :
                  live_table_convert(tc, from, to, value, ret_value, ret_uncertainty_ns);
        if (r == 0 && now)
                pair_remember(tc, from, to, tc->table.hub_index, tc->ids[to].table_index);
        else if (r == 0 && !tc->ids[from].needs_hint)
                pair_remember(tc, from, to, tc->ids[from].table_index, tc->ids[to].table_index);
        return r;
}

/* Everything but a repeated pair: the table read afresh, D-Bus for what it cannot answer. now:
 * value is ignored, the answer is now in to (the hub's record applied to a reading of the hub's
 * clock), and from is LIVE_IDS_MAX, the pair cache's name for the hub. */
static inline __attribute__((always_inline)) int id_slow(struct timeconv *tc, bool now, unsigned from, unsigned to,
                                                        int64_t value, int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        int64_t v, u;
        int r;

        if (__builtin_expect(!tc || (!now && from >= tc->n_ids) || to >= tc->n_ids || !ret_value, 0))
                return -EINVAL;
        if (tc->paths & TIMECONV_PATH_TABLE) {
                r = id_table(tc, now, from, to, value, &v, &u);
                if (__builtin_expect(r == 0, 1)) {
                        tc->last_path = TIMECONV_PATH_TABLE;
                        goto done;
                }
                /* CONV_RECORD_MISS, or an error: the daemon may answer what the table does not. */
                if (table_final(tc, r))
                        return table_only_error(r);
        }
        r = now ? live_bus_now(tc, tc->ids[to].name, &v, &u) :
                  live_bus_convert(tc, tc->ids[from].name, tc->ids[to].name, value, &v, &u);
        if (r < 0)
                return r;
        tc->last_path = TIMECONV_PATH_DBUS;
done:
        *ret_value = v;
        if (ret_uncertainty_ns)
                *ret_uncertainty_ns = u;
        return 0;
}

/* id_slow() out of line, in its two forms: six arguments each, so that the fast paths reach
 * them by a tail call. */
static __attribute__((noinline)) int convert_slow(struct timeconv *tc, unsigned from, unsigned to, int64_t value,
                                                  int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        return id_slow(tc, false, from, to, value, ret_value, ret_uncertainty_ns);
}

static __attribute__((noinline)) int now_slow(struct timeconv *tc, unsigned to, int64_t *ret_value,
                                              int64_t *ret_uncertainty_ns) {
        return id_slow(tc, true, LIVE_IDS_MAX, to, 0, ret_value, ret_uncertainty_ns);
}

/* The common loop, a pair converted again: one load of the pair's latch counter (and of the
 * table's count), then the record kept in the handle, in its hot form. Anything else, or a value
 * the hot form does not take, takes the slow path, which answers as before (through the kept
 * record, the table or the bus). Every check comes before the arithmetic, so that the fallback
 * is a plain tail call and the common case saves no registers. now (a constant): now in to, as
 * id_slow(), the clock read only once the pair is known. */
static inline __attribute__((always_inline)) int convert_id(struct timeconv *tc, bool now, unsigned from, unsigned to,
                                                           int64_t value, int64_t *ret_value,
                                                           int64_t *ret_uncertainty_ns) {
        const LivePair *p;
        int64_t count, u;

        /* from LIVE_IDS_MAX names the hub's pairs in the cache: only now() may find them. */
        if (__builtin_expect(!tc || !ret_value || tc->checks_left <= 1 || (!now && from >= LIVE_IDS_MAX), 0))
                goto slow;
        live_error_clear(tc);
        /* An empty slot, or one without a hot form, has hot_from 0: never from + 1. */
        p = &tc->pairs[live_pair_slot(from, to)];
        if (__builtin_expect(p->hot_from != from + 1 || p->to != to || !shared_table_copy_current(p->latch, p->seq), 0))
                goto slow;
        if (now)
                value = clock_now_ns(CLOCK_MONOTONIC_RAW);
        if (__builtin_expect(!conv_hot_takes(&p->hot_rec, value, &count), 0))
                goto slow;
        tc->checks_left--;
        tc->last_path = TIMECONV_PATH_TABLE;
        conv_hot_apply(&p->hot_rec, count, ret_value, ret_uncertainty_ns ? ret_uncertainty_ns : &u);
        return 0;
slow:
        if (tc)
                live_error_clear(tc);
        return now ? now_slow(tc, to, ret_value, ret_uncertainty_ns) :
                     convert_slow(tc, from, to, value, ret_value, ret_uncertainty_ns);
}

TIMECONV_EXPORT int timeconv_convert_id(struct timeconv *tc, unsigned from, unsigned to, int64_t value,
                                        int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        return convert_id(tc, false, from, to, value, ret_value, ret_uncertainty_ns);
}

TIMECONV_EXPORT int timeconv_pair_get(struct timeconv *tc, const char *from, const char *to,
                                      struct timeconv_pair *ret_pair) {
        unsigned i, j;
        int r;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!from || !to || !ret_pair)
                return -EINVAL;
        r = timeconv_domain_id(tc, from, &i);
        if (r < 0)
                return r;
        r = timeconv_domain_id(tc, to, &j);
        if (r < 0)
                return r;
        *ret_pair = (struct timeconv_pair) { .tc = tc, .from = i, .to = j };
        return 0;
}

/* The out-of-line form (the header's inline one is a macro of the same name). */
#undef timeconv_pair_convert
TIMECONV_EXPORT int timeconv_pair_convert(const struct timeconv_pair *pair, int64_t value, int64_t *ret_value,
                                          int64_t *ret_uncertainty_ns) {
        if (!pair)
                return -EINVAL;
        return convert_id(pair->tc, false, pair->from, pair->to, value, ret_value, ret_uncertainty_ns);
}

/* Whether the caller's name is ours (NUL-terminated, < LIVE_NAME_MAX): inline, byte by byte; a
 * domain name is a few bytes, where a call to strcmp() costs more than the comparison. */
static inline bool name_is(const char *ours, const char *theirs) {
        for (size_t i = 0;; i++) {
                if (ours[i] != theirs[i])
                        return false;
                if (ours[i] == '\0')
                        return true;
        }
}

/* The by-name cache: the ids of the last pair, when from and to name it again. */
static inline bool last_pair(const struct timeconv *tc, const char *from, const char *to, unsigned *ret_i,
                             unsigned *ret_j) {
        if (__builtin_expect(!tc->last_valid, 0) || !name_is(tc->ids[tc->last_from].name, from) ||
            !name_is(tc->ids[tc->last_to].name, to))
                return false;
        *ret_i = tc->last_from;
        *ret_j = tc->last_to;
        return true;
}

TIMECONV_EXPORT int timeconv_convert(struct timeconv *tc, const char *from, const char *to,
                                                              int64_t value, int64_t *ret_value,
                                                              int64_t *ret_uncertainty_ns) {
        unsigned i, j;
        int r;

        if (__builtin_expect(!tc, 0))
                return -EINVAL;
        live_error_clear(tc);
        if (__builtin_expect(!from || !to || !ret_value, 0))
                return -EINVAL;
        if (__builtin_expect(last_pair(tc, from, to, &i, &j), 1))
                return convert_id(tc, false, i, j, value, ret_value, ret_uncertainty_ns);
        r = timeconv_domain_id(tc, from, &i);
        if (r >= 0)
                r = timeconv_domain_id(tc, to, &j);
        if (r == -ENOSPC && (tc->paths & TIMECONV_PATH_DBUS)) {
                /* More names than ids: these go without the table. */
                r = live_bus_convert(tc, from, to, value, ret_value, ret_uncertainty_ns);
                if (r >= 0)
                        tc->last_path = TIMECONV_PATH_DBUS;
                return r;
        }
        if (r < 0)
                return r == -ENOSPC ? -EOPNOTSUPP : r;
        tc->last_from = i;
        tc->last_to = j;
        tc->last_valid = true;
        return convert_slow(tc, i, j, value, ret_value, ret_uncertainty_ns);
}

/* One value of a batch through the table, as convert_id() would answer it. */
static __attribute__((noinline)) int many_one(struct timeconv *tc, unsigned from, unsigned to, int64_t value,
                                              int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        return id_table(tc, false, from, to, value, ret_value, ret_uncertainty_ns);
}

/* The table for as many values as it answers, in order; returns how many, or -errno when the
 * first one it could not answer is final. The pair's hot record, checked current once per run
 * of values rather than once per value, answers every value it takes; many_one() the rest. A run
 * ends where the bus is due a look (checks_left), as convert_id()'s loop would, so that a batch
 * notices a new table no later than the same values converted one by one. */
static int many_by_table(struct timeconv *tc, const char *from, const char *to, const int64_t *values,
                         size_t n, int64_t *out_values, int64_t *out_uncertainty_ns, size_t *ret_done) {
        unsigned i, j;
        size_t k = 0;
        int r = 0;

        *ret_done = 0;
        if (!last_pair(tc, from, to, &i, &j)) {
                r = timeconv_domain_id(tc, from, &i);
                if (r >= 0)
                        r = timeconv_domain_id(tc, to, &j);
                if (r < 0)
                        return table_final(tc, r) ? table_only_error(r) : 0;
        }
        while (k < n) {
                const LivePair *p = &tc->pairs[live_pair_slot(i, j)];
                int64_t v, u;

                if (p->hot_from == i + 1 && p->to == j && tc->checks_left > 1 &&
                    shared_table_copy_current(p->latch, p->seq)) {
                        const ConvHot *h = &p->hot_rec;
                        size_t end = n - k < tc->checks_left - 1 ? n : k + tc->checks_left - 1, start = k;
                        int64_t count;

                        /* values and out_values may be one array: values[k] is read before it is
                         * written. */
                        if (out_uncertainty_ns)
                                for (; k < end && conv_hot_takes(h, values[k], &count); k++)
                                        conv_hot_apply(h, count, &out_values[k], &out_uncertainty_ns[k]);
                        else
                                for (; k < end && conv_hot_takes(h, values[k], &count); k++)
                                        conv_hot_apply(h, count, &out_values[k], &u);
                        tc->checks_left -= (unsigned) (k - start);
                        if (k == n)
                                break;
                }
                r = many_one(tc, i, j, values[k], &v, &u);
                if (r != 0)
                        break;
                out_values[k] = v;
                if (out_uncertainty_ns)
                        out_uncertainty_ns[k] = u;
                k++;
        }
        *ret_done = k;
        if (k < n && table_final(tc, r))
                return table_only_error(r);
        return 0;
}

TIMECONV_EXPORT int timeconv_convert_many(struct timeconv *tc, const char *from, const char *to,
                                          const int64_t *values, size_t n, int64_t *out_values,
                                          int64_t *out_uncertainty_ns) {
        size_t done = 0;
        int r;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!from || !to || (n > 0 && (!values || !out_values)))
                return -EINVAL;
        if (tc->paths & TIMECONV_PATH_TABLE) {
                r = many_by_table(tc, from, to, values, n, out_values, out_uncertainty_ns, &done);
                if (r < 0)
                        return r;
                if (done == n) {
                        tc->last_path = TIMECONV_PATH_TABLE;
                        return 0;
                }
        }
        /* The rest over D-Bus: more than a message takes goes in memfds (the bus daemon carries
         * none of their bytes, which would delay every other client's answers); what is left, or
         * all of it for a daemon without ConvertManyMemfd or with no room for another memfd
         * (QuotaExceeded), in messages the daemon accepts. */
        while (n - done > BUS_API_CONVERT_MANY_MAX) {
                size_t chunk = n - done < BUS_API_CONVERT_MANY_MEMFD_MAX ? n - done : BUS_API_CONVERT_MANY_MEMFD_MAX;

                r = live_bus_convert_many_memfd(tc, from, to, values + done, chunk, out_values + done,
                                                out_uncertainty_ns ? out_uncertainty_ns + done : NULL);
                if (r == -EOPNOTSUPP || r == -EDQUOT)
                        break;
                if (r < 0)
                        return r;
                done += chunk;
        }
        while (done < n) {
                size_t chunk = n - done < BUS_API_CONVERT_MANY_MAX ? n - done : BUS_API_CONVERT_MANY_MAX;

                r = live_bus_convert_many(tc, from, to, values + done, chunk, out_values + done,
                                          out_uncertainty_ns ? out_uncertainty_ns + done : NULL);
                if (r < 0)
                        return r;
                done += chunk;
        }
        tc->last_path = TIMECONV_PATH_DBUS;
        return 0;
}

/* As convert_id(): the hub's record to domain, kept, on a reading of the hub's clock. */
TIMECONV_EXPORT int timeconv_now_id(struct timeconv *tc, unsigned domain, int64_t *ret_value,
                                    int64_t *ret_uncertainty_ns) {
        return convert_id(tc, true, LIVE_IDS_MAX, domain, 0, ret_value, ret_uncertainty_ns);
}

TIMECONV_EXPORT int timeconv_now(struct timeconv *tc, const char *domain, int64_t *ret_value,
                                 int64_t *ret_uncertainty_ns) {
        unsigned i;
        int r;

        if (!tc)
                return -EINVAL;
        live_error_clear(tc);
        if (!domain || !ret_value)
                return -EINVAL;
        r = timeconv_domain_id(tc, domain, &i);
        if (r == -ENOSPC && (tc->paths & TIMECONV_PATH_DBUS)) {
                r = live_bus_now(tc, domain, ret_value, ret_uncertainty_ns);
                if (r >= 0)
                        tc->last_path = TIMECONV_PATH_DBUS;
                return r;
        }
        if (r < 0)
                return r == -ENOSPC ? -EOPNOTSUPP : r;
        return timeconv_now_id(tc, i, ret_value, ret_uncertainty_ns);
}
