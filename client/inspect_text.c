/* inspect_text: `fmuctl inspect` as tables for a person at a terminal. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/fmu_se.h"
#include "fmt.h"
#include "inspect.h"

#define START_SHOWN 4           /* array elements shown before "..." */
#define CELL_MAX 40             /* longest start value shown */

static const char *or_dash(const char *s)
{
        return s && *s ? s : "-";
}

/* Errors first, then warnings, each under its own heading. */
static void print_groups(FILE *err, const struct diag_list *diags)
{
        static const struct {
                enum diag_severity sev;
                const char *label, *heading;
        } groups[] = {
                { DIAG_ERROR, "error", "Errors" },
                { DIAG_WARNING, "warning", "Warnings" },
        };
        char line[2048];

        for (size_t g = 0; g < sizeof(groups) / sizeof(*groups); g++) {
                size_t n = groups[g].sev == DIAG_ERROR ? diag_errors(diags) : diag_warnings(diags);

                if (!n)
                        continue;
                fprintf(err, "%s (%zu)\n", groups[g].heading, n);
                for (size_t i = 0; i < diags->n; i++) {
                        if (diags->v[i].severity != groups[g].sev)
                                continue;
                        diag_format(&diags->v[i], line, sizeof(line));
                        fprintf(err, "  %s: %s\n", groups[g].label, line);
                }
                if (groups[g].sev == DIAG_ERROR && diags->dropped)
                        fprintf(err, "  error: %zu more not shown\n", diags->dropped);
                if (groups[g].sev == DIAG_WARNING && diags->dropped_warnings)
                        fprintf(err, "  warning: %zu more not shown\n", diags->dropped_warnings);
        }
}

/* The model partitions (input Clocks) in activation order (fmi/fmu_se.h). */
static void print_partitions(FILE *out, const struct md *md)
{
        size_t part[64], n = fmu_se_partitions(md, part, 64);
        char num[FMT_NUM_MAX];

        fprintf(out, "%-22s %s", "partitions", n ? "" : "-");
        for (size_t i = 0; i < n && i < 64; i++) {
                const struct md_clock_attrs *k = &md->vars[part[i]].attrs.clock;

                fprintf(out, "%s", i ? ", " : "");
                fprintf(out, "%s", md->vars[part[i]].name);
                if (k->has_priority)
                        fprintf(out, " (priority %" PRIu32, k->priority);
                else
                        fprintf(out, " (no priority");
                if (k->has_interval_decimal)
                        fprintf(out, ", every %s s", fmt_double(num, k->interval_decimal));
                fprintf(out, ")");
        }
        fprintf(out, "%s\n", n > 64 ? ", ..." : "");
}

static void print_header(FILE *out, const struct fmu *fmu, bool valid)
{
        const struct md *md = fmu->md;
        const char *sep = "";

        fprintf(out, "%-22s %s\n", "FMI version", or_dash(md->fmi_version));
        fprintf(out, "%-22s %s\n", "model name", or_dash(md->model_name));
        fprintf(out, "%-22s %s\n", "instantiation token", or_dash(md->instantiation_token));
        fprintf(out, "%-22s %s\n", "generation tool", or_dash(md->generation_tool));
        if (md->description)
                fprintf(out, "%-22s %s\n", "description", md->description);
        fprintf(out, "%-22s ", "interface types");
        if (md->cs_declared) {
                fprintf(out, "CoSimulation (%s)", or_dash(md->hosted_me ? NULL : md->cs.model_identifier));
                sep = ", ";
        }
        if (md->has_model_exchange) {
                fprintf(out, "%sModelExchange (%s)", sep, or_dash(md->me_model_identifier));
                sep = ", ";
        }
        if (md->has_scheduled_execution)
                fprintf(out, "%sScheduledExecution (%s)", sep, or_dash(md->se_model_identifier));
        fprintf(out, "\n%-22s %s\n", "binary", fmu->binary_entry ?
                (fmu->has_binary ? fmu->binary_entry : "missing for this platform") : "-");
        if (fmu->cannot_run)
                fprintf(out, "%-22s no: %s\n", "fmud runs it", fmu->cannot_run);
        else if (!valid)
                fprintf(out, "%-22s no: the FMU is refused (see the errors)\n", "fmud runs it");
        else if (md->hosted_me)
                fprintf(out, "%-22s yes, as Model Exchange, integrated with CVODE in its worker\n",
                        "fmud runs it");
        else if (md->hosted_se)
                fprintf(out, "%-22s yes, as Scheduled Execution, its partitions activated by its "
                        "worker\n", "fmud runs it");
        else
                fprintf(out, "%-22s yes, as Co-Simulation\n", "fmud runs it");
        fprintf(out, "%-22s %s\n", "sha256", fmu->sha256);
        if (md->has_scheduled_execution)
                print_partitions(out, md);
}

