/*
 * init_loop: a loop of connected variables in Initialization Mode,
 * iterated to a fixed point (see init.h): its inputs start from their
 * start values, then each round gets every output of the loop and sets
 * every input from them, until no input changes by more than the
 * tolerance (relative to max(1, |value|)), or the bound is reached and the
 * loop is named in the error.
 */
#include "daemon/init_graph.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/master_value.h"

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
                                   r >= 0 ? session_status_name(r) : inst_message(si->inst)));
        return 0;
}

/* "A.y, B.u, B.y, A.u": the variables of a loop, for messages. */
static void loop_names(const struct graph *g, const size_t *nodes, size_t n, char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n && len < size; i++) {
                const struct node *nd = &g->v[nodes[i]];
                int w = snprintf(buf + len, size - len, "%s%s.%s", i ? ", " : "",
                                 g->s->sc->components[nd->comp].name, ig_vname(g->s, nd->comp, nd->var));

                if (w < 0)
                        break;
                len += (size_t)w;
        }
}

/* Iterate a loop (get its outputs, set its inputs) until no input changes. */
int ig_settle(struct graph *g, const size_t *nodes, size_t n)
{
        uint32_t max = g->s->opts.init_max_iterations ? g->s->opts.init_max_iterations
                                                      : LOOP_ITERATIONS_DEFAULT;
        double tol = g->s->opts.init_tolerance > 0 ? g->s->opts.init_tolerance
                                                   : LOOP_TOLERANCE_DEFAULT;
        const struct node *moved = NULL;
        char names[SESSION_MSG_MAX / 2];
        int r;

        for (size_t i = 0; i < n; i++)
                if (!g->v[nodes[i]].src && (r = guess(g, &g->v[nodes[i]])) < 0)
                        return r;
        for (uint32_t it = 0; it < max; it++) {
                moved = NULL;
                for (size_t i = 0; i < n; i++)
                        if (g->v[nodes[i]].src && (r = ig_get(g, &g->v[nodes[i]])) < 0)
                                return r;
                for (size_t i = 0; i < n; i++) {
                        struct node *nd = &g->v[nodes[i]];

                        if (nd->src)
                                continue;
                        r = ig_set(g, nd);
                        if (r < 0)
                                return r;
                        if (!moved && mv_differ(nd->type, nd->prev, nd->val, nd->prev_sizes,
                                                nd->sizes, nd->n, tol, NULL))
                                moved = nd;
                }
                if (!moved)
                        return 0;
        }
        loop_names(g, nodes, n, names, sizeof(names));
        return session_err(g->s, -ELOOP, "the initialization loop through %s does not settle "
                           "after %u iterations (%s.%s still changes)", names, (unsigned)max,
                           g->s->sc->components[moved->comp].name,
                           ig_vname(g->s, moved->comp, moved->var));
}

