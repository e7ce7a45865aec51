/*
 * init_inputs: connected inputs (and calculatedParameter -> parameter
 * bindings) resolved in Initialization Mode, in topological order of the
 * variable dependency graph, loops iterated to a fixed point (see init.h).
 *
 * DESIGN: nodes are variables: a source (an output or calculated
 * parameter, read with fmi3Get*) or a sink (an input or parameter, set
 * with fmi3Set*). Strongly connected components come from an iterative
 * Tarjan (no recursion: a scenario may hold many thousands of
 * connections) in reverse topological order. Node values are owned
 * copies: a String the worker returns is only valid until its next call.
 * Building is O(nodes^2) (a linear search per node, a scan of the sinks
 * per source); once per session, fine below ~10^4 connected variables.
 */
#include "engine/master/init_graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

const char *ig_vname(const struct session *s, size_t comp, size_t var)
{
        return s->sc->components[comp].fmu->md->vars[var].name;
}

static int find(const struct graph *g, size_t comp, size_t var)
{
        for (size_t i = 0; i < g->n; i++)       /* O(nodes); built once */
                if (g->v[i].comp == comp && g->v[i].var == var)
                        return (int)i;
        return -1;
}

static int add_node(struct graph *g, size_t comp, size_t var, bool src, size_t *ret)
{
        const struct session_inst *si = &g->s->insts[comp];
        const struct md *md = g->s->sc->components[comp].fmu->md;
        const struct md_variable *v = &md->vars[var];
        int k = find(g, comp, var);
        struct node *nd;

        if (k >= 0) {
                *ret = (size_t)k;
                return g->v[k].src == src ? 0 : -EINVAL;
        }
        if (g->n == g->cap) {
                size_t cap = g->cap ? 2 * g->cap : 16;
                struct node *p = realloc(g->v, cap * sizeof(*p));

                if (!p)
                        return -ENOMEM;
                g->v = p;
                g->cap = cap;
        }
        nd = &g->v[g->n];
        *nd = (struct node){ .comp = comp, .var = var, .src = src,
                             .type = mv_call_type(v->type, si->fmi),
                             .n = (size_t)scenario_var_elements(g->s->sc, comp, v) };
        /* Connections of arrays with no elements are skipped before: a size here is one. */
        if (nd->n == 0 || nd->n == SCENARIO_NO_SIZE || nd->n > SIZE_MAX / 16)
                return -EINVAL;
        nd->val = calloc(nd->n, mv_size(nd->type));
        nd->prev = calloc(nd->n, mv_size(nd->type));
        nd->sizes = calloc(nd->n, sizeof(size_t));
        nd->prev_sizes = calloc(nd->n, sizeof(size_t));
        if (!nd->val || !nd->prev || !nd->sizes || !nd->prev_sizes) {
                free(nd->val);
                free(nd->prev);
                free(nd->sizes);
                free(nd->prev_sizes);
                return -ENOMEM;
        }
        *ret = g->n++;
        return 0;
}

/* Owned String/Binary copies: free what a node holds. */
void ig_release(struct node *nd, void *vals)
{
        if (nd->type != MD_STRING && nd->type != MD_BINARY)
                return;
        for (size_t i = 0; i < nd->n; i++) {
                free(((void **)vals)[i]);
                ((void **)vals)[i] = NULL;
        }
}

static void graph_fini(struct graph *g)
{
        for (size_t i = 0; i < g->n; i++) {
                ig_release(&g->v[i], g->v[i].val);
                ig_release(&g->v[i], g->v[i].prev);
                free(g->v[i].val);
                free(g->v[i].prev);
                free(g->v[i].sizes);
                free(g->v[i].prev_sizes);
        }
        free(g->v);
        free(g->edge_from);
        free(g->edge_to);
        free(g->first);
        free(g->adj);
        free(g->order);
        free(g->scc_start);
}

static bool skipped(const struct scenario_connection *c)
{
        /* Arrays a structural parameter sized 0 (FMI 3.0 section 2.4.7.2) carry nothing. */
        return c->from_type == MD_CLOCK || c->to_type == MD_CLOCK || c->elements == 0;
}

static int add_nodes(struct graph *g)
{
        const struct scenario *sc = g->s->sc;

        for (size_t i = 0; i < sc->n_connections; i++) {
                const struct scenario_connection *c = &sc->connections[i];
                size_t a, b;
                int r;

                if (skipped(c))
                        continue;
                r = add_node(g, c->from_comp, c->from_var, true, &a);
                if (r == 0)
                        r = add_node(g, c->to_comp, c->to_var, false, &b);
                if (r < 0)
                        return session_err(g->s, r, "connection %s: %s", c->origin ? c->origin : "?",
                                           r == -ENOMEM ? "out of memory"
                                                        : "a variable both read and set");
                g->v[b].conn = i;
                g->v[b].in = a;
        }
        return 0;
}

