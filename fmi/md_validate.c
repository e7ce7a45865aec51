/*
 * md_validate: the checks that need the whole document: unique names and
 * value references (FMI 2.0: per base type, with the alias rules), type
 * definitions, the independent variable, previous references, aliases,
 * Event Mode with clocks, then each variable (md_check.c) and the model
 * structure (md_structure.c).
 *
 * DESIGN: uniqueness is checked on sorted indices, never pairwise, so a
 * document with a million variables costs O(n log n).
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

static void check_type_defs(struct md_ctx *c)
{
        const struct md *md = c->md;
        const char *sec = SEC(c, "2.4.4", "2.2.3");

        for (size_t i = 0; i < md->n_type_defs; i++) {
                const struct md_type_def *td = &md->type_defs[i];
                const struct md_variable *v;
                bool bad_range;

                if (md_type_is_float(td->type))
                        md_check_unit_ref(c, td->line, td->name, sec, &td->attrs, NULL, NULL);
                if (md_type_is_float(td->type))
                        bad_range = td->attrs.max.f < td->attrs.min.f;
                else if (md_type_is_signed(td->type))
                        bad_range = td->attrs.max.i < td->attrs.min.i;
                else
                        bad_range = td->attrs.max.u < td->attrs.min.u;
                if (td->attrs.has_min && td->attrs.has_max && bad_range &&
                    td->type != MD_BOOLEAN && td->type != MD_STRING)
                        md_err(c, td->line, td->name, sec, "min is greater than max");
                v = md->fmi == MD_FMI3 ? md_find_own_name(md, td->name) : NULL;
                if (v)
                        md_err(c, td->line, td->name, sec,
                               "a type name must differ from every variable name, but variable "
                               "on line %d has it", v->line);
        }
}

struct named {
        const char *name;
        int line;
};

/* Names of variables and (FMI 3.0) aliases are unique together. */
static void check_names(struct md_ctx *c)
{
        const struct md *md = c->md;
        size_t n = md->n_vars + c->n_aliases, *idx;
        struct named *v = malloc((n ? n : 1) * sizeof(*v));

        if (!v) {
                c->nomem = true;
                return;
        }
        for (size_t i = 0; i < md->n_vars; i++)
                v[i] = (struct named){ md->vars[i].name, md->vars[i].line };
        for (size_t i = 0; i < c->n_aliases; i++)
                v[md->n_vars + i] = (struct named){ c->aliases[i].name, c->aliases[i].line };
        idx = md_sort_by_name(v, n, sizeof(*v), offsetof(struct named, name));
        if (!idx) {
                c->nomem = true;
                goto out;
        }
        for (size_t k = 1; k < n; k++) {
                const struct named *a = &v[idx[k - 1]], *b = &v[idx[k]];

                /* A missing name was reported where it was read. */
                if (!b->name || !*b->name || !a->name || strcmp(a->name, b->name) != 0)
                        continue;
                md_err(c, b->line, b->name,
                       SEC(c, idx[k] < md->n_vars ? "2.4.7.4" : "2.4.7.3", "2.2.7"),
                       "name is not unique: also used on line %d", a->line);
        }
        free(idx);
out:
        free(v);
}

static void check_vrs3(struct md_ctx *c)
{
        const struct md *md = c->md;
        const struct md_variable *prev = NULL;

        for (size_t k = 0; k < md->n_vars; k++) {
                const struct md_variable *v = &md->vars[md->by_vr[k]];

                if (c->var_flags[md->by_vr[k]] & MD_VF_NO_VR)
                        continue;
                if (prev && prev->vr == v->vr)
                        md_err(c, v->line, v->name, "2.4.7.4",
                               "valueReference=%u is not unique: '%s' on line %d has it too",
                               v->vr, prev->name, prev->line);
                else
                        prev = v;
        }
}

static int base_type(enum md_type t)
{
        return t == MD_ENUMERATION ? MD_INT32 : (int)t;
}

static bool same_start(const struct md_variable *a, const struct md_variable *b)
{
        if (a->type == MD_STRING)
                return strcmp(a->start.s[0], b->start.s[0]) == 0;
        if (a->type == MD_FLOAT64)
                return a->start.f[0] == b->start.f[0];
        if (a->type == MD_BOOLEAN)
                return a->start.b[0] == b->start.b[0];
        return a->start.i[0] == b->start.i[0];
}

/*
 * FMI 2.0: a vr is unique per base type (Real, Integer/Enumeration,
 * Boolean, String), except for aliases, which share one value: they should
 * have the same variability, and start values they give must agree.
 * Each variable is compared with the first of its alias set.
 */
