/* SPDX-License-Identifier: MIT */

/* Rows of the domain table against CLOCK_MONOTONIC. The daemon gives each domain's rate against
 * its reference (monotonic_raw) and the offset against monotonic; the rate against monotonic is
 * (1 + a) / (1 + b) - 1 of the two rates, its bound the sum of theirs. */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli-kernel.h"
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
                if (strcmp(timeconv_domain_get_name(*d), name) == 0)
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
        bool available = timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_AVAILABLE;
        Row row = {};

        row.has_uncertainty = available && timeconv_domain_get_uncertainty_ns(d) <= (uint64_t) INT64_MAX;
        row.uncertainty_ns = (int64_t) timeconv_domain_get_uncertainty_ns(d);
        if (!mono || !available || !(timeconv_domain_get_flags(mono) & TIMECONV_DOMAIN_AVAILABLE))
                return row;
        if (d == mono) {
                row = (Row) { .has_offset = true, .has_rate = true, .has_rate_uncertainty = true,
                              .has_uncertainty = row.has_uncertainty, .uncertainty_ns = row.uncertainty_ns };
                return row;
        }
        if (timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_HAS_OFFSET) {
                row.offset_ns = timeconv_domain_get_offset_ns(d);
                row.has_offset = sum_bound(timeconv_domain_get_uncertainty_ns(d), timeconv_domain_get_uncertainty_ns(mono), &row.offset_uncertainty_ns);
        }
        row.rate_ppb = (int64_t) llround(((double) timeconv_domain_get_rate_ppb(d) - (double) timeconv_domain_get_rate_ppb(mono)) /
                                         (1.0 + (double) timeconv_domain_get_rate_ppb(mono) * 1e-9));
        row.has_rate = true;
        if ((timeconv_domain_get_flags(d) & timeconv_domain_get_flags(mono) & TIMECONV_DOMAIN_HAS_RATE_UNCERTAINTY))
                row.has_rate_uncertainty = sum_bound(timeconv_domain_get_rate_uncertainty_ppb(d), timeconv_domain_get_rate_uncertainty_ppb(mono),
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

/* A value whose bound is larger than it and than floor says nothing, not even its sign: a
 * number there would be read as a measurement. */
static bool dwarfed(int64_t value, int64_t bound, int64_t floor) {
        uint64_t magnitude = value < 0 ? 0 - (uint64_t) value : (uint64_t) value;

        return bound >= floor && (uint64_t) bound > magnitude;
}

/* Offsets known no better than a second, rates no better than 0.1 %. */
#define OFFSET_UNKNOWN_NS INT64_C(1000000000)
#define RATE_UNKNOWN_PPB INT64_C(1000000)

/* Columns as shown: wide enough for every cell, so long names (gpu-pci-0000-01-00.0) and units
 * (frame) keep the table aligned. Widths count characters, not bytes ("±" is two). */
enum { COL_NAME, COL_UNIT, COL_VERDICT, COL_OFFSET, COL_RATE, COL_UNC, COL_AGE, COL_EVENT, N_COLS };
#define CELL_MAX 96

typedef struct Cells {
        char c[N_COLS][CELL_MAX];
} Cells;

static size_t text_width(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char) *s & 0xc0) != 0x80;
        return n;
}

/* A bound in ns as "±B ns"; compact, one of 100 us or more in the largest unit it reaches, to 3
 * digits rounded up (a bound read shorter must not be tighter): "±9.75 ms" for 9742091 ns. */
