/* SPDX-License-Identifier: MIT */

/* A GPU lost and back under the real timeconvd: lavapipe behind the real Vulkan loader and the
 * test layer VK_LAYER_TIMECONV_fault (vkfault-layer.c), which loses the device while a file of
 * ours exists and has the next device count RESET_TICKS ahead. lavapipe's device time is
 * CLOCK_MONOTONIC in ns: the truth is known. The file appears: gpu0 turns unavailable while
 * monotonic still converts; it goes: gpu0 comes back as a restart of RESET_TICKS, converts within
 * its bound again, and a value from before the loss converts with the model of its time. gpu0's
 * stable name (gpu-..., a view of gpu0) is announced with it. While it is lost, a reconnection
 * held in vkCreateInstance (the layer's hold file) holds nobody: the daemon creates instances off
 * its event loop (a driver can block there for seconds), and answers meanwhile.
 * usage: test-daemon-gpu-loss TIMECONVD LAVAPIPE_ICD_JSON LAYER_DIR */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "harness.h"
#include "tap.h"

#define LAYER_NAME "VK_LAYER_TIMECONV_fault"
#define GPU "gpu0"
#define SETTLE_TIMEOUT_NS (INT64_C(30) * 1000000000)
#define SETTLED_CALLS 200               /* consecutive round trips with a bound <= 1 us */
#define MIN_CALLS 300                   /* round trips checked against the truth, at least */
#define TARGET_BOUND_NS 1000
#define LOSS_WAIT_MS 20000
#define RECOVER_WAIT_MS 60000           /* the source retries after 1 s, doubling per failure */
#define MONOTONIC_CALLS 100
#define RESET_TICKS 2500000000         /* lavapipe ticks are ns: the new device runs 2.5 s ahead */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define RESET_SLACK_NS 1000000          /* how far the announced step may be from it */
#define OLD_BOUND_SLACK_NS 1000
#define EVENTS_MAX 64
#define HELD_CALLS 20
#define HELD_CALL_MAX_NS (INT64_C(2) * 1000000000)      /* a loaded machine's worst, not a held loop's */

/* One Discontinuity for gpu0. */
typedef struct LossEvent {
        int64_t monotonic_ns, step_ns;
        int64_t received_ns;            /* our CLOCK_MONOTONIC when we read it */
        char kind[16];                  /* "" when the signal has no kind (the older contract) */
} LossEvent;

typedef struct Loss {
        Harness *harness;
        sd_bus *bus;
        sd_bus_slot *discontinuity_slot, *domains_slot;
        char trigger_path[PATH_MAX], reset_path[PATH_MAX], hold_path[PATH_MAX], held_path[PATH_MAX];
        unsigned n_domains_changed;
        LossEvent events[EVENTS_MAX];
        unsigned n_events;
        unsigned mark_domains_changed, mark_events;     /* the counts at loss_mark() */
        char view[64];                  /* gpu0's stable name, a view of it ("": none) */
        unsigned view_restarts;         /* Discontinuity(view, ..., "restart") seen */
} Loss;

static Loss *loss_free(Loss *t) {
        if (!t)
                return NULL;
        sd_bus_slot_unref(t->discontinuity_slot);
        sd_bus_slot_unref(t->domains_slot);
        sd_bus_flush_close_unref(t->bus);
        harness_free(t->harness);
        free(t);
        return NULL;
}

static void loss_freep(Loss **t) {
        loss_free(*t);
}

static int on_domains_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ((Loss *) userdata)->n_domains_changed++;
        return 0;
}

/* (s domain, x monotonic_ns, x step_ns) and, from the extended contract on, (s kind). */
static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Loss *t = userdata;
        const char *domain, *kind = "";
        int64_t monotonic_ns, step_ns;
        LossEvent *e;
        char type;

        if (sd_bus_message_read(m, "sxx", &domain, &monotonic_ns, &step_ns) < 0)
                return 0;
        if (sd_bus_message_peek_type(m, &type, NULL) > 0 && type == SD_BUS_TYPE_STRING &&
            sd_bus_message_read(m, "s", &kind) < 0)
                kind = "(unreadable)";
        if (t->view[0] && strcmp(domain, t->view) == 0 && strcmp(kind, "restart") == 0)
                t->view_restarts++;
        if (strcmp(domain, GPU) != 0)
                return 0;
        if (t->n_events == EVENTS_MAX)
                return 0;
        e = &t->events[t->n_events++];
        *e = (LossEvent) { .monotonic_ns = monotonic_ns, .step_ns = step_ns,
                           .received_ns = clock_now_ns(CLOCK_MONOTONIC) };
        snprintf(e->kind, sizeof(e->kind), "%s", kind);
        return 0;
}

