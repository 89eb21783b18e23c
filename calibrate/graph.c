/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <string.h>

#include "arith.h"
#include "graph.h"

static bool name_valid(const char *name) {
        size_t n = name ? strnlen(name, GRAPH_NAME_MAX) : 0;

        return n > 0 && n < GRAPH_NAME_MAX;
}

static bool unit_plain_ns(const DomainUnit *u) {
        return u->period_ns == 1.0 && (u->wrap_bits == 0 || u->wrap_bits == 64) && !u->truncates &&
               u->encoding == UNIT_ENCODING_PLAIN;
}

static bool unit_equal(const DomainUnit *a, const DomainUnit *b) {
        /* the periods' bits: no floating point on the conversion path */
        return memcmp(&a->period_ns, &b->period_ns, sizeof(a->period_ns)) == 0 && a->wrap_bits == b->wrap_bits &&
               a->truncates == b->truncates && a->events == b->events &&
               a->encoding == b->encoding;
}

/* The record of a -> b: graph_convert_general()'s cases, each folded into one record. */
static void pair_build(const ClockGraph *g, size_t a, size_t b, ConvRecord *ret) {
        const GraphNode *src = &g->nodes[a], *dst = &g->nodes[b];
        bool same_model = src->model_id == dst->model_id;
        ConvSpec spec;

        if (a == b) {
                conv_record_identity(ret);
                return;
        }
        if (!src->available || !src->calibrated || !dst->available || !dst->calibrated) {
                conv_record_failing(-ENODEV, ret);
                return;
        }
        if (same_model && unit_equal(&src->unit, &dst->unit)) {
                conv_record_identity(ret);
                return;
        }
        if (src->target_only) {
                conv_record_failing(-ENOLINK, ret);
                return;
        }
        spec = (ConvSpec) {
                .from_unit = &src->unit,
                .to_unit = &dst->unit,
                .from_lag_ns = src->lag_ns,
                .to_lag_ns = dst->lag_ns,
                .from_model = same_model || src->hub ? NULL : &src->current.m,
                .to_model = same_model || dst->hub ? NULL : &dst->current.m,
                .from_x_begin_ns = src->current_x_begin_ns,
                .to_r_begin_ns = dst->current_r_begin_ns,
                .extra_ns = src->same_as_uncertainty_ns + dst->same_as_uncertainty_ns,
                .at_r_ns = src->current_r_end_ns > dst->current_r_end_ns ? src->current_r_end_ns : dst->current_r_end_ns,
        };
        /* one clock in two units (x11 and its view x11_us): no residual between them */
        if (same_model && src->history && src->history == dst->history)
                spec.extra_ns = 0;
        if (spec.at_r_ns == INT64_MIN)
                spec.at_r_ns = 0;
        /* A record it cannot build (a centre out of range): every value takes the general path. */
        if (conv_record_build(&spec, ret) < 0)
                conv_record_failing(CONV_RECORD_MISS, ret);
}

/* The open model's records in ns, for the general path. */
static void node_records(GraphNode *node) {
        if (node->hub || !node->calibrated) {
                conv_record_identity(&node->current_forward);
                conv_record_identity(&node->current_inverse);
                return;
        }
        segment_records(&node->current.m, node->current.m.r_c_ns, &node->current_forward, &node->current_inverse);
}

/* The record of a -> b and its hot form. */
static void pair_set(ClockGraph *g, size_t a, size_t b) {
        pair_build(g, a, b, &g->pairs[a][b]);
        g->hot[a][b].ok = conv_hot_init(&g->pairs[a][b], &g->hot[a][b].h) >= 0;
}

/* Node index changed: its row and its column. */
static void pairs_rebuild_node(ClockGraph *g, size_t index) {
        for (size_t j = 0; j < g->n_nodes; j++) {
                pair_set(g, index, j);
                pair_set(g, j, index);
        }
}

void graph_rebuild(ClockGraph *g) {
        for (size_t i = 0; i < g->n_nodes; i++)
                node_records(&g->nodes[i]);
        for (size_t i = 0; i < g->n_nodes; i++)
                for (size_t j = 0; j < g->n_nodes; j++)
                        pair_set(g, i, j);
}