static void print_cosim(FILE *out, const struct md *md)
{
        struct inspect_flag flags[INSPECT_MAX_FLAGS];
        size_t n = inspect_cosim_flags(md, flags);
        char num[FMT_NUM_MAX];

        fprintf(out, "\nCo-Simulation capabilities\n");
        for (size_t i = 0; i < n; i++)
                fprintf(out, "  %-40s %s\n", flags[i].name, flags[i].value ? "true" : "false");
        fprintf(out, "  %-40s %" PRIu32 "\n", "maxOutputDerivativeOrder", md->cs.max_output_derivative_order);
        if (md->cs.has_fixed_internal_step_size)
                fprintf(out, "  %-40s %s\n", "fixedInternalStepSize",
                        fmt_double(num, md->cs.fixed_internal_step_size));
        if (md->cs.recommended_intermediate_input_smoothness_given)
                fprintf(out, "  %-40s %" PRId32 "\n", "recommendedIntermediateInputSmoothness",
                        md->cs.recommended_intermediate_input_smoothness);
}

static void print_experiment(FILE *out, const struct md *md)
{
        const struct md_default_experiment *e = &md->default_experiment;
        char num[FMT_NUM_MAX];

        fprintf(out, "\nDefault experiment\n");
        if (!md->has_default_experiment) {
                fprintf(out, "  none\n");
                return;
        }
        fprintf(out, "  %-12s %s\n", "startTime", e->has_start ? fmt_double(num, e->start) : "-");
        fprintf(out, "  %-12s %s\n", "stopTime", e->has_stop ? fmt_double(num, e->stop) : "-");
        fprintf(out, "  %-12s %s\n", "tolerance", e->has_tolerance ? fmt_double(num, e->tolerance) : "-");
        fprintf(out, "  %-12s %s\n", "stepSize", e->has_step ? fmt_double(num, e->step) : "-");
}

/* "[1, 2, 3, 4, ...]" for arrays, the value for scalars, "-" without start. */
static void format_start(char *cell, size_t size, const struct md_variable *v)
{
        char val[CELL_MAX + 1];
        size_t o = 0;

        cell[0] = '\0';
        if (!v->has_start || !v->start.n) {
                snprintf(cell, size, "-");
                return;
        }
        if (!v->n_dims) {
                snprintf(cell, size, "%s", fmt_value(val, sizeof(val), v->type, &v->start, 0));
                return;
        }
        o += (size_t)snprintf(cell + o, size - o, "[");
        for (size_t i = 0; i < v->start.n && i < START_SHOWN && o < size; i++)
                o += (size_t)snprintf(cell + o, size - o, "%s%s", i ? ", " : "",
                                      fmt_value(val, sizeof(val), v->type, &v->start, i));
        if (o < size)
                snprintf(cell + o, size - o, "%s]", v->start.n > START_SHOWN ? ", ..." : "");
}

static void format_dims(char *cell, size_t size, const struct md *md, const struct md_variable *v)
{
        size_t o = 0;

        snprintf(cell, size, "-");
        for (size_t d = 0; d < v->n_dims && o < size; d++) {
                const struct md_dimension *dim = &v->dims[d];
                const struct md_variable *sp = dim->has_vr ? md_find_vr(md, dim->vr) : NULL;

                if (dim->has_start)
                        o += (size_t)snprintf(cell + o, size - o, "%s%" PRIu64, d ? "x" : "", dim->start);
                else
                        o += (size_t)snprintf(cell + o, size - o, "%s%s", d ? "x" : "",
                                              sp ? sp->name : "?");
        }
}

