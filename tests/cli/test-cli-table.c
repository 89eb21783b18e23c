/* SPDX-License-Identifier: MIT */

/* The table of `timeconv domains` and `timeconv monitor` from domains made up here, so that
 * what the daemon rarely shows is shown on purpose: a long GPU name and a long application
 * name, the unit "frame", an unavailable domain, offsets and rates whose bound dwarfs them
 * (read "unknown"), small ones that stay numbers. Every column of every row starts where its
 * header does, counted in characters ("±" is two bytes, one character). The JSON keeps every
 * field and property, typed, and timeconv(1) documents each field; where the table says
 * "unknown" the JSON says null (the bound still given), and its rate against monotonic is not
 * called rate_ppb, which is ListDomains' rate against the reference.
 * usage: test-cli-table TIMECONV_1 */

#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli-table.h"
#include "live-domain.h"
#include "tap.h"

#define LONG_GPU "gpu-6d657361-3232-2e33-2e36-000000000000"
#define LONG_APP "audio-usb-0000-00-14.0-focusrite-scarlett-2i2-capture-clock"

/* The library's domain object, laid out as live-domain.h says: its strings are our strdup()s. */
static char *xstrdup(const char *s) {
        char *copy = strdup(s);

        if (!copy)
                abort();
        return copy;
}

static void set(char **field, const char *value) {
        free(*field);
        *field = xstrdup(value);
}

static struct timeconv_domain *domain(const char *name, const char *unit, unsigned flags, int64_t offset_ns,
                                      int64_t rate_ppb, uint64_t uncertainty_ns, uint64_t rate_uncertainty_ppb) {
        struct timeconv_domain *d = calloc(1, sizeof(*d));

        if (!d)
                abort();
        d->name = xstrdup(name);
        d->unit = xstrdup(unit);
        d->reference = xstrdup("monotonic_raw");
        d->verdict = xstrdup("");
        d->device_name = xstrdup("");
        d->driver = xstrdup("");
        d->flags = flags | TIMECONV_DOMAIN_HAS_OFFSET | TIMECONV_DOMAIN_HAS_RATE_UNCERTAINTY;
        d->offset_ns = offset_ns;
        d->rate_ppb = rate_ppb;
        d->uncertainty_ns = uncertainty_ns;
        d->rate_uncertainty_ppb = rate_uncertainty_ppb;
        d->last_calibrated_ns = flags & TIMECONV_DOMAIN_AVAILABLE ? 1000000000 : 0;
        d->wrap_bits = 64;
        d->resolution_ns = 1;
        return d;
}

static void property(struct timeconv_domain *d, const char *key, char type) {
        LiveProperty *p;

        d->properties = realloc(d->properties, (d->n_properties + 1) * sizeof(*d->properties));
        if (!d->properties)
                abort();
        p = &d->properties[d->n_properties++];
        *p = (LiveProperty) { .key = xstrdup(key), .type = type, .b = 1, .u = 1044, .x = -7, .d = 16690671.5 };
        if (type == 's')
                p->s = xstrdup(":1.42");
}

/* A stack array of domains, NULL-terminated: each one goes as timeconv_domains_free() frees it. */
static void domains_release(struct timeconv_domain **domains) {
        for (size_t i = 0; domains[i]; i++) {
                struct timeconv_domain *one[] = { domains[i], NULL }, **list = malloc(sizeof(one));

                if (!list)
                        abort();
                memcpy(list, one, sizeof(one));
                timeconv_domains_free(list);
                domains[i] = NULL;
        }
}

/* An output onto a fresh memfd, for render_end() to read back. */
static CliOut *render_begin(void) {
        CliOut *out = malloc(sizeof(*out));
        int fd = memfd_create("table", 0);

        if (!out || fd < 0)
                abort();
        cli_out_init(out, fd);
        return out;
}

/* What out wrote, as a string; frees out. */
static char *render_end(CliOut *out) {
        int fd = out->fd;
        char *text;
        off_t size;

        if (cli_out_flush(out) < 0)
                abort();
        size = lseek(fd, 0, SEEK_END);
        text = calloc(1, (size_t) size + 1);
        if (!text || pread(fd, text, (size_t) size, 0) != size)
                abort();
        close(fd);
        free(out);
        return text;
}

/* The table as text or JSON. */
static char *render(struct timeconv_domain **domains, bool json) {
        CliOut *out = render_begin();

        if (json)
                cli_table_json(out, domains, false);
        else
                cli_table_text(out, domains, NULL, 2000000000);
        return render_end(out);
}

/* The character (not byte) index of each column start of a line: where a run of two or more
 * spaces, or one space after the name column, ends. Columns are found from the header, whose
 * labels have single spaces inside; a row's column i must start at the header's. */
