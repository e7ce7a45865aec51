/*
 * scenario: the example scenarios load in both SSP forms with the expected
 * components, connections, experiment and columns; a single FMU is a
 * scenario; overrides replace what the scenario says, and are checked
 * like it.
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

static void setup(void)
{
        sx_stage(&x, NULL, NULL);
}

static void teardown(void)
{
        sx_fini(&x);
}

static char *example(const char *name, bool ssp)
{
        char *p;

        cr_assert(asprintf(&p, ssp ? "%s/%s.ssp" : "%s/%s/SystemStructure.ssd",
                           FMUD_EXAMPLES_DIR, name) >= 0);
        return p;
}

static void load_ok(const char *path, const struct scenario_overrides *ov)
{
        int r = sx_load(&x, path, ov);

        if (r != 0)
                sx_dump(&x);
        cr_assert(eq(int, r, 0), "loading %s", path);
        cr_assert(x.s != NULL);
}

static void assert_columns(const char *const *names, size_t n)
{
        cr_assert(eq(sz, x.s->n_columns, n));
        for (size_t i = 0; i < n; i++)
                cr_assert(eq(str, x.s->columns[i].name, (char *)names[i]));
}

static void assert_conn(const char *to_comp, const char *to_var, const char *from_comp,
                        const char *from_var)
{
        const struct scenario_connection *c = sx_conn_to(&x, to_comp, to_var);
        size_t from = sx_comp(&x, from_comp);

        cr_assert(c != NULL, "%s.%s is fed", to_comp, to_var);
        cr_assert(eq(sz, c->from_comp, from));
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, from, from_var)));
        cr_assert(c->identity);
        cr_assert(eq(dbl, c->factor, 1.0));
        cr_assert(eq(dbl, c->offset, 0.0));
        cr_assert(eq(u64, c->elements, 1));
        cr_assert(eq(int, c->from_type, MD_FLOAT64));
}

static void check_msd(void)
{
        static const char *const cols[] = { "mass1.x1", "mass1.v1", "mass2.x2", "mass2.v2",
                                            "mass2.F" };
        const struct scenario_experiment *e = &x.s->experiment;
        const struct scenario_start *x2;

        cr_assert(eq(str, x.s->name, "msd"));
        cr_assert(not(x.s->single_fmu));
        cr_assert(eq(sz, x.s->n_components, 2));
        cr_assert(eq(str, x.s->components[0].name, "mass1"));
        cr_assert(eq(str, x.s->components[1].name, "mass2"));
        cr_assert(x.s->components[0].fmu->unpacked_dir != NULL);
        cr_assert(eq(u32, x.s->components[1].multirate, 1));
        cr_assert(eq(sz, x.s->n_connections, 3));
        /* Sorted by consumer: mass1.F, then mass2's inputs in description order. */
        cr_assert(eq(sz, x.s->connections[0].to_comp, 0));
        assert_conn("mass1", "F", "mass2", "F");
        assert_conn("mass2", "x1", "mass1", "x1");
        assert_conn("mass2", "v1", "mass1", "v1");
        cr_assert(eq(dbl, e->start, 0.0));
        cr_assert(eq(dbl, e->stop, 10.0));
        cr_assert(eq(dbl, e->step, 0.01));
        cr_assert(eq(dbl, e->budget, 1.0));
        cr_assert(eq(dbl, e->warp, 0.0));
        cr_assert(eq(u32, e->decimation, 10));
        cr_assert(eq(int, e->algorithm, SCENARIO_JACOBI));
        cr_assert(eq(sz, e->order[0], 0));
        cr_assert(eq(sz, e->order[1], 1));
        x2 = sx_start(&x, "mass2", "x2_0");
        cr_assert(x2 != NULL);
        cr_assert(eq(dbl, x2->value.f[0], 0.5));
        cr_assert(eq(u32, x2->vr, 9));
        cr_assert(eq(int, x2->type, MD_FLOAT64));
        assert_columns(cols, 5);
        cr_assert(not(x.s->any_might_return_early));
        cr_assert(x.s->all_can_get_set_state);
}