int graph_hint(const ClockGraph *g, size_t index, int64_t r_ns, int64_t *ret_count) {
        int64_t count, bound;
        int r;

        if (index >= g->n_nodes)
                return -ENOENT;
        r = conv_record_map(&g->pairs[g->hub][index], r_ns, &count, &bound);
        if (r != 0)
                return r;
        *ret_count = count;
        return 0;
}

int graph_init(ClockGraph *g, const char *hub_name) {
        GraphNode *hub;

        if (!name_valid(hub_name))
                return -EINVAL;
        memset(g, 0, sizeof(*g));
        hub = &g->nodes[0];
        strcpy(hub->name, hub_name);
        hub->unit = UNIT_NS;
        hub->hub = true;
        hub->model_id = 0;
        hub->available = true;
        hub->calibrated = true;
        (void) model_prepare(&MODEL_IDENTITY, &hub->current);
        hub->current_r_begin_ns = INT64_MIN;
        hub->current_x_begin_ns = INT64_MIN;
        hub->current_r_end_ns = INT64_MIN;
        hub->plain_ns = true;
        hub->period_le_1ns = true;
        node_records(hub);
        g->n_nodes = 1;
        g->hub = 0;
        pair_set(g, 0, 0);
        return 0;
}

int graph_find(const ClockGraph *g, const char *name, size_t *ret_index) {
        if (!name)
                return -EINVAL;
        for (size_t i = 0; i < g->n_nodes; i++)
                if (strcmp(g->nodes[i].name, name) == 0) {
                        *ret_index = i;
                        return 0;
                }
        return -ENOENT;
}

/* Node index as new: its own model, available, calibrated from history. */
static void node_reset(ClockGraph *g, size_t index, const char *name, const DomainUnit *unit, const History *history) {
        GraphNode *node = &g->nodes[index];

        memset(node, 0, sizeof(*node));
        strcpy(node->name, name);
        node->unit = *unit;
        node->history = history;
        node->model_id = (uint32_t) index;
        node->available = true;
        node->plain_ns = unit_plain_ns(unit);
        node->period_le_1ns = !unit->truncates && unit->period_ns <= 1.0;
        graph_refresh(g, index);
}

int graph_add(ClockGraph *g, const char *name, const DomainUnit *unit, const History *history, size_t *ret_index) {
        size_t index;
        int r;

        if (!name_valid(name) || !unit || !history)
                return -EINVAL;
        r = unit_validate(unit);
        if (r < 0)
                return r;
        if (graph_find(g, name, &index) == 0)
                return -EEXIST;
        if (g->n_nodes == GRAPH_NODES_MAX)
                return -ENOSPC;

        index = g->n_nodes++;
        node_reset(g, index, name, unit, history);
        if (ret_index)
                *ret_index = index;
        return 0;
}

/* A node that equals another takes that node's open model; its unwrap hint stays its own. */
static void node_follow(GraphNode *node, const GraphNode *model) {
        node->calibrated = model->calibrated;
        node->current = model->current;
        node->current_r_begin_ns = model->current_r_begin_ns;
        node->current_x_begin_ns = model->current_x_begin_ns;
}

static void node_refresh_own(GraphNode *node) {
        const Segment *current;
        int64_t count;

        if (node->hub || !node->history)
                return;
        current = history_current(node->history);
        if (!current) {
                node->calibrated = false;
                return;
        }
        if (model_prepare(&current->model, &node->current) < 0) {
                node->calibrated = false;
                return;
        }
        /* With one segment there is nothing to choose: skip the test on the hot path. */
        if (history_count(node->history) == 1) {
                node->current_r_begin_ns = INT64_MIN;
                node->current_x_begin_ns = INT64_MIN;
        } else {
                node->current_r_begin_ns = current->r_begin_ns;
                node->current_x_begin_ns = current->x_begin_ns;
        }
        node->current_r_end_ns = current->r_end_ns;
        if (current->x_end_ns != INT64_MIN && unit_from_ns(&node->unit, current->x_end_ns, &count, NULL) == 0)
                node->hint_count = count;
        node->calibrated = true;
}

