/*
 * scenario_graph: the connections of all systems of an SSD as one directed
 * graph. A node is a component's variable or a system's connector; an edge
 * is one ssd:Connection, pointing the way values flow. Flattening nested
 * systems is then a walk from each component input back through system
 * connectors to the component output that feeds it.
 *
 * DESIGN: nodes are found by key in an open-addressing hash table, so
 * building the graph is O(edges) and checking "fed twice" is one look at
 * the node. Internal to the scenario library.
 */
#ifndef FMUD_ENGINE_SCENARIO_GRAPH_H
#define FMUD_ENGINE_SCENARIO_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/scenario/ssd.h"

enum sg_kind {
        SG_VAR,         /* comp, var */
        SG_SYS,         /* sys, conn */
};

struct sg_node {
        enum sg_kind kind;
        size_t comp, var;
        const struct ssd_element *sys;
        const struct ssd_connector *conn;
        size_t in;                      /* the edge feeding it, SIZE_MAX: none */
};

struct sg_edge {
        size_t from, to;                /* node indices */
        const struct ssd_connection *c;
        bool parameter;                 /* calculatedParameter -> parameter */
};

struct sg_graph {
        size_t n_nodes, cap_nodes;
        struct sg_node *nodes;
        size_t n_edges, cap_edges;
        struct sg_edge *edges;
        size_t *table;                  /* node index + 1; 0: empty */
        size_t table_cap;               /* a power of two */
};

/* An empty graph for at most max_edges edges. Returns 0 or -ENOMEM. */
int sg_init(struct sg_graph *g, size_t max_edges);
void sg_fini(struct sg_graph *g);

/* The index of the node with key's identity (kind, comp/var or sys/conn), added if new. */
int sg_node(struct sg_graph *g, const struct sg_node *key, size_t *ret);

/* Append an edge (no check). Returns its index, or -ENOMEM. */
int sg_edge(struct sg_graph *g, const struct sg_edge *e, size_t *ret);

#endif
