/* SPDX-License-Identifier: MIT */

/* The JSON snapshot file loader (format in DESIGN.md). A file loads whole or not at all; a
 * refusal names the element ("snapshots[3].clocks[1].ts") and where it starts in the text. */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "timeconv-internal.h"

#define MAX_DEPTH 6
#define MACHINE_PREFIX_MAX 16           /* "m4294967295:" */
#define PREFIXED_NAME_MAX (MACHINE_PREFIX_MAX + SNAPSHOT_FILE_MAX_NAME + 1)

typedef struct Declared {
        char name[PREFIXED_NAME_MAX];
        DomainUnit unit;
} Declared;

/* A reading of the shared clock and the kernel's maxerror of it then (-1: not said). */
typedef struct SharedReading {
        int64_t ts;
        int64_t utc_maxerror_ns;
} SharedReading;

typedef struct Loader {
        const char *text;
        size_t size;
        SnapshotGraph *graph;
        JsonStep path[MAX_DEPTH];
        size_t depth;
        Declared declared[SNAPSHOT_FILE_MAX_DOMAINS];
        size_t n_declared;
        struct timeconv_error error;
        /* timeconv_snapshots_load_machines(): the file's machine prefix ("" for machine 0) and
         * its readings of the shared clock, which relate it to machine 0 */
        char prefix[MACHINE_PREFIX_MAX];
        const char *shared;
        SharedReading *shared_readings;        /* this file's */
        size_t n_shared, allocated_shared;
        SharedReading *zero;                   /* machine 0's, sorted by ts */
        size_t n_zero;
        char names[SNAPSHOT_FILE_MAX_DOMAINS][PREFIXED_NAME_MAX];      /* one snapshot's, prefixed */
} Loader;

typedef struct UnitName {
        const char *name;
        double period_ns;
} UnitName;

static const UnitName unit_names[] = {
        /* "tick" and "frame" as timeconvd names them in ListDomains and export; a period is
         * given with them ("period_ns"), whatever the name. */
        { "ns", 1.0 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "ticks", 0.0 }, { "tick", 0.0 },
        { "frame", 0.0 }, { "frames", 0.0 },
};

static void push_key(Loader *l, const char *key) {
        l->path[l->depth++] = (JsonStep) { .key = key };
}

static void push_index(Loader *l, size_t index) {
        l->path[l->depth++] = (JsonStep) { .index = index };
}

