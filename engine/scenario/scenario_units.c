/*
 * scenario_units: units of connectors and the conversion between two of
 * them (FMI 3.0 section 2.4.3: a value v of a unit is factor * v + offset
 * in its base unit, the product of SI base units to the given exponents).
 *
 * DESIGN: a unit name is looked up in the SSD's Units first (SSP 1.0:
 * connector units reference them), then in the component FMU's
 * UnitDefinitions. Two units convert into each other only when their base
 * units agree exponent by exponent; anything else is a different quantity
 * and the connection is refused rather than guessed at.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct md_unit *md_unit(const struct md *md, const char *name)
{
        for (size_t i = 0; md && i < md->n_units; i++)
                if (md->units[i].name && strcmp(md->units[i].name, name) == 0)
                        return &md->units[i];
        return NULL;
}

const struct md_unit *sc_unit(const struct sc_load *l, const struct md *md, const char *name)
{
        const struct md_unit *u = l->has_doc ? ssd_unit(&l->doc, name) : NULL;

        return u ? u : md_unit(md, name);
}

const struct md_unit *sc_var_unit(const struct sc_load *l, const struct md *md, const char *name)
{
        const struct md_unit *u = md_unit(md, name), *s;

        /*
         * A definition without a BaseUnit (FMI allows it) says only the
         * name: the SSD's of the same name, where it has one, says how it
         * converts (SSP: a connector's unit names an entry of its Units).
         */
        if (u && !u->has_base_unit && l->has_doc && (s = ssd_unit(&l->doc, name)))
                return s;
        return u ? u : l->has_doc ? ssd_unit(&l->doc, name) : NULL;
}

const struct md_unit *sc_var_unit_of(const struct sc_load *l, size_t comp,
                                     const struct md_variable *v, const char **ret_name)
{
        const struct md *md = l->s->components[comp].fmu->md;
        const struct ssd_connector *k = l->elems[comp] ? ssd_connector(l->elems[comp], v->name)
                                                       : NULL;

        *ret_name = v->attrs.unit ? v->attrs.unit : k ? k->unit : NULL;
        if (!*ret_name)
                return NULL;
        return v->attrs.unit ? sc_var_unit(l, md, *ret_name) : sc_unit(l, md, *ret_name);
}

static bool same_base(const struct md_unit *a, const struct md_unit *b)
{
        return a->base.kg == b->base.kg && a->base.m == b->base.m && a->base.s == b->base.s &&
               a->base.A == b->base.A && a->base.K == b->base.K && a->base.mol == b->base.mol &&
               a->base.cd == b->base.cd && a->base.rad == b->base.rad;
}

bool sc_unit_same(const struct md_unit *a, const struct md_unit *b)
{
        if (a == b || (a->name && b->name && strcmp(a->name, b->name) == 0))
                return true;
        return a->has_base_unit && b->has_base_unit && same_base(a, b) &&
               a->base.factor == b->base.factor && a->base.offset == b->base.offset;
}

int scenario_unit_convert(const struct md_unit *a, const struct md_unit *b,
                          double *ret_factor, double *ret_offset)
{
        if (sc_unit_same(a, b)) {
                *ret_factor = 1;
                *ret_offset = 0;
                return 0;
        }
        if (!a->has_base_unit || !b->has_base_unit || !same_base(a, b) || b->base.factor == 0)
                return -EDOM;
        /* base = fa * va + oa = fb * vb + ob */
        *ret_factor = a->base.factor / b->base.factor;
        *ret_offset = (a->base.offset - b->base.offset) / b->base.factor;
        return 0;
}

/* One "sym^e" factor at buf + at; the first after 'start' has no '.' before it. */
static size_t put_exp(char *buf, size_t size, size_t at, size_t start, const char *sym, int32_t e)
{
        const char *dot = at > start ? "." : "";
        int n;

        if (e == 0 || at >= size)
                return at;
        n = e == 1 ? snprintf(buf + at, size - at, "%s%s", dot, sym)
                   : snprintf(buf + at, size - at, "%s%s%d", dot, sym, (int)e);
        return n < 0 ? at : at + (size_t)n;
}

const char *sc_unit_str(const struct md_unit *u, char *buf, size_t size)
{
        size_t at, start;

        if (!u->has_base_unit) {
                snprintf(buf, size, "'%s' (no BaseUnit)", u->name ? u->name : "?");
                return buf;
        }
        snprintf(buf, size, "'%s' = ", u->name ? u->name : "?");
        at = start = strlen(buf);
        at = put_exp(buf, size, at, start, "kg", u->base.kg);
        at = put_exp(buf, size, at, start, "m", u->base.m);
        at = put_exp(buf, size, at, start, "s", u->base.s);
        at = put_exp(buf, size, at, start, "A", u->base.A);
        at = put_exp(buf, size, at, start, "K", u->base.K);
        at = put_exp(buf, size, at, start, "mol", u->base.mol);
        at = put_exp(buf, size, at, start, "cd", u->base.cd);
        at = put_exp(buf, size, at, start, "rad", u->base.rad);
        if (at == start && at < size)
                at += (size_t)snprintf(buf + at, size - at, "1");
        if (at < size && (u->base.factor != 1 || u->base.offset != 0))
                snprintf(buf + at, size - at, " (factor %g, offset %g)", u->base.factor,
                         u->base.offset);
        return buf;
}
