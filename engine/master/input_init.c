/*
 * input_init: the inputs an input file drives (input_table.h), set in
 * Initialization Mode at the start time, so that initialization (and
 * every output computed from them) sees the file's first values.
 *
 * DESIGN: one set call per variable with all its elements (an array's
 * columns may come in any order in the file). Called by init.c after
 * every instance entered Initialization Mode and before connected inputs
 * are resolved (init_inputs.c).
 */
#include "engine/master/init.h"
#include "engine/master/input_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

static int cmp_col(const void *a, const void *b, void *ctx)
{
        const struct input_table *t = ctx;
        const struct input_column *x = &t->cols[*(const size_t *)a];
        const struct input_column *y = &t->cols[*(const size_t *)b];

        if (x->comp != y->comp)
                return x->comp < y->comp ? -1 : 1;
        if (x->var != y->var)
                return x->var < y->var ? -1 : 1;
        return x->element < y->element ? -1 : x->element > y->element;
}

/* Set the variable of columns idx[0..n) (one variable, every element) at the start time. */
static int set_var(struct session *s, const size_t *idx, size_t n, size_t k, double t0)
{
        const struct input_table *t = s->opts.inputs;
        const struct input_column *c = &t->cols[idx[0]];
        struct session_inst *si = &s->insts[c->comp];
        const struct md_variable *v = &s->sc->components[c->comp].fmu->md->vars[c->var];
        void *buf = calloc(n, mv_size(c->type));
        int r;

        if (!buf)
                return session_err(s, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const struct input_column *e = &t->cols[idx[i]];

                input_table_put(t, idx[i], k, t0, buf, (size_t)e->element);
        }
        r = inst_set(si->inst, c->type, &v->vr, 1, buf, n);
        free(buf);
        if (r == INST_OK || r == INST_WARNING)
                return 0;
        return session_err(s, session_call_result(si, r), "component '%s': setting '%s' from "
                           "the input file at t = %.17g failed: %s",
                           s->sc->components[c->comp].name, v->name, t0,
                           session_call_why(si, r));
}

int init_file_inputs(struct session *s)
{
        const struct input_table *t = s->opts.inputs;
        double t0 = s->sc->experiment.start;
        size_t *idx, k;
        int r = 0;

        if (!t || !t->n_cols)
                return 0;
        idx = malloc(t->n_cols * sizeof(*idx));
        if (!idx)
                return session_err(s, -ENOMEM, "out of memory");
        for (size_t i = 0; i < t->n_cols; i++)
                idx[i] = i;
        qsort_r(idx, t->n_cols, sizeof(*idx), cmp_col, (void *)t);
        k = input_table_find(t, t0);
        for (size_t g = 0, i = 1; i <= t->n_cols && r == 0; i++) {
                if (i < t->n_cols && t->cols[idx[i]].comp == t->cols[idx[g]].comp &&
                    t->cols[idx[i]].var == t->cols[idx[g]].var)
                        continue;
                r = set_var(s, idx + g, i - g, k, t0);
                g = i;
        }
        free(idx);
        return r;
}
