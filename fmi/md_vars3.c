/*
 * md_vars3: one FMI 3.0 variable element (Float32 .. Clock): its
 * dimensions, start values, clock attributes and references to other
 * variables. FMI 3.0 sections 2.4.7.2 to 2.4.7.5 and 2.2.8.
 *
 * DESIGN: start values are parsed in the variable's own type, so range
 * errors name the type; a start list is counted against the array limit
 * before anything is allocated.
 */
#include "md_ctx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "md_values.h"

static const struct {
        const char *name;
        enum md_type type;
} elems[] = {
        { "Float32", MD_FLOAT32 }, { "Float64", MD_FLOAT64 }, { "Int8", MD_INT8 },
        { "UInt8", MD_UINT8 },     { "Int16", MD_INT16 },     { "UInt16", MD_UINT16 },
        { "Int32", MD_INT32 },     { "UInt32", MD_UINT32 },   { "Int64", MD_INT64 },
        { "UInt64", MD_UINT64 },   { "Boolean", MD_BOOLEAN }, { "String", MD_STRING },
        { "Binary", MD_BINARY },   { "Enumeration", MD_ENUMERATION },
        { "Clock", MD_CLOCK },
};

/* The k-th (0-based) whitespace-separated token of s, for a message. */
static const char *nth_token(const char *s, size_t k, char *buf)
{
        size_t i = 0, len;

        for (;;) {
                while (mv_is_space(*s))
                        s++;
                len = 0;
                while (s[len] && !mv_is_space(s[len]))
                        len++;
                if (i++ == k || !s[len])
                        break;
                s += len;
        }
        if (len > 64)
                len = 64;
        for (size_t j = 0; j < len; j++)
                buf[j] = (unsigned char)s[j] < 0x20 ? '?' : s[j];
        buf[len] = '\0';
        return buf;
}

static void read_dims(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        size_t count = mx_count(n, "Dimension");

        if (count == 0)
                return;
        v->dims = calloc(count, sizeof(*v->dims));
        if (!v->dims) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(n); e && !c->nomem; e = mx_next(e)) {
                struct md_dimension *d;

                if (!mx_is(e, "Dimension"))
                        continue;
                d = &v->dims[v->n_dims++];
                d->has_start = md_attr_u64(c, e, v->name, "start", "2.4.7.2", &d->start) == 1;
                d->has_vr = md_attr_u32(c, e, v->name, "valueReference", "2.4.7.2", &d->vr) == 1;
                if (d->has_start == d->has_vr && !md_attr(c, e, "start") &&
                    !md_attr(c, e, "valueReference"))
                        md_err(c, mx_line(e), v->name, "2.4.7.2",
                               "Dimension needs either start or valueReference");
                else if (d->has_start && d->has_vr)
                        md_err(c, mx_line(e), v->name, "2.4.7.2",
                               "Dimension has both start and valueReference; they are exclusive");
                else if (d->has_start && d->start == 0)
                        md_err(c, mx_line(e), v->name, "2.4.7.2",
                               "Dimension start=\"0\": initial dimension sizes must be positive");
        }
}

/* start="..." of a numeric, Boolean or Enumeration variable. */
static void read_start_list(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        const char *s = md_attr(c, n, "start");
        size_t bad = 0, max = c->lim.max_array_elements;
        char buf[MD_SHOW_LEN];
        int r;

        if (!s)
                return;
        r = mv_list(v->type, s, max, &v->start, &bad);
        if (r == 0) {
                v->has_start = true;
                return;
        }
        /* A start was given: its absence must not be reported as well. */
        c->var_flags[c->md->n_vars] |= MD_VF_BAD_START;
        if (r == -ENOMEM)
                c->nomem = true;
        else if (r == -E2BIG)
                md_err(c, v->line, v->name, NULL,
                       "start lists more than %zu values; variable refused", max);
        else if (r == -ERANGE)
                md_err(c, v->line, v->name, "2.4.7.5",
                       "start=\"%s\" is outside the range of %s", nth_token(s, bad, buf),
                       md_type_name(v->type));
        else if (!*nth_token(s, bad, buf))
                md_err(c, v->line, v->name, "2.4.7.5", "start=\"\" gives no value");
        else
                md_err(c, v->line, v->name, "2.4.7.5", "start=\"%s\" is not a valid %s",
                       nth_token(s, bad, buf), md_type_name(v->type));
}

