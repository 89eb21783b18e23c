/* SPDX-License-Identifier: MIT */

/* The client half of test-bus-api: connecting, calling and unpacking replies. No assertions
 * here: every helper returns 0 or -errno and test-bus-api.c checks. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-bus-api-client.h"

int client_new(int fd, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_fd(bus, fd, fd);
        if (r >= 0)
                r = sd_bus_set_anonymous(bus, 1);
        if (r >= 0)
                r = sd_bus_set_method_call_timeout(bus, 20 * 1000000ULL);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

int call(sd_bus *c, const char *member, sd_bus_error *e, sd_bus_message **ret_reply,
                const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = sd_bus_call_methodv(c, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, member, e, ret_reply,
                                types, ap);
        va_end(ap);
        return r;
}

/* Reads one basic value of type and prints it to f. */
static int render_basic(sd_bus_message *m, char type, FILE *f) {
        union { int b; int64_t x; uint32_t u; uint64_t t; double d; const char *s; } v;
        char types[2] = { type, '\0' };
        int r;

        r = sd_bus_message_read(m, types, &v);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        switch (type) {
        case 'b': fprintf(f, "%d", v.b); break;
        case 'x': fprintf(f, "%" PRId64, v.x); break;
        case 'u': fprintf(f, "%" PRIu32, v.u); break;
        case 't': fprintf(f, "%" PRIu64, v.t); break;
        case 'd': fprintf(f, "%g", v.d); break;
        case 's': fprintf(f, "%s", v.s); break;
        default: return -EBADMSG;
        }
        return 0;
}

int render_dict(sd_bus_message *m, char *buf, size_t size) {
        FILE *f = fmemopen(buf, size, "w");
        int r;

        if (!f)
                return -errno;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *contents;
                char type;

                r = sd_bus_message_read(m, "s", &key);
                if (r >= 0)
                        r = sd_bus_message_peek_type(m, &type, &contents);
                if (r >= 0 && (type != 'v' || strlen(contents) != 1))
                        r = -EBADMSG;
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'v', contents);
                if (r >= 0) {
                        fprintf(f, "%s=%c:", key, contents[0]);
                        r = render_basic(m, contents[0], f);
                        fputc(';', f);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        /* fmemopen() NUL-terminates on fclose(); a full buffer is an error. */
        if (r >= 0 && (ferror(f) || (size_t) ftell(f) >= size))
                r = -ENOBUFS;
        fclose(f);
        return r;
}

/* Calls ConvertMany(from, to, values[0..n)); on success *ret_values, *ret_uncertainties_ns point
 * into *ret_reply and *ret_n is their count. */
int convert_many(sd_bus *c, const char *from, const char *to, const int64_t *values, size_t n,
                 sd_bus_error *e, sd_bus_message **ret_reply, const int64_t **ret_values,
                 const uint64_t **ret_uncertainties_ns, size_t *ret_n) {
        sd_bus_message *m = NULL, *reply = NULL;
        const void *out_values = NULL, *out_uncertainties = NULL;
        size_t size_values = 0, size_uncertainties = 0;
        int r;

        r = sd_bus_message_new_method_call(c, &m, NULL, BUS_API_OBJECT, BUS_API_INTERFACE, "ConvertMany");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", from, to);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'x', values, n * sizeof(int64_t));
        if (r >= 0)
                r = sd_bus_call(c, m, 0, e, &reply);
        sd_bus_message_unref(m);
        if (r < 0)
                return r;

        r = sd_bus_message_read_array(reply, 'x', &out_values, &size_values);
        if (r >= 0)
                r = sd_bus_message_read_array(reply, 't', &out_uncertainties, &size_uncertainties);
        if (r >= 0 && size_values != size_uncertainties)
                r = -EBADMSG;
        if (r < 0) {
                sd_bus_message_unref(reply);
                return r;
        }
        *ret_reply = reply;
        *ret_values = out_values;
        *ret_uncertainties_ns = out_uncertainties;
        *ret_n = size_values / sizeof(int64_t);
        return 0;
}

