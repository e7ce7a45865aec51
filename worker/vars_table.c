/*
 * vars_table: the variable a value reference names, for the checks of
 * vars.c and everything after them.
 *
 * DESIGN: lookups are O(1) per value reference through a direct table when
 * the value references are dense (the largest below VR_DENSE_MAX), else
 * O(log n) through the model description's index (md_find_vr()). The table is
 * filled by that same search, once per instance, so both ways give the
 * same variable. FMI 2.0 has one namespace of value references per base
 * type, FMI 3.0 one for all.
 */
#include <errno.h>
#include <stdlib.h>

#include "worker/worker.h"

/* Dense: a table of at most ~4 entries per variable, plus a little for small models. */
#define VR_DENSE_MAX(n_vars)    (4 * (uint64_t)(n_vars) + 1024)
#define VR_SLOTS2               4       /* FMI 2.0: Real, Integer, Boolean, String */

/*
 * The table a type's value references are looked up in: FMI 3.0 has one
 * namespace; FMI 2.0 one per base type (Enumeration shares Integer's).
 * -1: no table for that type, search.
 */
static int vr_slot(const struct worker *w, enum md_type type)
{
        if (w->fmi != MD_FMI2)
                return 0;
        switch (type) {
        case MD_FLOAT64:
                return 0;
        case MD_INT32:
        case MD_ENUMERATION:
                return 1;
        case MD_BOOLEAN:
                return 2;
        case MD_STRING:
                return 3;
        default:
                return -1;
        }
}

static const struct md_variable *find_search(const struct worker *w, enum md_type type, uint32_t vr)
{
        if (w->fmi == MD_FMI2)
                return md_find_vr_type(w->md, type, vr);
        return md_find_vr(w->md, vr);
}

int vars_table_init(struct worker *w)
{
        static const enum md_type slot_type[VR_SLOTS2] = { MD_FLOAT64, MD_INT32, MD_BOOLEAN,
                                                           MD_STRING };
        size_t n = w->md->n_vars, slots = w->fmi == MD_FMI2 ? VR_SLOTS2 : 1;
        uint64_t span = 0;

        w->vr_table = NULL;
        w->vr_span = 0;
        if (!n || n >= UINT32_MAX)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (w->md->vars[i].vr >= span)
                        span = (uint64_t)w->md->vars[i].vr + 1;
        if (span > VR_DENSE_MAX(n) || span > UINT32_MAX)
                return 0;
        w->vr_table = calloc(slots * span, sizeof(*w->vr_table));
        if (!w->vr_table)
                return -ENOMEM;
        /* Filled by the search itself, so both give the same variable. O(span log n), once. */
        for (size_t s = 0; s < slots; s++)
                for (uint32_t vr = 0; vr < span; vr++) {
                        const struct md_variable *v = find_search(w, slot_type[s], vr);

                        if (v)
                                w->vr_table[s * span + vr] = (uint32_t)vars_index(w, v) + 1;
                }
        w->vr_span = (uint32_t)span;
        return 0;
}

void vars_table_fini(struct worker *w)
{
        free(w->vr_table);
        w->vr_table = NULL;
        w->vr_span = 0;
}

size_t vars_index(const struct worker *w, const struct md_variable *v)
{
        return (size_t)(v - w->md->vars);
}

const struct md_variable *vars_find(const struct worker *w, enum md_type type, uint32_t vr)
{
        int slot = w->vr_table ? vr_slot(w, type) : -1;
        uint32_t k;

        if (slot < 0)
                return find_search(w, type, vr);
        if (vr >= w->vr_span)
                return NULL;    /* above every value reference of the model */
        k = w->vr_table[(size_t)slot * w->vr_span + vr];
        return k ? &w->md->vars[k - 1] : NULL;
}