static size_t char_index(const char *line, size_t byte) {
        size_t n = 0;

        for (size_t i = 0; i < byte; i++)
                n += ((unsigned char) line[i] & 0xc0) != 0x80;
        return n;
}

/* Whether, on line (up to its newline), the character at column col (a character index) starts a
 * cell: the one before it is a space and it is not. */
static bool starts_cell(const char *line, size_t col) {
        size_t chars = 0;
        const char *prev = NULL;

        for (const char *p = line; *p && *p != '\n'; p++) {
                if (((unsigned char) *p & 0xc0) == 0x80)
                        continue;
                if (chars == col)
                        return prev && *prev == ' ' && *p != ' ';
                prev = p;
                chars++;
        }
        return false;
}

/* The text of the cell at column col (character index) of line, up to the next column. */
static bool cell_is(const char *line, size_t col, size_t next_col, const char *want) {
        size_t chars = 0, start = 0, end = 0;
        bool have_start = false;

        for (size_t i = 0; line[i] && line[i] != '\n'; i++) {
                if (((unsigned char) line[i] & 0xc0) == 0x80)
                        continue;
                if (chars == col) {
                        start = i;
                        have_start = true;
                }
                if (chars == next_col)
                        break;
                chars++;
                end = i + 1;
        }
        while (have_start && end > start && line[end - 1] == ' ')
                end--;
        return have_start && end - start == strlen(want) && strncmp(line + start, want, end - start) == 0;
}

static const char *row(const char *text, const char *name) {
        char key[80];
        const char *p;

        snprintf(key, sizeof(key), "\n%s ", name);
        p = strstr(text, key);
        return p ? p + 1 : NULL;
}

/* Whether every key of the objects in list appears in the man page (keys have no '-', which groff
 * would write "\-"). */
static bool keys_documented(json_t *list, const char *man_path) {
        char *man = NULL;
        size_t size = 0;
        bool all = true;
        FILE *f = fopen(man_path, "r");
        json_t *e, *v;
        const char *key;
        size_t i;

        if (!f || getdelim(&man, &size, 0, f) < 0) {
                diag("cannot read %s", man_path);
                return false;
        }
        fclose(f);
        json_array_foreach(list, i, e)
                json_object_foreach(e, key, v)
                        if (!strstr(man, key)) {
                                diag("%s does not document \"%s\"", man_path, key);
                                all = false;
                        }
        free(man);
        return all;
}

/* The table within width columns (0: no limit), with marks. */
static char *render_fit(struct timeconv_domain **domains, const CliMarks *marks, size_t width) {
        CliOut *out = render_begin();

        cli_table_text_fit(out, domains, marks, 2000000000, width);
        return render_end(out);
}

/* The widest line of text, in characters. */
static size_t widest(const char *text) {
        size_t max = 0;

        for (const char *line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n')) {
                size_t n = char_index(line, strcspn(line, "\n"));

                max = n > max ? n : max;
        }
        return max;
}

/* What a desktop shows (a terminal is often 80 columns, the table was 110, wrapped): within 80 columns by default, the
 * whole table when asked; what each column is against and what "-" means, said under it. */
static void check_fit(void) {
        const unsigned avail = TIMECONV_DOMAIN_AVAILABLE | TIMECONV_DOMAIN_MONOTONIC;
        struct timeconv_domain *d[12] = {};
        CliMarks marks = {};
        char *text;

        d[0] = domain("monotonic_raw", "ns", avail, -248201383, 0, 0, 19);
        d[1] = domain("realtime", "ns", avail, INT64_C(1795836337842952062), 0, 37, 38);
        d[2] = domain("realtime_coarse", "ns", avail, INT64_C(1795836337841334403), 31220, 9742054, 155929);
        d[3] = domain("monotonic", "ns", avail, 0, 0, 37, 0);
        d[4] = domain("monotonic_coarse", "ns", avail, -1635053, 30995, 19760118, 156773);
        d[5] = domain("boottime", "ns", avail, 0, 0, 37, 38);
        d[6] = domain("tai", "ns", avail, INT64_C(1795836337842952062), 0, 37, 38);
        d[7] = domain("x11", "ms", avail, 0, 0, 508237, 38);
        set(&d[7]->verdict, "identity");
        d[8] = domain("x11_us", "us", avail, 0, 0, 8737, 38);
        set(&d[8]->verdict, "identity");
        d[9] = domain("msc", "frame", avail, 16036068, 0, 18418231, 1000000);
        cli_marks_add(&marks, "x11", 1500000000, 96910, "restart");

        text = render_fit(d, &marks, 80);
        ok(widest(text) <= 80, "within 80 columns by default (widest line: %zu)", widest(text));
        ok(strncmp(text, "DOMAIN ", 7) == 0 && strstr(text, "OFFSET TO MONOTONIC") && strstr(text, "RATE TO MONOTONIC"),
           "the header says offset and rate are against monotonic");
        ok(strstr(text, "\nx11: ! restarted +96910 ns, 0.5 s ago\n") != NULL,
           "an event that does not fit as a column is a line under the table");
        ok(strstr(text, "-: no verdict") && strstr(text, "identity = it is CLOCK_MONOTONIC"),
           "the legend says what the verdicts and - mean");
        ok(strstr(text, "--wide shows them") != NULL, "and that --wide shows the columns left out");
        if (widest(text) > 80)
                diag("%s", text);
        free(text);

        text = render_fit(d, &marks, 0);
        ok(strstr(text, "BOUND TO REFERENCE") && strstr(text, "CALIBRATED") && strstr(text, "EVENT") &&
           strstr(text, "of a conversion to the domain's reference (monotonic_raw)"),
           "--wide: every column, the bound's reference said");
        ok(widest(text) > 80 && !strstr(text, "--wide shows them"), "wider than 80, and nothing left out");
        free(text);
        domains_release(d);
}

