/* SPDX-License-Identifier: MIT */

/* The state file with the real timeconvd on a private bus ($STATE_DIRECTORY is the harness's
 * <dir>/state): a cold start's first rate bound; a run that calibrates and stops on SIGTERM
 * leaves a state.json with the learned rates; the next start answers its first ListDomains
 * with a much tighter rate bound, still true (a conversion checked against the kernel), and
 * calibrates on from there; a corrupt file or a symlink is ignored with a warning and the
 * daemon works. usage: test-state-daemon TIMECONVD */

#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"

#define CALIBRATE_TIMEOUT_NS (INT64_C(20) * 1000000000)

/* rate_uncertainty_ppb of domain name in ListDomains; UINT64_MAX when absent. */
static int rate_uncertainty_ppb(sd_bus *bus, const char *name, uint64_t *ret) {
        uint64_t ppb;
        int r;

        r = clock_domain_property(bus, name, "rate_uncertainty_ppb", 't', &ppb);
        if (r < 0 && r != -ENOENT)
                return r;
        *ret = r < 0 ? UINT64_MAX : ppb;
        return 0;
}

/* Asks until monotonic's rate bound is under limit_ppb (each call waits for the daemon's answer,
 * the bursts come at its cadence); the last bound seen. */
static uint64_t wait_rate_below(sd_bus *bus, uint64_t limit_ppb) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + CALIBRATE_TIMEOUT_NS;
        uint64_t ppb = UINT64_MAX;

        while (clock_now_ns(CLOCK_MONOTONIC) < deadline_ns)
                if (rate_uncertainty_ppb(bus, "monotonic", &ppb) < 0 || ppb < limit_ppb)
                        break;
        return ppb;
}

static char *state_path(const Harness *h) {
        char *p;

        if (asprintf(&p, "%s/state/state.json", h->dir) < 0)
                abort();
        return p;
}

/* The saved monotonic entry's rate_uncertainty_ppb; -1 when the entry is not there, -2 when
 * the file is not a state file at all. */
static int64_t saved_uncertainty_ppb(const Harness *h) {
        _cleanup_free_ char *path = state_path(h);
        json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, NULL), *domains, *d;
        int64_t ppb = -1;
        size_t i;

        if (!root || !json_is_array(json_object_get(root, "domains"))) {
                json_decref(root);
                return -2;
        }
        domains = json_object_get(root, "domains");
        if (json_integer_value(json_object_get(root, "version")) == 1)
                json_array_foreach(domains, i, d)
                        if (strcmp(json_string_value(json_object_get(d, "name")) ?: "", "monotonic") == 0)
                                ppb = json_integer_value(json_object_get(d, "rate_uncertainty_ppb"));
        json_decref(root);
        return ppb;
}

static int start(Harness *h, const char *daemon, const char *cadence, sd_bus **ret_bus) {
        int r;

        r = harness_start_timeconvd(h, daemon, (const char *const[]) { cadence, NULL });
        if (r < 0)
                return r;
        return harness_connect(h, ret_bus);
}

static bool stop(Harness *h) {
        int status = -1;

        return harness_stop_daemon(h, HARNESS_STOP_TIMEOUT_MS, &status, NULL) == 0 && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0;
}

static bool log_has(const Harness *h, const char *text) {
        _cleanup_free_ char *log = NULL;

        return harness_daemon_log(h, &log) >= 0 && strstr(log, text);
}

/* The +- of "domain 'NAME' starts from its remembered rate R ppm +- B ppm" in the log; -1 if none. */
static double remembered_bound_ppm(const Harness *h, const char *name) {
        _cleanup_free_ char *log = NULL, *key = NULL;
        const char *p;
        double rate, bound;

        if (harness_daemon_log(h, &log) < 0 ||
            asprintf(&key, "domain '%s' starts from its remembered rate", name) < 0 || !(p = strstr(log, key)))
                return -1;
        if (sscanf(p + strlen(key), " %lf ppm +- %lf ppm", &rate, &bound) != 2)
                return -1;
        return bound;
}

