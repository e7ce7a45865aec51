/*
 * scenario_graph: nodes and edges of the connection graph, with a hash
 * table from node identity to node index.
 */
#include "engine/scenario/scenario_graph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sg_init(struct sg_graph *g, size_t max_edges)
{
        size_t cap = 16;

        *g = (struct sg_graph){ 0 };
        /* At most two nodes per edge; keep the table at most half full. */
        while (cap < 4 * max_edges + 16)
                cap *= 2;
        g->table = calloc(cap, sizeof(*g->table));
        if (!g->table)
                return -ENOMEM;
        g->table_cap = cap;
        return 0;
}

void sg_fini(struct sg_graph *g)
{
        free(g->nodes);
        free(g->edges);
        free(g->table);
        *g = (struct sg_graph){ 0 };
}

static uint64_t mix(uint64_t h)
{
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 33;
        return h;
}

static uint64_t key_hash(const struct sg_node *k)
{
        if (k->kind == SG_VAR)
                return mix((uint64_t)k->comp * 0x9e3779b97f4a7c15ull + k->var);
        return mix((uint64_t)(uintptr_t)k->conn ^ 0x5bd1e995ull);
}

static bool same(const struct sg_node *a, const struct sg_node *b)
{
        if (a->kind != b->kind)
                return false;
        if (a->kind == SG_VAR)
                return a->comp == b->comp && a->var == b->var;
        return a->conn == b->conn;
}

/* v grown to hold need elements (a new pointer, *cap updated), or NULL on OOM. */
static void *grow(void *v, size_t *cap, size_t need, size_t size)
{
        size_t n = *cap ? *cap : 16;
        void *p;

        if (need <= *cap)
                return v;
        while (n < need)
                n *= 2;
        p = realloc(v, n * size);
        if (p)
                *cap = n;
        return p;
}

int sg_node(struct sg_graph *g, const struct sg_node *key, size_t *ret)
{
        size_t mask = g->table_cap - 1, i = key_hash(key) & mask;
        struct sg_node *nodes;

        for (; g->table[i]; i = (i + 1) & mask)
                if (same(&g->nodes[g->table[i] - 1], key)) {
                        *ret = g->table[i] - 1;
                        return 0;
                }
        /* sg_init() sized the table for two nodes per edge: it never fills up. */
        if (g->n_nodes + 1 >= g->table_cap / 2)
                return -ENOSPC;
        nodes = grow(g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(*g->nodes));
        if (!nodes)
                return -ENOMEM;
        g->nodes = nodes;
        g->nodes[g->n_nodes] = *key;
        g->nodes[g->n_nodes].in = SIZE_MAX;
        g->table[i] = g->n_nodes + 1;
        *ret = g->n_nodes++;
        return 0;
}

int sg_edge(struct sg_graph *g, const struct sg_edge *e, size_t *ret)
{
        struct sg_edge *edges = grow(g->edges, &g->cap_edges, g->n_edges + 1, sizeof(*g->edges));

        if (!edges)
                return -ENOMEM;
        g->edges = edges;
        g->edges[g->n_edges] = *e;
        *ret = g->n_edges++;
        return 0;
}