/* Records "path: message" and where the element at path starts; returns -EBADMSG. */
static int fail(Loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(Loader *l, const char *fmt, ...) {
        char *m = l->error.message;
        size_t size = sizeof(l->error.message), n = 0;
        va_list ap;

        for (size_t i = 0; i < l->depth && n < size; i++)
                n += (size_t) (l->path[i].key ?
                        snprintf(m + n, size - n, "%s%s", i ? "." : "", l->path[i].key) :
                        snprintf(m + n, size - n, "[%zu]", l->path[i].index));
        if (n < size)
                n += (size_t) snprintf(m + n, size - n, "%s", l->depth ? ": " : "");
        if (n < size) {
                va_start(ap, fmt);
                vsnprintf(m + n, size - n, fmt, ap);
                va_end(ap);
        }
        json_locate(l->text, l->size, l->path, l->depth, &l->error.line, &l->error.column);
        return -EBADMSG;
}

/* Every key of o must be one of the NULL-terminated list. */
static int check_keys(Loader *l, json_t *o, const char *const *allowed) {
        const char *key;
        json_t *v;

        json_object_foreach(o, key, v) {
                size_t i;

                for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
                        ;
                if (!allowed[i]) {
                        push_key(l, key);
                        return fail(l, "unknown key");
                }
        }
        return 0;
}

/* Reads the domain name at o's key "name" or "domain". */
static int get_name(Loader *l, json_t *o, const char *key, const char **ret) {
        json_t *v = json_object_get(o, key);
        const char *s;
        size_t n;

        if (!v)
                return fail(l, "missing \"%s\"", key);
        push_key(l, key);
        if (!json_is_string(v))
                return fail(l, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        if (n == 0)
                return fail(l, "empty domain name");
        if (n > SNAPSHOT_FILE_MAX_NAME)
                return fail(l, "domain name longer than %d bytes", SNAPSHOT_FILE_MAX_NAME);
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return fail(l, "control character in a domain name");
        l->depth--;
        *ret = s;
        return 0;
}

/* name with the file's machine prefix, in buf (PREFIXED_NAME_MAX bytes). */
static const char *prefixed(const Loader *l, const char *name, char *buf) {
        snprintf(buf, PREFIXED_NAME_MAX, "%s%s", l->prefix, name);
        return buf;
}

static int add_shared(Loader *l, int64_t ts, int64_t utc_maxerror_ns) {
        if (GREEDY_REALLOC(l->shared_readings, l->allocated_shared, l->n_shared + 1, 64) < 0)
                return -ENOMEM;
        l->shared_readings[l->n_shared++] = (SharedReading) { ts, utc_maxerror_ns };
        return 0;
}

/* "utc_maxerror_ns" and "utc_esterror_ns" (optional, >= 0): how far from UTC the kernel had the
 * clock (timeconvd's export, on realtime); the first is returned, -1 when absent. */
static int load_utc(Loader *l, json_t *c, int64_t *ret_maxerror_ns) {
        static const char *const keys[] = { "utc_maxerror_ns", "utc_esterror_ns" };

        *ret_maxerror_ns = -1;
        for (size_t k = 0; k < 2; k++) {
                json_t *v = json_object_get(c, keys[k]);

                if (!v)
                        continue;
                push_key(l, keys[k]);
                if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    json_integer_value(v) > SNAPSHOT_UNCERTAINTY_MAX_NS)
                        return fail(l, "not an integer from 0 to 2^58");
                l->depth--;
                if (k == 0)
                        *ret_maxerror_ns = json_integer_value(v);
        }
        return 0;
}

static const Declared *find_declared(const Loader *l, const char *name) {
        for (size_t i = 0; i < l->n_declared; i++)
                if (strcmp(l->declared[i].name, name) == 0)
                        return &l->declared[i];
        return NULL;
}

static int declare(Loader *l, const char *name, const DomainUnit *unit) {
        int r = snapshot_graph_declare(l->graph, name, unit);

        if (r == -EEXIST)
                return fail(l, "domain \"%s\" declared twice", name);
        if (r == -ENOSPC)
                return fail(l, "more than %d domains", SNAPSHOT_FILE_MAX_DOMAINS);
        if (r == -EINVAL)
                return fail(l, "invalid unit");
        if (r < 0)
                return r;
        l->declared[l->n_declared] = (Declared) { .unit = *unit };
        strcpy(l->declared[l->n_declared++].name, name);
        return 0;
}

/* { "name": ..., "unit": ..., "period_ns": ..., "wrap_bits": ..., "truncates": ..., "events": ... } */
static int load_domain(Loader *l, json_t *o) {
        static const char *const keys[] = {
                "name", "unit", "period_ns", "wrap_bits", "truncates", "events", NULL
        };
        json_t *unit = json_object_get(o, "unit"), *period = json_object_get(o, "period_ns");
        json_t *wrap = json_object_get(o, "wrap_bits"), *trunc = json_object_get(o, "truncates");
        json_t *events = json_object_get(o, "events");
        DomainUnit u = UNIT_NS;
        const UnitName *un = &unit_names[0];
        const char *name;
        int r;

        if (!json_is_object(o))
                return fail(l, "not an object");
        r = check_keys(l, o, keys);
        if (r >= 0)
                r = get_name(l, o, "name", &name);
        if (r < 0)
                return r;
        if (unit) {
                push_key(l, "unit");
                if (!json_is_string(unit))
                        return fail(l, "not a string");
                for (un = unit_names; un < unit_names + sizeof(unit_names) / sizeof(*un); un++)
                        if (strcmp(un->name, json_string_value(unit)) == 0)
                                break;
                if (un == unit_names + sizeof(unit_names) / sizeof(*un))
                        return fail(l, "unknown unit (ns, us, ms, s, tick(s) or frame(s))");
                l->depth--;
        }
        u.period_ns = un->period_ns;
        if (period) {
                push_key(l, "period_ns");
                if (!json_is_number(period) || !(json_number_value(period) > 0))
                        return fail(l, "not a number > 0");
                if (un->period_ns > 0 && json_number_value(period) != un->period_ns)
                        return fail(l, "contradicts the unit \"%s\"", un->name);
                u.period_ns = json_number_value(period);
                l->depth--;
        } else if (!(u.period_ns > 0))
                return fail(l, "unit \"%s\" needs \"period_ns\"", un->name);
        if (wrap) {
                push_key(l, "wrap_bits");
                if (!json_is_integer(wrap) || json_integer_value(wrap) < 0 ||
                    json_integer_value(wrap) > 64)
                        return fail(l, "not an integer from 0 to 64");
                u.wrap_bits = (unsigned) json_integer_value(wrap);
                l->depth--;
        }
        if (trunc) {
                push_key(l, "truncates");
                if (!json_is_boolean(trunc))
                        return fail(l, "not true or false");
                u.truncates = json_is_true(trunc);
                l->depth--;
        }
        if (events) {
                push_key(l, "events");
                if (!json_is_boolean(events))
                        return fail(l, "not true or false");
                u.events = json_is_true(events);
                l->depth--;
        }
        /* timeconvd's x11_us is high-precision X time, whose ms part wraps at 32 bits inside the
         * value (DESIGN.md): exported as plain "us", it is read as that encoding, as live reads it. */
        if (strcmp(name, "x11_us") == 0 && u.period_ns == 1000.0 && (u.wrap_bits == 0 || u.wrap_bits == 64))
                u.encoding = UNIT_ENCODING_X11_US;
        return declare(l, prefixed(l, name, l->names[0]), &u);
}

/* X server time is in ms whether or not the file says so (name as in the file, full with its
 * machine prefix). */
static int declare_builtin(Loader *l, const char *name, const char *full) {
        const DomainUnit *u = strcmp(name, "x11") == 0 ? &UNIT_MS_X11 :
                              strcmp(name, "x11_us") == 0 ? &UNIT_US_X11 : NULL;
        size_t index;

        if (!u || snapshot_graph_find(l->graph, full, &index) >= 0)
                return 0;
        return declare(l, full, u);
}

/* "rate_ppb" and "rate_unc_ppb" of a clock, both or neither: its rate against the snapshot's
 * reference, minus 1, and a bound of it (timeconvd's export: its model's). */
static int load_rate(Loader *l, json_t *rate, json_t *rate_unc, SnapshotClock *c) {
        c->has_rate = false;
        c->rate_ppb = c->rate_uncertainty_ppb = 0;
        if (!rate && !rate_unc)
                return 0;
        if (!rate || !rate_unc)
                return fail(l, "\"rate_ppb\" and \"rate_unc_ppb\" go together");
        push_key(l, "rate_ppb");
        if (!json_is_integer(rate) || json_integer_value(rate) < -SNAPSHOT_FILE_MAX_RATE_PPB ||
            json_integer_value(rate) > SNAPSHOT_FILE_MAX_RATE_PPB)
                return fail(l, "not an integer from -10^8 to 10^8");
        l->depth--;
        push_key(l, "rate_unc_ppb");
        if (!json_is_integer(rate_unc) || json_integer_value(rate_unc) < 0 ||
            json_integer_value(rate_unc) > SNAPSHOT_FILE_MAX_RATE_PPB)
                return fail(l, "not an integer from 0 to 10^8");
        l->depth--;
        c->has_rate = true;
        c->rate_ppb = json_integer_value(rate);
        c->rate_uncertainty_ppb = json_integer_value(rate_unc);
        return 0;
}

/* "frac_ns" of a clock of a truncating domain (timeconvd's export of X time): where in ts's unit
 * the instant was, in ns from its start (0 to the period - 1). */
static int load_frac(Loader *l, json_t *frac, const Declared *d, SnapshotClock *c) {
        c->has_frac = false;
        c->frac_ns = 0;
        if (!frac)
                return 0;
        push_key(l, "frac_ns");
        if (!d || !d->unit.truncates)
                return fail(l, "only for a domain that truncates");
        if (!json_is_integer(frac) || json_integer_value(frac) < 0 ||
            (double) json_integer_value(frac) >= ceil(d->unit.period_ns))
                return fail(l, "not an integer from 0 to the period - 1");
        l->depth--;
        c->has_frac = true;
        c->frac_ns = json_integer_value(frac);
        return 0;
}

/* { "clocks": [ { "domain": ..., "ts": ..., "unc_ns": ... }, ... ] }: "unc_ns" (optional, >= 0) is
 * how far ts may be from the snapshot's instant (timeconvd's export: the live bound). */
static int load_snapshot(Loader *l, json_t *o) {
        static const char *const snapshot_keys[] = { "clocks", NULL };
        static const char *const clock_keys[] = { "domain", "ts", "unc_ns", "rate_ppb", "rate_unc_ppb", "frac_ns",
                                                  "utc_maxerror_ns", "utc_esterror_ns", NULL };
        SnapshotClock clocks[SNAPSHOT_FILE_MAX_DOMAINS];
        json_t *array = json_object_get(o, "clocks"), *c;
        size_t n, i;
        int r;

        if (!json_is_object(o))
                return fail(l, "not an object");
        r = check_keys(l, o, snapshot_keys);
        if (r < 0)
                return r;
        if (!array)
                return fail(l, "missing \"clocks\"");
        push_key(l, "clocks");
        n = json_array_size(array);
        if (!json_is_array(array) || n < 2)
                return fail(l, "not an array of two clocks or more");
        if (n > SNAPSHOT_FILE_MAX_DOMAINS)
                return fail(l, "more than %d clocks", SNAPSHOT_FILE_MAX_DOMAINS);

        json_array_foreach(array, i, c) {
                json_t *ts = json_object_get(c, "ts"), *unc = json_object_get(c, "unc_ns");
                json_t *rate = json_object_get(c, "rate_ppb"), *rate_unc = json_object_get(c, "rate_unc_ppb");
                const Declared *d;
                const char *name = NULL;
                int64_t utc_maxerror_ns = -1;

                push_index(l, i);
                if (!json_is_object(c))
                        return fail(l, "not an object");
                r = check_keys(l, c, clock_keys);
                if (r >= 0)
                        r = get_name(l, c, "domain", &name);
                if (r >= 0) {
                        clocks[i].domain = prefixed(l, name, l->names[i]);
                        r = declare_builtin(l, name, clocks[i].domain);
                }
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(clocks[j].domain, clocks[i].domain) == 0)
                                return fail(l, "domain \"%s\" twice in one snapshot", clocks[i].domain);
                if (!ts)
                        return fail(l, "missing \"ts\"");
                push_key(l, "ts");
                if (!json_is_integer(ts))
                        return fail(l, "not an integer");
                clocks[i].ts = json_integer_value(ts);
                d = find_declared(l, clocks[i].domain);
                if (d && unit_to_ns(&d->unit, clocks[i].ts, &(int64_t) { 0 }) < 0)
                        return fail(l, "out of range for the domain's unit");
                l->depth--;
                clocks[i].uncertainty_ns = 0;
                if (unc) {
                        push_key(l, "unc_ns");
                        if (!json_is_integer(unc) || json_integer_value(unc) < 0 ||
                            json_integer_value(unc) > SNAPSHOT_UNCERTAINTY_MAX_NS)
                                return fail(l, "not an integer from 0 to 2^58");
                        clocks[i].uncertainty_ns = json_integer_value(unc);
                        l->depth--;
                }
                r = load_rate(l, rate, rate_unc, &clocks[i]);
                if (r >= 0)
                        r = load_frac(l, json_object_get(c, "frac_ns"), d, &clocks[i]);
                if (r >= 0)
                        r = load_utc(l, c, &utc_maxerror_ns);
                if (r >= 0 && l->shared && strcmp(name, l->shared) == 0)
                        r = add_shared(l, clocks[i].ts, utc_maxerror_ns);
                if (r < 0)
                        return r;
                l->depth--;
        }
        l->depth--;
        r = snapshot_graph_add(l->graph, clocks, n);
        if (r == -ENOSPC)
                return fail(l, "more than %d domains", SNAPSHOT_FILE_MAX_DOMAINS);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? fail(l, "refused (%s)", strerror(-r)) : 0;
}

