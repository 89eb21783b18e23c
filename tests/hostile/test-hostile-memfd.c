/* SPDX-License-Identifier: MIT */

/* ConvertManyMemfd against the real timeconvd on a private bus: a large batch in a
 * memfd of the caller's, which the daemon maps and answers into.
 *   - the answers are whole, in order, and agree with Convert; an empty batch is answered;
 *   - every memfd the daemon must not map is refused with InvalidArgs saying why: not a
 *     memfd, not sealed against shrinking and growing, too small, write-sealed, read-only; and a
 *     count beyond the limit;
 *   - a caller that punches holes in its memfd and rewrites its values while the daemon works,
 *     then leaves, costs the daemon nothing: it is still there and answers;
 *   - at most BUS_CLIENT_JOBS_MAX calls of one client are in flight: a third is QuotaExceeded;
 *   - fairness: a Convert sent after two calls at the limit is answered before the second ends;
 *   - at most BUS_JOBS_MEMFD_MAX calls of all clients together are in flight: beyond,
 *     QuotaExceeded, and the places come back as the calls end.
 *   - one client's values converted are a budget: past its burst and refill, QuotaExceeded;
 *   - the daemon raises its soft limit of open files to its hard one.
 * Every property is one that load cannot flip: answers, error names, order (the order ones
 * repeated, since a descheduled bus daemon may deliver a call late). */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bus-api-jobs.h"
#include "bus-clients.h"
#include "bus-errors.h"
#include "harness.h"
#include "tap.h"

#define MAX_VALUES BUS_API_CONVERT_MANY_MEMFD_MAX
#define ROUNDS 5
#define CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)

/* A memfd for n values, filled with values (NULL: left zero) and sealed with seals; its mapping in
 * *ret_map (may be NULL). -errno on failure. */
static int memfd_make(const int64_t *values, size_t n, size_t size, int seals, uint8_t **ret_map) {
        uint8_t *map;
        int fd;

        fd = memfd_create("test-many", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0)
                goto fail;
        map = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                goto fail;
        if (values)
                memcpy(map, values, n * sizeof(int64_t));
        /* A write seal is refused while a writable mapping exists. */
        if (seals & F_SEAL_WRITE) {
                (void) munmap(map, size ? size : 1);
                map = NULL;
        }
        if (seals && fcntl(fd, F_ADD_SEALS, seals) < 0) {
                if (map)
                        (void) munmap(map, size ? size : 1);
                goto fail;
        }
        if (ret_map)
                *ret_map = map;
        else if (map)
                (void) munmap(map, size ? size : 1);
        return fd;
fail:
        close(fd);
        return -errno;
}

static int call_memfd(sd_bus *bus, int fd, uint64_t count, sd_bus_error *e) {
        return sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ConvertManyMemfd", e, NULL,
                                  "ssht", "monotonic", "boottime", fd, count);
}

static int call_memfd_async(sd_bus *bus, int fd, uint64_t count, sd_bus_message_handler_t cb, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                           "ConvertManyMemfd");
        if (r >= 0)
                r = sd_bus_message_append(m, "ssht", "monotonic", "boottime", fd, count);
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, m, cb, userdata, CALL_TIMEOUT_USEC);
        return r;
}

static int convert_one(sd_bus *bus, int64_t value, int64_t *ret_value, uint64_t *ret_unc) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert", NULL, &reply,
                               "ssx", "monotonic", "boottime", value);
        return r < 0 ? r : sd_bus_message_read(reply, "xt", ret_value, ret_unc);
}

/* n values in, n answers out, each within its bound of Convert's (boottime - monotonic changes
 * only with a suspend). */