void graph_refresh(ClockGraph *g, size_t index) {
        GraphNode *node;

        if (index >= g->n_nodes)
                return;
        node = &g->nodes[index];
        if (node->model_id == index)
                node_refresh_own(node);
        else {
                /* Its own history still serves the unwrap hint and values before the model's
                 * open segment; the model is the other node's. */
                bool calibrated;

                node_refresh_own(node);
                calibrated = node->calibrated;
                node_follow(node, &g->nodes[node->model_id]);
                node->calibrated = node->calibrated && calibrated;
        }
        node_records(node);
        pairs_rebuild_node(g, index);
        for (size_t i = 0; i < g->n_nodes; i++)
                if (i != index && g->nodes[i].model_id == index)
                        graph_refresh(g, i);
}

int graph_set_same_as(ClockGraph *g, size_t index, size_t same_as) {
        if (index >= g->n_nodes || g->nodes[index].hub)
                return -EINVAL;
        if (same_as == SIZE_MAX)
                same_as = index;
        if (same_as >= g->n_nodes || (same_as != index && g->nodes[same_as].model_id != same_as))
                return -EINVAL;
        for (size_t i = 0; i < g->n_nodes; i++)
                if (i != index && g->nodes[i].model_id == index && same_as != index)
                        return -EINVAL;         /* others follow index: no chains */
        if (same_as == index)
                g->nodes[index].same_as_uncertainty_ns = 0;
        if (g->nodes[index].model_id == same_as)
                return 0;
        g->nodes[index].model_id = (uint32_t) same_as;
        graph_refresh(g, index);
        return 0;
}

void graph_set_available(ClockGraph *g, size_t index, bool available) {
        if (index < g->n_nodes) {
                g->nodes[index].available = available;
                pairs_rebuild_node(g, index);
        }
}

int graph_set_target_only(ClockGraph *g, size_t index, bool target_only) {
        if (index >= g->n_nodes || g->nodes[index].hub)
                return -EINVAL;
        g->nodes[index].target_only = target_only;
        pairs_rebuild_node(g, index);
        return 0;
}

int graph_reset_node(ClockGraph *g, size_t index, const char *name, const DomainUnit *unit, const History *history) {
        size_t other;
        int r;

        if (index >= g->n_nodes || g->nodes[index].hub || !name_valid(name) || !unit || !history)
                return -EINVAL;
        r = unit_validate(unit);
        if (r < 0)
                return r;
        if (graph_find(g, name, &other) == 0 && other != index)
                return -EEXIST;
        for (size_t i = 0; i < g->n_nodes; i++)
                if (i != index && g->nodes[i].model_id == index)
                        return -EINVAL;

        node_reset(g, index, name, unit, history);
        return 0;
}

int graph_set_same_as_uncertainty(ClockGraph *g, size_t index, int64_t uncertainty_ns) {
        if (index >= g->n_nodes || g->nodes[index].hub || uncertainty_ns < 0)
                return -EINVAL;
        g->nodes[index].same_as_uncertainty_ns = uncertainty_ns;
        pairs_rebuild_node(g, index);
        return 0;
}

int graph_set_lag(ClockGraph *g, size_t index, int64_t lag_ns) {
        GraphNode *node;

        if (index >= g->n_nodes || g->nodes[index].hub || lag_ns < 0)
                return -EINVAL;
        node = &g->nodes[index];
        node->lag_ns = lag_ns;
        /* The ns shortcut of the general path knows nothing of lags. */
        node->plain_ns = lag_ns == 0 && unit_plain_ns(&node->unit);
        pairs_rebuild_node(g, index);
        return 0;
}

int graph_model(const ClockGraph *g, size_t index, Model *ret) {
        const GraphNode *node;

        if (index >= g->n_nodes)
                return -ENOENT;
        node = &g->nodes[index];
        if (!node->available || !node->calibrated)
                return -ENODEV;
        *ret = node->current.m;
        return 0;
}

/* The wire value of a node -> its ns, with the uncertainty the unit itself adds: in integers, by
 * units.c (a truncating reading stands for the middle of [x, x + 1) units). */
