/*
 * model_description: md_parse() on the fixtures in md/valid (every value
 * checked) and md/invalid (one file per rule, each with the message and line
 * it must produce), the limits, the locale, threads, the project's test FMUs
 * and the fuzzer's regression inputs.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <glob.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmi/md_values.h"
#include "fmi/model_description.h"
#include "support/run.h"
#include "support/tmpdir.h"

static struct diag_list diags;
static struct md *md;

static void setup(void)
{
        diag_list_init(&diags, 0);
        md = NULL;
}

static void teardown(void)
{
        md_free(md);
        diag_list_fini(&diags);
}

static char *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf = NULL;
        long n;

        cr_assert(ne(ptr, f, NULL), "cannot open %s", path);
        cr_assert(eq(int, fseek(f, 0, SEEK_END), 0));
        n = ftell(f);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert(ne(ptr, buf, NULL));
        cr_assert(eq(sz, fread(buf, 1, (size_t)n, f), (size_t)n));
        buf[n] = '\0';
        fclose(f);
        *ret_len = (size_t)n;
        return buf;
}

/* Parse a fixture under tests/ into the globals; returns md_parse()'s result. */
static int parse_file(const char *rel, const struct md_limits *lim)
{
        char path[1024];
        size_t len;
        char *buf;
        int r;

        snprintf(path, sizeof(path), "%s/%s", FMUD_TEST_SRC_DIR, rel);
        buf = slurp(path, &len);
        r = md_parse(buf, len, rel, lim, &diags, &md);
        free(buf);
        return r;
}

static int parse_text(const char *text, const struct md_limits *lim)
{
        return md_parse(text, strlen(text), "test.xml", lim, &diags, &md);
}

static void dump(void)
{
        char line[1024];

        for (size_t i = 0; i < diags.n; i++) {
                diag_format(&diags.v[i], line, sizeof(line));
                cr_log_info("%s", line);
        }
}

/* Some diagnostic (error or not) contains 'text'. */
static bool has_diag(const char *text)
{
        for (size_t i = 0; i < diags.n; i++)
                if (strstr(diags.v[i].message, text))
                        return true;
        return false;
}

static const struct md_variable *var(const char *name)
{
        const struct md_variable *v = md_find_name(md, name);

        cr_assert(ne(ptr, (void *)v, NULL), "no variable '%s'", name);
        return v;
}

/* ---- numbers ---------------------------------------------------------- */

Test(md_values, integers_are_exact_in_their_type_range)
{
        union md_scalar x;

        cr_assert(eq(int, mv_scalar(MD_INT8, "-128", &x), 0));
        cr_assert(eq(i64, x.i, -128));
        cr_assert(eq(int, mv_scalar(MD_INT8, "200", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_UINT8, "-1", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_UINT8, "-0", &x), 0));
        cr_assert(eq(int, mv_scalar(MD_INT64, "-9223372036854775808", &x), 0));
        cr_assert(eq(i64, x.i, INT64_MIN));
        cr_assert(eq(int, mv_scalar(MD_INT64, "9223372036854775808", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_INT64, "9007199254740993", &x), 0));
        cr_assert(eq(i64, x.i, INT64_C(9007199254740993)));
        cr_assert(eq(int, mv_scalar(MD_UINT64, "18446744073709551615", &x), 0));
        cr_assert(eq(u64, x.u, UINT64_MAX));
        cr_assert(eq(int, mv_scalar(MD_UINT64, "18446744073709551616", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_UINT64, "99999999999999999999999", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_INT32, " +0042\n", &x), 0));
        cr_assert(eq(i64, x.i, 42));
        cr_assert(eq(int, mv_scalar(MD_INT32, "1.0", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_INT32, "1 2", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_INT32, "", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_INT32, "0x10", &x), -EINVAL));
}

Test(md_values, floats_follow_xml_schema_double)
{
        union md_scalar x;

        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "1.5", &x), 0));
        cr_assert(eq(dbl, x.f, 1.5));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "-.5e1", &x), 0));
        cr_assert(eq(dbl, x.f, -5.0));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "5.", &x), 0));
        cr_assert(eq(dbl, x.f, 5.0));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "INF", &x), 0));
        cr_assert(eq(dbl, x.f, INFINITY));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "-INF", &x), 0));
        cr_assert(eq(dbl, x.f, -INFINITY));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "NaN", &x), 0));
        cr_assert(isnan(x.f));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "1e-400", &x), 0), "underflow is not an error");
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "1e400", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_FLOAT32, "1e39", &x), -ERANGE));
        cr_assert(eq(int, mv_scalar(MD_FLOAT32, "3.4028235e38", &x), 0));
        cr_assert(eq(dbl, x.f, (double)FLT_MAX));
        cr_assert(eq(int, mv_scalar(MD_FLOAT32, "0.1", &x), 0));
        cr_assert(eq(dbl, x.f, (double)0.1f));
        cr_assert(ne(dbl, x.f, 0.1));
        /* What strtod takes but XML Schema does not. */
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "inf", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "nan", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "0x1p3", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "1.5x", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "1,5", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "1e", &x), -EINVAL));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, ".", &x), -EINVAL));
}

Test(md_values, booleans_hex_and_lists)
{
        struct md_values l;
        struct md_binary bin;
        size_t bad = 99;
        union md_scalar x;

        cr_assert(eq(int, mv_scalar(MD_BOOLEAN, "1", &x), 0));
        cr_assert(x.b);
        cr_assert(eq(int, mv_scalar(MD_BOOLEAN, "false", &x), 0));
        cr_assert(not(x.b));
        cr_assert(eq(int, mv_scalar(MD_BOOLEAN, "True", &x), -EINVAL));
        cr_assert(eq(int, mv_hex("0XaB01", 16, &bin), 0));
        cr_assert(eq(sz, bin.len, 2));
        cr_assert(eq(u8, bin.data[0], 0xab));
        cr_assert(eq(u8, bin.data[1], 0x01));
        free(bin.data);
        cr_assert(eq(int, mv_hex("", 16, &bin), 0));
        cr_assert(eq(sz, bin.len, 0));
        free(bin.data);
        cr_assert(eq(int, mv_hex("abc", 16, &bin), -EINVAL));
        cr_assert(eq(int, mv_hex("zz", 16, &bin), -EINVAL));
        cr_assert(eq(int, mv_hex("00112233", 3, &bin), -E2BIG));
        cr_assert(eq(int, mv_list(MD_INT16, " 1\t-2\n3 ", 3, &l, &bad), 0));
        cr_assert(eq(sz, l.n, 3));
        cr_assert(eq(i64, l.i[1], -2));
        mv_free(MD_INT16, &l);
        cr_assert(eq(int, mv_list(MD_INT16, "1 2 3 4", 3, &l, &bad), -E2BIG));
        cr_assert(eq(int, mv_list(MD_UINT8, "1 2 256", 3, &l, &bad), -ERANGE));
        cr_assert(eq(sz, bad, 2));
        cr_assert(eq(int, mv_list(MD_UINT8, "   ", 3, &l, &bad), -EINVAL));
}

