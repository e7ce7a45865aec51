/*
 * scenario_value: a value given as text (a parameter binding, --start
 * NAME=VALUE) parsed for the variable it is meant for, and a variable's
 * array dimensions.
 *
 * DESIGN: the variable's type decides the parse, through fmi/md_values.h,
 * so a binding is read exactly as a start value in the model description
 * would be (locale-independent, range-checked per integer width). An array
 * takes one value per element in row-major order, or a single value for
 * every element, as FMI 3.0 start values do: separated by whitespace, as
 * in a description's start attribute, or in brackets with commas, as
 * fmuctl set takes them ("[1, 2, 3]"; a matrix's rows nested or not). An
 * array sized 0 by a structural parameter (FMI 3.0 section 2.4.7.2) takes
 * no value: "" or "[]".
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/md_values.h"

#define MAX_BINARY (16u << 20)

/* One enumeration token: an item name of the variable's type, or its value. */
static int enum_token(const struct md_variable *v, const char *tok, size_t len, int64_t *ret)
{
        char buf[32];

        if (v->type_def)
                for (size_t i = 0; i < v->type_def->n_items; i++) {
                        const char *name = v->type_def->items[i].name;

                        if (name && strlen(name) == len && memcmp(name, tok, len) == 0) {
                                *ret = v->type_def->items[i].value;
                                return 0;
                        }
                }
        if (len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, tok, len);
        buf[len] = '\0';
        return mv_int(buf, INT64_MIN, INT64_MAX, ret);
}

static int parse_enum(const struct md_variable *v, const char *s, uint64_t max_n,
                      struct md_values *ret)
{
        size_t n = 0, cap = 4;
        int64_t *vals = malloc(cap * sizeof(*vals));
        int r = 0;

        if (!vals)
                return -ENOMEM;
        while (*s) {
                size_t len;

                while (mv_is_space(*s))
                        s++;
                if (!*s)
                        break;
                for (len = 0; s[len] && !mv_is_space(s[len]); len++)
                        ;
                if (n >= max_n) {
                        r = -E2BIG;
                        break;
                }
                if (n == cap) {
                        int64_t *p = realloc(vals, 2 * cap * sizeof(*vals));

                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        vals = p;
                        cap *= 2;
                }
                r = enum_token(v, s, len, &vals[n++]);
                if (r < 0)
                        break;
                s += len;
        }
        if (r == 0 && n == 0)
                r = -EINVAL;
        if (r < 0) {
                free(vals);
                return r;
        }
        *ret = (struct md_values){ .n = n, .i = vals };
        return 0;
}

static int parse_string(const char *s, struct md_values *ret)
{
        char **p = malloc(sizeof(*p));

        if (!p)
                return -ENOMEM;
        p[0] = strdup(s);
        if (!p[0]) {
                free(p);
                return -ENOMEM;
        }
        *ret = (struct md_values){ .n = 1, .s = p };
        return 0;
}

static int parse_binary(const char *s, struct md_values *ret)
{
        struct md_binary *b = malloc(sizeof(*b));
        int r;

        if (!b)
                return -ENOMEM;
        r = mv_hex(s, MAX_BINARY, b);
        if (r < 0) {
                free(b);
                return r;
        }
        *ret = (struct md_values){ .n = 1, .bin = b };
        return 0;
}

/*
 * The number policy of user-given values (master_value.h) on parsed
 * values; a Float32 is read again as Float64 to see what parsing it as
 * Float32 rounded away. A static reason, or NULL.
 */
static const char *float_refusal(enum md_type t, const char *text, const struct md_values *vals)
{
        struct md_values wide = { 0 };
        const char *why = NULL;
        size_t bad = 0;

        if (t == MD_FLOAT32 && mv_list(MD_FLOAT64, text, vals->n, &wide, &bad) == 0 &&
            wide.n == vals->n)
                for (size_t i = 0; i < wide.n && !why; i++)
                        why = mv_float_refusal(t, wide.f[i]);
        mv_free(MD_FLOAT64, &wide);
        for (size_t i = 0; i < vals->n && !why; i++)
                why = mv_float_refusal(t, vals->f[i]);
        return why;
}

