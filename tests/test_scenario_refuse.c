/*
 * scenario_refuse: every scenario rule, broken once by a fixture in
 * tests/ssp/invalid/<rule>.ssd. Each is refused with -EINVAL, a message
 * that names the file, line and element, no scenario, and nothing left
 * behind (the scenario folder is unchanged, the cache holds no temporary
 * file).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "test_scenario_fixture.h"

static struct sx x;

static void teardown(void)
{
        sx_fini(&x);
}

/* Load invalid/<rule>.ssd; one diagnostic must contain a and b (b may be NULL). */
static void refuses(const char *rule, const char *a, const char *b)
{
        char fixture[128];
        int r;

        snprintf(fixture, sizeof(fixture), "invalid/%s.ssd", rule);
        sx_stage(&x, fixture, NULL);
        r = sx_load(&x, NULL, NULL);
        if (r != -EINVAL || !sx_has(&x, a, b))
                sx_dump(&x);
        cr_assert(eq(int, r, -EINVAL), "%s", rule);
        cr_assert(x.s == NULL);
        cr_assert(sx_has(&x, a, b), "%s: a diagnostic with '%s' and '%s'", rule, a, b ? b : "");
        cr_assert(sx_has(&x, "SystemStructure.ssd", NULL), "%s: the file is named", rule);
        cr_assert(sx_clean(&x), "%s left something behind", rule);
}

Test(scenario_refuse, an_unknown_fmu_file, .fini = teardown)
{
        refuses("unknown_fmu", "SystemStructure.ssd:10: 'ghost'", "resources/NoSuchModel.fmu");
}

Test(scenario_refuse, an_unknown_component_in_a_connection, .fini = teardown)
{
        refuses("unknown_component", ":16: 'nobody'", "unknown element");
}

Test(scenario_refuse, an_unknown_connector_in_a_connection, .fini = teardown)
{
        refuses("unknown_connector", ":16: 'mass1.x3'", "unknown connector");
}

Test(scenario_refuse, a_declared_connector_the_fmu_lacks, .fini = teardown)
{
        refuses("unknown_declared_connector", ":12: 'nothing'", "has no variable of that name");
}

Test(scenario_refuse, a_connector_kind_that_is_not_the_causality, .fini = teardown)
{
        refuses("kind_mismatch", "'x1'", "has kind input, but the FMU variable's causality is output");
}

Test(scenario_refuse, a_connector_type_that_is_not_the_variables, .fini = teardown)
{
        refuses("connector_type_mismatch", "'F'", "has type Integer, but the FMU variable is Float64");
}

Test(scenario_refuse, a_float64_into_an_int32, .fini = teardown)
{
        refuses("type_mismatch", ":16: 'b.Int32_input'", "type mismatch: Float64 'a.Float64_output'");
}

Test(scenario_refuse, a_float32_into_a_float64_without_transformation, .fini = teardown)
{
        refuses("float_width_mismatch", "type mismatch: Float32", "Float64 'b.Float64_input'");
}

Test(scenario_refuse, arrays_of_different_shapes, .fini = teardown)
{
        refuses("shape_mismatch", "shape mismatch", "is [3,2], 'b.Float64_vector_input' is [4]");
}

Test(scenario_refuse, an_input_fed_twice, .fini = teardown)
{
        refuses("fed_twice", ":17: 'mass2.x1'", "fed twice: also by the connection at line 16");
}

Test(scenario_refuse, a_connection_between_two_inputs, .fini = teardown)
{
        refuses("direction_inputs", "'mass1.F' and 'mass2.x1' are both inputs", NULL);
}

Test(scenario_refuse, a_connection_between_two_outputs, .fini = teardown)
{
        refuses("direction_outputs", "'mass1.x1' and 'mass2.F' are both outputs", NULL);
}

Test(scenario_refuse, a_binding_of_a_systems_own_connector_says_it_is_not_supported,
     .fini = teardown)
{
        refuses("binding_system_connector", "a value for the connector 'P' of system 'root' itself",
                "not supported; bind the component variable it is connected to");
}

Test(scenario_refuse, an_output_into_a_parameter_through_an_unspecified_connector,
     .fini = teardown)
{
        refuses("unspecified_output_to_parameter", "feeds the parameter",
                "a parameter is fed by a calculated parameter, not by an output");
}

Test(scenario_refuse, an_output_into_a_parameter, .fini = teardown)
{
        refuses("direction_parameter", "feeds the parameter 'mass2.x2_0'",
                "a parameter is fed by a calculated parameter, not by an output");
}

Test(scenario_refuse, units_with_different_base_units, .fini = teardown)
{
        refuses("unit_base_mismatch", "'mass1.v1 -> mass2.x1'", "the base units differ");
}

Test(scenario_refuse, a_transformation_on_an_integer_connection, .fini = teardown)
{
        refuses("transform_non_real", "applies to Float32/Float64 only", "Int32 'a.Int32_output'");
}

Test(scenario_refuse, a_mapping_transformation, .fini = teardown)
{
        refuses("mapping_transformation", ":20:", "<BooleanMappingTransformation> is not supported");
}

Test(scenario_refuse, a_multirate_factor_of_zero, .fini = teardown)
{
        refuses("multirate_zero", "'mass2'", "multirate factor \"0\" is not a positive integer");
}