static void format_bound(char *buf, size_t size, int64_t bound_ns, bool compact) {
        static const struct {
                int64_t ns;
                const char *name;
        } units[] = { { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" } };
        size_t u = 0;
        int64_t step, q;
        int decimals;

        if (!compact || bound_ns < 100000) {
                snprintf(buf, size, "\xc2\xb1%" PRIi64 " ns", bound_ns);
                return;
        }
        while (bound_ns < units[u].ns)
                u++;
        /* 3 significant digits: steps of a hundredth, a tenth or one unit. */
        decimals = bound_ns < 10 * units[u].ns ? 2 : bound_ns < 100 * units[u].ns ? 1 : 0;
        step = units[u].ns / (decimals == 2 ? 100 : decimals == 1 ? 10 : 1);
        q = bound_ns / step + (bound_ns % step != 0);
        if (decimals == 0)
                snprintf(buf, size, "\xc2\xb1%" PRIi64 " %s", q, units[u].name);
        else
                snprintf(buf, size, "\xc2\xb1%" PRIi64 ".%0*" PRIi64 " %s", q / (decimals == 2 ? 100 : 10), decimals,
                         q % (decimals == 2 ? 100 : 10), units[u].name);
}

static void row_cells(const struct timeconv_domain *d, const struct timeconv_domain *mono, const CliMarks *marks,
                      int64_t now_ns, bool compact, Cells *ret) {
        char bound[32];
        Row row = make_row(d, mono);
        char *cell;

        *ret = (Cells) {};
        snprintf(ret->c[COL_NAME], CELL_MAX, "%s", timeconv_domain_get_name(d));
        snprintf(ret->c[COL_UNIT], CELL_MAX, "%s", timeconv_domain_get_unit(d)[0] ? timeconv_domain_get_unit(d) : "-");
        /* A verdict is about a clock that answers: an unavailable one has none to show. */
        snprintf(ret->c[COL_VERDICT], CELL_MAX, "%s", !(timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_AVAILABLE) ? "unavailable" :
                 timeconv_domain_get_verdict(d)[0] ? timeconv_domain_get_verdict(d) : "-");

        cell = ret->c[COL_OFFSET];
        if (!row.has_offset)
                snprintf(cell, CELL_MAX, "-");
        else if (dwarfed(row.offset_ns, row.offset_uncertainty_ns, OFFSET_UNKNOWN_NS))
                snprintf(cell, CELL_MAX, "unknown");
        else {
                format_bound(bound, sizeof(bound), row.offset_uncertainty_ns, compact);
                snprintf(cell, CELL_MAX, "%+" PRIi64 " %s", row.offset_ns, bound);
        }

        cell = ret->c[COL_RATE];
        if (!row.has_rate)
                snprintf(cell, CELL_MAX, "-");
        else if (!row.has_rate_uncertainty)
                snprintf(cell, CELL_MAX, "%+" PRIi64 " ppb", row.rate_ppb);
        else if (dwarfed(row.rate_ppb, row.rate_uncertainty_ppb, RATE_UNKNOWN_PPB))
                snprintf(cell, CELL_MAX, "unknown");
        else
                snprintf(cell, CELL_MAX, "%+" PRIi64 " \xc2\xb1%" PRIi64 " ppb", row.rate_ppb,
                         row.rate_uncertainty_ppb);

        if (row.has_uncertainty)
                snprintf(ret->c[COL_UNC], CELL_MAX, "%" PRIi64 " ns", row.uncertainty_ns);
        else
                snprintf(ret->c[COL_UNC], CELL_MAX, "-");
        if (timeconv_domain_get_last_calibrated_ns(d) > 0)
                format_age(ret->c[COL_AGE], CELL_MAX, now_ns - timeconv_domain_get_last_calibrated_ns(d));
        else
                snprintf(ret->c[COL_AGE], CELL_MAX, "never");

        for (size_t i = 0; marks && i < marks->n; i++)
                if (strcmp(marks->marks[i].domain, timeconv_domain_get_name(d)) == 0) {
                        char when[32];

                        format_age(when, sizeof(when), now_ns - marks->marks[i].monotonic_ns);
                        if (strcmp(marks->marks[i].kind, "rate") == 0)
                                snprintf(ret->c[COL_EVENT], CELL_MAX, "! rate changed, %s", when);
                        else if (strcmp(marks->marks[i].kind, "restart") == 0)
                                snprintf(ret->c[COL_EVENT], CELL_MAX, "! restarted %+" PRIi64 " ns, %s",
                                         marks->marks[i].step_ns, when);
                        else
                                snprintf(ret->c[COL_EVENT], CELL_MAX, "! discontinuity %+" PRIi64 " ns, %s",
                                         marks->marks[i].step_ns, when);
                }
}

static void out_cells(CliOut *out, const Cells *cells, const size_t *widths, const bool *shown) {
        size_t last = 0;

        /* No padding after the last cell that has text: no trailing spaces. */
        for (size_t i = 0; i < N_COLS; i++)
                if (shown[i] && cells->c[i][0])
                        last = i;
        for (size_t i = 0; i <= last; i++) {
                size_t w = text_width(cells->c[i]);

                if (!shown[i])
                        continue;
                cli_out_str(out, cells->c[i]);
                if (i == last)
                        break;
                for (; w < widths[i] + 1; w++)
                        cli_out_char(out, ' ');
        }
        cli_out_char(out, '\n');
}

/* What the kernel says about realtime and tai, under the table. */
static void kernel_notes(CliOut *out, struct timeconv_domain **domains) {
        bool has_realtime = false, has_tai = false;
        CliKernelTime k;
        char line[256];

        for (struct timeconv_domain **p = domains; *p; p++) {
                has_realtime |= strcmp(timeconv_domain_get_name(*p), "realtime") == 0;
                has_tai |= strcmp(timeconv_domain_get_name(*p), "tai") == 0;
        }
        if ((!has_realtime && !has_tai) || cli_kernel_time(&k) < 0)
                return;
        cli_out_char(out, '\n');
        if (has_realtime) {
                if (k.synchronised)
                        snprintf(line, sizeof(line), "realtime: synchronised, says the kernel (error at most %" PRIi64
                                 " us, estimated %" PRIi64 " us)\n", k.max_error_us, k.est_error_us);
                else
                        snprintf(line, sizeof(line), "realtime: not synchronised, says the kernel (no NTP daemon "
                                 "keeps it: STA_UNSYNC)\n");
                cli_out_str(out, line);
        }
        if (has_tai) {
                if (k.tai_offset_s == 0)
                        snprintf(line, sizeof(line), "tai: equals realtime (the kernel's TAI offset is 0: no NTP "
                                 "daemon set it;\n     tai is not true TAI)\n");
                else
                        snprintf(line, sizeof(line), "tai: realtime %+" PRIi64 " s (the kernel's TAI offset)\n",
                                 k.tai_offset_s);
                cli_out_str(out, line);
        }
}

/* text after a prefix of col columns, a space before each word, broken at spaces into lines of
 * CLI_TABLE_WIDTH at most (a word longer than a line stays whole), continuations indented by 4. */
static void out_wrapped(CliOut *out, size_t col, const char *text) {
        for (;;) {
                size_t word;

                while (*text == ' ')
                        text++;
                if (!*text)
                        break;
                word = strcspn(text, " ");
                if (col > 4 && col + 1 + word > CLI_TABLE_WIDTH) {
                        cli_out_str(out, "\n    ");
                        col = 4;
                } else {
                        cli_out_char(out, ' ');
                        col++;
                }
                for (size_t i = 0; i < word; i++)
                        cli_out_char(out, text[i]);
                col += word;
                text += word;
        }
        cli_out_char(out, '\n');
}

/* Why a domain is unavailable, when the daemon says ("reason": "no X display: ..."), and why an
 * available one has its verdict ("verdict_reason": msc's "emulated", a timer and not a display). */
static void reason_notes(CliOut *out, struct timeconv_domain **domains) {
        bool first = true;

        for (struct timeconv_domain **p = domains; *p; p++) {
                bool available = timeconv_domain_get_flags(*p) & TIMECONV_DOMAIN_AVAILABLE;
                const char *state = available ? timeconv_domain_get_verdict(*p) : "unavailable";
                const char *reason;

                if (timeconv_domain_get_property_string(*p, available ? "verdict_reason" : "reason", &reason) < 0 ||
                    !reason[0])
                        continue;
                if (first)
                        cli_out_char(out, '\n');
                first = false;
                cli_out_str(out, timeconv_domain_get_name(*p));
                cli_out_str(out, ": ");
                cli_out_str(out, state);
                cli_out_str(out, ":");
                out_wrapped(out, text_width(timeconv_domain_get_name(*p)) + 3 + text_width(state), reason);
        }
}

size_t cli_table_width(bool wide, int fd) {
        struct winsize ws = {};

        if (wide)
                return 0;
        /* A terminal wider than 80 columns gets what fits in it; a pipe gets 80, the same every
         * time. */
        if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > CLI_TABLE_WIDTH)
                return ws.ws_col;
        return CLI_TABLE_WIDTH;
}

/* What the columns mean, under the table: what each figure is against, "unknown", "-". */
static void legend(CliOut *out, struct timeconv_domain **domains, const bool *shown) {
        const char *reference = NULL;

        cli_out_str(out, "\nOFFSET, RATE: the clock against monotonic, each \xc2\xb1 the bound of its error;\n"
                    "unknown: a bound larger than the figure (and than 1 s or 1000 ppm).\n"
                    "VERDICT, of X server time: identity = it is CLOCK_MONOTONIC (in ms), tracked =\n"
                    "a clock of its own; of vblanks (msc): vblank = a display's, emulated = a\n"
                    "timer's (Xvfb, Xwayland), variable = a variable refresh; -: no verdict.\n");
        if (!shown[COL_UNC])
                return;
        for (struct timeconv_domain **p = domains; *p; p++)
                if (timeconv_domain_get_reference(*p)[0] && (!reference || strcmp(reference, timeconv_domain_get_reference(*p)) == 0))
                        reference = timeconv_domain_get_reference(*p);
                else if (timeconv_domain_get_reference(*p)[0])
                        reference = "its reference";
        cli_out_str(out, "BOUND TO REFERENCE: of a conversion to the domain's reference (");
        cli_out_str(out, reference ?: "the hub");
        cli_out_str(out, "), which\nthe daemon calibrates against.\n");
}

void cli_table_text(CliOut *out, struct timeconv_domain **domains, const CliMarks *marks, int64_t now_ns) {
        cli_table_text_fit(out, domains, marks, now_ns, 0);
}

void cli_table_text_fit(CliOut *out, struct timeconv_domain **domains, const CliMarks *marks, int64_t now_ns,
                        size_t max_width) {
        static const Cells header = { { "DOMAIN", "UNIT", "VERDICT", "OFFSET TO MONOTONIC", "RATE TO MONOTONIC",
                                        "BOUND TO REFERENCE", "CALIBRATED", "EVENT" } };
        /* Left out first when the table is wider than max_width; the rest always stays. */
        static const size_t droppable[] = { COL_UNC, COL_AGE, COL_EVENT };
        const struct timeconv_domain *mono = find(domains, MONOTONIC);
        size_t n = 0, widths[N_COLS] = {}, total = 0;
        bool shown[N_COLS], dropped = false;
        _cleanup_free_ Cells *rows = NULL;

        for (size_t j = 0; j < N_COLS; j++)
                shown[j] = j != COL_EVENT || marks;
        for (struct timeconv_domain **p = domains; *p; p++)
                n++;
        rows = calloc(n + 1, sizeof(*rows));
        if (!rows) {
                cli_out_str(out, "out of memory\n");
                return;
        }
        rows[0] = header;
        /* Exact bounds when they fit, else compact ones ("±9.75 ms"), then fewer columns. */
        for (int compact = 0; compact < 2 && (compact == 0 || (max_width > 0 && total - 1 > max_width)); compact++) {
                memset(widths, 0, sizeof(widths));
                total = 0;
                for (size_t i = 0; i < n; i++)
                        row_cells(domains[i], mono, marks, now_ns, compact, &rows[i + 1]);
                for (size_t i = 0; i <= n; i++)
                        for (size_t j = 0; j < N_COLS; j++)
                                if (text_width(rows[i].c[j]) > widths[j])
                                        widths[j] = text_width(rows[i].c[j]);
                /* An EVENT column with no event yet is not there. */
                shown[COL_EVENT] &= widths[COL_EVENT] > strlen("EVENT");
                for (size_t j = 0; j < N_COLS; j++)
                        total += shown[j] ? widths[j] + 1 : 0;
        }
        for (size_t k = 0; k < sizeof(droppable) / sizeof(droppable[0]) && max_width > 0 && total - 1 > max_width;
             k++)
                if (shown[droppable[k]]) {
                        shown[droppable[k]] = false;
                        total -= widths[droppable[k]] + 1;
                        dropped |= droppable[k] != COL_EVENT;
                }
        for (size_t i = 0; i <= n; i++)
                out_cells(out, &rows[i], widths, shown);
        /* The events that did not fit as a column: a line each. */
        for (size_t i = 1; marks && !shown[COL_EVENT] && i <= n; i++)
                if (rows[i].c[COL_EVENT][0]) {
                        if (i == 1 || !rows[i - 1].c[COL_EVENT][0])
                                cli_out_char(out, '\n');
                        cli_out_str(out, rows[i].c[COL_NAME]);
                        cli_out_str(out, ": ");
                        cli_out_str(out, rows[i].c[COL_EVENT]);
                        cli_out_char(out, '\n');
                }
        legend(out, domains, shown);
        if (dropped) {
                cli_out_str(out, "(left out to fit:");
                for (size_t k = 0; k < sizeof(droppable) / sizeof(droppable[0]); k++)
                        if (droppable[k] != COL_EVENT && !shown[droppable[k]]) {
                                cli_out_str(out, k == 0 ? " " : ", ");
                                cli_out_str(out, header.c[droppable[k]]);
                        }
                cli_out_str(out, "; --wide shows them)\n");
        }
        reason_notes(out, domains);
        kernel_notes(out, domains);
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

/* A finite double as JSON reads it back unchanged (%.17g); null otherwise. */
static void json_number(CliOut *out, double v) {
        char number[64];

        if (isfinite(v))
                snprintf(number, sizeof(number), "%.17g", v);
        else
                snprintf(number, sizeof(number), "null");
        cli_out_str(out, number);
}

static void json_str(CliOut *out, const char *key, const char *s) {
        json_key(out, key);
        if (s && *s)
                cli_out_json_string(out, s, strlen(s));
        else
                cli_out_str(out, "null");
}

/* The daemon's source-specific entries, each with its own JSON type. */
static void json_properties(CliOut *out, const struct timeconv_domain *d) {
        json_key(out, "properties");
        cli_out_char(out, '{');
        for (size_t i = 0; i < timeconv_domain_count_properties(d); i++) {
                const char *key = timeconv_domain_get_property_key(d, i), *s = "";
                char number[64];
                uint64_t u = 0;
                int64_t x = 0;
                double v = 0;
                int b = 0;

                if (i > 0)
                        cli_out_char(out, ',');
                cli_out_json_string(out, key, strlen(key));
                cli_out_char(out, ':');
                switch (timeconv_domain_get_property_type(d, i)) {
                case 'b':
                        (void) timeconv_domain_get_property_bool(d, key, &b);
                        cli_out_str(out, b ? "true" : "false");
                        break;
                case 'u':
                case 't':
                        (void) timeconv_domain_get_property_uint(d, key, &u);
                        snprintf(number, sizeof(number), "%" PRIu64, u);
                        cli_out_str(out, number);
                        break;
                case 'x':
                        (void) timeconv_domain_get_property_int(d, key, &x);
                        cli_out_int(out, x);
                        break;
                case 'd':
                        (void) timeconv_domain_get_property_double(d, key, &v);
                        json_number(out, v);
                        break;
                default:
                        (void) timeconv_domain_get_property_string(d, key, &s);
                        cli_out_json_string(out, s, strlen(s));
                        break;
                }
        }
        cli_out_char(out, '}');
}

/* The kernel's word on realtime and tai (see kernel_notes()). */
static void json_kernel(CliOut *out, const struct timeconv_domain *d, const CliKernelTime *k) {
        if (strcmp(timeconv_domain_get_name(d), "realtime") == 0)
                json_bool(out, "synchronised", k->synchronised);
        else if (strcmp(timeconv_domain_get_name(d), "tai") == 0) {
                json_int(out, "tai_offset_s", true, k->tai_offset_s);
                json_bool(out, "equals_realtime", k->tai_offset_s == 0);
        }
}

void cli_table_json(CliOut *out, struct timeconv_domain **domains, bool one_line) {
        const struct timeconv_domain *mono = find(domains, MONOTONIC);
        CliKernelTime kernel;
        bool have_kernel = cli_kernel_time(&kernel) >= 0;

        cli_out_str(out, "[");
        for (struct timeconv_domain **p = domains; *p; p++) {
                const struct timeconv_domain *d = *p;
                Row row = make_row(d, mono);

                if (p != domains)
                        cli_out_char(out, ',');
                if (!one_line)
                        cli_out_char(out, '\n');
                cli_out_str(out, "{\"name\":");
                cli_out_json_string(out, timeconv_domain_get_name(d), strlen(timeconv_domain_get_name(d)));
                json_str(out, "unit", timeconv_domain_get_unit(d));
                json_bool(out, "available", timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_AVAILABLE);
                json_str(out, "verdict", timeconv_domain_get_verdict(d));
                json_str(out, "reference", timeconv_domain_get_reference(d));
                /* null where the table says "unknown" (the bound dwarfs the value), the bound
                 * still given. The rate is against monotonic, as the table's: "rate_ppb" is
                 * ListDomains' against the reference (rate_to_reference_ppb here). */
                json_int(out, "offset_ns",
                         row.has_offset && !dwarfed(row.offset_ns, row.offset_uncertainty_ns, OFFSET_UNKNOWN_NS),
                         row.offset_ns);
                json_int(out, "offset_uncertainty_ns", row.has_offset, row.offset_uncertainty_ns);
                json_int(out, "rate_to_monotonic_ppb",
                         row.has_rate && !(row.has_rate_uncertainty &&
                                           dwarfed(row.rate_ppb, row.rate_uncertainty_ppb, RATE_UNKNOWN_PPB)),
                         row.rate_ppb);
                json_int(out, "rate_to_monotonic_uncertainty_ppb", row.has_rate_uncertainty, row.rate_uncertainty_ppb);
                json_int(out, "uncertainty_ns", row.has_uncertainty, row.uncertainty_ns);
                json_int(out, "last_calibrated_ns", true, timeconv_domain_get_last_calibrated_ns(d));
                json_int(out, "rate_to_reference_ppb", true, timeconv_domain_get_rate_ppb(d));
                json_int(out, "rate_to_reference_uncertainty_ppb",
                         (timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_HAS_RATE_UNCERTAINTY) && timeconv_domain_get_rate_uncertainty_ppb(d) <= (uint64_t) INT64_MAX,
                         (int64_t) timeconv_domain_get_rate_uncertainty_ppb(d));
                json_int(out, "resolution_ns", timeconv_domain_get_resolution_ns(d) <= (uint64_t) INT64_MAX,
                         (int64_t) timeconv_domain_get_resolution_ns(d));
                json_int(out, "wrap_bits", true, timeconv_domain_get_wrap_bits(d));
                json_bool(out, "monotonic", timeconv_domain_get_flags(d) & TIMECONV_DOMAIN_MONOTONIC);
                json_int(out, "perfetto_id", true, timeconv_domain_get_perfetto_id(d));
                if (timeconv_domain_get_period_ns(d) != 0) {
                        json_key(out, "period_ns");
                        json_number(out, timeconv_domain_get_period_ns(d));
                }
                if (timeconv_domain_get_device_name(d)[0])
                        json_str(out, "device_name", timeconv_domain_get_device_name(d));
                if (timeconv_domain_get_driver(d)[0])
                        json_str(out, "driver", timeconv_domain_get_driver(d));
                json_properties(out, d);
                if (have_kernel)
                        json_kernel(out, d, &kernel);
                cli_out_char(out, '}');
        }
        cli_out_str(out, one_line ? "]" : "\n]\n");
}