/*
 * An array's values in brackets ("[1, 2]", "[[1, 2], [3, 4]]") as the
 * whitespace-separated list they stand for, malloc'ed; NULL (*ret_err 0)
 * when text is not in brackets, or -ENOMEM / -EINVAL (brackets that do
 * not pair, text outside them) in *ret_err.
 */
static char *unbracket(const char *text, int *ret_err)
{
        size_t len = strlen(text), a = 0, b = len;
        int depth = 0;
        char *out;

        *ret_err = 0;
        while (a < len && mv_is_space(text[a]))
                a++;
        while (b > a && mv_is_space(text[b - 1]))
                b--;
        if (a == b || text[a] != '[')
                return NULL;
        out = strndup(text + a, b - a);
        if (!out) {
                *ret_err = -ENOMEM;
                return NULL;
        }
        /* after: a comma (or a '[' of a row) with no value after it yet: "[1,,2]", "[1,]". */
        bool after_comma = false, value = false;

        for (char *p = out; *p && depth >= 0; p++) {
                if (*p == '[') {
                        depth++;
                        value = false;
                        after_comma = false;    /* a row is the value after the comma */
                } else if (*p == ']') {
                        /* Closed before the end: text after the list. */
                        if (after_comma || (--depth == 0 && p[1]))
                                depth = -1;
                        value = true;
                } else if (*p == ',') {
                        if (!value)
                                depth = -1;
                        after_comma = true;
                        value = false;
                } else {
                        if (!mv_is_space(*p))
                                value = true, after_comma = false;
                        continue;
                }
                *p = ' ';
        }
        if (depth != 0) {
                free(out);
                *ret_err = -EINVAL;
                return NULL;
        }
        return out;
}

#define SHAPE_DEPTH 32    /* dimensions a nested list is checked to */

/*
 * A list in brackets with rows nested must nest as deep as the variable
 * has dimensions, each level's lists as long as each other and as the
 * dimension where its size is fixed; a flat list ("[1, 2, 3, 4]") is the
 * elements in row-major order. A static reason, or NULL.
 */
static const char *shape_refusal(const char *text, const struct md_variable *v)
{
        enum { NONE, ROWS, VALUES } kind[SHAPE_DEPTH + 1] = { NONE };
        uint64_t count[SHAPE_DEPTH + 1] = { 0 }, want[SHAPE_DEPTH + 1] = { 0 };
        bool known[SHAPE_DEPTH + 1] = { false };
        unsigned depth = 0, deepest = 0;

        for (const char *p = text; *p; p++) {
                if (*p == '[') {
                        if (depth) {
                                if (kind[depth] == VALUES)
                                        return "a list mixes values and rows";
                                kind[depth] = ROWS;
                                count[depth]++;
                        }
                        if (++depth > SHAPE_DEPTH)
                                return "rows nested deeper than fmud checks (32 levels; give "
                                       "the elements flat, in row-major order)";
                        count[depth] = 0;
                        if (depth > deepest)
                                deepest = depth;
                } else if (*p == ']') {
                        if (!depth)
                                return NULL;    /* unbracket() says what is wrong */
                        if (known[depth] && want[depth] != count[depth])
                                return "rows of different lengths";
                        known[depth] = true;
                        want[depth] = count[depth];
                        depth--;
                } else if (*p != ',' && !mv_is_space(*p) && depth) {
                        if (kind[depth] == ROWS)
                                return "a list mixes values and rows";
                        kind[depth] = VALUES;
                        count[depth]++;
                        while (p[1] && p[1] != ',' && p[1] != ']' && p[1] != '[' &&
                               !mv_is_space(p[1]))
                                p++;
                }
        }
        if (deepest <= 1)
                return NULL;
        if (deepest != v->n_dims)
                return "rows nested otherwise than the variable has dimensions (or give the "
                       "elements flat, in row-major order)";
        for (unsigned l = 1; l <= deepest; l++) {
                const struct md_dimension *dim = &v->dims[l - 1];

                if (dim->has_start && !dim->has_vr && want[l] != dim->start)
                        return "lists of other lengths than the variable's dimensions";
        }
        return NULL;
}

