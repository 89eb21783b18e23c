/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot-graph.h"
#include "tap.h"

#define NEAREST SNAPSHOT_MODE_NEAREST
#define DRIFT SNAPSHOT_MODE_DRIFT
#define ANY_UNC INT64_MIN

/* Up to three clocks read together; c may be NULL. */
typedef struct Snap {
        const char *a; int64_t ta;
        const char *b; int64_t tb;
        const char *c; int64_t tc;
} Snap;

typedef struct Case {
        SnapshotMode mode;
        const char *from, *to;
        int64_t value;
        int r;
        int64_t want, want_unc;
} Case;

static SnapshotGraph *build(const Snap *s, size_t n) {
        SnapshotGraph *g = NULL;
        int r = snapshot_graph_new(&g);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                SnapshotClock c[3] = { { s[i].a, s[i].ta }, { s[i].b, s[i].tb },
                                       { s[i].c, s[i].tc } };

                r = snapshot_graph_add(g, c, s[i].c ? 3 : 2);
        }
        if (r >= 0)
                r = snapshot_graph_finalize(g);
        ok(r == 0 && g, "built a graph of %zu snapshots", n);
        return g;
}

static int add2(SnapshotGraph *g, const char *a, int64_t ta, const char *b, int64_t tb) {
        return snapshot_graph_add(g, (SnapshotClock[]) { { a, ta }, { b, tb } }, 2);
}

static const char *mode_name(SnapshotMode mode) {
        return mode == DRIFT ? "drift" : "nearest";
}

static void check_cases(const char *what, const SnapshotGraph *g, const Case *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const Case *c = &cases[i];
                int64_t got = INT64_MIN, unc = INT64_MIN;
                size_t f = SIZE_MAX, t = SIZE_MAX;      /* unknown names stay out of range */
                bool pass;
                int r;

                (void) snapshot_graph_find(g, c->from, &f);
                (void) snapshot_graph_find(g, c->to, &t);
                r = snapshot_graph_convert(g, c->mode, f, t, c->value, &got, &unc);
                pass = r == c->r && (r < 0 || (got == c->want &&
                                               (c->want_unc == ANY_UNC || unc == c->want_unc)));

                ok(pass, "%s: %s %s %" PRId64 " -> %s = %" PRId64 " (%d), bound %" PRId64, what,
                   mode_name(c->mode), c->from, c->value, c->to, c->want, c->r, c->want_unc);
                if (!pass)
                        diag("got %" PRId64 " (%d), bound %" PRId64, got, r, unc);
        }
}

