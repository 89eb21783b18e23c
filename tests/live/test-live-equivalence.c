/* SPDX-License-Identifier: MIT */

/* One engine, three paths: with every kind of domain present (the POSIX clocks, x11 and x11_us
 * of a private Xvfb, msc through X Present, gpu0 on lavapipe), for random values near now and
 * every ordered pair of domains, the daemon's answer (D-Bus), the shared table's and the offline
 * answer from that daemon's own export must agree within their bounds: their intervals overlap,
 * give or take one count of the target's unit (each path rounds to a whole count).
 * usage: test-live-equivalence TIMECONVD LAVAPIPE_ICD */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tap.h"
#include "timeconv.h"
#include "xvfb.h"

#define VALUES_PER_PAIR 40
#define MANY_PER_PAIR 3000      /* more than LIVE_CHECK_EVERY: a batch crosses its looks at the bus */
#define MANY_TRIES 20
#define MAX_DOMAINS 32
#define CALIBRATED_TIMEOUT_NS (INT64_C(60) * 1000000000)

typedef struct Dom {
        char name[64];
        unsigned id;
        double period_ns;
        int64_t now;            /* its value near the test's start, in its unit */
} Dom;

static const char *const wanted[] = { "monotonic", "boottime", "realtime", "monotonic_raw", "x11", "x11_us", "msc",
                                      "gpu0" };

static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/* The export's periods: the offline side's units, as the loader reads them. */
static double export_period(json_t *root, const char *name) {
        json_t *domains = json_object_get(root, "domains"), *d;
        size_t i;

        json_array_foreach(domains, i, d) {
                const char *n = json_string_value(json_object_get(d, "name"));
                if (n && strcmp(n, name) == 0)
                        return json_number_value(json_object_get(d, "period_ns"));
        }
        return 1.0;
}

/* The export's unit name of a domain; NULL when it has none. */
static const char *export_unit(json_t *root, const char *name) {
        json_t *domains = json_object_get(root, "domains"), *d;
        size_t i;

        json_array_foreach(domains, i, d) {
                const char *n = json_string_value(json_object_get(d, "name"));
                if (n && strcmp(n, name) == 0)
                        return json_string_value(json_object_get(d, "unit"));
        }
        return NULL;
}

/* Whether a ± ua and b ± ub (values in counts of period_ns, bounds in ns) overlap, give or take
 * one count each way. */
static bool agree(int64_t a, int64_t ua, int64_t b, int64_t ub, double period_ns) {
        /* The difference in integers first: realtime's values (~1.8e18) are 256 apart as doubles,
         * so converting each before subtracting made two answers 1 ns apart look 256 ns apart. */
        double diff_ns = (double) ((__int128) a - b) * period_ns;

        if (diff_ns < 0)
                diff_ns = -diff_ns;
        return diff_ns <= (double) ua + (double) ub + 2.0 * period_ns + 2.0;
}

