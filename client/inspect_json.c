/*
 * inspect_json: `fmuctl inspect --json`, a stable object for programs.
 * The format is documented in docs/inspect-json.md; add keys, never rename.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/fmu_se.h"
#include "fmt.h"
#include "inspect.h"

/* json-c returns NULL only when out of memory; one check at the end suffices
 * if every adder tolerates NULL, which put() does. */
static void put(struct json_object *o, const char *key, struct json_object *v)
{
        if (o && v)
                json_object_object_add(o, key, v);
        else
                json_object_put(v);
}

static struct json_object *str_or_null(const char *s)
{
        return s ? json_object_new_string(s) : NULL;
}

/* A double keeps its shortest round-trip text; non-finite values become strings. */
static struct json_object *num(double d, bool is_float32)
{
        char buf[FMT_NUM_MAX];
        const char *txt = is_float32 ? fmt_float(buf, (float)d) : fmt_double(buf, d);

        if (!isfinite(d))
                return json_object_new_string(txt);
        return json_object_new_double_s(d, txt);
}

static struct json_object *scalar(enum md_type t, const union md_scalar *s)
{
        if (md_type_is_float(t))
                return num(s->f, t == MD_FLOAT32);
        if (md_type_is_signed(t))
                return json_object_new_int64(s->i);
        if (md_type_is_unsigned(t))
                return json_object_new_uint64(s->u);
        if (t == MD_BOOLEAN)
                return json_object_new_boolean(s->b);
        return NULL;
}

static struct json_object *element(enum md_type t, const struct md_values *v, size_t i)
{
        union md_scalar s;

        switch (t) {
        case MD_STRING:
                return json_object_new_string(v->s[i] ? v->s[i] : "");
        case MD_BINARY: {
                size_t len = v->bin[i].len;
                char *hex = malloc(2 * len + 1);
                struct json_object *o;

                if (!hex)
                        return NULL;
                fmt_value(hex, 2 * len + 1, t, v, i);
                o = json_object_new_string(hex);
                free(hex);
                return o;
        }
        case MD_BOOLEAN: case MD_CLOCK:
                return json_object_new_boolean(v->b[i]);
        default:
                if (md_type_is_float(t))
                        s.f = v->f[i];
                else if (md_type_is_signed(t))
                        s.i = v->i[i];
                else
                        s.u = v->u[i];
                return scalar(t, &s);
        }
}

static struct json_object *start_value(const struct md_variable *v)
{
        struct json_object *a;

        if (!v->has_start || !v->start.n)
                return NULL;
        if (!v->n_dims)
                return element(v->type, &v->start, 0);
        a = json_object_new_array_ext((int)(v->start.n < 1024 ? v->start.n : 1024));
        for (size_t i = 0; a && i < v->start.n; i++)
                json_object_array_add(a, element(v->type, &v->start, i));
        return a;
}

static struct json_object *dimensions(const struct md *md, const struct md_variable *v)
{
        struct json_object *a = json_object_new_array();

        for (size_t d = 0; a && d < v->n_dims; d++) {
                const struct md_dimension *dim = &v->dims[d];
                struct json_object *o = json_object_new_object();

                if (dim->has_start)
                        put(o, "start", json_object_new_uint64(dim->start));
                if (dim->has_vr) {
                        const struct md_variable *sp = md_find_vr(md, dim->vr);

                        put(o, "valueReference", json_object_new_uint64(dim->vr));
                        if (sp)
                                put(o, "variable", json_object_new_string(sp->name));
                }
                json_object_array_add(a, o);
        }
        return a;
}

static struct json_object *vr_list(const uint32_t *vrs, size_t n)
{
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_object_new_uint64(vrs[i]));
        return a;
}

/* A Clock's kind and timing (FMI 3.0 section 2.2.8.2), as the description gives them. */
static void clock_attrs(struct json_object *o, const struct md_clock_attrs *a)
{
        static const char *const kinds[] = {
                "none", "constant", "fixed", "tunable", "changing", "countdown", "triggered",
        };
        unsigned iv = a->interval_variability;

        put(o, "intervalVariability",
            json_object_new_string(iv < sizeof(kinds) / sizeof(kinds[0]) ? kinds[iv] : "?"));
        if (a->has_interval_decimal)
                put(o, "intervalDecimal", json_object_new_double(a->interval_decimal));
        if (a->has_shift_decimal)
                put(o, "shiftDecimal", json_object_new_double(a->shift_decimal));
        if (a->can_be_deactivated)
                put(o, "canBeDeactivated", json_object_new_boolean(true));
}