static void test_answers(sd_bus *bus, const int64_t *values, size_t n) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        size_t size = BUS_API_MEMFD_BYTES(n), bad = 0;
        uint8_t *map = NULL;
        int64_t one = 0;
        uint64_t one_unc = 0;
        int fd, r;

        fd = memfd_make(values, n, size, F_SEAL_SHRINK | F_SEAL_GROW, &map);
        r = fd < 0 ? fd : call_memfd(bus, fd, n, &e);
        if (r >= 0)
                r = convert_one(bus, values[0], &one, &one_unc);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int64_t out, gap;
                uint64_t unc;

                memcpy(&out, map + (n + i) * sizeof(int64_t), sizeof(out));
                memcpy(&unc, map + (2 * n + i) * sizeof(int64_t), sizeof(unc));
                gap = (out - values[i]) - (one - values[0]);
                if ((uint64_t) (gap < 0 ? -gap : gap) > unc + one_unc)
                        bad++;
        }
        ok(r >= 0 && bad == 0, "ConvertManyMemfd of %zu values: each answer within its bound of Convert's "
           "(%zu outside; %s)", n, bad, e.message ? e.message : "ok");
        if (map)
                (void) munmap(map, size);
        if (fd >= 0)
                close(fd);
}

/* One bad call: InvalidArgs, with want in its message. Takes fd. */
static void refused(sd_bus *bus, int fd, uint64_t count, const char *want, const char *what) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = fd < 0 ? fd : call_memfd(bus, fd, count, &e);
        ok(r == -EINVAL && sd_bus_error_has_name(&e, BUS_ERROR_INVALID_ARGUMENT) && e.message &&
           strstr(e.message, want), "%s: InvalidArgs (%s)", what, e.message ? e.message : strerror(-r));
        if (fd >= 0)
                close(fd);
}

static void test_refused(sd_bus *bus, const int64_t *values) {
        const int sealed = F_SEAL_SHRINK | F_SEAL_GROW;
        size_t size = BUS_API_MEMFD_BYTES(1000);
        int pipefd[2], fd, ro = -EBADF;
        char path[64];

        refused(bus, memfd_make(values, 1000, size, 0, NULL), 1000, "not sealed", "a memfd without seals");
        refused(bus, memfd_make(values, 1000, size, F_SEAL_SHRINK, NULL), 1000, "not sealed",
                "a memfd that may still grow");
        refused(bus, memfd_make(values, 1000, size - 1, sealed, NULL), 1000, "need", "a memfd a byte too small");
        refused(bus, memfd_make(values, 1000, size, sealed | F_SEAL_WRITE, NULL), 1000, "cannot map",
                "a write-sealed memfd");
        fd = memfd_make(values, 1000, size, sealed, NULL);
        if (fd >= 0) {
                (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                ro = open(path, O_RDONLY | O_CLOEXEC);
                close(fd);
        }
        refused(bus, ro < 0 ? -errno : ro, 1000, "cannot map", "a memfd opened read-only");
        if (pipe2(pipefd, O_CLOEXEC) >= 0) {
                close(pipefd[0]);
                refused(bus, pipefd[1], 1, "not a memfd", "a pipe");
        } else
                ok(false, "a pipe: %s", strerror(errno));
        refused(bus, memfd_make(NULL, 0, 4096, sealed, NULL), (uint64_t) MAX_VALUES + 1, "at most",
                "one value beyond the limit");
        refused(bus, memfd_make(NULL, 0, 4096, sealed, NULL), UINT64_MAX, "at most", "a count of 2^64 - 1");
}

/* The message of the latest QuotaExceeded on_reply() saw. */
static char quota_message[512];

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int *result = userdata;

        *result = !e ? 1 : sd_bus_error_has_name(e, BUS_ERROR_QUOTA_EXCEEDED) ? 2 : 3;
        if (*result == 2)
                (void) snprintf(quota_message, sizeof(quota_message), "%s", e->message ? e->message : "");
        return 0;
}

/* A call at the limit, then holes punched in the memfd and its values rewritten while the
 * daemon works, then the client gone: the daemon is still there and answers another. */
