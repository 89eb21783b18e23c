/* SPDX-License-Identifier: MIT */

/* 10,000 malformed calls to timeconvd on a private bus: wrong signatures, missing and extra
 * arguments, unknown members, invalid, huge and unknown domain names, values out of range,
 * other paths and interfaces, bad property access, and random payloads of random types (fds
 * included). Every one must get an error; none may take the daemon down or leak its fds. After
 * them the same process still converts correctly.
 * usage: test-daemon-robust TIMECONVD [SEED] */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "clock-client.h"
#include "garbage.h"
#include "harness-proc.h"
#include "harness.h"
#include "harness-tap.h"
#include "tap.h"

#define CALLS 10000
#define CALL_TIMEOUT_USEC (UINT64_C(20) * 1000000)
#define VALID_NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_.:-"
#define TALLY_MAX 48

static const char *const members[] = { "ListDomains", "Convert", "ConvertMany", "Now", "ExportSnapshots" };
static const char *const member_signatures[] = { "", "ssx", "ssax", "s", "" };

/* Wrong signatures for our own members, missing and extra arguments among them. */
static const struct {
        const char *member, *signature;
} wrong_signatures[] = {
        { "Convert", "" }, { "Convert", "s" }, { "Convert", "ss" }, { "Convert", "ssxx" }, { "Convert", "sss" },
        { "Convert", "ssi" }, { "Convert", "sst" }, { "Convert", "xss" }, { "Convert", "ssd" },
        { "Convert", "(ssx)" }, { "Convert", "ssv" }, { "Convert", "ssax" }, { "Convert", "oox" },
        { "ConvertMany", "ss" }, { "ConvertMany", "ssai" }, { "ConvertMany", "ssat" }, { "ConvertMany", "ssas" },
        { "ConvertMany", "ssad" }, { "ConvertMany", "ssay" }, { "ConvertMany", "ssa(x)" },
        { "ConvertMany", "ssaax" }, { "ConvertMany", "ssav" }, { "ConvertMany", "ssx" },
        { "ConvertMany", "ssaxax" }, { "ConvertMany", "axss" },
        { "Now", "" }, { "Now", "x" }, { "Now", "ss" }, { "Now", "as" }, { "Now", "v" }, { "Now", "o" },
        { "ListDomains", "s" }, { "ListDomains", "ssx" }, { "ExportSnapshots", "s" }, { "ExportSnapshots", "b" },
};

static const char *const unknown_members[] = { "Nope", "convert", "ConvertAll", "Now2", "Listdomains", "Export" };
static const char *const other_paths[] = { "/", "/org", "/org/timeconv", "/org/timeconv/Clock1/sub",
                                           "/org/timeconv/Clock2", "/org/timeconv/clock1" };
static const char *const other_interfaces[] = { "org.timeconv.Clock2", "org.timeconv.clock1", "org.timeconv",
                                                "org.freedesktop.DBus.Nope" };

/* Errors that mean the daemon did not answer: it hung, crashed or left the bus. */
static const char *const fatal_errors[] = {
        "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
        "org.freedesktop.DBus.Error.TimedOut", "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.Disconnected",
};

typedef struct Tally {
        char *names[TALLY_MAX];
        unsigned counts[TALLY_MAX];
        size_t n;
} Tally;

static void tally_add(Tally *t, const char *name) {
        size_t i;

        for (i = 0; i < t->n; i++)
                if (strcmp(t->names[i], name) == 0)
                        break;
        if (i == t->n) {
                if (t->n == TALLY_MAX || !(t->names[i] = strdup(name)))
                        return;
                t->n++;
        }
        t->counts[i]++;
}

/* A domain name that is not valid: empty, too long (now and then huge) or with a bad byte. */
static char *bad_name(Rng *rng) {
        char *s;

        switch (rng_below(rng, 5)) {
        case 0:
                return strdup("");
        case 1:
                return garbage_string(rng, rng_below(rng, 500) == 0 ? 1 << 20 : 64 + rng_below(rng, 4000),
                                      VALID_NAME_CHARS);
        case 2:
                return strdup(rng_below(rng, 2) ? "caf\xc3\xa9" : "\xe6\x99\x82\xe8\xa8\x88");
        default:
                s = garbage_string(rng, 1 + rng_below(rng, 40), VALID_NAME_CHARS);
                if (s)
                        s[rng_below(rng, strlen(s))] = "ABZ /\\\"'\t!?*#~"[rng_below(rng, 15)];
                return s;
        }
}

