/* SPDX-License-Identifier: MIT */
#ifndef TIMECONV_H
#define TIMECONV_H

/* libtimeconv: convert timestamps between clock domains.
 *
 * This header is C89-clean (it is compiled with -std=c89 -pedantic -Werror in the test suite).
 * Values are int64_t, from <stdint.h>, which every C89 toolchain still in use provides; a
 * caller's own int64_t then passes by pointer without a cast.
 *
 * Every function that can fail returns 0 or a negative errno:
 *   -ENOENT   unknown domain (or, when loading, no such file)
 *   -ENOLINK  no path between the two domains
 *   -ERANGE   the result does not fit in 64 bits, or the value is outside the domain's range
 *   -EINVAL   a bad argument (NULL, unknown mode)
 *   -EBADMSG  a malformed snapshot file (details in struct timeconv_error)
 *   -ENOMEM   out of memory
 * Out-parameters named ret_* are written only on success, except ret_error, which is written
 * only on failure. The library keeps no global state and never prints. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Offline conversion modes (see timeconv_snapshots_convert()). */
enum {
        /* Perfetto trace processor's semantics: the latest snapshot at or before the value,
         * else the first; each hop a constant offset; the path with the fewest hops. */
        TIMECONV_MODE_NEAREST = 0,
        /* Interpolates between the snapshots around the value when the rate between them is
         * plausible; NEAREST across a discontinuity. */
        TIMECONV_MODE_DRIFT = 1
};

#define TIMECONV_ERROR_MESSAGE_MAX 256

/* Where and why a snapshot file was refused. line and column are 1-based; 0 when unknown
 * (an I/O error). The message names the element, e.g. "snapshots[3].clocks[1].ts: not an
 * integer", and is always NUL-terminated. */
struct timeconv_error {
        unsigned line;
        unsigned column;
        char message[TIMECONV_ERROR_MESSAGE_MAX];
};

/* A set of clock snapshots loaded from a JSON snapshot file, immutable once loaded: any number
 * of threads may convert through one at the same time. */
struct timeconv_snapshots;

/* The library's version, e.g. "0.1.0". */
const char *timeconv_version(void);

/* Loads a JSON snapshot file:
 *   { "snapshots": [ { "clocks": [ { "domain": "boottime", "ts": 2000 },
 *                                  { "domain": "monotonic", "ts": 1000 } ] } ],
 *     "domains": [ { "name": "gpu0", "unit": "tick", "period_ns": 52.083, "wrap_bits": 64 } ] }
 * "domains" is optional ("tick" and "ticks", "frame" and "frames" alike; wrap_bits 64, or 0 in
 * older files: no wrap). Domain names are up to 63 bytes; up to 256 domains and 1,000,000
 * snapshots. Errors: -EBADMSG (malformed, see *ret_error), -errno of the read, -ENOMEM. */
int timeconv_snapshots_load(const char *path, struct timeconv_snapshots **ret,
                            struct timeconv_error *ret_error);

/* The same, from size bytes in memory (no NUL needed). */
int timeconv_snapshots_load_buffer(const char *data, size_t size, struct timeconv_snapshots **ret,
                                   struct timeconv_error *ret_error);

/* Snapshot files (JSON) of several machines as one set. Each source is one file's bytes and its
 * machine: the domains of machine N != 0 are named "mN:" + their name ("m1:monotonic"), those of
 * machine 0 (one source, and only one) as they are. Machines are related through shared, a clock
 * in ns that every machine keeps on one time scale within shared_bound_ns of each other (for
 * "realtime" against UTC, the sum of the kernels' maxerror while NTP or PTP keeps them): each
 * reading of shared in machine N's file becomes a snapshot of "mN:" + shared and shared at that
 * same value, shared_bound_ns apart at most, so that an answer across machines carries that
 * bound. shared_bound_ns TIMECONV_SHARED_BOUND_FROM_FILES takes the bound from the files:
 * timeconvd's exports give realtime's readings the kernel's maxerror against UTC
 * ("utc_maxerror_ns"), and each reading of machine N is related with its own plus machine 0's
 * (its nearest reading's, grown by the kernel's 500 us a second); a reading without one relates
 * nothing. A Perfetto trace is refused (its machines are in it). Errors as
 * timeconv_snapshots_load(); -EINVAL without exactly one source of machine 0. */
#define TIMECONV_SHARED_BOUND_FROM_FILES (-1)
struct timeconv_snapshot_source {
        const char *data;
        size_t size;
        unsigned machine;
};

