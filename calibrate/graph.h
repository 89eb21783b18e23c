/* SPDX-License-Identifier: MIT */
#pragma once

/* The live graph: every domain is modelled against one hub (monotonic_raw), so a conversion is
 * at most two hops: from -> hub -> to. Nodes point at histories owned by the caller; each node
 * caches its open segment's model, and the graph keeps one conversion record (conv-record.h) per
 * ordered pair of nodes, the two hops and both units composed: a conversion is one record. The
 * records are rebuilt for a node's row and column whenever it changes (graph_refresh() and the
 * setters); a value a record does not answer (before an open segment, far from now) takes the
 * general path through the nodes' histories.
 *
 * Errors: -ENOENT unknown domain, -ENODEV domain unavailable or not calibrated yet,
 * -ERANGE the value or the answer is out of range, -EINVAL bad argument. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv-record.h"
#include "history.h"
#include "units.h"

#define GRAPH_NAME_MAX 64
#define GRAPH_NODES_MAX 64

typedef struct GraphNode {
        char name[GRAPH_NAME_MAX];
        DomainUnit unit;
        /* NULL for the hub, and in a copy of a node (the shared table's): a copy converts only
         * within its open segment (before it its records miss, the graph answers -ERANGE). */
        const History *history;
        bool hub;                       /* the reference itself: exact identity */
        bool available;
        /* Its values went backwards (an application's clock, Perfetto's rule): it maps the
         * reference to itself but not back, so it is a target only; converting from it gives
         * -ENOLINK. Sits in what was padding: GraphNode keeps its size. */
        bool target_only;
        /* The node whose model this node uses: its own index, or while it equals another domain
         * exactly (graph_set_same_as), that domain's. Two nodes with one model_id convert with
         * no model error at all. */
        uint32_t model_id;
        /* While following another node: how far this clock may still be from it (the X verdict's
         * residual), added to every answer that uses the followed model. */
        int64_t same_as_uncertainty_ns;
        /* Cached from history_current() by graph_refresh(): */
        bool calibrated;
        PreparedModel current;
        int64_t current_r_begin_ns;
        int64_t current_x_begin_ns;
        int64_t hint_count;             /* unwrapped count at the latest sample, for unwrap */
        bool plain_ns;                  /* unit is ns, no wrap, no truncation, no lag */
        bool period_le_1ns;             /* a reading is exact to the ns (no rounding, no truncation) */
        int64_t lag_ns;                 /* a reading lags the modelled time by 0..lag_ns */
        int64_t current_r_end_ns;       /* latest calibration of the open segment: records centre here */
        /* current.m as conversion records in ns (segment_records()), r -> x and x -> r: the
         * general path's open segment; past ones are the history's segments' records. */
        ConvRecord current_forward, current_inverse;
} GraphNode;

typedef struct GraphHot {
        ConvHot h;
        bool ok;
} GraphHot;

typedef struct ClockGraph {
        GraphNode nodes[GRAPH_NODES_MAX];
        size_t n_nodes;
        size_t hub;
        /* pairs[from][to]: the record of from -> to, for from, to < n_nodes */
        ConvRecord pairs[GRAPH_NODES_MAX][GRAPH_NODES_MAX];
        /* hot[from][to]: its hot form (conv_hot_init()), where it has one: the same answers */
        GraphHot hot[GRAPH_NODES_MAX][GRAPH_NODES_MAX];
} ClockGraph;

/* Creates the graph with its hub node (name, unit ns). */
int graph_init(ClockGraph *g, const char *hub_name);

/* Adds a node modelled by history (not owned; must outlive the node). -EEXIST for a name in use,
 * -ENOSPC when full, -EINVAL for a bad name or unit. */
int graph_add(ClockGraph *g, const char *name, const DomainUnit *unit, const History *history, size_t *ret_index);

int graph_find(const ClockGraph *g, const char *name, size_t *ret_index);

/* Re-reads the node's history after new samples; call after every history_add(). */
void graph_refresh(ClockGraph *g, size_t index);

void graph_set_available(ClockGraph *g, size_t index, bool available);

/* See GraphNode.lag_ns: a _COARSE clock's readings trail the time its model follows by up to
 * lag_ns; conversions to and from its readings widen by half of it and move by half of it.
 * -EINVAL for the hub, a bad index or a negative lag. */
int graph_set_lag(ClockGraph *g, size_t index, int64_t lag_ns);

/* See GraphNode.target_only. -EINVAL for the hub or an index out of range. */
int graph_set_target_only(ClockGraph *g, size_t index, bool target_only);

