/*
 * md_vars2: one FMI 2.0 <ScalarVariable> with its Real, Integer, Boolean,
 * String or Enumeration child, mapped onto the FMI 3.0 data model (Real is
 * Float64, Integer Int32). FMI 2.0 section 2.2.7.
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "md_values.h"

static const struct {
        const char *name;
        enum md_type type;
} elems[] = {
        { "Real", MD_FLOAT64 },  { "Integer", MD_INT32 },        { "Boolean", MD_BOOLEAN },
        { "String", MD_STRING }, { "Enumeration", MD_ENUMERATION },
};

/* The type element of a ScalarVariable; NULL (with an error) when not exactly one. */
static const xmlNode *type_elem(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        const xmlNode *found = NULL;
        size_t count = 0;

        for (const xmlNode *e = mx_first(n); e; e = mx_next(e)) {
                for (size_t i = 0; i < sizeof(elems) / sizeof(*elems); i++) {
                        if (!mx_is(e, elems[i].name))
                                continue;
                        if (!found) {
                                found = e;
                                v->type = elems[i].type;
                        }
                        count++;
                }
        }
        if (count != 1)
                md_err(c, v->line, v->name, "2.2.7",
                       "a ScalarVariable needs exactly one of Real, Integer, Boolean, String or "
                       "Enumeration (it has %zu)", count);
        if (!found)
                v->type = MD_FLOAT64;
        return found;
}

static void read_start(struct md_ctx *c, const xmlNode *t, struct md_variable *v)
{
        const char *s = md_attr(c, t, "start");
        enum md_type range = v->type == MD_ENUMERATION ? MD_INT32 : v->type;
        union md_scalar x;

        if (!s)
                return;
        if (v->type == MD_STRING) {
                if (strlen(s) > c->lim.max_string_bytes) {
                        md_err(c, v->line, v->name, NULL,
                               "start string longer than %zu bytes; refused",
                               c->lim.max_string_bytes);
                        c->var_flags[c->md->n_vars] |= MD_VF_BAD_START;
                        return;
                }
                if (mv_alloc(MD_STRING, 1, &v->start) < 0 || !(v->start.s[0] = strdup(s))) {
                        c->nomem = true;
                        return;
                }
                v->has_start = true;
                return;
        }
        if (md_attr_scalar(c, t, v->name, "start", "2.2.7", range, &x) != 1) {
                c->var_flags[c->md->n_vars] |= MD_VF_BAD_START;
                return;
        }
        if (mv_alloc(v->type, 1, &v->start) < 0) {
                c->nomem = true;
                return;
        }
        v->has_start = true;
        if (v->type == MD_FLOAT64)
                v->start.f[0] = x.f;
        else if (v->type == MD_BOOLEAN)
                v->start.b[0] = x.b;
        else
                v->start.i[0] = x.i;
}

static bool is_fmi3_variable(const xmlNode *n)
{
        static const char *const names[] = {
                "Float32", "Float64", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
                "Int64", "UInt64", "Boolean", "String", "Binary", "Enumeration", "Clock",
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
                if (mx_is(n, names[i]))
                        return true;
        return false;
}

int md_read_var2(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        const xmlNode *t;
        bool variability_given;

        if (!mx_is(n, "ScalarVariable")) {
                /* An FMI 3.0 variable element (<Float64>, ...) in an FMI 2.0 document: say so. */
                md_warn(c, mx_line(n), md_attr(c, n, "name"), "2.2.7",
                        "<%s> is not a ScalarVariable; ignored%s", mx_name(n),
                        is_fmi3_variable(n) ? " (it is an FMI 3.0 variable element; an FMI 2.0 "
                        "variable is a <ScalarVariable> with a <Real>, <Integer>, <Boolean>, "
                        "<String> or <Enumeration> child)" : "");
                return 0;
        }
        md_var_common(c, n, v, &variability_given);
        t = type_elem(c, n, v);
        if (t) {
                md_var_declared_type(c, t, v);
                read_start(c, t, v);
                if (v->type == MD_FLOAT64) {
                        /* An index for now; md_read_vars() turns it into a vr. */
                        v->has_derivative = md_attr_u32(c, t, v->name, "derivative", "2.2.7",
                                                        &v->derivative) == 1;
                        md_attr_bool(c, t, v->name, "reinit", "2.2.7", &v->reinit);
                }
        }
        md_var_defaults(c, v, variability_given);
        return 1;
}
