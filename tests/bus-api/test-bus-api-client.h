/* SPDX-License-Identifier: MIT */
#pragma once

/* The client half of test-bus-api (test-bus-api-client.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-errors.h"

/* Connects an anonymous client over fd (taken over). */
int client_new(int fd, sd_bus **ret);

/* A method call on our object and interface; types and arguments as for sd_bus_call_method(). */
int call(sd_bus *c, const char *member, sd_bus_error *e, sd_bus_message **ret_reply,
         const char *types, ...);

/* Reads an a{sv} at the current position and renders it "key=type:value;" ... in wire order. */
int render_dict(sd_bus_message *m, char *buf, size_t size);

/* Calls ConvertMany(from, to, values[0..n)); on success *ret_values and *ret_uncertainties_ns
 * point into *ret_reply (the caller unrefs it) and *ret_n is their count. */
int convert_many(sd_bus *c, const char *from, const char *to, const int64_t *values, size_t n,
                 sd_bus_error *e, sd_bus_message **ret_reply, const int64_t **ret_values,
                 const uint64_t **ret_uncertainties_ns, size_t *ret_n);

/* Counts the Discontinuity and DomainsChanged signals the client receives. */
typedef struct SignalsSeen {
        int discontinuity, domains_changed;
        char domain[64];                /* of the last Discontinuity */
        int64_t monotonic_ns, step_ns;
        char kind[16];
        sd_bus_slot *slots[2];
} SignalsSeen;

int signals_subscribe(sd_bus *c, SignalsSeen *seen);
/* Processes incoming messages until both signals were seen or timeout_ms passed. */
void signals_wait(sd_bus *c, SignalsSeen *seen, unsigned timeout_ms);
void signals_unsubscribe(SignalsSeen *seen);

/* The whole file, NUL-terminated and malloc'ed, or NULL. */
char *read_file(const char *path);

/* Just enough of an introspection-XML reader to compare two documents: it turns one interface
 * into a sorted list of lines, one per member, e.g.
 *   "method Convert(in s from, in s to, in x value, out x value, out t uncertainty_ns)"
 *   "property Version s read [org.freedesktop.DBus.Property.EmitsChangedSignal=const]" */
#define XML_MEMBERS_MAX 32
#define XML_LINE_MAX 512

typedef struct XmlMembers {
        size_t n;
        char lines[XML_MEMBERS_MAX][XML_LINE_MAX];
} XmlMembers;

/* Parses the members of interface iface in xml. Returns 0, or -1 when the document is
 * malformed or the interface is missing or has too many members. */
int xml_parse_interface(const char *xml, const char *iface, XmlMembers *ret);

/* 0 when both documents define the same members of interface iface, n_members of them; 1
 * when they differ (verbose: printed as TAP comments), -1 when either does not parse. */
int xml_compare(const char *want_xml, const char *got_xml, const char *iface, size_t n_members,
                bool verbose);
