/*
 * model_description: md_parse() on the numbers of every type and on the
 * fixtures in md/valid, every value checked. test_md_invalid.c: one
 * invalid fixture per rule; test_md_limits.c: limits, locale, threads and
 * the other descriptions that must parse.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <float.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fmi/md_values.h"
#include "fmi/model_description.h"
#include "md_fixture.h"

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
        /* Infinity as people write it, beside XML Schema's INF. */
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "inf", &x), 0));
        cr_assert(eq(dbl, x.f, INFINITY));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "-Infinity", &x), 0));
        cr_assert(eq(dbl, x.f, -INFINITY));
        cr_assert(eq(int, mv_scalar(MD_FLOAT64, "infin", &x), -EINVAL));
        /* What strtod takes but XML Schema does not. */
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

Test(model_description, fmi3_all_types_document_parses_to_exact_values, .init = mdx_setup,
     .fini = mdx_teardown)
{
        const struct md_variable *v;

        cr_assert(eq(int, mdx_parse_file("md/valid/fmi3-all-types.xml", NULL), 0), "see the log");
        cr_assert(eq(sz, mdx_diags.n, 0));
        cr_assert(eq(int, mdx_md->fmi, MD_FMI3));
        cr_assert(eq(str, mdx_md->fmi_version, "3.0"));
        cr_assert(eq(str, mdx_md->model_name, "AllTypes"));
        cr_assert(eq(str, mdx_md->instantiation_token, "{5c4e810f-3df3-4a00-8276-176fa3c9f001}"));
        cr_assert(eq(str, mdx_md->author, "fmud"));
        cr_assert(eq(str, mdx_md->version, "1.2"));
        cr_assert(eq(str, mdx_md->generation_date_and_time, "2024-01-02T03:04:05Z"));
        cr_assert(eq(int, mdx_md->naming, MD_NAMING_STRUCTURED));
        cr_assert(not(mdx_md->has_model_exchange));
        cr_assert(not(mdx_md->has_scheduled_execution));

        /* Every Co-Simulation flag is true in this document. */
        cr_assert(mdx_md->cs.present);
        cr_assert(eq(str, mdx_md->cs.model_identifier, "AllTypes"));
        cr_assert(mdx_md->cs.needs_execution_tool && mdx_md->cs.can_be_instantiated_only_once_per_process);
        cr_assert(mdx_md->cs.can_get_and_set_fmu_state && mdx_md->cs.can_serialize_fmu_state);
        cr_assert(mdx_md->cs.provides_directional_derivatives && mdx_md->cs.provides_adjoint_derivatives);
        cr_assert(mdx_md->cs.provides_per_element_dependencies);
        cr_assert(mdx_md->cs.provides_evaluate_discrete_states);
        cr_assert(mdx_md->cs.can_handle_variable_communication_step_size);
        cr_assert(mdx_md->cs.has_fixed_internal_step_size);
        cr_assert(eq(dbl, mdx_md->cs.fixed_internal_step_size, 0.001));
        cr_assert(eq(u32, mdx_md->cs.max_output_derivative_order, 2));
        cr_assert(mdx_md->cs.recommended_intermediate_input_smoothness_given);
        cr_assert(eq(i32, mdx_md->cs.recommended_intermediate_input_smoothness, 1));
        cr_assert(mdx_md->cs.provides_intermediate_update && mdx_md->cs.might_return_early_from_do_step);
        cr_assert(mdx_md->cs.can_return_early_after_intermediate_update && mdx_md->cs.has_event_mode);

        /* Units and display units. */
        cr_assert(eq(sz, mdx_md->n_units, 6));
        cr_assert(eq(str, mdx_md->units[1].name, "rad/s"));
        cr_assert(mdx_md->units[1].has_base_unit);
        cr_assert(eq(i32, mdx_md->units[1].base.s, -1));
        cr_assert(eq(i32, mdx_md->units[1].base.rad, 1));
        cr_assert(eq(dbl, mdx_md->units[1].base.factor, 1.0));
        cr_assert(eq(sz, mdx_md->units[1].n_display, 2));
        cr_assert(eq(str, mdx_md->units[1].display[0].name, "deg/s"));
        cr_assert(eq(dbl, mdx_md->units[1].display[0].factor, 57.29577951308232));
        cr_assert(eq(dbl, mdx_md->units[2].display[0].offset, -459.67));
        cr_assert(mdx_md->units[3].display[0].inverse);
        cr_assert(eq(dbl, mdx_md->units[3].base.factor, 1e-8));
        cr_assert(eq(i32, mdx_md->units[4].base.kg, 1));
        cr_assert(eq(i32, mdx_md->units[4].base.m, -1));
        cr_assert(eq(dbl, mdx_md->units[4].base.factor, 1e5));
        cr_assert(not(mdx_md->units[5].has_base_unit));

        /* Type definitions, enumeration items, log categories, experiment. */
        cr_assert(eq(sz, mdx_md->n_type_defs, 9));
        cr_assert(eq(int, mdx_md->type_defs[7].type, MD_ENUMERATION));
        cr_assert(eq(sz, mdx_md->type_defs[7].n_items, 3));
        cr_assert(eq(str, mdx_md->type_defs[7].items[0].name, "off"));
        cr_assert(eq(str, mdx_md->type_defs[7].items[0].description, "Off"));
        cr_assert(eq(i64, mdx_md->type_defs[7].items[2].value, -4));
        cr_assert(eq(int, mdx_md->type_defs[8].type, MD_CLOCK));
        cr_assert(eq(sz, mdx_md->n_log_categories, 2));
        cr_assert(eq(str, mdx_md->log_categories[0].name, "logEvents"));
        cr_assert(mdx_md->has_default_experiment);
        cr_assert(mdx_md->default_experiment.has_start && mdx_md->default_experiment.has_stop);
        cr_assert(eq(dbl, mdx_md->default_experiment.stop, 10));
        cr_assert(eq(dbl, mdx_md->default_experiment.tolerance, 1e-6));
        cr_assert(eq(dbl, mdx_md->default_experiment.step, 0.01));

        cr_assert(eq(sz, mdx_md->n_vars, 30));
        v = mdx_var("time");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_INDEPENDENT));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_CONTINUOUS));
        cr_assert(eq(int, v->initial, MD_INITIAL_NONE));
        cr_assert(not(v->has_start));

        /* Float32 start rounded to float; unit and min inherited from the type. */
        v = mdx_var("f32");
        cr_assert(eq(int, v->type, MD_FLOAT32));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_TUNABLE));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        cr_assert(not(v->initial_given));
        cr_assert(eq(dbl, v->start.f[0], (double)0.1f));
        cr_assert(eq(str, v->type_def->name, "Temperature"));
        cr_assert(eq(str, v->attrs.unit, "K"));
        cr_assert(v->attrs.has_min && v->attrs.unbounded);

        v = mdx_var("w");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_INPUT));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_CONTINUOUS));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        cr_assert(eq(dbl, v->start.f[0], 1.5));
        cr_assert(eq(str, v->attrs.display_unit, "rev/min"));
        cr_assert(eq(str, v->attrs.quantity, "AngularVelocity"));
        cr_assert(eq(dbl, v->attrs.min.f, -1000));
        cr_assert(eq(dbl, v->attrs.nominal.f, 10));
        cr_assert(eq(str, v->unit_def->name, "rad/s"));

        v = mdx_var("der(x)");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_LOCAL));
        cr_assert(eq(int, v->initial, MD_INITIAL_CALCULATED));
        cr_assert(v->has_derivative);
        cr_assert(eq(u32, v->derivative, 3));

        cr_assert(eq(i64, mdx_var("i8")->start.i[0], -128));
        cr_assert(eq(u64, mdx_var("u8")->start.u[0], 255));
        cr_assert(eq(i64, mdx_var("i16")->start.i[0], -100));
        cr_assert(eq(int, mdx_var("i16")->variability, MD_VARIABILITY_DISCRETE));
        cr_assert(eq(u64, mdx_var("u16")->start.u[0], 65535));
        cr_assert(eq(int, mdx_var("i32")->initial, MD_INITIAL_CALCULATED));
        cr_assert(eq(u64, mdx_var("u32")->start.u[0], 4294967295u));
        /* 2^53 + 1 is not a double: parsed without a float on the way. */
        cr_assert(eq(i64, mdx_var("i64")->start.i[0], INT64_C(9007199254740993)));
        cr_assert(eq(u64, mdx_var("u64")->start.u[0], UINT64_MAX));
        cr_assert(mdx_var("b")->start.b[0]);

        v = mdx_var("bArr");
        cr_assert(eq(sz, v->n_dims, 1));
        cr_assert(v->dims[0].has_start);
        cr_assert(eq(u64, v->dims[0].start, 4));
        cr_assert(eq(sz, v->start.n, 4));
        cr_assert(v->start.b[0] && !v->start.b[1] && !v->start.b[2] && v->start.b[3]);

        cr_assert(eq(str, mdx_var("s")->start.s[0], "hello & <world>"));
        v = mdx_var("bin");
        cr_assert(eq(sz, v->start.bin[0].len, 3));
        cr_assert(eq(u8, v->start.bin[0].data[0], 0x0a));
        cr_assert(eq(u8, v->start.bin[0].data[1], 0xff));
        cr_assert(eq(u8, v->start.bin[0].data[2], 0x10));
        cr_assert(eq(str, v->attrs.mime_type, "application/x-blob"));
        cr_assert(eq(u64, v->attrs.max_size, 64));
        cr_assert(eq(i64, mdx_var("mode")->start.i[0], -4));

        v = mdx_var("n");
        cr_assert(eq(int, v->causality, MD_CAUSALITY_STRUCTURAL_PARAMETER));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        v = mdx_var("vec");
        cr_assert(v->dims[0].has_vr && !v->dims[0].has_start);
        cr_assert(eq(u32, v->dims[0].vr, 18));
        cr_assert(eq(u64, md_var_elements(mdx_md, v), 3));
        cr_assert(eq(dbl, v->start.f[2], -300));
        v = mdx_var("mat");
        cr_assert(eq(u64, md_var_elements(mdx_md, v), 6));
        cr_assert(eq(i64, v->start.i[5], 6));
        v = mdx_var("fill");
        cr_assert(eq(u64, md_var_elements(mdx_md, v), 5));
        cr_assert(eq(sz, v->start.n, 1));

        /* Clocks: attributes inherited from the ClockType. */
        v = mdx_var("tick");
        cr_assert(eq(int, v->variability, MD_VARIABILITY_DISCRETE));
        cr_assert(eq(int, v->initial, MD_INITIAL_NONE));
        cr_assert(eq(int, v->attrs.clock.interval_variability, MD_INTERVAL_CONSTANT));
        cr_assert(eq(dbl, v->attrs.clock.interval_decimal, 0.25));
        cr_assert(eq(dbl, v->attrs.clock.shift_decimal, 0.125));
        cr_assert(eq(int, mdx_var("outTick")->attrs.clock.interval_variability, MD_INTERVAL_TRIGGERED));
        v = mdx_var("counter");
        cr_assert(eq(sz, v->n_clocks, 1));
        cr_assert(eq(u32, v->clocks[0], 22));
        cr_assert(v->has_previous);
        cr_assert(eq(u32, v->previous, 25));

        cr_assert(eq(dbl, mdx_var("c32")->start.f[0], (double)FLT_MAX));
        cr_assert(eq(int, mdx_var("c32")->initial, MD_INITIAL_EXACT));
        v = mdx_var("big");
        cr_assert(eq(dbl, v->start.f[0], -INFINITY));
        cr_assert(v->intermediate_update);
        cr_assert(eq(int, v->initial, MD_INITIAL_APPROX));
        v = mdx_var("T");
        cr_assert(eq(u32, v->vr, 30));
        cr_assert(eq(str, v->attrs.display_unit, "degF"));
        cr_assert(eq(ptr, (void *)md_find_vr(mdx_md, 30), (void *)v));
        cr_assert(eq(ptr, (void *)md_find_vr(mdx_md, 29), NULL));

        /* Model structure: variable indices and dependency kinds. */
        cr_assert(eq(sz, mdx_md->structure.outputs.n, 6));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[0].var, 3));
        cr_assert(mdx_md->structure.outputs.v[0].has_dependencies);
        cr_assert(eq(sz, mdx_md->structure.outputs.v[0].n_deps, 0));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[1].n_deps, 2));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[1].deps[0], 7));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[1].deps[1], 17));
        cr_assert(eq(int, mdx_md->structure.outputs.v[1].dep_kinds[1], MD_DEP_DEPENDENT));
        cr_assert(eq(ptr, mdx_md->structure.outputs.v[2].dep_kinds, NULL));
        cr_assert(not(mdx_md->structure.outputs.v[3].has_dependencies));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[5].var, 29));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[5].deps[2], 0));
        cr_assert(eq(int, mdx_md->structure.outputs.v[5].dep_kinds[0], MD_DEP_CONSTANT));
        cr_assert(eq(int, mdx_md->structure.outputs.v[5].dep_kinds[1], MD_DEP_FIXED));
        cr_assert(eq(int, mdx_md->structure.outputs.v[5].dep_kinds[2], MD_DEP_TUNABLE));
        cr_assert(eq(sz, mdx_md->structure.derivatives.n, 1));
        cr_assert(eq(sz, mdx_md->structure.derivatives.v[0].var, 4));
        cr_assert(eq(sz, mdx_md->structure.clocked_states.n, 1));
        cr_assert(eq(sz, mdx_md->structure.clocked_states.v[0].var, 24));
        cr_assert(eq(sz, mdx_md->structure.initial_unknowns.n, 3));
        cr_assert(eq(sz, mdx_md->structure.initial_unknowns.v[2].var, 29));
        cr_assert(eq(sz, mdx_md->structure.event_indicators.n, 1));
        cr_assert(eq(sz, mdx_md->structure.event_indicators.v[0].var, 26));
}

