/*
 * init_graph: the variable graph of a session's connected inputs in
 * Initialization Mode (see init.h), shared by init_inputs.c (building it,
 * the topological walk) and init_loop.c (iterating a loop). Internal to
 * the session.
 *
 * Ownership: nodes own their values, Strings and Binaries included
 * (copies: what an instance returns is only valid until its next call).
 */
#ifndef FMUD_ENGINE_INIT_GRAPH_H
#define FMUD_ENGINE_INIT_GRAPH_H

#include "engine/master/init.h"

/* One variable: a source (read) or a sink (set). */
struct node {
        size_t comp, var;
        bool src;
        size_t conn;                    /* sink: the connection feeding it */
        size_t in;                      /* sink: the source node feeding it */
        enum md_type type;              /* call type */
        size_t n;                       /* elements */
        void *val, *prev;
        size_t *sizes, *prev_sizes;     /* Binary */
        size_t scc;
        /* Tarjan */
        size_t index, low, next_edge;
        bool on_stack, visited;
};

/* The graph, its edges in CSR form, and its strongly connected components. */
struct graph {
        struct session *s;
        size_t n, cap;
        struct node *v;
        size_t n_edges;
        size_t *edge_from, *edge_to;    /* as added */
        size_t *first, *adj;            /* CSR: successors of node i in adj[first[i]..first[i+1]) */
        size_t *order;                  /* nodes in SCC order (reverse topological) */
        size_t n_scc;
        size_t *scc_start;
};

/* The name of variable var of component comp, for messages. */
const char *ig_vname(const struct session *s, size_t comp, size_t var);
/* Free the owned Strings/Binaries among vals (nd->val or nd->prev). */
void ig_release(struct node *nd, void *vals);
/* Replace the borrowed Strings/Binaries in nd->val with owned copies. 0 or -ENOMEM (s->msg). */
int ig_own(struct graph *g, struct node *nd);
/* Read a source node from its instance. 0 or -errno (s->msg). */
int ig_get(struct graph *g, struct node *nd);
/* Compute a sink from its source through the connection and set it (previous value kept). */
int ig_set(struct graph *g, struct node *nd);
/* Iterate the loop nodes[0..n) to a fixed point, or fail with -ELOOP naming it. */
int ig_settle(struct graph *g, const size_t *nodes, size_t n);

#endif
