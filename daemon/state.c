/* SPDX-License-Identifier: MIT */

/* The state file's text: a strict parser (every key required, nothing else allowed, every number
 * in range) and its inverse. The file is ours, so anything unexpected in it means it is damaged
 * or not ours: the whole file is refused, never half used. */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "cleanup.h"
#include "time-util.h"

static int fail(StateError *error, int r, const char *code, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(StateError *error, int r, const char *code, const char *format, ...) {
        va_list ap;

        if (error) {
                error->code = code;
                va_start(ap, format);
                vsnprintf(error->text, sizeof(error->text), format, ap);
                va_end(ap);
        }
        return r;
}

/* Checks that obj has exactly the keys of keys[] (n of them): a missing one or a stranger is an
 * error. */
/* keys[0..n) are allowed, all but the last n_optional of them required. */
static int check_keys(json_t *obj, const char *const *keys, size_t n, size_t n_optional, const char *where,
                      StateError *error) {
        const char *key;
        json_t *value;

        for (size_t i = 0; i + n_optional < n; i++)
                if (!json_object_get(obj, keys[i]))
                        return fail(error, -EBADMSG, "missing", "%s: no \"%s\"", where, keys[i]);
        json_object_foreach(obj, key, value) {
                bool known = false;

                for (size_t i = 0; i < n && !known; i++)
                        known = strcmp(key, keys[i]) == 0;
                if (!known)
                        return fail(error, -EBADMSG, "unknown-key", "%s: unknown key \"%.40s\"", where, key);
        }
        return 0;
}

/* A string of printable ASCII that fits in size bytes (a name: no spaces either). */
static int get_string(json_t *obj, const char *key, bool name, char *ret, size_t size, const char *where,
                      StateError *error) {
        json_t *v = json_object_get(obj, key);
        const char *s;
        size_t len;

        if (!json_is_string(v))
                return fail(error, -EBADMSG, "type", "%s: \"%s\" is not a string", where, key);
        s = json_string_value(v);
        len = json_string_length(v);
        if (len >= size || (name && len == 0))
                return fail(error, -EBADMSG, "range", "%s: \"%s\" has %zu bytes", where, key, len);
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) s[i] < (name ? 0x21 : 0x20) || (unsigned char) s[i] > 0x7e)
                        return fail(error, -EBADMSG, "name", "%s: \"%s\" has a byte 0x%02x", where, key,
                                    (unsigned char) s[i]);
        memcpy(ret, s, len + 1);
        return 0;
}

static int get_integer(json_t *obj, const char *key, int64_t min, int64_t max, int64_t *ret, const char *where,
                       StateError *error) {
        json_t *v = json_object_get(obj, key);
        json_int_t i;

        if (!json_is_integer(v))
                return fail(error, -EBADMSG, "type", "%s: \"%s\" is not an integer", where, key);
        i = json_integer_value(v);
        if (i < min || i > max)
                return fail(error, -EBADMSG, "range", "%s: \"%s\" = %lld is out of range", where, key, (long long) i);
        *ret = (int64_t) i;
        return 0;
}

static int parse_unit(json_t *obj, DomainUnit *ret, const char *where, StateError *error) {
        static const char *const keys[] = { "period_ns", "wrap_bits", "truncates", "encoding", "events" };
        DomainUnit u = {};
        char encoding[8];
        int64_t wrap_bits = 0;
        json_t *v;
        int r;

        if (!json_is_object(obj))
                return fail(error, -EBADMSG, "type", "%s: \"unit\" is not an object", where);
        r = check_keys(obj, keys, ELEMENTSOF(keys), 1, where, error);
        if (r < 0)
                return r;
        v = json_object_get(obj, "period_ns");
        if (!json_is_number(v))
                return fail(error, -EBADMSG, "type", "%s: \"period_ns\" is not a number", where);
        u.period_ns = json_number_value(v);
        if (!isfinite(u.period_ns) || u.period_ns < 1e-3 || u.period_ns > STATE_PERIOD_NS_MAX)
                return fail(error, -EBADMSG, "range", "%s: \"period_ns\" is out of range", where);
        r = get_integer(obj, "wrap_bits", 0, 64, &wrap_bits, where, error);
        if (r < 0)
                return r;
        u.wrap_bits = (unsigned) wrap_bits;
        v = json_object_get(obj, "truncates");
        if (!json_is_boolean(v))
                return fail(error, -EBADMSG, "type", "%s: \"truncates\" is not a boolean", where);
        u.truncates = json_is_true(v);
        /* Optional: files written before event counters had it. */
        v = json_object_get(obj, "events");
        if (v && !json_is_boolean(v))
                return fail(error, -EBADMSG, "type", "%s: \"events\" is not a boolean", where);
        u.events = json_is_true(v);
        r = get_string(obj, "encoding", true, encoding, sizeof(encoding), where, error);
        if (r < 0)
                return r;
        if (strcmp(encoding, "plain") == 0)
                u.encoding = UNIT_ENCODING_PLAIN;
        else if (strcmp(encoding, "x11_us") == 0)
                u.encoding = UNIT_ENCODING_X11_US;
        else
                return fail(error, -EBADMSG, "range", "%s: unknown encoding \"%s\"", where, encoding);
        *ret = u;
        return 0;
}

