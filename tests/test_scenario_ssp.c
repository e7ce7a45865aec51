/*
 * scenario_ssp: SSP features resolved into the flat scenario: parameter
 * bindings (inline, from an .ssv, with a prefix, by precedence), unit
 * conversion and LinearTransformation folded into one factor and offset,
 * nested systems flattened, Gauss-Seidel connections and order.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_scenario_fixture.h"

static struct sx x;

static void teardown(void)
{
        sx_fini(&x);
}

static void load_fixture(const char *fixture, const char *const *extra)
{
        int r;

        sx_stage(&x, fixture, extra);
        r = sx_load(&x, NULL, NULL);
        if (r != 0)
                sx_dump(&x);
        cr_assert(eq(int, r, 0), "loading %s", fixture);
        cr_assert(sx_clean(&x));
}

static double start_of(const char *comp, const char *var)
{
        const struct scenario_start *s = sx_start(&x, comp, var);

        cr_assert(s != NULL, "%s.%s has a start value", comp, var);
        return md_type_is_float(s->type) ? s->value.f[0] : (double)s->value.i[0];
}

Test(scenario_ssp, binds_parameters_inline_and_from_an_ssv_with_a_prefix, .fini = teardown)
{
        static const char *const extra[] = { "params.ssv", NULL };
        const struct scenario_start *sub;

        load_fixture("valid/ssv_binding/SystemStructure.ssd", extra);
        /* params.ssv (system level, prefix "mass1."): 2500 g is 2.5 kg, beating the
         * component's own m1 = 5. */
        cr_assert(epsilon_eq(dbl, start_of("mass1", "m1"), 2.5, 1e-12));
        cr_assert(eq(dbl, start_of("mass1", "d1"), 0.75));
        cr_assert(eq(dbl, start_of("mass1", "substeps"), 20));
        sub = sx_start(&x, "mass1", "substeps");
        cr_assert(eq(int, sub->type, MD_INT32));
        cr_assert(strstr(sub->origin, "params.ssv:") != NULL, "%s", sub->origin);
        /* Only the component binds k1; the inline system set binds mass2.kc. */
        cr_assert(eq(dbl, start_of("mass1", "k1"), 7));
        cr_assert(eq(dbl, start_of("mass2", "kc"), 20));
        cr_assert(eq(dbl, start_of("mass2", "dc"), 0.25));
        cr_assert(eq(dbl, start_of("mass2", "substeps"), 3));
        cr_assert(eq(sz, x.s->components[0].n_starts, 4));
        cr_assert(eq(sz, x.s->components[1].n_starts, 3));
}

Test(scenario_ssp, folds_unit_conversion_and_linear_transformation, .fini = teardown)
{
        const struct scenario_connection *c;

        load_fixture("valid/units.ssd", NULL);
        /* m to mm (x1000), then factor 2 and offset 1 in the target unit. */
        c = sx_conn_to(&x, "ft", "Float64_input");
        cr_assert(c != NULL);
        cr_assert(epsilon_eq(dbl, c->factor, 2000.0, 1e-9));
        cr_assert(eq(dbl, c->offset, 1.0));
        cr_assert(not(c->identity));
        /* suppressUnitConversion: the value passes as it is. */
        c = sx_conn_to(&x, "raw", "Float64_input");
        cr_assert(eq(dbl, c->factor, 1.0));
        cr_assert(c->identity);
        /* suppressUnitConversion with a transformation: only the transformation. */
        c = sx_conn_to(&x, "mass2", "x1");
        cr_assert(eq(dbl, c->factor, 0.5));
        cr_assert(eq(dbl, c->offset, -0.25));
        /* Float32 to Float64 through an identity LinearTransformation. */
        c = sx_conn_to(&x, "wide", "Float64_input");
        cr_assert(eq(int, c->from_type, MD_FLOAT32));
        cr_assert(eq(int, c->to_type, MD_FLOAT64));
        cr_assert(eq(dbl, c->factor, 1.0));
        cr_assert(not(c->identity));
}