static void test_vandal(Harness *h, sd_bus *victim) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *hostile = NULL;
        size_t size = BUS_API_MEMFD_BYTES((size_t) MAX_VALUES);
        uint8_t *map = NULL;
        int64_t v;
        uint64_t u;
        int fd = -EBADF, result = 0, r;

        r = harness_connect(h, &hostile);
        if (r >= 0)
                r = fd = memfd_make(NULL, 0, size, F_SEAL_SHRINK | F_SEAL_GROW, &map);
        if (r >= 0)
                r = call_memfd_async(hostile, fd, MAX_VALUES, on_reply, &result);
        if (r >= 0)
                r = sd_bus_flush(hostile);
        /* The daemon has the call once the victim's Convert, sent after it, is answered. */
        if (r >= 0)
                r = convert_one(victim, 0, &v, &u);
        for (int k = 0; r >= 0 && k < 3; k++) {
                (void) fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t) size);
                for (size_t i = 0; i < size; i += 4096)
                        map[i] = (uint8_t) (0x80 + k);
        }
        ok(r >= 0, "a client sends %d values in a memfd, then punches holes in it and rewrites it", MAX_VALUES);
        hostile = sd_bus_flush_close_unref(hostile);
        if (map)
                (void) munmap(map, size);
        if (fd >= 0)
                close(fd);
        ok(convert_one(victim, 0, &v, &u) >= 0, "after it left, another client's Convert is answered");
        ok(harness_daemon_alive(h), "the daemon is still running");
}

/* Three calls at the limit on one connection: the third finds two in flight. */
static int quota_round(sd_bus *client, int fd) {
        int result[3] = {};
        int r = 0;

        for (int i = 0; r >= 0 && i < 3; i++)
                r = call_memfd_async(client, fd, MAX_VALUES, on_reply, &result[i]);
        while (r >= 0 && (!result[0] || !result[1] || !result[2])) {
                r = sd_bus_process(client, NULL);
                if (r == 0)
                        r = sd_bus_wait(client, 60 * USEC_PER_SEC);
        }
        if (r < 0)
                return r;
        diag("results: %d %d %d (1 answered, 2 QuotaExceeded)", result[0], result[1], result[2]);
        if (result[0] != 1 || result[1] != 1 || (result[2] != 1 && result[2] != 2))
                return -EIO;
        return result[2] == 2;
}

/* Two calls at the limit, then a Convert, on one connection. 1: the Convert was answered before
 * the second call ended, 0: after it. */
static int fair_round(sd_bus *client, int fd) {
        int many[2] = {}, one = 0;
        unsigned order = 0, one_at = 0, second_at = 0;
        int r = 0;

        for (int i = 0; r >= 0 && i < 2; i++)
                r = call_memfd_async(client, fd, MAX_VALUES, on_reply, &many[i]);
        if (r >= 0) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                r = sd_bus_message_new_method_call(client, &m, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE,
                                                   "Convert");
                if (r >= 0)
                        r = sd_bus_message_append(m, "ssx", "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC));
                if (r >= 0)
                        r = sd_bus_call_async(client, NULL, m, on_reply, &one, CALL_TIMEOUT_USEC);
        }
        while (r >= 0 && (!many[0] || !many[1] || !one)) {
                bool had_one = one, had_second = many[1];

                r = sd_bus_process(client, NULL);
                if (r == 0)
                        r = sd_bus_wait(client, 60 * USEC_PER_SEC);
                if (!had_one && one)
                        one_at = ++order;
                if (!had_second && many[1])
                        second_at = ++order;
        }
        if (r < 0)
                return r;
        if (many[0] != 1 || many[1] != 1 || one != 1)
                return -EIO;
        return one_at < second_at;
}

/* BUS_JOBS_MEMFD_MAX clients each send two calls at the limit at once: twice the daemon's
 * global cap. 1: some were QuotaExceeded (and the rest answered), 0: all answered (the daemon
 * finished jobs as fast as the calls came). */