/* One <Start value="..."/> of a String or Binary variable into element k. */
static void read_start_elem(struct md_ctx *c, const xmlNode *e, struct md_variable *v, size_t k)
{
        size_t max = c->lim.max_string_bytes;
        const char *s = md_attr(c, e, "value");
        char buf[MD_SHOW_LEN];
        int r;

        if (!s) {
                md_err(c, mx_line(e), v->name, "2.4.7.5", "Start element without a value");
                s = "";
        }
        if (v->type == MD_STRING) {
                /* Never leave a NULL string behind, even for a refused value. */
                if (strlen(s) > max) {
                        md_err(c, mx_line(e), v->name, NULL,
                               "start string longer than %zu bytes; refused", max);
                        s = "";
                }
                if (!(v->start.s[k] = strdup(s)))
                        c->nomem = true;
                return;
        }
        r = mv_hex(s, max, &v->start.bin[k]);
        if (r == -ENOMEM)
                c->nomem = true;
        else if (r == -E2BIG)
                md_err(c, mx_line(e), v->name, NULL,
                       "start binary longer than %zu bytes; refused", max);
        else if (r < 0)
                md_err(c, mx_line(e), v->name, "2.4.7.5",
                       "Start value=\"%s\" is not hexBinary (an even number of hex digits, "
                       "optionally after 0x)", md_show(s, buf));
}

/* Start values of String and Binary: <Start value=""/> children. */
static void read_start_elems(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        size_t count = mx_count(n, "Start"), k = 0;

        if (count == 0)
                return;
        if (count > c->lim.max_array_elements) {
                md_err(c, v->line, v->name, NULL,
                       "more than %zu Start elements; variable refused", c->lim.max_array_elements);
                c->var_flags[c->md->n_vars] |= MD_VF_BAD_START;
                return;
        }
        if (mv_alloc(v->type, count, &v->start) < 0) {
                c->nomem = true;
                return;
        }
        v->has_start = true;
        for (const xmlNode *e = mx_first(n); e && !c->nomem; e = mx_next(e))
                if (mx_is(e, "Start"))
                        read_start_elem(c, e, v, k++);
}

/* Binary start="..." (a list of hexBinary), as later 3.x schemas write it. */
static void read_start_hex_list(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        const char *s = md_attr(c, n, "start"), *p;
        size_t count = 0, k = 0;
        char buf[MD_SHOW_LEN];

        if (!s)
                return;
        if (v->has_start) {
                md_err(c, v->line, v->name, "2.4.7.5",
                       "start attribute and Start elements are both given");
                return;
        }
        for (p = s; *p;) {
                while (mv_is_space(*p))
                        p++;
                if (*p)
                        count++;
                while (*p && !mv_is_space(*p))
                        p++;
        }
        c->var_flags[c->md->n_vars] |= MD_VF_BAD_START;
        if (count == 0) {
                md_err(c, v->line, v->name, "2.4.7.5", "start=\"\" gives no value");
                return;
        }
        if (count > c->lim.max_array_elements) {
                md_err(c, v->line, v->name, NULL,
                       "start lists more than %zu values; variable refused",
                       c->lim.max_array_elements);
                return;
        }
        if (mv_alloc(MD_BINARY, count, &v->start) < 0) {
                c->nomem = true;
                return;
        }
        v->has_start = true;
        for (p = s; *p && !c->nomem; k++) {
                const char *tok;
                int r;

                while (mv_is_space(*p))
                        p++;
                if (!*p)
                        break;
                tok = p;
                while (*p && !mv_is_space(*p))
                        p++;
                r = mv_hex_n(tok, (size_t)(p - tok), c->lim.max_string_bytes, &v->start.bin[k]);
                if (r == -ENOMEM)
                        c->nomem = true;
                else if (r == -E2BIG)
                        md_err(c, v->line, v->name, NULL,
                               "start binary longer than %zu bytes; refused",
                               c->lim.max_string_bytes);
                else if (r < 0)
                        md_err(c, v->line, v->name, "2.4.7.5",
                               "start=\"%s\" is not hexBinary (an even number of hex digits, "
                               "optionally after 0x)", nth_token(s, k, buf));
        }
}

