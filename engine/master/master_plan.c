/*
 * master_plan: everything the master precomputes once, so that a point
 * does no allocation, lookup by name or parsing: per instance the value
 * blocks it sets and gets (one per call type, value references in
 * variable order), the routes that fill its inputs, the Gauss-Seidel
 * stages, and where each recorded column reads its value.
 *
 * DESIGN: an instance gets, with every step, exactly the variables that
 * feed a connection or a column; it sets exactly its connected inputs
 * and the unconnected inputs an input file drives (input_feed.c).
 * Other unconnected inputs keep the value initialization gave them. Published
 * values and the values a step returns are separate blocks of the same
 * shape (pub and next), so a failed step leaves the published values of
 * the last good point untouched and a Gauss-Seidel consumer reads its
 * producer's new values from next.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

static int cmp_size(const void *a, const void *b)
{
        size_t x = *(const size_t *)a, y = *(const size_t *)b;

        return x < y ? -1 : x > y;
}

static int cmp_slot(const void *a, const void *b)
{
        return cmp_size(&((const struct mslot *)a)->var, &((const struct mslot *)b)->var);
}

size_t mplan_uniq(size_t *v, size_t n)
{
        size_t k = 0;

        qsort(v, n, sizeof(*v), cmp_size);
        for (size_t i = 0; i < n; i++)
                if (k == 0 || v[i] != v[k - 1])
                        v[k++] = v[i];
        return k;
}

const struct mslot *mplan_find(const struct mslot *slots, size_t n, size_t var)
{
        struct mslot key = { .var = var };

        return n ? bsearch(&key, slots, n, sizeof(*slots), cmp_slot) : NULL;
}

const struct mslot *mplan_slot(const struct mi *mi, size_t var)
{
        return mplan_find(mi->slots, mi->n_slots, var);
}

void mplan_free_blocks(struct mblock *b, size_t n, bool vrs)
{
        for (size_t i = 0; b && i < n; i++) {
                if (vrs)
                        free(b[i].vrs);
                free(b[i].vals);
                free(b[i].sizes);
                for (size_t j = 0; b[i].own && j < b[i].n; j++)
                        free(b[i].own[j]);
                free(b[i].own);
                free(b[i].own_cap);
        }
        free(b);
}

static int alloc_vals(struct mblock *b, bool own)
{
        size_t n = b->n ? b->n : 1;

        b->vals = calloc(n, mv_size(b->type));
        b->sizes = calloc(n, sizeof(*b->sizes));
        if (!b->vals || !b->sizes)
                return -ENOMEM;
        if (own && (b->type == MD_STRING || b->type == MD_BINARY)) {
                b->own = calloc(n, sizeof(*b->own));
                b->own_cap = calloc(n, sizeof(*b->own_cap));
                if (!b->own || !b->own_cap)
                        return -ENOMEM;
        }
        return 0;
}

int mplan_blocks(struct master *m, struct mi *mi, const size_t *vars, size_t nv,
                       struct mblock **ret_blocks, size_t *ret_n, struct mslot **ret_slots)
{
        const struct md *md = m->sc->components[mi->idx].fmu->md;
        struct mblock *b = calloc(2 * MD_TYPE_COUNT, sizeof(*b));
        struct mslot *slots = calloc(nv ? nv : 1, sizeof(*slots));
        size_t nb = 0, ns = 0;

        *ret_blocks = b;
        /* Until it is done, every entry may hold something to free. */
        *ret_n = b ? 2 * MD_TYPE_COUNT : 0;
        if (ret_slots)
                *ret_slots = slots;
        else
                free(slots);
        if (!b || (ret_slots && !slots))
                return -ENOMEM;
        for (int k = 0; k < 2 * MD_TYPE_COUNT; k++) {
                struct mblock *blk = &b[nb];
                int t = k % MD_TYPE_COUNT;
                bool clocked = k >= MD_TYPE_COUNT;

                for (size_t i = 0; i < nv; i++) {
                        const struct md_variable *v = &md->vars[vars[i]];
                        uint64_t e = scenario_var_elements(m->sc, mi->idx, v);

                        if ((int)mv_call_type(v->type, mi->fmi) != t ||
                            (v->n_clocks > 0) != clocked)
                                continue;
                        if (clocked && (t == MD_STRING || t == MD_BINARY))
                                return master_err(m, -EINVAL, "component '%s': '%s' is a clocked "
                                                  "%s variable: clocked String and Binary "
                                                  "variables are not routed or recorded",
                                                  mi->name, v->name, md_type_name(v->type));
                        if (e == SCENARIO_NO_SIZE || e > (1u << 28))
                                return master_err(m, -EINVAL, "component '%s': '%s' has no "
                                                  "resolvable size", mi->name, v->name);
                        if (!blk->vrs && !(blk->vrs = calloc(nv, sizeof(*blk->vrs))))
                                return -ENOMEM;
                        blk->type = (enum md_type)t;
                        blk->clocked = clocked;
                        if (ret_slots)
                                slots[ns++] = (struct mslot){ .var = vars[i], .block = nb,
                                                              .off = blk->n, .n = (size_t)e };
                        blk->vrs[blk->n_vars++] = v->vr;
                        blk->n += (size_t)e;
                }
                if (blk->vrs)
                        nb++;
        }
        *ret_n = nb;
        if (ret_slots)
                qsort(slots, ns, sizeof(*slots), cmp_slot);
        for (size_t i = 0; i < nb; i++)
                if (alloc_vals(&b[i], false) < 0)
                        return -ENOMEM;
        return 0;
}

