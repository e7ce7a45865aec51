/*
 * md_types: <TypeDefinitions> (FMI 3.0 Float32Type..ClockType, FMI 2.0
 * SimpleType) and the attributes a type shares with the variables that
 * declare it. FMI 3.0 sections 2.4.4 and 2.2.8, FMI 2.0 section 2.2.3.
 *
 * DESIGN: md_read_type_attrs() only writes what the element gives, so a
 * variable's attributes are its type's, copied, then overwritten by its own:
 * the inheritance rule of section 2.4.7.5 (declaredType) in one function.
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

struct type_elem {
        const char *name;
        enum md_type type;
};

static const struct type_elem types3[] = {
        { "Float32Type", MD_FLOAT32 }, { "Float64Type", MD_FLOAT64 },
        { "Int8Type", MD_INT8 },       { "UInt8Type", MD_UINT8 },
        { "Int16Type", MD_INT16 },     { "UInt16Type", MD_UINT16 },
        { "Int32Type", MD_INT32 },     { "UInt32Type", MD_UINT32 },
        { "Int64Type", MD_INT64 },     { "UInt64Type", MD_UINT64 },
        { "BooleanType", MD_BOOLEAN }, { "StringType", MD_STRING },
        { "BinaryType", MD_BINARY },   { "EnumerationType", MD_ENUMERATION },
        { "ClockType", MD_CLOCK },
};

static const struct type_elem types2[] = {
        { "Real", MD_FLOAT64 },  { "Integer", MD_INT32 },        { "Boolean", MD_BOOLEAN },
        { "String", MD_STRING }, { "Enumeration", MD_ENUMERATION },
};

static bool find_type(const struct type_elem *v, size_t n, const xmlNode *e, enum md_type *ret)
{
        for (size_t i = 0; i < n; i++) {
                if (mx_is(e, v[i].name)) {
                        *ret = v[i].type;
                        return true;
                }
        }
        return false;
}

static void read_clock_attrs(struct md_ctx *c, const xmlNode *n, const char *subject,
                             struct md_clock_attrs *k)
{
        static const char *const ivar[] = { "constant", "fixed", "tunable", "changing",
                                            "countdown", "triggered" };
        const char *sec = "2.4.4";
        int i;

        md_attr_bool(c, n, subject, "canBeDeactivated", sec, &k->can_be_deactivated);
        if (md_attr_u32(c, n, subject, "priority", sec, &k->priority) == 1)
                k->has_priority = true;
        if (md_attr_enum(c, n, subject, "intervalVariability", sec, ivar, 6, &i) == 1)
                k->interval_variability = (enum md_interval_variability)(i + MD_INTERVAL_CONSTANT);
        if (md_attr_double(c, n, subject, "intervalDecimal", sec, &k->interval_decimal) == 1)
                k->has_interval_decimal = true;
        if (md_attr_double(c, n, subject, "shiftDecimal", sec, &k->shift_decimal) == 1)
                k->has_shift_decimal = true;
        md_attr_bool(c, n, subject, "supportsFraction", sec, &k->supports_fraction);
        if (md_attr_u64(c, n, subject, "resolution", sec, &k->resolution) == 1)
                k->has_resolution = true;
        if (md_attr_u64(c, n, subject, "intervalCounter", sec, &k->interval_counter) == 1)
                k->has_interval_counter = true;
        if (md_attr_u64(c, n, subject, "shiftCounter", sec, &k->shift_counter) == 1)
                k->has_shift_counter = true;
}

void md_read_type_attrs(struct md_ctx *c, const xmlNode *n, const char *subject, enum md_type t,
                        struct md_type_attrs *a)
{
        const char *sec = SEC(c, "2.4.4", "2.2.3");
        /* FMI 2.0 Enumeration values are xs:int. */
        enum md_type range = t == MD_ENUMERATION && c->md->fmi == MD_FMI2 ? MD_INT32 : t;

        if (md_type_is_float(t) || md_type_is_signed(t) || md_type_is_unsigned(t)) {
                md_attr_dup(c, n, "quantity", &a->quantity);
                if (md_attr_limit(c, n, subject, "min", sec, range, &a->min) == 1)
                        a->has_min = true;
                if (md_attr_limit(c, n, subject, "max", sec, range, &a->max) == 1)
                        a->has_max = true;
        }
        if (md_type_is_float(t)) {
                md_attr_dup(c, n, "unit", &a->unit);
                md_attr_dup(c, n, "displayUnit", &a->display_unit);
                md_attr_bool(c, n, subject, "relativeQuantity", sec, &a->relative_quantity);
                md_attr_bool(c, n, subject, "unbounded", sec, &a->unbounded);
                if (md_attr_scalar(c, n, subject, "nominal", sec, t, &a->nominal) == 1)
                        a->has_nominal = true;
        }
        if (t == MD_BINARY) {
                md_attr_dup(c, n, "mimeType", &a->mime_type);
                if (md_attr_u64(c, n, subject, "maxSize", sec, &a->max_size) == 1)
                        a->has_max_size = true;
        }
        if (t == MD_CLOCK)
                read_clock_attrs(c, n, subject, &a->clock);
}