static void test_restart(const char *daemon) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *path = NULL;
        uint64_t cold_ppb = 0, warm_ppb = 0, learned_ppb;
        double prior_ppm;
        int64_t saved_ppb;
        sd_bus *bus = NULL;
        Bracket b;
        int64_t value = 0;
        uint64_t uncertainty_ns = 0;
        int r;

        if (harness_new(NULL, &h) < 0)
                return (void) ok(false, "private bus");
        path = state_path(h);

        /* Cold: the first burst is two samples microseconds apart, the rate is the prior's. */
        r = start(h, daemon, "--cadence=1", &bus);
        if (r >= 0)
                r = rate_uncertainty_ppb(bus, "monotonic", &cold_ppb);
        ok(r >= 0, "cold start: first rate bound %" PRIu64 " ppb", cold_ppb);
        bus = sd_bus_flush_close_unref(bus);
        ok(stop(h), "SIGTERM: exit status 0");
        unlink(path);

        /* A run that calibrates for a while. */
        ok(start(h, daemon, "--cadence=0.05", &bus) >= 0, "a run with bursts every 50 ms");
        learned_ppb = wait_rate_below(bus, 1000);
        ok(learned_ppb < 1000, "learns monotonic's rate to %" PRIu64 " ppb", learned_ppb);
        bus = sd_bus_flush_close_unref(bus);
        ok(stop(h), "SIGTERM: exit status 0");
        ok(access(path, F_OK) == 0, "state.json is there after the exit");
        saved_ppb = saved_uncertainty_ppb(h);
        ok(saved_ppb >= 0 && saved_ppb < 10000, "with monotonic's learned rate (bound %" PRId64 " ppb)", saved_ppb);

        /* Warm: the first answer is already much tighter, and true. */
        r = start(h, daemon, "--cadence=1", &bus);
        if (r >= 0)
                r = rate_uncertainty_ppb(bus, "monotonic", &warm_ppb);
        ok(r >= 0, "warm start: first rate bound %" PRIu64 " ppb", warm_ppb);
        /* What the daemon starts from, in its log: the bounds ListDomains shows have been
         * narrowed by however many bursts ran before the call, which the machine's load decides
         * (a cold start begins at the estimator's +- 1000 ppm). */
        diag("first bounds read: cold %" PRIu64 " ppb, warm %" PRIu64 " ppb", cold_ppb, warm_ppb);
        prior_ppm = remembered_bound_ppm(h, "monotonic");
        ok(prior_ppm > 0 && prior_ppm * 10 <= 1000, "it starts at least 10 times tighter than cold "
           "(+- %.3f ppm against +- 1000 ppm)", prior_ppm);
        bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &b);
        r = clock_convert(bus, "monotonic_raw", "monotonic", b.from_ns, NULL, &value, &uncertainty_ns);
        ok(r >= 0 && bracket_holds(value, uncertainty_ns, b.to_lo_ns, b.to_hi_ns),
           "a conversion right away holds the truth (+- %" PRIu64 " ns)", uncertainty_ns);
        ok(log_has(h, "starts from its remembered rate"), "the log says it started from the remembered rate");
        ok(wait_rate_below(bus, 1000) < 1000, "and the next bursts take over");
        bus = sd_bus_flush_close_unref(bus);
        ok(stop(h), "SIGTERM: exit status 0");
}

/* A file that must be ignored: the daemon warns, starts cold and works, and its exit replaces
 * the file with a good one. */
static void test_bad_file(const char *daemon, const char *what, const char *content, bool symlink_to,
                          const char *code) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *path = NULL, *warning = NULL, *decoy = NULL;
        uint64_t ppb = 0;
        sd_bus *bus = NULL;
        FILE *f;
        int r;

        if (harness_new(NULL, &h) < 0)
                return (void) ok(false, "private bus");
        path = state_path(h);
        if (symlink_to) {
                /* The link points at a decoy of ours: neither read nor written through it. */
                if (asprintf(&decoy, "%s/%s", h->dir, content) < 0 || !(f = fopen(decoy, "w")))
                        abort();
                fputs("{}", f);
                fclose(f);
                (void) symlink(decoy, path);
        }
        else if ((f = fopen(path, "w"))) {
                fputs(content, f);
                fclose(f);
        }
        if (asprintf(&warning, "state.json ignored (%s", code) < 0)
                abort();

        ok(start(h, daemon, "--cadence=1", &bus) >= 0, "%s: the daemon starts", what);
        ok(log_has(h, "<4>") && log_has(h, warning), "%s: a warning names it (%s)", what, code);
        r = rate_uncertainty_ppb(bus, "monotonic", &ppb);
        /* Not "cold": how far the first bursts narrowed the rate by now depends on the machine's
         * load. The warning says the file was ignored; the bound must be the daemon's own. */
        ok(r >= 0 && ppb > 0 && ppb != UINT64_MAX, "%s: it works, with a rate bound of its own (%" PRIu64 " ppb)",
           what, ppb);
        bus = sd_bus_flush_close_unref(bus);
        ok(stop(h), "%s: SIGTERM, exit status 0", what);
        ok(saved_uncertainty_ppb(h) >= -1, "%s: replaced by a good file at exit", what);
        if (decoy) {
                _cleanup_free_ char *text = NULL;

                f = fopen(decoy, "r");
                text = calloc(1, 16);
                if (f) {
                        (void) !fread(text, 1, 15, f);
                        fclose(f);
                }
                ok(strcmp(text, "{}") == 0, "%s: the file it pointed at is untouched", what);
        }
}

