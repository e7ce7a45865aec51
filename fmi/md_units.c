/*
 * md_units: <UnitDefinitions>: units with their SI base unit exponents,
 * factor and offset, and their display units; and the check that a unit or
 * display unit named by a type or variable exists.
 * FMI 3.0 section 2.4.3, FMI 2.0 section 2.2.2.
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

static void read_base_unit(struct md_ctx *c, const xmlNode *e, struct md_unit *u)
{
        static const char *const exps[] = { "kg", "m", "s", "A", "K", "mol", "cd", "rad" };
        int32_t *fields[] = { &u->base.kg, &u->base.m, &u->base.s, &u->base.A,
                              &u->base.K, &u->base.mol, &u->base.cd, &u->base.rad };
        const char *sec = SEC(c, "2.4.3", "2.2.2");

        if (u->has_base_unit) {
                md_err(c, mx_line(e), u->name, sec, "unit has more than one BaseUnit");
                return;
        }
        u->has_base_unit = true;
        for (size_t i = 0; i < sizeof(exps) / sizeof(*exps); i++)
                md_attr_i32(c, e, u->name, exps[i], sec, fields[i]);
        md_attr_double(c, e, u->name, "factor", sec, &u->base.factor);
        md_attr_double(c, e, u->name, "offset", sec, &u->base.offset);
}

static void read_display_unit(struct md_ctx *c, const xmlNode *e, struct md_unit *u)
{
        const char *sec = SEC(c, "2.4.3", "2.2.2");
        struct md_display_unit *d;
        const char *name = md_attr(c, e, "name");

        if (!name || !*name) {
                md_err(c, mx_line(e), u->name, sec, "DisplayUnit without a name");
                return;
        }
        d = &u->display[u->n_display++];
        d->factor = 1.0;
        md_attr_dup(c, e, "name", &d->name);
        md_attr_double(c, e, name, "factor", sec, &d->factor);
        md_attr_double(c, e, name, "offset", sec, &d->offset);
        if (c->md->fmi == MD_FMI3)
                md_attr_bool(c, e, name, "inverse", sec, &d->inverse);
        if (d->inverse && d->offset != 0)
                md_err(c, mx_line(e), name, sec,
                       "inverse=\"true\" is only allowed with offset=\"0\"");
}

/* Sort the display units' names for lookups; names are unique in a unit. */
static void index_display_units(struct md_ctx *c, const struct md_unit *u, size_t **ret)
{
        size_t *idx = md_sort_by_name(u->display, u->n_display, sizeof(*u->display),
                                      offsetof(struct md_display_unit, name));

        if (!idx) {
                c->nomem = true;
                return;
        }
        /* Display units carry no line: one error per repeated name. */
        for (size_t k = 1; k < u->n_display; k++)
                if (strcmp(u->display[idx[k - 1]].name, u->display[idx[k]].name) == 0 &&
                    (k == 1 || strcmp(u->display[idx[k - 2]].name, u->display[idx[k]].name) != 0))
                        md_err(c, u->line, u->name, SEC(c, "2.4.3", "2.2.2"),
                               "display unit \"%s\" is defined twice in this unit",
                               u->display[idx[k]].name);
        *ret = idx;
}

static void read_unit(struct md_ctx *c, const xmlNode *e, struct md_unit *u)
{
        size_t n_display = mx_count(e, "DisplayUnit");

        u->line = mx_line(e);
        u->base.factor = 1.0;
        if (md_attr_dup(c, e, "name", &u->name) < 0)
                return;
        if (n_display) {
                u->display = calloc(n_display, sizeof(*u->display));
                if (!u->display) {
                        c->nomem = true;
                        return;
                }
        }
        for (const xmlNode *k = mx_first(e); k && !c->nomem; k = mx_next(k)) {
                if (mx_is(k, "BaseUnit"))
                        read_base_unit(c, k, u);
                else if (mx_is(k, "DisplayUnit"))
                        read_display_unit(c, k, u);
        }
}

