/* SPDX-License-Identifier: MIT */

/* The daemon's state-file parser (daemon/state.h: state_parse()) on any bytes. What it refuses
 * leaves the caller's state untouched and says why; what it accepts must format again
 * (state_format()) and read back field for field, the period bit for bit: the daemon never
 * writes a file the next run would refuse, nor one that means something else. */

#include <errno.h>

#include "fuzz-input.h"
#include "state.h"

static bool domain_equal(const StateDomain *a, const StateDomain *b) {
        return strcmp(a->name, b->name) == 0 && strcmp(a->source, b->source) == 0 &&
               strcmp(a->device, b->device) == 0 &&
               memcmp(&a->unit.period_ns, &b->unit.period_ns, sizeof(double)) == 0 &&
               a->unit.wrap_bits == b->unit.wrap_bits && a->unit.truncates == b->unit.truncates &&
               a->unit.events == b->unit.events &&
               a->unit.encoding == b->unit.encoding && a->rate_ppb == b->rate_ppb &&
               a->rate_uncertainty_ppb == b->rate_uncertainty_ppb && a->span_ns == b->span_ns &&
               strcmp(a->verdict, b->verdict) == 0;
}

static void check_round_trip(const State *s) {
        StateError error = {};
        State *back;
        char *text = NULL;
        int r;

        fuzz_check(s->n_domains <= STATE_DOMAINS_MAX, "%zu domains", s->n_domains);
        r = state_format(s, &text);
        if (r == -ENOMEM)
                return;
        fuzz_check(r == 0, "a parsed state does not format: %d", r);

        back = calloc(1, sizeof(*back));
        if (back) {
                r = state_parse(text, strlen(text), back, &error);
                fuzz_check(r == 0 || r == -ENOMEM, "the formatted state is refused: %d %s: %s\n%s", r,
                           error.code ? error.code : "", error.text, text);
                if (r == 0) {
                        fuzz_check(back->n_domains == s->n_domains, "%zu domains back, %zu before",
                                   back->n_domains, s->n_domains);
                        fuzz_check(strcmp(back->boot_id, s->boot_id) == 0, "boot id changed");
                        for (size_t i = 0; i < s->n_domains; i++)
                                fuzz_check(domain_equal(&back->domains[i], &s->domains[i]),
                                           "domain %zu changed:\n%s", i, text);
                }
                free(back);
        }
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        StateError error = { .code = NULL };
        State *s, *before;
        int r;

        s = malloc(sizeof(*s));
        before = malloc(sizeof(*before));
        if (!s || !before) {
                free(s);
                free(before);
                return 0;
        }
        memset(s, 0xa5, sizeof(*s));
        memcpy(before, s, sizeof(*s));

        r = state_parse((const char *) data, size, s, &error);
        fuzz_check(r == 0 || r == -EBADMSG || r == -EFBIG || r == -ENOMEM, "parse returned %d", r);
        if (r < 0) {
                fuzz_check(memcmp(s, before, sizeof(*s)) == 0, "state written on failure");
                fuzz_check(r == -ENOMEM || (error.code && *error.code), "a refusal without a name");
                fuzz_check(memchr(error.text, 0, sizeof(error.text)), "text not terminated");
        } else
                check_round_trip(s);

        free(before);
        free(s);
        return 0;
}
