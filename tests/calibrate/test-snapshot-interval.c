/* SPDX-License-Identifier: MIT */

/* snapshot_nearest_fast() against the record it stands for (snapshot_nearest_record() and
 * conv_record_map()): every value it takes must get the record's answer and bound to the bit,
 * and it must take the values it promises to (else it is no shortcut). Then the whole offline
 * conversion, both modes, against a reference that searches every hop and maps its record, also
 * from threads that share one graph and its caches. */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot-graph.h"
#include "snapshot-interval.h"
#include "tap.h"

#define MAX_N 8
#define TWO50 (INT64_C(1) << 50)

typedef struct Series {
        const char *what;
        size_t n;
        int64_t src[MAX_N], dst[MAX_N], unc_ns[MAX_N];
        int64_t slack_ns;
} Series;

typedef struct Tally {
        long compared, taken, mismatched;
        long taken_below_first, taken_last, taken_near_2_50;
} Tally;

static uint64_t rng_next(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The pair of s, with its NEAREST steps of side 0 in steps[] (MAX_N). */
static Pair pair_of(const Series *s, NearestStep *steps) {
        Pair p = {
                .domain = { 0, 1 }, .n = s->n,
                .ns = { (int64_t *) s->src, (int64_t *) s->dst },
                .unc_ns = (int64_t *) s->unc_ns,
                .slack_ns = s->slack_ns,
                .nearest = { steps, NULL },
        };

        snapshot_nearest_steps(&p, 0, steps);
        return p;
}

static bool add_overflows(int64_t a, int64_t b) {
        int64_t r;

        return __builtin_add_overflow(a, b, &r);
}

/* One value on interval k: the shortcut against the record. */
static void compare_at(const Series *s, const Pair *p, size_t k, int64_t v, Tally *t) {
        int64_t rec_out = 0, rec_bound = 0, fast_out = 0, c = s->src[k];
        uint64_t fast_bound = 0, ad = v < c ? (uint64_t) c - (uint64_t) v : (uint64_t) v - (uint64_t) c;
        ConvRecord rec;
        bool taken, promised;
        int r;

        snapshot_nearest_record(p, 0, k, s->slack_ns, &rec);
        r = conv_record_map(&rec, v, &rec_out, &rec_bound);
        taken = snapshot_nearest_fast(&p->nearest[0][k], v, &fast_out, &fast_bound);
        /* What the shortcut promises to take: within 2^50 of snapshot k, above it (or below the
         * first), before the next one, with an answer that fits. */
        promised = ad < (uint64_t) TWO50 && (v >= c || k == 0) && (k + 1 == s->n || v < s->src[k + 1]) &&
                   !add_overflows(s->dst[k], (int64_t) ((uint64_t) v - (uint64_t) c));
        t->compared++;
        if (taken != promised || (taken && (r != 0 || fast_out != rec_out || fast_bound != (uint64_t) rec_bound))) {
                if (t->mismatched++ == 0)
                        diag("%s: k %zu, value %" PRId64 ": shortcut %s %" PRId64 " bound %" PRIu64
                             ", record %d %" PRId64 " bound %" PRId64, s->what, k, v, taken ? "took" : "declined",
                             fast_out, fast_bound, r, rec_out, rec_bound);
                return;
        }
        if (!taken)
                return;
        t->taken++;
        t->taken_below_first += v < c;
        t->taken_last += k + 1 == s->n;
        t->taken_near_2_50 += ad >= (uint64_t) TWO50 - 16;
}

/* Values around every edge the record or the shortcut has, then random ones, on every k. */
static void compare_series(const Series *s, uint64_t *seed, Tally *t) {
        NearestStep steps[MAX_N];
        Pair p = pair_of(s, steps);

        for (size_t k = 0; k < s->n; k++) {
                int64_t c = s->src[k], next = k + 1 < s->n ? s->src[k + 1] : c;
                /* wrapping sums: near int64's ends the marks wrap, which probes wrapping too */
                uint64_t uc = (uint64_t) c;
                int64_t marks[] = { c, next, (int64_t) (uc - TWO50), (int64_t) (uc + TWO50), (int64_t) (uc - SPAN_Q62),
                                    (int64_t) (uc + SPAN_Q62), INT64_MIN, INT64_MAX, 0 };

                for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++)
                        for (int64_t delta = -3; delta <= 3; delta++)
                                compare_at(s, &p, k, (int64_t) ((uint64_t) marks[m] + (uint64_t) delta), t);
                for (int i = 0; i < 2000; i++) {
                        uint64_t x = rng_next(seed);
                        int64_t v;

                        switch (i % 4) {
                        case 0:         /* anywhere */
                                v = (int64_t) x;
                                break;
                        case 1:         /* within 2^51 of the snapshot */
                                v = (int64_t) ((uint64_t) c + (x % (UINT64_C(1) << 52)) - (UINT64_C(1) << 51));
                                break;
                        default:        /* near it, or inside the interval */
                                x %= next > c ? (uint64_t) next - (uint64_t) c + 2000 : 4000;
                                v = (int64_t) ((uint64_t) c + x - 1000);
                                break;
                        }
                        compare_at(s, &p, k, v, t);
                }
        }
}

