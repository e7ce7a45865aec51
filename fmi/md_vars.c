/*
 * md_vars: <ModelVariables>: the loop over variable elements and what FMI
 * 3.0 variables and FMI 2.0 ScalarVariables have in common: name,
 * valueReference, causality, variability, initial and their defaults
 * (FMI 3.0 section 2.4.7.4 and Table 22 in 2.4.7.5; FMI 2.0 section 2.2.7),
 * and declaredType resolution.
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "md_values.h"

static const char *const causalities[] = {
        [MD_CAUSALITY_PARAMETER] = "parameter",
        [MD_CAUSALITY_CALCULATED_PARAMETER] = "calculatedParameter",
        [MD_CAUSALITY_INPUT] = "input",
        [MD_CAUSALITY_OUTPUT] = "output",
        [MD_CAUSALITY_LOCAL] = "local",
        [MD_CAUSALITY_INDEPENDENT] = "independent",
        [MD_CAUSALITY_STRUCTURAL_PARAMETER] = "structuralParameter",
};

static const char *const variabilities[] = {
        [MD_VARIABILITY_CONSTANT] = "constant",
        [MD_VARIABILITY_FIXED] = "fixed",
        [MD_VARIABILITY_TUNABLE] = "tunable",
        [MD_VARIABILITY_DISCRETE] = "discrete",
        [MD_VARIABILITY_CONTINUOUS] = "continuous",
};

static const char *const initials[] = { "exact", "approx", "calculated" };

const char *md_type_label(const struct md_ctx *c, enum md_type t)
{
        if (c->md->fmi == MD_FMI2) {
                switch (t) {
                case MD_FLOAT64:
                        return "Real";
                case MD_INT32:
                        return "Integer";
                default:
                        break;
                }
        }
        return md_type_name(t);
}

void md_var_common(struct md_ctx *c, const xmlNode *n, struct md_variable *v,
                   bool *ret_variability_given)
{
        const char *sec = SEC(c, "2.4.7.4", "2.2.7");
        size_t k = c->md->n_vars;
        bool bad = false;
        int i, r;

        v->line = mx_line(n);
        v->causality = MD_CAUSALITY_LOCAL;
        v->can_handle_multiple_set_per_time_instant = true;
        if (md_attr_dup(c, n, "name", &v->name) == 0 || !v->name || !*v->name) {
                md_err(c, v->line, NULL, sec, "variable without a name");
                if (!v->name && !(v->name = strdup("")))
                        c->nomem = true;
        }
        r = md_attr_u32(c, n, v->name, "valueReference", sec, &v->vr);
        if (r != 1)
                c->var_flags[k] |= MD_VF_NO_VR;
        if (r == 0)
                md_err(c, v->line, v->name, sec, "missing required attribute valueReference");
        md_attr_dup(c, n, "description", &v->description);
        r = md_attr_enum(c, n, v->name, "causality", sec, causalities,
                         c->md->fmi == MD_FMI3 ? 7 : 6, &i);
        if (r == 1)
                v->causality = (enum md_causality)i;
        bad |= r < 0;
        r = md_attr_enum(c, n, v->name, "variability", sec, variabilities, 5, &i);
        *ret_variability_given = r == 1;
        if (r == 1)
                v->variability = (enum md_variability)i;
        bad |= r < 0;
        r = md_attr_enum(c, n, v->name, "initial", sec, initials, 3, &i);
        if (r == 1) {
                v->initial = (enum md_initial)(i + MD_INITIAL_EXACT);
                v->initial_given = true;
        }
        bad |= r < 0;
        /* The kind rules would only restate the refused attribute. */
        if (bad)
                c->var_flags[k] |= MD_VF_BAD_KIND;
        md_attr_bool(c, n, v->name, "canHandleMultipleSetPerTimeInstant", sec,
                     &v->can_handle_multiple_set_per_time_instant);
}

void md_var_declared_type(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        const char *sec = SEC(c, "2.4.7.5", "2.2.7");
        const struct md_type_def *td;
        char buf[MD_SHOW_LEN];

        if (md_attr_dup(c, n, "declaredType", &v->declared_type) == 1) {
                td = md_type_def_find(c, v->declared_type);
                if (!td)
                        md_err(c, v->line, v->name, sec,
                               "declaredType=\"%s\" is not defined in TypeDefinitions",
                               md_show(v->declared_type, buf));
                else if (td->type != v->type)
                        md_err(c, v->line, v->name, sec,
                               "declaredType=\"%s\" is a %s type, but the variable is a %s",
                               md_show(v->declared_type, buf), md_type_label(c, td->type),
                               md_type_label(c, v->type));
                else if (md_copy_type_attrs(&v->attrs, &td->attrs) < 0)
                        c->nomem = true;
                else
                        v->type_def = td;
        } else if (v->type == MD_ENUMERATION) {
                md_err(c, v->line, v->name, sec, "an Enumeration variable needs a declaredType");
        }
        md_read_type_attrs(c, n, v->name, v->type, &v->attrs);
        if (v->type == MD_BINARY && !v->attrs.mime_type &&
            !(v->attrs.mime_type = strdup("application/octet-stream")))
                c->nomem = true;
}