static int append_name_call(sd_bus_message *m, const char *member, const char *name, bool first, Rng *rng) {
        int64_t values[3] = { 0, (int64_t) rng_next(rng), 1 };

        if (strcmp(member, "Now") == 0)
                return sd_bus_message_append(m, "s", name);
        if (strcmp(member, "Convert") == 0)
                return sd_bus_message_append(m, "ssx", first ? name : "monotonic", first ? "boottime" : name, values[1]);
        return sd_bus_message_append(m, "ss", first ? name : "monotonic", first ? "boottime" : name) < 0 ? -EINVAL :
                sd_bus_message_append_array(m, 'x', values, sizeof(values));
}

/* Builds one malformed call; *what says which kind, for the failure messages. */
static int make_call(sd_bus *bus, Rng *rng, int fd, sd_bus_message **ret, const char **what) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *name = NULL;
        const char *path = BUS_API_OBJECT, *iface = BUS_API_INTERFACE, *member;
        char sig[GARBAGE_SIGNATURE_MAX + 2];
        size_t k, kind = rng_below(rng, 10);
        int r;

        switch (kind) {
        case 0:
                *what = "unknown member";
                member = unknown_members[rng_below(rng, sizeof(unknown_members) / sizeof(unknown_members[0]))];
                garbage_signature(rng, 3, false, sig);
                if (rng_below(rng, 2))
                        sig[0] = 0;
                break;
        case 1:
                *what = "wrong signature";
                k = rng_below(rng, sizeof(wrong_signatures) / sizeof(wrong_signatures[0]));
                member = wrong_signatures[k].member;
                snprintf(sig, sizeof(sig), "%s", wrong_signatures[k].signature);
                break;
        case 2:
        case 3:
                *what = kind == 2 ? "invalid domain name" : "unknown domain name";
                member = members[1 + rng_below(rng, 3)];
                if (kind == 2)
                        name = bad_name(rng);
                else {
                        /* Valid, but no domain has a name with this suffix. */
                        _cleanup_free_ char *stem = garbage_string(rng, 1 + rng_below(rng, 20), VALID_NAME_CHARS);

                        if (!stem || asprintf(&name, "%s-nosuch", stem) < 0)
                                name = NULL;
                }
                if (!name)
                        return -ENOMEM;
                r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, path, iface, member);
                if (r >= 0)
                        r = append_name_call(m, member, name, rng_below(rng, 2), rng);
                goto done;
        case 4: {
                /* Beyond what int64 holds once realtime's offset (decades of ns) is added or taken. */
                int64_t big = INT64_MAX - (int64_t) rng_below(rng, UINT64_C(1000000000000000));
                bool up = rng_below(rng, 2);

                *what = "value out of range";
                member = rng_below(rng, 2) ? "Convert" : "ConvertMany";
                r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, path, iface, member);
                if (r >= 0)
                        r = sd_bus_message_append(m, "ss", up ? "monotonic" : "realtime", up ? "realtime" : "monotonic");
                if (r >= 0 && strcmp(member, "Convert") == 0)
                        r = sd_bus_message_append(m, "x", up ? big : -big - 1);
                else if (r >= 0)
                        r = sd_bus_message_append(m, "ax", 3, INT64_C(0), up ? big : -big - 1, INT64_C(0));
                goto done;
        }
        case 5:
        case 6:
                *what = kind == 5 ? "other object path" : "other interface";
                if (kind == 5)
                        path = other_paths[rng_below(rng, sizeof(other_paths) / sizeof(other_paths[0]))];
                else
                        iface = other_interfaces[rng_below(rng, sizeof(other_interfaces) / sizeof(other_interfaces[0]))];
                r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, path, iface, "Convert");
                if (r >= 0)
                        r = sd_bus_message_append(m, "ssx", "monotonic", "boottime", INT64_C(0));
                goto done;
        case 7:
                *what = "bad property access";
                iface = "org.freedesktop.DBus.Properties";
                k = rng_below(rng, 5);
                member = k < 2 ? "Get" : k < 4 ? "Set" : "GetAll";
                r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, path, iface, member);
                if (r >= 0 && k == 0)
                        r = sd_bus_message_append(m, "ss", BUS_API_INTERFACE, "Nope");
                else if (r >= 0 && k == 1)
                        r = sd_bus_message_append(m, "ss", "org.timeconv.Nope", "Version");
                else if (r >= 0 && k == 2)
                        r = sd_bus_message_append(m, "ssv", BUS_API_INTERFACE, "Version", "s", "9.9");
                else if (r >= 0 && k == 3)
                        r = sd_bus_message_append(m, "ssv", BUS_API_INTERFACE, "ReferenceDomain", "x", INT64_C(1));
                else if (r >= 0)
                        r = sd_bus_message_append(m, "s", "org.timeconv.Nope");
                goto done;
        default:
                /* Random payloads of random types; never the member's own signature. */
                *what = "random payload";
                k = rng_below(rng, sizeof(members) / sizeof(members[0]));
                member = members[k];
                garbage_signature(rng, 6, fd >= 0 && rng_below(rng, 4) == 0, sig);
                if (strcmp(sig, member_signatures[k]) == 0) {
                        memmove(sig + 1, sig, strlen(sig) + 1);
                        sig[0] = 'y';
                }
        }

        r = sd_bus_message_new_method_call(bus, &m, BUS_API_SERVICE, path, iface, member);
        if (r >= 0)
                r = garbage_append(m, sig, rng, fd);
