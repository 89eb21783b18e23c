/* SPDX-License-Identifier: MIT */

/* What a run keeps of the state file it found, with fake clocks: the temporary files of a save
 * that was killed are removed at start, and nothing else is; a run too short to learn (none, or
 * a few bursts) leaves what the file knew; a domain absent from this run (an X server, a GPU not
 * there now) keeps its remembered rate; a domain learned better this run is replaced. */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "fake.h"
#include "state.h"
#include "tap.h"

static const Log test_log = { .max_level = LOG_WARNING };

/* A core with one fake domain per name, each calibrated with `bursts` bursts a second apart. */
static Core *core_with(const char *const *names, size_t n, int bursts) {
        Core *c = NULL;

        if (core_new(&test_log, &c) < 0)
                abort();
        for (size_t i = 0; i < n; i++) {
                FakeConfig fc = { .offset_ns = 777, .rate_ppm = 12 + (double) i, .deviation_min_ns = 200,
                                  .deviation_max_ns = 2000, .r_start_ns = 1000000000, .interval_ns = 500,
                                  .seed = 5 + (unsigned) i };
                DomainInfo info = { .unit = UNIT_NS };
                size_t index;

                snprintf(info.name, sizeof(info.name), "%s", names[i]);
                if (core_add_domain(c, &domain_fake_ops, &info, &fc) < 0 || graph_find(&c->graph, names[i], &index) < 0)
                        abort();
                for (int b = 0; b < bursts; b++) {
                        CoreBurst burst;

                        if (core_calibrate(c, index, &burst) < 0)
                                abort();
                        fake_advance(c->domains[index]->domain, INT64_C(1000000000));
                }
        }
        return c;
}

static const StateDomain *find(const State *s, const char *name) {
        for (size_t i = 0; i < s->n_domains; i++)
                if (strcmp(s->domains[i].name, name) == 0)
                        return &s->domains[i];
        return NULL;
}

static bool same_estimate(const StateDomain *a, const StateDomain *b) {
        return a && b && a->rate_ppb == b->rate_ppb && a->rate_uncertainty_ppb == b->rate_uncertainty_ppb &&
               a->span_ns == b->span_ns;
}

/* A run: restore from dir, then store (as the daemon does at start and when it stops). */
static void run(Core *c) {
        char *dir = NULL;

        state_restore(c, &test_log, &dir);
        state_store(c, dir, &test_log);
        free(dir);
        core_free(c);
}

static bool exists(const char *dir, const char *name) {
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return access(path, F_OK) == 0;
}

static void touch(const char *dir, const char *name) {
        char path[512];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
                (void) write(fd, "{\"version\": 1, \"boot", 20);
                close(fd);
        }
}

static void test_stale_temps(const char *dir) {
        static const char *const names[] = { "f" };

        touch(dir, ".state.json.Ab3xYz");
        touch(dir, ".state.json.000000");
        touch(dir, ".state.json.toolong1");
        touch(dir, "notes.txt");
        run(core_with(names, 1, 0));
        ok(!exists(dir, ".state.json.Ab3xYz") && !exists(dir, ".state.json.000000"),
           "a start removes the temporary files of a save that was killed");
        ok(exists(dir, ".state.json.toolong1") && exists(dir, "notes.txt"), "and nothing else");
}

static void test_keep(const char *dir) {
        static const char *const both[] = { "f", "g" }, *const only_f[] = { "f" };
        State *learned = calloc(1, sizeof(State)), *now = calloc(1, sizeof(State));
        StateError error;
        int r;

        if (!learned || !now)
                abort();

        /* A long run learns f and g. */
        run(core_with(both, 2, 30));
        ok(state_load(dir, learned, &error) == 0 && find(learned, "f") && find(learned, "g"),
           "a 30 s run remembers f and g");

        /* A run stopped at once: nothing calibrated. */
        run(core_with(both, 2, 0));
        r = state_load(dir, now, &error);
        ok(r == 0 && same_estimate(find(now, "f"), find(learned, "f")) &&
           same_estimate(find(now, "g"), find(learned, "g")), "a run too short to calibrate keeps what the "
           "file knew (%zu domains in the file)", r == 0 ? now->n_domains : 0);

        /* A run of two bursts: an estimate, less than the file knew. */
        run(core_with(both, 2, 2));
        ok(state_load(dir, now, &error) == 0 && same_estimate(find(now, "f"), find(learned, "f")) &&
           same_estimate(find(now, "g"), find(learned, "g")), "a run of 2 bursts keeps the file's better "
           "estimates");

        /* g is absent now (its X server, its GPU): f is learned again, g keeps its rate. */
        run(core_with(only_f, 1, 60));
        ok(state_load(dir, now, &error) == 0 && find(now, "f") &&
           find(now, "f")->rate_uncertainty_ppb <= find(learned, "f")->rate_uncertainty_ppb,
           "a long run without g saves f as it learned it");
        ok(same_estimate(find(now, "g"), find(learned, "g")), "and g, absent now, keeps its remembered rate");
        free(learned);
        free(now);
}

/* A file from another boot says less than its bound: the reboot's margin goes in before it is
 * compared with what this run learned, so a run that learned better keeps its own. */
static void test_merge_other_boot(void) {
        State *known = calloc(1, sizeof(State)), *now = calloc(1, sizeof(State));
        StateDomain d = { .name = "monotonic", .source = "posix", .unit = { .period_ns = 1 } };

        if (!known || !now) {
                ok(false, "memory");
                goto finish;
        }
        snprintf(known->boot_id, sizeof(known->boot_id), "an-earlier-boot");
        snprintf(now->boot_id, sizeof(now->boot_id), "this-boot");
        d.rate_uncertainty_ppb = 60000;
        known->domains[known->n_domains++] = d;
        d.rate_uncertainty_ppb = 100000;
        now->domains[now->n_domains++] = d;

        state_merge(known, now);
        ok(now->n_domains == 1 && now->domains[0].rate_uncertainty_ppb == 100000,
           "another boot's 60 ppm (210 ppm with the reboot's margin) does not replace this run's 100 ppm "
           "(kept %" PRId64 " ppb)", now->domains[0].rate_uncertainty_ppb);

        /* The same boot: the file's tighter bound stays. */
        snprintf(known->boot_id, sizeof(known->boot_id), "this-boot");
        now->domains[0].rate_uncertainty_ppb = 100000;
        state_merge(known, now);
        ok(now->domains[0].rate_uncertainty_ppb == 60000, "this boot's 60 ppm replaces a looser 100 ppm (%" PRId64 ")",
           now->domains[0].rate_uncertainty_ppb);
finish:
        free(known);
        free(now);
}

int main(void) {
        char dir[] = "/tmp/test-state-keep-XXXXXX";

        if (!mkdtemp(dir)) {
                ok(false, "a temporary directory");
                return done_testing();
        }
        setenv("STATE_DIRECTORY", dir, 1);
        test_stale_temps(dir);
        test_keep(dir);
        test_merge_other_boot();

        /* Clean up what the runs left. */
        {
                static const char *const left[] = { "state.json", ".state.json.toolong1", "notes.txt" };
                char path[512];

                for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
                        snprintf(path, sizeof(path), "%s/%s", dir, left[i]);
                        (void) unlink(path);
                }
                ok(rmdir(dir) == 0, "the directory holds nothing else");
        }
        return done_testing();
}
