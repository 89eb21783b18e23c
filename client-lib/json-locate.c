/* SPDX-License-Identifier: MIT */

/* jansson keeps no position per value, so a schema error (a value of the wrong type in a
 * document that parsed) is located here by walking the text along the element's path. The
 * document already parsed, so the scanner can be small: it only skips well-formed values. */

#include <stdbool.h>
#include <string.h>

#include "timeconv-internal.h"

typedef struct Cursor {
        const char *p, *end;
} Cursor;

static void skip_space(Cursor *c) {
        while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
                c->p++;
}

/* At an opening quote: moves past the closing one. */
static void skip_string(Cursor *c) {
        for (c->p++; c->p < c->end; c->p++) {
                if (*c->p == '\\')
                        c->p++;
                else if (*c->p == '"') {
                        c->p++;
                        return;
                }
        }
}

static void skip_value(Cursor *c) {
        size_t depth = 0;

        if (c->p >= c->end)
                return;
        if (*c->p != '"' && *c->p != '{' && *c->p != '[') {
                /* A number or a literal: it ends at a delimiter. */
                while (c->p < c->end && !strchr(",]} \t\r\n", *c->p))
                        c->p++;
                return;
        }
        do {
                if (*c->p == '"') {
                        skip_string(c);
                        continue;
                }
                if (*c->p == '{' || *c->p == '[')
                        depth++;
                else if (*c->p == '}' || *c->p == ']')
                        depth--;
                c->p++;
        } while (depth > 0 && c->p < c->end);
}

/* At a key's opening quote: whether its raw text is exactly key (escaped keys never match). */
static bool key_is(const Cursor *c, const char *key) {
        size_t n = strlen(key);

        return (size_t) (c->end - c->p) > n + 1 && memcmp(c->p + 1, key, n) == 0 && c->p[n + 1] == '"';
}

/* From the start of an object or array to the start of the member or element, or false. */
static bool step_into(Cursor *c, const JsonStep *step) {
        if (c->p >= c->end || *c->p != (step->key ? '{' : '['))
                return false;
        c->p++;
        for (size_t k = 0;; k++) {
                bool found;

                skip_space(c);
                if (c->p >= c->end || *c->p == '}' || *c->p == ']')
                        return false;
                if (step->key) {
                        found = key_is(c, step->key);
                        skip_string(c);
                        skip_space(c);
                        if (c->p >= c->end || *c->p != ':')
                                return false;
                        c->p++;
                        skip_space(c);
                } else
                        found = k == step->index;
                if (found)
                        return true;
                skip_value(c);
                skip_space(c);
                if (c->p >= c->end || *c->p != ',')
                        return false;
                c->p++;
        }
}

void json_locate(const char *text, size_t size, const JsonStep *path, size_t n_steps,
                 unsigned *ret_line, unsigned *ret_column) {
        Cursor c = { text, text + size };
        const char *at, *line_start = text;
        unsigned line = 1, column = 1;

        skip_space(&c);
        at = c.p;
        for (size_t i = 0; i < n_steps; i++) {
                if (!step_into(&c, &path[i]))
                        break;
                at = c.p;
        }

        for (const char *p = text; p < at; p++)
                if (*p == '\n') {
                        line++;
                        line_start = p + 1;
                }
        /* Characters, as jansson counts its columns: UTF-8 continuation bytes do not count. */
        for (const char *p = line_start; p < at; p++)
                column += ((unsigned char) *p & 0xc0) != 0x80;
        *ret_line = line;
        *ret_column = column;
}