done:
        if (r < 0)
                return r;
        *ret = m;
        m = NULL;
        return 0;
}

static bool is_fatal(const sd_bus_error *e, int r) {
        for (size_t i = 0; i < sizeof(fatal_errors) / sizeof(fatal_errors[0]); i++)
                if (sd_bus_error_has_name(e, fatal_errors[i]))
                        return true;
        return !sd_bus_error_is_set(e) || r == -ENOTCONN || r == -ECONNRESET;
}

int main(int argc, char *argv[]) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int fd = -1;
        Rng rng = { .state = argc > 2 ? strtoull(argv[2], NULL, 0) : UINT64_C(0x74696d65636f6e76) };
        Tally tally = {};
        unsigned sent = 0, attempts = 0, succeeded = 0, fatal = 0, with_fds = 0;
        int fds_before, fds_after, outside = 0, r;
        pid_t pid = 0;

        tap_args_range(argc, argv, 1, 2, "TIMECONVD [SEED]");
        diag("seed 0x%" PRIx64, rng.state);

        r = harness_tap_start(argv[1], NULL, &h, &bus);
        if (r >= 0)
                r = clock_convert(bus, "monotonic", "boottime", 0, NULL, &(int64_t) { 0 }, &(uint64_t) { 0 });
        is_int(r, 0, "a first correct Convert succeeds");
        if (r < 0)
                return done_testing();
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        fds_before = proc_count_fds(h->daemon_pid);

        while (sent < CALLS && attempts++ < 2 * CALLS) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
                const char *what = "?";

                if (make_call(bus, &rng, fd, &m, &what) < 0)
                        continue;
                r = sd_bus_call(bus, m, CALL_TIMEOUT_USEC, &error, &reply);
                if (r == -ENOTSUP || r == -E2BIG)       /* refused here, never sent */
                        continue;
                sent++;
                with_fds += !!strchr(sd_bus_message_get_signature(m, true) ?: "", 'h');
                if (r >= 0) {
                        if (succeeded++ < 5)
                                diag("call %u (%s, %s%s): succeeded", sent, what, sd_bus_message_get_member(m),
                                     sd_bus_message_get_signature(m, true));
                        continue;
                }
                tally_add(&tally, error.name ? error.name : "(local error)");
                if (is_fatal(&error, r)) {
                        if (fatal++ < 5)
                                diag("call %u (%s): %s", sent, what, error.name ? error.name : strerror(-r));
                        if (!harness_daemon_alive(h))
                                break;
                }
        }

        diag("%u of the calls carried file descriptors", with_fds);
        for (size_t i = 0; i < tally.n; i++) {
                diag("%6u x %s", tally.counts[i], tally.names[i]);
                free(tally.names[i]);
        }
        is_int(sent, CALLS, "10000 malformed calls were sent");
        is_int(succeeded, 0, "none of them succeeded");
        is_int(fatal, 0, "every one got an error from the daemon (no timeout, no disconnection)");
        ok(harness_daemon_alive(h), "the daemon is alive");
        r = harness_name_pid(bus, BUS_API_SERVICE, &pid);
        ok(r >= 0 && pid == h->daemon_pid, "the same process (%d) still owns %s", (int) h->daemon_pid,
           BUS_API_SERVICE);
        fds_after = proc_count_fds(h->daemon_pid);
        ok(fds_before > 0 && fds_after >= 0 && fds_after <= fds_before + 8,
           "it holds no more file descriptors than before, give or take (%d, was %d)", fds_after, fds_before);

        for (int i = 0; i < 100; i++) {
                Bracket b;
                int64_t v;
                uint64_t u;

                bracket_read(CLOCK_MONOTONIC, CLOCK_BOOTTIME, &b);
                r = clock_convert(bus, "monotonic", "boottime", b.from_ns, NULL, &v, &u);
                outside += r < 0 || !bracket_holds(v, u, b.to_lo_ns, b.to_hi_ns);
        }
        is_int(outside, 0, "afterwards 100 correct Converts succeed within their bounds of the truth");
        return done_testing();
}