/* The names of the <Alias> elements of vars[var], when it has any. */
static void aliases(struct json_object *o, const struct md *md, size_t var)
{
        struct json_object *a = NULL;

        for (size_t i = 0; i < md->n_aliases; i++) {
                if (md->aliases[i].var != var)
                        continue;
                if (!a)
                        a = json_object_new_array();
                json_object_array_add(a, json_object_new_string(md->aliases[i].name));
        }
        if (a)
                put(o, "aliases", a);
}

static struct json_object *variable(const struct md *md, const struct md_variable *v)
{
        struct json_object *o = json_object_new_object();
        const struct md_type_attrs *a = &v->attrs;

        put(o, "name", json_object_new_string(v->name));
        put(o, "valueReference", json_object_new_uint64(v->vr));
        put(o, "type", json_object_new_string(md_type_name(v->type)));
        put(o, "causality", json_object_new_string(md_causality_name(v->causality)));
        put(o, "variability", json_object_new_string(md_variability_name(v->variability)));
        put(o, "initial", v->initial == MD_INITIAL_NONE ? NULL :
            json_object_new_string(md_initial_name(v->initial)));
        put(o, "start", start_value(v));
        put(o, "unit", str_or_null(a->unit));
        put(o, "displayUnit", str_or_null(a->display_unit));
        put(o, "declaredType", str_or_null(v->declared_type));
        put(o, "description", str_or_null(v->description));
        put(o, "dimensions", dimensions(md, v));
        if (a->has_min)
                put(o, "min", scalar(v->type, &a->min));
        if (a->has_max)
                put(o, "max", scalar(v->type, &a->max));
        if (a->has_nominal)
                put(o, "nominal", scalar(v->type, &a->nominal));
        if (v->intermediate_update)
                put(o, "intermediateUpdate", json_object_new_boolean(true));
        if (v->has_previous)
                put(o, "previous", json_object_new_uint64(v->previous));
        if (v->n_clocks)
                put(o, "clocks", vr_list(v->clocks, v->n_clocks));
        if (v->type == MD_CLOCK)
                clock_attrs(o, &v->attrs.clock);
        if (v->has_derivative)
                put(o, "derivative", json_object_new_uint64(v->derivative));
        aliases(o, md, (size_t)(v - md->vars));
        return o;
}

static struct json_object *cosim(const struct md *md)
{
        struct inspect_flag flags[INSPECT_MAX_FLAGS];
        size_t n = inspect_cosim_flags(md, flags);
        struct json_object *o = json_object_new_object();

        put(o, "modelIdentifier", str_or_null(md->cs.model_identifier));
        for (size_t i = 0; i < n; i++)
                put(o, flags[i].name, json_object_new_boolean(flags[i].value));
        put(o, "maxOutputDerivativeOrder", json_object_new_uint64(md->cs.max_output_derivative_order));
        if (md->cs.has_fixed_internal_step_size)
                put(o, "fixedInternalStepSize", num(md->cs.fixed_internal_step_size, false));
        if (md->cs.recommended_intermediate_input_smoothness_given)
                put(o, "recommendedIntermediateInputSmoothness",
                    json_object_new_int(md->cs.recommended_intermediate_input_smoothness));
        return o;
}

/* The model partitions (input Clocks) in activation order (fmi/fmu_se.h). */
static struct json_object *partitions(const struct md *md)
{
        size_t part[64], n = fmu_se_partitions(md, part, 64);
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n && i < 64; i++) {
                const struct md_clock_attrs *k = &md->vars[part[i]].attrs.clock;
                struct json_object *o = json_object_new_object();

                put(o, "clock", json_object_new_string(md->vars[part[i]].name));
                put(o, "priority", k->has_priority ? json_object_new_int64(k->priority) : NULL);
                put(o, "intervalDecimal", k->has_interval_decimal ?
                    json_object_new_double(k->interval_decimal) : NULL);
                if (o && json_object_array_add(a, o) < 0)
                        json_object_put(o);
        }
        return a;
}

static struct json_object *experiment(const struct md *md)
{
        const struct md_default_experiment *e = &md->default_experiment;
        struct json_object *o;

        if (!md->has_default_experiment)
                return NULL;
        o = json_object_new_object();
        if (e->has_start)
                put(o, "startTime", num(e->start, false));
        if (e->has_stop)
                put(o, "stopTime", num(e->stop, false));
        if (e->has_tolerance)
                put(o, "tolerance", num(e->tolerance, false));
        if (e->has_step)
                put(o, "stepSize", num(e->step, false));
        return o;
}

