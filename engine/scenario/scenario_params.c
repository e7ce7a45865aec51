/*
 * scenario_params: ParameterBindings (inline ssv:ParameterSet or an .ssv
 * source, with an optional prefix) and --start NAME=VALUE overrides,
 * resolved to (component, variable, value).
 *
 * Precedence, SSP 1.0 (ParameterBinding): a binding on a system beats one
 * on anything inside it; among bindings on one element the later wins.
 * A --start override beats every binding.
 *
 * DESIGN: SSP lets a binding's unknown names pass silently; fmud refuses
 * them, and refuses values for variables an importer may not set before
 * initialisation: only variables with a start value and initial="exact"
 * or "approx" (parameters, continuous states and the like), inputs and
 * structural parameters can be bound, never constants. A silently dropped
 * parameter is a wrong simulation that looks right.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/md_values.h"
#include "engine/scenario/ssp_xml.h"
#include "engine/scenario/ssv.h"

struct pending {
        size_t comp, var;
        int depth;                      /* of the element holding the binding; -1: --start */
        size_t seq;
        struct md_values value;
        char *origin;
};

struct plist {
        size_t n, cap;
        struct pending *v;
};

static void plist_fini(struct sc_load *l, struct plist *p)
{
        for (size_t i = 0; i < p->n; i++) {
                const struct md *md = l->s->components[p->v[i].comp].fmu->md;

                mv_free(md->vars[p->v[i].var].type, &p->v[i].value);
                free(p->v[i].origin);
        }
        free(p->v);
}