static void test_against_record(void) {
        static const Series series[] = {
                { "steady", 4, { 1000, 2000, 3000, 4000 }, { 1500, 2600, 3400, 4000 }, { 0, 3, 7, 1 }, 2 },
                { "one snapshot", 1, { 5000 }, { -7000 }, { 11 }, 0 },
                { "equal readings", 4, { 10, 10, 20, 20 }, { 100, 110, 120, 130 }, { 0, 0, 5, 5 }, 1 },
                { "wide gaps", 3, { 0, INT64_C(1) << 51, INT64_C(1) << 52 }, { 7, -3, INT64_C(1) << 40 },
                  { 0, 2, 4 }, 3 },
                /* gaps of 2^50 - 2, 2^50 - 1, 2^50, 2^50 + 1 */
                { "gaps near 2^50", 5, { 0, TWO50 - 2, 2 * TWO50 - 3, 3 * TWO50 - 3, 4 * TWO50 - 2 }, { 1, 2, 3, 4, 5 },
                  { 0, 0, 0, 0, 0 }, 0 },
                { "answers that overflow", 3, { -100, 0, 100 }, { INT64_MAX - 50, INT64_MIN + 50, INT64_MAX },
                  { 0, 0, 0 }, 0 },
                { "answers that underflow", 2, { 100, 200 }, { INT64_MIN + 50, INT64_MIN }, { 0, 0 }, 0 },
                { "int64 ends", 4, { INT64_MIN, INT64_MIN + 10, 0, INT64_MAX - 10 },
                  { INT64_MIN + 3, 5, -5, INT64_MAX - 3 }, { 1, 2, 3, INT64_MAX / 2 }, 1 },
                { "near the ends", 2, { INT64_MIN + 100, INT64_MAX - 100 }, { 0, 1 }, { 0, 0 }, 0 },
        };
        uint64_t seed = 0x9e3779b97f4a7c15u;

        for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
                Tally t = { 0 };

                compare_series(&series[i], &seed, &t);
                ok(t.mismatched == 0 && t.taken > 0, "%s: the shortcut gives the record's answer and bound "
                   "(%ld values, %ld taken, %ld mismatched)", series[i].what, t.compared, t.taken, t.mismatched);
                if (i == 0 || i == 1)
                        ok(t.taken_below_first > 0 && t.taken_last > 0 && t.taken_near_2_50 > 0,
                           "%s: taken below the first snapshot (%ld), on the last interval (%ld), within 16 ns of "
                           "2^50 away (%ld)", series[i].what, t.taken_below_first, t.taken_last, t.taken_near_2_50);
        }
}

/* Known answers: the values and bounds Perfetto's offset and 1000 ppm give. */
static void test_known_answers(void) {
        static const Series s = { "steady", 3, { 1000, 2000, 5000 }, { 1500, 2600, 4000 }, { 0, 3, 7 }, 2 };
        static const struct {
                size_t k;
                int64_t value;
                bool taken;
                int64_t want;
                uint64_t want_bound;
        } cases[] = {
                { 0, 1999, true, 2499, 2 + 0 + 1 },
                { 0, 1000, true, 1500, 2 },
                { 0, 999, true, 1499, 2 + 1 },                  /* before the first snapshot */
                { 0, 1000 - 1000001, true, 1500 - 1000001, 2 + 1001 },
                { 1, 1999, false, 0, 0 },                       /* before its snapshot */
                { 1, 2000, true, 2600, 2 + 3 },
                { 1, 5000, false, 0, 0 },                       /* the next interval's */
                { 2, 5000 + TWO50 - 1, true, 4000 + TWO50 - 1, 2 + 7 + (TWO50 - 1 + 999) / 1000 },
                { 2, 5000 + TWO50, false, 0, 0 },               /* the record's, from here */
        };
        NearestStep steps[MAX_N];
        Pair p = pair_of(&s, steps);

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int64_t out = -1;
                uint64_t bound = UINT64_MAX;
                bool taken = snapshot_nearest_fast(&p.nearest[0][cases[i].k], cases[i].value, &out, &bound);

                ok(taken == cases[i].taken && (!taken || (out == cases[i].want && bound == cases[i].want_bound)),
                   "interval %zu, value %" PRId64 ": %s %" PRId64 " bound %" PRIu64, cases[i].k, cases[i].value,
                   cases[i].taken ? "taken," : "declined", cases[i].want, cases[i].want_bound);
                if (!taken)
                        ok(out == -1 && bound == UINT64_MAX, "declined: nothing written");
        }
}