/* ---- valid documents -------------------------------------------------- */

Test(model_description, fmi3_all_types_document_parses_to_exact_values, .init = setup,
     .fini = teardown)
{
        const struct md_variable *v;

        cr_assert(eq(int, parse_file("md/valid/fmi3-all-types.xml", NULL), 0), "see the log");
        cr_assert(eq(sz, diags.n, 0));
        cr_assert(eq(int, md->fmi, MD_FMI3));
        cr_assert(eq(str, md->fmi_version, "3.0"));
        cr_assert(eq(str, md->model_name, "AllTypes"));
        cr_assert(eq(str, md->instantiation_token, "{5c4e810f-3df3-4a00-8276-176fa3c9f001}"));
        cr_assert(eq(str, md->author, "fmud"));
        cr_assert(eq(str, md->version, "1.2"));
        cr_assert(eq(str, md->generation_date_and_time, "2024-01-02T03:04:05Z"));
        cr_assert(eq(int, md->naming, MD_NAMING_STRUCTURED));
        cr_assert(not(md->has_model_exchange));
        cr_assert(not(md->has_scheduled_execution));

        /* Every Co-Simulation flag is true in this document. */
        cr_assert(md->cs.present);
        cr_assert(eq(str, md->cs.model_identifier, "AllTypes"));
        cr_assert(md->cs.needs_execution_tool && md->cs.can_be_instantiated_only_once_per_process);
        cr_assert(md->cs.can_get_and_set_fmu_state && md->cs.can_serialize_fmu_state);
        cr_assert(md->cs.provides_directional_derivatives && md->cs.provides_adjoint_derivatives);
        cr_assert(md->cs.provides_per_element_dependencies);
        cr_assert(md->cs.provides_evaluate_discrete_states);
        cr_assert(md->cs.can_handle_variable_communication_step_size);
        cr_assert(md->cs.has_fixed_internal_step_size);
        cr_assert(eq(dbl, md->cs.fixed_internal_step_size, 0.001));
        cr_assert(eq(u32, md->cs.max_output_derivative_order, 2));
        cr_assert(md->cs.recommended_intermediate_input_smoothness_given);
        cr_assert(eq(i32, md->cs.recommended_intermediate_input_smoothness, 1));
        cr_assert(md->cs.provides_intermediate_update && md->cs.might_return_early_from_do_step);
        cr_assert(md->cs.can_return_early_after_intermediate_update && md->cs.has_event_mode);

        /* Units and display units. */
        cr_assert(eq(sz, md->n_units, 6));
        cr_assert(eq(str, md->units[1].name, "rad/s"));
        cr_assert(md->units[1].has_base_unit);
        cr_assert(eq(i32, md->units[1].base.s, -1));
        cr_assert(eq(i32, md->units[1].base.rad, 1));
        cr_assert(eq(dbl, md->units[1].base.factor, 1.0));
        cr_assert(eq(sz, md->units[1].n_display, 2));
        cr_assert(eq(str, md->units[1].display[0].name, "deg/s"));
        cr_assert(eq(dbl, md->units[1].display[0].factor, 57.29577951308232));
        cr_assert(eq(dbl, md->units[2].display[0].offset, -459.67));
        cr_assert(md->units[3].display[0].inverse);
        cr_assert(eq(dbl, md->units[3].base.factor, 1e-8));
        cr_assert(eq(i32, md->units[4].base.kg, 1));
        cr_assert(eq(i32, md->units[4].base.m, -1));
        cr_assert(eq(dbl, md->units[4].base.factor, 1e5));
        cr_assert(not(md->units[5].has_base_unit));

        /* Type definitions, enumeration items, log categories, experiment. */
        cr_assert(eq(sz, md->n_type_defs, 9));
        cr_assert(eq(int, md->type_defs[7].type, MD_ENUMERATION));
        cr_assert(eq(sz, md->type_defs[7].n_items, 3));
        cr_assert(eq(str, md->type_defs[7].items[0].name, "off"));
        cr_assert(eq(str, md->type_defs[7].items[0].description, "Off"));
        cr_assert(eq(i64, md->type_defs[7].items[2].value, -4));
        cr_assert(eq(int, md->type_defs[8].type, MD_CLOCK));
        cr_assert(eq(sz, md->n_log_categories, 2));
        cr_assert(eq(str, md->log_categories[0].name, "logEvents"));
        cr_assert(md->has_default_experiment);
        cr_assert(md->default_experiment.has_start && md->default_experiment.has_stop);
        cr_assert(eq(dbl, md->default_experiment.stop, 10));
        cr_assert(eq(dbl, md->default_experiment.tolerance, 1e-6));
        cr_assert(eq(dbl, md->default_experiment.step, 0.01));

        cr_assert(eq(sz, md->n_vars, 30));
        v = var("time");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_INDEPENDENT));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_CONTINUOUS));
        cr_assert(eq(int, v->initial, MD_INITIAL_NONE));
        cr_assert(not(v->has_start));

        /* Float32 start rounded to float; unit and min inherited from the type. */
        v = var("f32");
        cr_assert(eq(int, v->type, MD_FLOAT32));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_TUNABLE));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        cr_assert(not(v->initial_given));
        cr_assert(eq(dbl, v->start.f[0], (double)0.1f));
        cr_assert(eq(str, v->type_def->name, "Temperature"));
        cr_assert(eq(str, v->attrs.unit, "K"));
        cr_assert(v->attrs.has_min && v->attrs.unbounded);

        v = var("w");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_INPUT));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_CONTINUOUS));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        cr_assert(eq(dbl, v->start.f[0], 1.5));
        cr_assert(eq(str, v->attrs.display_unit, "rev/min"));
        cr_assert(eq(str, v->attrs.quantity, "AngularVelocity"));
        cr_assert(eq(dbl, v->attrs.min.f, -1000));
        cr_assert(eq(dbl, v->attrs.nominal.f, 10));
        cr_assert(eq(str, v->unit_def->name, "rad/s"));

        v = var("der(x)");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_LOCAL));
        cr_assert(eq(int, v->initial, MD_INITIAL_CALCULATED));
        cr_assert(v->has_derivative);
        cr_assert(eq(u32, v->derivative, 3));

        cr_assert(eq(i64, var("i8")->start.i[0], -128));
        cr_assert(eq(u64, var("u8")->start.u[0], 255));
        cr_assert(eq(i64, var("i16")->start.i[0], -100));
        cr_assert(eq(int, var("i16")->variability, MD_VARIABILITY_DISCRETE));
        cr_assert(eq(u64, var("u16")->start.u[0], 65535));
        cr_assert(eq(int, var("i32")->initial, MD_INITIAL_CALCULATED));
        cr_assert(eq(u64, var("u32")->start.u[0], 4294967295u));
        /* 2^53 + 1 is not a double: parsed without a float on the way. */
        cr_assert(eq(i64, var("i64")->start.i[0], INT64_C(9007199254740993)));
        cr_assert(eq(u64, var("u64")->start.u[0], UINT64_MAX));
        cr_assert(var("b")->start.b[0]);

        v = var("bArr");
        cr_assert(eq(sz, v->n_dims, 1));
        cr_assert(v->dims[0].has_start);
        cr_assert(eq(u64, v->dims[0].start, 4));
        cr_assert(eq(sz, v->start.n, 4));
        cr_assert(v->start.b[0] && !v->start.b[1] && !v->start.b[2] && v->start.b[3]);

        cr_assert(eq(str, var("s")->start.s[0], "hello & <world>"));
        v = var("bin");
        cr_assert(eq(sz, v->start.bin[0].len, 3));
        cr_assert(eq(u8, v->start.bin[0].data[0], 0x0a));
        cr_assert(eq(u8, v->start.bin[0].data[1], 0xff));
        cr_assert(eq(u8, v->start.bin[0].data[2], 0x10));
        cr_assert(eq(str, v->attrs.mime_type, "application/x-blob"));
        cr_assert(eq(u64, v->attrs.max_size, 64));
        cr_assert(eq(i64, var("mode")->start.i[0], -4));

        v = var("n");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_STRUCTURAL_PARAMETER));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        v = var("vec");
        cr_assert(v->dims[0].has_vr && !v->dims[0].has_start);
        cr_assert(eq(u32, v->dims[0].vr, 18));
        cr_assert(eq(u64, md_var_elements(md, v), 3));
        cr_assert(eq(dbl, v->start.f[2], -300));
        v = var("mat");
        cr_assert(eq(u64, md_var_elements(md, v), 6));
        cr_assert(eq(i64, v->start.i[5], 6));
        v = var("fill");
        cr_assert(eq(u64, md_var_elements(md, v), 5));
        cr_assert(eq(sz, v->start.n, 1));

        /* Clocks: attributes inherited from the ClockType. */
        v = var("tick");
        cr_assert(eq(int, v->variability, MD_VARIABILITY_DISCRETE));
        cr_assert(eq(int, v->initial, MD_INITIAL_NONE));
        cr_assert(eq(int, v->attrs.clock.interval_variability, MD_INTERVAL_CONSTANT));
        cr_assert(eq(dbl, v->attrs.clock.interval_decimal, 0.25));
        cr_assert(eq(dbl, v->attrs.clock.shift_decimal, 0.125));
        cr_assert(eq(int, var("outTick")->attrs.clock.interval_variability, MD_INTERVAL_TRIGGERED));
        v = var("counter");
        cr_assert(eq(sz, v->n_clocks, 1));
        cr_assert(eq(u32, v->clocks[0], 22));
        cr_assert(v->has_previous);
        cr_assert(eq(u32, v->previous, 25));

        cr_assert(eq(dbl, var("c32")->start.f[0], (double)FLT_MAX));
        cr_assert(eq(int, var("c32")->initial, MD_INITIAL_EXACT));
        v = var("big");
        cr_assert(eq(dbl, v->start.f[0], -INFINITY));
        cr_assert(v->intermediate_update);
        cr_assert(eq(int, v->initial, MD_INITIAL_APPROX));
        v = var("T");
        cr_assert(eq(u32, v->vr, 30));
        cr_assert(eq(str, v->attrs.display_unit, "degF"));
        cr_assert(eq(ptr, (void *)md_find_vr(md, 30), (void *)v));
        cr_assert(eq(ptr, (void *)md_find_vr(md, 29), NULL));

        /* Model structure: variable indices and dependency kinds. */
        cr_assert(eq(sz, md->structure.outputs.n, 6));
        cr_assert(eq(sz, md->structure.outputs.v[0].var, 3));
        cr_assert(md->structure.outputs.v[0].has_dependencies);
        cr_assert(eq(sz, md->structure.outputs.v[0].n_deps, 0));
        cr_assert(eq(sz, md->structure.outputs.v[1].n_deps, 2));
        cr_assert(eq(sz, md->structure.outputs.v[1].deps[0], 7));
        cr_assert(eq(sz, md->structure.outputs.v[1].deps[1], 17));
        cr_assert(eq(int, md->structure.outputs.v[1].dep_kinds[1], MD_DEP_DEPENDENT));
        cr_assert(eq(ptr, md->structure.outputs.v[2].dep_kinds, NULL));
        cr_assert(not(md->structure.outputs.v[3].has_dependencies));
        cr_assert(eq(sz, md->structure.outputs.v[5].var, 29));
        cr_assert(eq(sz, md->structure.outputs.v[5].deps[2], 0));
        cr_assert(eq(int, md->structure.outputs.v[5].dep_kinds[0], MD_DEP_CONSTANT));
        cr_assert(eq(int, md->structure.outputs.v[5].dep_kinds[1], MD_DEP_FIXED));
        cr_assert(eq(int, md->structure.outputs.v[5].dep_kinds[2], MD_DEP_TUNABLE));
        cr_assert(eq(sz, md->structure.derivatives.n, 1));
        cr_assert(eq(sz, md->structure.derivatives.v[0].var, 4));
        cr_assert(eq(sz, md->structure.clocked_states.n, 1));
        cr_assert(eq(sz, md->structure.clocked_states.v[0].var, 24));
        cr_assert(eq(sz, md->structure.initial_unknowns.n, 3));
        cr_assert(eq(sz, md->structure.initial_unknowns.v[2].var, 29));
        cr_assert(eq(sz, md->structure.event_indicators.n, 1));
        cr_assert(eq(sz, md->structure.event_indicators.v[0].var, 26));
}