static void print_variables(FILE *out, const struct md *md)
{
        char start[128], dims[64];

        fprintf(out, "\nVariables (%zu)\n", md->n_vars);
        fprintf(out, "  %10s  %-24s %-11s %-20s %-11s %-10s %-8s %-20s %s\n", "vr", "name", "type",
                "causality", "variability", "initial", "dims", "start", "unit");
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];

                format_start(start, sizeof(start), v);
                if (strlen(start) > CELL_MAX)
                        memcpy(start + CELL_MAX - 3, "...", 4);
                format_dims(dims, sizeof(dims), md, v);
                fprintf(out, "  %10" PRIu32 "  %-24s %-11s %-20s %-11s %-10s %-8s %-20s %s\n",
                        v->vr, v->name, md_type_name(v->type), md_causality_name(v->causality),
                        md_variability_name(v->variability), or_dash(md_initial_name(v->initial)), dims,
                        start, or_dash(v->attrs.unit));
        }
        if (!md->n_aliases)
                return;
        /* FMI 3.0 section 2.4.7.3: other names of a variable, accepted wherever it is named. */
        fprintf(out, "\nAliases (%zu)\n", md->n_aliases);
        for (size_t i = 0; i < md->n_aliases; i++)
                fprintf(out, "  %-24s %s\n", md->aliases[i].name, md->vars[md->aliases[i].var].name);
}

/* intervalVariability (FMI 3.0 section 2.2.8.2), by enum md_interval_variability. */
static const char *const interval_kinds[] = {
        "-", "constant", "fixed", "tunable", "changing", "countdown", "triggered",
};

/* Where a Clock's timing comes from: the description, or the FMU at initialization. */
static void format_timing(char *cell, size_t size, const struct md_clock_attrs *a)
{
        if (a->interval_variability == MD_INTERVAL_TRIGGERED ||
            a->interval_variability == MD_INTERVAL_NONE)
                snprintf(cell, size, "-");
        else if (a->has_interval_decimal)
                snprintf(cell, size, "%.15g shift %.15g", a->interval_decimal,
                         a->has_shift_decimal ? a->shift_decimal : 0.0);
        else
                snprintf(cell, size, "from the FMU");
}

/* Every Clock: its kind, its timing and the variables it clocks. */
static void print_clocks(FILE *out, const struct md *md)
{
        size_t n = 0;
        char timing[96];

        for (size_t i = 0; i < md->n_vars; i++)
                n += md->vars[i].type == MD_CLOCK;
        if (n == 0)
                return;
        fprintf(out, "\nClocks (%zu)\n", n);
        fprintf(out, "  %-24s %-10s %-10s %-28s %s\n", "name", "causality", "kind", "interval",
                "clocks");
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];
                unsigned iv = v->attrs.clock.interval_variability;
                const char *sep = "";

                if (v->type != MD_CLOCK)
                        continue;
                format_timing(timing, sizeof(timing), &v->attrs.clock);
                fprintf(out, "  %-24s %-10s %-10s %-28s", v->name, md_causality_name(v->causality),
                        iv < sizeof(interval_kinds) / sizeof(interval_kinds[0]) ?
                        interval_kinds[iv] : "?", timing);
                for (size_t j = 0; j < md->n_vars; j++)
                        for (size_t k = 0; k < md->vars[j].n_clocks; k++)
                                if (md->vars[j].clocks[k] == v->vr) {
                                        fprintf(out, "%s%s", *sep ? sep : " ", md->vars[j].name);
                                        sep = ", ";
                                }
                fprintf(out, "%s\n", *sep ? "" : " -");
        }
}

void inspect_print_text(FILE *out, FILE *err, const char *path, const struct fmu *fmu,
                        const struct diag_list *diags)
{
        fprintf(out, "%s\n", path);
        if (fmu && fmu->md) {
                print_header(out, fmu, diag_errors(diags) == 0);
                if (fmu->md->cs.present && !fmu->md->hosted_me && !fmu->md->hosted_se)
                        print_cosim(out, fmu->md);
                print_experiment(out, fmu->md);
                print_variables(out, fmu->md);
                print_clocks(out, fmu->md);
        }
        fflush(out);
        inspect_print_problems(err, path, diags, "the FMU is refused");
}

void inspect_print_problems(FILE *err, const char *path, const struct diag_list *diags,
                            const char *refused)
{
        size_t errors = diag_errors(diags), warnings = diag_warnings(diags);

        print_groups(err, diags);
        if (errors)
                fprintf(err, "%s: %zu error%s%s: %s\n", path, errors, errors == 1 ? "" : "s",
                        warnings ? " (and warnings)" : "", refused);
        else if (warnings)
                fprintf(err, "%s: valid, with %zu warning%s (--strict refuses it)\n", path,
                        warnings, warnings == 1 ? "" : "s");
}