/* ---- the whole conversion against a reference that searches and maps every hop ---- */

#define SNAPS 40

typedef struct Chain {          /* a-b and b-c, read in alternate snapshots: a -> c is two hops */
        int64_t a_slack_ns;     /* 1 when a's readings truncate to whole ns, else 0 */
        int64_t ab[2][SNAPS], bc[2][SNAPS], ab_unc[SNAPS], bc_unc[SNAPS];
        Pair pab, pbc;
} Chain;

/* Perfetto's interval: the last k with src[k] <= v, else 0. */
static size_t floor_linear(const int64_t *src, size_t n, int64_t v) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (src[i] <= v)
                        k = i;
        return k;
}

static int reference_hop(const Pair *p, SnapshotMode mode, int64_t slack_ns, int64_t *ns, uint64_t *unc) {
        size_t k = floor_linear(p->ns[0], p->n, *ns);
        int64_t out;
        uint64_t bound;
        int r;

        r = snapshot_interval_map(p, 0, k, mode, *ns, slack_ns, &out, &bound);
        if (r != 0)
                return r == CONV_RECORD_MISS ? -ERANGE : r;
        *ns = out;
        *unc += bound;
        return 0;
}

static int reference_convert(const Chain *ch, SnapshotMode mode, int64_t v, int64_t *ret, int64_t *ret_unc) {
        uint64_t unc = (uint64_t) ch->a_slack_ns;      /* a's reading, and the same on the hop a-b */
        int r = reference_hop(&ch->pab, mode, ch->a_slack_ns, &v, &unc);

        if (r >= 0)
                r = reference_hop(&ch->pbc, mode, 0, &v, &unc);
        if (r < 0)
                return r;
        *ret = v;
        *ret_unc = (int64_t) unc;
        return 0;
}

static SnapshotGraph *chain_build(Chain *ch, bool a_truncates, uint64_t *seed) {
        static const DomainUnit ns_truncated = { .period_ns = 1.0, .truncates = true };
        SnapshotGraph *g = NULL;
        int64_t t = 1000000000, drift_ppm = 0;
        int r = snapshot_graph_new(&g);

        ch->a_slack_ns = a_truncates;
        if (r >= 0 && a_truncates)
                r = snapshot_graph_declare(g, "a", &ns_truncated);

        for (size_t i = 0; r >= 0 && i < SNAPS; i++) {
                /* irregular steps, rates that drift, a jump of b at 20, equal readings at 30 */
                int64_t step = i == 30 ? 0 : 200000 + (int64_t) (rng_next(seed) % 1800000);

                t += step;
                drift_ppm = (int64_t) (rng_next(seed) % 1601) - 800;
                ch->ab[0][i] = t;
                ch->ab[1][i] = i ? ch->ab[1][i - 1] + step + step * drift_ppm / 1000000 + (i == 20 ? 5000000 : 0) : 77;
                ch->bc[0][i] = ch->ab[1][i] + 1000 + (int64_t) i;
                /* c steps back once (at 30): a target only, as in Perfetto */
                ch->bc[1][i] = ch->bc[0][i] + 123456789 - (int64_t) i * 700;
                ch->ab_unc[i] = (int64_t) (rng_next(seed) % 50);
                ch->bc_unc[i] = i % 7 == 0 ? 1000 : 0;
                r = snapshot_graph_add(g, (SnapshotClock[]) { { "a", ch->ab[0][i], ch->ab_unc[i] },
                                                              { "b", ch->ab[1][i], 0 } }, 2);
                if (r >= 0)
                        r = snapshot_graph_add(g, (SnapshotClock[]) { { "b", ch->bc[0][i], 0 },
                                                                      { "c", ch->bc[1][i], ch->bc_unc[i] } }, 2);
        }
        if (r >= 0)
                r = snapshot_graph_finalize(g);
        ok(r == 0, "built the a-b-c chain, a %s", a_truncates ? "truncated to ns" : "in ns");
        ch->pab = (Pair) { .domain = { 0, 1 }, .n = SNAPS, .ns = { ch->ab[0], ch->ab[1] }, .unc_ns = ch->ab_unc };
        ch->pbc = (Pair) { .domain = { 1, 2 }, .n = SNAPS, .ns = { ch->bc[0], ch->bc[1] }, .unc_ns = ch->bc_unc };
        return g;
}