static int node_value_to_ns(const GraphNode *node, int64_t value, int64_t hint_r_ns, int64_t *ret_ns,
                            int64_t *ret_uncertainty_ns) {
        int64_t hint_count = node->hint_count, count, ns, next_ns, width_ns, hint_ns, unc_ns;
        int r;

        /* The open model answers for any time (the pair's record only from its segment on): the
         * occurrence nearest hint_r_ns even for a value from long ago. */
        if (hint_r_ns != INT64_MIN && !node->hub &&
            conv_record_convert(&node->current_forward, hint_r_ns, &hint_ns, &unc_ns) == 0)
                (void) unit_from_ns(&node->unit, hint_ns, &hint_count, NULL);

        r = unit_unwrap(&node->unit, value, hint_count, &count);
        if (r < 0)
                return r;
        r = unit_to_ns(&node->unit, count, &ns);
        if (r < 0)
                return r;
        if (node->period_le_1ns) {
                *ret_ns = ns;
                *ret_uncertainty_ns = 0;
                return 0;
        }
        if (node->unit.events) {
                /* An event's instant, which unit_to_ns() rounded up by less than 1 ns. */
                *ret_ns = ns;
                *ret_uncertainty_ns = 1;
                return 0;
        }
        /* One period in whole ns, rounded up: the next count's start (or, at the top, the one
         * before's). */
        if (count < INT64_MAX)
                r = unit_to_ns(&node->unit, count + 1, &next_ns);
        if (count == INT64_MAX || r < 0) {
                r = unit_to_ns(&node->unit, count - 1, &next_ns);
                if (r < 0)
                        return r;
                if ((r = arith_sub(ns, next_ns, &width_ns)) < 0)
                        return r;
        } else if ((r = arith_sub(next_ns, ns, &width_ns)) < 0)
                return r;
        width_ns += 1;          /* unit_to_ns() rounds each start: one ns either way */
        if (node->unit.truncates) {
                /* The reading means [x, x + 1) units: answer for the middle. */
                if ((r = arith_add(ns, width_ns / 2, &ns)) < 0)
                        return r;
                *ret_uncertainty_ns = width_ns - width_ns / 2 + 1;
        } else
                /* A rounding counter means [x - 1/2, x + 1/2] units. */
                *ret_uncertainty_ns = width_ns - width_ns / 2;
        *ret_ns = ns;
        return 0;
}

/* ret_frac_ns (may be NULL): for a truncating unit, the rounding error (ns past the count's
 * start) goes there instead of into the uncertainty. */
static int node_ns_to_value(const GraphNode *node, int64_t ns, int64_t uncertainty_ns,
                            int64_t *ret_value, int64_t *ret_uncertainty_ns, int64_t *ret_frac_ns) {
        int64_t count, error_ns, value;
        bool frac = ret_frac_ns && node->unit.truncates;
        int r;

        r = unit_from_ns(&node->unit, ns, &count, &error_ns);
        if (r < 0)
                return r;
        r = unit_wrap(&node->unit, count, &value);
        if (r < 0)
                return r;
        if (!frac && (r = arith_add(uncertainty_ns, error_ns, &uncertainty_ns)) < 0)
                return r;
        *ret_value = value;
        *ret_uncertainty_ns = uncertainty_ns;
        if (ret_frac_ns)
                *ret_frac_ns = frac ? error_ns : 0;
        return 0;
}

static int record_convert(const ConvRecord *c, int64_t v, int64_t unc, int64_t *ret_v, int64_t *ret_unc) {
        int r = conv_record_convert_unc(c, v, unc, ret_v, ret_unc);

        /* The general path is the last one: a value the record does not cover is out of range. */
        return r == CONV_RECORD_MISS ? -ERANGE : r;
}

/* x -> r (inverse) or r -> x with the open model's record, or, before the open segment, the
 * history's segment of its time, which only a node with its history has. The hub is the
 * reference itself. */
static int node_map(const GraphNode *node, bool inverse, int64_t v_ns, int64_t v_unc_ns, int64_t *ret_ns,
                    int64_t *ret_unc_ns) {
        if (node->hub) {
                *ret_ns = v_ns;
                *ret_unc_ns = v_unc_ns;
                return 0;
        }
        if (__builtin_expect(v_ns >= (inverse ? node->current_x_begin_ns : node->current_r_begin_ns), 1))
                return record_convert(inverse ? &node->current_inverse : &node->current_forward, v_ns, v_unc_ns,
                                      ret_ns, ret_unc_ns);
        if (!node->history)
                return -ERANGE;
        return (inverse ? history_inverse : history_forward)(node->history, v_ns, v_unc_ns, ret_ns, ret_unc_ns);
}

