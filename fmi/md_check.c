/*
 * md_check: the rules about one variable on its own or with the variables
 * it names: causality/variability/initial combinations, start required or
 * forbidden, min/max/start ranges, units, dimensions, clocks, previous and
 * derivative references. FMI 3.0 sections 2.4.7.2 to 2.4.7.5 and 2.2.8;
 * FMI 2.0 section 2.2.7.
 */
#include "md_ctx.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Table 18 (FMI 3.0) and its FMI 2.0 twin. */
static bool combination_allowed(const struct md_variable *v)
{
        enum md_variability x = v->variability;

        switch (v->causality) {
        case MD_CAUSALITY_STRUCTURAL_PARAMETER:
        case MD_CAUSALITY_PARAMETER:
        case MD_CAUSALITY_CALCULATED_PARAMETER:
                return x == MD_VARIABILITY_FIXED || x == MD_VARIABILITY_TUNABLE;
        case MD_CAUSALITY_INPUT:
                return x == MD_VARIABILITY_DISCRETE || x == MD_VARIABILITY_CONTINUOUS;
        case MD_CAUSALITY_OUTPUT:
                return x != MD_VARIABILITY_FIXED && x != MD_VARIABILITY_TUNABLE;
        case MD_CAUSALITY_LOCAL:
                return true;
        case MD_CAUSALITY_INDEPENDENT:
        default:
                return x == MD_VARIABILITY_CONTINUOUS;
        }
}

/* Table 22 (FMI 3.0, section 2.4.7.5) and the FMI 2.0 table in 2.2.7. */
bool md_initial_allowed(const struct md_ctx *c, const struct md_variable *v)
{
        enum md_initial i = v->initial;
        bool constant = v->variability == MD_VARIABILITY_CONSTANT;
        bool fixed_or_tunable = v->variability == MD_VARIABILITY_FIXED ||
                                v->variability == MD_VARIABILITY_TUNABLE;

        if (v->type == MD_CLOCK)
                return !v->initial_given;
        switch (v->causality) {
        case MD_CAUSALITY_STRUCTURAL_PARAMETER:
        case MD_CAUSALITY_PARAMETER:
                return i == MD_INITIAL_EXACT;
        case MD_CAUSALITY_CALCULATED_PARAMETER:
                return i == MD_INITIAL_CALCULATED || i == MD_INITIAL_APPROX;
        case MD_CAUSALITY_INPUT:
                return i == (c->md->fmi == MD_FMI3 ? MD_INITIAL_EXACT : MD_INITIAL_NONE);
        case MD_CAUSALITY_OUTPUT:
        case MD_CAUSALITY_LOCAL:
                if (constant)
                        return i == MD_INITIAL_EXACT;
                if (fixed_or_tunable)
                        return i == MD_INITIAL_CALCULATED || i == MD_INITIAL_APPROX;
                return i != MD_INITIAL_NONE;
        case MD_CAUSALITY_INDEPENDENT:
        default:
                return i == MD_INITIAL_NONE;
        }
}

/* Whether no value of initial is allowed at all (Table 22's empty cells). */
static bool no_initial(const struct md_ctx *c, const struct md_variable *v)
{
        return v->type == MD_CLOCK || v->causality == MD_CAUSALITY_INDEPENDENT ||
               (v->causality == MD_CAUSALITY_INPUT && c->md->fmi == MD_FMI2);
}

/* Returns false when the kind is wrong, so that start rules are not applied. */
static bool check_kind(struct md_ctx *c, const struct md_variable *v)
{
        const char *sec = SEC(c, "2.4.7.4", "2.2.7");

        if (v->causality == MD_CAUSALITY_INDEPENDENT && !md_type_is_float(v->type)) {
                md_err(c, v->line, v->name, sec,
                       "the independent variable must be of a floating point type");
                return false;
        }
        if (!combination_allowed(v)) {
                md_err(c, v->line, v->name, sec,
                       "causality=\"%s\" with variability=\"%s\" is not an allowed combination",
                       md_causality_name(v->causality), md_variability_name(v->variability));
                return false;
        }
        if (v->variability == MD_VARIABILITY_CONTINUOUS && !md_type_is_float(v->type)) {
                md_err(c, v->line, v->name, sec, "only %s variables may be continuous",
                       SEC(c, "Float32 and Float64", "Real"));
                return false;
        }
        if (md_initial_allowed(c, v))
                return true;
        if (no_initial(c, v))
                md_err(c, v->line, v->name, SEC(c, "2.4.7.5", "2.2.7"),
                       "initial must not be given for %s",
                       v->type == MD_CLOCK ? "a Clock" : v->causality == MD_CAUSALITY_INPUT
                       ? "causality=\"input\"" : "causality=\"independent\"");
        else
                md_err(c, v->line, v->name, SEC(c, "2.4.7.5", "2.2.7"),
                       "initial=\"%s\" is not allowed for causality=\"%s\", "
                       "variability=\"%s\"", md_initial_name(v->initial),
                       md_causality_name(v->causality), md_variability_name(v->variability));
        return false;
}