static void run_table(const char *what, const Snap *s, size_t n, const Case *cases, size_t m) {
        SnapshotGraph *g = build(s, n);

        check_cases(what, g, cases, m);
        snapshot_graph_free(g);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Both examples of perfetto.dev/docs/concepts/clock-sync, with the doc's tables. */
static void test_perfetto_examples(void) {
        static const Snap one[] = {
                { "monotonic", 1000, "boottime", 2000 }, { "monotonic", 1100, "boottime", 2100 },
                { "monotonic", 1200, "boottime", 2200 }, { "monotonic", 1900, "boottime", 2900 },
                { "monotonic", 2000, "boottime", 3500 }, { "monotonic", 2100, "boottime", 3600 },
        };
        static const Case one_cases[] = {
                { NEAREST, "monotonic", "boottime", 1104, 0, 2104, 1 },
                { DRIFT, "monotonic", "boottime", 1104, 0, 2104, ANY_UNC },
                { NEAREST, "monotonic", "boottime", 1950, 0, 2950, 1 },
                { DRIFT, "monotonic", "boottime", 1950, 0, 2950, 1 },   /* a suspend: nearest */
                { NEAREST, "monotonic", "boottime", 2000, 0, 3500, 0 },
                { NEAREST, "monotonic", "boottime", 5000, 0, 6500, 3 },
                { NEAREST, "monotonic", "boottime", 900, 0, 1900, 1 },  /* before the first */
                { NEAREST, "boottime", "monotonic", 3000, 0, 2000, 1 },
                { NEAREST, "boottime", "monotonic", 3499, 0, 2499, 1 },
        };
        /* CUSTOM 1000/MONOTONIC 1100, MONOTONIC 1200/BOOTTIME 5200, ... in file order. */
        static const Snap two[] = {
                { "custom", 1000, "monotonic", 1100 }, { "monotonic", 1200, "boottime", 5200 },
                { "custom", 3000, "monotonic", 3200 }, { "monotonic", 4000, "boottime", 9000 },
        };
        static const Case two_cases[] = {
                { NEAREST, "custom", "monotonic", 3503, 0, 3703, 1 },
                { NEAREST, "custom", "boottime", 3503, 0, 7703, 4 },
                { DRIFT, "custom", "boottime", 3503, 0, 7703, 4 },
                { NEAREST, "custom", "boottime", 0, 0, 4100, 3 },       /* first, then first */
                { NEAREST, "boottime", "custom", 9500, 0, 4300, 3 },
        };
        run_table("doc example 1", one, N(one), one_cases, N(one_cases));
        run_table("doc example 2", two, N(two), two_cases, N(two_cases));
}

static void test_own_tables(void) {
        static const Snap equal[] = {
                { "a", 100, "b", 1000 }, { "a", 100, "b", 2000 }, { "a", 100, "b", 3000 },
                { "a", 200, "b", 4000 },
        };
        static const Case equal_cases[] = {
                { NEAREST, "a", "b", 100, 0, 3000, 0 },                 /* last of the run */
                { NEAREST, "a", "b", 150, 0, 3050, 1 },
                { DRIFT, "a", "b", 150, 0, 3050, 1 },
                { NEAREST, "a", "b", 50, 0, 950, 1 },                   /* first of the table */
                { NEAREST, "a", "b", 250, 0, 4050, 1 },
                { NEAREST, "b", "a", 2500, 0, 600, 1 },
        };
        /* realtime steps back by 3600 between the 2nd and 3rd snapshots. */
        static const Snap back[] = {
                { "boottime", 1000, "realtime", 50000 }, { "boottime", 2000, "realtime", 51000 },
                { "boottime", 3000, "realtime", 47400 }, { "boottime", 4000, "realtime", 48400 },
                { "realtime", 51500, "rt_child", 10 },
        };
        static const Case back_cases[] = {
                { NEAREST, "boottime", "realtime", 3500, 0, 47900, 1 },
                { NEAREST, "boottime", "realtime", 1500, 0, 50500, 1 },
                { DRIFT, "boottime", "realtime", 3500, 0, 47900, 1 },
                { DRIFT, "boottime", "realtime", 2500, 0, 51500, 1 },
                { NEAREST, "rt_child", "realtime", 20, 0, 51510, 1 },   /* a target is fine */
                { NEAREST, "realtime", "boottime", 50000, -ENOLINK, 0, 0 },
                { NEAREST, "boottime", "rt_child", 1000, -ENOLINK, 0, 0 },
                { NEAREST, "rt_child", "boottime", 10, -ENOLINK, 0, 0 },
        };
        /* A chain d0 - d5, an island, and a diamond with equal paths via boottime and monotonic. */
        static const Snap net[] = {
                { "d0", 0, "d1", 100 }, { "d1", 0, "d2", 100 }, { "d2", 0, "d3", 100 },
                { "d3", 0, "d4", 100 }, { "d4", 0, "d5", 100 }, { "x", 0, "y", 7 },
                { "src", 0, "boottime", 1000 }, { "src", 0, "monotonic", 2000 },
                { "boottime", 1000, "dst", 5000 }, { "monotonic", 2000, "dst", 7000 },
                { "big_a", 0, "big_b", INT64_MAX - 10 }, { "t1", 0, "t2", 100, "t3", 1000 },
                { "p", 0, "q", 1000 }, { "p", 1000000, "q", 1001500 },   /* +500 ppm */
        };
        static const Case net_cases[] = {
                { NEAREST, "d0", "d4", 5, 0, 405, 4 },
                { NEAREST, "t2", "t3", 50, 0, 950, 1 },         /* one hop: all pairs are edges */
                { NEAREST, "d0", "d5", 5, -ENOLINK, 0, 0 },     /* Perfetto stops at 4 hops */
                { NEAREST, "d0", "x", 5, -ENOLINK, 0, 0 },
                { NEAREST, "d0", "nope", 5, -ENOENT, 0, 0 },
                { NEAREST, "x", "x", 123, 0, 123, 0 },
                { NEAREST, "src", "dst", 10, 0, 7010, 2 },      /* monotonic's id 3 < 6 */
                { NEAREST, "big_a", "big_b", 5, 0, INT64_MAX - 5, 1 },
                { NEAREST, "big_a", "big_b", 100, -ERANGE, 0, 0 },
                { NEAREST, "big_b", "big_a", INT64_MIN, -ERANGE, 0, 0 },
                { NEAREST, "p", "q", 500000, 0, 501000, 500 },
                /* DRIFT: what both ends allow, 501000 +-500 from p = 0 and 501500 +-500 from
                 * 1000000, so 501250 +-250 (the line's value), never looser than NEAREST */
                { DRIFT, "p", "q", 500000, 0, 501250, 250 },
                /* 901000 +-900 and 901500 +-100: the nearer end decides; the line's 901450 is in */
                { DRIFT, "p", "q", 900000, 0, 901500, 100 },
                { DRIFT, "q", "p", 501250, 0, 500000, ANY_UNC },
                { DRIFT, "p", "q", -1000, 0, 0, 1 },            /* outside: nearest */
                { DRIFT, "p", "q", 2000000, 0, 2001500, 1000 },
        };
        SnapshotGraph *g;
        int64_t v;

        run_table("equal timestamps", equal, N(equal), equal_cases, N(equal_cases));
        run_table("non-monotonic", back, N(back), back_cases, N(back_cases));
        g = build(net, N(net));
        check_cases("paths", g, net_cases, N(net_cases));
        is_int(snapshot_graph_convert(g, NEAREST, 0, snapshot_graph_count(g), 0, &v, NULL), -ENOENT,
               "index past the end is -ENOENT");
        is_int(snapshot_graph_convert(g, (SnapshotMode) 7, 0, 1, 0, &v, NULL), -EINVAL, "bad mode");
        snapshot_graph_free(g);
}

static void test_units(void) {
        static const DomainUnit ms = { .period_ns = 1e6 }, gpu = { .period_ns = 52.083 };
        static const Snap s[] = {
                { "frames_ms", 5000, "monotonic", 5000250000 },
                { "gpu0", 100000, "monotonic", 7000000 },
        };
        static const Case cases[] = {
                { NEAREST, "frames_ms", "monotonic", 5001, 0, 5001250000, 1000 },
                { NEAREST, "monotonic", "frames_ms", 5001250000, 0, 5001, 1000 },
                { NEAREST, "monotonic", "frames_ms", 5001250400, 0, 5001, 1001 + 400 },
                /* 100100 ticks = 5213508.3 ns, 5208 ns past the snapshot; +1 +1 for rounding */
                { NEAREST, "gpu0", "monotonic", 100100, 0, 7005208, 6 + 1 + 1 },
                { NEAREST, "frames_ms", "gpu0", 5001, 0, 95990214, ANY_UNC },
        };
        SnapshotGraph *g = NULL;
        size_t ms_index = 0, gpu_index = 0;
        int64_t v, unc;
        int r;

        r = snapshot_graph_new(&g);
        if (r >= 0)
                r = snapshot_graph_declare(g, "frames_ms", &ms);
        if (r >= 0)
                r = snapshot_graph_declare(g, "gpu0", &gpu);
        for (size_t i = 0; r >= 0 && i < N(s); i++)
                r = add2(g, s[i].a, s[i].ta, s[i].b, s[i].tb);
        is_int(add2(g, "x", 0, "frames_ms", INT64_MAX / 1000), -ERANGE,
               "a ms reading too large for ns is -ERANGE");
        is_int(snapshot_graph_find(g, "x", &(size_t) { 0 }), -ENOENT, "and forgets the new domain");
        is_int(snapshot_graph_declare(g, "gpu0", &gpu), -EEXIST, "declaring twice is -EEXIST");
        is_int(snapshot_graph_declare(g, "monotonic", &ms), -EEXIST, "declaring after use too");
        if (r >= 0)
                r = snapshot_graph_finalize(g);
        is_int(r, 0, "declared a ms and a 52.083 ns domain, added, finalized");
        check_cases("units", g, cases, N(cases));

        /* 4994250000 ns from the snapshot, plus the first hop and the 52.083 ns rounding. */
        (void) snapshot_graph_find(g, "frames_ms", &ms_index);
        (void) snapshot_graph_find(g, "gpu0", &gpu_index);
        r = snapshot_graph_convert(g, NEAREST, ms_index, gpu_index, 5001, &v, &unc);
        ok(r == 0 && unc >= 1000 + 4994250 + 1 && unc <= 1000 + 4994250 + 1 + 53,
           "ms -> ticks bound adds both hops and the tick rounding (%" PRId64 ")", unc);
        snapshot_graph_free(g);
}

static void test_errors(void) {
        static const DomainUnit bad = { .period_ns = 0 };
        SnapshotGraph *g = NULL;
        int64_t v;
        char name[16];
        int r;

        ok(snapshot_graph_free(NULL) == NULL, "free(NULL) is NULL");
        is_int(snapshot_graph_new(&g), 0, "new");
        is_int(snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1 } }, 1), -EINVAL, "n = 1");
        is_int(snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1 } }, 0), -EINVAL, "n = 0");
        is_int(snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1 }, { "b", 2 }, { "a", 3 } }, 3),
               -EINVAL, "a domain twice in a snapshot");
        is_int(snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1 }, { NULL, 2 } }, 2), -EINVAL,
               "a NULL domain");
        is_int(snapshot_graph_count(g), 0, "failed adds leave no domain behind");
        is_int(snapshot_graph_declare(g, "z", &bad), -EINVAL, "a unit of period 0");
        is_int(add2(g, "a", 1, "b", 2), 0, "add");
        is_int(snapshot_graph_convert(g, NEAREST, 0, 1, 1, &v, NULL), -EINVAL,
               "converting before finalize");

        for (r = 0; r >= 0 && snapshot_graph_count(g) < 256;) {
                snprintf(name, sizeof(name), "n%zu", snapshot_graph_count(g));
                r = snapshot_graph_declare(g, name, &UNIT_NS);
        }
        is_int(r, 0, "256 domains fit");
        is_int(snapshot_graph_declare(g, "one_more", &UNIT_NS), -ENOSPC, "the 257th is -ENOSPC");
        is_int(add2(g, "a", 5, "fresh", 2), -ENOSPC, "a snapshot with a 257th is -ENOSPC");
        is_int(snapshot_graph_count(g), 256, "and adds nothing");
        is_int(snapshot_graph_find(g, "fresh", &(size_t) { 0 }), -ENOENT, "unknown is -ENOENT");
        ok(snapshot_graph_name(g, 1) && strcmp(snapshot_graph_name(g, 1), "b") == 0,
           "name(1) is b");
        ok(!snapshot_graph_name(g, 256), "name past the end is NULL");

        is_int(snapshot_graph_finalize(g), 0, "finalize");
        is_int(add2(g, "a", 1, "b", 2), -EINVAL, "adding after finalize");
        is_int(snapshot_graph_convert(g, NEAREST, 0, 1, 5, &v, NULL), 0, "converting after it");
        is_int(v, 6, "a 5 -> b 6");
        is_int(snapshot_graph_convert(g, NEAREST, 0, 2, 5, &v, NULL), -ENOLINK,
               "a declared domain in no snapshot has no path");
        snapshot_graph_free(g);
}