void md_read_units(struct md_ctx *c, const xmlNode *units)
{
        const char *sec = SEC(c, "2.4.3", "2.2.2");
        struct md *md = c->md;
        size_t n = mx_count(units, "Unit");

        if (n == 0)
                return;
        md->units = calloc(n, sizeof(*md->units));
        c->display_by_name = calloc(n, sizeof(*c->display_by_name));
        if (!md->units || !c->display_by_name) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(units); e && !c->nomem; e = mx_next(e)) {
                const char *name;

                if (!mx_is(e, "Unit"))
                        continue;
                name = md_attr(c, e, "name");
                if (!name || !*name) {
                        md_err(c, mx_line(e), NULL, sec, "Unit without a name");
                        continue;
                }
                read_unit(c, e, &md->units[md->n_units]);
                index_display_units(c, &md->units[md->n_units],
                                    &c->display_by_name[md->n_units]);
                md->n_units++;
        }
        if (c->nomem)
                return;
        c->units_by_name = md_sort_by_name(md->units, md->n_units, sizeof(*md->units),
                                           offsetof(struct md_unit, name));
        if (!c->units_by_name) {
                c->nomem = true;
                return;
        }
        for (size_t k = 1; k < md->n_units; k++) {
                const struct md_unit *a = &md->units[c->units_by_name[k - 1]];
                const struct md_unit *b = &md->units[c->units_by_name[k]];

                if (strcmp(a->name, b->name) == 0)
                        md_err(c, b->line, b->name, sec,
                               "unit name is not unique: also defined on line %d", a->line);
        }
}

const struct md_unit *md_unit_find(const struct md_ctx *c, const char *name)
{
        const struct md *md = c->md;
        size_t i = md_lookup_name(c->units_by_name, md->n_units, md->units, sizeof(*md->units),
                                  offsetof(struct md_unit, name), name);

        return i == SIZE_MAX ? NULL : &md->units[i];
}

bool md_display_unit_exists(const struct md_ctx *c, const struct md_unit *u, const char *name)
{
        size_t k = (size_t)(u - c->md->units);

        return md_lookup_name(c->display_by_name ? c->display_by_name[k] : NULL, u->n_display,
                              u->display, sizeof(*u->display),
                              offsetof(struct md_display_unit, name), name) != SIZE_MAX;
}

static bool same(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

void md_check_unit_ref(struct md_ctx *c, int line, const char *subject, const char *sec,
                       const struct md_type_attrs *a, const struct md_type_attrs *inherited,
                       const struct md_unit **ret_unit)
{
        bool unit_inherited = inherited && same(a->unit, inherited->unit);
        bool display_inherited = unit_inherited && same(a->display_unit, inherited->display_unit);
        const struct md_unit *u = NULL;
        char buf[MD_SHOW_LEN];

        /*
         * FMI 2.0 (section 2.2.7, unit) describes unit as "defined with
         * UnitDefinitions.Unit.name" but does not say that a missing one is
         * an error; FMI 3.0 (section 2.4.7.5) adds "which must exist".
         * Exporters of the FMI 2.0 era leave units out of UnitDefinitions
         * (OpenModelica 1.13 does), and other importers run those FMUs: a
         * warning for FMI 2.0, the unit is then unknown (no conversion).
         */
        if (a->unit) {
                u = md_unit_find(c, a->unit);
                if (!u && !unit_inherited)
                        md_err3(c, line, subject, sec,
                                "unit=\"%s\" is not defined in UnitDefinitions",
                                md_show(a->unit, buf));
        }
        if (display_inherited)
                ;
        else if (a->display_unit && !a->unit)
                md_err(c, line, subject, sec, "displayUnit=\"%s\" is given without a unit",
                       md_show(a->display_unit, buf));
        /*
         * FMI 2.0 (section 2.2.7, displayUnit): "If the corresponding
         * displayUnit is not defined under <UnitDefinitions><Unit><DisplayUnit>,
         * then displayUnit is ignored": allowed there, so a warning. FMI 3.0
         * (section 2.4.7.5) says the DisplayUnit "must exist".
         */
        else if (a->display_unit && u && !md_display_unit_exists(c, u, a->display_unit))
                md_err3(c, line, subject, sec,
                        "displayUnit=\"%s\" is not defined in unit \"%s\"%s",
                        md_show(a->display_unit, buf), u->name,
                        c->md->fmi == MD_FMI2 ? "; it is ignored" : "");
        if (ret_unit)
                *ret_unit = u;
}
