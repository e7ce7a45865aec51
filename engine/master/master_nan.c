/*
 * master_nan: a NaN output on its way to a consumer, said once per
 * instance (docs/scenarios.md, "Numbers"). FMI gives an importer no way to
 * know whether an input accepts NaN, and the consumer's FMU decides what
 * a value means (FMI 3.0 section 2.2.7.3: the FMU checks what it is
 * given), so the value is routed as it is; the user learns which output
 * went NaN, when, and who takes it.
 *
 * DESIGN: mnan_check() is on the publish path of every point: one pass
 * over a float block with no branch per value; the search for the
 * variable and its consumers runs only once a NaN is there, once per
 * instance.
 */
#include "engine/master/master_int.h"

#include <math.h>
#include <stdio.h>

#include "engine/master/master_value.h"

/* Whether a float block holds a NaN: one pass, no branch per value. */
static bool any_nan(const struct mblock *b)
{
        bool any = false;
        size_t j;

        if (b->type == MD_FLOAT64) {
                const double *v = (const double *)b->vals;

                for (j = 0; j < b->n; j++)
                        any |= v[j] != v[j];
        } else {
                const float *v = (const float *)b->vals;

                for (j = 0; j < b->n; j++)
                        any |= v[j] != v[j];
        }
        return any;
}

/* The first consumer of element j of mi's output block: its name and input; false: none. */
static bool consumer(const struct master *m, const struct mi *mi, size_t block, size_t j,
                     const char **ret_comp, size_t *ret_route)
{
        for (size_t c = 0; c < m->n; c++)
                for (size_t k = 0; k < m->mi[c].n_routes; k++) {
                        const struct mroute *r = &m->mi[c].routes[k];

                        if (r->prod == mi->idx &&
                            (r->src_pub == &mi->pub[block] || r->src_next == &mi->next[block]) &&
                            j >= r->src_off && j < r->src_off + r->n) {
                                *ret_comp = m->mi[c].name;
                                *ret_route = k;
                                return true;
                        }
                }
        return false;
}

void mnan_check(struct master *m, struct mi *mi, size_t block)
{
        const struct mblock *b = &mi->next[block];
        const char *who = NULL, *var = "?";
        size_t j, route;

        if (mi->noted_nan || (b->type != MD_FLOAT64 && b->type != MD_FLOAT32))
                return;
        if (!any_nan(b))
                return;
        /* The first NaN a consumer takes: a recorded-only one is the results' to show. */
        for (j = 0; j < b->n; j++)
                if (isnan(mv_to_double(b->type, b->vals, j)) &&
                    consumer(m, mi, block, j, &who, &route))
                        break;
        if (j == b->n)
                return;
        mi->noted_nan = true;
        for (size_t s = 0; s < mi->n_slots; s++)
                if (mi->slots[s].block == block && j >= mi->slots[s].off &&
                    j < mi->slots[s].off + mi->slots[s].n)
                        var = m->sc->components[mi->idx].fmu->md->vars[mi->slots[s].var].name;
        master_note(m, mi->idx, "component '%s': output '%s' is NaN at t = %.17g and goes to "
                    "component '%s' as it is (whether an input takes NaN is its FMU's to "
                    "decide); said once", mi->name, var, mi->t, who);
}
