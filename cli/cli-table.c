/* SPDX-License-Identifier: MIT */

/* Rows of the domain table against CLOCK_MONOTONIC. The daemon gives each domain's rate against
 * its reference (monotonic_raw) and the offset against monotonic; the rate against monotonic is
 * (1 + a) / (1 + b) - 1 of the two rates, its bound the sum of theirs. */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli-table.h"

#define MONOTONIC "monotonic"

typedef struct Row {
        bool has_offset, has_rate, has_rate_uncertainty, has_uncertainty;
        int64_t offset_ns, offset_uncertainty_ns;
        int64_t rate_ppb, rate_uncertainty_ppb;
        int64_t uncertainty_ns;
} Row;

int64_t cli_now_monotonic_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cli_marks_add(CliMarks *m, const char *domain, int64_t monotonic_ns, int64_t step_ns, const char *kind) {
        size_t i;

        for (i = 0; i < m->n; i++)
                if (strcmp(m->marks[i].domain, domain) == 0)
                        break;
        if (i == m->n) {
                if (m->n == CLI_MARKS_MAX)
                        return;
                m->n++;
        }
        snprintf(m->marks[i].domain, sizeof(m->marks[i].domain), "%s", domain);
        m->marks[i].monotonic_ns = monotonic_ns;
        m->marks[i].step_ns = step_ns;
        snprintf(m->marks[i].kind, sizeof(m->marks[i].kind), "%s", kind ?: "step");
}

static const struct timeconv_domain *find(struct timeconv_domain **domains, const char *name) {
        for (struct timeconv_domain **d = domains; *d; d++)
                if (strcmp((*d)->name, name) == 0)
                        return *d;
        return NULL;
}

static bool sum_bound(uint64_t a, uint64_t b, int64_t *ret) {
        if (a > (uint64_t) INT64_MAX || b > (uint64_t) INT64_MAX - a)
                return false;
        *ret = (int64_t) (a + b);
        return true;
}

static Row make_row(const struct timeconv_domain *d, const struct timeconv_domain *mono) {
        bool available = d->flags & TIMECONV_DOMAIN_AVAILABLE;
        Row row = {};

        row.has_uncertainty = available && d->uncertainty_ns <= (uint64_t) INT64_MAX;
        row.uncertainty_ns = (int64_t) d->uncertainty_ns;
        if (!mono || !available || !(mono->flags & TIMECONV_DOMAIN_AVAILABLE))
                return row;
        if (d == mono) {
                row = (Row) { .has_offset = true, .has_rate = true, .has_rate_uncertainty = true,
                              .has_uncertainty = row.has_uncertainty, .uncertainty_ns = row.uncertainty_ns };
                return row;
        }
        if (d->flags & TIMECONV_DOMAIN_HAS_OFFSET) {
                row.offset_ns = d->offset_ns;
                row.has_offset = sum_bound(d->uncertainty_ns, mono->uncertainty_ns, &row.offset_uncertainty_ns);
        }
        row.rate_ppb = (int64_t) llround(((double) d->rate_ppb - (double) mono->rate_ppb) /
                                         (1.0 + (double) mono->rate_ppb * 1e-9));
        row.has_rate = true;
        if ((d->flags & mono->flags & TIMECONV_DOMAIN_HAS_RATE_UNCERTAINTY))
                row.has_rate_uncertainty = sum_bound(d->rate_uncertainty_ppb, mono->rate_uncertainty_ppb,
                                                     &row.rate_uncertainty_ppb);
        return row;
}

static void format_age(char *buf, size_t size, int64_t age_ns) {
        if (age_ns < 0)
                snprintf(buf, size, "just now");
        else if (age_ns < INT64_C(100) * 1000000000)
                snprintf(buf, size, "%.1f s ago", (double) age_ns / 1e9);
        else
                snprintf(buf, size, "%" PRIi64 " s ago", age_ns / 1000000000);
}