Test(model_description, fmi2_document_maps_onto_the_fmi3_model, .init = mdx_setup, .fini = mdx_teardown)
{
        const struct md_variable *v;

        cr_assert(eq(int, mdx_parse_file("md/valid/fmi2-cosim.xml", NULL), 0));
        cr_assert(eq(sz, mdx_diags.n, 0));
        cr_assert(eq(int, mdx_md->fmi, MD_FMI2));
        cr_assert(eq(str, mdx_md->instantiation_token, "{1AE5E10D-9521-4DE3-80B9-D0EAAA7D5AF1}"));
        cr_assert(eq(u32, mdx_md->number_of_event_indicators, 1));
        cr_assert(mdx_md->has_model_exchange);
        cr_assert(mdx_md->cs.present);
        cr_assert(mdx_md->cs.needs_execution_tool && mdx_md->cs.can_handle_variable_communication_step_size);
        cr_assert(mdx_md->cs.can_interpolate_inputs && mdx_md->cs.can_run_asynchronuously);
        cr_assert(mdx_md->cs.can_be_instantiated_only_once_per_process);
        cr_assert(mdx_md->cs.can_not_use_memory_management_functions);
        cr_assert(mdx_md->cs.can_get_and_set_fmu_state && mdx_md->cs.can_serialize_fmu_state);
        cr_assert(mdx_md->cs.provides_directional_derivatives);
        cr_assert(eq(u32, mdx_md->cs.max_output_derivative_order, 1));
        cr_assert(eq(sz, mdx_md->n_type_defs, 3));
        cr_assert(eq(int, mdx_md->type_defs[1].type, MD_ENUMERATION));
        cr_assert(eq(sz, mdx_md->type_defs[1].n_items, 2));
        cr_assert(eq(sz, mdx_md->n_vars, 13));

        v = mdx_var("h");
        cr_assert(eq(int, v->type, MD_FLOAT64));
        cr_assert(eq(int, v->initial, MD_INITIAL_EXACT));
        cr_assert(eq(str, v->attrs.unit, "m"));
        cr_assert(eq(str, v->attrs.display_unit, "mm"));
        cr_assert(eq(str, v->attrs.quantity, "Length"));
        /* derivative="2" is ScalarVariable index 2 (h), kept as h's vr. */
        v = mdx_var("der(h)");
        cr_assert(v->has_derivative);
        cr_assert(eq(u32, v->derivative, 1));
        cr_assert(eq(int, v->variability, MD_VARIABILITY_CONTINUOUS));
        cr_assert(eq(int, v->initial, MD_INITIAL_CALCULATED));
        cr_assert(mdx_var("v")->reinit);
        v = mdx_var("e");
        cr_assert(eq(int, v->variability, MD_VARIABILITY_TUNABLE));
        cr_assert(eq(dbl, v->start.f[0], 0.7));
        cr_assert(eq(dbl, v->attrs.max.f, 1));
        v = mdx_var("count");
        cr_assert(eq(int, v->type, MD_INT32));
        cr_assert(eq(int, v->initial, MD_INITIAL_CALCULATED));
        v = mdx_var("gear");
        cr_assert(eq(int, v->type, MD_ENUMERATION));
        cr_assert(eq(int, v->initial, MD_INITIAL_NONE), "FMI 2.0 inputs have no initial");
        cr_assert(eq(i64, v->start.i[0], 2));
        cr_assert(eq(str, mdx_var("label")->start.s[0], "bounce"));
        cr_assert(eq(i64, mdx_var("limit")->attrs.max.i, 10));

        /* vr 1 is a Real, an Integer, a Boolean and a String: one per base type. */
        cr_assert(eq(str, md_find_vr_type(mdx_md, MD_FLOAT64, 1)->name, "h"));
        cr_assert(eq(str, md_find_vr_type(mdx_md, MD_INT32, 1)->name, "count"));
        cr_assert(eq(str, md_find_vr_type(mdx_md, MD_BOOLEAN, 1)->name, "on"));
        cr_assert(eq(str, md_find_vr_type(mdx_md, MD_STRING, 1)->name, "label"));
        cr_assert(eq(str, md_find_vr_type(mdx_md, MD_ENUMERATION, 2)->name, "gear"));
        cr_assert(eq(str, md_find_vr_type(mdx_md, MD_FLOAT64, 2)->name, "der(h)"));

        cr_assert(eq(sz, mdx_md->structure.outputs.n, 3));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[1].var, 3));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[2].var, 7));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[2].deps[0], 9));
        cr_assert(eq(sz, mdx_md->structure.outputs.v[2].deps[1], 12));
        cr_assert(eq(sz, mdx_md->structure.derivatives.n, 2));
        cr_assert(eq(int, mdx_md->structure.derivatives.v[1].dep_kinds[0], MD_DEP_FIXED));
        cr_assert(eq(sz, mdx_md->structure.initial_unknowns.n, 3));
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
                char *buf = mdx_slurp(g.gl_pathv[i], &len);

                mdx_setup();
                cr_expect(eq(int, md_parse(buf, len, g.gl_pathv[i], NULL, &mdx_diags, &mdx_md), 0),
                          "%s", g.gl_pathv[i]);
                if (mdx_diags.n)
                        mdx_dump();
                cr_expect(eq(sz, mdx_diags.n, 0), "%s", g.gl_pathv[i]);
                mdx_teardown();
                free(buf);
        }
        globfree(&g);
}