#define CAP_CLIENTS BUS_JOBS_MEMFD_MAX
static int cap_round(sd_bus **clients, int fd) {
        int result[CAP_CLIENTS][2] = {};
        unsigned answered = 0, refused = 0;
        int r = 0;

        for (int i = 0; r >= 0 && i < CAP_CLIENTS; i++)
                for (int k = 0; r >= 0 && k < 2; k++)
                        r = call_memfd_async(clients[i], fd, MAX_VALUES, on_reply, &result[i][k]);
        for (int i = 0; r >= 0 && i < CAP_CLIENTS; i++)
                r = sd_bus_flush(clients[i]);
        for (int i = 0; r >= 0 && i < CAP_CLIENTS; i++)
                while (r >= 0 && (!result[i][0] || !result[i][1])) {
                        r = sd_bus_process(clients[i], NULL);
                        if (r == 0)
                                r = sd_bus_wait(clients[i], 60 * USEC_PER_SEC);
                }
        if (r < 0)
                return r;
        for (int i = 0; i < CAP_CLIENTS; i++)
                for (int k = 0; k < 2; k++) {
                        answered += result[i][k] == 1;
                        refused += result[i][k] == 2;
                }
        diag("%u answered, %u QuotaExceeded of %d calls", answered, refused, 2 * CAP_CLIENTS);
        if (answered + refused != 2 * CAP_CLIENTS || answered < BUS_JOBS_MEMFD_MAX)
                return -EIO;
        return refused > 0;
}

/* Many clients within their own limit of calls in flight still cannot hold more than
 * BUS_JOBS_MEMFD_MAX memfds in the daemon at once. */
static void test_global_cap(Harness *h, sd_bus *victim) {
        sd_bus *clients[CAP_CLIENTS] = {};
        size_t size = BUS_API_MEMFD_BYTES((size_t) MAX_VALUES);
        unsigned capped = 0, rounds = 0;
        int64_t v;
        uint64_t u;
        int fd, r = 0;

        for (int i = 0; r >= 0 && i < CAP_CLIENTS; i++)
                r = harness_connect(h, &clients[i]);
        fd = r < 0 ? r : memfd_make(NULL, 0, size, F_SEAL_SHRINK | F_SEAL_GROW, NULL);
        r = fd < 0 ? fd : 0;
        for (; r >= 0 && rounds < ROUNDS && !capped; rounds++) {
                r = cap_round(clients, fd);
                capped += r > 0;
        }
        ok(r >= 0, "%u rounds of %d clients sending two calls of %d values each: at least %d answered, "
           "the rest QuotaExceeded", rounds, CAP_CLIENTS, MAX_VALUES, BUS_JOBS_MEMFD_MAX);
        ok(capped > 0, "more than %d calls in flight over all clients are QuotaExceeded (in %u of %u rounds)",
           BUS_JOBS_MEMFD_MAX, capped, rounds);
        /* Every job that ended gave its place back. */
        for (int k = 0; r >= 0 && k < 2; k++) {
                int result = 0;

                r = call_memfd_async(victim, fd, MAX_VALUES, on_reply, &result);
                while (r >= 0 && !result) {
                        r = sd_bus_process(victim, NULL);
                        if (r == 0)
                                r = sd_bus_wait(victim, 60 * USEC_PER_SEC);
                }
                if (r >= 0 && result != 1)
                        r = -EIO;
        }
        ok(r >= 0 && convert_one(victim, 0, &v, &u) >= 0, "then another client's calls are answered");
        for (int i = 0; i < CAP_CLIENTS; i++)
                sd_bus_flush_close_unref(clients[i]);
        if (fd >= 0)
                close(fd);
}

/* The daemon's own limits are not the caller's fault: with no address space left for the
 * mapping (its RLIMIT_AS lowered to what it uses now, plus less than a call at the limit needs),
 * QuotaExceeded, and once the limit is back the same call is answered. */
static uint64_t vm_size_bytes(pid_t pid) {
        char path[64], line[256];
        unsigned long long kib = 0;
        FILE *f;

        (void) snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmSize: %llu kB", &kib) == 1)
                        break;
        fclose(f);
        return (uint64_t) kib << 10;
}

