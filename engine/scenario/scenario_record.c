/*
 * scenario_record: the recorded variables as CSV columns. By default every
 * output of every component, in component order and then in the order of
 * each model description. A column is "<component>.<variable>" (the bare
 * variable name when the scenario is one FMU, as fmpy and fmusim write
 * it); an array variable gives one column per element, row-major, with
 * FMI's 1-based structured-name indices: "x[1]", "m[2,1]".
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 32

int scenario_find_variable(const struct scenario *s, const char *name, size_t *ret_comp, size_t *ret_var)
{
        const struct md_variable *best = NULL, *v;
        size_t best_len = 0, best_comp = 0;

        if (s->single_fmu && s->components[0].fmu &&
            (v = md_find_name(s->components[0].fmu->md, name))) {
                *ret_comp = 0;
                *ret_var = (size_t)(v - s->components[0].fmu->md->vars);
                return 0;
        }
        /* Names may hold dots on both sides: the longest component name that fits wins. */
        for (size_t i = 0; i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];
                size_t n = strlen(c->name);

                if (!c->fmu || n <= best_len || strncmp(name, c->name, n) != 0 || name[n] != '.')
                        continue;
                v = md_find_name(c->fmu->md, name + n + 1);
                if (v) {
                        best = v;
                        best_len = n;
                        best_comp = i;
                }
        }
        if (!best)
                return -ENOENT;
        *ret_comp = best_comp;
        *ret_var = (size_t)(best - s->components[best_comp].fmu->md->vars);
        return 0;
}

int scenario_element_index(const char *s, const uint64_t *dims, int nd, uint64_t *ret)
{
        bool range = false;
        uint64_t e = 0;
        int d = 0;

        /* The form first (one index per dimension), then the range: a size may be 0. */
        for (;;) {
                unsigned long long i;
                char *end;

                if (*s < '0' || *s > '9' || d == nd)
                        return -EINVAL;
                errno = 0;
                i = strtoull(s, &end, 10);
                if (errno || i < 1 || i > dims[d])
                        range = true;
                else
                        e = e * dims[d] + (i - 1);
                d++;
                s = end;
                if (*s == ']')
                        break;
                if (*s++ != ',')
                        return -EINVAL;
        }
        if (d != nd || s[1])
                return -EINVAL;
        if (range)
                return -ERANGE;
        *ret = e;
        return 0;
}

/* "[i,j]" of row-major element k (1-based), into buf. */
static void suffix(const uint64_t *dims, int n, uint64_t k, char *buf, size_t size)
{
        uint64_t idx[MAX_DIMS];
        size_t at = 0;

        for (int d = n - 1; d >= 0; d--) {
                idx[d] = k % dims[d] + 1;
                k /= dims[d];
        }
        for (int d = 0; d < n && at < size; d++)
                at += (size_t)snprintf(buf + at, size - at, "%s%llu", d ? "," : "[",
                                       (unsigned long long)idx[d]);
        if (at < size)
                snprintf(buf + at, size - at, "]");
}

struct cols {
        size_t n, cap;
        struct scenario_column *v;
};