Test(scenario, loads_the_msd_example_from_its_ssd, .init = setup, .fini = teardown)
{
        char *p = example("msd", false);

        load_ok(p, NULL);
        check_msd();
        cr_assert(strstr(x.s->components[0].source, "/msd/resources/MsdMass1.fmu") != NULL);
        free(p);
}

Test(scenario, loads_the_msd_example_from_its_ssp, .init = setup, .fini = teardown)
{
        char *p = example("msd", true), *prefix, *source;

        load_ok(p, NULL);
        check_msd();
        /* FMUs inside a .ssp are copied into the cache by content hash, nowhere else. */
        cr_assert(asprintf(&source, "%s:resources/MsdMass1.fmu", p) >= 0);
        cr_assert(eq(str, x.s->components[0].source, source));
        cr_assert(asprintf(&prefix, "%s/ssp/", x.cache) >= 0);
        cr_assert(eq(int, strncmp(x.s->components[0].fmu->path, prefix, strlen(prefix)), 0));
        cr_assert(sx_clean(&x));
        free(source);
        free(prefix);
        free(p);
}

static void check_multirate(void)
{
        static const char *const cols[] = { "fast.x", "fast.y0", "slow.x", "slow.y0" };
        const struct scenario_connection *c;
        const struct scenario_start *k;

        cr_assert(eq(sz, x.s->n_components, 2));
        cr_assert(eq(u32, x.s->components[sx_comp(&x, "fast")].multirate, 1));
        cr_assert(eq(u32, x.s->components[sx_comp(&x, "slow")].multirate, 5));
        cr_assert(eq(int, x.s->components[sx_comp(&x, "slow")].fmu->md->fmi, MD_FMI2));
        cr_assert(eq(sz, x.s->n_connections, 1));
        c = sx_conn_to(&x, "slow", "u0");
        cr_assert(c != NULL);
        cr_assert(eq(sz, c->from_comp, sx_comp(&x, "fast")));
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, 0, "y0")));
        cr_assert(c->identity);
        k = sx_start(&x, "slow", "k");
        cr_assert(k != NULL);
        cr_assert(eq(dbl, k->value.f[0], 0.5));
        cr_assert(eq(dbl, x.s->experiment.step, 0.01));
        cr_assert(eq(dbl, x.s->experiment.stop, 2.0));
        cr_assert(eq(dbl, x.s->experiment.budget, SCENARIO_DEFAULT_BUDGET));
        cr_assert(not(x.s->experiment.budget_given));
        cr_assert(eq(u32, x.s->experiment.decimation, 1));
        assert_columns(cols, 4);
}

Test(scenario, loads_the_multirate_example_in_both_forms, .init = setup, .fini = teardown)
{
        for (int ssp = 0; ssp < 2; ssp++) {
                char *p = example("multirate", ssp);

                load_ok(p, NULL);
                check_multirate();
                scenario_free(x.s);
                x.s = NULL;
                free(p);
        }
}

static void check_intermediate(void)
{
        static const char *const cols[] = { "source.x", "probe.y", "probe.n_updates",
                                            "probe.last_u", "probe.last_t" };
        const struct scenario_component *probe = &x.s->components[sx_comp(&x, "probe")];
        const struct scenario_connection *c = sx_conn_to(&x, "probe", "u");

        cr_assert(probe->provides_intermediate_update);
        cr_assert(probe->might_return_early);
        cr_assert(probe->can_get_set_state);
        cr_assert(not(x.s->components[sx_comp(&x, "source")].provides_intermediate_update));
        cr_assert(x.s->any_might_return_early);
        cr_assert(x.s->all_can_get_set_state);
        cr_assert(c != NULL);
        cr_assert(eq(i64, (int64_t)c->from_var, sx_var(&x, sx_comp(&x, "source"), "x")));
        cr_assert(eq(dbl, x.s->experiment.step, 0.1));
        cr_assert(eq(dbl, x.s->experiment.stop, 1.0));
        assert_columns(cols, 5);
}