Test(scenario_ssp, converts_units_by_their_base_units)
{
        struct md_unit m = { .name = "m", .has_base_unit = true, .base = { .m = 1, .factor = 1 } };
        struct md_unit mm = { .name = "mm", .has_base_unit = true,
                              .base = { .m = 1, .factor = 0.001 } };
        struct md_unit ms = { .name = "m/s", .has_base_unit = true,
                              .base = { .m = 1, .s = -1, .factor = 1 } };
        struct md_unit k = { .name = "K", .has_base_unit = true, .base = { .K = 1, .factor = 1 } };
        struct md_unit degc = { .name = "degC", .has_base_unit = true,
                                .base = { .K = 1, .factor = 1, .offset = 273.15 } };
        struct md_unit degf = { .name = "degF", .has_base_unit = true,
                                .base = { .K = 1, .factor = 5.0 / 9,
                                          .offset = 273.15 - 32 * 5.0 / 9 } };
        struct md_unit bare = { .name = "m" };
        double f, o;

        cr_assert(eq(int, scenario_unit_convert(&m, &mm, &f, &o), 0));
        cr_assert(epsilon_eq(dbl, f, 1000.0, 1e-9));
        cr_assert(eq(dbl, o, 0.0));
        cr_assert(eq(int, scenario_unit_convert(&mm, &m, &f, &o), 0));
        cr_assert(epsilon_eq(dbl, f, 0.001, 1e-15));
        cr_assert(eq(int, scenario_unit_convert(&degc, &k, &f, &o), 0));
        cr_assert(eq(dbl, f, 1.0));
        cr_assert(epsilon_eq(dbl, o, 273.15, 1e-12));
        cr_assert(eq(int, scenario_unit_convert(&degc, &degf, &f, &o), 0));
        /* 100 degC is 212 degF */
        cr_assert(epsilon_eq(dbl, f * 100 + o, 212.0, 1e-9));
        cr_assert(eq(int, scenario_unit_convert(&ms, &m, &f, &o), -EDOM));
        cr_assert(eq(int, scenario_unit_convert(&k, &m, &f, &o), -EDOM));
        /* A unit without a definition converts to itself only, by name. */
        cr_assert(eq(int, scenario_unit_convert(&bare, &m, &f, &o), 0));
        cr_assert(eq(int, scenario_unit_convert(&bare, &mm, &f, &o), -EDOM));
}

/*
 * LinearOde's x0 and x have no unit, their connectors declare K: a binding
 * of 26.85 degC is 300.0 K, as the connection from x (K) to b.u0 (degC)
 * converts; the binding's unit was ignored and x started at 26.85.
 */
Test(scenario_ssp, a_binding_converts_into_its_connectors_declared_unit, .fini = teardown)
{
        const struct scenario_connection *c;

        load_fixture("valid/connector_units.ssd", NULL);
        cr_assert(epsilon_eq(dbl, start_of("a", "x0"), 300.0, 1e-12), "%.17g",
                  start_of("a", "x0"));
        c = sx_conn_to(&x, "b", "u0");
        cr_assert(eq(dbl, c->factor, 1.0));
        cr_assert(epsilon_eq(dbl, c->offset, -273.15, 1e-12));
}

/*
 * A binding with a unit for a variable that has none (nor a connector
 * declaring one) is taken as it is, as FMI reads a variable without a
 * unit, and says so: 1000 mm stays 1000, where the author may have meant
 * 1 (m). It was taken silently, while a unit that does not convert is
 * refused.
 */
Test(scenario_ssp, a_binding_with_a_unit_for_a_variable_without_one_is_taken_with_a_warning,
     .fini = teardown)
{
        load_fixture("valid/unit_to_unitless.ssd", NULL);
        cr_assert(eq(dbl, start_of("a", "x0"), 1000.0));
        cr_assert(sx_has(&x, "'mm'", "has no unit"), "no warning");
}

/* An FMU's unit without a BaseUnit is the SSD's of the same name, which says how it converts. */
Test(scenario_ssp, an_fmu_unit_without_a_base_unit_converts_as_the_ssd_defines_it,
     .fini = teardown)
{
        const struct scenario_connection *c;

        load_fixture("valid/unit_without_base.ssd", NULL);
        c = sx_conn_to(&x, "b", "u0");
        cr_assert(epsilon_eq(dbl, c->factor, 1000.0, 1e-9), "%.17g", c->factor);
        cr_assert(eq(dbl, c->offset, 0.0));
}