/* A column of element k of var, named after vname (the variable's name, or an alias of it). */
static int push(struct sc_load *l, struct cols *c, size_t comp, size_t var, const char *vname,
                uint64_t k, const char *sfx)
{
        const struct scenario *s = l->s;
        struct scenario_column *col;

        if (c->n >= l->opts->max_columns)
                return sc_err(l, l->label, 0, NULL, "more than %zu recorded columns",
                              l->opts->max_columns);
        if (c->n == c->cap) {
                size_t cap = c->cap ? 2 * c->cap : 64;
                struct scenario_column *v = realloc(c->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                c->v = v;
                c->cap = cap;
        }
        col = &c->v[c->n];
        *col = (struct scenario_column){ .comp = comp, .var = var, .element = k };
        if (s->single_fmu ? asprintf(&col->name, "%s%s", vname, sfx) < 0
                          : asprintf(&col->name, "%s.%s%s", s->components[comp].name, vname, sfx) < 0)
                return -ENOMEM;
        c->n++;
        return 0;
}

/* var's columns, named after vname (NULL: its own name); name as given, for messages. */
static int add_var(struct sc_load *l, struct cols *c, size_t comp, size_t var, const char *vname,
                   const char *file, const char *name)
{
        const struct md *md = l->s->components[comp].fmu->md;
        const struct md_variable *v = &md->vars[var];
        uint64_t dims[MAX_DIMS], n = scenario_var_elements(l->s, comp, v);
        int nd = scenario_var_dims(l->s, comp, v, dims, MAX_DIMS), r = 0;
        char sfx[256] = "";

        /*
         * A Clock's column is a flag: 1 in the rows after it ticked
         * (master_clock.c). A clocked variable is readable only while one
         * of its Clocks ticks (FMI 3.0 section 2.2.8.3): the master reads
         * it at those ticks, and its column holds the last tick's value in
         * between.
         */
        if (nd < 0 || n == SCENARIO_NO_SIZE)
                return sc_err(l, file, 0, name,
                              "cannot be recorded: its dimensions cannot be resolved");
        /* An array its structural parameters size 0 (FMI 3.0 section 2.4.7.2) has no column. */
        if (n == 0) {
                struct scenario_var_ref *p = realloc(l->s->empty_recorded,
                                                     (l->s->n_empty_recorded + 1) * sizeof(*p));

                if (!p)
                        return -ENOMEM;
                l->s->empty_recorded = p;
                p[l->s->n_empty_recorded++] = (struct scenario_var_ref){ comp, var };
                return 0;
        }
        for (uint64_t k = 0; k < n && r == 0; k++) {
                if (nd > 0)
                        suffix(dims, nd, k, sfx, sizeof(sfx));
                r = push(l, c, comp, var, vname ? vname : v->name, k, sfx);
        }
        return r;
}

static int all_outputs(struct sc_load *l, struct cols *c)
{
        int r = 0;

        for (size_t i = 0; i < l->s->n_components && r == 0; i++) {
                const struct md *md = l->s->components[i].fmu->md;

                for (size_t j = 0; j < md->n_vars && r == 0; j++)
                        if (md->vars[j].causality == MD_CAUSALITY_OUTPUT &&
                            md->vars[j].type != MD_CLOCK && !md->vars[j].n_clocks)
                                r = add_var(l, c, i, j, NULL, l->label, md->vars[j].name);
        }
        return r;
}

/*
 * The variable part of a name scenario_find_variable() resolved to var of
 * comp: the name itself for one FMU, else what follows "<component>.". An
 * alias (FMI 3.0 <Alias>, FMI 2.0 variables sharing a value reference)
 * names its own column.
 */
static const char *given_part(const struct scenario *s, const char *name, size_t comp)
{
        const struct md *md = s->components[comp].fmu->md;
        size_t n = strlen(s->components[comp].name);

        if (s->single_fmu && md_find_name(md, name))
                return name;
        return strncmp(name, s->components[comp].name, n) == 0 && name[n] == '.' ? name + n + 1
                                                                                 : name;
}

static int listed(struct sc_load *l, struct cols *c, size_t n, const char *const *names,
                  const char *const *origins)
{
        struct seen {
                size_t comp, var;
                const char *as;
        } *seen = calloc(n + 1, sizeof(*seen));
        int bad = 0, r = 0;

        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < n && r != -ENOMEM; i++) {
                const struct md_variable *v;
                size_t comp, var;

                r = 0;
                seen[i] = (struct seen){ SIZE_MAX, SIZE_MAX, NULL };
                if (scenario_find_variable(l->s, names[i], &comp, &var) < 0) {
                        r = sc_err(l, origins[i], 0, names[i], "unknown variable: nothing to record");
                        bad = 1;
                        continue;
                }
                v = &l->s->components[comp].fmu->md->vars[var];
                seen[i] = (struct seen){ comp, var, given_part(l->s, names[i], comp) };
                /* Twice under one name; an alias beside its variable is a column of its own. */
                for (size_t j = 0; j < i && r == 0; j++)
                        if (seen[j].comp == comp && seen[j].var == var &&
                            strcmp(seen[j].as, seen[i].as) == 0)
                                r = sc_err(l, origins[i], 0, names[i], "recorded twice");
                /* Its values are the time column's, always written first. */
                if (r == 0 && v->causality == MD_CAUSALITY_INDEPENDENT)
                        sc_warn(l, origins[i], 0, names[i], "is the independent "
                                "variable: the time column holds it, not recorded again");
                else if (r == 0)
                        r = add_var(l, c, comp, var, seen[i].as, origins[i], names[i]);
                bad |= r < 0;
        }
        free(seen);
        return r == -ENOMEM ? r : bad ? -EINVAL : 0;
}

int sc_columns(struct sc_load *l, size_t n, const char *const *names, const char *const *origins)
{
        struct cols c = { 0 };
        int r;

        r = n ? listed(l, &c, n, names, origins) : all_outputs(l, &c);
        l->s->columns = c.v;
        l->s->n_columns = c.n;
        return r;
}
