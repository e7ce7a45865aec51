/*
 * scenario_dims: array sizes with the scenario's structural parameters,
 * and the pass that checks them once the parameter bindings and --start
 * overrides are resolved (scenario_params.c).
 *
 * FMI 3.0 section 2.4.7.2: a Dimension with a valueReference takes its
 * size from a structural parameter (UInt64), whose value an importer may
 * set in Configuration Mode (section 3.2, Instantiated ->
 * ConfigurationMode -> Instantiated) before initialization. A session's
 * arrays therefore have the sizes of the winning starts, not those of
 * the description's start values.
 *
 * DESIGN: the description stays as the FMU declares it (an md may be
 * shared by components of one FMU); every size the engine and daemon use
 * is resolved per component here. A connection whose shape depends on a
 * structural parameter is checked after the parameters, not before, so
 * that two arrays matching only with the starts set connect, and one that
 * no longer matches is refused naming both sizes.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/md_values.h"

#define MAX_DIMS 32

/* The md's default bound on one array (md_limits.max_array_elements). */
#define MAX_ELEMENTS ((uint64_t)16777216)

/*
 * The value component c gives structural parameter vr (as set since, its
 * start, else the description's) in *ret; false when it has none.
 */
static bool structural_value(const struct scenario_component *c, const struct md *md,
                             uint32_t vr, uint64_t *ret)
{
        const struct md_variable *r = md_find_vr(md, vr);

        for (size_t i = 0; c && i < c->n_sp_now; i++)
                if (c->sp_now[i].vr == vr)
                        return *ret = c->sp_now[i].value, true;
        for (size_t i = 0; c && i < c->n_starts; i++)
                if (c->starts[i].vr == vr && c->starts[i].type == MD_UINT64 &&
                    c->starts[i].value.n >= 1)
                        return *ret = c->starts[i].value.u[0], true;
        if (r && r->type == MD_UINT64 && r->has_start && r->start.n >= 1)
                return *ret = r->start.u[0], true;
        return false;
}

static int dims_of(const struct scenario_component *c, const struct md *md,
                   const struct md_variable *v, uint64_t *dims, size_t max)
{
        if (v->n_dims > max)
                return -EINVAL;
        for (size_t i = 0; i < v->n_dims; i++) {
                const struct md_dimension *d = &v->dims[i];

                /*
                 * A fixed size is positive (the description's check); a
                 * structural parameter with min 0 may set a size of 0
                 * (section 2.4.7.2), an array with no elements.
                 */
                if (d->has_start)
                        dims[i] = d->start;
                else if (!d->has_vr || !structural_value(c, md, d->vr, &dims[i]))
                        return -EINVAL;
                if (dims[i] == 0 && !d->has_vr)
                        return -EINVAL;
        }
        return (int)v->n_dims;
}

int sc_var_dims(const struct md *md, const struct md_variable *v, uint64_t *dims, size_t max)
{
        return dims_of(NULL, md, v, dims, max);
}

bool sc_var_structural(const struct md_variable *v)
{
        for (size_t i = 0; i < v->n_dims; i++)
                if (!v->dims[i].has_start && v->dims[i].has_vr)
                        return true;
        return false;
}

int scenario_var_dims(const struct scenario *s, size_t comp, const struct md_variable *v,
                      uint64_t *dims, size_t max)
{
        const struct scenario_component *c = &s->components[comp];

        return dims_of(c, c->fmu->md, v, dims, max);
}

uint64_t scenario_structural(const struct scenario *s, size_t comp, uint32_t vr)
{
        const struct scenario_component *c = &s->components[comp];
        uint64_t v = 0;

        return structural_value(c, c->fmu->md, vr, &v) ? v : 0;
}