/* Gives node index to another domain, in place (a departed application's node: nodes are only
 * appended, so that indices into the shared table keep naming a node). The node becomes what
 * graph_add() makes of name, unit and history. -EINVAL for the hub, a node that others follow
 * (graph_set_same_as) or bad arguments; -EEXIST for a name another node has. */
int graph_reset_node(ClockGraph *g, size_t index, const char *name, const DomainUnit *unit, const History *history);

/* index equals the domain same_as exactly (X time that is CLOCK_MONOTONIC): from now on it uses
 * that node's model and converts to and from it with no model error. same_as == index (or
 * SIZE_MAX) undoes it: the node's own history again. Nodes that follow index are refreshed by
 * graph_refresh(same_as). -EINVAL for a bad index or a chain (same_as follows another). */
int graph_set_same_as(ClockGraph *g, size_t index, size_t same_as);

/* How far node index may be from the node it follows (>= 0); -EINVAL otherwise. */
int graph_set_same_as_uncertainty(ClockGraph *g, size_t index, int64_t uncertainty_ns);

/* Converts value (from's unit, wire form: wrapped, encoded) to to's unit (wire form).
 * hint_r_ns: the reference time near which wrapped values are unwrapped (the caller's "now");
 * INT64_MIN means the latest calibration. ret_uncertainty_ns bounds the error in ns. */
static inline int graph_convert(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                                int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* The general case: units, wraps, past segments, errors. graph_convert() falls back to it. Every
 * step is integer arithmetic: units by units.c, each model by a segment's conversion records (the
 * open one's in the node, past ones in its history). A value before the open segment of a node
 * without history gives -ERANGE. */
int graph_convert_general(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                          int64_t *ret_value, int64_t *ret_uncertainty_ns);

/* graph_convert_general(), and for a truncating target (X ms, X us) where the instant was in
 * the answer's unit, in ns past its start, in *ret_frac_ns (0 for other targets), which is then
 * not in the uncertainty: what a snapshot keeps so that an offline reading loses nothing. */
int graph_convert_frac(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                       int64_t *ret_value, int64_t *ret_uncertainty_ns, int64_t *ret_frac_ns);

/* The node's model (of its open segment) against the hub; -ENODEV if not calibrated. */
int graph_model(const ClockGraph *g, size_t index, Model *ret);

/* Rebuilds every record (after a caller edited nodes by hand, as tests do). */
void graph_rebuild(ClockGraph *g);

/* The record of from -> to (NULL for an index out of range). */
static inline const ConvRecord *graph_pair(const ClockGraph *g, size_t from, size_t to) {
        return from < g->n_nodes && to < g->n_nodes ? &g->pairs[from][to] : NULL;
}

/* The unwrapped count of node index at reference time r_ns (the occurrence a wrapped value of
 * that node unwraps near); CONV_RECORD_MISS when the record does not answer. */
int graph_hint(const ClockGraph *g, size_t index, int64_t r_ns, int64_t *ret_count);

/* Inline so that a caller converting in a loop pays a few ns: one record, whatever the units. */
static inline int graph_convert(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                                int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        const ConvRecord *rec;
        int64_t hint;
        int r;

        if (__builtin_expect(from >= g->n_nodes || to >= g->n_nodes, 0))
                goto general;
        /* An ns target of a plain or x11_us source: the record's hot form, when it takes value. */
        if (__builtin_expect(g->hot[from][to].ok, 1)) {
                int64_t count;

                if (__builtin_expect(conv_hot_takes(&g->hot[from][to].h, value, &count), 1)) {
                        conv_hot_apply(&g->hot[from][to].h, count, ret_value, ret_uncertainty_ns);
                        return 0;
                }
        }
        rec = &g->pairs[from][to];
        hint = rec->in_hint;
        /* A short wrap (GPU ticks of minutes) unwraps near the caller's now, not near the latest
         * calibration. */
        if (__builtin_expect((rec->flags & CONV_RECORD_HINT_NOW) && hint_r_ns != INT64_MIN, 0) &&
            graph_hint(g, from, hint_r_ns, &hint) != 0)
                goto general;
        r = conv_record_convert_hint(rec, value, hint, ret_value, ret_uncertainty_ns);
        if (__builtin_expect(r != CONV_RECORD_MISS, 1))
                return r;
general:
        return graph_convert_general(g, from, to, value, hint_r_ns, ret_value, ret_uncertainty_ns);
}