/*
 * FMI 2.0's <String start="..."/> in an FMI 3.0 document: FMI 3.0 gives
 * String start values only as <Start value="..."/> children (section
 * 2.4.7.5, start). Say that, rather than report the start as missing.
 */
static void string_start_attr(struct md_ctx *c, struct md_variable *v)
{
        md_err(c, v->line, v->name, "2.4.7.5",
               "a String variable has a start attribute; FMI 3.0 gives String start values as "
               "<Start value=\"...\"/> child elements");
        if (!v->has_start)
                c->var_flags[c->md->n_vars] |= MD_VF_BAD_START;
}

static void read_refs(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        const char *sec = "2.4.7.4";

        if (md_type_is_float(v->type)) {
                v->has_derivative = md_attr_u32(c, n, v->name, "derivative", "2.4.7.5",
                                                &v->derivative) == 1;
                md_attr_bool(c, n, v->name, "reinit", "2.4.7.5", &v->reinit);
        }
        v->has_previous = md_attr_u32(c, n, v->name, "previous", sec, &v->previous) == 1;
        if (md_attr_u32_list(c, n, v->name, "clocks", sec, &v->clocks, &v->n_clocks) == 1 &&
            v->n_clocks == 0)
                md_err(c, v->line, v->name, sec, "clocks=\"\" must list at least one Clock");
        md_attr_bool(c, n, v->name, "intermediateUpdate", sec, &v->intermediate_update);
        if (v->type == MD_CLOCK && md_attr(c, n, "intermediateUpdate"))
                md_err(c, v->line, v->name, sec, "a Clock must not have intermediateUpdate");
}

int md_read_var3(struct md_ctx *c, const xmlNode *n, struct md_variable *v)
{
        bool found = false, variability_given;

        for (size_t i = 0; i < sizeof(elems) / sizeof(*elems) && !found; i++) {
                if (mx_is(n, elems[i].name)) {
                        v->type = elems[i].type;
                        found = true;
                }
        }
        if (!found && mx_is(n, "ScalarVariable")) {
                md_warn(c, mx_line(n), md_attr(c, n, "name"), "2.4.7.1",
                        "<ScalarVariable> is FMI 2.0 and is ignored; an FMI 3.0 variable is an "
                        "element named after its type (<Float64>, <Int32>, <Boolean>, ...)");
                return 0;
        }
        if (!found) {
                md_warn(c, mx_line(n), NULL, "2.4.7.1",
                        "<%s> is not a variable element of FMI 3.0; ignored", mx_name(n));
                return 0;
        }
        md_var_common(c, n, v, &variability_given);
        md_var_declared_type(c, n, v);
        read_dims(c, n, v);
        if (v->type == MD_STRING || v->type == MD_BINARY)
                read_start_elems(c, n, v);
        if (v->type == MD_STRING && md_attr(c, n, "start"))
                string_start_attr(c, v);
        if (v->type == MD_BINARY)
                read_start_hex_list(c, n, v);
        else if (v->type != MD_STRING && v->type != MD_CLOCK)
                read_start_list(c, n, v);
        read_refs(c, n, v);
        for (const xmlNode *e = mx_first(n); e && !c->nomem; e = mx_next(e))
                if (mx_is(e, "Alias"))
                        md_add_alias(c, e, c->md->n_vars);
        md_var_defaults(c, v, variability_given);
        return 1;
}