/* A piecewise-affine clock of another: y = y0 + (x - x0) * (1e6 + ppm) / 1e6 on each segment. */
typedef struct Piece {
        int64_t x0, y0;
        int ppm;
} Piece;

static long double piece_eval(const Piece *p, size_t n, long double x, bool left) {
        size_t k = 0;

        while (k + 1 < n && (left ? p[k + 1].x0 < x : p[k + 1].x0 <= x))
                k++;
        return p[k].y0 + (x - p[k].x0) * (1000000.0L + p[k].ppm) / 1000000.0L;
}

static uint64_t rng_next(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Continuous pieces starting at breaks[], random rates within 500 ppm, a step at step_at. */
static void pieces_init(Piece *p, const int64_t *breaks, size_t n, int64_t y0, int64_t step_at,
                        uint64_t *seed) {
        for (size_t k = 0; k < n; k++) {
                p[k] = (Piece) { breaks[k], y0, (int) (rng_next(seed) % 1001) - 500 };
                if (k > 0)
                        p[k].y0 = llroundl(piece_eval(p, k, breaks[k], false)) +
                                  (breaks[k] == step_at ? 3000007 : 0);
        }
}

/* b(a) has rates within 500 ppm and one +3 ms step at a = 500 ms, read twice there; c(b) is
 * continuous. Breakpoints and snapshots sit on whole ms, so every snapshot reading is exact. */
static void test_truth_inside_bound(void) {
        static const int64_t a_breaks[] = { 0, 123000000, 347000000, 500000000, 611000000,
                                            802000000 };
        static const int64_t b_breaks[] = { 9900000000, 10201000000, 10450000000, 10777000000 };
        Piece ab[N(a_breaks)], bc[N(b_breaks)];
        SnapshotGraph *g = NULL;
        uint64_t seed = 0x9e3779b97f4a7c15u;
        int r = snapshot_graph_new(&g);

        pieces_init(ab, a_breaks, N(ab), 10000000000, 500000000, &seed);
        pieces_init(bc, b_breaks, N(bc), 3000000000, -1, &seed);
        for (int64_t t = 0; r >= 0 && t <= 1000000000; t += 5000000) {
                if (t == 500000000)     /* just before the step, then just after */
                        r = add2(g, "a", t, "b", llroundl(piece_eval(ab, N(ab), t, true)));
                if (r >= 0)
                        r = add2(g, "a", t, "b", llroundl(piece_eval(ab, N(ab), t, false)));
        }
        for (int64_t b = 9950000000; r >= 0 && b <= 11050000000; b += 5000000)
                r = add2(g, "b", b, "c", llroundl(piece_eval(bc, N(bc), b, false)));
        if (r >= 0)
                r = snapshot_graph_finalize(g);
        is_int(r, 0, "built the piecewise-affine truth");

        for (SnapshotMode mode = NEAREST; mode <= DRIFT; mode++) {
                size_t outside = 0, failed = 0;
                long double sum_err = 0, sum_bound = 0;
                uint64_t s = 42;

                for (int i = 0; i < 100000; i++) {
                        int64_t v = (int64_t) (rng_next(&s) % 1040000000) - 20000000;
                        int64_t got = 0, unc = 0;
                        long double truth = piece_eval(bc, N(bc), piece_eval(ab, N(ab), v, false),
                                                       false);

                        failed += snapshot_graph_convert(g, mode, 0, 2, v, &got, &unc) < 0;
                        outside += fabsl(got - truth) > unc + 1e-6L;
                        sum_err += fabsl(got - truth);
                        sum_bound += unc;
                }
                ok(failed == 0 && outside == 0, "%s: truth inside the bound for 100000 values "
                   "(%zu outside, %zu failed)", mode_name(mode), outside, failed);
                diag("%s: mean |error| %.1Lf ns, mean bound %.1Lf ns", mode_name(mode),
                     sum_err / 100000, sum_bound / 100000);
        }
        snapshot_graph_free(g);
}

/* NEAREST finds Perfetto's interval (the last snapshot at or before the value, else the first)
 * through its buckets as a plain scan does: readings in clusters, repeated, spread over 2^62,
 * and values before, between, on and after them. */
static void test_search(void) {
        static const int64_t spreads[] = { 1000, 7, INT64_C(1) << 40, INT64_C(1) << 62 };
        uint64_t seed = 0x9e3779b97f4a7c15;

        for (size_t t = 0; t < sizeof(spreads) / sizeof(spreads[0]); t++) {
                enum { N = 300 };
                int64_t a[N], b[N], v, out, unc;
                SnapshotGraph *g = NULL;
                size_t ia, ib, wrong = 0, failed = 0;
                int r = snapshot_graph_new(&g);

                a[0] = -(spreads[t] / 2);
                for (size_t i = 1; i < N; i++) {
                        uint64_t x = rng_next(&seed);
                        /* a quarter repeat the one before, some jump far, most step a little */
                        a[i] = a[i - 1] + (x % 4 == 0 ? 0 : x % 7 == 0 ? spreads[t] / 128 : (int64_t) (x % 997));
                }
                for (size_t i = 0; r >= 0 && i < N; i++) {
                        b[i] = (int64_t) (rng_next(&seed) % 1000000);
                        r = add2(g, "a", a[i], "b", b[i]);
                }
                if (r >= 0)
                        r = snapshot_graph_finalize(g);
                if (r >= 0)
                        r = snapshot_graph_find(g, "a", &ia) < 0 || snapshot_graph_find(g, "b", &ib) < 0 ? -ENOENT : 0;
                ok(r == 0, "search %zu: built (%d)", t, r);
                for (size_t j = 0; r >= 0 && j < 20000; j++) {
                        uint64_t x = rng_next(&seed);
                        size_t k = 0, i = x % N;

                        v = x % 3 == 0 ? a[i] : x % 3 == 1 ? a[i] + (int64_t) ((x >> 8) % 2000) - 1000 :
                                                             a[0] - 5 + (int64_t) ((x >> 8) % (uint64_t) (a[N - 1] - a[0] + 10));
                        while (k + 1 < N && a[k + 1] <= v)
                                k++;
                        if (snapshot_graph_convert(g, SNAPSHOT_MODE_NEAREST, ia, ib, v, &out, &unc) < 0)
                                failed++;
                        else if (out != b[k] + (v - a[k]))
                                wrong++;
                }
                ok(failed == 0 && wrong == 0, "search %zu: every value in Perfetto's interval (%zu wrong, %zu failed)",
                   t, wrong, failed);
                snapshot_graph_free(g);
        }
}

/* A reading's own uncertainty (a live conversion's bound, in timeconvd's export) is in every bound
 * through its snapshot: the same answers, bounds wider by the two readings' sum. */
static void test_reading_uncertainty(void) {
        SnapshotGraph *g = NULL, *h = NULL;
        int64_t v, u, v0, u0;
        size_t a, b, a0, b0;
        int r = snapshot_graph_new(&g);

        if (r >= 0)
                r = snapshot_graph_new(&h);
        for (int64_t i = 0; r >= 0 && i < 3; i++) {
                r = snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1000 * i, 100 }, { "b", 5000 + 1000 * i, 50 } }, 2);
                if (r >= 0)
                        r = add2(h, "a", 1000 * i, "b", 5000 + 1000 * i);
        }
        if (r >= 0)
                r = snapshot_graph_finalize(g);
        if (r >= 0)
                r = snapshot_graph_finalize(h);
        ok(r >= 0 && snapshot_graph_find(g, "a", &a) == 0 && snapshot_graph_find(g, "b", &b) == 0 &&
           snapshot_graph_find(h, "a", &a0) == 0 && snapshot_graph_find(h, "b", &b0) == 0,
           "two graphs, with and without uncertain readings");
        for (int mode = 0; r >= 0 && mode < 2; mode++) {
                SnapshotMode m = mode ? SNAPSHOT_MODE_DRIFT : SNAPSHOT_MODE_NEAREST;

                ok(snapshot_graph_convert(g, m, a, b, 1500, &v, &u) == 0 &&
                   snapshot_graph_convert(h, m, a0, b0, 1500, &v0, &u0) == 0 && v == v0 && u == u0 + 150,
                   "%s: the same answer, the bound wider by both readings'", mode_name(m));
        }
        snapshot_graph_free(g);
        snapshot_graph_free(h);
        g = NULL;
        ok(snapshot_graph_new(&g) == 0 &&
           snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1, -1 }, { "b", 2, 0 } }, 2) == -EINVAL &&
           snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1, 0 }, { "b", 2, INT64_MAX } }, 2) == -EINVAL &&
           snapshot_graph_add(g, (SnapshotClock[]) { { "a", 1, 7 }, { "b", 2, 0 } }, 2) == 0,
           "a negative or huge uncertainty: -EINVAL");
        snapshot_graph_free(g);

        /* Four hops of readings at the limit, far from the snapshots: the bound is their sum and
         * more, never a sum that wrapped (which 2^61 a reading allowed). */
        {
                const int64_t m = SNAPSHOT_UNCERTAINTY_MAX_NS, far = INT64_C(1) << 61;
                const char *names[] = { "a", "b", "c", "d", "e" };
                size_t from, to;

                g = NULL;
                r = snapshot_graph_new(&g);
                for (int k = 0; r >= 0 && k < 4; k++)
                        r = snapshot_graph_add(g, (SnapshotClock[]) { { names[k], 0, m }, { names[k + 1], 0, m } }, 2);
                is_int(snapshot_graph_add(g, (SnapshotClock[]) { { "a", 5, m + 1 }, { "b", 5, 0 } }, 2), -EINVAL,
                       "one ns beyond SNAPSHOT_UNCERTAINTY_MAX_NS: -EINVAL");
                if (r >= 0)
                        r = snapshot_graph_finalize(g);
                if (r >= 0)
                        r = snapshot_graph_find(g, "a", &from);
                if (r >= 0)
                        r = snapshot_graph_find(g, "e", &to);
                if (r >= 0)
                        r = snapshot_graph_convert(g, SNAPSHOT_MODE_NEAREST, from, to, far, &v, &u);
                ok(r == 0 && v == far && u >= 8 * m && u <= INT64_MAX,
                   "four hops of readings at the limit: bound %" PRId64 " >= 8 x 2^58 (%d)", u, r);
                snapshot_graph_free(g);
        }
}