static int convert_general(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                           int64_t *ret_value, int64_t *ret_uncertainty_ns, int64_t *ret_frac_ns) {
        int64_t x_ns, x_unc_ns, r_ns, r_unc_ns, y_ns, y_unc_ns, extra_ns;
        const GraphNode *src, *dst;
        bool same_model;
        int r;

        if (from >= g->n_nodes || to >= g->n_nodes)
                return -ENOENT;
        if (!ret_value || !ret_uncertainty_ns)
                return -EINVAL;
        src = &g->nodes[from];
        dst = &g->nodes[to];
        if (!src->available || !src->calibrated || !dst->available || !dst->calibrated)
                return -ENODEV;
        same_model = src->model_id == dst->model_id;
        if (same_model && unit_equal(&src->unit, &dst->unit)) {
                *ret_value = value;
                *ret_uncertainty_ns = 0;
                if (ret_frac_ns)
                        *ret_frac_ns = 0;
                return 0;
        }
        /* Its values repeat: one of them names several reference times. */
        if (src->target_only)
                return -ENOLINK;

        /* The common case, two plain-ns domains: no unit work at all. */
        if (src->plain_ns) {
                x_ns = value;
                x_unc_ns = 0;
        } else {
                r = node_value_to_ns(src, value, hint_r_ns, &x_ns, &x_unc_ns);
                if (r < 0)
                        return r;
                /* A lagging reading: the time it stands for is 0..lag after it. */
                if (src->lag_ns > 0 &&
                    ((r = arith_add(x_ns, src->lag_ns / 2, &x_ns)) < 0 ||
                     (r = arith_add(x_unc_ns, src->lag_ns - src->lag_ns / 2, &x_unc_ns)) < 0))
                        return r;
        }

        /* A node that follows another is that clock only to within its residual (0 unless it
         * follows: graph_set_same_as() clears it on the way back). */
        extra_ns = src->same_as_uncertainty_ns + dst->same_as_uncertainty_ns;
        if (same_model && src->history && src->history == dst->history)
                extra_ns = 0;           /* one clock in two units: x11 and its view x11_us */
        if ((r = arith_add(x_unc_ns, extra_ns, &x_unc_ns)) < 0)
                return r;

        if (same_model) {
                /* x11 and monotonic while X time is the identity: no model between them. */
                y_ns = x_ns;
                y_unc_ns = x_unc_ns;
        } else if ((r = node_map(src, true, x_ns, x_unc_ns, &r_ns, &r_unc_ns)) < 0 ||
                   (r = node_map(dst, false, r_ns, r_unc_ns, &y_ns, &y_unc_ns)) < 0)
                return r;

        if (dst->plain_ns) {
                *ret_value = y_ns;
                *ret_uncertainty_ns = y_unc_ns;
                if (ret_frac_ns)
                        *ret_frac_ns = 0;
                return 0;
        }
        /* A lagging clock reads 0..lag behind the time its model gives. */
        if (dst->lag_ns > 0 &&
            ((r = arith_sub(y_ns, dst->lag_ns / 2, &y_ns)) < 0 ||
             (r = arith_add(y_unc_ns, dst->lag_ns - dst->lag_ns / 2, &y_unc_ns)) < 0))
                return r;
        return node_ns_to_value(dst, y_ns, y_unc_ns, ret_value, ret_uncertainty_ns, ret_frac_ns);
}

int graph_convert_general(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                          int64_t *ret_value, int64_t *ret_uncertainty_ns) {
        return convert_general(g, from, to, value, hint_r_ns, ret_value, ret_uncertainty_ns, NULL);
}

int graph_convert_frac(const ClockGraph *g, size_t from, size_t to, int64_t value, int64_t hint_r_ns,
                       int64_t *ret_value, int64_t *ret_uncertainty_ns, int64_t *ret_frac_ns) {
        if (!ret_frac_ns)
                return -EINVAL;
        return convert_general(g, from, to, value, hint_r_ns, ret_value, ret_uncertainty_ns, ret_frac_ns);
}