/* The initial dependencies of a source: *ret_all when it depends on every known. */
static const struct md_unknown *deps_of(const struct md *md, size_t var, bool *ret_all)
{
        const struct md_unknowns *lists[] = { &md->structure.initial_unknowns, &md->structure.outputs };

        *ret_all = false;
        for (size_t l = 0; l < 2; l++) {
                for (size_t i = 0; i < lists[l]->n; i++) {
                        if (lists[l]->v[i].var != var)
                                continue;
                        *ret_all = !lists[l]->v[i].has_dependencies;
                        return &lists[l]->v[i];
                }
                /* Not an initial unknown: initial="exact" values do not depend on inputs. */
                if (l == 0 && md->vars[var].initial == MD_INITIAL_EXACT)
                        return NULL;
        }
        *ret_all = true;
        return NULL;
}

static int push_edge(struct graph *g, size_t *cap, size_t from, size_t to)
{
        if (g->n_edges == *cap) {
                size_t c = *cap ? 2 * *cap : 64;
                size_t *a = realloc(g->edge_from, c * sizeof(*a)), *b;

                if (!a)
                        return -ENOMEM;
                g->edge_from = a;
                b = realloc(g->edge_to, c * sizeof(*b));
                if (!b)
                        return -ENOMEM;
                g->edge_to = b;
                *cap = c;
        }
        g->edge_from[g->n_edges] = from;
        g->edge_to[g->n_edges++] = to;
        return 0;
}

static bool listed(const struct md_unknown *u, size_t var)
{
        for (size_t i = 0; u && i < u->n_deps; i++)
                if (u->deps[i] == var)
                        return true;
        return false;
}

static int add_edges(struct graph *g)
{
        size_t cap = 0, *count;
        int r = 0;

        for (size_t i = 0; i < g->n && r == 0; i++) {
                const struct md *md = g->s->sc->components[g->v[i].comp].fmu->md;
                const struct md_unknown *u;
                bool all;

                if (!g->v[i].src) {
                        r = push_edge(g, &cap, g->v[i].in, i);
                        continue;
                }
                u = deps_of(md, g->v[i].var, &all);
                for (size_t j = 0; j < g->n && r == 0; j++)
                        if (!g->v[j].src && g->v[j].comp == g->v[i].comp &&
                            (all || listed(u, g->v[j].var)))
                                r = push_edge(g, &cap, j, i);
        }
        if (r < 0)
                return r;
        /* Counting sort by source: adj[first[i] .. first[i + 1]) are node i's successors. */
        g->first = calloc(g->n + 1, sizeof(*g->first));
        g->adj = malloc((g->n_edges + 1) * sizeof(*g->adj));
        count = calloc(g->n + 1, sizeof(*count));
        if (!g->first || !g->adj || !count) {
                free(count);
                return -ENOMEM;
        }
        for (size_t e = 0; e < g->n_edges; e++)
                g->first[g->edge_from[e] + 1]++;
        for (size_t i = 0; i < g->n; i++)
                g->first[i + 1] += g->first[i];
        for (size_t e = 0; e < g->n_edges; e++) {
                size_t f = g->edge_from[e];

                g->adj[g->first[f] + count[f]++] = g->edge_to[e];
        }
        free(count);
        return 0;
}

/* Iterative Tarjan: SCCs into order[], scc_start[] in reverse topological order. */
static int tarjan(struct graph *g)
{
        size_t *stack = malloc((g->n + 1) * sizeof(*stack));
        size_t *call = malloc((g->n + 1) * sizeof(*call));
        size_t sp = 0, cp = 0, index = 0, k = 0;

        g->order = malloc((g->n + 1) * sizeof(*g->order));
        g->scc_start = malloc((g->n + 2) * sizeof(*g->scc_start));
        if (!stack || !call || !g->order || !g->scc_start) {
                free(stack);
                free(call);
                return -ENOMEM;
        }
        for (size_t root = 0; root < g->n; root++) {
                if (g->v[root].visited)
                        continue;
                call[cp++] = root;
                while (cp) {
                        size_t u = call[cp - 1];
                        struct node *nu = &g->v[u];

                        if (!nu->visited) {
                                nu->visited = true;
                                nu->index = nu->low = index++;
                                nu->next_edge = g->first[u];
                                nu->on_stack = true;
                                stack[sp++] = u;
                        }
                        if (nu->next_edge < g->first[u + 1]) {
                                size_t w = g->adj[nu->next_edge++];

                                if (!g->v[w].visited)
                                        call[cp++] = w;
                                else if (g->v[w].on_stack && g->v[w].index < nu->low)
                                        nu->low = g->v[w].index;
                                continue;
                        }
                        cp--;
                        if (cp && nu->low < g->v[call[cp - 1]].low)
                                g->v[call[cp - 1]].low = nu->low;
                        if (nu->low != nu->index)
                                continue;
                        g->scc_start[g->n_scc++] = k;
                        for (;;) {
                                size_t w = stack[--sp];

                                g->v[w].on_stack = false;
                                g->v[w].scc = g->n_scc - 1;
                                g->order[k++] = w;
                                if (w == u)
                                        break;
                        }
                }
        }
        g->scc_start[g->n_scc] = k;
        free(stack);
        free(call);
        return 0;
}