/* What an export carries (the models' rates and their bounds, each reading's bound) makes DRIFT
 * as tight as the live answer was: b runs 30 ppm fast against a, snapshots 30 s apart, readings
 * good to 1 us, the rate known to 50 ppb. DRIFT holds the truth and is never looser than
 * NEAREST, with or without rates; with them, 15 s from either snapshot its bound is within 2x the
 * readings' (without, it grows by 1000 ppm of the distance to the nearer end: milliseconds). */
static void test_drift_rates(void) {
        const int64_t gap_ns = 30000000000, unc_ns = 1000, rate_ppb = 30000;
        SnapshotGraph *with = NULL, *without = NULL;
        size_t outside = 0, looser = 0, failed = 0;
        int64_t worst_with = 0, worst_without = 0;
        int r = snapshot_graph_new(&with);

        if (r >= 0)
                r = snapshot_graph_new(&without);
        for (int64_t i = 0; r >= 0 && i <= 10; i++) {
                int64_t a = 5000000000 + i * gap_ns, b = 77 + a + a / 1000000 * 30;     /* exact: a is whole ms */
                SnapshotClock c[] = {
                        { "a", a, 0, true, 0, 0 },
                        { "b", b, unc_ns, true, rate_ppb, 50 },
                };

                r = snapshot_graph_add(with, c, 2);
                c[0].has_rate = c[1].has_rate = false;
                if (r >= 0)
                        r = snapshot_graph_add(without, c, 2);
        }
        if (r >= 0)
                r = snapshot_graph_finalize(with);
        if (r >= 0)
                r = snapshot_graph_finalize(without);
        is_int(r, 0, "two graphs of 11 snapshots, with and without rates");

        for (int64_t v = 5000000000 - gap_ns / 2; r >= 0 && v <= 5000000000 + 11 * gap_ns; v += 7777777) {
                __int128 truth2 = 2 * ((__int128) 77 + v) + (__int128) v * 60 / 1000000;  /* twice b(v) */
                int64_t out[3] = { 0 }, bound[3] = { 0 };
                int rr = snapshot_graph_convert(with, DRIFT, 0, 1, v, &out[0], &bound[0]);

                rr |= snapshot_graph_convert(without, DRIFT, 0, 1, v, &out[1], &bound[1]);
                rr |= snapshot_graph_convert(with, NEAREST, 0, 1, v, &out[2], &bound[2]);
                failed += rr != 0;
                for (int k = 0; k < 3; k++)
                        outside += 2 * (__int128) out[k] - truth2 > 2 * (__int128) bound[k] + 2 ||
                                   truth2 - 2 * (__int128) out[k] > 2 * (__int128) bound[k] + 2;
                looser += bound[0] > bound[2] || bound[1] > bound[2];
                int64_t into = (v - 5000000000) % gap_ns;      /* ns into the gap */

                if (into > gap_ns / 2 - 8000000 && into < gap_ns / 2 + 8000000 && v > 5000000000 &&
                    v < 5000000000 + 10 * gap_ns) {
                        worst_with = bound[0] > worst_with ? bound[0] : worst_with;
                        worst_without = bound[1] > worst_without ? bound[1] : worst_without;
                }
        }
        ok(failed == 0 && outside == 0,
           "drift (with and without rates) and nearest hold the truth (%zu outside, %zu failed)", outside, failed);
        ok(looser == 0, "drift is never looser than nearest (%zu values were)", looser);
        ok(worst_with > 0 && worst_with <= 2 * unc_ns, "with rates, mid-gap bound %" PRId64 " ns <= 2 x %" PRId64,
           worst_with, unc_ns);
        ok(worst_without > 1000 * worst_with, "without rates it is %" PRId64 " ns (1000 ppm of 15 s)", worst_without);
        snapshot_graph_free(with);
        snapshot_graph_free(without);
}