static void test_daemon_out_of_maps(Harness *h, sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        size_t size = BUS_API_MEMFD_BYTES((size_t) MAX_VALUES);
        struct rlimit old, low;
        uint64_t vm;
        pid_t pid = 0;
        int fd, r;

        r = harness_name_pid(bus, BUS_API_SERVICE, &pid);
        vm = r < 0 ? 0 : vm_size_bytes(pid);
        fd = memfd_make(NULL, 0, size, F_SEAL_SHRINK | F_SEAL_GROW, NULL);
        if (r < 0 || vm == 0 || fd < 0 || prlimit(pid, RLIMIT_AS, NULL, &old) < 0) {
                ok(false, "the daemon's address space: %s", strerror(r < 0 ? -r : errno));
                if (fd >= 0)
                        close(fd);
                return;
        }
        /* Half of what the mapping needs: whatever the daemon mallocs meanwhile still fits. Should
         * it free more than that first, the call is answered: again, with a new limit. */
        for (int k = 0; k < ROUNDS; k++) {
                sd_bus_error_free(&e);
                low = (struct rlimit) { vm_size_bytes(pid) + size / 2, old.rlim_max };
                r = prlimit(pid, RLIMIT_AS, &low, NULL) < 0 ? -errno : call_memfd(bus, fd, MAX_VALUES, &e);
                (void) prlimit(pid, RLIMIT_AS, &old, NULL);
                if (r < 0)
                        break;
        }
        ok(r == -EDQUOT && sd_bus_error_has_name(&e, BUS_ERROR_QUOTA_EXCEEDED),
           "no address space left in the daemon for the mapping: QuotaExceeded, not the caller's fault (%s)",
           e.message ? e.message : strerror(-r));
        sd_bus_error_free(&e);
        r = call_memfd(bus, fd, MAX_VALUES, &e);
        ok(r >= 0, "with its limit back, the same call is answered (%s)", e.message ? e.message : "ok");
        ok(harness_daemon_alive(h), "the daemon is still running");
        close(fd);
}

/* One client's calls at the limit, one after another: after its burst of values and what came
 * back meanwhile, QuotaExceeded saying so; the daemon spent what the budget allows on it. */
#define BUDGET_CALLS_MAX 1024
static void test_values_budget(Harness *h) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *client = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        size_t size = BUS_API_MEMFD_BYTES((size_t) MAX_VALUES);
        int64_t start_ns, took_ns, refill_ns;
        unsigned calls = 0;
        int fd = -EBADF, r;

        r = harness_connect(h, &client);
        if (r >= 0)
                r = fd = memfd_make(NULL, 0, size, F_SEAL_SHRINK | F_SEAL_GROW, NULL);
        start_ns = clock_now_ns(CLOCK_MONOTONIC);
        for (; r >= 0 && calls < BUDGET_CALLS_MAX; calls++)
                r = call_memfd(client, fd, MAX_VALUES, &e);
        took_ns = clock_now_ns(CLOCK_MONOTONIC) - start_ns;
        diag("%u calls of %d values answered in %" PRIi64 " ms, then: %s", calls > 0 ? calls - 1 : 0, MAX_VALUES,
             took_ns / 1000000, e.message ? e.message : strerror(r < 0 ? -r : 0));
        /* The time in which the budget would refill all the calls past the burst: only a daemon
         * slower than that (a machine loaded beyond reason) answers them all. */
        refill_ns = (int64_t) (((uint64_t) BUDGET_CALLS_MAX * MAX_VALUES - BUS_CLIENT_VALUES_BURST) * NSEC_PER_SEC /
                               BUS_CLIENT_VALUES_PER_S);
        if (r >= 0 && took_ns >= refill_ns)
                skip("the daemon converted slower than the budget refills: no QuotaExceeded to see");
        else
                ok(r == -EDQUOT && sd_bus_error_has_name(&e, BUS_ERROR_QUOTA_EXCEEDED) && e.message &&
                   strstr(e.message, "a second for a client") && calls - 1 >= BUS_CLIENT_VALUES_BURST / MAX_VALUES,
                   "a client calling at the limit without pause is QuotaExceeded past its %u M values at once "
                   "and %u M a second (after %u calls)", BUS_CLIENT_VALUES_BURST >> 20,
                   BUS_CLIENT_VALUES_PER_S >> 20, calls > 0 ? calls - 1 : 0);
        if (fd >= 0)
                close(fd);
}