static int parse_domain(json_t *obj, size_t index, StateDomain *ret, StateError *error) {
        static const char *const keys[] = { "name", "source", "device", "unit", "rate_ppb",
                                            "rate_uncertainty_ppb", "span_ns", "verdict" };
        StateDomain d = {};
        char where[32];
        int r;

        snprintf(where, sizeof(where), "domain %zu", index);
        if (!json_is_object(obj))
                return fail(error, -EBADMSG, "type", "%s is not an object", where);
        if ((r = check_keys(obj, keys, ELEMENTSOF(keys), 0, where, error)) < 0 ||
            (r = get_string(obj, "name", true, d.name, sizeof(d.name), where, error)) < 0 ||
            (r = get_string(obj, "source", true, d.source, sizeof(d.source), where, error)) < 0 ||
            (r = get_string(obj, "device", false, d.device, sizeof(d.device), where, error)) < 0 ||
            (r = parse_unit(json_object_get(obj, "unit"), &d.unit, where, error)) < 0 ||
            (r = get_integer(obj, "rate_ppb", -STATE_RATE_PPB_MAX, STATE_RATE_PPB_MAX, &d.rate_ppb, where,
                             error)) < 0 ||
            (r = get_integer(obj, "rate_uncertainty_ppb", 0, STATE_RATE_PPB_MAX, &d.rate_uncertainty_ppb, where,
                             error)) < 0 ||
            (r = get_integer(obj, "span_ns", 0, INT64_MAX, &d.span_ns, where, error)) < 0 ||
            (r = get_string(obj, "verdict", false, d.verdict, sizeof(d.verdict), where, error)) < 0)
                return r;
        *ret = d;
        return 0;
}

int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error) {
        static const char *const keys[] = { "version", "boot_id", "domains" };
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_(freep) State *s = NULL;
        json_error_t jerror;
        json_t *domains;
        int64_t version = 0;
        int r;

        if (!buf || !ret)
                return -EINVAL;
        if (size > STATE_FILE_SIZE_MAX)
                return fail(ret_error, -EFBIG, "too-large", "%zu bytes, at most %d", size, STATE_FILE_SIZE_MAX);
        root = json_loadb(buf, size, JSON_REJECT_DUPLICATES, &jerror);
        if (!root)
                return fail(ret_error, -EBADMSG, "syntax", "line %d: %s", jerror.line, jerror.text);
        if (!json_is_object(root))
                return fail(ret_error, -EBADMSG, "type", "not a JSON object");
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;

        /* The version first: a newer file may have other keys, and says so better this way. */
        r = get_integer(root, "version", INT64_MIN, INT64_MAX, &version, "file", ret_error);
        if (r < 0)
                return r;
        if (version != STATE_VERSION)
                return fail(ret_error, -EBADMSG, "version", "version %lld, expected %d", (long long) version,
                            STATE_VERSION);
        if ((r = check_keys(root, keys, ELEMENTSOF(keys), 0, "file", ret_error)) < 0 ||
            (r = get_string(root, "boot_id", false, s->boot_id, sizeof(s->boot_id), "file", ret_error)) < 0)
                return r;

        domains = json_object_get(root, "domains");
        if (!json_is_array(domains))
                return fail(ret_error, -EBADMSG, "type", "\"domains\" is not an array");
        if (json_array_size(domains) > STATE_DOMAINS_MAX)
                return fail(ret_error, -EBADMSG, "too-many", "%zu domains, at most %d", json_array_size(domains),
                            STATE_DOMAINS_MAX);
        for (size_t i = 0; i < json_array_size(domains); i++) {
                r = parse_domain(json_array_get(domains, i), i, &s->domains[i], ret_error);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < i; k++)
                        if (strcmp(s->domains[k].name, s->domains[i].name) == 0)
                                return fail(ret_error, -EBADMSG, "duplicate", "domain \"%s\" twice",
                                            s->domains[i].name);
                s->n_domains = i + 1;
        }
        *ret = *s;
        return 0;
}

int state_format(const State *s, char **ret) {
        _cleanup_(json_decrefp) json_t *root = NULL, *domains = NULL;
        _cleanup_(freep) State *copy = NULL;
        char *text;

        if (!s || !ret || s->n_domains > STATE_DOMAINS_MAX)
                return -EINVAL;
        domains = json_array();
        if (!domains)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_domains; i++) {
                const StateDomain *d = &s->domains[i];
                json_t *o;

                o = json_pack("{s:s, s:s, s:s, s:{s:f, s:i, s:b, s:b, s:s}, s:I, s:I, s:I, s:s}",
                              "name", d->name, "source", d->source, "device", d->device,
                              "unit", "period_ns", d->unit.period_ns, "wrap_bits", (int) d->unit.wrap_bits,
                              "truncates", (int) d->unit.truncates, "events", (int) d->unit.events,
                              "encoding", d->unit.encoding == UNIT_ENCODING_X11_US ? "x11_us" : "plain",
                              "rate_ppb", (json_int_t) d->rate_ppb,
                              "rate_uncertainty_ppb", (json_int_t) d->rate_uncertainty_ppb,
                              "span_ns", (json_int_t) d->span_ns, "verdict", d->verdict);
                /* json_pack fails on what JSON cannot hold (a NaN period, a NULL string). */
                if (!o)
                        return -EINVAL;
                if (json_array_append_new(domains, o) < 0)
                        return -ENOMEM;
        }
        root = json_pack("{s:i, s:s, s:O}", "version", STATE_VERSION, "boot_id", s->boot_id, "domains", domains);
        if (!root)
                return -ENOMEM;
        /* Real numbers are written with 17 digits, so a period reads back bit for bit. */
        text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        if (!text)
                return -ENOMEM;
        /* Never write what the next run would refuse. */
        copy = malloc(sizeof(*copy));
        if (!copy || state_parse(text, strlen(text), copy, NULL) < 0) {
                free(text);
                return copy ? -EINVAL : -ENOMEM;
        }
        *ret = text;
        return 0;
}