/* Blocks of unclocked variables: they come first (mplan_blocks()). */
static size_t plain_blocks(const struct mblock *b, size_t n)
{
        size_t k = 0;

        while (k < n && !b[k].clocked)
                k++;
        return k;
}

bool mplan_routed(const struct scenario_connection *c)
{
        /* A Clock connection ticks (master_clock.c); arrays of no elements move nothing. */
        return !c->parameter && c->from_type != MD_CLOCK && c->elements != 0;
}

/* Outputs to get with each step: connection sources and recorded columns. */
static int plan_outputs(struct master *m, struct mi *mi)
{
        const struct scenario *sc = m->sc;
        size_t nv = 0, *vars = malloc((sc->n_connections + sc->n_columns + sc->rig.n_out + 1) *
                                      sizeof(*vars));
        int r;

        if (!vars)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_connections; i++)
                if (sc->connections[i].from_comp == mi->idx && mplan_routed(&sc->connections[i]))
                        vars[nv++] = sc->connections[i].from_var;
        for (size_t i = 0; i < sc->rig.n_out; i++)      /* outputs a rig reads */
                if (sc->rig.out[i].comp == mi->idx)
                        vars[nv++] = sc->rig.out[i].var;
        /* A recorded Clock is a flag the master keeps (master_clock.c), not a value got. */
        for (size_t i = 0; i < sc->n_columns; i++)
                if (sc->columns[i].comp == mi->idx &&
                    sc->components[mi->idx].fmu->md->vars[sc->columns[i].var].type != MD_CLOCK)
                        vars[nv++] = sc->columns[i].var;
        nv = mplan_uniq(vars, nv);
        for (size_t i = 0; i < nv; i++) {
                const struct md_variable *v = &sc->components[mi->idx].fmu->md->vars[vars[i]];

                if (v->type == MD_CLOCK) {
                        free(vars);
                        return master_err(m, -EINVAL, "component '%s': '%s' is a Clock: a rig "
                                          "does not read Clocks", mi->name, v->name);
                }
        }
        r = mplan_blocks(m, mi, vars, nv, &mi->next, &mi->n_out, &mi->slots);
        mi->n_slots = nv;
        free(vars);
        if (r < 0)
                return r;
        mi->n_out_step = plain_blocks(mi->next, mi->n_out);
        mi->pub = calloc(mi->n_out ? mi->n_out : 1, sizeof(*mi->pub));
        mi->inst_out = calloc(mi->n_out ? mi->n_out : 1, sizeof(*mi->inst_out));
        if (!mi->pub || !mi->inst_out)
                return -ENOMEM;
        for (size_t i = 0; i < mi->n_out; i++) {
                struct mblock *nb = &mi->next[i], *pb = &mi->pub[i];

                *pb = (struct mblock){ .type = nb->type, .n_vars = nb->n_vars, .vrs = nb->vrs,
                                       .n = nb->n, .clocked = nb->clocked };
                if (alloc_vals(pb, true) < 0)
                        return -ENOMEM;
                mi->inst_out[i] = (struct inst_out){ nb->type, nb->vrs, nb->n_vars, nb->vals,
                                                     nb->sizes, nb->n };
        }
        return 0;
}