static void check_start_presence(struct md_ctx *c, const struct md_variable *v)
{
        const char *sec = SEC(c, "2.4.7.5", "2.2.7");
        const char *why = NULL;

        if (v->type == MD_CLOCK)
                return;
        if (v->causality == MD_CAUSALITY_INDEPENDENT && v->has_start) {
                md_err(c, v->line, v->name, SEC(c, "2.4.7.4", "2.2.7"),
                       "an independent variable must not have a start value");
                return;
        }
        if (v->initial == MD_INITIAL_CALCULATED && v->has_start) {
                md_err(c, v->line, v->name, sec,
                       "has a start value, but initial=\"calculated\"%s forbids one",
                       v->initial_given ? "" : " (the default here)");
                return;
        }
        if (v->has_start)
                return;
        if (v->causality == MD_CAUSALITY_INPUT)
                why = "causality=\"input\"";
        else if (v->causality == MD_CAUSALITY_PARAMETER)
                why = "causality=\"parameter\"";
        else if (v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                why = "causality=\"structuralParameter\"";
        else if (v->variability == MD_VARIABILITY_CONSTANT)
                why = "variability=\"constant\"";
        else if (v->initial == MD_INITIAL_EXACT)
                why = "initial=\"exact\"";
        else if (v->initial == MD_INITIAL_APPROX)
                why = "initial=\"approx\"";
        if (why)
                md_err(c, v->line, v->name, sec, "no start value, but %s requires one", why);
}

static const char *fmt_scalar(enum md_type t, union md_scalar x, char *buf, size_t size)
{
        if (md_type_is_float(t))
                snprintf(buf, size, "%.17g", x.f);
        else if (md_type_is_signed(t))
                snprintf(buf, size, "%" PRId64, x.i);
        else
                snprintf(buf, size, "%" PRIu64, x.u);
        return buf;
}

/* a < b in type t; false for NaN. */
static bool less(enum md_type t, union md_scalar a, union md_scalar b)
{
        if (md_type_is_float(t))
                return a.f < b.f;
        if (md_type_is_signed(t))
                return a.i < b.i;
        return a.u < b.u;
}

static union md_scalar elem(const struct md_variable *v, size_t k)
{
        union md_scalar x = { .u = 0 };

        if (md_type_is_float(v->type))
                x.f = v->start.f[k];
        else if (md_type_is_signed(v->type))
                x.i = v->start.i[k];
        else
                x.u = v->start.u[k];
        return x;
}

/*
 * min <= max (else the range is empty: an error), and every start element
 * inside them. The latter is a warning in both versions: min and max only
 * "define the region in which the FMU is designed to operate", the FMU
 * "should not rely on the min/max range" and importers "should" check
 * (FMI 3.0 sections 2.4.4 and 2.2.7.3; FMI 2.0 section 2.2.7, the comment
 * after the Real attributes): no normative text refuses a start outside.
 */
static void check_range(struct md_ctx *c, const struct md_variable *v)
{
        const struct md_type_attrs *a = &v->attrs;
        const char *sec = SEC(c, "2.4.4", "2.2.7");
        enum md_type t = v->type;
        char b1[32], b2[32];

        if (!md_type_is_float(t) && !md_type_is_signed(t) && !md_type_is_unsigned(t))
                return;
        if (a->has_min && a->has_max && less(t, a->max, a->min)) {
                md_err(c, v->line, v->name, sec, "min=%s is greater than max=%s",
                       fmt_scalar(t, a->min, b1, sizeof(b1)),
                       fmt_scalar(t, a->max, b2, sizeof(b2)));
                return;
        }
        for (size_t k = 0; v->has_start && k < v->start.n; k++) {
                union md_scalar x = elem(v, k);

                if (a->has_min && less(t, x, a->min)) {
                        md_warn(c, v->line, v->name, sec, "start value %s is below min=%s",
                                fmt_scalar(t, x, b1, sizeof(b1)),
                                fmt_scalar(t, a->min, b2, sizeof(b2)));
                        return;
                }
                if (a->has_max && less(t, a->max, x)) {
                        md_warn(c, v->line, v->name, sec, "start value %s is above max=%s",
                                fmt_scalar(t, x, b1, sizeof(b1)),
                                fmt_scalar(t, a->max, b2, sizeof(b2)));
                        return;
                }
        }
}

static bool has_item(const struct md_ctx *c, const struct md_type_def *td, int64_t x)
{
        const int64_t *vals = c->item_values ? c->item_values[td - c->md->type_defs] : NULL;
        size_t lo = 0, hi = td->n_items;

        if (!vals)
                return true;    /* not indexed (no memory): do not accuse the document */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (vals[mid] < x)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < td->n_items && vals[lo] == x;
}

static void check_enum_start(struct md_ctx *c, const struct md_variable *v)
{
        const struct md_type_def *td = v->type_def;

        if (v->type != MD_ENUMERATION || !td || !v->has_start)
                return;
        for (size_t k = 0; k < v->start.n; k++) {
                if (!has_item(c, td, v->start.i[k])) {
                        md_err(c, v->line, v->name, SEC(c, "2.4.4", "2.2.3"),
                               "start value %" PRId64 " is not an Item of type \"%s\"",
                               v->start.i[k], td->name);
                        return;
                }
        }
}

static void check_clock(struct md_ctx *c, const struct md_variable *v)
{
        const struct md_clock_attrs *k = &v->attrs.clock;
        enum md_interval_variability iv = k->interval_variability;

        if (v->causality != MD_CAUSALITY_INPUT && v->causality != MD_CAUSALITY_OUTPUT &&
            v->causality != MD_CAUSALITY_LOCAL)
                md_err(c, v->line, v->name, "2.4.7.4",
                       "a Clock must have causality input, output or local");
        if (v->variability != MD_VARIABILITY_DISCRETE)
                md_err(c, v->line, v->name, "2.4.7.4", "a Clock must have variability discrete");
        if (v->has_previous)
                md_err(c, v->line, v->name, "2.4.7.4", "a Clock must not have previous");
        if (iv == MD_INTERVAL_NONE) {
                md_err(c, v->line, v->name, "2.4.4",
                       "Clock without intervalVariability (on the variable or its ClockType)");
                return;
        }
        if (v->causality == MD_CAUSALITY_OUTPUT && iv != MD_INTERVAL_TRIGGERED)
                md_err(c, v->line, v->name, "2.2.8.2",
                       "an output Clock must have intervalVariability=\"triggered\"");
        if (iv == MD_INTERVAL_CONSTANT && !k->has_interval_decimal)
                md_err(c, v->line, v->name, "2.4.4",
                       "a constant periodic Clock needs intervalDecimal");
        if (iv >= MD_INTERVAL_CHANGING &&
            (k->has_interval_decimal || k->has_shift_decimal || k->has_interval_counter ||
             k->has_shift_counter || k->has_resolution))
                md_err(c, v->line, v->name, "2.4.4",
                       "interval and shift attributes are only for periodic Clocks");
        if (k->has_interval_decimal && !(k->interval_decimal > 0))
                md_err(c, v->line, v->name, "2.4.4", "intervalDecimal must be greater than 0");
        if (k->has_shift_decimal && !(k->shift_decimal >= 0))
                md_err(c, v->line, v->name, "2.4.4", "shiftDecimal must be 0 or greater");
        if (k->has_resolution && k->resolution == 0)
                md_err(c, v->line, v->name, "2.4.4", "resolution must be greater than 0");
        if (k->has_interval_counter && k->interval_counter == 0)
                md_err(c, v->line, v->name, "2.4.4", "intervalCounter must be greater than 0");
        if (k->has_shift_counter && !k->has_interval_counter)
                md_err(c, v->line, v->name, "2.4.4", "shiftCounter requires intervalCounter");
        /* The counters are for an FMU that supports fractions; the decimals serve otherwise. */
        if ((k->has_interval_counter || k->has_shift_counter) && !k->supports_fraction)
                md_warn(c, v->line, v->name, "2.4.4", "intervalCounter and shiftCounter are "
                        "only for supportsFraction=\"true\": ignored, intervalDecimal and "
                        "shiftDecimal are used");
        if (v->causality == MD_CAUSALITY_OUTPUT && k->has_priority)
                md_warn(c, v->line, v->name, "2.4.4", "an output Clock must not have priority: "
                        "ignored");
}

/* Product of the dimensions; false when one cannot be resolved. */
static bool dims_product(struct md_ctx *c, const struct md_variable *v, uint64_t *ret)
{
        const char *sec = "2.4.7.2";
        uint64_t prod = 1;
        bool ok = true;

        for (size_t i = 0; i < v->n_dims; i++) {
                const struct md_dimension *d = &v->dims[i];
                const struct md_variable *r;
                uint64_t size = 0;

                if (d->has_start) {
                        size = d->start;
                } else if (d->has_vr) {
                        r = md_find_vr(c->md, d->vr);
                        if (!r)
                                md_err(c, v->line, v->name, sec,
                                       "Dimension valueReference=%u is not the value reference "
                                       "of any variable", d->vr);
                        else if (r->type != MD_UINT64 || r->n_dims ||
                                 (r->causality != MD_CAUSALITY_STRUCTURAL_PARAMETER &&
                                  r->variability != MD_VARIABILITY_CONSTANT))
                                md_err(c, v->line, v->name, sec,
                                       "Dimension valueReference=%u refers to '%s', which is not "
                                       "a scalar UInt64 structural parameter or constant",
                                       d->vr, r->name);
                        else if (r->has_start && r->start.n >= 1 && r->start.u[0] == 0)
                                md_err(c, v->line, v->name, sec,
                                       "Dimension valueReference=%u refers to '%s', whose start "
                                       "is 0; initial dimension sizes must be positive",
                                       d->vr, r->name);
                        else if (r->has_start && r->start.n >= 1)
                                size = r->start.u[0];
                }
                if (size == 0)
                        ok = false;
                else if (prod > UINT64_MAX / size)
                        prod = UINT64_MAX;
                else
                        prod *= size;
        }
        *ret = prod;
        return ok;
}

static void check_dims(struct md_ctx *c, const struct md_variable *v)
{
        const char *sec = "2.4.7.5";
        uint64_t prod;
        bool ok;

        if (v->n_dims == 0) {
                if (v->has_start && v->start.n > 1)
                        md_err(c, v->line, v->name, sec,
                               "a scalar variable has %zu start values", v->start.n);
                return;
        }
        if (v->type == MD_CLOCK)
                md_err(c, v->line, v->name, "2.4.7.2", "a Clock cannot be an array");
        if (v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                md_err(c, v->line, v->name, "2.4.7.4",
                       "a structural parameter must not have a Dimension");
        ok = dims_product(c, v, &prod);
        if (prod > c->lim.max_array_elements) {
                md_err(c, v->line, v->name, NULL,
                       "array of more than %zu elements; variable refused",
                       c->lim.max_array_elements);
                return;
        }
        if (ok && v->has_start && v->start.n != 1 && v->start.n != prod)
                md_err(c, v->line, v->name, sec,
                       "start has %zu values, but the dimensions give %" PRIu64 " elements",
                       v->start.n, prod);
}

static void check_refs(struct md_ctx *c, const struct md_variable *v)
{
        const char *sec = "2.4.7.4";
        const struct md_variable *r;

        if (v->has_derivative && c->md->fmi == MD_FMI3) {
                r = md_find_vr(c->md, v->derivative);
                if (!r || !md_type_is_float(r->type))
                        md_err(c, v->line, v->name, "2.4.7.5",
                               "derivative=%u does not refer to a floating point variable",
                               v->derivative);
        }
        for (size_t i = 0; i < v->n_clocks; i++) {
                r = md_find_vr(c->md, v->clocks[i]);
                if (!r || r->type != MD_CLOCK) {
                        md_err(c, v->line, v->name, sec, "clocks lists %u, which is not a Clock",
                               v->clocks[i]);
                        break;
                }
        }
        if (v->n_clocks && v->variability != MD_VARIABILITY_DISCRETE &&
            v->variability != MD_VARIABILITY_TUNABLE)
                md_err(c, v->line, v->name, sec,
                       "only discrete or tunable variables may have clocks");
        if (!v->has_previous || v->type == MD_CLOCK)
                return;
        r = md_find_vr(c->md, v->previous);
        if (!r)
                md_err(c, v->line, v->name, sec, "previous=%u is not the value reference of any "
                       "variable", v->previous);
        else if (r == v)
                md_err(c, v->line, v->name, sec, "previous refers to the variable itself");
        else if (r->type != v->type || r->variability != MD_VARIABILITY_DISCRETE ||
                 r->causality == MD_CAUSALITY_INPUT)
                md_err(c, v->line, v->name, sec,
                       "previous=%u refers to '%s', which is not a discrete non-input %s",
                       v->previous, r->name, md_type_name(v->type));
        if (!v->n_clocks || v->variability != MD_VARIABILITY_DISCRETE)
                md_err(c, v->line, v->name, sec,
                       "only discrete clocked variables may have previous");
}

void md_check_var(struct md_ctx *c, struct md_variable *v)
{
        uint8_t flags = c->var_flags[v - c->md->vars];

        if (md_type_is_float(v->type))
                md_check_unit_ref(c, v->line, v->name, SEC(c, "2.4.7.5", "2.2.7"), &v->attrs,
                                  v->type_def ? &v->type_def->attrs : NULL, &v->unit_def);
        if (!(flags & MD_VF_BAD_KIND) && check_kind(c, v) && !(flags & MD_VF_BAD_START))
                check_start_presence(c, v);
        check_range(c, v);
        check_enum_start(c, v);
        if (v->type == MD_CLOCK)
                check_clock(c, v);
        if (c->md->fmi == MD_FMI3) {
                check_dims(c, v);
                check_refs(c, v);
        }
}
