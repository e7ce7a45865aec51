/*
 * md_index: sorted index arrays for lookups by name and by value reference,
 * so neither the checks nor md_find_*() are quadratic in a document with a
 * million variables.
 *
 * DESIGN: an index is an array of element indices sorted by key, ties kept
 * in document order, searched by bisection for the first match. Duplicate
 * keys end up adjacent, which is how uniqueness is checked.
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

struct by_name {
        const char *base;
        size_t stride, off;
};

static const char *name_at(const struct by_name *k, size_t i)
{
        const char *s;

        memcpy(&s, k->base + i * k->stride + k->off, sizeof(s));
        return s ? s : "";
}

static int cmp_name(const void *a, const void *b, void *arg)
{
        size_t i = *(const size_t *)a, j = *(const size_t *)b;
        int r = strcmp(name_at(arg, i), name_at(arg, j));

        if (r)
                return r;
        return (i > j) - (i < j);
}

size_t *md_sort_by_name(const void *base, size_t n, size_t stride, size_t name_off)
{
        struct by_name k = { .base = base, .stride = stride, .off = name_off };
        size_t *idx = malloc((n ? n : 1) * sizeof(*idx));

        if (!idx)
                return NULL;
        for (size_t i = 0; i < n; i++)
                idx[i] = i;
        qsort_r(idx, n, sizeof(*idx), cmp_name, &k);
        return idx;
}

size_t md_lookup_name(const size_t *idx, size_t n, const void *base, size_t stride,
                      size_t name_off, const char *name)
{
        struct by_name k = { .base = base, .stride = stride, .off = name_off };
        size_t lo = 0, hi = n;

        if (!idx || !name)
                return SIZE_MAX;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(name_at(&k, idx[mid]), name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < n && strcmp(name_at(&k, idx[lo]), name) == 0)
                return idx[lo];
        return SIZE_MAX;
}

static int cmp_vr(const void *a, const void *b, void *arg)
{
        const struct md_variable *vars = arg;
        size_t i = *(const size_t *)a, j = *(const size_t *)b;

        if (vars[i].vr != vars[j].vr)
                return vars[i].vr < vars[j].vr ? -1 : 1;
        return (i > j) - (i < j);
}

size_t *md_sort_by_vr(const struct md_variable *vars, size_t n)
{
        size_t *idx = malloc((n ? n : 1) * sizeof(*idx));

        if (!idx)
                return NULL;
        for (size_t i = 0; i < n; i++)
                idx[i] = i;
        qsort_r(idx, n, sizeof(*idx), cmp_vr, (void *)vars);
        return idx;
}

/* Position in md->by_vr of the first entry with that vr, or n_vars. */
static size_t first_vr(const struct md *md, uint32_t vr)
{
        size_t lo = 0, hi = md->n_vars;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (md->vars[md->by_vr[mid]].vr < vr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

size_t md_var_by_vr(const struct md *md, uint32_t vr)
{
        size_t k;

        if (!md || !md->by_vr)
                return SIZE_MAX;
        k = first_vr(md, vr);
        if (k < md->n_vars && md->vars[md->by_vr[k]].vr == vr)
                return md->by_vr[k];
        return SIZE_MAX;
}

const struct md_variable *md_find_vr(const struct md *md, uint32_t vr)
{
        size_t i = md_var_by_vr(md, vr);

        return i == SIZE_MAX ? NULL : &md->vars[i];
}

/* FMI 2.0 base types: Integer and Enumeration share value references. */
static int base_type(const struct md *md, enum md_type t)
{
        return md->fmi == MD_FMI2 && t == MD_ENUMERATION ? MD_INT32 : (int)t;
}

const struct md_variable *md_find_vr_type(const struct md *md, enum md_type type, uint32_t vr)
{
        if (!md || !md->by_vr)
                return NULL;
        for (size_t k = first_vr(md, vr); k < md->n_vars; k++) {
                const struct md_variable *v = &md->vars[md->by_vr[k]];

                if (v->vr != vr)
                        break;
                if (base_type(md, v->type) == base_type(md, type))
                        return v;
        }
        return NULL;
}

const struct md_variable *md_find_own_name(const struct md *md, const char *name)
{
        size_t i;

        if (!md)
                return NULL;
        i = md_lookup_name(md->by_name, md->n_vars, md->vars, sizeof(*md->vars),
                           offsetof(struct md_variable, name), name);
        return i == SIZE_MAX ? NULL : &md->vars[i];
}

const struct md_variable *md_find_name(const struct md *md, const char *name)
{
        const struct md_variable *v = md_find_own_name(md, name);
        size_t i;

        if (v || !md || !md->n_aliases)
                return v;
        i = md_lookup_name(md->aliases_by_name, md->n_aliases, md->aliases,
                           sizeof(*md->aliases), offsetof(struct md_alias_name, name), name);
        return i == SIZE_MAX || md->aliases[i].var >= md->n_vars ? NULL :
               &md->vars[md->aliases[i].var];
}