/* Inputs to set with each step: every connected input. */
static int plan_inputs(struct master *m, struct mi *mi)
{
        const struct scenario *sc = m->sc;
        size_t nv = 0, *vars = malloc((sc->n_connections + mfeed_vars(m, mi, NULL) +
                                       sc->rig.n_in + 1) * sizeof(*vars));
        int r;

        if (!vars)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_connections; i++)
                if (sc->connections[i].to_comp == mi->idx && mplan_routed(&sc->connections[i]))
                        vars[nv++] = sc->connections[i].to_var;
        nv += mfeed_vars(m, mi, vars + nv);     /* unconnected inputs a file drives */
        for (size_t i = 0; i < sc->rig.n_in; i++)       /* and those a rig writes */
                if (sc->rig.in[i].comp == mi->idx)
                        vars[nv++] = sc->rig.in[i].var;
        nv = mplan_uniq(vars, nv);
        r = mplan_blocks(m, mi, vars, nv, &mi->in, &mi->n_in, &mi->in_slots);
        mi->n_in_slots = nv;
        free(vars);
        if (r < 0)
                return r;
        mi->n_in_step = plain_blocks(mi->in, mi->n_in);
        mi->inst_in = calloc(mi->n_in ? mi->n_in : 1, sizeof(*mi->inst_in));
        if (!mi->inst_in)
                return -ENOMEM;
        for (size_t i = 0; i < mi->n_in; i++)
                mi->inst_in[i] = (struct inst_in){ mi->in[i].type, mi->in[i].vrs, mi->in[i].n_vars,
                                                   mi->in[i].vals, mi->in[i].sizes, mi->in[i].n };
        r = mfeed_plan(m, mi);
        return r < 0 ? r : minput_plan(m, mi);
}


/* Gauss-Seidel stages: a consumer one stage after its latest sequential producer. */
static int plan_stages(struct master *m)
{
        bool changed = true;
        size_t k = 0;

        for (unsigned pass = 0; changed; pass++) {
                changed = false;
                if (pass > m->n)
                        return master_err(m, -EINVAL, "the Gauss-Seidel (sequential) connections "
                                          "form a loop: no component can step first");
                for (size_t d = 0; d < m->n; d++)
                        for (size_t i = 0; i < m->mi[d].n_routes; i++) {
                                const struct mroute *r = &m->mi[d].routes[i];

                                if (r->sequential && r->prod != d &&
                                    m->mi[d].stage < m->mi[r->prod].stage + 1) {
                                        m->mi[d].stage = m->mi[r->prod].stage + 1;
                                        changed = true;
                                }
                        }
        }
        for (size_t i = 0; i < m->n; i++)
                if (m->mi[i].stage + 1 > m->n_stages)
                        m->n_stages = m->mi[i].stage + 1;
        m->by_stage = calloc(m->n + 1, sizeof(*m->by_stage));
        m->stage_start = calloc(m->n_stages + 1, sizeof(*m->stage_start));
        if (!m->by_stage || !m->stage_start)
                return -ENOMEM;
        for (unsigned st = 0; st < m->n_stages; st++) {
                m->stage_start[st] = k;
                for (size_t i = 0; i < m->n; i++)
                        if (m->mi[i].stage == st)
                                m->by_stage[k++] = i;
        }
        m->stage_start[m->n_stages] = k;
        return 0;
}

