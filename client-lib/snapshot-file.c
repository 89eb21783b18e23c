/* SPDX-License-Identifier: MIT */

/* The JSON snapshot file loader (format in DESIGN.md). A file loads whole or not at all; a
 * refusal names the element ("snapshots[3].clocks[1].ts") and where it starts in the text. */

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeconv-internal.h"

#define MAX_DEPTH 6

typedef struct Declared {
        char name[SNAPSHOT_FILE_MAX_NAME + 1];
        DomainUnit unit;
} Declared;

typedef struct Loader {
        const char *text;
        size_t size;
        SnapshotGraph *graph;
        JsonStep path[MAX_DEPTH];
        size_t depth;
        Declared declared[SNAPSHOT_FILE_MAX_DOMAINS];
        size_t n_declared;
        struct timeconv_error error;
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
        return declare(l, name, &u);
}

/* X server time is in ms whether or not the file says so. */
static int declare_builtin(Loader *l, const char *name) {
        const DomainUnit *u = strcmp(name, "x11") == 0 ? &UNIT_MS_X11 :
                              strcmp(name, "x11_us") == 0 ? &UNIT_US_X11 : NULL;
        size_t index;

        if (!u || snapshot_graph_find(l->graph, name, &index) >= 0)
                return 0;
        return declare(l, name, u);
}

/* { "clocks": [ { "domain": ..., "ts": ..., "unc_ns": ... }, ... ] }: "unc_ns" (optional, >= 0) is
 * how far ts may be from the snapshot's instant (timeconvd's export: the live bound). */
static int load_snapshot(Loader *l, json_t *o) {
        static const char *const snapshot_keys[] = { "clocks", NULL };
        static const char *const clock_keys[] = { "domain", "ts", "unc_ns", NULL };
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
                const Declared *d;

                push_index(l, i);
                if (!json_is_object(c))
                        return fail(l, "not an object");
                r = check_keys(l, c, clock_keys);
                if (r >= 0)
                        r = get_name(l, c, "domain", &clocks[i].domain);
                if (r >= 0)
                        r = declare_builtin(l, clocks[i].domain);
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
        if (r < 0)
                return r;
        return snapshot_graph_finalize(l->graph);
}

void snapshot_file_set_error(struct timeconv_error *e, unsigned line, unsigned column,
                             const char *what, const char *detail) {
        if (!e)
                return;
        e->line = line;
        e->column = column;
        snprintf(e->message, sizeof(e->message), "%s%s", what, detail);
}

TIMECONV_EXPORT int timeconv_snapshots_load_buffer(const char *data, size_t size,
                                                   struct timeconv_snapshots **ret,
                                                   struct timeconv_error *ret_error) {
        struct timeconv_snapshots *s = NULL;
        Loader *l = NULL;
        json_error_t json_error;
        json_t *root;
        int r;

        if ((!data && size > 0) || !ret) {
                snapshot_file_set_error(ret_error, 0, 0, "invalid argument", "");
                return -EINVAL;
        }
        root = json_loadb(data ? data : "", size, JSON_REJECT_DUPLICATES, &json_error);
        if (!root) {
                snapshot_file_set_error(ret_error,
                                        json_error.line > 0 ? (unsigned) json_error.line : 0,
                                        json_error.column > 0 ? (unsigned) json_error.column : 0,
                                        "invalid JSON: ", json_error.text);
                return -EBADMSG;
        }

        l = calloc(1, sizeof(*l));
        s = calloc(1, sizeof(*s));
        r = l && s ? snapshot_graph_new(&l->graph) : -ENOMEM;
        if (r >= 0) {
                l->text = data;
                l->size = size;
                r = load_root(l, root);
        }
        json_decref(root);
        if (r == -EBADMSG && ret_error)
                *ret_error = l->error;
        else if (r < 0)
                snapshot_file_set_error(ret_error, 0, 0, "cannot load the snapshots: ",
                                        strerror(-r));
        if (r < 0) {
                if (l)
                        snapshot_graph_free(l->graph);
                free(s);
        } else {
                s->graph = l->graph;
                *ret = s;
        }
        free(l);
        return r;
}