/* A state directory of some 5,000 bytes that cannot be made (a file stands where a directory
 * should): the warning at exit is longer than a log line, and what must survive the cut is why
 * (the errno text at its end), not the whole path. */
#define LONG_PATH_BYTES 5000

static void test_long_path(const char *daemon) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_free_ char *dir = NULL, *blocker = NULL, *env = NULL, *log = NULL, *head = NULL, *tail = NULL;
        const char *line, *end;
        size_t length;
        FILE *f;
        int r;

        if (harness_new(NULL, &h) < 0)
                return (void) ok(false, "private bus");
        if (asprintf(&blocker, "%s/blocker", h->dir) < 0 || !(f = fopen(blocker, "w")))
                abort();
        fclose(f);
        dir = malloc(LONG_PATH_BYTES + 256);
        if (!dir)
                abort();
        length = (size_t) sprintf(dir, "%s", blocker);
        while (length < LONG_PATH_BYTES)
                length += (size_t) sprintf(dir + length, "/%0200d", 0);
        if (asprintf(&env, "STATE_DIRECTORY=%s", dir) < 0 ||
            asprintf(&head, "state: cannot save %s/", blocker) < 0 ||
            asprintf(&tail, "/state.json: %s\n", strerror(ENOTDIR)) < 0)
                abort();

        /* env(1) sets it over the harness's own STATE_DIRECTORY and execs the daemon (same pid). */
        r = harness_start_daemon(h, "env", (const char *const[]) { env, daemon, "--no-x11", "--no-gpu",
                                                                   "--cadence=1", NULL },
                                 HARNESS_READY_TIMEOUT_MS);
        ok(r >= 0, "the daemon starts with a state directory of %zu bytes", length);
        ok(stop(h), "SIGTERM: exit status 0");
        r = harness_daemon_log(h, &log);
        line = r >= 0 ? strstr(log, "state: cannot save") : NULL;
        end = line ? strchrnul(line, '\n') : NULL;
        ok(line, "it warns that it cannot save");
        if (!line)
                return;
        diag("%.*s", (int) (end - line), line);
        ok(end - line < 1024, "in one line of at most 1 KiB (%zu bytes)", (size_t) (end - line));
        ok(strncmp(line, head, strlen(head)) == 0, "  which starts with what failed, and where");
        ok(*end == '\n' && (size_t) (end + 1 - line) >= strlen(tail) &&
           strncmp(end + 1 - strlen(tail), tail, strlen(tail)) == 0,
           "  and ends with why: \"%s\"", strerror(ENOTDIR));
        ok(memmem(line, (size_t) (end - line), "...", 3), "  the path's middle elided with \"...\"");
}

int main(int argc, char *argv[]) {
        tap_args(argc, argv, 1, "TIMECONVD");

        test_restart(argv[1]);
        test_long_path(argv[1]);
        test_bad_file(argv[1], "a truncated file", "{ \"version\": 1, \"boot_id\": \"x\", \"doma", false, "syntax");
        test_bad_file(argv[1], "a hostile rate",
                      "{ \"version\": 1, \"boot_id\": \"x\", \"domains\": [ { \"name\": \"monotonic\", "
                      "\"source\": \"posix\", \"device\": \"\", \"unit\": { \"period_ns\": 1, \"wrap_bits\": 0, "
                      "\"truncates\": false, \"encoding\": \"plain\" }, \"rate_ppb\": 1e308, "
                      "\"rate_uncertainty_ppb\": 0, \"span_ns\": 1, \"verdict\": \"\" } ] }",
                      false, "type");
        test_bad_file(argv[1], "a symlink", "decoy.json", true, "symlink");
        return done_testing();
}