static void check_vrs2(struct md_ctx *c)
{
        const struct md *md = c->md;
        const struct md_variable *first[MD_TYPE_COUNT] = { NULL };
        uint32_t vr = 0;

        for (size_t k = 0; k < md->n_vars; k++) {
                const struct md_variable *v = &md->vars[md->by_vr[k]], *a;

                if (c->var_flags[md->by_vr[k]] & MD_VF_NO_VR)
                        continue;
                if (v->vr != vr) {
                        memset(first, 0, sizeof(first));
                        vr = v->vr;
                }
                a = first[base_type(v->type)];
                if (!a) {
                        first[base_type(v->type)] = v;
                        continue;
                }
                /*
                 * FMI 2.0 (section 2.2.7, valueReference) states no rule on
                 * the variability of aliases; the FMI cross-check rules
                 * settle that a checker warns on a difference. A warning.
                 */
                if (a->variability != v->variability)
                        md_warn(c, v->line, v->name, "2.2.7",
                                "alias of '%s' (line %d, same valueReference %u) with a different "
                                "variability", a->name, a->line, v->vr);
                /* Two start values for one stored value contradict each other: an error. */
                if (a->has_start && v->has_start && a->type == v->type && !same_start(a, v))
                        md_err(c, v->line, v->name, "2.2.7",
                               "alias of '%s' (line %d, same valueReference %u) with a different "
                               "start value", a->name, a->line, v->vr);
        }
}

static void check_independent(struct md_ctx *c)
{
        const struct md *md = c->md;
        const struct md_variable *first = NULL;

        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];

                if (v->causality != MD_CAUSALITY_INDEPENDENT)
                        continue;
                if (first)
                        md_err(c, v->line, v->name, SEC(c, "2.4.7.4", "2.2.7"),
                               "a second independent variable ('%s' on line %d is one already)",
                               first->name, first->line);
                else
                        first = v;
        }
        if (!first && md->fmi == MD_FMI3 && c->vars)
                md_warn(c, mx_line(c->vars), NULL, "2.4.7.4",
                        "no variable has causality=\"independent\"; exactly one should");
}

/* Two variables must not name the same previous (FMI 3.0). */
static void check_previous_unique(struct md_ctx *c)
{
        const struct md *md = c->md;
        uint8_t *seen = calloc(md->n_vars ? md->n_vars : 1, 1);

        if (!seen) {
                c->nomem = true;
                return;
        }
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];
                size_t r;

                if (!v->has_previous)
                        continue;
                r = md_var_by_vr(md, v->previous);
                if (r == SIZE_MAX)
                        continue;
                if (seen[r])
                        md_err(c, v->line, v->name, "2.4.7.4",
                               "previous=%u is the previous of another variable too", v->previous);
                seen[r] = 1;
        }
        free(seen);
}

static void check_aliases(struct md_ctx *c)
{
        for (size_t i = 0; i < c->n_aliases; i++) {
                const struct md_alias *a = &c->aliases[i];
                const struct md_variable *v = &c->md->vars[a->var];

                if (!a->name || !*a->name)
                        md_err(c, a->line, v->name, "2.4.7.3", "Alias without a name");
                if (!a->display_unit)
                        continue;
                if (!md_type_is_float(v->type) || !v->unit_def ||
                    !md_display_unit_exists(c, v->unit_def, a->display_unit))
                        md_err(c, a->line, a->name, "2.4.7.3",
                               "the alias's displayUnit is not a display unit of the unit of '%s'",
                               v->name);
        }
}

static void check_event_mode(struct md_ctx *c)
{
        const struct md *md = c->md;

        if (md->fmi != MD_FMI3 || !md->cs.present || md->cs.has_event_mode || !md_has_clocks(md))
                return;
        md_err(c, mx_line(c->root), NULL, "4.4",
               "the FMU has Clocks, so CoSimulation needs hasEventMode=\"true\"");
}

void md_validate(struct md_ctx *c)
{
        struct md *md = c->md;

        check_type_defs(c);
        for (size_t i = 0; i < md->n_vars && !c->nomem; i++)
                md_check_var(c, &md->vars[i]);
        check_names(c);
        if (md->fmi == MD_FMI3)
                check_vrs3(c);
        else
                check_vrs2(c);
        check_independent(c);
        if (md->fmi == MD_FMI3) {
                check_previous_unique(c);
                check_aliases(c);
                check_event_mode(c);
        }
        if (!c->nomem)
                md_check_structure(c);
}