static bool blank(const char *s)
{
        while (mv_is_space(*s))
                s++;
        return !*s;
}

/* Whether s is "[]", spaces allowed around and between. */
static bool empty_list(const char *s)
{
        while (mv_is_space(*s))
                s++;
        if (*s++ != '[')
                return false;
        while (mv_is_space(*s))
                s++;
        return *s == ']' && blank(s + 1);
}

/*
 * No value for an array: none of its elements, which only an array sized
 * by a structural parameter (later) may have, 0 (FMI 3.0 section 2.4.7.2,
 * counted by sc_structural); one of a fixed size has at least one.
 */
static int no_values(bool later, struct md_values *ret, const char **ret_why)
{
        if (!later) {
                *ret_why = "no value, but the variable has elements";
                return -EINVAL;
        }
        *ret = (struct md_values){ .n = 0 };
        return 0;
}

int sc_parse_value(const struct md *md, const struct md_variable *v, const char *text,
                   struct md_values *ret, const char **ret_why)
{
        /* Sized by a structural parameter: counted against the size set (sc_structural). */
        bool later = sc_var_structural(v);
        uint64_t n = later ? UINT64_MAX : md_var_elements(md, v);
        struct md_values vals = { 0 };
        char *list = NULL;
        size_t bad = 0;
        int r;

        *ret_why = NULL;
        if (n == 0) {
                *ret_why = "its dimensions cannot be resolved";
                return -EINVAL;
        }
        if (v->type == MD_CLOCK) {
                *ret_why = "Clock variables take no start value";
                return -EINVAL;
        }
        /* "[]": no value, for an array of any type (a String's or Binary's text is one value). */
        if (v->n_dims && (v->type == MD_STRING || v->type == MD_BINARY) && empty_list(text))
                return no_values(later, ret, ret_why);
        if (v->n_dims && v->type != MD_STRING && v->type != MD_BINARY) {
                list = unbracket(text, &r);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        *ret_why = "brackets that do not pair, a comma without a value, or text "
                                   "after the brackets";
                        return r;
                }
                *ret_why = list ? shape_refusal(text, v) : NULL;
                if (*ret_why) {
                        free(list);
                        return -EINVAL;
                }
                if (list)
                        text = list;
                /* No value at all: an array of no elements, where its size says so. */
                if (blank(text)) {
                        free(list);
                        return no_values(later, ret, ret_why);
                }
        }
        if (v->type == MD_STRING)
                r = parse_string(text, &vals);
        else if (v->type == MD_BINARY)
                r = parse_binary(text, &vals);
        else if (v->type == MD_ENUMERATION)
                r = parse_enum(v, text, n, &vals);
        else
                r = mv_list(v->type, text, n > SIZE_MAX ? SIZE_MAX : (size_t)n, &vals, &bad);
        if (r == -E2BIG)
                *ret_why = "more values than the variable has elements";
        else if (r == -ERANGE)
                *ret_why = "a value outside the range of the variable's type";
        else if (r == -EINVAL)
                *ret_why = v->type == MD_ENUMERATION ? "not an item name or value of the enumeration"
                         : v->type == MD_BINARY ? "not hexadecimal bytes"
                         : "not a value of the variable's type";
        if (r == 0 && md_type_is_float(v->type) && !*ret_why)
                *ret_why = float_refusal(v->type, text, &vals);
        free(list);
        if (r < 0)
                return r;
        if (*ret_why) {
                mv_free(v->type, &vals);
                return -EINVAL;
        }
        if (vals.n != 1 && vals.n != n && !later) {
                mv_free(v->type, &vals);
                *ret_why = "fewer values than the variable has elements "
                           "(give one, or one per element)";
                return -EINVAL;
        }
        *ret = vals;
        return 0;
}