Test(scenario, loads_the_intermediate_update_example_in_both_forms, .init = setup, .fini = teardown)
{
        for (int ssp = 0; ssp < 2; ssp++) {
                char *p = example("intermediate", ssp);

                load_ok(p, NULL);
                check_intermediate();
                scenario_free(x.s);
                x.s = NULL;
                free(p);
        }
}

Test(scenario, loads_a_folder_holding_a_system_structure, .init = setup, .fini = teardown)
{
        char *p;

        cr_assert(asprintf(&p, "%s/msd", FMUD_EXAMPLES_DIR) >= 0);
        load_ok(p, NULL);
        check_msd();
        free(p);
}

Test(scenario, a_single_fmu_is_a_scenario_named_after_its_model, .init = setup, .fini = teardown)
{
        static const char *const cols[] = { "x", "der_x", "y0", "y1", "y2", "y3", "y4", "y5",
                                            "y6", "y7", "y8", "y9" };
        char *p;

        cr_assert(asprintf(&p, "%s/LinearOde.fmu", FMUD_TEST_FMU_DIR) >= 0);
        load_ok(p, NULL);
        cr_assert(x.s->single_fmu);
        cr_assert(eq(str, x.s->name, "LinearOde"));
        cr_assert(eq(sz, x.s->n_components, 1));
        cr_assert(eq(str, x.s->components[0].name, "LinearOde"));
        cr_assert(eq(sz, x.s->n_connections, 0));
        cr_assert(eq(dbl, x.s->experiment.start, 0.0));
        cr_assert(eq(dbl, x.s->experiment.stop, 5.0));
        cr_assert(eq(dbl, x.s->experiment.step, 0.01));
        assert_columns(cols, 12);
        free(p);
}

Test(scenario, a_single_fmu_records_neither_clocks_nor_clocked_outputs, .init = setup,
     .fini = teardown)
{
        /* ClockedDeriv's outputs: y1, y2, the clocked cy and hy, and the output Clock hi. */
        static const char *const cols[] = { "y1", "y2" };
        char *p;

        cr_assert(asprintf(&p, "%s/ClockedDeriv.fmu", FMUD_TEST_FMU_DIR) >= 0);
        load_ok(p, NULL);
        assert_columns(cols, 2);
        free(p);
}

Test(scenario, a_single_fmu_names_array_columns_by_element, .init = setup, .fini = teardown)
{
        char *p;
        bool m21 = false, v4 = false;

        cr_assert(asprintf(&p, "%s/Feedthrough.fmu", FMUD_TEST_FMU_DIR) >= 0);
        load_ok(p, NULL);
        for (size_t i = 0; i < x.s->n_columns; i++) {
                const struct scenario_column *c = &x.s->columns[i];

                if (!strcmp(c->name, "Float64_matrix_output[2,1]")) {
                        m21 = true;
                        cr_assert(eq(u64, c->element, 2));
                }
                v4 |= !strcmp(c->name, "Float64_vector_output[4]");
        }
        cr_assert(m21 && v4);
        cr_assert(eq(dbl, x.s->experiment.stop, 1.0));
        cr_assert(eq(dbl, x.s->experiment.step, 0.1));
        free(p);
}