Test(model_description, fmi2_document_maps_onto_the_fmi3_model, .init = setup, .fini = teardown)
{
        const struct md_variable *v;

        cr_assert(eq(int, parse_file("md/valid/fmi2-cosim.xml", NULL), 0));
        cr_assert(eq(sz, diags.n, 0));
        cr_assert(eq(int, md->fmi, MD_FMI2));
        cr_assert(eq(str, md->instantiation_token, "{1AE5E10D-9521-4DE3-80B9-D0EAAA7D5AF1}"));
        cr_assert(eq(u32, md->number_of_event_indicators, 1));
        cr_assert(md->has_model_exchange);
        cr_assert(md->cs.present);
        cr_assert(md->cs.needs_execution_tool && md->cs.can_handle_variable_communication_step_size);
        cr_assert(md->cs.can_interpolate_inputs && md->cs.can_run_asynchronuously);
        cr_assert(md->cs.can_be_instantiated_only_once_per_process);
        cr_assert(md->cs.can_not_use_memory_management_functions);
        cr_assert(md->cs.can_get_and_set_fmu_state && md->cs.can_serialize_fmu_state);
        cr_assert(md->cs.provides_directional_derivatives);
        cr_assert(eq(u32, md->cs.max_output_derivative_order, 1));
        cr_assert(eq(sz, md->n_type_defs, 3));
        cr_assert(eq(int, md->type_defs[1].type, MD_ENUMERATION));
        cr_assert(eq(sz, md->type_defs[1].n_items, 2));
        cr_assert(eq(sz, md->n_vars, 13));

        v = var("h");
        cr_assert(eq(int, v->type, MD_FLOAT64));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        cr_assert(eq(str, v->attrs.unit, "m"));
        cr_assert(eq(str, v->attrs.display_unit, "mm"));
        cr_assert(eq(str, v->attrs.quantity, "Length"));
        /* derivative="2" is ScalarVariable index 2 (h), kept as h's vr. */
        v = var("der(h)");
        cr_assert(v->has_derivative);
        cr_assert(eq(u32, v->derivative, 1));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_CONTINUOUS));
        cr_assert(eq(int, v->initial, MD_INITIAL_CALCULATED));
        cr_assert(var("v")->reinit);
        v = var("e");
        cr_assert(eq(int, v->variability, MD_VARIABILITY_TUNABLE));
        cr_assert(eq(dbl, v->start.f[0], 0.7));
        cr_assert(eq(dbl, v->attrs.max.f, 1));
        v = var("count");
        cr_assert(eq(int, v->type, MD_INT32));
        cr_assert(eq(int, v->initial, MD_INITIAL_CALCULATED));
        v = var("gear");
        cr_assert(eq(int, v->type, MD_ENUMERATION));
        cr_assert(eq(int, v->initial, MD_INITIAL_NONE), "FMI 2.0 inputs have no initial");
        cr_assert(eq(i64, v->start.i[0], 2));
        cr_assert(eq(str, var("label")->start.s[0], "bounce"));
        cr_assert(eq(i64, var("limit")->attrs.max.i, 10));

        /* vr 1 is a Real, an Integer, a Boolean and a String: one per base type. */
        cr_assert(eq(str, md_find_vr_type(md, MD_FLOAT64, 1)->name, "h"));
        cr_assert(eq(str, md_find_vr_type(md, MD_INT32, 1)->name, "count"));
        cr_assert(eq(str, md_find_vr_type(md, MD_BOOLEAN, 1)->name, "on"));
        cr_assert(eq(str, md_find_vr_type(md, MD_STRING, 1)->name, "label"));
        cr_assert(eq(str, md_find_vr_type(md, MD_ENUMERATION, 2)->name, "gear"));
        cr_assert(eq(str, md_find_vr_type(md, MD_FLOAT64, 2)->name, "der(h)"));

        cr_assert(eq(sz, md->structure.outputs.n, 3));
        cr_assert(eq(sz, md->structure.outputs.v[1].var, 3));
        cr_assert(eq(sz, md->structure.outputs.v[2].var, 7));
        cr_assert(eq(sz, md->structure.outputs.v[2].deps[0], 9));
        cr_assert(eq(sz, md->structure.outputs.v[2].deps[1], 12));
        cr_assert(eq(sz, md->structure.derivatives.n, 2));
        cr_assert(eq(int, md->structure.derivatives.v[1].dep_kinds[0], MD_DEP_FIXED));
        cr_assert(eq(sz, md->structure.initial_unknowns.n, 3));
}

