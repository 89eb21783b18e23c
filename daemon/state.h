/* SPDX-License-Identifier: MIT */
#pragma once

/* The state file, $STATE_DIRECTORY/state.json: what a run learned (each domain's rate against
 * the hub and its bound, the source's verdict), so that the next run starts with tight bounds.
 * It is a hint and nothing more: anything wrong with the file (missing, truncated, corrupt,
 * hostile, a symlink, too large) makes it ignored as a whole, with a named error.
 *
 *   { "version": 1, "boot_id": "<uuid>",
 *     "domains": [ { "name": "monotonic", "source": "posix", "device": "",
 *                    "unit": { "period_ns": 1.0, "wrap_bits": 0, "truncates": false,
 *                              "encoding": "plain", "events": false },
 *                    "rate_ppb": 1234, "rate_uncertainty_ppb": 8, "span_ns": 600000000000,
 *                    "verdict": "" } ] }
 *
 * Every key is required but the unit's "events" (false when absent: files written before it), no
 * other is allowed, integers are JSON integers. */

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "domain.h"
#include "log.h"
#include "units.h"

#define STATE_VERSION 1
#define STATE_FILE_NAME "state.json"
/* A full file of CORE_DOMAINS_MAX domains is about 30 KiB. */
#define STATE_FILE_SIZE_MAX (256 * 1024)
#define STATE_DOMAINS_MAX CORE_DOMAINS_MAX
#define STATE_BOOT_ID_MAX 37            /* a UUID and its NUL */
#define STATE_SOURCE_MAX 16
#define STATE_DEVICE_MAX 192
#define STATE_VERDICT_MAX 16
/* The estimator never allows more than its max_rate_error (1000 ppm); twice that is nonsense. */
#define STATE_RATE_PPB_MAX INT64_C(2000000)
#define STATE_PERIOD_NS_MAX 1e12

typedef struct StateDomain {
        char name[DOMAIN_NAME_MAX];
        char source[STATE_SOURCE_MAX];          /* DomainOps.source */
        char device[STATE_DEVICE_MAX];          /* which device or server it was; "" for none */
        DomainUnit unit;
        int64_t rate_ppb;                       /* rate against the hub, minus nominal */
        int64_t rate_uncertainty_ppb;           /* its bound */
        int64_t span_ns;                        /* the reference time the estimate rests on */
        char verdict[STATE_VERDICT_MAX];        /* the source's verdict then ("identity"); "" */
} StateDomain;

typedef struct State {
        char boot_id[STATE_BOOT_ID_MAX];        /* the kernel's boot id when saved; "" unknown */
        size_t n_domains;
        StateDomain domains[STATE_DOMAINS_MAX];
} State;

/* Why a file was refused: a stable name for tests and logs ("syntax", "type", "range",
 * "symlink", ...) and a sentence. */
typedef struct StateError {
        const char *code;
        char text[192];
} StateError;

/* Parses size bytes of buf (no NUL needed). On failure *ret is untouched and ret_error (may be
 * NULL) says why; -EBADMSG for anything wrong with the text, -EFBIG beyond STATE_FILE_SIZE_MAX.
 * Pure: no I/O, so a fuzzer can call it. */
int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error);

/* The JSON text of s (malloc'ed, NUL-terminated); -EINVAL for a state parse would refuse. */
int state_format(const State *s, char **ret);

/* The directory of the state: $STATE_DIRECTORY (its first entry: systemd's StateDirectory=),
 * else $XDG_STATE_HOME/timeconv, else $HOME/.local/state/timeconv (relative paths are
 * ignored, as the XDG spec says). malloc'ed; -ENOENT when none is set. */
int state_directory(char **ret);

/* Reads dir/state.json: -ENOENT when there is none; -ELOOP for a symlink, -EPERM for a file
 * that is not a regular file of ours or is writable by others, -EFBIG when too large, -EBADMSG
 * for bad content; ret_error says which. */
int state_load(const char *dir, State *ret, StateError *ret_error);

/* Writes dir/state.json atomically: a temporary file in dir, fsync, rename over, fsync of dir.
 * A failure at any point leaves the old file as it was. Creates dir (0700) when missing. */
int state_save(const char *dir, const State *s);

/* Removes the temporary files (.state.json.XXXXXX) of saves that never reached their rename:
 * a daemon killed while saving leaves one. Only regular files of ours with exactly that name
 * shape go. Returns how many were removed. */
int state_remove_stale(const char *dir);

/* The kernel's boot id into ret (STATE_BOOT_ID_MAX bytes); "" when unreadable. */
void state_read_boot_id(char ret[STATE_BOOT_ID_MAX]);

/* state-apply.c: between the core and the file. */

/* The models of c worth keeping: each calibrated domain that is neither the hub nor a view. */
int state_from_core(const Core *c, State *ret);

/* What to save, from what this run learned (s) and what the file knew (known): a domain of known
 * that s lacks (absent now, or not calibrated in a run too short) is kept, and so is one that
 * knew the same clock more tightly than this run did. An entry kept from another boot is widened
 * so that the next run's same-boot margin still covers a reboot. */
void state_merge(const State *known, State *s);

/* Narrows the rate prior of every domain of c that s knows under the same name, source,
 * device and unit (see state-apply.c for the width); logs what it used and what it did not.
 * Returns the number of domains that got a prior. */
int state_apply(const State *s, Core *c, const Log *log);

/* The daemon's two calls: find the directory (*ret_dir, NULL when there is none), load and apply
 * the file, warning about a file that is refused; and save the core's models there, warning on
 * failure. Neither fails the daemon: the state is only ever a hint. */
void state_restore(Core *c, const Log *log, char **ret_dir);
void state_store(const Core *c, const char *dir, const Log *log);