static int dup_or_null(char **dst, const char *src)
{
        *dst = NULL;
        if (src && !(*dst = strdup(src)))
                return -1;
        return 0;
}

int md_copy_type_attrs(struct md_type_attrs *dst, const struct md_type_attrs *src)
{
        *dst = *src;
        if (dup_or_null(&dst->quantity, src->quantity) < 0 ||
            dup_or_null(&dst->unit, src->unit) < 0 ||
            dup_or_null(&dst->display_unit, src->display_unit) < 0 ||
            dup_or_null(&dst->mime_type, src->mime_type) < 0) {
                md_free_type_attrs(dst);
                return -1;
        }
        return 0;
}

void md_free_type_attrs(struct md_type_attrs *a)
{
        free(a->quantity);
        free(a->unit);
        free(a->display_unit);
        free(a->mime_type);
        a->quantity = a->unit = a->display_unit = a->mime_type = NULL;
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

        return (x > y) - (x < y);
}

/* Item names and values are unique within one EnumerationType. */
static void check_items(struct md_ctx *c, const struct md_type_def *td)
{
        const char *sec = SEC(c, "2.4.4", "2.2.3");
        size_t *idx = md_sort_by_name(td->items, td->n_items, sizeof(*td->items),
                                      offsetof(struct md_enum_item, name));
        int64_t *vals = malloc((td->n_items ? td->n_items : 1) * sizeof(*vals));

        if (!idx || !vals) {
                c->nomem = true;
                goto out;
        }
        for (size_t k = 0; k < td->n_items; k++)
                vals[k] = td->items[k].value;
        qsort(vals, td->n_items, sizeof(*vals), cmp_i64);
        /* Items carry no line: one error per repeated name or value. */
        for (size_t k = 1; k < td->n_items; k++) {
                const char *name = td->items[idx[k]].name;

                if (strcmp(td->items[idx[k - 1]].name, name) == 0 &&
                    (k == 1 || strcmp(td->items[idx[k - 2]].name, name) != 0))
                        md_err(c, td->line, td->name, sec, "Item name \"%s\" is not unique", name);
                if (vals[k - 1] == vals[k] && (k == 1 || vals[k - 2] != vals[k]))
                        md_err(c, td->line, td->name, sec, "Item value %lld is not unique",
                               (long long)vals[k]);
        }
        /* Kept, sorted, for the check that start values are items. */
        c->item_values[td - c->md->type_defs] = vals;
        vals = NULL;
out:
        free(idx);
        free(vals);
}

static void read_items(struct md_ctx *c, const xmlNode *n, struct md_type_def *td)
{
        const char *sec = SEC(c, "2.4.4", "2.2.3");
        size_t count = mx_count(n, "Item");

        if (count == 0) {
                md_err(c, td->line, td->name, sec, "an enumeration type needs at least one Item");
                return;
        }
        td->items = calloc(count, sizeof(*td->items));
        if (!td->items) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(n); e && !c->nomem; e = mx_next(e)) {
                struct md_enum_item *it;
                union md_scalar v;
                const char *name;

                if (!mx_is(e, "Item"))
                        continue;
                name = md_attr(c, e, "name");
                if (!name || !*name) {
                        md_err(c, mx_line(e), td->name, sec, "Item without a name");
                        continue;
                }
                if (md_attr_scalar(c, e, td->name, "value", sec,
                                   c->md->fmi == MD_FMI2 ? MD_INT32 : MD_INT64, &v) != 1) {
                        if (!md_attr(c, e, "value"))
                                md_err(c, mx_line(e), td->name, sec,
                                       "Item \"%s\" has no value", name);
                        continue;
                }
                it = &td->items[td->n_items++];
                it->value = v.i;
                md_attr_dup(c, e, "name", &it->name);
                md_attr_dup(c, e, "description", &it->description);
        }
        if (!c->nomem)
                check_items(c, td);
}

