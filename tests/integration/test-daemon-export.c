/* SPDX-License-Identifier: MIT */

/* ExportSnapshots: JSON that jansson parses, in the snapshot file format of DESIGN.md
 * ({"snapshots": [{"clocks": [{"domain", "ts"}...]}...]}), naming only listed domains, with
 * readings that agree with the kernel's clocks as the test reads them.
 * usage: test-daemon-export TIMECONVD */

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"

/* Two readings the daemon took at one instant, against two the test takes now: the offset
 * between monotonic and boottime (or realtime) moves only on suspend or a clock set. */
#define OFFSET_TOLERANCE_NS INT64_C(1000000)

static bool clock_ts(json_t *clocks, const char *domain, int64_t *ret) {
        size_t i;
        json_t *c;

        json_array_foreach(clocks, i, c)
                if (strcmp(json_string_value(json_object_get(c, "domain")) ?: "", domain) == 0) {
                        *ret = json_integer_value(json_object_get(c, "ts"));
                        return true;
                }
        return false;
}

/* The offset other - monotonic in every snapshot holding both, against the test's own. */
static void check_offsets(json_t *snapshots, const char *other, clockid_t other_id) {
        Bracket b;
        size_t i, compared = 0, off = 0;
        json_t *s;
        int64_t now_lo, now_hi;

        bracket_read(CLOCK_MONOTONIC, other_id, &b);
        now_lo = b.to_lo_ns - b.from_ns;
        now_hi = b.to_hi_ns - b.from_ns;
        json_array_foreach(snapshots, i, s) {
                int64_t mono, ts;
                json_t *clocks = json_object_get(s, "clocks");

                if (!clock_ts(clocks, "monotonic", &mono) || !clock_ts(clocks, other, &ts))
                        continue;
                compared++;
                if (!bracket_holds(ts - mono, OFFSET_TOLERANCE_NS, now_lo, now_hi) && off++ < 3)
                        diag("snapshot %zu: %s - monotonic = %" PRIi64 ", the test reads [%" PRIi64 ", %" PRIi64 "]",
                             i, other, ts - mono, now_lo, now_hi);
        }
        ok(compared > 0 && off == 0, "%s - monotonic agrees with the kernel within 1 ms in all %zu snapshots",
           other, compared);
}

/* realtime's readings carry the kernel's maxerror and esterror against UTC exactly when the
 * kernel says realtime is synchronised (read here before and after: the state may change
 * between, and then the test says nothing); a bound no smaller than the estimate. */
static void check_utc(json_t *snapshots) {
        struct timex before = {}, after = {};
        size_t i, with = 0, without = 0, bad = 0;
        json_t *s;
        bool synced;

        json_array_foreach(snapshots, i, s) {
                json_t *clocks = json_object_get(s, "clocks"), *c;
                size_t k;

                json_array_foreach(clocks, k, c) {
                        json_t *max = json_object_get(c, "utc_maxerror_ns");
                        json_t *est = json_object_get(c, "utc_esterror_ns");
                        const char *d = json_string_value(json_object_get(c, "domain"));

                        if (!d || strcmp(d, "realtime") != 0) {
                                bad += max || est;
                                continue;
                        }
                        if (max) {
                                with++;
                                bad += !json_is_integer(max) || json_integer_value(max) < 0 || !json_is_integer(est) ||
                                       json_integer_value(est) < 0;
                        } else
                                without++;
                }
        }
        ok(bad == 0, "utc_maxerror_ns and utc_esterror_ns only on realtime, integers >= 0");
        if (adjtimex(&before) < 0 || adjtimex(&after) < 0 ||
            (before.status & STA_UNSYNC) != (after.status & STA_UNSYNC)) {
                skip("the kernel's synchronisation state is not steady");
                return;
        }
        synced = !(before.status & STA_UNSYNC);
        ok(synced ? with > 0 : with == 0,
           "realtime carries the kernel's maxerror %s (%zu with, %zu without; kernel: %s)",
           synced ? "while synchronised" : "only while synchronised", with, without,
           synced ? "synchronised" : "STA_UNSYNC");
}

