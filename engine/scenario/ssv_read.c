/*
 * ssv_read: <ssv:ParameterSet> into struct ssv_set.
 */
#include "engine/scenario/ssv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/scenario/ssp_xml.h"

static int type_of(const xmlNode *t, struct ssv_param *p)
{
        static const struct { const char *name; enum ssd_type type; } generic[] = {
                { "Real", SSD_TYPE_REAL },       { "Integer", SSD_TYPE_INTEGER },
                { "Boolean", SSD_TYPE_BOOLEAN }, { "String", SSD_TYPE_STRING },
                { "Enumeration", SSD_TYPE_ENUMERATION }, { "Binary", SSD_TYPE_BINARY },
        };
        const char *name = mx_name(t);

        for (size_t i = 0; i < sizeof(generic) / sizeof(*generic); i++)
                if (strcmp(name, generic[i].name) == 0) {
                        p->type = generic[i].type;
                        return 0;
                }
        for (enum md_type m = MD_FLOAT32; m <= MD_UINT64; m++)
                if (strcmp(name, md_type_name(m)) == 0) {
                        p->type = SSD_TYPE_EXACT;
                        p->exact = m;
                        return 0;
                }
        return -EINVAL;
}

static int read_param(struct mx *x, const xmlNode *n, struct ssv_param *p)
{
        const xmlNode *t = mx_first(n);

        p->line = mx_line(n);
        p->name = mx_attr(x, n, "name");
        if (!p->name)
                return ssd_missing(x, n, "name");
        while (t && (mx_is(t, "Annotations") || mx_is(t, "Dimension")))
                t = mx_next(t);
        if (!t || type_of(t, p) < 0) {
                diag_add(x->diags, DIAG_ERROR, x->file, p->line, p->name,
                         "<Parameter> needs a value element (<Real>, <Integer>, <Boolean>, "
                         "<String>, <Enumeration>, <Binary>)%s%s", t ? ", not " : "",
                         t ? mx_name(t) : "");
                return -EINVAL;
        }
        if (p->type == SSD_TYPE_BINARY && mx_attr(x, t, "source")) {
                diag_add(x->diags, DIAG_ERROR, x->file, mx_line(t), p->name,
                         "<Binary source=...> is not supported: give the value inline");
                return -EINVAL;
        }
        p->value = mx_attr(x, t, "value");
        if (!p->value)
                return ssd_missing(x, t, "value");
        p->unit = mx_attr(x, t, "unit");
        return 0;
}

int ssv_read_set(struct ssv_set *set, struct mx *x, const xmlNode *node)
{
        const xmlNode *params = NULL;
        int bad = 0, r;

        if (!set->file)
                set->file = x->file;
        for (const xmlNode *c = mx_first(node); c; c = mx_next(c)) {
                if (mx_is(c, "Parameters")) {
                        params = c;
                } else if (mx_is(c, "Units")) {
                        r = ssd_read_units(x, c, &set->units);
                        if (r == -ENOMEM)
                                return r;
                        bad |= r < 0;
                        set->n_units = r < 0 ? 0 : (size_t)r;
                }
        }
        if (!params)
                return bad ? -EINVAL : 0;
        set->v = calloc(mx_count(params, "Parameter") + 1, sizeof(*set->v));
        if (!set->v)
                return -ENOMEM;
        for (const xmlNode *c = mx_first(params); c; c = mx_next(c)) {
                if (!mx_is(c, "Parameter"))
                        continue;
                if (read_param(x, c, &set->v[set->n]) < 0)
                        bad = 1;
                else
                        set->n++;
        }
        return x->nomem ? -ENOMEM : bad ? -EINVAL : 0;
}

int ssv_read(struct ssv_set *set, const void *buf, size_t len)
{
        const xmlNode *root;
        int r;

        set->file = set->x.file;
        r = ssp_xml_read(&set->x, buf, len);
        if (r < 0)
                return r;
        root = xmlDocGetRootElement(set->x.doc);
        if (!mx_is(root, "ParameterSet")) {
                diag_add(set->x.diags, DIAG_ERROR, set->x.file, mx_line(root), NULL,
                         "the root element is <%s>, not <ssv:ParameterSet>", mx_name(root));
                return -EINVAL;
        }
        return ssv_read_set(set, &set->x, root);
}

void ssv_set_fini(struct ssv_set *set)
{
        free(set->v);
        free(set->units);
        mx_fini(&set->x);
        set->v = NULL;
        set->units = NULL;
        set->n = set->n_units = 0;
}

const struct md_unit *ssv_unit(const struct ssv_set *set, const char *name)
{
        for (size_t i = 0; i < set->n_units; i++)
                if (strcmp(set->units[i].name, name) == 0)
                        return &set->units[i].def;
        return NULL;
}