static int write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        if (!f)
                return -errno;
        fputs(text, f);         /* a failed write shows in fclose(), which flushes */
        return fclose(f) == 0 ? 0 : -EIO;
}

/* A private bus, timeconvd on lavapipe with the fault layer, our subscriptions. */
static int loss_start(const char *daemon, const char *icd, const char *layer_dir, Loss **ret) {
        _cleanup_(loss_freep) Loss *t = NULL;
        /* lavapipe is a CPU device, offered only with --gpu-software. */
        const char *const args[] = { "--no-x11", "--gpu-software", "--cadence=0.1", "--idle-cadence=0.1", NULL };
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        r = harness_new(NULL, &t->harness);
        if (r < 0)
                return r;
        /* In the harness's directory, removed with it. */
        if (snprintf(t->trigger_path, PATH_MAX, "%s/gpu-lost", t->harness->dir) >= PATH_MAX ||
            snprintf(t->reset_path, PATH_MAX, "%s/gpu-reset", t->harness->dir) >= PATH_MAX ||
            snprintf(t->hold_path, PATH_MAX, "%s/gpu-hold", t->harness->dir) >= PATH_MAX ||
            snprintf(t->held_path, PATH_MAX, "%s/gpu-hold.held", t->harness->dir) >= PATH_MAX)
                return -ENAMETOOLONG;
        /* The daemon inherits these; the test itself never opens Vulkan. */
        if (setenv("VK_ICD_FILENAMES", icd, 1) < 0 || setenv("VK_LAYER_PATH", layer_dir, 1) < 0 ||
            setenv("VK_INSTANCE_LAYERS", LAYER_NAME, 1) < 0 ||
            setenv("TIMECONV_VKFAULT_FILE", t->trigger_path, 1) < 0 ||
            setenv("TIMECONV_VKFAULT_RESET_FILE", t->reset_path, 1) < 0 ||
            setenv("TIMECONV_VKFAULT_HOLD_FILE", t->hold_path, 1) < 0)
                return -errno;
        r = harness_start_daemon(t->harness, daemon, args, HARNESS_READY_TIMEOUT_MS);
        if (r >= 0)
                r = harness_connect(t->harness, &t->bus);
        if (r >= 0)
                r = sd_bus_match_signal(t->bus, &t->discontinuity_slot, BUS_API_SERVICE, BUS_API_OBJECT,
                                        BUS_API_INTERFACE, "Discontinuity", on_discontinuity, t);
        if (r >= 0)
                r = sd_bus_match_signal(t->bus, &t->domains_slot, BUS_API_SERVICE, BUS_API_OBJECT,
                                        BUS_API_INTERFACE, "DomainsChanged", on_domains_changed, t);
        if (r < 0)
                return r;
        *ret = t;
        t = NULL;
        return 0;
}

/* ListDomains' "available" for name; -ENOENT when it is not listed. */
static int domain_available(sd_bus *bus, const char *name, bool *ret) {
        int available, r;

        r = clock_domain_property(bus, name, "available", 'b', &available);
        if (r < 0)
                return r;
        *ret = available;
        return 0;
}

static int read_view_of(sd_bus_message *m, const char *key, const char *contents, void *userdata) {
        const char *v;
        int r;

        if (strcmp(key, "view_of") != 0 || strcmp(contents, "s") != 0)
                return sd_bus_message_skip(m, "v");
        r = sd_bus_message_read(m, "v", "s", &v);
        if (r >= 0)
                snprintf(userdata, 64, "%s", v);
        return r;
}

/* The name of the view of gpu0 that ListDomains lists, if any, into t->view. */
static int find_view(Loss *t) {
        char **names = NULL;
        int r;

        r = clock_list_domains(t->bus, &names);
        for (char **n = names; r >= 0 && *n; n++) {
                char view_of[64] = "";

                r = clock_domain_properties(t->bus, *n, read_view_of, view_of, NULL, 0);
                if (r >= 0 && strcmp(view_of, GPU) == 0) {
                        snprintf(t->view, sizeof(t->view), "%s", *n);
                        break;
                }
        }
        clock_strv_free(names);
        return r < 0 ? r : 0;
}

static void loss_mark(Loss *t) {
        t->mark_domains_changed = t->n_domains_changed;
        t->mark_events = t->n_events;
}