int main(int argc, char *argv[]) {
        static const char *const headers[] = { "DOMAIN", "UNIT", "VERDICT", "OFFSET TO MONOTONIC",
                                               "RATE TO MONOTONIC", "BOUND TO REFERENCE", "CALIBRATED" };
        const unsigned avail = TIMECONV_DOMAIN_AVAILABLE | TIMECONV_DOMAIN_MONOTONIC;
        struct timeconv_domain *domains[9] = {};
        size_t cols[7], n_rows = 0;
        bool aligned = true;
        char *text;
        json_t *list;

        domains[0] = domain("monotonic", "ns", avail, 0, 0, 20, 10);
        /* Known to 96 ns and 1.5 ppm: numbers, even though the bounds exceed the values. */
        domains[1] = domain("boottime", "ns", avail, 0, 76, 76, 1500);
        /* An offset of 2 ms known to 3 s, a rate of 44 ppm known to 0.5 %: unknown. */
        domains[2] = domain("monotonic_coarse", "ns", avail, -2110115, -44133, 3000000000, 5000000);
        domains[3] = domain("msc", "frame", avail, 175268439, 0, 13494036, 1000000);
        domains[4] = domain(LONG_GPU, "tick", avail, 1, 76, 146, 4459);
        domains[4]->period_ns = 38.4615;
        set(&domains[4]->device_name, "llvmpipe (LLVM 15.0.6, 256 bits)");
        set(&domains[4]->driver, "llvmpipe");
        domains[5] = domain(LONG_APP, "ns", avail, 123456789012, 1200, 800, 300);
        property(domains[5], "owner", 's');
        domains[6] = domain("x11", "ms", 0, 0, 0, 0, 0);
        set(&domains[6]->verdict, "identity");
        property(domains[6], "reason", 's');
        property(domains[6], "connected", 'b');
        property(domains[6], "probes", 't');
        property(domains[6], "next_vblank_ns", 'x');
        property(domains[6], "refresh_interval_ns", 'd');
        property(domains[6], "crtc_index", 'u');

        text = render(domains, false);
        for (size_t i = 0; i < 7; i++) {
                const char *h = strstr(text, headers[i]);

                cols[i] = h && h < strchr(text, '\n') ? char_index(text, (size_t) (h - text)) : 0;
        }
        ok(cols[0] == 0 && cols[1] > strlen(LONG_APP), "the header's UNIT column (%zu) is past the longest name",
           cols[1]);
        for (const char *line = strchr(text, '\n') + 1; *line && *line != '\n'; line = strchr(line, '\n') + 1) {
                for (size_t i = 1; i < 7; i++)
                        if (!starts_cell(line, cols[i])) {
                                if (aligned)
                                        diag("misaligned, column %zu: %.*s", i, (int) strcspn(line, "\n"), line);
                                aligned = false;
                        }
                n_rows++;
        }
        is_int(n_rows, 7, "a row per domain");
        ok(aligned, "every cell of every row starts under its header (long names, frame, ± counted once)");
        ok(cell_is(row(text, "msc"), cols[1], cols[2], "frame"), "msc's unit: frame");
        ok(cell_is(row(text, LONG_GPU), cols[0], cols[1], LONG_GPU), "the GPU's whole name");
        ok(cell_is(row(text, "monotonic_coarse"), cols[3], cols[4], "unknown") &&
           cell_is(row(text, "monotonic_coarse"), cols[4], cols[5], "unknown"),
           "an offset and a rate whose bounds dwarf them (and exceed 1 s, 0.1 %%) read unknown");
        ok(cell_is(row(text, "msc"), cols[4], cols[5], "unknown"), "msc's rate known to 0.1 %% only: unknown");
        ok(cell_is(row(text, "boottime"), cols[3], cols[4], "+0 \xc2\xb1" "96 ns") &&
           cell_is(row(text, "boottime"), cols[4], cols[5], "+76 \xc2\xb1" "1510 ppb"),
           "small bounds stay numbers: +0 \xc2\xb1" "96 ns, +76 \xc2\xb1" "1510 ppb");
        ok(cell_is(row(text, LONG_APP), cols[3], cols[4], "+123456789012 \xc2\xb1" "820 ns"),
           "an offset known better than it is large: the number and its bound");
        ok(cell_is(row(text, "x11"), cols[2], cols[3], "unavailable") && cell_is(row(text, "x11"), cols[3], cols[4], "-") &&
           cell_is(row(text, "x11"), cols[6], 1000, "never"),
           "an unavailable domain: no verdict, no figures, never calibrated");
        ok(strstr(text, "\n\nx11: unavailable: :1.42\n") != NULL, "and under the table, the reason the daemon gave");
        free(text);

        text = render(domains, true);
        list = json_loads(text, 0, NULL);
        ok(json_array_size(list) == 7, "JSON: an array of the 7 domains");
        if (argc != 2)
                bail_out("usage: %s TIMECONV_1 (the man page)", argv[0]);
        ok(keys_documented(list, argv[1]), "timeconv(1) documents every key of domains --json");
        {
                json_t *gpu = json_array_get(list, 4), *app = json_array_get(list, 5), *x11 = json_array_get(list, 6);
                json_t *props = json_object_get(x11, "properties");

                ok(json_is_real(json_object_get(gpu, "period_ns")) &&
                   json_real_value(json_object_get(gpu, "period_ns")) == 38.4615 &&
                   strcmp(json_string_value(json_object_get(gpu, "device_name")) ?: "", "llvmpipe (LLVM 15.0.6, 256 bits)") == 0 &&
                   strcmp(json_string_value(json_object_get(gpu, "driver")) ?: "", "llvmpipe") == 0,
                   "a GPU's period_ns (exactly), device_name and driver");
                ok(strcmp(json_string_value(json_object_get(json_object_get(app, "properties"), "owner")) ?: "", ":1.42") == 0,
                   "an application domain's owner");
                ok(json_is_true(json_object_get(props, "connected")) &&
                   json_integer_value(json_object_get(props, "probes")) == 1044 &&
                   json_integer_value(json_object_get(props, "next_vblank_ns")) == -7 &&
                   json_is_real(json_object_get(props, "refresh_interval_ns")) &&
                   json_real_value(json_object_get(props, "refresh_interval_ns")) == 16690671.5 &&
                   json_integer_value(json_object_get(props, "crtc_index")) == 1044 &&
                   json_is_string(json_object_get(props, "reason")),
                   "properties keep their types: b true, t and u integers, x negative, d real, s string");
                json_t *coarse = json_array_get(list, 2), *msc = json_array_get(list, 3);
                json_t *boot = json_array_get(list, 1), *e;
                bool no_rate_ppb = true;
                size_t i;

                ok(json_is_null(json_object_get(coarse, "offset_ns")) &&
                   json_integer_value(json_object_get(coarse, "offset_uncertainty_ns")) == 3000000020 &&
                   json_is_null(json_object_get(coarse, "rate_to_monotonic_ppb")) &&
                   json_integer_value(json_object_get(coarse, "rate_to_monotonic_uncertainty_ppb")) == 5000010,
                   "where the table says unknown: offset and rate null, their bounds given");
                ok(json_is_null(json_object_get(msc, "rate_to_monotonic_ppb")) &&
                   json_is_integer(json_object_get(msc, "offset_ns")),
                   "msc: the rate unknown (null), the offset a number");
                ok(json_integer_value(json_object_get(boot, "offset_ns")) == 0 &&
                   json_is_integer(json_object_get(boot, "offset_ns")) &&
                   json_integer_value(json_object_get(boot, "rate_to_monotonic_ppb")) == 76 &&
                   json_integer_value(json_object_get(boot, "rate_to_monotonic_uncertainty_ppb")) == 1510 &&
                   json_integer_value(json_object_get(boot, "rate_to_reference_ppb")) == 76,
                   "small bounds stay numbers: boottime +0 ns, +76 ppb against monotonic and the reference");
                json_array_foreach(list, i, e)
                        no_rate_ppb &= !json_object_get(e, "rate_ppb") && !json_object_get(e, "rate_uncertainty_ppb");
                ok(no_rate_ppb, "no \"rate_ppb\": ListDomains' name for the rate against the reference");
                ok(json_is_false(json_object_get(x11, "available")) && json_is_null(json_object_get(x11, "offset_ns")) &&
                   strcmp(json_string_value(json_object_get(x11, "verdict")) ?: "", "identity") == 0,
                   "an unavailable domain: available false, offset null");
        }
        json_decref(list);
        free(text);

        domains_release(domains);
        check_fit();
        return done_testing();
}