Test(scenario, overrides_replace_what_the_scenario_says, .init = setup, .fini = teardown)
{
        struct scenario_assign starts[] = { { "mass1.m1", "2" }, { "mass2.x2_0", "0.25" } };
        struct scenario_assign multirate[] = { { "mass2", "2" } };
        const char *const record[] = { "mass1.x1", "mass2.x2" };
        struct scenario_overrides ov = {
                .has_start = true, .start = 1, .has_stop = true, .stop = 20,
                .has_step = true, .step = 0.001, .has_budget = true, .budget = INFINITY,
                .has_warp = true, .warp = 2, .has_decimation = true, .decimation = 5,
                .has_algorithm = true, .algorithm = SCENARIO_GAUSS_SEIDEL, .order = "mass2 mass1",
                .n_starts = 2, .starts = starts, .n_multirate = 1, .multirate = multirate,
                .n_record = 2, .record = record,
        };
        const struct scenario_experiment *e;
        char *p = example("msd", false);

        load_ok(p, &ov);
        e = &x.s->experiment;
        cr_assert(eq(dbl, e->start, 1.0));
        cr_assert(eq(dbl, e->stop, 20.0));
        cr_assert(eq(dbl, e->step, 0.001));
        cr_assert(isinf(e->budget));
        cr_assert(e->budget_given);
        cr_assert(eq(dbl, e->warp, 2.0));
        cr_assert(eq(u32, e->decimation, 5));
        cr_assert(eq(int, e->algorithm, SCENARIO_GAUSS_SEIDEL));
        cr_assert(eq(sz, e->order[0], 1));
        cr_assert(eq(sz, e->order[1], 0));
        /* mass2 steps first: its output F feeds mass1 sequentially, the rest hold. */
        cr_assert(sx_conn_to(&x, "mass1", "F")->sequential);
        cr_assert(not(sx_conn_to(&x, "mass2", "x1")->sequential));
        cr_assert(eq(u32, x.s->components[1].multirate, 2));
        cr_assert(eq(dbl, sx_start(&x, "mass1", "m1")->value.f[0], 2.0));
        cr_assert(eq(str, sx_start(&x, "mass1", "m1")->origin, "--start"));
        /* --start beats the scenario's own binding */
        cr_assert(eq(dbl, sx_start(&x, "mass2", "x2_0")->value.f[0], 0.25));
        assert_columns(record, 2);
        free(p);
}

Test(scenario, a_single_fmu_takes_bare_names_in_overrides, .init = setup, .fini = teardown)
{
        struct scenario_assign starts[] = { { "k", "3" }, { "u0", "1.5" } };
        const char *const record[] = { "x", "LinearOde.y0" };
        struct scenario_overrides ov = { .n_starts = 2, .starts = starts, .n_record = 2,
                                         .record = record };
        char *p;

        cr_assert(asprintf(&p, "%s/LinearOde.fmu", FMUD_TEST_FMU_DIR) >= 0);
        load_ok(p, &ov);
        cr_assert(eq(dbl, sx_start(&x, "LinearOde", "k")->value.f[0], 3.0));
        cr_assert(eq(u32, sx_start(&x, "LinearOde", "u0")->vr, 10));
        cr_assert(eq(sz, x.s->n_columns, 2));
        cr_assert(eq(str, x.s->columns[1].name, "y0"));
        free(p);
}

Test(scenario, overrides_are_checked_like_the_scenario, .init = setup, .fini = teardown)
{
        struct scenario_assign starts[] = { { "mass1.x1", "1" }, { "mass1.nope", "1" },
                                            { "mass1.substeps", "2.5" } };
        struct scenario_assign multirate[] = { { "mass2", "0" }, { "mass1", "1.5" } };
        const char *const record[] = { "mass3.x" };
        struct scenario_overrides ov = {
                .has_stop = true, .stop = -1, .has_decimation = true, .decimation = 0,
                .n_starts = 3, .starts = starts, .n_multirate = 2, .multirate = multirate,
                .n_record = 1, .record = record,
        };
        char *p = example("msd", false);

        cr_assert(eq(int, sx_load(&x, p, &ov), -EINVAL));
        cr_assert(x.s == NULL);
        cr_assert(sx_has(&x, "mass1.x1", "cannot be set"));
        cr_assert(sx_has(&x, "mass1.nope", "unknown variable"));
        cr_assert(sx_has(&x, "mass1.substeps", "not a value of the variable's type"));
        cr_assert(sx_has(&x, "--multirate", "\"0\" is not a positive integer"));
        cr_assert(sx_has(&x, "--multirate", "\"1.5\" is not a positive integer"));
        cr_assert(sx_has(&x, "--decimation", "not a positive integer"));
        cr_assert(sx_has(&x, "stop time -1 is not after start time 0", NULL));
        cr_assert(sx_has(&x, "mass3.x", "unknown variable"));
        free(p);
}