int scenario_set_structural(struct scenario *s, size_t comp, uint32_t vr, uint64_t value)
{
        struct scenario_component *c = &s->components[comp];
        struct scenario_sp *p;

        for (size_t i = 0; i < c->n_sp_now; i++)
                if (c->sp_now[i].vr == vr) {
                        c->sp_now[i].value = value;
                        return 0;
                }
        p = realloc(c->sp_now, (c->n_sp_now + 1) * sizeof(*p));
        if (!p)
                return -ENOMEM;
        c->sp_now = p;
        c->sp_now[c->n_sp_now++] = (struct scenario_sp){ vr, value };
        return 0;
}

uint64_t scenario_var_elements(const struct scenario *s, size_t comp, const struct md_variable *v)
{
        uint64_t dims[MAX_DIMS], prod = 1;
        int nd = scenario_var_dims(s, comp, v, dims, MAX_DIMS);

        if (nd < 0)
                return SCENARIO_NO_SIZE;
        for (int i = 0; i < nd; i++) {
                if (dims[i] && prod > (UINT64_MAX - 1) / dims[i])
                        return SCENARIO_NO_SIZE;
                prod *= dims[i];
        }
        return prod;
}

/* The variable as get, set and --start name it: bare in a one-FMU scenario. */
static const char *full_name(const struct sc_load *l, const struct scenario_component *c,
                             const struct md_variable *v, char *buf, size_t size)
{
        if (l->s->single_fmu)
                return v->name;
        snprintf(buf, size, "%s.%s", c->name, v->name);
        return buf;
}

/* Whether element i of val lies in v's min/max; why says which bound it breaks. */
static bool in_bounds(const struct md_variable *v, const struct md_values *val, size_t i,
                      char *why, size_t size)
{
        const struct md_type_attrs *a = &v->attrs;

        if (md_type_is_unsigned(v->type)) {
                if (a->has_min && val->u[i] < a->min.u)
                        return snprintf(why, size, "%llu is below its min %llu",
                                        (unsigned long long)val->u[i],
                                        (unsigned long long)a->min.u), false;
                if (a->has_max && val->u[i] > a->max.u)
                        return snprintf(why, size, "%llu is above its max %llu",
                                        (unsigned long long)val->u[i],
                                        (unsigned long long)a->max.u), false;
        } else if (md_type_is_signed(v->type)) {
                if (a->has_min && val->i[i] < a->min.i)
                        return snprintf(why, size, "%lld is below its min %lld",
                                        (long long)val->i[i], (long long)a->min.i), false;
                if (a->has_max && val->i[i] > a->max.i)
                        return snprintf(why, size, "%lld is above its max %lld",
                                        (long long)val->i[i], (long long)a->max.i), false;
        } else if (md_type_is_float(v->type)) {
                if (a->has_min && val->f[i] < a->min.f)
                        return snprintf(why, size, "%g is below its min %g", val->f[i], a->min.f),
                               false;
                if (a->has_max && val->f[i] > a->max.f)
                        return snprintf(why, size, "%g is above its max %g", val->f[i], a->max.f),
                               false;
        }
        return true;
}

/* A structural parameter's start: within min/max; as a dimension, arrays bounded (0 is a size). */
static int check_parameter(struct sc_load *l, size_t comp, const struct scenario_start *st)
{
        const struct scenario_component *c = &l->s->components[comp];
        const struct md *md = c->fmu->md;
        const struct md_variable *p = &md->vars[st->var];
        char why[128], buf[256];
        const char *name = full_name(l, c, p, buf, sizeof(buf));
        int bad = 0;

        for (size_t i = 0; i < st->value.n; i++)
                if (!in_bounds(p, &st->value, i, why, sizeof(why)))
                        return sc_err(l, st->origin, 0, name, "structural parameter: %s", why);
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];
                bool sized = false;
                uint64_t n;

                for (size_t k = 0; k < v->n_dims; k++)
                        sized |= !v->dims[k].has_start && v->dims[k].has_vr &&
                                 v->dims[k].vr == p->vr;
                if (!sized)
                        continue;
                if (p->type != MD_UINT64)
                        return sc_err(l, st->origin, 0, name, "sizes '%s' but is %s, not UInt64 "
                                      "(FMI 3.0 section 2.4.7.2)", v->name, md_type_name(p->type));
                n = scenario_var_elements(l->s, comp, v);
                if (n == SCENARIO_NO_SIZE || n > MAX_ELEMENTS)
                        bad |= sc_err(l, st->origin, 0, name, "makes '%s' of component '%s' "
                                      "larger than %llu elements", v->name, c->name,
                                      (unsigned long long)MAX_ELEMENTS) < 0;
        }
        return bad ? -EINVAL : 0;
}