/* Every document in md/valid parses without an error or a warning. */
Test(model_description, every_valid_fixture_has_no_diagnostic)
{
        char pattern[1024];
        glob_t g;

        snprintf(pattern, sizeof(pattern), "%s/md/valid/*.xml", FMUD_TEST_SRC_DIR);
        cr_assert(eq(int, glob(pattern, 0, NULL, &g), 0));
        cr_assert(ge(sz, g.gl_pathc, 4));
        for (size_t i = 0; i < g.gl_pathc; i++) {
                size_t len;
                char *buf = slurp(g.gl_pathv[i], &len);

                setup();
                cr_expect(eq(int, md_parse(buf, len, g.gl_pathv[i], NULL, &diags, &md), 0),
                          "%s", g.gl_pathv[i]);
                if (diags.n)
                        dump();
                cr_expect(eq(sz, diags.n, 0), "%s", g.gl_pathv[i]);
                teardown();
                free(buf);
        }
        globfree(&g);
}

/* ---- invalid documents: one file per rule ------------------------------ */

struct invalid_case {
        char file[64];
        int line;
        char message[256];
};

static const struct invalid_case invalid_cases[] = {
        { "duplicate-name.xml", 8, "name is not unique: also used on line 7 (FMI 3.0 section 2.4.7.4)" },
        { "duplicate-vr.xml", 8, "valueReference=1 is not unique: 'a' on line 7 has it too (FMI 3.0 section 2.4.7.4)" },
        { "illegal-causality-variability.xml", 6, "causality=\"parameter\" with variability=\"continuous\" is not an allowed combination (FMI 3.0 section 2.4.7.4)" },
        { "illegal-initial.xml", 6, "initial=\"calculated\" is not allowed for causality=\"parameter\", variability=\"fixed\" (FMI 3.0 section 2.4.7.5)" },
        { "input-without-start.xml", 6, "no start value, but causality=\"input\" requires one (FMI 3.0 section 2.4.7.5)" },
        { "parameter-without-start.xml", 6, "no start value, but causality=\"parameter\" requires one (FMI 3.0 section 2.4.7.5)" },
        { "calculated-with-start.xml", 7, "has a start value, but initial=\"calculated\" (the default here) forbids one (FMI 3.0 section 2.4.7.5)" },
        { "unknown-declared-type.xml", 6, "declaredType=\"Nope\" is not defined in TypeDefinitions (FMI 3.0 section 2.4.7.5)" },
        { "declared-type-mismatch.xml", 9, "declaredType=\"Speed\" is a Float64 type, but the variable is a Int32 (FMI 3.0 section 2.4.7.5)" },
        { "unknown-unit.xml", 9, "unit=\"furlong\" is not defined in UnitDefinitions (FMI 3.0 section 2.4.7.5)" },
        { "unknown-display-unit.xml", 9, "displayUnit=\"ft\" is not defined in unit \"m\" (FMI 3.0 section 2.4.7.5)" },
        { "type-unknown-unit.xml", 5, "unit=\"K\" is not defined in UnitDefinitions (FMI 3.0 section 2.4.4)" },
        { "bad-model-identifier.xml", 3, "modelIdentifier=\"../../lib/evil\" is not a C identifier" },
        { "int8-start-out-of-range.xml", 6, "start=\"200\" is outside the range of Int8 (FMI 3.0 section 2.4.7.5)" },
        { "uint64-start-out-of-range.xml", 6, "start=\"18446744073709551616\" is outside the range of UInt64 (FMI 3.0 section 2.4.7.5)" },
        { "float32-start-out-of-range.xml", 6, "start=\"1e39\" is outside the range of Float32 (FMI 3.0 section 2.4.7.5)" },
        { "start-trailing-garbage.xml", 6, "start=\"1.5x\" is not a valid Float64 (FMI 3.0 section 2.4.7.5)" },
        { "start-comma-decimal.xml", 7, "start=\"1,5\" is not a valid Float64 (FMI 3.0 section 2.4.7.5)" },
        { "boolean-start-invalid.xml", 6, "start=\"yes\" is not a valid Boolean (FMI 3.0 section 2.4.7.5)" },
        { "binary-start-not-hex.xml", 7, "Start value=\"0xabc\" is not hexBinary" },
        { "start-below-min.xml", 6, "start value -1 is below min=0 (FMI 3.0 section 2.4.4)" },
        { "start-above-inherited-max.xml", 9, "start value 11 is above max=10 (FMI 3.0 section 2.4.4)" },
        { "min-greater-than-max.xml", 6, "min=2 is greater than max=1 (FMI 3.0 section 2.4.4)" },
        { "output-missing-from-model-structure.xml", 7, "output variable is not listed in ModelStructure <Output> (FMI 3.0 section 2.4.8)" },
        { "output-entry-not-output.xml", 9, "<Output> lists a variable whose causality is \"parameter\", not output (FMI 3.0 section 2.4.8)" },
        { "model-structure-unknown-vr.xml", 8, "valueReference 42 in <InitialUnknown> is not the valueReference of any variable (FMI 3.0 section 2.4.8)" },
        { "dependency-unknown-vr.xml", 9, "dependency 77 in <Output> is not the valueReference of any variable (FMI 3.0 section 2.4.8)" },
        { "dependencies-kind-length.xml", 9, "dependenciesKind of <Output> must have as many entries as dependencies (1) (FMI 3.0 section 2.4.8)" },
        { "dependencies-kind-without-dependencies.xml", 9, "dependenciesKind of <Output> is given without dependencies (FMI 3.0 section 2.4.8)" },
        { "dependencies-kind-initial-unknown.xml", 10, "dependenciesKind \"tunable\" is not allowed for <InitialUnknown> (FMI 3.0 section 2.4.8)" },
        { "derivative-entry-without-derivative.xml", 9, "<ContinuousStateDerivative> lists a variable that is not a floating point variable with a derivative attribute (FMI 3.0 section 2.4.8)" },
        { "duplicate-output-entry.xml", 10, "variable is listed twice in <Output> (FMI 3.0 section 2.4.8)" },
        { "dimension-not-structural.xml", 7, "Dimension valueReference=1 refers to 'n', which is not a scalar UInt64 structural parameter or constant (FMI 3.0 section 2.4.7.2)" },
        { "dimension-unknown-vr.xml", 6, "Dimension valueReference=9 is not the value reference of any variable (FMI 3.0 section 2.4.7.2)" },
        { "dimension-start-zero.xml", 7, "Dimension start=\"0\": initial dimension sizes must be positive (FMI 3.0 section 2.4.7.2)" },
        { "dimension-start-and-vr.xml", 8, "Dimension has both start and valueReference; they are exclusive (FMI 3.0 section 2.4.7.2)" },
        { "structural-parameter-zero.xml", 7, "refers to 'n', whose start is 0; initial dimension sizes must be positive (FMI 3.0 section 2.4.7.2)" },
        { "start-list-length.xml", 6, "start has 2 values, but the dimensions give 3 elements (FMI 3.0 section 2.4.7.5)" },
        { "scalar-with-start-list.xml", 6, "a scalar variable has 2 start values (FMI 3.0 section 2.4.7.5)" },
        { "structural-parameter-with-dimension.xml", 6, "a structural parameter must not have a Dimension (FMI 3.0 section 2.4.7.4)" },
        { "two-independent.xml", 6, "a second independent variable ('time' on line 5 is one already) (FMI 3.0 section 2.4.7.4)" },
        { "independent-with-start.xml", 5, "an independent variable must not have a start value (FMI 3.0 section 2.4.7.4)" },
        { "independent-not-float.xml", 5, "the independent variable must be of a floating point type (FMI 3.0 section 2.4.7.4)" },
        { "continuous-integer.xml", 6, "only Float32 and Float64 variables may be continuous (FMI 3.0 section 2.4.7.4)" },
        { "clock-output-not-triggered.xml", 6, "an output Clock must have intervalVariability=\"triggered\" (FMI 3.0 section 2.2.8.2)" },
        { "clock-without-interval-variability.xml", 6, "Clock without intervalVariability (on the variable or its ClockType) (FMI 3.0 section 2.4.4)" },
        { "clocks-not-a-clock.xml", 7, "clocks lists 1, which is not a Clock (FMI 3.0 section 2.4.7.4)" },
        { "previous-self.xml", 7, "previous refers to the variable itself (FMI 3.0 section 2.4.7.4)" },
        { "event-mode-required.xml", 2, "the FMU has Clocks, so CoSimulation needs hasEventMode=\"true\" (FMI 3.0 section 4.4)" },
        { "serialize-without-get-set.xml", 3, "canSerializeFMUState=\"true\" requires canGetAndSetFMUState=\"true\" (FMI 3.0 section 2.4.2)" },
        { "early-return-without-intermediate-update.xml", 3, "canReturnEarlyAfterIntermediateUpdate=\"true\" requires providesIntermediateUpdate=\"true\" (FMI 3.0 section 4.4)" },
        { "no-interface.xml", 2, "none of ModelExchange, CoSimulation or ScheduledExecution is present (FMI 3.0 section 2.4.1)" },
        { "missing-instantiation-token.xml", 2, "missing required attribute instantiationToken (FMI 3.0 section 2.4.1)" },
        { "missing-model-structure.xml", 2, "missing required element ModelStructure (FMI 3.0 section 2.4.1)" },
        { "enumeration-without-declared-type.xml", 6, "an Enumeration variable needs a declaredType (FMI 3.0 section 2.4.7.5)" },
        { "enumeration-start-not-item.xml", 12, "start value 3 is not an Item of type \"E\" (FMI 3.0 section 2.4.4)" },
        { "enumeration-duplicate-item.xml", 5, "Item value 1 is not unique (FMI 3.0 section 2.4.4)" },
        { "duplicate-type-name.xml", 6, "type name is not unique: also defined on line 5 (FMI 3.0 section 2.4.4)" },
        { "type-name-equals-variable.xml", 5, "a type name must differ from every variable name, but variable on line 9 has it (FMI 3.0 section 2.4.4)" },
        { "duplicate-unit.xml", 6, "unit name is not unique: also defined on line 5 (FMI 3.0 section 2.4.3)" },
        { "display-unit-inverse-offset.xml", 6, "inverse=\"true\" is only allowed with offset=\"0\" (FMI 3.0 section 2.4.3)" },
        { "alias-duplicate-name.xml", 7, "name is not unique: also used on line 5 (FMI 3.0 section 2.4.7.3)" },
        { "bad-causality.xml", 6, "causality=\"params\" is not one of the values the standard defines (FMI 3.0 section 2.4.7.4)" },
        { "missing-value-reference.xml", 6, "missing required attribute valueReference (FMI 3.0 section 2.4.7.4)" },
        { "log-category-duplicate.xml", 4, "log category name is not unique (FMI 3.0 section 2.4.5)" },
        { "not-well-formed.xml", 6, "not well-formed XML: Opening and ending tag mismatch" },
        { "wrong-root.xml", 2, "the root element is <fmiModelDescriptions>, not <fmiModelDescription> (FMI 3.0 section 2.4.1)" },
        { "unsupported-version.xml", 2, "fmiVersion=\"1.0\" is not supported: fmud reads FMI 2.0 and FMI 3.x" },
        { "doctype.xml", 2, "DOCTYPE declarations are refused" },
        { "external-entity.xml", 2, "DOCTYPE declarations are refused" },
        { "external-dtd.xml", 2, "DOCTYPE declarations are refused" },
        { "undeclared-entity.xml", 2, "not well-formed XML: Entity 'undeclared' not defined" },
        { "not-utf8.xml", 1, "empty, or not XML in UTF-8: a model description must be UTF-8 (FMI 3.0 section 2.4)" },
        { "latin1-bytes.xml", 2, "not well-formed XML: Input is not proper UTF-8, indicate encoding !" },
        { "fmi2-bad-index.xml", 11, "index 3 in <Outputs/Unknown> is not a ScalarVariable index (1..2) (FMI 2.0 section 2.2.8)" },
        { "fmi2-bad-dependency-index.xml", 10, "dependency 0 in <Outputs/Unknown> is not a ScalarVariable index (1..2) (FMI 2.0 section 2.2.8)" },
        { "fmi2-output-missing.xml", 6, "output variable is not listed in ModelStructure <Outputs/Unknown> (FMI 2.0 section 2.2.8)" },
        { "fmi2-alias-variability.xml", 7, "alias of 'a' (line 6, same valueReference 1) with a different variability (FMI 2.0 section 2.2.7)" },
        { "fmi2-alias-start.xml", 13, "alias of 'a' (line 10, same valueReference 1) with a different start value (FMI 2.0 section 2.2.7)" },
        { "fmi2-bad-derivative.xml", 6, "derivative=\"5\" is not a ScalarVariable index (1..2) (FMI 2.0 section 2.2.7)" },
        { "fmi2-input-with-initial.xml", 6, "initial must not be given for causality=\"input\" (FMI 2.0 section 2.2.7)" },
        { "fmi2-input-without-start.xml", 6, "no start value, but causality=\"input\" requires one (FMI 2.0 section 2.2.7)" },
        { "fmi2-no-type-element.xml", 6, "a ScalarVariable needs exactly one of Real, Integer, Boolean, String or Enumeration (it has 0) (FMI 2.0 section 2.2.7)" },
        { "fmi2-missing-guid.xml", 2, "missing required attribute guid (FMI 2.0 section 2.2.1)" },
        { "fmi2-integer-start-out-of-range.xml", 6, "start=\"2147483648\" is outside the range of Int32 (FMI 2.0 section 2.2.7)" },
        { "fmi2-derivative-not-real.xml", 7, "derivative=\"2\" refers to 'k', which is not a Real (FMI 2.0 section 2.2.7)" },
        { "fmi2-unknown-unit.xml", 6, "unit=\"m\" is not defined in UnitDefinitions (FMI 2.0 section 2.2.7)" },
        { "fmi2-no-interface.xml", 2, "neither ModelExchange nor CoSimulation is present (FMI 2.0 section 2.2.1)" },
};