static int on_discontinuity(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        SignalsSeen *seen = userdata;
        const char *domain, *kind;
        int r;

        r = sd_bus_message_read(m, "sxxs", &domain, &seen->monotonic_ns, &seen->step_ns, &kind);
        if (r < 0)
                return r;
        snprintf(seen->domain, sizeof(seen->domain), "%s", domain);
        snprintf(seen->kind, sizeof(seen->kind), "%s", kind);
        seen->discontinuity++;
        return 0;
}

static int on_domains_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        SignalsSeen *seen = userdata;

        seen->domains_changed++;
        return 0;
}

int signals_subscribe(sd_bus *c, SignalsSeen *seen) {
        int r;

        r = sd_bus_match_signal(c, &seen->slots[0], NULL, BUS_API_OBJECT, BUS_API_INTERFACE,
                                "Discontinuity", on_discontinuity, seen);
        if (r < 0)
                return r;
        return sd_bus_match_signal(c, &seen->slots[1], NULL, BUS_API_OBJECT, BUS_API_INTERFACE,
                                   "DomainsChanged", on_domains_changed, seen);
}

void signals_wait(sd_bus *c, SignalsSeen *seen, unsigned timeout_ms) {
        for (unsigned i = 0; i < timeout_ms / 100 && (!seen->discontinuity || !seen->domains_changed); i++) {
                int r = sd_bus_process(c, NULL);

                if (r < 0)
                        return;
                if (r == 0)
                        (void) sd_bus_wait(c, 100000);
        }
}

void signals_unsubscribe(SignalsSeen *seen) {
        seen->slots[0] = sd_bus_slot_unref(seen->slots[0]);
        seen->slots[1] = sd_bus_slot_unref(seen->slots[1]);
}

char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t size = 0, len = 0;

        if (!f)
                return NULL;
        for (;;) {
                if (len + 4096 + 1 > size) {
                        char *p = realloc(buf, size = len + 65536);

                        if (!p) {
                                free(buf);
                                fclose(f);
                                return NULL;
                        }
                        buf = p;
                }
                size_t k = fread(buf + len, 1, size - len - 1, f);
                if (k == 0)
                        break;
                len += k;
        }
        fclose(f);
        buf[len] = '\0';
        return buf;
}

/* ---- introspection XML ---- */

/* Copies the value of attribute key of the tag text [tag, end) into buf ("" when absent). */
static void xml_attr(const char *tag, const char *end, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key);

        buf[0] = '\0';
        for (const char *p = tag + 1; p + klen + 2 < end; p++) {
                const char *v, *q;

                if ((p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n') ||
                    strncmp(p, key, klen) != 0 || p[klen] != '=' || p[klen + 1] != '"')
                        continue;
                v = p + klen + 2;
                q = memchr(v, '"', (size_t) (end - v));
                if (!q)
                        return;
                snprintf(buf, size, "%.*s", (int) (q - v), v);
                return;
        }
}

static void xml_append(char *line, const char *fmt, const char *a, const char *b, const char *c) {
        size_t n = strlen(line);

        snprintf(line + n, XML_LINE_MAX - n, fmt, a, b, c);
}

static int xml_cmp_lines(const void *a, const void *b) {
        return strcmp(a, b);
}