/* A start of an array sized by a structural parameter: one value, or one per element. */
static int check_array_start(struct sc_load *l, size_t comp, const struct scenario_start *st)
{
        const struct scenario_component *c = &l->s->components[comp];
        const struct md_variable *v = &c->fmu->md->vars[st->var];
        uint64_t n = scenario_var_elements(l->s, comp, v);
        char buf[256];

        if (st->value.n == 1 || st->value.n == n)
                return 0;
        return sc_err(l, st->origin, 0, full_name(l, c, v, buf, sizeof(buf)), "%zu values, but the variable has %llu elements "
                      "with the structural parameters set (give one, or one per element)",
                      st->value.n, (unsigned long long)n);
}

const char *scenario_dims_str(const uint64_t *d, int n, char *buf, size_t size)
{
        size_t at = 0;

        if (n <= 0)
                return n == 0 ? "a scalar" : "of unresolved shape";
        for (int i = 0; i < n && at < size; i++)
                at += (size_t)snprintf(buf + at, size - at, "%s%llu", i ? "," : "[",
                                       (unsigned long long)d[i]);
        if (at < size)
                snprintf(buf + at, size - at, "]");
        return buf;
}

/* A connection between arrays sized by structural parameters: the shapes as set. */
static int check_connection(struct sc_load *l, struct scenario_connection *cn)
{
        const struct scenario *s = l->s;
        const struct md_variable *a = &s->components[cn->from_comp].fmu->md->vars[cn->from_var];
        const struct md_variable *b = &s->components[cn->to_comp].fmu->md->vars[cn->to_var];
        uint64_t da[MAX_DIMS], db[MAX_DIMS];
        int ka, kb;
        char sa[96], sb[96];

        if (!sc_var_structural(a) && !sc_var_structural(b))
                return 0;
        ka = scenario_var_dims(s, cn->from_comp, a, da, MAX_DIMS);
        kb = scenario_var_dims(s, cn->to_comp, b, db, MAX_DIMS);
        if (ka >= 0 && ka == kb && memcmp(da, db, (size_t)ka * sizeof(*da)) == 0) {
                cn->elements = scenario_var_elements(s, cn->from_comp, a);
                return 0;
        }
        return sc_err(l, cn->origin, 0, NULL, "shape mismatch with the structural parameters "
                      "set: '%s.%s' is %s, '%s.%s' is %s", s->components[cn->from_comp].name,
                      a->name, scenario_dims_str(da, ka, sa, sizeof(sa)), s->components[cn->to_comp].name,
                      b->name, scenario_dims_str(db, kb, sb, sizeof(sb)));
}

int sc_structural(struct sc_load *l)
{
        struct scenario *s = l->s;
        int bad = 0;

        for (size_t i = 0; i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];

                for (size_t k = 0; c->fmu && k < c->n_starts; k++) {
                        const struct md_variable *v = &c->fmu->md->vars[c->starts[k].var];

                        if (v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                                bad |= check_parameter(l, i, &c->starts[k]) < 0;
                }
        }
        if (bad)
                return -EINVAL;
        for (size_t i = 0; i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];

                for (size_t k = 0; c->fmu && k < c->n_starts; k++)
                        if (sc_var_structural(&c->fmu->md->vars[c->starts[k].var]))
                                bad |= check_array_start(l, i, &c->starts[k]) < 0;
        }
        for (size_t i = 0; i < s->n_connections; i++)
                bad |= check_connection(l, &s->connections[i]) < 0;
        return bad ? -EINVAL : 0;
}