ParameterizedTestParameters(model_description, each_invalid_fixture_breaks_its_rule)
{
        return cr_make_param_array(struct invalid_case, invalid_cases,
                                   sizeof(invalid_cases) / sizeof(*invalid_cases));
}

ParameterizedTest(const struct invalid_case *tc, model_description,
                  each_invalid_fixture_breaks_its_rule, .init = setup, .fini = teardown)
{
        char rel[128];
        bool found = false;

        snprintf(rel, sizeof(rel), "md/invalid/%s", tc->file);
        cr_assert(eq(int, parse_file(rel, NULL), -EINVAL), "%s", tc->file);
        dump();
        /* One rule per file: a second error would mean the fixture tests two. */
        cr_expect(eq(sz, diag_errors(&diags), 1), "%s", tc->file);
        for (size_t i = 0; i < diags.n && !found; i++)
                found = diags.v[i].severity == DIAG_ERROR && diags.v[i].line == tc->line &&
                        strstr(diags.v[i].message, tc->message) && diags.v[i].file &&
                        strcmp(diags.v[i].file, rel) == 0;
        cr_assert(found, "%s: no error on line %d containing \"%s\"", tc->file, tc->line,
                  tc->message);
}

/* A fixture added to md/invalid without a row above would test nothing. */
Test(model_description, every_invalid_fixture_is_listed)
{
        char path[1024];
        struct dirent *e;
        DIR *d;

        snprintf(path, sizeof(path), "%s/md/invalid", FMUD_TEST_SRC_DIR);
        d = opendir(path);
        cr_assert(ne(ptr, d, NULL));
        while ((e = readdir(d))) {
                bool listed = false;

                if (!strstr(e->d_name, ".xml"))
                        continue;
                for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(*invalid_cases); i++)
                        listed |= strcmp(invalid_cases[i].file, e->d_name) == 0;
                cr_expect(listed, "md/invalid/%s has no expected message", e->d_name);
        }
        closedir(d);
}