/* root's array key, each element by load() (with its path in the errors): -ENOENT when absent. */
static int load_array(Loader *l, json_t *root, const char *key, size_t max, int (*load)(Loader *, json_t *)) {
        json_t *a = json_object_get(root, key), *v;
        size_t i;
        int r;

        if (!a)
                return -ENOENT;
        push_key(l, key);
        if (!json_is_array(a))
                return fail(l, "not an array");
        if (json_array_size(a) > max)
                return fail(l, "more than %zu %s", max, key);
        json_array_foreach(a, i, v) {
                push_index(l, i);
                r = load(l, v);
                if (r < 0)
                        return r;
                l->depth--;
        }
        l->depth--;
        return 0;
}

static int load_root(Loader *l, json_t *root) {
        static const char *const keys[] = { "snapshots", "domains", NULL };
        int r;

        if (!json_is_object(root))
                return fail(l, "not a JSON object");
        r = check_keys(l, root, keys);
        if (r < 0)
                return r;
        /* "domains" is optional; its own limit is load_domain()'s (more names than domains). */
        r = load_array(l, root, "domains", SIZE_MAX, load_domain);
        if (r < 0 && r != -ENOENT)
                return r;
        r = load_array(l, root, "snapshots", SNAPSHOT_FILE_MAX_SNAPSHOTS, load_snapshot);
        if (r == -ENOENT)
                return fail(l, "missing \"snapshots\"");
        return r < 0 ? r : 0;
}

