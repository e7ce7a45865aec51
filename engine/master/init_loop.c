/*
 * init_loop: a loop of connected variables in Initialization Mode,
 * iterated to a fixed point (see init.h): its inputs start from their
 * start values, then each sweep visits the loop's inputs in the order the
 * values flow around it, getting each input's producer output afresh and
 * setting the input at once (Gauss-Seidel), until no input changes by
 * more than the tolerance (relative to max(1, |value|)), or the bound is
 * reached and the loop is named in the error.
 *
 * DESIGN: simultaneous (Jacobi) updates would only rotate differing start
 * values around a consistent ring (a.y = a.u, b.y = b.u, a.u = b.y,
 * b.u = a.y) and never settle; in flow order the first value taken goes
 * all the way round in one sweep. FMI 3.0 section 2.3.3 lets an importer
 * get an output after setting the inputs it depends on in Initialization
 * Mode, so each get sees the sets before it.
 */
#include "engine/master/init_graph.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

#define LOOP_ITERATIONS_DEFAULT 100
#define LOOP_TOLERANCE_DEFAULT  1e-10

/* Start every sink of a loop from its start value: the scenario's, else its FMU's. */
static int guess(struct graph *g, struct node *nd)
{
        const struct scenario_component *c = &g->s->sc->components[nd->comp];
        const struct md_variable *v = &c->fmu->md->vars[nd->var];
        const struct md_values *start = v->has_start ? &v->start : NULL;
        uint32_t vr = v->vr;
        struct session_inst *si = &g->s->insts[nd->comp];
        int r;

        for (size_t i = 0; i < c->n_starts; i++)
                if (c->starts[i].var == nd->var)
                        start = &c->starts[i].value;
        if (!start)
                return session_err(g->s, -EINVAL, "component '%s': '%s' is in an initialization "
                                   "loop and has no start value to begin the iteration from",
                                   c->name, v->name);
        ig_release(nd, nd->val);
        if (mv_from_md(nd->type, start, nd->n, nd->val, nd->sizes) < 0)
                return session_err(g->s, -EINVAL, "component '%s': the start value of '%s' has "
                                   "the wrong size", c->name, v->name);
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
                                   "in Initialization Mode failed: %s", c->name, v->name,
                                   session_call_why(si, r)));
        return 0;
}

#define LOOP_NAMES_MAX  8       /* variables a message names; "and N more" after them */

/*
 * "A.y, B.u, B.y, A.u": the variables of a loop, for messages; past
 * LOOP_NAMES_MAX, "... and N more", so that what follows the list in a
 * message (why it failed) is never cut off by a long loop.
 */
static void loop_names(const struct graph *g, const size_t *nodes, size_t n, char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n && len < size; i++) {
                if (i == LOOP_NAMES_MAX) {
                        snprintf(buf + len, size - len, " and %zu more", n - i);
                        break;
                }
                const struct node *nd = &g->v[nodes[i]];
                int w = snprintf(buf + len, size - len, "%s%s.%s", i ? ", " : "",
                                 g->s->sc->components[nd->comp].name, ig_vname(g->s, nd->comp, nd->var));

                if (w < 0)
                        break;
                len += (size_t)w;
        }
}

/* The loop's first input in document order: component, then variable. */
static size_t first_sink(const struct graph *g, const size_t *nodes, size_t n)
{
        size_t best = SIZE_MAX;

        for (size_t i = 0; i < n; i++) {
                const struct node *nd = &g->v[nodes[i]];

                if (!nd->src && (best == SIZE_MAX || nd->comp < g->v[best].comp ||
                                 (nd->comp == g->v[best].comp && nd->var < g->v[best].var)))
                        best = nodes[i];
        }
        return best;
}