static enum md_initial default_initial(const struct md_ctx *c, const struct md_variable *v)
{
        if (v->type == MD_CLOCK)
                return MD_INITIAL_NONE;         /* Clocks have no initial attribute */
        switch (v->causality) {
        case MD_CAUSALITY_STRUCTURAL_PARAMETER:
        case MD_CAUSALITY_PARAMETER:
                return MD_INITIAL_EXACT;
        case MD_CAUSALITY_CALCULATED_PARAMETER:
                return MD_INITIAL_CALCULATED;
        case MD_CAUSALITY_INPUT:
                /* FMI 2.0 gives inputs no initial; FMI 3.0 makes it exact. */
                return c->md->fmi == MD_FMI3 ? MD_INITIAL_EXACT : MD_INITIAL_NONE;
        case MD_CAUSALITY_OUTPUT:
        case MD_CAUSALITY_LOCAL:
                return v->variability == MD_VARIABILITY_CONSTANT ? MD_INITIAL_EXACT
                                                                 : MD_INITIAL_CALCULATED;
        case MD_CAUSALITY_INDEPENDENT:
        default:
                return MD_INITIAL_NONE;
        }
}

void md_var_defaults(struct md_ctx *c, struct md_variable *v, bool variability_given)
{
        /*
         * FMI 3.0 (2.4.7.4): parameters are fixed, Float types continuous,
         * the rest discrete. FMI 2.0's schema says "continuous" for all, which
         * cannot hold for a parameter or a non-Real type, so those take the
         * FMI 3.0 defaults, as importers commonly do.
         */
        if (!variability_given) {
                if (v->causality == MD_CAUSALITY_PARAMETER ||
                    v->causality == MD_CAUSALITY_CALCULATED_PARAMETER ||
                    v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                        v->variability = MD_VARIABILITY_FIXED;
                else if (md_type_is_float(v->type))
                        v->variability = MD_VARIABILITY_CONTINUOUS;
                else
                        v->variability = MD_VARIABILITY_DISCRETE;
        }
        if (!v->initial_given)
                v->initial = default_initial(c, v);
}

int md_add_alias(struct md_ctx *c, const xmlNode *e, size_t var)
{
        struct md_alias *a;

        if (c->n_aliases == c->cap_aliases) {
                size_t cap = c->cap_aliases ? 2 * c->cap_aliases : 16;
                struct md_alias *p = realloc(c->aliases, cap * sizeof(*p));

                if (!p) {
                        c->nomem = true;
                        return -1;
                }
                c->aliases = p;
                c->cap_aliases = cap;
        }
        a = &c->aliases[c->n_aliases++];
        *a = (struct md_alias){ .name = md_attr(c, e, "name"),
                                .display_unit = md_attr(c, e, "displayUnit"),
                                .line = mx_line(e), .var = var };
        return 0;
}

void md_var_free(struct md_variable *v)
{
        free(v->name);
        free(v->description);
        free(v->declared_type);
        md_free_type_attrs(&v->attrs);
        mv_free(v->type, &v->start);
        free(v->dims);
        free(v->clocks);
}

/* FMI 2.0 derivative="k" is a 1-based ScalarVariable index; md keeps vrs. */
static void resolve_derivatives2(struct md_ctx *c)
{
        struct md *md = c->md;

        for (size_t i = 0; i < md->n_vars; i++) {
                struct md_variable *v = &md->vars[i];
                uint32_t k = v->derivative;

                if (!v->has_derivative)
                        continue;
                if (k < 1 || k > md->n_vars) {
                        md_err(c, v->line, v->name, "2.2.7",
                               "derivative=\"%u\" is not a ScalarVariable index (1..%zu)", k,
                               md->n_vars);
                        v->has_derivative = false;
                } else if (md->vars[k - 1].type != MD_FLOAT64) {
                        md_err(c, v->line, v->name, "2.2.7",
                               "derivative=\"%u\" refers to '%s', which is not a Real", k,
                               md->vars[k - 1].name);
                        v->has_derivative = false;
                } else {
                        v->derivative = md->vars[k - 1].vr;
                }
        }
}

void md_read_vars(struct md_ctx *c, const xmlNode *vars)
{
        struct md *md = c->md;
        size_t n = mx_count(vars, NULL);

        if (n > c->lim.max_variables) {
                md_err(c, mx_line(vars), NULL, NULL,
                       "more than %zu variables (%zu); ModelVariables refused",
                       c->lim.max_variables, n);
                return;
        }
        md->vars = calloc(n ? n : 1, sizeof(*md->vars));
        c->var_flags = calloc(n ? n : 1, sizeof(*c->var_flags));
        if (!md->vars || !c->var_flags) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(vars); e && !c->nomem; e = mx_next(e)) {
                struct md_variable *v = &md->vars[md->n_vars];
                int r = md->fmi == MD_FMI3 ? md_read_var3(c, e, v) : md_read_var2(c, e, v);

                if (r > 0)
                        md->n_vars++;
        }
        if (!c->nomem && md->fmi == MD_FMI2)
                resolve_derivatives2(c);
}