Test(model_description, invalid_document_still_returns_what_was_read, .init = setup,
     .fini = teardown)
{
        cr_assert(eq(int, parse_file("md/invalid/duplicate-vr.xml", NULL), -EINVAL));
        cr_assert(ne(ptr, md, NULL));
        cr_assert(eq(sz, md->n_vars, 3));
        cr_assert(eq(str, md->vars[2].name, "b"));
        md_free(md);
        md = NULL;
        cr_assert(eq(int, parse_file("md/invalid/not-well-formed.xml", NULL), -EINVAL));
        cr_assert(eq(ptr, md, NULL));
}

Test(model_description, model_exchange_only_is_a_warning_not_an_error, .init = setup,
     .fini = teardown)
{
        const char *doc = "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                          "instantiationToken=\"t\"><ModelExchange modelIdentifier=\"M\"/>"
                          "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                          "causality=\"independent\"/></ModelVariables><ModelStructure/>"
                          "</fmiModelDescription>";

        cr_assert(eq(int, parse_text(doc, NULL), 0));
        cr_assert(md->has_model_exchange);
        cr_assert(not(md->cs.present));
        cr_assert(eq(sz, diags.n, 1));
        cr_assert(eq(int, diags.v[0].severity, DIAG_WARNING));
        cr_assert(eq(str, diags.v[0].message,
                     "no CoSimulation interface; fmud runs Co-Simulation FMUs only"));
}