void cli_table_text(CliOut *out, struct timeconv_domain **domains, const CliMarks *marks, int64_t now_ns) {
        const struct timeconv_domain *mono = find(domains, MONOTONIC);
        char line[512];

        snprintf(line, sizeof(line), "%-18s %-4s %-11s %-28s %-20s %-12s %-13s%s\n", "DOMAIN", "UNIT",
                 "VERDICT", "OFFSET TO MONOTONIC", "RATE TO MONOTONIC", "UNCERTAINTY", "CALIBRATED",
                 marks ? " EVENT" : "");
        cli_out_str(out, line);
        for (struct timeconv_domain **p = domains; *p; p++) {
                const struct timeconv_domain *d = *p;
                Row row = make_row(d, mono);
                char offset[64] = "-", rate[64] = "-", unc[32] = "-", age[32] = "never", event[128] = "";
                const char *verdict = d->verdict[0] ? d->verdict :
                                      d->flags & TIMECONV_DOMAIN_AVAILABLE ? "-" : "unavailable";

                if (row.has_offset)
                        snprintf(offset, sizeof(offset), "%+" PRIi64 " +-%" PRIi64 " ns", row.offset_ns,
                                 row.offset_uncertainty_ns);
                if (row.has_rate && row.has_rate_uncertainty)
                        snprintf(rate, sizeof(rate), "%+" PRIi64 " +-%" PRIi64 " ppb", row.rate_ppb,
                                 row.rate_uncertainty_ppb);
                else if (row.has_rate)
                        snprintf(rate, sizeof(rate), "%+" PRIi64 " ppb", row.rate_ppb);
                if (row.has_uncertainty)
                        snprintf(unc, sizeof(unc), "%" PRIi64 " ns", row.uncertainty_ns);
                if (d->last_calibrated_ns > 0)
                        format_age(age, sizeof(age), now_ns - d->last_calibrated_ns);
                for (size_t i = 0; marks && i < marks->n; i++)
                        if (strcmp(marks->marks[i].domain, d->name) == 0) {
                                char when[32];

                                format_age(when, sizeof(when), now_ns - marks->marks[i].monotonic_ns);
                                if (strcmp(marks->marks[i].kind, "rate") == 0)
                                        snprintf(event, sizeof(event), " ! rate changed, %s", when);
                                else if (strcmp(marks->marks[i].kind, "restart") == 0)
                                        snprintf(event, sizeof(event), " ! restarted %+" PRIi64 " ns, %s",
                                                 marks->marks[i].step_ns, when);
                                else
                                        snprintf(event, sizeof(event), " ! discontinuity %+" PRIi64 " ns, %s",
                                                 marks->marks[i].step_ns, when);
                        }
                snprintf(line, sizeof(line), "%-18s %-4s %-11s %-28s %-20s %-12s %-13s%s\n", d->name, d->unit,
                         verdict, offset, rate, unc, age, event);
                cli_out_str(out, line);
        }
}

static void json_key(CliOut *out, const char *key) {
        cli_out_char(out, ',');
        cli_out_json_string(out, key, strlen(key));
        cli_out_char(out, ':');
}

static void json_int(CliOut *out, const char *key, bool has, int64_t v) {
        json_key(out, key);
        if (has)
                cli_out_int(out, v);
        else
                cli_out_str(out, "null");
}

static void json_bool(CliOut *out, const char *key, bool v) {
        json_key(out, key);
        cli_out_str(out, v ? "true" : "false");
}

static void json_str(CliOut *out, const char *key, const char *s) {
        json_key(out, key);
        if (s && *s)
                cli_out_json_string(out, s, strlen(s));
        else
                cli_out_str(out, "null");
}

void cli_table_json(CliOut *out, struct timeconv_domain **domains) {
        const struct timeconv_domain *mono = find(domains, MONOTONIC);

        cli_out_str(out, "[");
        for (struct timeconv_domain **p = domains; *p; p++) {
                const struct timeconv_domain *d = *p;
                Row row = make_row(d, mono);

                cli_out_str(out, p == domains ? "\n{\"name\":" : ",\n{\"name\":");
                cli_out_json_string(out, d->name, strlen(d->name));
                json_str(out, "unit", d->unit);
                json_bool(out, "available", d->flags & TIMECONV_DOMAIN_AVAILABLE);
                json_str(out, "verdict", d->verdict);
                json_str(out, "reference", d->reference);
                json_int(out, "offset_ns", row.has_offset, row.offset_ns);
                json_int(out, "offset_uncertainty_ns", row.has_offset, row.offset_uncertainty_ns);
                json_int(out, "rate_ppb", row.has_rate, row.rate_ppb);
                json_int(out, "rate_uncertainty_ppb", row.has_rate_uncertainty, row.rate_uncertainty_ppb);
                json_int(out, "uncertainty_ns", row.has_uncertainty, row.uncertainty_ns);
                json_int(out, "last_calibrated_ns", true, d->last_calibrated_ns);
                json_int(out, "rate_to_reference_ppb", true, d->rate_ppb);
                json_int(out, "resolution_ns", d->resolution_ns <= (uint64_t) INT64_MAX,
                         (int64_t) d->resolution_ns);
                json_int(out, "wrap_bits", true, d->wrap_bits);
                json_bool(out, "monotonic", d->flags & TIMECONV_DOMAIN_MONOTONIC);
                json_int(out, "perfetto_id", true, d->perfetto_id);
                cli_out_char(out, '}');
        }
        cli_out_str(out, "\n]\n");
}
