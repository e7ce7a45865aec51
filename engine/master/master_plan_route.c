/*
 * master_plan_route: the routes of a master, built once: one per
 * connection (producer output block -> consumer input block), one more
 * per connection into an intermediate input of an instance with an
 * intermediate update callback, the output derivatives its producer must
 * provide for it, and the recorded intermediate outputs.
 *
 * DESIGN: a route is checked here for everything a point would otherwise
 * have to check: both ends exist, have the same number of elements, and
 * either the same call type, Float32/Float64 on both sides, or an
 * Enumeration between FMI 2.0 and 3.0 (Int32 and Int64); a
 * transformation (factor, offset) needs float types.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/extrapolate.h"
#include "engine/master/master_value.h"

static bool is_iu_input(const struct md_variable *v)
{
        return v->causality == MD_CAUSALITY_INPUT && v->intermediate_update &&
               v->variability == MD_VARIABILITY_CONTINUOUS && md_type_is_float(v->type);
}

static const struct md_variable *var_of(const struct master *m, size_t comp, size_t var)
{
        return &m->sc->components[comp].fmu->md->vars[var];
}

static int check(struct master *m, const struct scenario_connection *c, enum md_type st,
                 enum md_type dt, size_t sn, size_t dn)
{
        const char *origin = c->origin ? c->origin : "?";
        bool floats = md_type_is_float(st) && md_type_is_float(dt);

        if (st == MD_CLOCK || dt == MD_CLOCK)
                return master_err(m, -EINVAL, "connection %s: Clocks are not routed", origin);
        if (!mv_convertible(st, dt))
                return master_err(m, -EINVAL, "connection %s: %s -> %s is not a conversion the "
                                  "master makes", origin, md_type_name(st), md_type_name(dt));
        if (!c->identity && !floats)
                return master_err(m, -EINVAL, "connection %s: a transformation (factor %g, "
                                  "offset %g) on a %s connection; only Float32 and Float64 "
                                  "values are transformed", origin, c->factor, c->offset,
                                  md_type_name(st));
        if (sn != dn)
                return master_err(m, -EINVAL, "connection %s: %zu values feed %zu", origin, sn, dn);
        return 0;
}

/* Output derivatives of var for intermediate inputs: offset of its order-1 values in der_vals. */
static int add_derivative(struct mi *p, uint32_t vr, size_t n, unsigned order, size_t *ret_off)
{
        size_t off = 0, *elems;
        uint32_t *vrs;
        int32_t *orders;

        /* Values are serialized entry by entry, each entry all elements (section 4.1.2). */
        for (size_t i = 0; i < p->n_der; i++) {
                if (p->der_vrs[i] == vr && p->der_orders[i] == 1) {
                        *ret_off = off;
                        return 0;
                }
                off += p->der_elems[i];
        }
        vrs = realloc(p->der_vrs, (p->n_der + order) * sizeof(*vrs));
        if (!vrs)
                return -ENOMEM;
        p->der_vrs = vrs;
        orders = realloc(p->der_orders, (p->n_der + order) * sizeof(*orders));
        if (!orders)
                return -ENOMEM;
        p->der_orders = orders;
        elems = realloc(p->der_elems, (p->n_der + order) * sizeof(*elems));
        if (!elems)
                return -ENOMEM;
        p->der_elems = elems;
        for (unsigned o = 1; o <= order; o++) {
                p->der_vrs[p->n_der] = vr;
                p->der_elems[p->n_der] = n;
                p->der_orders[p->n_der++] = (int32_t)o;
        }
        p->n_der_vals += order * n;
        *ret_off = off;
        return 0;
}

static int add_route(struct master *m, const struct scenario_connection *c)
{
        struct mi *p = &m->mi[c->from_comp], *d = &m->mi[c->to_comp];
        const struct mslot *ss = mplan_slot(p, c->from_var);
        const struct mslot *ds = mplan_find(d->in_slots, d->n_in_slots, c->to_var);
        struct mroute *r;
        int e;

        if (!ss || !ds)
                return master_err(m, -EINVAL, "connection %s: not planned", c->origin ? c->origin : "?");
        e = check(m, c, p->next[ss->block].type, d->in[ds->block].type, ss->n, ds->n);
        if (e < 0)
                return e;
        r = &d->routes[d->n_routes++];
        *r = (struct mroute){
                .prod = c->from_comp,
                .src_pub = &p->pub[ss->block],
                .src_next = &p->next[ss->block],
                .src_off = ss->off,
                .dst = &d->in[ds->block],
                .dst_off = ds->off,
                .n = ss->n,
                .identity = c->identity,
                .sequential = c->sequential && c->from_comp != c->to_comp,
                .factor = c->factor,
                .offset = c->offset,
        };
        return 0;
}

/* The intermediate input blocks of consumer d: its connected intermediate inputs. */
static int iu_blocks(struct master *m, struct mi *d, struct mslot **ret_slots, size_t *ret_n)
{
        const struct scenario *sc = m->sc;
        size_t nv = 0, *vars = malloc((sc->n_connections + 1) * sizeof(*vars));
        int r;

        if (!vars)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_connections; i++) {
                const struct scenario_connection *c = &sc->connections[i];

                if (c->to_comp == d->idx && mplan_routed(c) && is_iu_input(var_of(m, d->idx, c->to_var)))
                        vars[nv++] = c->to_var;
        }
        nv = mplan_uniq(vars, nv);
        r = mplan_blocks(m, d, vars, nv, &d->iu_in, &d->n_iu_in, ret_slots);
        *ret_n = nv;
        free(vars);
        return r;
}