static void test_rounds(Harness *h) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *client = NULL;
        size_t size = BUS_API_MEMFD_BYTES((size_t) MAX_VALUES);
        unsigned quota = 0, ahead = 0, rounds;
        int fd, r;

        r = harness_connect(h, &client);
        fd = r < 0 ? r : memfd_make(NULL, 0, size, F_SEAL_SHRINK | F_SEAL_GROW, NULL);
        r = fd < 0 ? fd : 0;
        for (rounds = 0; r >= 0 && rounds < ROUNDS && !quota; rounds++) {
                r = quota_round(client, fd);
                quota += r > 0;
        }
        ok(r >= 0, "%u rounds of three calls of %d values on one connection: the first two answered", rounds,
           MAX_VALUES);
        ok(quota > 0, "a third call while two are in flight is QuotaExceeded (in %u of %u rounds)", quota, rounds);
        ok(quota == 0 || strstr(quota_message, "ConvertManyMemfd refused"), "its message names the method (%s)",
           quota_message);
        for (rounds = 0; r >= 0 && rounds < ROUNDS && !ahead; rounds++) {
                r = fair_round(client, fd);
                ahead += r > 0;
        }
        ok(r >= 0, "%u rounds of two calls of %d values, then a Convert: all answered", rounds, MAX_VALUES);
        ok(ahead > 0, "the Convert is answered before the second call ends (in %u of %u rounds)", ahead, rounds);
        if (fd >= 0)
                close(fd);
}

/* The daemon's soft limit of open files is its hard one (both inherited, the soft one lowered). */
static void test_nofile(sd_bus *bus, rlim_t hard) {
        struct rlimit rl = {};
        pid_t pid = 0;
        int r;

        r = harness_name_pid(bus, BUS_API_SERVICE, &pid);
        if (r >= 0 && prlimit(pid, RLIMIT_NOFILE, NULL, &rl) < 0)
                r = -errno;
        ok(r >= 0 && rl.rlim_cur == hard && rl.rlim_max == hard,
           "the daemon, started with a soft limit of 256 open files, raised it to its hard limit %llu (%llu)",
           (unsigned long long) hard, (unsigned long long) rl.rlim_cur);
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ int64_t *values = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        struct rlimit nofile;
        int fd, r;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_new(NULL, &h);
        if (r < 0)
                bail_out("a private bus: %s", strerror(-r));
        /* The daemon starts with a soft limit of open files below the hard one, as systemd
         * starts it, and raises it. */
        if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
                bail_out("getrlimit: %s", strerror(errno));
        if (nofile.rlim_max > 256) {
                struct rlimit low = { 256, nofile.rlim_max };

                if (setrlimit(RLIMIT_NOFILE, &low) < 0)
                        bail_out("setrlimit: %s", strerror(errno));
        }
        r = harness_start_timeconvd(h, argv[1], NULL);
        (void) setrlimit(RLIMIT_NOFILE, &nofile);
        if (r < 0)
                bail_out("timeconvd: %s", strerror(-r));
        r = harness_connect(h, &bus);
        if (r < 0)
                bail_out("the bus: %s", strerror(-r));

        values = malloc(MAX_VALUES * sizeof(int64_t));
        if (!values)
                bail_out("out of memory");
        for (size_t i = 0; i < MAX_VALUES; i++)
                values[i] = clock_now_ns(CLOCK_MONOTONIC) - (int64_t) i;

        test_nofile(bus, nofile.rlim_max);
        test_answers(bus, values, 1);
        test_answers(bus, values, 10000);
        test_answers(bus, values, MAX_VALUES);
        fd = memfd_make(NULL, 0, 0, F_SEAL_SHRINK | F_SEAL_GROW, NULL);
        r = fd < 0 ? fd : call_memfd(bus, fd, 0, &e);
        ok(r >= 0, "ConvertManyMemfd of no values in an empty memfd is answered (%s)", e.message ?: "ok");
        if (fd >= 0)
                close(fd);
        test_refused(bus, values);
        test_vandal(h, bus);
        test_daemon_out_of_maps(h, bus);
        test_rounds(h);
        test_global_cap(h, bus);
        test_values_budget(h);

        return done_testing();
}
