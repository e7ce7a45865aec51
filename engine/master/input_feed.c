/*
 * input_feed: the master's use of an input table (master_opts.inputs):
 * the unconnected inputs a file drives join the input blocks an instance
 * sets with each step (master_plan.c), and are filled, after the routes,
 * with the table sampled at the current point (master_route.c). They go
 * to the worker with the other inputs of the step: one round trip.
 *
 * DESIGN: a feed is one column: its value goes to a fixed offset of an
 * input block, planned once. Sampling costs one binary search per
 * instance and point plus O(1) per column. Master thread only.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <stdlib.h>

#include "engine/master/input_table.h"

size_t mfeed_vars(const struct master *m, const struct mi *mi, size_t *vars)
{
        const struct input_table *t = m->opts.inputs;
        size_t n = 0;

        for (size_t i = 0; t && i < t->n_cols; i++)
                if (t->cols[i].comp == mi->idx) {
                        if (vars)
                                vars[n] = t->cols[i].var;
                        n++;
                }
        return n;
}

int mfeed_plan(struct master *m, struct mi *mi)
{
        const struct input_table *t = m->opts.inputs;
        size_t n = mfeed_vars(m, mi, NULL);

        if (!n)
                return 0;
        mi->feeds = calloc(n, sizeof(*mi->feeds));
        if (!mi->feeds)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_cols; i++) {
                const struct input_column *c = &t->cols[i];
                const struct mslot *sl;

                if (c->comp != mi->idx)
                        continue;
                sl = mplan_find(mi->in_slots, mi->n_in_slots, c->var);
                if (!sl || c->element >= sl->n || mi->in[sl->block].type != c->type)
                        return master_err(m, -EINVAL, "input column '%s': no such input",
                                          c->name);
                mi->feeds[mi->n_feeds++] = (struct mfeed){
                        .col = i, .dst = &mi->in[sl->block], .off = sl->off + (size_t)c->element };
        }
        return 0;
}

void mfeed_inputs(struct master *m, struct mi *mi)
{
        const struct input_table *t = m->opts.inputs;
        size_t k;

        if (!mi->n_feeds)
                return;
        k = input_table_find(t, m->t_cur);
        for (size_t i = 0; i < mi->n_feeds; i++)
                input_table_put(t, mi->feeds[i].col, k, m->t_cur, mi->feeds[i].dst->vals,
                                mi->feeds[i].off);
}