Test(scenario, start_values_an_fmu_would_not_get_as_given_are_refused, .init = setup,
     .fini = teardown)
{
        /* Feedthrough: one input per type. */
        struct scenario_assign starts[] = { { "Float32_input", "1e-50" },
                                            { "Float64_input", "NaN" } };
        struct scenario_overrides ov = { .n_starts = 2, .starts = starts };
        char *p;

        cr_assert(asprintf(&p, "%s/Feedthrough.fmu", FMUD_TEST_FMU_DIR) >= 0);
        cr_assert(eq(int, sx_load(&x, p, &ov), -EINVAL));
        cr_assert(sx_has(&x, "Float32_input", "would become 0"));
        cr_assert(sx_has(&x, "Float64_input", "NaN is never passed"));
        free(p);
}

Test(scenario, assign_split_cuts_at_the_first_equals_sign)
{
        char arg[] = "a.b=c=d", bad[] = "=x", none[] = "abc";
        struct scenario_assign a;

        cr_assert(eq(int, scenario_assign_split(arg, &a), 0));
        cr_assert(eq(str, (char *)a.name, "a.b"));
        cr_assert(eq(str, (char *)a.value, "c=d"));
        cr_assert(eq(int, scenario_assign_split(bad, &a), -EINVAL));
        cr_assert(eq(int, scenario_assign_split(none, &a), -EINVAL));
}

Test(scenario, a_missing_file_is_an_errno_not_a_refusal, .init = setup, .fini = teardown)
{
        char *p;

        cr_assert(asprintf(&p, "%s/NoSuchModel.fmu", x.dir) >= 0);
        cr_assert(eq(int, sx_load(&x, p, NULL), -ENOENT));
        cr_assert(sx_has(&x, "NoSuchModel.fmu", "cannot be read: No such file or directory"));
        free(p);
        cr_assert(asprintf(&p, "%s/nothing.ssp", x.dir) >= 0);
        cr_assert(eq(int, sx_load(&x, p, NULL), -ENOENT));
        free(p);
        cr_assert(asprintf(&p, "%s/nothing.ssd", x.dir) >= 0);
        cr_assert(eq(int, sx_load(&x, p, NULL), -ENOENT));
        free(p);
        cr_assert(eq(int, sx_load(&x, x.dir, NULL), -ENOENT));
}

Test(scenario, a_component_named_like_another_with_a_dot_loads_when_no_name_clashes,
     .init = setup, .fini = teardown)
{
        /* "ft" has "stage.length", "ft.other" has "length": "ft.stage.length" and "ft.other.length". */
        sx_write(x.dir, "SystemStructure.ssd",
                 "<?xml version=\"1.0\"?>\n"
                 "<ssd:SystemStructureDescription version=\"1.0\" name=\"dots\" "
                 "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">\n"
                 "<ssd:System name=\"s\"><ssd:Elements>\n"
                 "<ssd:Component name=\"ft\" source=\"resources/Feedthrough.fmu\"/>\n"
                 "<ssd:Component name=\"ft.other\" source=\"resources/Feedthrough.fmu\"/>\n"
                 "</ssd:Elements></ssd:System></ssd:SystemStructureDescription>\n");
        load_ok(NULL, NULL);
        cr_assert(eq(sz, x.s->n_components, 2));
}