/* libxml2 keeps 16-bit line numbers; diagnostics must not wrap past 65535. */
Test(model_description, line_numbers_past_65535_are_exact, .init = setup, .fini = teardown)
{
        const char *head = "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                           "instantiationToken=\"t\"><CoSimulation modelIdentifier=\"M\"/>"
                           "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                           "causality=\"independent\"/>";
        const char *bad = "<Float64 name=\"u\" valueReference=\"1\"\n causality=\"input\"/>"
                          "</ModelVariables><ModelStructure/></fmiModelDescription>";
        size_t n = strlen(head) + 70000 + strlen(bad) + 1;
        char *doc = malloc(n);

        cr_assert(ne(ptr, doc, NULL));
        strcpy(doc, head);
        memset(doc + strlen(head), '\n', 70000);
        strcpy(doc + strlen(head) + 70000, bad);
        cr_assert(eq(int, parse_text(doc, NULL), -EINVAL));
        cr_assert(eq(sz, diags.n, 1));
        /* The line of the tag's '<', not of its end. */
        cr_assert(eq(int, diags.v[0].line, 70001));
        free(doc);
}

/* ---- limits ----------------------------------------------------------- */

Test(model_description, document_over_the_size_cap_is_not_parsed, .init = setup,
     .fini = teardown)
{
        struct md_limits lim = { .max_bytes = 100 };
        char doc[200];

        memset(doc, ' ', sizeof(doc));
        memcpy(doc, "<a/>", 4);
        cr_assert(eq(int, md_parse(doc, sizeof(doc), "big.xml", &lim, &diags, &md), -EFBIG));
        cr_assert(eq(ptr, md, NULL));
        cr_assert(has_diag("over the limit of 100 bytes"));
}

/* 'depth' nested elements inside the first variable's Annotations. */
static char *nested(int depth)
{
        const char *head = "<?xml version=\"1.0\"?>\n"
                           "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                           "instantiationToken=\"t\">\n<CoSimulation modelIdentifier=\"M\"/>\n"
                           "<ModelVariables>\n<Float64 name=\"time\" valueReference=\"0\" "
                           "causality=\"independent\">\n<Annotations>\n";
        const char *tail = "</Annotations>\n</Float64>\n</ModelVariables>\n<ModelStructure/>\n"
                           "</fmiModelDescription>\n";
        size_t n = strlen(head) + strlen(tail) + (size_t)depth * 8 + 1;
        char *s = malloc(n), *p;

        cr_assert(ne(ptr, s, NULL));
        p = s + sprintf(s, "%s", head);
        for (int i = 0; i < depth; i++)
                p += sprintf(p, "<a>");
        for (int i = 0; i < depth; i++)
                p += sprintf(p, "</a>");
        sprintf(p, "%s", tail);
        return s;
}

Test(model_description, nesting_deeper_than_the_cap_is_refused, .init = setup, .fini = teardown)
{
        struct md_limits lim = { .max_depth = 10 };
        char *doc;

        /* fmiModelDescription, ModelVariables, Float64, Annotations: 4 levels. */
        doc = nested(6);
        cr_assert(eq(int, parse_text(doc, &lim), 0));
        free(doc);
        md_free(md);
        md = NULL;
        doc = nested(7);
        cr_assert(eq(int, parse_text(doc, &lim), -EINVAL));
        cr_assert(eq(ptr, md, NULL));
        cr_assert(has_diag("elements nested deeper than 10 levels"));
        free(doc);
        /* The default cap of 64 holds too, below libxml2's own. */
        doc = nested(200);
        cr_assert(eq(int, parse_text(doc, NULL), -EINVAL));
        cr_assert(has_diag("elements nested deeper than 64 levels"));
        free(doc);
}

static char *with_start_list(size_t n)
{
        char *s = malloc(n * 2 + 512), *p;

        cr_assert(ne(ptr, s, NULL));
        p = s + sprintf(s, "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                           "instantiationToken=\"t\"><CoSimulation modelIdentifier=\"M\"/>"
                           "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                           "causality=\"independent\"/><UInt8 name=\"v\" valueReference=\"1\" "
                           "causality=\"parameter\" start=\"");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "1 ");
        sprintf(p, "\"><Dimension start=\"%zu\"/></UInt8></ModelVariables><ModelStructure/>"
                   "</fmiModelDescription>", n);
        return s;
}

Test(model_description, start_list_over_max_array_elements_is_refused, .init = setup,
     .fini = teardown)
{
        struct md_limits lim = { .max_array_elements = 1000 };
        char *doc = with_start_list(1000);

        cr_assert(eq(int, parse_text(doc, &lim), 0));
        cr_assert(eq(sz, md_find_name(md, "v")->start.n, 1000));
        free(doc);
        md_free(md);
        md = NULL;
        doc = with_start_list(1001);
        cr_assert(eq(int, parse_text(doc, &lim), -EINVAL));
        cr_assert(has_diag("start lists more than 1000 values"));
        cr_assert(has_diag("array of more than 1000 elements"));
        free(doc);
}