static int plan_columns(struct master *m)
{
        const struct scenario *sc = m->sc;
        size_t n = sc->n_columns ? sc->n_columns : 1;

        m->n_cols = sc->n_columns;
        m->col_block = calloc(n, sizeof(*m->col_block));
        m->col_off = calloc(n, sizeof(*m->col_off));
        m->row_vals = calloc(n, sizeof(*m->row_vals));
        m->row_blobs = calloc(n, sizeof(*m->row_blobs));
        m->row_bits = calloc(n, sizeof(*m->row_bits));
        m->held_vals = calloc(n, sizeof(*m->held_vals));
        m->held_bits = calloc(n, sizeof(*m->held_bits));
        if (!m->col_block || !m->col_off || !m->row_vals || !m->row_blobs || !m->row_bits ||
            !m->held_vals || !m->held_bits)
                return -ENOMEM;
        m->row_defer = m->opts.sink != NULL;
        for (size_t i = 0; i < sc->n_columns; i++) {
                const struct scenario_column *c = &sc->columns[i];
                const struct mslot *sl = c->comp < m->n ? mplan_slot(&m->mi[c->comp], c->var) : NULL;

                if (!sl && c->comp < m->n &&
                    mclock_column(&m->mi[c->comp], sc->components[c->comp].fmu->md->vars[c->var].vr,
                                  &m->col_block[i], &m->col_off[i]))
                        continue;
                if (!sl || c->element >= sl->n)
                        return master_err(m, -EINVAL, "column '%s': no such value", c->name);
                m->col_block[i] = &m->mi[c->comp].pub[sl->block];
                m->col_off[i] = sl->off + (size_t)c->element;
                if (m->col_block[i]->type == MD_STRING || m->col_block[i]->type == MD_BINARY)
                        m->row_defer = false;
        }
        return 0;
}

int mplan_build(struct master *m)
{
        int r = 0;

        for (size_t i = 0; i < m->n && r == 0; i++) {
                r = plan_outputs(m, &m->mi[i]);
                if (r == 0)
                        r = plan_inputs(m, &m->mi[i]);
                if (r == 0)
                        r = mclock_plan(m, &m->mi[i]);
        }
        if (r == 0)
                r = mclock_links(m);
        if (r == 0)
                r = mplan_routes(m);
        for (size_t i = 0; i < m->n && r == 0; i++)
                r = mplan_iu_outputs(m, &m->mi[i]);
        if (r == 0)
                r = plan_stages(m);
        if (r == 0)
                r = plan_columns(m);
        if (r == 0)
                r = mrig_plan(m);
        if (r == -ENOMEM)
                master_err(m, r, "out of memory");
        return r;
}

void mplan_free(struct master *m)
{
        mrig_free(m);
        for (size_t i = 0; m->mi && i < m->n; i++) {
                struct mi *mi = &m->mi[i];

                mplan_free_routes(mi);
                mclock_free(mi);
                mplan_free_blocks(mi->pub, mi->n_out, false);
                mplan_free_blocks(mi->next, mi->n_out, true);
                mplan_free_blocks(mi->in, mi->n_in, true);
                free(mi->inst_out);
                free(mi->inst_in);
                free(mi->slots);
                free(mi->in_slots);
                free(mi->feeds);
                minput_free(mi);
        }
        free(m->clinks);
        free(m->by_stage);
        free(m->stage_start);
        free(m->col_block);
        free(m->col_off);
        free(m->row_vals);
        free(m->row_blobs);
        free(m->held_vals);
        free(m->row_bits);
        free(m->held_bits);
}