static int plist_add(struct plist *p, const struct pending *e)
{
        if (p->n == p->cap) {
                size_t cap = p->cap ? 2 * p->cap : 16;
                struct pending *v = realloc(p->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                p->v = v;
                p->cap = cap;
        }
        p->v[p->n++] = *e;
        return 0;
}

/*
 * Only what an importer may set before initialisation: in Instantiated,
 * any variable that is not a constant and has initial="exact" or "approx"
 * (FMI 3.0 section 2.3.2: inputs, parameters and continuous states with
 * initial="exact" among them; FMI 2.0 section 3.2.3 likewise), and
 * structural parameters, which the master sets in Configuration Mode
 * (section 3.2; scenario_dims.c). Clocked inputs are set in
 * Initialization Mode (section 2.2.7.2; engine/master/init.c).
 */
static const char *not_bindable(const struct md_variable *v)
{
        if (v->type == MD_CLOCK)
                return "it is a Clock, which only ticks in Event Mode";
        if (v->causality == MD_CAUSALITY_INDEPENDENT)
                return "it is the independent variable, whose start is the experiment's";
        if (v->causality != MD_CAUSALITY_INPUT &&
            v->causality != MD_CAUSALITY_STRUCTURAL_PARAMETER &&
            v->initial != MD_INITIAL_EXACT && v->initial != MD_INITIAL_APPROX)
                return "only variables with initial=\"exact\" or \"approx\" (parameters, "
                       "states), inputs and structural parameters can be bound, and it is "
                       "calculated";
        if (v->variability == MD_VARIABILITY_CONSTANT)
                return "it is a constant";
        if (!v->has_start)
                return "it has no start value";
        /* Set in Initialization Mode, which takes inputs and initial="exact" only (2.3.3). */
        if (v->n_clocks > 0 && v->causality != MD_CAUSALITY_INPUT &&
            v->initial != MD_INITIAL_EXACT)
                return "it is clocked with initial=\"approx\", and a clocked variable is set "
                       "in Initialization Mode, which takes only inputs and initial=\"exact\"";
        return NULL;
}

/* Resolve a hierarchical name inside system sys to (component, variable). */
static int resolve(const struct sc_load *l, const struct ssd_element *sys, const char *name,
                   size_t *ret_comp, const struct md_variable **ret_var)
{
        for (size_t i = 0; i < sys->n_elements; i++) {
                const struct ssd_element *e = &sys->elements[i];
                size_t n = strlen(e->name);
                const struct scenario_component *c;

                if (strncmp(name, e->name, n) != 0 || name[n] != '.')
                        continue;
                if (e->kind == SSD_SYSTEM) {
                        if (resolve(l, e, name + n + 1, ret_comp, ret_var) == 0)
                                return 0;
                        continue;
                }
                c = &l->s->components[e->comp];
                if (c->fmu && (*ret_var = md_find_name(c->fmu->md, name + n + 1))) {
                        *ret_comp = e->comp;
                        return 0;
                }
        }
        return -ENOENT;
}

/* The value of p for variable v, converted into v's unit when p gives another. */
static int convert_unit(struct sc_load *l, const struct ssv_set *set, const struct ssv_param *p,
                        size_t comp, const struct md *md, const struct md_variable *v,
                        struct md_values *val)
{
        const struct md_unit *pu, *vu;
        const char *vname;
        double f, o;

        if (!p->unit || !md_type_is_float(v->type))
                return 0;
        vu = sc_var_unit_of(l, comp, v, &vname);
        /* FMI reads a variable without a unit as it is: a value meant in another unit says so. */
        if (!vname) {
                if (p->unit[0] && strcmp(p->unit, "1"))
                        sc_warn(l, set->file, p->line, p->name, "a value in '%s' for a variable "
                                "that has no unit (nor a connector that declares one): taken as "
                                "it is, not converted", p->unit);
                return 0;
        }
        pu = ssv_unit(set, p->unit);
        if (!pu)
                pu = sc_unit(l, md, p->unit);
        if (!pu || !vu)
                return sc_err(l, set->file, p->line, p->name, "unit '%s' is not defined",
                              pu ? vname : p->unit);
        if (scenario_unit_convert(pu, vu, &f, &o) < 0)
                return sc_err(l, set->file, p->line, p->name, "a value in '%s' cannot be converted "
                              "to the variable's unit '%s': the base units differ", p->unit,
                              vname);
        if (v->attrs.relative_quantity)
                o = 0;
        for (size_t i = 0; i < val->n; i++)
                val->f[i] = f * val->f[i] + o;
        return 0;
}

static int bind_one(struct sc_load *l, const struct ssv_set *set, const struct ssv_param *p,
                    const char *name, size_t comp, const struct md_variable *v,
                    struct pending *ret)
{
        const struct md *md = l->s->components[comp].fmu->md;
        const char *why = not_bindable(v);
        int r;

        if (why)
                return sc_err(l, set->file, p->line, name, "cannot be bound: %s (it is a %s %s %s)",
                              why, md_variability_name(v->variability),
                              md_causality_name(v->causality), md_type_name(v->type));
        if (!sc_type_fits(p->type, p->exact, v->type))
                return sc_err(l, set->file, p->line, name, "type mismatch: a %s value for %s variable",
                              sc_ssd_type_name(p->type, p->exact), md_type_name(v->type));
        r = sc_parse_value(md, v, p->value, &ret->value, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return sc_err(l, set->file, p->line, name, "value \"%s\": %s", p->value, why);
        r = convert_unit(l, set, p, comp, md, v, &ret->value);
        if (r == 0 && !(ret->origin = sc_origin(set->file, p->line)))
                r = -ENOMEM;
        if (r < 0)
                mv_free(v->type, &ret->value);
        ret->comp = comp;
        ret->var = (size_t)(v - md->vars);
        return r;
}

/* Every parameter of set, applied to element e (a component or a system). */
static int bind_set(struct sc_load *l, const struct ssd_element *e, const struct ssv_set *set,
                    const char *prefix, int depth, struct plist *out)
{
        int bad = 0, r;

        for (size_t i = 0; i < set->n; i++) {
                const struct ssv_param *p = &set->v[i];
                const struct md_variable *v = NULL;
                struct pending pe = { .depth = depth, .seq = out->n };
                size_t comp = e->comp;
                char *name;

                if (asprintf(&name, "%s%s", prefix, p->name) < 0)
                        return -ENOMEM;
                if (e->kind == SSD_SYSTEM)
                        r = resolve(l, e, name, &comp, &v);
                else
                        r = (v = md_find_name(l->s->components[comp].fmu->md, name)) ? 0 : -ENOENT;
                if (r < 0 && e->kind == SSD_SYSTEM && ssd_connector(e, name))
                        /* SSP allows it; the value would have to flow along its connections. */
                        r = sc_err(l, set->file, p->line, name, "a value for the connector '%s' of "
                                   "system '%s' itself: not supported; bind the component "
                                   "variable it is connected to", name, e->name);
                else if (r < 0)
                        r = sc_err(l, set->file, p->line, name, "unknown variable: %s '%s' has "
                                   "nothing of that name to bind", e->kind == SSD_SYSTEM ? "system"
                                   : "component", e->kind == SSD_SYSTEM ? e->name
                                   : l->s->components[comp].name);
                else
                        r = bind_one(l, set, p, name, comp, v, &pe);
                if (r == 0)
                        r = plist_add(out, &pe);
                free(name);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        return bad ? -EINVAL : 0;
}

static int bind(struct sc_load *l, const struct ssd_element *e, const struct ssd_binding *b,
                int depth, struct plist *out)
{
        struct ssv_set set = { 0 };
        char *buf = NULL, *label = NULL;
        size_t len;
        int r;

        if (b->values) {
                r = ssv_read_set(&set, &l->doc.x, b->values);
        } else {
                r = sc_source_read(l, b->source, b->line, e->name, &buf, &len, &label);
                if (r < 0)
                        return r;
                set.x = sc_mx(l, label);
                r = ssv_read(&set, buf, len);
        }
        if (r == 0)
                r = bind_set(l, e, &set, b->prefix, depth, out);
        ssv_set_fini(&set);
        free(buf);
        free(label);
        return r;
}

/* The bindings of e and of everything inside it. */
static int walk(struct sc_load *l, const struct ssd_element *e, int depth, struct plist *out)
{
        int bad = 0, r;

        if (e->kind == SSD_COMPONENT && !l->s->components[e->comp].fmu)
                return 0;       /* its import failed, and was reported */
        for (size_t i = 0; i < e->n_bindings; i++) {
                r = bind(l, e, &e->bindings[i], depth, out);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        for (size_t i = 0; e->kind == SSD_SYSTEM && i < e->n_elements; i++) {
                r = walk(l, &e->elements[i], depth + 1, out);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        return bad ? -EINVAL : 0;
}

static int overrides(struct sc_load *l, struct plist *out)
{
        const struct scenario_overrides *ov = l->ov;
        int bad = 0, r;

        for (size_t i = 0; ov && i < ov->n_starts; i++) {
                const struct scenario_assign *a = &ov->starts[i];
                struct pending pe = { .depth = -1, .seq = out->n };
                const struct md_variable *v;
                const struct md *md;
                const char *why;

                if (scenario_find_variable(l->s, a->name, &pe.comp, &pe.var) < 0) {
                        bad |= sc_err(l, "--start", 0, a->name, "unknown variable") < 0;
                        continue;
                }
                md = l->s->components[pe.comp].fmu->md;
                v = &md->vars[pe.var];
                why = not_bindable(v);
                if (why) {
                        bad |= sc_err(l, "--start", 0, a->name, "cannot be set: %s", why) < 0;
                        continue;
                }
                r = sc_parse_value(md, v, a->value, &pe.value, &why);
                if (r == 0 && !(pe.origin = strdup("--start")))
                        r = -ENOMEM;
                if (r == 0)
                        r = plist_add(out, &pe);
                if (r == -ENOMEM) {
                        mv_free(v->type, &pe.value);
                        free(pe.origin);
                        return r;
                }
                if (r < 0)
                        bad |= sc_err(l, "--start", 0, a->name, "value \"%s\": %s", a->value, why) < 0;
        }
        return bad ? -EINVAL : 0;
}

/* By variable; the winner first: --start, then the outermost, then the latest. */
static int cmp_pending(const void *x, const void *y)
{
        const struct pending *a = x, *b = y;

        if (a->comp != b->comp)
                return a->comp < b->comp ? -1 : 1;
        if (a->var != b->var)
                return a->var < b->var ? -1 : 1;
        if (a->depth != b->depth)
                return a->depth < b->depth ? -1 : 1;
        return a->seq > b->seq ? -1 : a->seq < b->seq;
}

/* Move each variable's winning value into its component's starts. */
static int distribute(struct sc_load *l, struct plist *p)
{
        struct scenario *s = l->s;

        if (p->n)
                qsort(p->v, p->n, sizeof(*p->v), cmp_pending);
        for (size_t i = 0; i < s->n_components; i++) {
                s->components[i].starts = calloc(p->n + 1, sizeof(struct scenario_start));
                if (!s->components[i].starts)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < p->n; i++) {
                struct pending *e = &p->v[i];
                struct scenario_component *c = &s->components[e->comp];
                const struct md_variable *v = &c->fmu->md->vars[e->var];

                if (i > 0 && p->v[i - 1].comp == e->comp && p->v[i - 1].var == e->var)
                        continue;
                c->starts[c->n_starts++] = (struct scenario_start){
                        .var = e->var, .vr = v->vr, .type = v->type, .value = e->value,
                        .origin = e->origin,
                };
                e->value = (struct md_values){ 0 };
                e->origin = NULL;
        }
        return 0;
}

int sc_parameters(struct sc_load *l)
{
        struct plist p = { 0 };
        int r = 0, bad = 0;

        if (l->has_doc)
                r = walk(l, &l->doc.root, 0, &p);
        bad |= r < 0;
        if (r != -ENOMEM) {
                r = overrides(l, &p);
                bad |= r < 0;
        }
        if (r != -ENOMEM && !bad)
                r = distribute(l, &p);
        plist_fini(l, &p);
        return r == -ENOMEM ? r : bad ? -EINVAL : 0;
}