int timeconv_snapshots_load_machines(const struct timeconv_snapshot_source *sources, size_t n,
                                     const char *shared, int64_t shared_bound_ns,
                                     struct timeconv_snapshots **ret, struct timeconv_error *ret_error);

/* Accepts NULL; returns NULL. */
struct timeconv_snapshots *timeconv_snapshots_free(struct timeconv_snapshots *snapshots);

/* The number of domains in the file, and the name of each (NULL past the end). */
size_t timeconv_snapshots_count_domains(const struct timeconv_snapshots *snapshots);
const char *timeconv_snapshots_domain_name(const struct timeconv_snapshots *snapshots,
                                           size_t index);

/* Converts value, in the unit of domain from, to domain to. ret_uncertainty_ns (may be NULL)
 * bounds the error of the result, in ns. Does not allocate. */
int timeconv_snapshots_convert(const struct timeconv_snapshots *snapshots, int mode,
                               const char *from, const char *to, int64_t value,
                               int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* A pair of domains of one set of snapshots and a mode, resolved once: converting through it
 * skips the two name lookups of timeconv_snapshots_convert() (the fastest way to convert many
 * values offline). A plain struct the caller owns, valid as long as the snapshots. Errors:
 * -EINVAL, -ENOENT (a domain not in the snapshots). The conversion answers exactly as
 * timeconv_snapshots_convert() with the same names and mode. */
struct timeconv_snapshots_pair {
        const struct timeconv_snapshots *snapshots;
        size_t from;
        size_t to;
        int mode;
};

int timeconv_snapshots_pair(const struct timeconv_snapshots *snapshots, int mode, const char *from,
                            const char *to, struct timeconv_snapshots_pair *ret_pair);
int timeconv_snapshots_pair_convert(const struct timeconv_snapshots_pair *pair, int64_t value,
                                    int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* A short English text for a negative errno returned by this library ("unknown domain",
 * "no path between the domains", ...); never NULL. */
const char *timeconv_strerror(int error);

/* ---- Live conversion through timeconvd ----
 *
 * A handle holds one D-Bus connection and, when the daemon offers it, a read-only mapping of
 * its shared table: a conversion through the table costs a few ns and no system call; one the
 * table cannot answer (a value from before the current segment, a domain not in it) goes over
 * D-Bus. When the daemon restarts (a new owner of org.timeconv.Clock1, or a new table
 * generation), the handle drops what it knew and carries on with the new daemon. It notices
 * on its next D-Bus call, at once in timeconv_process(), or while it converts through the
 * table: every 1024 conversions it checks the table's heartbeat, and the bus at most every
 * 10 ms. A table the daemon retired answers nothing from the next conversion on.
 *
 * A handle is not thread-safe: use one per thread, or serialise the calls. Besides the errors
 * above, live calls return:
 *   -ENODEV      the domain exists but is unavailable or not calibrated yet
 *   -EHOSTDOWN   timeconvd is not running (nobody owns org.timeconv.Clock1)
 *   -ECONNRESET  the bus connection was lost
 *   -ETIMEDOUT   timeconvd did not answer
 *   -EDQUOT      timeconvd refused: too many requests
 *   -EOPNOTSUPP  the paths allowed by timeconv_set_paths() cannot answer
 *   -EPROTO      an answer that does not follow org.timeconv.Clock1
 * and opening a bus that cannot be reached returns its errno (-ENOENT, -ECONNREFUSED, ...). */
struct timeconv;

/* Which path answers a conversion (a bit mask for timeconv_set_paths()). */
enum {
        TIMECONV_PATH_NONE = 0,
        TIMECONV_PATH_TABLE = 1,        /* the shared table, in this process */
        TIMECONV_PATH_DBUS = 2,         /* a method call to timeconvd */
        TIMECONV_PATH_ANY = 3
};

/* Connects to the session bus ($DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus). It does
 * not wait for the daemon: a daemon that is not running yet is found at the first call. */
int timeconv_open(struct timeconv **ret);

/* The same on the bus at address (a D-Bus address such as "unix:path=/run/user/1000/bus"). */
int timeconv_open_address(const char *address, struct timeconv **ret);

/* Closes the connection and unmaps the table. Accepts NULL; returns NULL. */
struct timeconv *timeconv_close(struct timeconv *tc);

/* Converts value, in the unit of domain from, to domain to: *ret_value in to's unit and
 * *ret_uncertainty_ns (may be NULL), the bound of its error in ns. A wrapping domain's value is
 * unwrapped to the occurrence nearest to now. */
int timeconv_convert(struct timeconv *tc, const char *from, const char *to, int64_t value,
                     int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* n values at once. Fails whole at the first value that fails (like ConvertMany); out_values
 * and out_uncertainty_ns (may be NULL) have room for n and hold no result then. values and
 * out_values may be the same array. */
int timeconv_convert_many(struct timeconv *tc, const char *from, const char *to,
                          const int64_t *values, size_t n, int64_t *out_values,
                          int64_t *out_uncertainty_ns);

/* The current time of domain, in its unit, as the daemon's model predicts it. */
int timeconv_now(struct timeconv *tc, const char *domain, int64_t *ret_value,
                 int64_t *ret_uncertainty_ns);

/* A number for a domain name, valid for the life of the handle (also across daemon restarts):
 * the conversions by number skip the name lookup, the fastest way to convert in a loop. The
 * name is not checked here; an unknown domain fails at the conversion with -ENOENT. Up to 256
 * names per handle (-ENOSPC beyond); -EINVAL for a name longer than 63 bytes. */
int timeconv_domain_id(struct timeconv *tc, const char *name, unsigned *ret_id);
int timeconv_convert_id(struct timeconv *tc, unsigned from, unsigned to, int64_t value,
                        int64_t *ret_value, int64_t *ret_uncertainty_ns);
int timeconv_now_id(struct timeconv *tc, unsigned domain, int64_t *ret_value,
                    int64_t *ret_uncertainty_ns);

/* A pair of domains resolved once (timeconv_domain_id() of each name): converting through it
 * costs what timeconv_convert_id() costs, with the names kept in one place. A plain struct the
 * caller owns (no release needed), valid for the life of the handle. Under GCC and clang
 * timeconv_pair_convert() is inline (a call of timeconv_convert_id()); define TIMECONV_NO_INLINE
 * for the out-of-line function everywhere. Errors as timeconv_domain_id() and
 * timeconv_convert_id(). */
struct timeconv_pair {
        struct timeconv *tc;
        unsigned from;
        unsigned to;
};

int timeconv_pair_get(struct timeconv *tc, const char *from, const char *to,
                      struct timeconv_pair *ret_pair);
int timeconv_pair_convert(const struct timeconv_pair *pair, int64_t value, int64_t *ret_value,
                          int64_t *ret_uncertainty_ns);

#if defined(__GNUC__) && !defined(TIMECONV_NO_INLINE)
static __inline__ int timeconv_pair_convert_inline_(const struct timeconv_pair *pair, int64_t value,
                                                    int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        if (!pair)
                return timeconv_pair_convert(pair, value, ret_value, ret_uncertainty_ns);
        return timeconv_convert_id(pair->tc, pair->from, pair->to, value, ret_value,
                                   ret_uncertainty_ns);
}
#define timeconv_pair_convert(pair, value, ret_value, ret_uncertainty_ns) \
        timeconv_pair_convert_inline_(pair, value, ret_value, ret_uncertainty_ns)
#endif

/* What timeconvd said when it refused (with one of its named errors) the latest call of this
 * handle that went to it over D-Bus, e.g. "argument 'to': invalid byte 0x52 at offset 0 of the domain name (allowed: a-z
 * 0-9 _ . : -)" or "unknown domain 'nope'": the errno says what kind of failure it was, this
 * says which argument and why. NULL when that call succeeded or came back without a message.
 * A call answered in this process (the shared table, a check of the arguments) leaves it as it
 * was: read it right after the call that failed, or allow TIMECONV_PATH_DBUS only when every
 * failure should carry the daemon's words. Valid until the next call on the handle; per
 * handle, never shared between handles. */
const char *timeconv_last_error_message(const struct timeconv *tc);

/* Restricts the paths a conversion may take (TIMECONV_PATH_TABLE, _DBUS or _ANY, the
 * default); with one path only, a conversion the other would answer fails with -EOPNOTSUPP. */
int timeconv_set_paths(struct timeconv *tc, int paths);

/* The path that answered the latest successful conversion or now(): TIMECONV_PATH_TABLE or
 * TIMECONV_PATH_DBUS; TIMECONV_PATH_NONE before the first. */
int timeconv_last_path(const struct timeconv *tc);

/* Flags of struct timeconv_domain. */
enum {
        TIMECONV_DOMAIN_AVAILABLE = 1,          /* can be read and is calibrated */
        TIMECONV_DOMAIN_MONOTONIC = 2,          /* never goes backwards */
        TIMECONV_DOMAIN_HAS_OFFSET = 4,         /* offset_ns is set */
        TIMECONV_DOMAIN_HAS_RATE_UNCERTAINTY = 8 /* rate_uncertainty_ppb is set */
};

#define TIMECONV_PROPERTIES_MAX 16

/* A source-specific property of a domain, as ListDomains gives it, typed: "owner" (s, an
 * application domain's owner), "connected" (b), "probes" (t), "next_vblank_ns" (x),
 * "refresh_interval_ns" (d), ...: org.timeconv.Clock1.xml lists them. type is the D-Bus type
 * and says which member holds the value: 'b' b; 'u' and 't' u; 'x' x; 'd' d; 's' s. */
struct timeconv_property {
        char key[32];
        char type;
        int b;
        uint64_t u;
        int64_t x;
        double d;
        char s[128];
};

/* One domain as timeconvd lists it (ListDomains). Strings are NUL-terminated, "" when the
 * daemon gave none. New fields are only ever appended. */
struct timeconv_domain {
        char name[64];
        char unit[16];                  /* "ns", "ms", "us", "tick", ... */
        char reference[64];             /* the domain it is calibrated against */
        char verdict[16];               /* X server time: "identity" or "tracked" */
        unsigned flags;                 /* TIMECONV_DOMAIN_* */
        unsigned wrap_bits;             /* width of the raw value; 64: no wrap */
        uint32_t perfetto_id;
        uint64_t resolution_ns;
        int64_t rate_ppb;               /* rate against the reference, minus nominal */
        uint64_t rate_uncertainty_ppb;
        uint64_t uncertainty_ns;        /* bound of a conversion to the reference */
        int64_t last_calibrated_ns;     /* CLOCK_MONOTONIC time of the last burst; 0: never */
        int64_t offset_ns;              /* against CLOCK_MONOTONIC */
        double period_ns;               /* ns per tick; 0 unless the unit is "tick" */
        char device_name[128];          /* GPUs */
        char driver[64];                /* GPUs */
        /* Every other entry of the daemon's, in its order (up to TIMECONV_PROPERTIES_MAX). */
        unsigned n_properties;
        struct timeconv_property properties[TIMECONV_PROPERTIES_MAX];
};

/* The daemon's domains, as a NULL-terminated array. */
int timeconv_list_domains(struct timeconv *tc, struct timeconv_domain ***ret);

/* Accepts NULL; returns NULL. */
struct timeconv_domain **timeconv_domains_free(struct timeconv_domain **domains);

/* The daemon's snapshot history as a JSON snapshot file (timeconv_snapshots_load_buffer()
 * reads it back), NUL-terminated; release it with free(). */
int timeconv_export_snapshots(struct timeconv *tc, char **ret_json);

/* ---- Perfetto traces ----
 *
 * The Perfetto clock id of a domain name, as ListDomains' perfetto_id gives it: Perfetto's
 * builtin ids for realtime (1), realtime_coarse (2), monotonic (3), monotonic_coarse (4),
 * monotonic_raw (5) and boottime (6); for any other name the global id Perfetto recommends for
 * a named clock, FNV-1a-32("org.timeconv." + name) | 0x80000000. 0 for NULL. A producer that
 * stamps its packets in a timeconv domain (timestamp_clock_id) uses this id. */
uint32_t timeconv_perfetto_clock_id(const char *name);

/* A writer of Perfetto ClockSnapshot packets from the daemon's snapshot history. */
struct timeconv_perfetto_writer;

int timeconv_perfetto_writer_new(struct timeconv_perfetto_writer **ret);

/* Accepts NULL; returns NULL. */
struct timeconv_perfetto_writer *timeconv_perfetto_writer_free(struct timeconv_perfetto_writer *w);

/* Turns an export (timeconv_export_snapshots()'s JSON, size bytes) into Perfetto trace bytes:
 * one TracePacket per snapshot, on a sequence of the writer's own, each a ClockSnapshot of every
 * domain of the snapshot under timeconv_perfetto_clock_id(), with unit_multiplier_ns for a unit
 * of a whole number of ns (us: 1000, ms: 1000000, ticks of an integral period) and BOOTTIME as
 * primary_trace_clock; the packet's timestamp is the BOOTTIME reading. A tick or frame domain
 * of a fractional period (a GPU's 52.083 ns) has no multiplier Perfetto can express: it is
 * written in ns (value x period, rounded) under the id of name + ".ns". Only the snapshots after
 * the last one this writer returned (when the export still holds it) are written, so calling it
 * again on a later export appends what the daemon learnt since. *ret_data (malloc'ed, free())
 * may be appended to a trace file as it is; *ret_n_snapshots (may be NULL) counts its packets.
 * Errors: -EINVAL, -EBADMSG (not an export), -ERANGE, -ENOMEM. */
int timeconv_perfetto_writer_add_export(struct timeconv_perfetto_writer *w, const char *json, size_t size,
                                        char **ret_data, size_t *ret_size, size_t *ret_n_snapshots);

/* ---- Application clocks ----
 *
 * A clock the application owns (an audio DAC, a camera, a remote device) becomes a domain that
 * every client of timeconvd can convert to and from: push snapshots, each a set of readings of
 * the application's clock and of the daemon's domains taken at the same instant.
 *
 * The daemon ties the domain to the handle's bus connection: the first push of an unknown name
 * creates it, owned by this handle; only this handle may push to it; it goes away when the
 * handle is closed (or the process ends), and its name is free again. So keep one handle for
 * as long as the domain should exist, and do not close it between pushes. When timeconvd
 * restarts (TIMECONV_EVENT_DAEMON_CHANGED), the domain is gone with the old daemon: the next
 * push makes it again, with a fresh calibration. */

/* One reading of a snapshot. */
struct timeconv_reading {
        const char *domain;             /* a domain name (1-63 bytes of a-z 0-9 _ . : -) */
        int64_t value;                  /* in the domain's unit; an application domain counts ns */
};

/* Publishes a snapshot of n (2 to 16) readings taken at the same instant: at least one of an
 * application domain (created if nobody has it), at least one of the daemon's own domains.
 * Naming a daemon domain twice, read before and after the application's clock, brackets the
 * reading and gives an honest bound whatever the delay between the reads:
 *     { "monotonic", before }, { "audio-dac", dac }, { "monotonic", after }
 * An application domain counts ns, does not wrap, and keeps its nominal rate within 1 %.
 * Errors: -EINVAL (a bad snapshot; timeconv_last_error_message() says which entry), -EEXIST
 * (the name belongs to another client), -ENODEV (a daemon domain not calibrated yet),
 * -ERANGE, -EDQUOT (too many domains or snapshots a second), and the live errors above. */
int timeconv_push_snapshot(struct timeconv *tc, const struct timeconv_reading *readings, size_t n);

/* What a handle reports through its event handler. */
enum {
        TIMECONV_EVENT_DISCONTINUITY = 1,       /* domain stepped by step_ns at monotonic_ns */
        TIMECONV_EVENT_DOMAINS_CHANGED = 2,     /* a domain appeared, went away or changed */
        TIMECONV_EVENT_DAEMON_CHANGED = 3       /* timeconvd stopped or a new one started */
};

struct timeconv_event {
        int type;                       /* TIMECONV_EVENT_* */
        const char *domain;             /* DISCONTINUITY only, else NULL */
        int64_t monotonic_ns;
        int64_t step_ns;
        int daemon_running;             /* DAEMON_CHANGED: whether a daemon runs now */
        /* DISCONTINUITY: "step" (the clock jumped), "rate" (its rate changed, step_ns is 0) or
         * "restart" (a new X server, a GPU reset); NULL from a daemon that does not say. */
        const char *kind;
        /* DOMAINS_CHANGED: NULL-terminated lists of the domains added, removed, and whose
         * availability changed since the previous one; NULL from a daemon that does not say.
         * Valid during the call of the handler. */
        const char *const *added;
        const char *const *removed;
        const char *const *changed;
};

typedef void (*timeconv_event_handler)(const struct timeconv_event *event, void *userdata);

/* handler (NULL: none) is called from within the library's calls while it reads the bus:
 * timeconv_process() and any call that goes over D-Bus. It must not close the handle. */
int timeconv_set_event_handler(struct timeconv *tc, timeconv_event_handler handler,
                               void *userdata);

/* For an event loop: an fd to poll for input (POLLIN), and the call that handles what
 * arrived (events, a daemon restart) without blocking. */
int timeconv_get_fd(struct timeconv *tc);
int timeconv_process(struct timeconv *tc);

/* ---- Frame synchronisation (EWMH) ----
 *
 * The client messages of the EWMH frame-synchronisation protocol, as the five 32-bit values of
 * a format-32 ClientMessage (xcb's data32[5], Xlib's data.l[5]); the extended frame counter's
 * rules; and a FRAME_DRAWN/FRAME_TIMINGS pair as CLOCK_MONOTONIC times through the daemon's
 * x11_us domain. Except timeconv_frame_convert(), these are pure functions: no X connection,
 * no daemon. Counter values are XSync counters, signed 64-bit: a value above INT64_MAX is
 * -ERANGE. */

/* _NET_WM_SYNC_REQUEST (message_type WM_PROTOCOLS): data[0] the _NET_WM_SYNC_REQUEST atom,
 * data[1] the timestamp, data[2] and data[3] the low and high 32 bits of the value, data[4] 1
 * when the extended frame counter is meant, 0 for the basic one (any value but 0 reads as
 * extended, as GTK reads it). */
struct timeconv_sync_request {
        uint32_t timestamp_ms;          /* X server time */
        uint64_t value;                 /* the value the client sets once it handled the request */
        int extended;                   /* 1: the extended frame counter; 0: the basic one */
};

/* _NET_WM_FRAME_DRAWN: data[0] and data[1] the counter, data[2] and data[3] the drawn time,
 * low 32 bits first; data[4] 0. */
struct timeconv_frame_drawn {
        uint64_t counter;               /* the frame's counter value (its even, end value) */
        uint64_t drawn_x11_us;          /* high-precision X time (domain x11_us) of the drawing */
};

/* What struct timeconv_frame_timings and struct timeconv_frame_times know (flags). */
enum {
        TIMECONV_FRAME_PRESENTED = 1,           /* the presentation time */
        TIMECONV_FRAME_REFRESH_INTERVAL = 2,    /* the refresh interval */
        TIMECONV_FRAME_DELAY = 4                /* the compositor's frame delay */
};

/* On the wire, a frame delay with no meaningful value. */
#define TIMECONV_FRAME_DELAY_NONE 0x80000000UL

/* _NET_WM_FRAME_TIMINGS: data[0] and data[1] the counter (low, high); data[2] the presentation
 * time as a signed 32-bit offset in us from the drawn time, 0: unknown (a true offset of 0 goes
 * as 1, as mutter sends it); data[3] the refresh interval in us, 0: unknown; data[4] the frame
 * delay in us, signed 32-bit, TIMECONV_FRAME_DELAY_NONE: no meaningful value. */
struct timeconv_frame_timings {
        uint64_t counter;
        unsigned flags;                 /* TIMECONV_FRAME_*: which of the fields below are known */
        int64_t presentation_offset_us; /* presented - drawn: -2^31 < offset < 2^31 */
        int64_t refresh_interval_us;    /* 0 < interval < 2^32 */
        int64_t frame_delay_us;         /* -2^31 < delay < 2^31 */
};

/* Pack into data[5] / unpack from it. -EINVAL for a NULL pointer, flags outside TIMECONV_FRAME_*,
 * or (unpacking) a message that is not well formed: data[0] not sync_request_atom, a counter
 * above INT64_MAX; -ERANGE for a field that does not fit its wire form. */
int timeconv_sync_request_pack(const struct timeconv_sync_request *request, uint32_t sync_request_atom,
                               uint32_t data[5]);
int timeconv_sync_request_unpack(const uint32_t data[5], uint32_t sync_request_atom,
                                 struct timeconv_sync_request *ret);
int timeconv_frame_drawn_pack(const struct timeconv_frame_drawn *drawn, uint32_t data[5]);
int timeconv_frame_drawn_unpack(const uint32_t data[5], struct timeconv_frame_drawn *ret);
int timeconv_frame_timings_pack(const struct timeconv_frame_timings *timings, uint32_t data[5]);
int timeconv_frame_timings_unpack(const uint32_t data[5], struct timeconv_frame_timings *ret);

/* The extended frame counter. A client begins a frame by setting the counter to an odd value
 * above its current one, value: v % 4 == 3 for an urgent frame (one the window manager waits
 * for, after a _NET_WM_SYNC_REQUEST), which ends at v + 1; v % 4 == 1 for the others, which end
 * at v + 3. Frames thus end on multiples of 4. -EINVAL when value is odd (a frame is in
 * progress), -ERANGE past INT64_MAX. */
int timeconv_frame_begin(uint64_t value, int urgent, uint64_t *ret_begin, uint64_t *ret_end);

/* The value a window manager sends in _NET_WM_SYNC_REQUEST: the last value it saw + 240 (even,
 * so not a frame in progress, when the last one was). -ERANGE past INT64_MAX. */
int timeconv_sync_request_value(uint64_t last_seen, uint64_t *ret_value);

/* The entry of _NET_WM_SYNC_FENCES (n_fences of them) that goes with the frame begun at counter
 * value: (value / 4) % n_fences, the same for the frame's begin and its urgent begin. -EINVAL
 * for no fences. */
int timeconv_sync_fence_index(uint64_t value, size_t n_fences, size_t *ret_index);

/* A frame in CLOCK_MONOTONIC ns, a line of the frame log. */
struct timeconv_frame_times {
        uint64_t counter;
        unsigned flags;                 /* TIMECONV_FRAME_*: which of the fields below are known */
        int64_t drawn_ns;               /* when the compositor drew it (its desired/queue time) */
        int64_t drawn_uncertainty_ns;
        int64_t presented_ns;           /* when it reached the screen (the actual present time) */
        int64_t presented_uncertainty_ns;
        int64_t refresh_interval_ns;
        int64_t frame_delay_us;         /* as the compositor gave it */
};

/* drawn and timings (may be NULL: nothing presented yet) of one frame, converted through
 * timeconvd (x11_us -> monotonic): presented = drawn + the offset, its bound the conversion's.
 * A drawn time whose ms part does not fit 32 bits is taken modulo the wrap, the same X time.
 * -EINVAL when the counters differ, -ERANGE for a field out of range; besides, what
 * timeconv_convert() returns. */
int timeconv_frame_convert(struct timeconv *tc, const struct timeconv_frame_drawn *drawn,
                           const struct timeconv_frame_timings *timings,
                           struct timeconv_frame_times *ret);

/* One line of the frame log (JSON Lines, see libtimeconv(3)) to f / to fd, in one write(2) for
 * fd (with O_APPEND, lines of several writers do not mix). -EINVAL for flags outside
 * TIMECONV_FRAME_* or a NULL pointer, -ERANGE for a counter above INT64_MAX, -errno of the
 * write (-EIO when the stream does not say). */
int timeconv_frame_log_write(FILE *f, const struct timeconv_frame_times *frame);
int timeconv_frame_log_write_fd(int fd, const struct timeconv_frame_times *frame);

/* What a frame log row may say beyond struct timeconv_frame_times (flags of a record). */
enum {
        TIMECONV_FRAME_RECORD_WINDOW = 1,               /* window */
        TIMECONV_FRAME_RECORD_DRAWN = 2,                /* times.drawn_ns: the frame was drawn */
        TIMECONV_FRAME_RECORD_BEGIN = 4,                /* begin_ns */
        TIMECONV_FRAME_RECORD_END = 8,                  /* end_ns */
        TIMECONV_FRAME_RECORD_RAW = 16,                 /* drawn_x11_us (and, when presented, the offset) */
        TIMECONV_FRAME_RECORD_DRAWN_RECEIVED = 32,      /* drawn_received_ns */
        TIMECONV_FRAME_RECORD_TIMINGS_RECEIVED = 64     /* timings_received_ns */
};

/* A frame as a client saw it: its window, when it began and ended it (it set the counter),
 * the values of the messages as they came, when they came, and what they convert to. Times
 * are CLOCK_MONOTONIC ns. */
struct timeconv_frame_record {
        struct timeconv_frame_times times;      /* times.counter: the frame's end value */
        unsigned record_flags;                  /* TIMECONV_FRAME_RECORD_*: which fields are known */
        uint32_t window;                        /* the X window (or surface) id */
        int64_t begin_ns;                       /* the counter set to the frame's odd begin value */
        int64_t end_ns;                         /* the counter set to its even end value */
        uint64_t drawn_x11_us;                  /* _NET_WM_FRAME_DRAWN's time as received */
        int64_t presentation_offset_us;         /* _NET_WM_FRAME_TIMINGS' offset as received */
        int64_t drawn_received_ns;              /* _NET_WM_FRAME_DRAWN arrived */
        int64_t timings_received_ns;            /* _NET_WM_FRAME_TIMINGS arrived */
};

/* One line of the frame log for a record: the fields of timeconv_frame_log_write() and the
 * record's, null where not known (see libtimeconv(3)). Errors as timeconv_frame_log_write(),
 * and -EINVAL for record_flags outside TIMECONV_FRAME_RECORD_*. */
int timeconv_frame_log_write_record(FILE *f, const struct timeconv_frame_record *record);

/* ---- Offline: Perfetto traces ----
 *
 * A Perfetto trace (a concatenation of TracePackets, files concatenated with cat included) read as
 * trace_processor reads its clocks: ClockSnapshot packets make the snapshot set, packets say which
 * clock stamped them (timestamp_clock_id, the sequence's trace_packet_defaults, else the trace
 * clock: BOOTTIME unless a snapshot's primary_trace_clock names another). Clock names: the
 * builtin ones ("boottime", "monotonic", ...), decimal ids for the others ("128"), "ID@SEQ" for
 * a sequence-scoped id (64..127) of trusted_packet_sequence_id SEQ ("64@2"), and "mN:NAME" for a
 * clock of machine_id N != 0 ("m1:boottime"). A clock with unit_multiplier_ns counts in its
 * units. RemoteClockSync relates a machine's clocks to the host's through brackets: a host
 * snapshot between two client snapshots, the client clocks given or take half their distance.
 * timeconv_snapshots_load() takes a trace too. A malformed trace is refused with -EBADMSG and a
 * message naming the byte offset ("byte 1234: ..."; line and column 0). */
struct timeconv_trace;

/* A clock of the trace: its name, id, scope (machine; sequence, 0 unless sequence-scoped), unit,
 * whether packets stamp it with deltas, how many snapshots read it and the least and greatest of
 * their readings (in its units), and whether a snapshot relates it to another clock. */
struct timeconv_trace_clock {
        const char *name;
        uint32_t id;
        uint32_t machine;
        uint32_t sequence;
        int64_t unit_multiplier_ns;
        int incremental;
        uint64_t snapshots;
        int64_t min_ts;
        int64_t max_ts;
        int in_graph;
};

/* One packet that carries a timestamp: its index among the trace's packets (file order, those
 * of a compressed block in place), its byte offset in the file (its block's, when compressed),
 * sequence and machine, the clock that stamped it and its timestamp there (after defaults and
 * increments); then either error 0 and trace_ts, its place on the target clock, with
 * uncertainty_ns, or a negative errno with reason (a clock in no snapshot, no path, ...). */
struct timeconv_trace_packet {
        uint64_t index;
        uint64_t offset;
        uint32_t sequence;
        uint32_t machine;
        const char *clock;
        int64_t ts;
        int error;
        const char *reason;
        int64_t trace_ts;
        int64_t uncertainty_ns;
};

/* Called for each timestamped packet, in file order; a negative return stops the walk. */
typedef int (*timeconv_trace_packet_fn)(const struct timeconv_trace_packet *packet, void *userdata);

/* Maps (or reads) the file at path and reads its clocks. Errors as timeconv_snapshots_load(). */
int timeconv_trace_load(const char *path, struct timeconv_trace **ret, struct timeconv_error *ret_error);

/* The same from memory; data must stay valid until timeconv_trace_free(). */
int timeconv_trace_load_buffer(const void *data, size_t size, struct timeconv_trace **ret,
                               struct timeconv_error *ret_error);
struct timeconv_trace *timeconv_trace_free(struct timeconv_trace *trace);

/* The trace's snapshot set, for timeconv_snapshots_convert(); owned by the trace. */
const struct timeconv_snapshots *timeconv_trace_snapshots(const struct timeconv_trace *trace);

/* The name of the trace clock ("boottime" unless the trace says otherwise). */
const char *timeconv_trace_clock(const struct timeconv_trace *trace);

uint64_t timeconv_trace_count_packets(const struct timeconv_trace *trace);
size_t timeconv_trace_count_clocks(const struct timeconv_trace *trace);
int timeconv_trace_get_clock(const struct timeconv_trace *trace, size_t index, struct timeconv_trace_clock *ret);

/* Reads the trace again and places every timestamped packet on the clock to (NULL: the trace
 * clock) in mode (TIMECONV_MODE_NEAREST: trace_processor's answers), calling fn for each.
 * Errors: -ENOENT (to is no clock of the trace), -EINVAL, -ENOMEM, or what fn returned. */
int timeconv_trace_place(const struct timeconv_trace *trace, int mode, const char *to,
                         timeconv_trace_packet_fn fn, void *userdata, struct timeconv_error *ret_error);

#ifdef __cplusplus
}
#endif

#endif