/* Processes the bus until ListDomains (asked at the start and after each DomainsChanged) says
 * gpu0's availability is `available` and, since loss_mark(), DomainsChanged (want_change) and a
 * Discontinuity for gpu0 (want_event) came in. -ETIMEDOUT. */
static int loss_wait(Loss *t, bool available, bool want_change, bool want_event, int timeout_ms) {
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) timeout_ms * 1000000, left_ns;
        unsigned listed_at = UINT_MAX;
        bool now_available = !available;
        int r;

        for (;;) {
                do
                        r = sd_bus_process(t->bus, NULL);
                while (r > 0);
                if (r < 0)
                        return r;
                if (listed_at != t->n_domains_changed) {
                        listed_at = t->n_domains_changed;
                        r = domain_available(t->bus, GPU, &now_available);
                        if (r < 0)
                                return r;
                        continue;       /* signals may have come in during the call */
                }
                if (now_available == available && (!want_change || t->n_domains_changed > t->mark_domains_changed) &&
                    (!want_event || t->n_events > t->mark_events))
                        return 0;
                left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = sd_bus_wait(t->bus, (uint64_t) left_ns / 1000);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

/* Round trips of CLOCK_MONOTONIC now through gpu0 (whose device reads it plus offset_ns) until
 * the bound has been <= 1 us for SETTLED_CALLS in a row, MIN_CALLS at least; every answer must
 * come and hold the truth. */
static void converge(sd_bus *bus, const char *when, int64_t offset_ns) {
        unsigned calls = 0, failed = 0, outside = 0, settled = 0;
        uint64_t max_u = 0;
        int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + SETTLE_TIMEOUT_NS;

        while ((settled < SETTLED_CALLS || calls < MIN_CALLS) && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                int64_t v = clock_now_ns(CLOCK_MONOTONIC), got, back;
                uint64_t u, u_back;

                calls++;
                if (clock_convert(bus, GPU, "monotonic", v + offset_ns, NULL, &got, &u) < 0 ||
                    clock_convert(bus, "monotonic", GPU, v, NULL, &back, &u_back) < 0) {
                        failed++;
                        settled = 0;
                        continue;
                }
                if ((!bracket_holds(got, u, v, v) || !bracket_holds(back, u_back, v + offset_ns, v + offset_ns)) &&
                    outside++ < 3)
                        diag("%s: %" PRIi64 " -> monotonic %" PRIi64 " +- %" PRIu64 ", back %" PRIi64 " +- %" PRIu64,
                             when, v, got, u, back, u_back);
                max_u = u > max_u ? u : max_u;
                max_u = u_back > max_u ? u_back : max_u;
                settled = u <= TARGET_BOUND_NS && u_back <= TARGET_BOUND_NS ? settled + 1 : 0;
        }
        diag("%s: %u round trips, largest bound %" PRIu64 " ns", when, calls, max_u);
        is_int(failed, 0, "Convert(gpu0 <-> monotonic) answers every call");
        is_int(outside, 0, "every answer holds the truth (device time is CLOCK_MONOTONIC + offset)");
        ok(settled >= SETTLED_CALLS, "the bound settles at <= 1 us (%u calls in a row)", settled);
}

/* gpu0 answers Unavailable; monotonic_raw <-> monotonic still convert, each answer holding the
 * truth. */
static void check_lost(Loss *t) {
        static const char *const pairs[][2] = { { GPU, "monotonic" }, { "monotonic", GPU } };
        int64_t v = clock_now_ns(CLOCK_MONOTONIC), got, back;
        unsigned failed = 0, outside = 0;
        uint64_t u, u_back;

        for (size_t i = 0; i < 2; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                int r = clock_convert(t->bus, pairs[i][0], pairs[i][1], v, &error, &got, &u);

                ok(r == -ENODEV && sd_bus_error_has_name(&error, BUS_ERROR_UNAVAILABLE),
                   "Convert(%s, %s) answers Unavailable (%s)", pairs[i][0], pairs[i][1], error.name ?: "no error");
        }
        for (unsigned i = 0; i < MONOTONIC_CALLS; i++) {
                Bracket to_mono, to_raw;

                bracket_read(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, &to_mono);
                bracket_read(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, &to_raw);
                if (clock_convert(t->bus, "monotonic_raw", "monotonic", to_mono.from_ns, NULL, &got, &u) < 0 ||
                    clock_convert(t->bus, "monotonic", "monotonic_raw", to_raw.from_ns, NULL, &back, &u_back) < 0) {
                        failed++;
                        continue;
                }
                outside += !bracket_holds(got, u, to_mono.to_lo_ns, to_mono.to_hi_ns) ||
                           !bracket_holds(back, u_back, to_raw.to_lo_ns, to_raw.to_hi_ns);
        }
        is_int(failed, 0, "while gpu0 is lost, monotonic_raw <-> monotonic answer every call");
        is_int(outside, 0, "and every answer holds the truth");
        ok(harness_daemon_alive(t->harness), "the daemon keeps running without its GPU");
}

static bool is_restart(const LossEvent *e) {
        return e->kind[0] == '\0' || strcmp(e->kind, "restart") == 0;
}

/* The Discontinuity after the device came back (the events since loss_mark()): a "restart" (when
 * the signal has a kind), found then, of RESET_TICKS; the loss itself announced no restart. */
static void check_restart(const Loss *t, int64_t removed_ns) {
        unsigned since = t->mark_events;
        const LossEvent *e = &t->events[since];
        unsigned before = 0, after = 0;

        for (unsigned i = 0; i < t->n_events; i++) {
                const LossEvent *x = &t->events[i];

                diag("Discontinuity(gpu0, %" PRIi64 ", %+" PRIi64 " ns, \"%s\") %+.3f s from the device's return",
                     x->monotonic_ns, x->step_ns, x->kind, (double) (x->received_ns - removed_ns) / 1e9);
                before += is_restart(x) && i < since;
                after += is_restart(x) && i >= since;
        }
        is_int(before, 0, "no restart announced before the device came back");
        ok(is_restart(e), "the first Discontinuity after it is a restart (kind \"%s\")",
           e->kind[0] ? e->kind : "none in the signal");
        is_int(after, 1, "one restart announced");
        ok(e->monotonic_ns >= removed_ns && e->monotonic_ns <= e->received_ns,
           "found after the device came back and before the signal arrived");
        ok(llabs(e->step_ns - RESET_TICKS) <= RESET_SLACK_NS, "its step is the reset's (%+" PRIi64 " ns)", e->step_ns);
}

/* Convert(gpu0, monotonic, v) and back: 0 when both answer and hold the truth v. */
/* The lost GPU's reconnection held in vkCreateInstance (the daemon's retry comes within its
 * backoff): the daemon must answer meanwhile, every call well within HELD_CALL_MAX_NS. Then
 * released. */
static void check_held_reconnect(Loss *t) {
        int64_t until_ns, worst_ns = 0;
        unsigned n_answered = 0;
        int r;

        r = write_file(t->hold_path, "");
        is_int(r, 0, "vkCreateInstance is held from now on");
        until_ns = clock_now_ns(CLOCK_MONOTONIC) + (int64_t) RECOVER_WAIT_MS * 1000000;
        while (access(t->held_path, F_OK) < 0 && clock_now_ns(CLOCK_MONOTONIC) < until_ns) {
                while (sd_bus_process(t->bus, NULL) > 0)
                        ;
                (void) sd_bus_wait(t->bus, 50 * 1000);
        }
        ok(access(t->held_path, F_OK) == 0, "the daemon's reconnection is held in vkCreateInstance");
        for (int i = 0; i < HELD_CALLS; i++) {
                int64_t t0_ns = clock_now_ns(CLOCK_MONOTONIC), v;
                uint64_t u;

                if (clock_convert(t->bus, "monotonic", "boottime", t0_ns, NULL, &v, &u) == 0)
                        n_answered++;
                worst_ns = clock_now_ns(CLOCK_MONOTONIC) - t0_ns > worst_ns ? clock_now_ns(CLOCK_MONOTONIC) - t0_ns :
                                                                            worst_ns;
        }
        ok(n_answered == HELD_CALLS && worst_ns <= HELD_CALL_MAX_NS, "meanwhile the daemon answers: %u of %d "
           "calls, the slowest in %.3f ms (the loop is not in vkCreateInstance)", n_answered, HELD_CALLS,
           (double) worst_ns / 1e6);
        r = unlink(t->hold_path) < 0 ? -errno : 0;
        is_int(r, 0, "vkCreateInstance is released");
}

static int convert_value(sd_bus *bus, int64_t v, int64_t *ret_off_ns, uint64_t *ret_u, uint64_t *ret_u_back) {
        int64_t got = v, back = v;
        int r;

        *ret_u = *ret_u_back = UINT64_MAX;
        r = clock_convert(bus, GPU, "monotonic", v, NULL, &got, ret_u);
        if (r >= 0)
                r = clock_convert(bus, "monotonic", GPU, v, NULL, &back, ret_u_back);
        *ret_off_ns = llabs(got - v) > llabs(back - v) ? got - v : back - v;
        if (r < 0)
                return r;
        return bracket_holds(got, *ret_u, v, v) && bracket_holds(back, *ret_u_back, v, v) ? 0 : -EDOM;
}

int main(int argc, char *argv[]) {
        _cleanup_(loss_freep) Loss *t = NULL;
        int64_t t0_ns, removed_ns, old_ns, off_ns;
        uint64_t old_u, old_u_back, u, u_back;
        int r;

        tap_args(argc, argv, 3, "TIMECONVD LAVAPIPE_ICD_JSON LAYER_DIR");
        tap_require_file(argv[2], "mesa-vulkan-drivers");

        r = loss_start(argv[1], argv[2], argv[3], &t);
        is_int(r, 0, "timeconvd starts on lavapipe behind " LAYER_NAME);
        if (r < 0)
                return done_testing();
        r = loss_wait(t, true, false, false, LOSS_WAIT_MS);
        is_int(r, 0, "gpu0 is available");
        if (r < 0)
                return done_testing();
        is_int(find_view(t), 0, "ListDomains read for gpu0's stable name");
        diag("gpu0's stable name: %s", t->view[0] ? t->view : "none");
        converge(t->bus, "before the loss", 0);
        old_ns = clock_now_ns(CLOCK_MONOTONIC);
        r = convert_value(t->bus, old_ns, &off_ns, &old_u, &old_u_back);
        is_int(r, 0, "a value before the loss converts to the truth and back");
        diag("%+" PRIi64 " ns off, +- %" PRIu64 " ns, back +- %" PRIu64 " ns", off_ns, old_u, old_u_back);

        loss_mark(t);
        t0_ns = clock_now_ns(CLOCK_MONOTONIC);
        r = write_file(t->trigger_path, "");
        is_int(r, 0, "the device is lost");
        r = loss_wait(t, false, true, false, LOSS_WAIT_MS);
        is_int(r, 0, "DomainsChanged, and ListDomains says gpu0 is unavailable");
        diag("gpu0 unavailable %.3f s after the loss", (double) (clock_now_ns(CLOCK_MONOTONIC) - t0_ns) / 1e9);
        if (r < 0)
                return done_testing();
        check_lost(t);
        check_held_reconnect(t);

        loss_mark(t);
        removed_ns = clock_now_ns(CLOCK_MONOTONIC);
        r = write_file(t->reset_path, STRINGIFY(RESET_TICKS));
        if (r >= 0)
                r = unlink(t->trigger_path) < 0 ? -errno : 0;
        is_int(r, 0, "the device is back, reset to count " STRINGIFY(RESET_TICKS) " ticks ahead");
        r = loss_wait(t, true, true, true, RECOVER_WAIT_MS);
        is_int(r, 0, "Discontinuity for gpu0, DomainsChanged, and ListDomains says gpu0 is available");
        diag("gpu0 available %.3f s after the device came back, %.3f s after it was lost",
             (double) (clock_now_ns(CLOCK_MONOTONIC) - removed_ns) / 1e9, (double) (removed_ns - t0_ns) / 1e9);
        if (r < 0)
                return done_testing();
        check_restart(t, removed_ns);

        converge(t->bus, "after the restart", RESET_TICKS);
        /* With the old segment: the new one would answer RESET_TICKS off. */
        r = convert_value(t->bus, old_ns, &off_ns, &u, &u_back);
        is_int(r, 0, "after the restart the value before the loss still converts to the truth and back");
        diag("%+" PRIi64 " ns off, +- %" PRIu64 " ns, back +- %" PRIu64 " ns", off_ns, u, u_back);
        ok(u <= old_u + OLD_BOUND_SLACK_NS && u_back <= old_u_back + OLD_BOUND_SLACK_NS,
           "with about the bound it had then");
        /* Its signal follows gpu0's: the calls since have let it in; handle it. */
        do
                r = sd_bus_process(t->bus, NULL);
        while (r > 0);
        if (t->view[0])
                ok(t->view_restarts == 1, "one restart announced for %s, the view of gpu0, too (%u)", t->view,
                   t->view_restarts);
        ok(harness_daemon_alive(t->harness), "the daemon keeps running");
        return done_testing();
}
