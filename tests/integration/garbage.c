/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "garbage.h"

#define BASIC_TYPES "ybnqiuxtdsog"
#define PRINTABLE " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

static const char *const variant_types[] = { "s", "x", "ai", "(sx)", "as", "a{sv}", "d" };
static const char *const signatures[] = { "", "s", "x", "ssx", "a{sv}", "(ssa{sv})" };
static const char *const paths[] = { "/", "/org/timeconv/Clock1", "/a/b_1", "/org/freedesktop/DBus" };

static void gen_type(Rng *rng, int depth, bool with_fds, char *buf, size_t *len) {
        size_t left = GARBAGE_SIGNATURE_MAX - *len, pick = depth >= 3 || left < 12 ? 0 : rng_below(rng, 10);
        const char *basic = with_fds ? BASIC_TYPES "h" : BASIC_TYPES;

        switch (pick) {
        case 6:
                buf[(*len)++] = 'a';
                gen_type(rng, depth + 1, with_fds, buf, len);
                break;
        case 7: {
                size_t n = 1 + rng_below(rng, 3);

                buf[(*len)++] = '(';
                for (size_t i = 0; i < n; i++)
                        gen_type(rng, depth + 1, with_fds, buf, len);
                buf[(*len)++] = ')';
                break;
        }
        case 8:
                buf[(*len)++] = 'a';
                buf[(*len)++] = '{';
                buf[(*len)++] = BASIC_TYPES[rng_below(rng, strlen(BASIC_TYPES))];
                gen_type(rng, depth + 1, with_fds, buf, len);
                buf[(*len)++] = '}';
                break;
        case 9:
                buf[(*len)++] = 'v';
                break;
        default:
                buf[(*len)++] = basic[rng_below(rng, strlen(basic))];
        }
}

void garbage_signature(Rng *rng, size_t max_types, bool with_fds, char *buf) {
        size_t len = 0, n = 1 + rng_below(rng, max_types);

        for (size_t i = 0; i < n && len < GARBAGE_SIGNATURE_MAX - 12; i++)
                gen_type(rng, 0, with_fds, buf, &len);
        buf[len] = 0;
}

static size_t type_length(const char *t) {
        size_t n = 1;

        switch (t[0]) {
        case 'a':
                return 1 + type_length(t + 1);
        case '(':
        case '{':
                while (t[n] && t[n] != (t[0] == '(' ? ')' : '}'))
                        n += type_length(t + n);
                return n + 1;
        default:
                return 1;
        }
}

char *garbage_string(Rng *rng, size_t length, const char *alphabet) {
        size_t n = strlen(alphabet);
        char *s = malloc(length + 1);

        if (!s)
                return NULL;
        for (size_t i = 0; i < length; i++)
                s[i] = alphabet[rng_below(rng, n)];
        s[length] = 0;
        return s;
}

static int append_basic(sd_bus_message *m, char type, Rng *rng, int fd) {
        uint64_t bits = rng_next(rng);
        union {
                uint8_t y;
                int b;
                int16_t n;
                uint16_t q;
                int32_t i;
                uint32_t u;
                int64_t x;
                uint64_t t;
                double d;
        } v = { .t = bits };
        char *s;
        int r;

        switch (type) {
        case 'b':
                v.b = bits & 1;
                break;
        case 'h':
                return sd_bus_message_append_basic(m, 'h', &fd);
        case 's':
                s = garbage_string(rng, rng_below(rng, 24), PRINTABLE);
                if (!s)
                        return -ENOMEM;
                r = sd_bus_message_append_basic(m, 's', s);
                free(s);
                return r;
        case 'o':
                return sd_bus_message_append_basic(m, 'o', paths[rng_below(rng, sizeof(paths) / sizeof(paths[0]))]);
        case 'g':
                return sd_bus_message_append_basic(
                        m, 'g', signatures[rng_below(rng, sizeof(signatures) / sizeof(signatures[0]))]);
        }
        return sd_bus_message_append_basic(m, type, &v);
}

static int append_one(sd_bus_message *m, const char *t, size_t len, Rng *rng, int fd) {
        char contents[GARBAGE_SIGNATURE_MAX + 1];
        size_t n;
        int r;

        switch (t[0]) {
        case 'a':
                memcpy(contents, t + 1, len - 1);
                contents[len - 1] = 0;
                r = sd_bus_message_open_container(m, 'a', contents);
                /* Mostly short; now and then, for fixed-size elements, long enough to matter. */
                n = len == 2 && strchr("ybnqiuxtd", contents[0]) && rng_below(rng, 8) == 0 ?
                        rng_below(rng, 2000) : rng_below(rng, 4);
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        if (contents[0] != '{') {
                                r = append_one(m, contents, len - 1, rng, fd);
                                continue;
                        }
                        {
                                char entry[GARBAGE_SIGNATURE_MAX + 1];

                                memcpy(entry, contents + 1, len - 3);
                                entry[len - 3] = 0;
                                r = sd_bus_message_open_container(m, 'e', entry);
                                if (r >= 0)
                                        r = append_basic(m, entry[0], rng, fd);
                                if (r >= 0)
                                        r = append_one(m, entry + 1, len - 4, rng, fd);
                                if (r >= 0)
                                        r = sd_bus_message_close_container(m);
                        }
                }
                return r < 0 ? r : sd_bus_message_close_container(m);
        case '(':
                memcpy(contents, t + 1, len - 2);
                contents[len - 2] = 0;
                r = sd_bus_message_open_container(m, 'r', contents);
                for (size_t i = 0; r >= 0 && contents[i]; i += type_length(contents + i))
                        r = append_one(m, contents + i, type_length(contents + i), rng, fd);
                return r < 0 ? r : sd_bus_message_close_container(m);
        case 'v': {
                const char *inner = variant_types[rng_below(rng, sizeof(variant_types) / sizeof(variant_types[0]))];

                r = sd_bus_message_open_container(m, 'v', inner);
                if (r >= 0)
                        r = append_one(m, inner, strlen(inner), rng, fd);
                return r < 0 ? r : sd_bus_message_close_container(m);
        }
        default:
                return append_basic(m, t[0], rng, fd);
        }
}

int garbage_append(sd_bus_message *m, const char *signature, Rng *rng, int fd) {
        for (size_t i = 0; signature[i]; ) {
                size_t len = type_length(signature + i);
                int r = append_one(m, signature + i, len, rng, fd);

                if (r < 0)
                        return r;
                i += len;
        }
        return 0;
}
