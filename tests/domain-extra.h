/* SPDX-License-Identifier: MIT */
#pragma once

/* A source's typed status entry (DomainStatus.extras) as text, for the tests of the sources that
 * compare and print them: NULL when the status has no entry called key. Eight answers stay
 * valid at a time (a diag() may print several). */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "domain.h"

static inline const char *domain_extra_text(const DomainStatus *s, const char *key) {
        static char ring[8][64];
        static unsigned next;
        char *buf = ring[next++ % 8];

        for (size_t i = 0; i < s->n_extras; i++) {
                const DomainExtra *e = &s->extras[i];

                if (strcmp(e->key, key) != 0)
                        continue;
                switch (e->type) {
                case 's':
                        return e->s;
                case 'b':
                        return e->b ? "true" : "false";
                case 'u':
                        snprintf(buf, sizeof(ring[0]), "%" PRIu32, e->u);
                        return buf;
                case 't':
                        snprintf(buf, sizeof(ring[0]), "%" PRIu64, e->t);
                        return buf;
                case 'x':
                        snprintf(buf, sizeof(ring[0]), "%" PRIi64, e->x);
                        return buf;
                case 'd':
                        snprintf(buf, sizeof(ring[0]), "%.3f", e->d);
                        return buf;
                default:
                        return NULL;
                }
        }
        return NULL;
}