/* A wrapping domain (x11: 32-bit ms) read as live reads it: readings unwrapped in file order
 * across the wrap, values unwrapped to the occurrence nearest the last reading, answers in the
 * wire form. */
static void test_wrap(void) {
        const int64_t wrap_ms = INT64_C(1) << 32, base_ns = 1000000000000;
        SnapshotGraph *g = NULL;
        size_t x, m, ok_values = 0, n_values = 0;
        int r = snapshot_graph_new(&g);

        if (r >= 0)
                r = snapshot_graph_declare(g, "x11", &UNIT_MS_X11);
        /* X time X (unwrapped) is monotonic base_ns + (X - 2^32 + 3500) ms; the wire form X mod 2^32
         * wraps between snapshots 3 and 4 */
        for (int64_t i = 0; r >= 0 && i < 6; i++)
                r = add2(g, "monotonic", base_ns + i * 1000000000, "x11", (wrap_ms - 3500 + i * 1000) % wrap_ms);
        if (r >= 0)
                r = snapshot_graph_finalize(g);
        is_int(r, 0, "an x11 series across its wrap loads");
        ok(snapshot_graph_find(g, "x11", &x) == 0 && snapshot_graph_find(g, "monotonic", &m) == 0, "both there");
        for (int mode = 0; r >= 0 && mode < 2; mode++)
                for (int64_t ms = wrap_ms - 3000; ms < wrap_ms + 3000; ms += 250) {
                        int64_t mono = base_ns + (ms - wrap_ms + 3500) * 1000000, out = -1, unc = -1, back = -1;
                        int64_t wire = ms % wrap_ms;
                        int rr = snapshot_graph_convert(g, (SnapshotMode) mode, x, m, wire, &out, &unc);

                        n_values++;
                        /* the reading truncates: the event is in [ms, ms + 1) */
                        if (rr == 0 && mono >= out - unc && mono + 999999 <= out + unc &&
                            snapshot_graph_convert(g, (SnapshotMode) mode, m, x, mono + 400000, &back, &unc) == 0 &&
                            back == wire)
                                ok_values++;
                        else if (n_values - ok_values < 3)
                                diag("%s x11 %" PRId64 ": %d %" PRId64 " +-%" PRId64 " (truth %" PRId64 "), back %"
                                     PRId64, mode_name((SnapshotMode) mode), wire, rr, out, unc, mono, back);
                }
        ok(ok_values == n_values, "x11 around its wrap converts to monotonic with the truth inside the bound "
           "and back to the wire form (%zu of %zu)", ok_values, n_values);
        snapshot_graph_free(g);
}

int main(void) {
        test_drift_rates();
        test_wrap();
        test_reading_uncertainty();
        test_search();
        test_perfetto_examples();
        test_own_tables();
        test_units();
        test_errors();
        test_truth_inside_bound();
        return done_testing();
}