static int add_iu_route(struct master *m, const struct scenario_connection *c,
                        const struct mslot *slots, size_t n_slots)
{
        struct mi *p = &m->mi[c->from_comp], *d = &m->mi[c->to_comp];
        const struct md *pmd = m->sc->components[c->from_comp].fmu->md;
        const struct md_variable *sv = var_of(m, c->from_comp, c->from_var);
        const struct mslot *ss = mplan_slot(p, c->from_var);
        const struct mslot *ds = mplan_find(slots, n_slots, c->to_var);
        unsigned order = 0;
        size_t der_off = 0;
        struct miu *u;
        int r;

        if (!ss || !ds)
                return master_err(m, -EINVAL, "connection %s: not planned", c->origin ? c->origin : "?");
        if (!md_type_is_float(sv->type))
                return 0;       /* not a value to extrapolate: the step's input holds */
        if (sv->variability == MD_VARIABILITY_CONTINUOUS && pmd->cs.max_output_derivative_order)
                order = pmd->cs.max_output_derivative_order < EXTRAPOLATE_MAX_ORDER ?
                        pmd->cs.max_output_derivative_order : EXTRAPOLATE_MAX_ORDER;
        if (order) {
                r = add_derivative(p, sv->vr, ss->n, order, &der_off);
                if (r < 0)
                        return r;
        }
        u = &d->iu_routes[d->n_iu++];
        *u = (struct miu){
                .prod = c->from_comp,
                .src = &p->pub[ss->block],
                .src_off = ss->off,
                .dst = &d->iu_in[ds->block],
                .dst_off = ds->off,
                .n = ss->n,
                .order = order,
                .der_off = der_off,
                .identity = c->identity,
                .factor = c->factor,
                .offset = c->offset,
        };
        return 0;
}

/* Intermediate routes of consumer d (it has an intermediate update callback). */
static int plan_iu(struct master *m, struct mi *d)
{
        const struct scenario *sc = m->sc;
        struct mslot *slots = NULL;
        size_t n_slots = 0;
        int r;

        r = iu_blocks(m, d, &slots, &n_slots);
        if (r == 0 && n_slots && !(d->iu_routes = calloc(n_slots, sizeof(*d->iu_routes))))
                r = -ENOMEM;
        for (size_t i = 0; i < sc->n_connections && r == 0 && n_slots; i++) {
                const struct scenario_connection *c = &sc->connections[i];

                if (c->to_comp == d->idx && mplan_routed(c) && is_iu_input(var_of(m, d->idx, c->to_var)))
                        r = add_iu_route(m, c, slots, n_slots);
        }
        free(slots);
        return r;
}

int mplan_routes(struct master *m)
{
        const struct scenario *sc = m->sc;
        int r = 0;

        for (size_t i = 0; i < sc->n_connections; i++)
                if (mplan_routed(&sc->connections[i]))
                        m->mi[sc->connections[i].to_comp].n_routes++;
        for (size_t i = 0; i < m->n; i++) {
                size_t n = m->mi[i].n_routes;

                m->mi[i].n_routes = 0;
                m->mi[i].routes = calloc(n ? n : 1, sizeof(*m->mi[i].routes));
                if (!m->mi[i].routes)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < sc->n_connections && r == 0; i++)
                if (mplan_routed(&sc->connections[i]))
                        r = add_route(m, &sc->connections[i]);
        for (size_t i = 0; i < m->n && r == 0; i++)
                if (m->mi[i].iu)
                        r = plan_iu(m, &m->mi[i]);
        for (size_t i = 0; i < m->n && r == 0; i++) {
                struct mi *p = &m->mi[i];

                p->t_der = NAN;
                if (p->n_der_vals && !(p->der_vals = calloc(p->n_der_vals, sizeof(double))))
                        r = -ENOMEM;
        }
        return r;
}

int mplan_iu_outputs(struct master *m, struct mi *mi)
{
        const struct scenario *sc = m->sc;
        size_t nv = 0, *vars;
        struct mslot *slots = NULL;
        int r;

        if (!mi->iu || !m->s->opts.record_intermediate)
                return 0;
        vars = malloc((sc->n_columns + 1) * sizeof(*vars));
        mi->iu_cols = calloc(sc->n_columns + 1, sizeof(*mi->iu_cols));
        if (!vars || !mi->iu_cols) {
                free(vars);
                return -ENOMEM;
        }
        for (size_t i = 0; i < sc->n_columns; i++) {
                const struct md_variable *v = var_of(m, mi->idx, sc->columns[i].var);

                if (sc->columns[i].comp == mi->idx && v->intermediate_update &&
                    v->causality == MD_CAUSALITY_OUTPUT)
                        vars[nv++] = sc->columns[i].var;
        }
        nv = mplan_uniq(vars, nv);
        r = mplan_blocks(m, mi, vars, nv, &mi->iu_out, &mi->n_iu_out, &slots);
        for (size_t i = 0; i < sc->n_columns && r == 0; i++) {
                const struct mslot *sl = sc->columns[i].comp == mi->idx ?
                                         mplan_find(slots, nv, sc->columns[i].var) : NULL;

                if (sl)
                        mi->iu_cols[mi->n_iu_cols++] = (struct miu_col){
                                .col = i, .block = &mi->iu_out[sl->block],
                                .off = sl->off + (size_t)sc->columns[i].element };
        }
        free(vars);
        free(slots);
        return r;
}

void mplan_free_routes(struct mi *mi)
{
        free(mi->routes);
        free(mi->iu_routes);
        mplan_free_blocks(mi->iu_in, mi->n_iu_in, true);
        mplan_free_blocks(mi->iu_out, mi->n_iu_out, true);
        free(mi->iu_cols);
        free(mi->der_vrs);
        free(mi->der_orders);
        free(mi->der_elems);
        free(mi->der_vals);
}