/* Every diagnostic of severity 'only' (all of them when only < 0). */
static struct json_object *problems(const struct diag_list *diags, int only)
{
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < diags->n; i++) {
                const struct diag *d = &diags->v[i];
                struct json_object *o;

                if (only >= 0 && d->severity != (enum diag_severity)only)
                        continue;
                o = json_object_new_object();

                put(o, "severity", json_object_new_string(d->severity == DIAG_ERROR ? "error" : "warning"));
                put(o, "file", str_or_null(d->file));
                if (d->line > 0)
                        put(o, "line", json_object_new_int(d->line));
                put(o, "subject", str_or_null(d->subject));
                put(o, "message", json_object_new_string(d->message));
                json_object_array_add(a, o);
        }
        return a;
}

int inspect_put_problems(struct json_object *root, const struct diag_list *diags)
{
        struct json_object *all = problems(diags, -1), *e = problems(diags, DIAG_ERROR);
        struct json_object *w = problems(diags, DIAG_WARNING);

        put(root, "problems", all);
        put(root, "errors", e);
        put(root, "warnings", w);
        /* Counted beyond the ones the lists keep (fmi/diag.h). */
        put(root, "unlistedErrors", json_object_new_int64((int64_t)diags->dropped));
        put(root, "unlistedWarnings", json_object_new_int64((int64_t)diags->dropped_warnings));
        return all && e && w ? 0 : -ENOMEM;
}

static void model(struct json_object *root, const struct fmu *fmu)
{
        const struct md *md = fmu->md;
        struct json_object *vars, *ifaces = json_object_new_object();

        put(root, "fmiVersion", str_or_null(md->fmi_version));
        put(root, "modelName", str_or_null(md->model_name));
        put(root, "instantiationToken", str_or_null(md->instantiation_token));
        put(root, "description", str_or_null(md->description));
        put(root, "generationTool", str_or_null(md->generation_tool));
        put(root, "generationDateAndTime", str_or_null(md->generation_date_and_time));
        put(ifaces, "coSimulation", json_object_new_boolean(md->cs_declared));
        put(ifaces, "modelExchange", json_object_new_boolean(md->has_model_exchange));
        put(ifaces, "scheduledExecution", json_object_new_boolean(md->has_scheduled_execution));
        put(root, "interfaceTypes", ifaces);
        put(root, "hostedAs", md->cs.present ? json_object_new_string(md->hosted_me ? "modelExchange"
                                                                      : md->hosted_se
                                                                      ? "scheduledExecution"
                                                                      : "coSimulation")
                                             : NULL);
        if (md->has_scheduled_execution)
                put(root, "partitions", partitions(md));
        put(root, "binary", str_or_null(fmu->binary_entry));
        put(root, "hasBinary", json_object_new_boolean(fmu->has_binary));
        put(root, "cannotRun", str_or_null(fmu->cannot_run));
        if (md->cs.present && !md->hosted_me && !md->hosted_se)
                put(root, "coSimulation", cosim(md));
        put(root, "defaultExperiment", experiment(md));
        vars = json_object_new_array_ext((int)(md->n_vars < 4096 ? md->n_vars : 4096));
        for (size_t i = 0; vars && i < md->n_vars; i++)
                json_object_array_add(vars, variable(md, &md->vars[i]));
        put(root, "variables", vars);
}

int inspect_print_json(FILE *out, const char *path, const struct fmu *fmu,
                       const struct diag_list *diags, bool strict)
{
        struct json_object *root = json_object_new_object();
        bool valid = diag_errors(diags) == 0;
        const char *txt;

        if (!root)
                return -ENOMEM;
        put(root, "file", json_object_new_string(path));
        put(root, "valid", json_object_new_boolean(valid));
        put(root, "runnable", json_object_new_boolean(valid && fmu && fmu->md && !fmu->cannot_run));
        if (strict)
                put(root, "strict", json_object_new_boolean(true));
        if (fmu)
                put(root, "sha256", json_object_new_string(fmu->sha256));
        if (fmu && fmu->md)
                model(root, fmu);
        put(root, "kind", json_object_new_string("fmu"));
        if (inspect_put_problems(root, diags) < 0) {
                json_object_put(root);
                return -ENOMEM;
        }
        txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                             JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!txt) {
                json_object_put(root);
                return -ENOMEM;
        }
        fprintf(out, "%s\n", txt);
        json_object_put(root);
        return 0;
}
