/*
 * ssd_attrs: the small readers the SSD and SSV passes share: typed
 * attributes, Units, and lookups in a read document.
 */
#include "engine/scenario/ssd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/md_values.h"

int ssd_missing(struct mx *x, const xmlNode *n, const char *attr)
{
        diag_add(x->diags, DIAG_ERROR, x->file, mx_line(n), NULL,
                 "<%s> lacks the required attribute '%s'", mx_name(n), attr);
        return -EINVAL;
}

int ssd_attr_double(struct mx *x, const xmlNode *n, const char *name, double *ret)
{
        const char *s = mx_attr(x, n, name);
        double v;

        if (!s)
                return 1;
        if (mv_double(s, &v) < 0) {
                diag_add(x->diags, DIAG_ERROR, x->file, mx_line(n), NULL,
                         "<%s %s=\"%s\">: not a number (xs:double)", mx_name(n), name, s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int ssd_attr_bool(struct mx *x, const xmlNode *n, const char *name, bool *ret)
{
        const char *s = mx_attr(x, n, name);
        bool v;

        if (!s)
                return 1;
        if (mv_bool(s, &v) < 0) {
                diag_add(x->diags, DIAG_ERROR, x->file, mx_line(n), NULL,
                         "<%s %s=\"%s\">: not a boolean (true, false, 1, 0)", mx_name(n), name, s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int attr_exp(struct mx *x, const xmlNode *n, const char *name, int32_t *ret)
{
        const char *s = mx_attr(x, n, name);
        int64_t v;

        *ret = 0;
        if (!s)
                return 0;
        if (mv_int(s, INT32_MIN, INT32_MAX, &v) < 0) {
                diag_add(x->diags, DIAG_ERROR, x->file, mx_line(n), NULL,
                         "<BaseUnit %s=\"%s\">: not an exponent (xs:int)", name, s);
                return -EINVAL;
        }
        *ret = (int32_t)v;
        return 0;
}

static int read_base(struct mx *x, const xmlNode *b, struct md_unit *u)
{
        int bad = 0;

        u->has_base_unit = true;
        u->base.factor = 1;
        u->base.offset = 0;
        bad |= attr_exp(x, b, "kg", &u->base.kg);
        bad |= attr_exp(x, b, "m", &u->base.m);
        bad |= attr_exp(x, b, "s", &u->base.s);
        bad |= attr_exp(x, b, "A", &u->base.A);
        bad |= attr_exp(x, b, "K", &u->base.K);
        bad |= attr_exp(x, b, "mol", &u->base.mol);
        bad |= attr_exp(x, b, "cd", &u->base.cd);
        bad |= attr_exp(x, b, "rad", &u->base.rad);
        bad |= ssd_attr_double(x, b, "factor", &u->base.factor) < 0;
        bad |= ssd_attr_double(x, b, "offset", &u->base.offset) < 0;
        if (!bad && u->base.factor == 0) {
                diag_add(x->diags, DIAG_ERROR, x->file, mx_line(b), u->name,
                         "BaseUnit factor 0: the unit cannot be converted");
                bad = 1;
        }
        return bad ? -EINVAL : 0;
}

int ssd_read_units(struct mx *x, const xmlNode *units, struct ssd_unit **ret)
{
        size_t n = mx_count(units, "Unit"), k = 0;
        struct ssd_unit *v;
        int bad = 0;

        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (const xmlNode *c = mx_first(units); c; c = mx_next(c)) {
                struct ssd_unit *u = &v[k];
                const xmlNode *b;

                if (!mx_is(c, "Unit"))
                        continue;
                u->name = mx_attr(x, c, "name");
                if (!u->name) {
                        bad |= ssd_missing(x, c, "name") < 0;
                        continue;
                }
                for (size_t i = 0; i < k; i++)
                        if (strcmp(v[i].name, u->name) == 0) {
                                diag_add(x->diags, DIAG_ERROR, x->file, mx_line(c), u->name,
                                         "unit defined twice (SSP 1.0 TUnit: names are unique)");
                                bad = 1;
                        }
                u->def.name = (char *)u->name;
                u->def.line = mx_line(c);
                b = mx_first(c);
                if (b && mx_is(b, "BaseUnit"))
                        bad |= read_base(x, b, &u->def) < 0;
                else
                        bad |= ssd_missing(x, c, "BaseUnit (element)") < 0;
                k++;
        }
        if (bad || x->nomem) {
                free(v);
                return x->nomem ? -ENOMEM : -EINVAL;
        }
        *ret = v;
        return (int)k;
}

const struct ssd_element *ssd_child(const struct ssd_element *sys, const char *name)
{
        for (size_t i = 0; i < sys->n_elements; i++)
                if (strcmp(sys->elements[i].name, name) == 0)
                        return &sys->elements[i];
        return NULL;
}

const struct ssd_connector *ssd_connector(const struct ssd_element *e, const char *name)
{
        for (size_t i = 0; i < e->n_connectors; i++)
                if (strcmp(e->connectors[i].name, name) == 0)
                        return &e->connectors[i];
        return NULL;
}

const struct md_unit *ssd_unit(const struct ssd_doc *doc, const char *name)
{
        for (size_t i = 0; i < doc->n_units; i++)
                if (strcmp(doc->units[i].name, name) == 0)
                        return &doc->units[i].def;
        return NULL;
}

const char *ssd_kind_name(enum ssd_kind k)
{
        static const char *const names[] = {
                "input", "output", "parameter", "calculatedParameter", "structuralParameter",
                "constant", "local", "inout", "unspecified",
        };

        return (unsigned)k < sizeof(names) / sizeof(*names) ? names[k] : "?";
}

static void free_element(struct ssd_element *e)
{
        for (size_t i = 0; i < e->n_elements; i++)
                free_element(&e->elements[i]);
        free(e->elements);
        free(e->connectors);
        free(e->bindings);
        free(e->connections);
}

void ssd_doc_fini(struct ssd_doc *doc)
{
        free_element(&doc->root);
        free(doc->units);
        mx_fini(&doc->x);
        doc->root = (struct ssd_element){ .kind = SSD_SYSTEM };
        doc->units = NULL;
        doc->n_units = 0;
}