/* A system connector of kind unspecified takes the kind the connection needs (SSP). */
Test(scenario_ssp, a_connector_of_kind_unspecified_passes_a_signal_through, .fini = teardown)
{
        const struct scenario_connection *c;
        size_t a;

        load_fixture("valid/unspecified_connector.ssd", NULL);
        a = sx_comp(&x, "sub.a");
        c = sx_conn_to(&x, "b", "u0");
        cr_assert(c != NULL);
        cr_assert(eq(sz, c->from_comp, a));
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, a, "x")));
        cr_assert(not(c->parameter));
}

Test(scenario_ssp, flattens_nested_systems_through_their_connectors, .fini = teardown)
{
        static const char *const names[] = { "mass1", "sub.inner.mass2", "sub.probe" };
        const struct scenario_connection *c;
        size_t mass1, mass2;

        load_fixture("valid/nested.ssd", NULL);
        cr_assert(eq(sz, x.s->n_components, 3));
        for (size_t i = 0; i < 3; i++)
                cr_assert(eq(str, x.s->components[i].name, (char *)names[i]));
        mass1 = sx_comp(&x, "mass1");
        mass2 = sx_comp(&x, "sub.inner.mass2");
        cr_assert(eq(sz, x.s->n_connections, 4));
        /* m into the system's mm connector and back to m: the factors cancel. */
        c = sx_conn_to(&x, "sub.inner.mass2", "x1");
        cr_assert(eq(sz, c->from_comp, mass1));
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, mass1, "x1")));
        cr_assert(epsilon_eq(dbl, c->factor, 1.0, 1e-12));
        cr_assert(eq(dbl, c->offset, 0.0));
        /* written end-first (sub.v1 as start): the direction follows the kinds */
        c = sx_conn_to(&x, "sub.inner.mass2", "v1");
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, mass1, "v1")));
        /* one system input feeding two components */
        c = sx_conn_to(&x, "sub.probe", "u0");
        cr_assert(eq(sz, c->from_comp, mass1));
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, mass1, "v1")));
        c = sx_conn_to(&x, "mass1", "F");
        cr_assert(eq(sz, c->from_comp, mass2));
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, mass2, "F")));
        cr_assert(strstr(c->origin, "SystemStructure.ssd:") != NULL);
        /* a binding on the top system by hierarchical name */
        cr_assert(eq(dbl, start_of("sub.inner.mass2", "m2"), 3.0));
        /* columns use the flattened names */
        cr_assert(eq(str, x.s->columns[2].name, "sub.inner.mass2.x2"));
}

Test(scenario_ssp, gauss_seidel_connections_order_the_components, .fini = teardown)
{
        load_fixture("valid/gauss_seidel.ssd", NULL);
        cr_assert(eq(int, x.s->experiment.algorithm, SCENARIO_GAUSS_SEIDEL));
        cr_assert(eq(sz, x.s->experiment.order[0], sx_comp(&x, "mass1")));
        cr_assert(eq(sz, x.s->experiment.order[1], sx_comp(&x, "mass2")));
        cr_assert(sx_conn_to(&x, "mass2", "x1")->sequential);
        cr_assert(sx_conn_to(&x, "mass2", "v1")->sequential);
        cr_assert(not(sx_conn_to(&x, "mass1", "F")->sequential));
        cr_assert(eq(u32, x.s->components[sx_comp(&x, "mass2")].multirate, 2));
        /* without stepSize: the smallest step of the components' DefaultExperiments */
        cr_assert(eq(dbl, x.s->experiment.step, 0.01));
        /* without a DefaultExperiment: 0 to 1 */
        cr_assert(eq(dbl, x.s->experiment.start, 0.0));
        cr_assert(eq(dbl, x.s->experiment.stop, 1.0));
}

Test(scenario_ssp, an_order_override_reorders_gauss_seidel, .fini = teardown)
{
        struct scenario_overrides ov = { .order = "mass2" };

        sx_stage(&x, "valid/gauss_seidel.ssd", NULL);
        /* The GaussSeidel inputs need mass1 before mass2: this order contradicts them. */
        cr_assert(eq(int, sx_load(&x, NULL, &ov), -EINVAL));
        cr_assert(sx_has(&x, "producer 'mass1' comes later in the order", NULL));
}