/* Replace the borrowed Strings/Binaries in nd->val with owned copies. */
int ig_own(struct graph *g, struct node *nd)
{
        for (size_t i = 0; i < nd->n && (nd->type == MD_STRING || nd->type == MD_BINARY); i++) {
                const void *p = ((const void **)nd->val)[i];
                size_t len = nd->type == MD_STRING ? (p ? strlen(p) + 1 : 1) : nd->sizes[i];
                void *copy = malloc(len ? len : 1);

                if (!copy) {
                        ((void **)nd->val)[i] = NULL;
                        return session_err(g->s, -ENOMEM, "out of memory");
                }
                if (p && len)
                        memcpy(copy, p, len);
                else if (nd->type == MD_STRING)
                        *(char *)copy = '\0';
                ((void **)nd->val)[i] = copy;
        }
        return 0;
}

/* Read a source node from its instance into owned storage. */
int ig_get(struct graph *g, struct node *nd)
{
        struct session_inst *si = &g->s->insts[nd->comp];
        uint32_t vr = g->s->sc->components[nd->comp].fmu->md->vars[nd->var].vr;
        int r;

        ig_release(nd, nd->val);
        if (nd->type == MD_BINARY)
                r = inst_get_binary(si->inst, &vr, 1, nd->sizes, nd->val, nd->n);
        else
                r = inst_get(si->inst, nd->type, &vr, 1, nd->val, nd->n);
        if (r != INST_OK && r != INST_WARNING) {
                memset(nd->val, 0, nd->n * mv_size(nd->type));
                return session_logs(g->s, si, session_err(g->s, session_call_result(si, r),
                                   "component '%s': getting '%s' "
                                   "in Initialization Mode failed: %s",
                                   g->s->sc->components[nd->comp].name,
                                   ig_vname(g->s, nd->comp, nd->var),
                                   session_call_why(si, r)));
        }
        return ig_own(g, nd);
}

/* Compute a sink's value from its source, through the connection's transformation, and set it. */
int ig_set(struct graph *g, struct node *nd)
{
        const struct scenario_connection *c = &g->s->sc->connections[nd->conn];
        struct session_inst *si = &g->s->insts[nd->comp];
        const struct node *src = &g->v[nd->in];
        uint32_t vr = g->s->sc->components[nd->comp].fmu->md->vars[nd->var].vr;
        int r;

        if (src->n != nd->n || !mv_convertible(src->type, nd->type))
                /* Named as carried: an FMI 2.0 Enumeration is an Int32, an FMI 3.0 one an Int64. */
                return session_err(g->s, -EINVAL, "connection %s: '%s' (%s[%zu]) and '%s' "
                                   "(%s[%zu]) differ in type or size, as FMI gets and sets them; "
                                   "the master converts only between Float32 and Float64 "
                                   "(and Enumerations between FMI 2.0 and 3.0)",
                                   c->origin ? c->origin : "?",
                                   ig_vname(g->s, src->comp, src->var),
                                   md_type_name(src->type), src->n,
                                   ig_vname(g->s, nd->comp, nd->var), md_type_name(nd->type),
                                   nd->n);
        ig_release(nd, nd->prev);
        memcpy(nd->prev, nd->val, nd->n * mv_size(nd->type));
        memcpy(nd->prev_sizes, nd->sizes, nd->n * sizeof(size_t));
        mv_copy(nd->type, nd->val, nd->sizes, src->type, src->val, src->sizes, nd->n, c->identity,
                c->factor, c->offset);
        r = ig_own(g, nd);
        if (r < 0)
                return r;
        if (nd->type == MD_BINARY)
                r = inst_set_binary(si->inst, &vr, 1, nd->sizes, nd->val, nd->n);
        else
                r = inst_set(si->inst, nd->type, &vr, 1, nd->val, nd->n);
        if (r != INST_OK && r != INST_WARNING)
                return session_logs(g->s, si, session_err(g->s, session_call_result(si, r),
                                   "component '%s': setting '%s' "
                                   "in Initialization Mode failed: %s",
                                   g->s->sc->components[nd->comp].name,
                                   ig_vname(g->s, nd->comp, nd->var),
                                   session_call_why(si, r)));
        return 0;
}

int init_inputs(struct session *s)
{
        struct graph g = { .s = s };
        int r;

        r = add_nodes(&g);
        if (r == 0)
                r = add_edges(&g);
        if (r == 0)
                r = tarjan(&g);
        if (r == -ENOMEM)
                session_err(s, r, "out of memory");
        /* Tarjan finishes sinks first: walk the components backwards. */
        for (size_t k = g.n_scc; r == 0 && k-- > 0;) {
                size_t a = g.scc_start[k], b = g.scc_start[k + 1];
                struct node *nd = &g.v[g.order[a]];

                if (b - a > 1)
                        r = ig_settle(&g, &g.order[a], b - a);
                else if (nd->src)
                        r = ig_get(&g, nd);
                else
                        r = ig_set(&g, nd);
        }
        graph_fini(&g);
        return r;
}