/* Returns false when nothing was kept (td untouched but for its line). */
static bool read_type(struct md_ctx *c, const xmlNode *e, struct md_type_def *td)
{
        const char *sec = SEC(c, "2.4.4", "2.2.3");
        const xmlNode *a = e;

        td->line = mx_line(e);
        if (c->md->fmi == MD_FMI3) {
                find_type(types3, sizeof(types3) / sizeof(*types3), e, &td->type);
        } else {
                a = mx_first(e);
                if (!a || !find_type(types2, sizeof(types2) / sizeof(*types2), a, &td->type)) {
                        md_err(c, td->line, md_attr(c, e, "name"), sec,
                               "SimpleType needs one of Real, Integer, Boolean, String or "
                               "Enumeration");
                        return false;
                }
        }
        md_attr_dup(c, e, "name", &td->name);
        md_attr_dup(c, e, "description", &td->description);
        md_read_type_attrs(c, a, td->name, td->type, &td->attrs);
        if (td->type == MD_ENUMERATION)
                read_items(c, a, td);
        return true;
}

void md_read_types(struct md_ctx *c, const xmlNode *types)
{
        const char *sec = SEC(c, "2.4.4", "2.2.3");
        struct md *md = c->md;
        size_t n = mx_count(types, NULL);

        if (n == 0)
                return;
        md->type_defs = calloc(n, sizeof(*md->type_defs));
        c->item_values = calloc(n, sizeof(*c->item_values));
        if (!md->type_defs || !c->item_values) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(types); e && !c->nomem; e = mx_next(e)) {
                enum md_type t;
                const char *name;

                /* FMI 2.0's form in an FMI 3.0 document: say what FMI 3.0 writes instead. */
                if (md->fmi == MD_FMI3 && mx_is(e, "SimpleType")) {
                        md_warn(c, mx_line(e), md_attr(c, e, "name"), sec,
                                "<SimpleType> is FMI 2.0 and is ignored; an FMI 3.0 type definition "
                                "is an element named after its type (<Float64Type>, "
                                "<EnumerationType>, ...)");
                        continue;
                }
                if (md->fmi == MD_FMI3 ? !find_type(types3, sizeof(types3) / sizeof(*types3), e, &t)
                                       : !mx_is(e, "SimpleType"))
                        continue;
                name = md_attr(c, e, "name");
                if (!name || !*name) {
                        md_err(c, mx_line(e), NULL, sec, "%s without a name", mx_name(e));
                        continue;
                }
                if (read_type(c, e, &md->type_defs[md->n_type_defs]))
                        md->n_type_defs++;
        }
        if (c->nomem)
                return;
        c->types_by_name = md_sort_by_name(md->type_defs, md->n_type_defs, sizeof(*md->type_defs),
                                           offsetof(struct md_type_def, name));
        if (!c->types_by_name) {
                c->nomem = true;
                return;
        }
        for (size_t k = 1; k < md->n_type_defs; k++) {
                const struct md_type_def *a = &md->type_defs[c->types_by_name[k - 1]];
                const struct md_type_def *b = &md->type_defs[c->types_by_name[k]];

                if (strcmp(a->name, b->name) == 0)
                        md_err(c, b->line, b->name, sec,
                               "type name is not unique: also defined on line %d", a->line);
        }
}

const struct md_type_def *md_type_def_find(const struct md_ctx *c, const char *name)
{
        const struct md *md = c->md;
        size_t i = md_lookup_name(c->types_by_name, md->n_type_defs, md->type_defs,
                                  sizeof(*md->type_defs), offsetof(struct md_type_def, name), name);

        return i == SIZE_MAX ? NULL : &md->type_defs[i];
}