/* convert_id() over values, in order: 0, or the first failure. */
static int by_id_loop(struct timeconv *tc, unsigned from, unsigned to, const int64_t *values, int64_t *out,
                      int64_t *out_unc) {
        for (size_t k = 0; k < MANY_PER_PAIR; k++) {
                int r = timeconv_convert_id(tc, from, to, values[k], &out[k], &out_unc[k]);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* convert_many() against a loop of convert_id() over the same values, through the table, bit for
 * bit (answers, bounds, the status): the batch runs the kept pair's hot form where the loop's
 * calls would, the record or the table for the rest (x11_us's unreduced values, targets that
 * truncate). Each try is bracketed by two loops that must agree with each other, so that a
 * calibration landing in the middle (a new record) makes a retry, not a difference. */
static void check_many_by_id(struct timeconv *tc, const Dom *doms, size_t n, uint64_t *rng) {
        static int64_t values[MANY_PER_PAIR], many[MANY_PER_PAIR], many_unc[MANY_PER_PAIR], again[MANY_PER_PAIR],
                again_unc[MANY_PER_PAIR], by_id[MANY_PER_PAIR], by_id_unc[MANY_PER_PAIR], in_place[MANY_PER_PAIR];
        size_t pairs = 0, stable = 0, differs = 0, in_place_differs = 0;

        timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                        int64_t span = (int64_t) (5e8 / doms[i].period_ns) + 1;
                        bool x11_us = strcmp(doms[i].name, "x11_us") == 0;

                        if (i == j)
                                continue;
                        pairs++;
                        for (size_t k = 0; k < MANY_PER_PAIR; k++) {
                                /* in the 0.5 s after its calibration: past by now, inside the segment */
                                values[k] = doms[i].now + (int64_t) (rng_next(rng) % (uint64_t) span);
                                /* unreduced: the hot form leaves these to the record */
                                if (x11_us && k % 7 == 3)
                                        values[k] += INT64_C(4294967296) * 1000;
                        }
                        for (int t = 0; t < MANY_TRIES; t++) {
                                int r_many, r_in_place, r_id, r_again;
                                size_t d = 0, dp = 0;

                                r_id = by_id_loop(tc, doms[i].id, doms[j].id, values, by_id, by_id_unc);
                                r_many = timeconv_convert_many(tc, doms[i].name, doms[j].name, values, MANY_PER_PAIR,
                                                               many, many_unc);
                                memcpy(in_place, values, sizeof(values));
                                r_in_place = timeconv_convert_many(tc, doms[i].name, doms[j].name, in_place,
                                                                   MANY_PER_PAIR, in_place, NULL);
                                r_again = by_id_loop(tc, doms[i].id, doms[j].id, values, again, again_unc);
                                if (r_id != r_again || (r_id >= 0 && (memcmp(by_id, again, sizeof(by_id)) != 0 ||
                                                                      memcmp(by_id_unc, again_unc, sizeof(by_id_unc)) != 0)))
                                        continue;       /* a new record meanwhile: try again */
                                stable++;
                                if (r_many < 0 || r_id < 0 || r_in_place < 0) {
                                        diag("%s -> %s: convert_many %d, convert_id %d, in place %d", doms[i].name,
                                             doms[j].name, r_many, r_id, r_in_place);
                                        differs++;
                                        break;
                                }
                                for (size_t k = 0; k < MANY_PER_PAIR; k++) {
                                        if ((many[k] != by_id[k] || many_unc[k] != by_id_unc[k]) && d++ < 3)
                                                diag("%s -> %s %" PRId64 ": many %" PRId64 " ± %" PRId64 ", by id %" PRId64
                                                     " ± %" PRId64, doms[i].name, doms[j].name, values[k], many[k],
                                                     many_unc[k], by_id[k], by_id_unc[k]);
                                        if (in_place[k] != by_id[k])
                                                dp++;
                                }
                                differs += d != 0;
                                in_place_differs += dp != 0;
                                break;
                        }
                }
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
        diag("%zu ordered pairs, %d values each", pairs, MANY_PER_PAIR);
        is_int((int) stable, (int) pairs, "a stable record met for every pair (two convert_id() loops alike)");
        is_int((int) differs, 0, "convert_many() answers as a loop of convert_id() does, bit for bit");
        is_int((int) in_place_differs, 0, "convert_many() in place and without bounds gives the same values");
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        char display_arg[32], *json = NULL;
        const char *args[] = { display_arg, "--gpu-software", "--cadence=0.2", NULL };
        struct timeconv *tc = NULL;
        struct timeconv_snapshots *snaps = NULL;
        struct timeconv_error error;
        json_t *root;
        Dom doms[MAX_DOMAINS];
        size_t n = 0;
        int pairs = 0, checked = 0, table_differs = 0, offline_differs = 0, failed = 0;
        uint64_t rng = 14;
        int64_t deadline;
        Xvfb x = {};

        if (argc != 3)
                bail_out("usage: %s TIMECONVD LAVAPIPE_ICD", argv[0]);
        is_int(xvfb_start(-1, &x), 0, "a private Xvfb");
        snprintf(display_arg, sizeof(display_arg), "--display=%s", x.name);
        setenv("VK_ICD_FILENAMES", argv[2], 1);
        setenv("LP_NUM_THREADS", "1", 1);
        is_int(harness_new(NULL, &h), 0, "a private bus");
        is_int(harness_start_daemon(h, argv[1], args, HARNESS_READY_TIMEOUT_MS), 0, "timeconvd with X and lavapipe");
        is_int(timeconv_open_address(h->bus_address, &tc), 0, "libtimeconv");

        /* Every wanted domain calibrated: its current value answers, by the table too. */
        deadline = clock_now_ns(CLOCK_MONOTONIC) + CALIBRATED_TIMEOUT_NS;
        for (size_t k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++) {
                Dom *d = &doms[n];
                int64_t v, u, back, ub;
                int r;

                snprintf(d->name, sizeof(d->name), "%s", wanted[k]);
                r = timeconv_domain_id(tc, d->name, &d->id);
                for (;;) {
                        struct timespec pause = { 0, 20000000 };

                        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
                        r = timeconv_now(tc, d->name, &d->now, &u);
                        timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
                        if (r >= 0)
                                r = timeconv_convert(tc, d->name, "monotonic", d->now, &v, &u);
                        if (r >= 0 || clock_now_ns(CLOCK_MONOTONIC) > deadline)
                                break;
                        timeconv_process(tc);
                        nanosleep(&pause, NULL);        /* its bursts take their time */
                }
                ok(r >= 0, "%s is calibrated and in the table", d->name);
                (void) back;
                (void) ub;
                if (r >= 0)
                        n++;
        }
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);

        /* x11_us takes an unreduced value (ms part >= 2^32, as mutter sends after 49.7 days of
         * uptime) and converts it like its reduced form, by both paths. */
        for (size_t i = 0; i < n; i++) {
                int64_t unreduced = doms[i].now + INT64_C(3) * 4294967296 * 1000;
                int paths[] = { TIMECONV_PATH_DBUS, TIMECONV_PATH_TABLE };

                if (strcmp(doms[i].name, "x11_us") != 0)
                        continue;
                for (size_t p = 0; p < 2; p++) {
                        int64_t in[2] = { unreduced, doms[i].now }, out[2] = { 0, 1 }, unc[2];

                        /* Both values in one call: a calibration between two calls may move the
                         * answer by a ns. */
                        timeconv_set_paths(tc, paths[p]);
                        ok(timeconv_convert_many(tc, "x11_us", "monotonic", in, 2, out, unc) == 0 && out[0] == out[1],
                           "%s: an unreduced x11_us converts like its reduced form", p ? "table" : "D-Bus");
                }
        }
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);

        /* Let a few more snapshots in, then the export the offline side converts from. */
        {
                struct timespec pause = { 1, 0 };
                nanosleep(&pause, NULL);
        }
        is_int(timeconv_export_snapshots(tc, &json), 0, "export");
        root = json ? json_loads(json, 0, NULL) : NULL;
        ok(root != NULL, "the export is JSON");
        error.message[0] = '\0';
        ok(timeconv_snapshots_load_buffer(json, json ? strlen(json) : 0, &snaps, &error) == 0,
           "the export loads back %s", error.message);
        for (size_t i = 0; i < n; i++)
                doms[i].period_ns = root ? export_period(root, doms[i].name) : 1.0;
        check_many_by_id(tc, doms, n, &rng);
        {
                struct timeconv_domain **list = NULL;
                size_t same = 0, listed = 0;

                /* One name per unit: ListDomains', the export's (which the loader took above). */
                if (timeconv_list_domains(tc, &list) >= 0)
                        for (size_t i = 0; i < n; i++)
                                for (size_t k = 0; list[k]; k++) {
                                        const char *unit = root ? export_unit(root, doms[i].name) : NULL;

                                        if (strcmp(list[k]->name, doms[i].name) != 0)
                                                continue;
                                        listed++;
                                        if (unit && strcmp(unit, list[k]->unit) == 0)
                                                same++;
                                        else
                                                diag("%s: ListDomains says %s, the export %s", doms[i].name,
                                                     list[k]->unit, unit ? unit : "nothing");
                                }
                ok(listed == n && same == n, "export and ListDomains name every unit alike (%zu of %zu)", same, n);
                timeconv_domains_free(list);
        }

        for (size_t i = 0; snaps && i < n; i++)
                for (size_t j = 0; j < n; j++) {
                        if (i == j)
                                continue;
                        pairs++;
                        for (int k = 0; k < VALUES_PER_PAIR; k++) {
                                /* within ±0.5 s of the start, in the source's unit */
                                int64_t span = (int64_t) (5e8 / doms[i].period_ns) + 1;
                                int64_t value = doms[i].now + (int64_t) (rng_next(&rng) % (uint64_t) (2 * span)) - span;
                                int64_t vd, ud, vt, ut, vo, uo;
                                int rd, rt, ro;

                                timeconv_set_paths(tc, TIMECONV_PATH_DBUS);
                                rd = timeconv_convert(tc, doms[i].name, doms[j].name, value, &vd, &ud);
                                timeconv_set_paths(tc, TIMECONV_PATH_TABLE);
                                rt = timeconv_convert(tc, doms[i].name, doms[j].name, value, &vt, &ut);
                                ro = timeconv_snapshots_convert(snaps, TIMECONV_MODE_DRIFT, doms[i].name, doms[j].name,
                                                                value, &vo, &uo);
                                if (rd < 0 || rt < 0 || ro < 0) {
                                        if (failed++ < 5)
                                                diag("%s -> %s %" PRId64 ": daemon %d, table %d, offline %d", doms[i].name,
                                                     doms[j].name, value, rd, rt, ro);
                                        continue;
                                }
                                checked++;
                                if (!agree(vd, ud, vt, ut, doms[j].period_ns) && table_differs++ < 5)
                                        diag("%s -> %s %" PRId64 ": daemon %" PRId64 " ± %" PRId64 ", table %" PRId64
                                             " ± %" PRId64, doms[i].name, doms[j].name, value, vd, ud, vt, ut);
                                if (!agree(vd, ud, vo, uo, doms[j].period_ns) && offline_differs++ < 5)
                                        diag("%s -> %s %" PRId64 ": daemon %" PRId64 " ± %" PRId64 ", offline %" PRId64
                                             " ± %" PRId64, doms[i].name, doms[j].name, value, vd, ud, vo, uo);
                        }
                }
        timeconv_set_paths(tc, TIMECONV_PATH_ANY);
        diag("%zu domains, %d ordered pairs, %d values converted by all three paths", n, pairs, checked);
        is_int(failed, 0, "every path answers every value");
        is_int(table_differs, 0, "the table's answers agree with the daemon's within their bounds");
        is_int(offline_differs, 0, "the offline answers from the export agree with the daemon's within their bounds");

        timeconv_snapshots_free(snaps);
        json_decref(root);
        free(json);
        timeconv_close(tc);
        h = harness_free(h);
        xvfb_stop(&x);
        return done_testing();
}