/*
 * The loop's inputs in the order values flow around it: reverse postorder
 * of a depth-first walk along the loop's edges (output -> the inputs it
 * feeds, input -> the outputs that depend on it) from its first input, so
 * that every edge but those closing the loop points forward. The loop is
 * strongly connected: the walk reaches all n nodes. Writes the input node
 * indices to ret (room for n) and returns how many, or -ENOMEM.
 */
static int flow_order(const struct graph *g, const size_t *nodes, size_t n, size_t *ret)
{
        size_t start = first_sink(g, nodes, n), scc = g->v[start].scc;
        size_t *stack = malloc(n * sizeof(*stack)), *edge = malloc(n * sizeof(*edge));
        size_t *post = malloc(n * sizeof(*post)), k = 0, m = 0, depth = 0;
        bool *seen = calloc(g->n, sizeof(*seen));
        int r = -ENOMEM;

        if (!stack || !edge || !post || !seen)
                goto out;
        stack[depth] = start;
        edge[depth++] = g->first[start];
        seen[start] = true;
        while (depth) {
                size_t u = stack[depth - 1], w;

                if (edge[depth - 1] == g->first[u + 1]) {
                        post[k++] = u;
                        depth--;
                        continue;
                }
                w = g->adj[edge[depth - 1]++];
                if (seen[w] || g->v[w].scc != scc || k + depth >= n)
                        continue;
                seen[w] = true;
                stack[depth] = w;
                edge[depth++] = g->first[w];
        }
        for (size_t i = k; i-- > 0;)
                if (!g->v[post[i]].src)
                        ret[m++] = post[i];
        r = (int)m;
out:
        free(stack);
        free(edge);
        free(post);
        free(seen);
        return r;
}

/* Sweep a loop in flow order (get each input's producer, set the input) until none changes. */
int ig_settle(struct graph *g, const size_t *nodes, size_t n)
{
        uint32_t max = g->s->opts.init_max_iterations ? g->s->opts.init_max_iterations
                                                      : LOOP_ITERATIONS_DEFAULT;
        double tol = g->s->opts.init_tolerance > 0 ? g->s->opts.init_tolerance
                                                   : LOOP_TOLERANCE_DEFAULT;
        const struct node *moved = NULL;
        char names[SESSION_MSG_MAX / 2];
        size_t *sinks, n_sinks;
        int r;

        for (size_t i = 0; i < n; i++)
                if (!g->v[nodes[i]].src && (r = guess(g, &g->v[nodes[i]])) < 0)
                        return r;
        sinks = malloc(n * sizeof(*sinks));
        r = sinks ? flow_order(g, nodes, n, sinks) : -ENOMEM;
        if (r < 0) {
                free(sinks);
                return session_err(g->s, -ENOMEM, "out of memory");
        }
        n_sinks = (size_t)r;
        for (uint32_t it = 0; it < max; it++) {
                moved = NULL;
                for (size_t i = 0; i < n_sinks; i++) {
                        struct node *nd = &g->v[sinks[i]];

                        r = ig_get(g, &g->v[nd->in]);
                        if (r == 0)
                                r = ig_set(g, nd);
                        if (r < 0)
                                goto out;
                        if (!moved && mv_differ(nd->type, nd->prev, nd->val, nd->prev_sizes,
                                                nd->sizes, nd->n, tol, NULL))
                                moved = nd;
                }
                if (!moved)
                        break;
        }
        if (moved) {
                loop_names(g, nodes, n, names, sizeof(names));
                r = session_err(g->s, -ELOOP, "the initialization loop through %s does not "
                                "settle after %u iterations (%s.%s still changes)", names,
                                (unsigned)max, g->s->sc->components[moved->comp].name,
                                ig_vname(g->s, moved->comp, moved->var));
                goto out;
        }
        /* Outputs read early in the last sweep: read again for what the loop feeds. */
        r = 0;
        for (size_t i = 0; i < n && r == 0; i++)
                if (g->v[nodes[i]].src)
                        r = ig_get(g, &g->v[nodes[i]]);
out:
        free(sinks);
        return r;
}