static void check_export(const char *text, char **domains, int64_t started_ns) {
        json_error_t error;
        json_t *root = json_loads(text, 0, &error), *snapshots, *s, *list;
        size_t i, bad_clocks = 0, small = 0, n_clocks = 0, future = 0;
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);

        ok(json_is_object(root), "the export is a JSON object (%s)", root ? "parsed" : error.text);
        snapshots = json_object_get(root, "snapshots");
        ok(json_is_array(snapshots) && json_array_size(snapshots) > 0, "it has a non-empty \"snapshots\" array (%zu)",
           json_array_size(snapshots));

        json_array_foreach(snapshots, i, s) {
                json_t *clocks = json_object_get(s, "clocks"), *c;
                size_t k;
                int64_t mono;

                if (!json_is_array(clocks) || json_array_size(clocks) < 2)
                        small++;
                json_array_foreach(clocks, k, c) {
                        const char *d = json_string_value(json_object_get(c, "domain"));

                        n_clocks++;
                        if ((!d || !clock_strv_contains(domains, d) || !json_is_integer(json_object_get(c, "ts"))) &&
                            bad_clocks++ < 3)
                                diag("snapshot %zu clock %zu: domain %s, ts of JSON type %d", i, k, d ? d : "missing",
                                     json_object_get(c, "ts") ? (int) json_typeof(json_object_get(c, "ts")) : -1);
                }
                if (clock_ts(clocks, "monotonic", &mono) && (mono < started_ns || mono > now_ns))
                        future++;
        }
        ok(small == 0, "every snapshot holds two clocks or more");
        ok(n_clocks > 0 && bad_clocks == 0, "every clock (%zu) has a listed \"domain\" and an integer \"ts\"", n_clocks);
        ok(future == 0, "every monotonic reading falls between the daemon's start and now");
        check_offsets(snapshots, "boottime", CLOCK_BOOTTIME);
        check_offsets(snapshots, "realtime", CLOCK_REALTIME);
        check_utc(snapshots);

        /* The per-file description of the domains. */
        list = json_object_get(root, "domains");
        if (list) {
                size_t bad = 0;

                json_array_foreach(list, i, s)
                        bad += !json_is_string(json_object_get(s, "name")) || !json_is_string(json_object_get(s, "unit"));
                ok(json_is_array(list) && bad == 0, "each entry of \"domains\" has a name and a unit");
                bad = 0;
                json_array_foreach(list, i, s) {
                        json_t *w = json_object_get(s, "wrap_bits");
                        const char *unit = json_string_value(json_object_get(s, "unit")) ?: "";

                        bad += !json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > 64 ||
                               (strcmp(unit, "ns") == 0 && json_integer_value(w) != 64) ||
                               strcmp(unit, "ticks") == 0 || strcmp(unit, "frames") == 0;
                }
                ok(bad == 0, "wrap_bits 64 for no wrap, as ListDomains (never 0); units singular (tick, frame)");
        } else
                /* Optional in the format, but the daemon's export always writes it. */
                ok(false, "the daemon's export has a \"domains\" list");
        json_decref(root);
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(clock_strv_freep) char **domains = NULL;
        _cleanup_free_ char *first = NULL, *second = NULL;
        int r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_tap_start(argv[1], NULL, &h, &bus);
        if (r >= 0)
                r = clock_list_domains(bus, &domains);
        if (r >= 0)
                r = clock_export_snapshots(bus, &first);
        is_int(r, 0, "ExportSnapshots answers");
        if (r < 0)
                return done_testing();

        check_export(first, domains, h->daemon_started_ns);

        /* The ring only grows (or stays full) while the daemon runs. */
        r = clock_convert(bus, "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC), NULL,
                          &(int64_t) { 0 }, &(uint64_t) { 0 });
        if (r >= 0)
                r = clock_export_snapshots(bus, &second);
        {
                json_t *a = json_loads(first, 0, NULL), *b = r >= 0 ? json_loads(second, 0, NULL) : NULL;
                size_t n_a = json_array_size(json_object_get(a, "snapshots"));
                size_t n_b = json_array_size(json_object_get(b, "snapshots"));

                ok(b && n_b >= n_a, "a second export parses and holds as many snapshots (%zu, was %zu)", n_b, n_a);
                json_decref(a);
                json_decref(b);
        }
        return done_testing();
}