static void compare_convert(const SnapshotGraph *g, const Chain *ch, SnapshotMode mode, size_t a, size_t c,
                            int64_t v, long *compared, long *mismatched) {
        int64_t got = 0, got_unc = 0, want = 0, want_unc = 0;
        int r = snapshot_graph_convert(g, mode, a, c, v, &got, &got_unc);
        int rr = reference_convert(ch, mode, v, &want, &want_unc);

        (*compared)++;
        if (r != rr || (r == 0 && (got != want || got_unc != want_unc))) {
                if ((*mismatched)++ == 0)
                        diag("%s %" PRId64 ": got %" PRId64 " bound %" PRId64 " (%d), reference %" PRId64
                             " bound %" PRId64 " (%d)", mode == SNAPSHOT_MODE_DRIFT ? "drift" : "nearest", v, got,
                             got_unc, r, want, want_unc, rr);
        }
}

static void test_whole_conversion(bool a_truncates) {
        static Chain ch;
        uint64_t seed = 0x2545f4914f6cdd1du;
        SnapshotGraph *g = chain_build(&ch, a_truncates, &seed);
        size_t a = SIZE_MAX, c = SIZE_MAX;
        int64_t first = ch.ab[0][0], last = ch.ab[0][SNAPS - 1];

        ok(snapshot_graph_find(g, "a", &a) == 0 && snapshot_graph_find(g, "c", &c) == 0, "a and c are there");
        for (int m = 0; m < 2; m++) {
                SnapshotMode mode = m ? SNAPSHOT_MODE_DRIFT : SNAPSHOT_MODE_NEAREST;
                long compared = 0, mismatched = 0;

                /* sequential (the caches hit), from before the first snapshot to after the last */
                for (int64_t v = first - 3000000; v <= last + 3000000; v += 997)
                        compare_convert(g, &ch, mode, a, c, v, &compared, &mismatched);
                /* every snapshot's edges, then random values (the caches miss), far ones too */
                for (size_t i = 0; i < SNAPS; i++)
                        for (int64_t d = -2; d <= 2; d++)
                                compare_convert(g, &ch, mode, a, c, ch.ab[0][i] + d, &compared, &mismatched);
                for (int i = 0; i < 20000; i++) {
                        uint64_t x = rng_next(&seed);
                        int64_t v = i % 10 == 0 ? (int64_t) x :
                                    i % 10 == 1 ? first + (int64_t) (x % (UINT64_C(1) << 53)) - (INT64_C(1) << 52) :
                                    first - 1000000 + (int64_t) (x % (uint64_t) (last - first + 2000000));

                        compare_convert(g, &ch, mode, a, c, v, &compared, &mismatched);
                }
                ok(mismatched == 0, "%s a -> c: the graph's answers and bounds are the records' (%ld values, "
                   "%ld mismatched)", mode ? "drift" : "nearest", compared, mismatched);
        }
        snapshot_graph_free(g);
}

typedef struct Worker {
        const SnapshotGraph *g;
        const Chain *ch;
        size_t a, c;
        int64_t start, step;
        long compared, mismatched;
} Worker;

static void *worker_run(void *arg) {
        Worker *w = arg;

        for (int i = 0; i < 200000; i++)
                compare_convert(w->g, w->ch, SNAPSHOT_MODE_NEAREST, w->a, w->c, w->start + i * w->step,
                                &w->compared, &w->mismatched);
        return NULL;
}

/* One graph, four threads converting sequences of their own through the same routes: every
 * answer the single-threaded reference's, whatever the others left in the caches. */
static void test_threads(void) {
        static Chain ch;
        uint64_t seed = 0x5851f42d4c957f2du;
        SnapshotGraph *g = chain_build(&ch, false, &seed);
        int64_t first = ch.ab[0][0], span = ch.ab[0][SNAPS - 1] - first;
        Worker w[4];
        pthread_t t[4];
        long compared = 0, mismatched = 0;
        bool started[4], all = true;

        for (size_t i = 0; i < 4; i++) {
                w[i] = (Worker) { .g = g, .ch = &ch, .start = first - 1000000 + (int64_t) i * span / 4,
                                  .step = 97 + 13 * (int64_t) i };
                (void) snapshot_graph_find(g, "a", &w[i].a);
                (void) snapshot_graph_find(g, "c", &w[i].c);
                started[i] = pthread_create(&t[i], NULL, worker_run, &w[i]) == 0;
                all &= started[i];
        }
        for (size_t i = 0; i < 4; i++) {
                if (started[i])
                        pthread_join(t[i], NULL);
                compared += w[i].compared;
                mismatched += w[i].mismatched;
        }
        ok(all && mismatched == 0, "4 threads, one graph: every answer and bound the records' (%ld values, "
           "%ld mismatched)", compared, mismatched);
        snapshot_graph_free(g);
}

int main(void) {
        test_known_answers();
        test_against_record();
        test_whole_conversion(false);
        test_whole_conversion(true);
        test_threads();
        return done_testing();
}