Test(scenario_refuse, a_fractional_multirate_factor, .fini = teardown)
{
        refuses("multirate_fraction", "'mass2'", "multirate factor \"1.5\" is not a positive integer");
}

Test(scenario_refuse, a_multirate_factor_for_no_component, .fini = teardown)
{
        refuses("multirate_unknown", "'mass3'", "unknown component");
}

Test(scenario_refuse, a_binding_to_an_unknown_variable, .fini = teardown)
{
        refuses("binding_unknown", ":16: 'nope'", "unknown variable");
}

Test(scenario_refuse, a_binding_to_a_calculated_output, .fini = teardown)
{
        refuses("binding_output", "'x1'",
                "only variables with initial=\"exact\" or \"approx\" (parameters, states), "
                "inputs and structural parameters can be bound, and it is calculated");
}

Test(scenario_refuse, a_binding_of_the_wrong_type, .fini = teardown)
{
        refuses("binding_type_mismatch", "'m1'", "a Boolean value for Float64 variable");
}

Test(scenario_refuse, a_binding_out_of_range, .fini = teardown)
{
        refuses("binding_bad_value", "'substeps'", "outside the range of the variable's type");
}

Test(scenario_refuse, a_binding_whose_ssv_is_missing, .fini = teardown)
{
        refuses("binding_unknown_ssv", "source 'missing.ssv' cannot be opened", NULL);
}

Test(scenario_refuse, two_elements_with_one_name, .fini = teardown)
{
        refuses("duplicate_element", ":12: 'mass1'", "two elements of system 's' have this name");
}

Test(scenario_refuse, a_component_that_is_not_an_fmu, .fini = teardown)
{
        refuses("component_type", "'inner'", "application/x-ssp-package' is not supported");
}

Test(scenario_refuse, a_misspelt_setting, .fini = teardown)
{
        refuses("settings_unknown", "<Settings> has no attribute 'stepsize'", NULL);
}

Test(scenario_refuse, a_stop_time_before_the_start_time, .fini = teardown)
{
        refuses("stop_before_start", "stop time 1 is not after start time 5", NULL);
}

Test(scenario_refuse, gauss_seidel_connections_in_a_loop, .fini = teardown)
{
        refuses("gauss_seidel_loop", "the Gauss-Seidel connections form a loop", NULL);
}

Test(scenario_refuse, recording_an_unknown_variable, .fini = teardown)
{
        refuses("record_unknown", "'mass1.x9'", "unknown variable");
}

Test(scenario_refuse, an_output_clock_connected_to_a_time_based_input_clock, .fini = teardown)
{
        refuses("connect_clock_timed", ":16: 'c2.tick'", "a connected input Clock must be "
                "triggered (intervalVariability=\"triggered\"): the FMU times its time-based "
                "Clocks itself (FMI 3.0 section 2.2.8.2)");
}

Test(scenario_refuse, an_output_clock_connected_to_a_value, .fini = teardown)
{
        refuses("connect_clock_value", ":16: 'c2.cu'", "type mismatch: Clock 'c1.hi' feeds "
                "Float64 'c2.cu'");
}

Test(scenario_refuse, a_connected_local_variable, .fini = teardown)
{
        refuses("connect_local", ":16: 'ball.der_h'", "a variable of causality local cannot be "
                "connected");
}

Test(scenario_refuse, two_components_whose_variables_share_a_full_name, .fini = teardown)
{
        refuses("name_clash", ":12: 'ft.stage'", "component 'ft' variable 'stage.length' and "
                "component 'ft.stage' variable 'length' are both named 'ft.stage.length'");
}

Test(scenario_refuse, a_source_with_a_uri_scheme, .fini = teardown)
{
        refuses("source_scheme", "'mass1'", "a URI scheme other than file:");
}

Test(scenario_refuse, every_problem_at_once, .fini = teardown)
{
        /* Connections are still checked when a component failed to import. */
        sx_stage(&x, NULL, NULL);
        sx_write(x.dir, "SystemStructure.ssd",
                 "<?xml version=\"1.0\"?>\n"
                 "<ssd:SystemStructureDescription version=\"1.0\" name=\"many\" "
                 "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">\n"
                 "<ssd:System name=\"s\"><ssd:Elements>\n"
                 "<ssd:Component name=\"a\" source=\"resources/Nothing.fmu\"/>\n"
                 "<ssd:Component name=\"b\" source=\"resources/MsdMass1.fmu\"/>\n"
                 "<ssd:Component name=\"c\" source=\"resources/MsdMass2.fmu\"/>\n"
                 "</ssd:Elements><ssd:Connections>\n"
                 "<ssd:Connection startElement=\"a\" startConnector=\"y\" endElement=\"b\" endConnector=\"F\"/>\n"
                 "<ssd:Connection startElement=\"b\" startConnector=\"x1\" endElement=\"c\" endConnector=\"F\"/>\n"
                 "<ssd:Connection startElement=\"b\" startConnector=\"v1\" endElement=\"c\" endConnector=\"x1\"/>\n"
                 "</ssd:Connections></ssd:System></ssd:SystemStructureDescription>\n");
        cr_assert(eq(int, sx_load(&x, NULL, NULL), -EINVAL));
        cr_assert(sx_has(&x, ":4: 'a'", "Nothing.fmu"));
        cr_assert(sx_has(&x, ":9:", "both outputs"));
        cr_assert(sx_has(&x, ":10:", "the base units differ"));
        cr_assert(sx_clean(&x));
}