Test(model_description, variables_and_strings_over_their_caps_are_refused, .init = setup,
     .fini = teardown)
{
        struct md_limits lim = { .max_variables = 2, .max_string_bytes = 4 };

        cr_assert(eq(int, parse_file("md/valid/fmi2-cosim.xml", &lim), -EINVAL));
        cr_assert(has_diag("more than 2 variables (13); ModelVariables refused"));
        cr_assert(has_diag("start string longer than 4 bytes") == false);
        md_free(md);
        md = NULL;
        lim.max_variables = 0;
        cr_assert(eq(int, parse_file("md/valid/fmi2-cosim.xml", &lim), -EINVAL));
        cr_assert(has_diag("start string longer than 4 bytes; refused"));
}

/* ---- the process around the parser ------------------------------------ */

/* A locale whose decimal point is ',', installed or built into a temporary dir. */
static bool comma_locale(char **ret_dir, const char **ret_name)
{
        static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                             "fr_FR.utf8", "nl_NL.UTF-8", "de_DE" };
        char out[1024], *dir;
        struct run_result rr;
        int r;

        *ret_dir = NULL;
        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
                if (setlocale(LC_NUMERIC, names[i])) {
                        *ret_name = names[i];
                        return true;
                }
        }
        if (access("/usr/bin/localedef", X_OK) != 0)
                return false;
        dir = tmpdir_new("fmud-locale");
        if (!dir)
                return false;
        snprintf(out, sizeof(out), "%s/de_DE.UTF-8", dir);
        r = run_capture((char *const[]){ "/usr/bin/localedef", "-i", "de_DE", "-f", "UTF-8", out,
                                         NULL }, &rr);
        if (r == 0)
                run_result_fini(&rr);
        /* glibc reads LOCPATH on every setlocale(). */
        setenv("LOCPATH", dir, 1);
        if (r != 0 || !setlocale(LC_NUMERIC, "de_DE.UTF-8")) {
                tmpdir_free(dir);
                return false;
        }
        *ret_dir = dir;
        *ret_name = "de_DE.UTF-8";
        return true;
}

Test(model_description, numbers_do_not_depend_on_lc_numeric, .init = setup, .fini = teardown,
     .timeout = 120)
{
        const char *doc = "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                          "instantiationToken=\"t\"><CoSimulation modelIdentifier=\"M\"/>"
                          "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                          "causality=\"independent\"/><Float64 name=\"p\" valueReference=\"1\" "
                          "causality=\"parameter\" start=\"1.5\" min=\"-2.25e1\"/>"
                          "</ModelVariables><ModelStructure/></fmiModelDescription>";
        const char *name;
        char *dir, *end;
        double d;

        if (!comma_locale(&dir, &name))
                cr_skip_test("no locale with a decimal comma, and none could be built");
        cr_log_info("LC_NUMERIC=%s", name);
        cr_assert(eq(str, nl_langinfo(RADIXCHAR), ","));
        /* The locale is in force: the C library's own strtod stops at '.'. */
        d = strtod("1.5", &end);
        cr_assert(eq(dbl, d, 1.0));
        cr_assert(eq(int, parse_text(doc, NULL), 0));
        cr_assert(eq(dbl, md_find_name(md, "p")->start.f[0], 1.5));
        cr_assert(eq(dbl, md_find_name(md, "p")->attrs.min.f, -22.5));
        setlocale(LC_NUMERIC, "C");
        if (dir)
                tmpdir_free(dir);
}

struct thread_arg {
        const char *buf;
        size_t len;
        int failures;
};

static void *parse_many(void *p)
{
        struct thread_arg *a = p;

        for (int i = 0; i < 50; i++) {
                struct diag_list d;
                struct md *m = NULL;

                diag_list_init(&d, 0);
                if (md_parse(a->buf, a->len, "t.xml", NULL, &d, &m) != 0 || !m ||
                    m->n_vars != 30 || m->vars[11].start.i[0] != INT64_C(9007199254740993))
                        a->failures++;
                md_free(m);
                diag_list_fini(&d);
        }
        return NULL;
}

Test(model_description, parses_from_several_threads_at_once)
{
        struct thread_arg args[4];
        pthread_t t[4];
        char path[1024];
        size_t len;
        char *buf;

        snprintf(path, sizeof(path), "%s/md/valid/fmi3-all-types.xml", FMUD_TEST_SRC_DIR);
        buf = slurp(path, &len);
        for (int i = 0; i < 4; i++) {
                args[i] = (struct thread_arg){ .buf = buf, .len = len };
                cr_assert(eq(int, pthread_create(&t[i], NULL, parse_many, &args[i]), 0));
        }
        for (int i = 0; i < 4; i++) {
                pthread_join(t[i], NULL);
                cr_expect(eq(int, args[i].failures, 0));
        }
        free(buf);
}

/* ---- other files that must parse --------------------------------------- */

Test(model_description, every_test_fmu_description_parses_without_error)
{
        char pattern[1024];
        glob_t g;
        int r;

        snprintf(pattern, sizeof(pattern), "%s/fmus/*/modelDescription.xml", FMUD_TEST_SRC_DIR);
        r = glob(pattern, 0, NULL, &g);
        if (r == GLOB_NOMATCH)
                cr_skip_test("no test FMU descriptions");
        cr_assert(eq(int, r, 0));
        for (size_t i = 0; i < g.gl_pathc; i++) {
                size_t len;
                char *buf = slurp(g.gl_pathv[i], &len);

                setup();
                cr_expect(eq(int, md_parse(buf, len, g.gl_pathv[i], NULL, &diags, &md), 0),
                          "%s", g.gl_pathv[i]);
                if (diag_errors(&diags))
                        dump();
                teardown();
                free(buf);
        }
        globfree(&g);
}

/* The fuzzer's regression inputs: none may crash, leak or trip a sanitizer. */
Test(model_description, fuzz_regression_inputs_replay_cleanly)
{
        struct md_limits lim = {
                .max_bytes = 1 << 20,
                .max_variables = 1000,
                .max_array_elements = 1000,
                .max_string_bytes = 4096,
                .max_depth = 32,
        };
        char pattern[1024];
        glob_t g;

        snprintf(pattern, sizeof(pattern), "%s/fuzz/md/*", FMUD_TEST_SRC_DIR);
        cr_assert(eq(int, glob(pattern, 0, NULL, &g), 0));
        for (size_t i = 0; i < g.gl_pathc; i++) {
                size_t len;
                char *buf = slurp(g.gl_pathv[i], &len);

                setup();
                (void)md_parse(buf, len, g.gl_pathv[i], &lim, &diags, &md);
                teardown();
                free(buf);
        }
        globfree(&g);
}