void snapshot_file_set_error(struct timeconv_error *e, unsigned line, unsigned column,
                             const char *what, const char *detail) {
        if (!e)
                return;
        e->line = line;
        e->column = column;
        snprintf(e->message, sizeof(e->message), "%s%s", what, detail);
}

/* One JSON file into l->graph (not finalized). */
static int load_json(Loader *l, const char *data, size_t size, struct timeconv_error *ret_error) {
        json_error_t json_error;
        json_t *root;
        int r;

        root = json_loadb(data ? data : "", size, JSON_REJECT_DUPLICATES, &json_error);
        if (!root) {
                snapshot_file_set_error(ret_error,
                                        json_error.line > 0 ? (unsigned) json_error.line : 0,
                                        json_error.column > 0 ? (unsigned) json_error.column : 0,
                                        "invalid JSON: ", json_error.text);
                return -EBADMSG;
        }
        l->text = data;
        l->size = size;
        l->depth = 0;
        r = load_root(l, root);
        json_decref(root);
        if (r == -EBADMSG && ret_error)
                *ret_error = l->error;
        else if (r < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot load the snapshots: ", strerror(-r));
        return r;
}

/* The kernel's maxerror grows by 500 us a second while no NTP update comes (MAXFREQ): machine
 * 0's bound at ts is its nearest reading's, grown by that over the distance. -1 for none. */
static int64_t zero_maxerror_ns(const Loader *l, int64_t ts) {
        size_t lo = 0, hi = l->n_zero;
        int64_t best = -1;

        while (hi - lo > 1) {           /* the last reading at or before ts, else the first */
                size_t mid = lo + (hi - lo) / 2;

                if (l->zero[mid].ts <= ts)
                        lo = mid;
                else
                        hi = mid;
        }
        for (size_t k = lo; k < l->n_zero && k <= lo + 1; k++) {
                __int128 d = (__int128) ts - l->zero[k].ts, grown;

                grown = (__int128) l->zero[k].utc_maxerror_ns + ((d < 0 ? -d : d) + 1999) / 2000;
                if (grown <= SNAPSHOT_UNCERTAINTY_MAX_NS && (best < 0 || grown < best))
                        best = (int64_t) grown;
        }
        return best;
}

static int compare_ts(const void *a, const void *b) {
        const SharedReading *x = a, *y = b;

        return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Machine 0's readings of the shared clock that say their maxerror, sorted, for the bounds. */
static int keep_zero(Loader *l) {
        size_t n = 0;

        for (size_t i = 0; i < l->n_shared; i++)
                if (l->shared_readings[i].utc_maxerror_ns >= 0)
                        l->shared_readings[n++] = l->shared_readings[i];
        l->zero = l->shared_readings;
        l->n_zero = n;
        l->shared_readings = NULL;
        l->n_shared = l->allocated_shared = 0;
        if (l->n_zero > 0)      /* qsort() may not be given NULL, even for nothing */
                qsort(l->zero, l->n_zero, sizeof(*l->zero), compare_ts);
        return 0;
}

/* Machine N's readings of the shared clock, each as a snapshot of it with machine 0's, which
 * reads the same time scale within bound_ns, or (bound_ns < 0) within both kernels' maxerror
 * then: a reading without one relates nothing. */
static int add_bridges(Loader *l, const char *shared, int64_t bound_ns, struct timeconv_error *ret_error) {
        char other[PREFIXED_NAME_MAX];
        int r = 0;

        prefixed(l, shared, other);
        for (size_t i = 0; r >= 0 && i < l->n_shared; i++) {
                const SharedReading *sr = &l->shared_readings[i];
                int64_t unc_ns = bound_ns, zero_ns;

                if (bound_ns < 0) {
                        zero_ns = zero_maxerror_ns(l, sr->ts);
                        if (sr->utc_maxerror_ns < 0 || zero_ns < 0 ||
                            zero_ns > SNAPSHOT_UNCERTAINTY_MAX_NS - sr->utc_maxerror_ns)
                                continue;
                        unc_ns = zero_ns + sr->utc_maxerror_ns;
                }
                r = snapshot_graph_add(l->graph, (const SnapshotClock[]) {
                                { .domain = shared, .ts = sr->ts, .uncertainty_ns = unc_ns },
                                { .domain = other, .ts = sr->ts } }, 2);
        }
        if (r < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot relate the machines: ", strerror(-r));
        return r;
}

static struct timeconv_snapshots *loader_done(Loader *l, int r, struct timeconv_snapshots *s) {
        if (r < 0) {
                if (l)
                        snapshot_graph_free(l->graph);
                free(s);
                s = NULL;
        } else
                s->graph = l->graph;
        if (l) {
                free(l->shared_readings);
                free(l->zero);
        }
        free(l);
        return s;
}

TIMECONV_EXPORT int timeconv_snapshots_load_machines(const struct timeconv_snapshot_source *sources, size_t n,
                                                     const char *shared, int64_t shared_bound_ns,
                                                     struct timeconv_snapshots **ret,
                                                     struct timeconv_error *ret_error) {
        struct timeconv_snapshots *s = NULL;
        Loader *l = NULL;
        size_t n_zero = 0, zero = 0;
        int r;

        for (size_t i = 0; sources && i < n; i++)
                if (sources[i].machine == 0) {
                        n_zero++;
                        zero = i;
                }
        if (!sources || n == 0 || n_zero != 1 || !shared || !*shared || strlen(shared) > SNAPSHOT_FILE_MAX_NAME ||
            shared_bound_ns < TIMECONV_SHARED_BOUND_FROM_FILES || shared_bound_ns > SNAPSHOT_UNCERTAINTY_MAX_NS ||
            !ret) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument",
                                        n_zero != 1 ? ": one file of machine 0, and only one" : "");
                return -EINVAL;
        }
        l = calloc(1, sizeof(*l));
        s = calloc(1, sizeof(*s));
        r = l && s ? snapshot_graph_new(&l->graph) : -ENOMEM;
        if (r < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot load the snapshots: ", strerror(-r));
        /* machine 0 first: the others' bounds may need its maxerror */
        for (size_t k = 0, i = zero; r >= 0 && k < n; k++, i = k <= zero ? k - 1 : k) {
                if (perfetto_trace_detect(sources[i].data, sources[i].size)) {
                        snapshot_file_set_error(ret_error, 0, 0, "a Perfetto trace: ",
                                                "its machines are in it (machine_id), not given here");
                        r = -EBADMSG;
                        break;
                }
                l->prefix[0] = 0;
                if (sources[i].machine != 0)
                        snprintf(l->prefix, sizeof(l->prefix), "m%u:", sources[i].machine);
                l->shared = shared;
                l->n_shared = 0;
                r = load_json(l, sources[i].data, sources[i].size, ret_error);
                if (r >= 0)
                        r = sources[i].machine == 0 ? keep_zero(l) : add_bridges(l, shared, shared_bound_ns, ret_error);
        }
        if (r >= 0 && (r = snapshot_graph_finalize(l->graph)) < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot load the snapshots: ", strerror(-r));
        s = loader_done(l, r, s);
        if (r >= 0)
                *ret = s;
        return r;
}

TIMECONV_EXPORT int timeconv_snapshots_load_buffer(const char *data, size_t size,
                                                   struct timeconv_snapshots **ret,
                                                   struct timeconv_error *ret_error) {
        struct timeconv_snapshots *s = NULL;
        Loader *l = NULL;
        int r;

        if ((!data && size > 0) || !ret) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument", "");
                return -EINVAL;
        }
        if (perfetto_trace_detect(data, size))
                return perfetto_snapshots_load(data, size, ret, ret_error);
        l = calloc(1, sizeof(*l));
        s = calloc(1, sizeof(*s));
        r = l && s ? snapshot_graph_new(&l->graph) : -ENOMEM;
        if (r < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot load the snapshots: ", strerror(-r));
        if (r >= 0)
                r = load_json(l, data, size, ret_error);
        if (r >= 0 && (r = snapshot_graph_finalize(l->graph)) < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot load the snapshots: ", strerror(-r));
        s = loader_done(l, r, s);
        if (r >= 0)
                *ret = s;
        return r;
}