int xml_parse_interface(const char *xml, const char *iface, XmlMembers *ret) {
        bool in_iface = false, found = false;
        char kind[32] = "", line[XML_LINE_MAX] = "";
        size_t n_args = 0;

        ret->n = 0;
        for (const char *p = strchr(xml, '<'); p; p = strchr(p, '<')) {
                char name[128], tag[32], buf[3][128];
                const char *start = p, *end;
                bool closing, self_closing;
                size_t len;

                if (strncmp(p, "<!--", 4) == 0) {
                        p = strstr(p, "-->");
                        if (!p)
                                return -1;
                        continue;
                }
                end = strchr(p, '>');
                if (!end)
                        return -1;
                if (p[1] == '!' || p[1] == '?') {
                        p = end;
                        continue;
                }
                closing = p[1] == '/';
                self_closing = end[-1] == '/';
                len = strcspn(p + 1 + closing, " \t\n/>");
                snprintf(tag, sizeof(tag), "%.*s", (int) len, p + 1 + closing);
                xml_attr(p, end, "name", name, sizeof(name));
                p = end;

                if (strcmp(tag, "interface") == 0) {
                        if (closing)
                                in_iface = false;
                        else if (strcmp(name, iface) == 0)
                                in_iface = found = true;
                        continue;
                }
                if (!in_iface)
                        continue;

                if (strcmp(tag, "method") == 0 || strcmp(tag, "signal") == 0 ||
                    strcmp(tag, "property") == 0) {
                        if (!closing) {
                                snprintf(kind, sizeof(kind), "%s", tag);
                                snprintf(line, sizeof(line), "%s %s", tag, name);
                                n_args = 0;
                                if (strcmp(tag, "property") == 0) {
                                        xml_attr(start, end, "type", buf[0], sizeof(buf[0]));
                                        xml_attr(start, end, "access", buf[1], sizeof(buf[1]));
                                        xml_append(line, " %s %s%s", buf[0], buf[1], "");
                                } else
                                        xml_append(line, "(%s%s%s", "", "", "");
                        }
                        if (closing || self_closing) {
                                if (strcmp(kind, "property") != 0)
                                        xml_append(line, ")%s%s%s", "", "", "");
                                if (ret->n >= XML_MEMBERS_MAX)
                                        return -1;
                                snprintf(ret->lines[ret->n++], XML_LINE_MAX, "%s", line);
                                kind[0] = '\0';
                        }
                } else if (strcmp(tag, "arg") == 0 && kind[0]) {
                        xml_attr(start, end, "type", buf[0], sizeof(buf[0]));
                        xml_attr(start, end, "direction", buf[1], sizeof(buf[1]));
                        if (strcmp(kind, "signal") == 0)
                                snprintf(buf[1], sizeof(buf[1]), "out");
                        else if (!buf[1][0])
                                snprintf(buf[1], sizeof(buf[1]), "in");
                        xml_append(line, n_args++ ? ", %s %s %s" : "%s %s %s", buf[1], buf[0], name);
                } else if (strcmp(tag, "annotation") == 0 && kind[0]) {
                        xml_attr(start, end, "value", buf[2], sizeof(buf[2]));
                        xml_append(line, " [%s=%s]%s", name, buf[2], "");
                }
        }

        if (!found || in_iface || kind[0])
                return -1;
        qsort(ret->lines, ret->n, XML_LINE_MAX, xml_cmp_lines);
        return 0;
}

static bool xml_has(const XmlMembers *m, const char *line) {
        for (size_t i = 0; i < m->n; i++)
                if (strcmp(m->lines[i], line) == 0)
                        return true;
        return false;
}

int xml_compare(const char *want_xml, const char *got_xml, const char *iface, size_t n_members,
                bool verbose) {
        static XmlMembers want, got;
        int diff = 0;

        if (xml_parse_interface(want_xml, iface, &want) < 0 || xml_parse_interface(got_xml, iface, &got) < 0)
                return -1;
        for (size_t i = 0; i < want.n; i++)
                if (!xml_has(&got, want.lines[i])) {
                        diff = 1;
                        if (verbose)
                                printf("# only in the XML:   %s\n", want.lines[i]);
                }
        for (size_t i = 0; i < got.n; i++)
                if (!xml_has(&want, got.lines[i])) {
                        diff = 1;
                        if (verbose)
                                printf("# only introspected: %s\n", got.lines[i]);
                }
        if (want.n != n_members || got.n != n_members) {
                diff = 1;
                if (verbose)
                        printf("# %zu members in the XML, %zu introspected, want %zu\n", want.n, got.n,
                               n_members);
        }
        return diff;
}
