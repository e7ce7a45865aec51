/*
 * master: structural parameters set at load (FMI 3.0 sections 2.4.7.2,
 * 2.3.3 and 3.2): a parameter binding or --start sets one in
 * Configuration Mode before Initialization Mode, and every array it
 * sizes takes the new size in the recorded columns, the master's values
 * and the connections; a size of 0 where the parameter's min allows it
 * (section 2.4.7.2) leaves an array with no elements, which has no
 * column and whose connection carries nothing; values out of the
 * description's min/max and shapes that no longer match are refused at
 * load. With VectorGain
 * (y[n] = k u[n], n fixed, 1..16, start 3) and Feedthrough (vectors of
 * tunable length n, 0..64, start 4).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/instance.h"
#include "engine/master/master_int.h"
#include "support/tmpdir.h"
#include "test_master_sys.h"

#define MSYS_UINT(name, value) \
        "<ssv:Parameter name=\"" name "\"><ssv:Integer value=\"" value "\"/></ssv:Parameter>"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

/* How many columns start with prefix. */
static size_t columns(const struct msys *x, const char *prefix)
{
        size_t n = 0;

        for (size_t i = 0; i < x->sc->n_columns; i++)
                n += strncmp(x->sc->columns[i].name, prefix, strlen(prefix)) == 0;
        return n;
}

static uint64_t worker_uint(struct msys *x, const char *comp, const char *var)
{
        size_t c = msys_comp(x, comp);
        uint32_t vr = x->sc->components[c].fmu->md->vars[msys_var(x, c, var)].vr;
        uint64_t v = 0;

        cr_assert(eq(int, inst_get(session_inst(x->s, c), MD_UINT64, &vr, 1, &v, 1), INST_OK));
        return v;
}

static double worker_float(struct msys *x, const char *comp, const char *var)
{
        size_t c = msys_comp(x, comp);
        uint32_t vr = x->sc->components[c].fmu->md->vars[msys_var(x, c, var)].vr;
        double v = NAN;

        cr_assert(eq(int, inst_get(session_inst(x->s, c), MD_FLOAT64, &vr, 1, &v, 1), INST_OK));
        return v;
}

/* The scenario is refused with a message containing every one of want (NULL-terminated). */
static void refused(const struct msys_spec *spec, const char *const *want)
{
        struct msys x;
        char buf[512];

        cr_assert(msys_load_try(&x, spec) < 0, "accepted: %s", spec->parameters);
        cr_assert(x.sc == NULL);
        for (const char *const *w = want; *w; w++) {
                bool found = false;

                for (size_t i = 0; i < x.diags.n && !found; i++) {
                        diag_format(&x.diags.v[i], buf, sizeof(buf));
                        found = strstr(buf, *w) != NULL;
                }
                for (size_t i = 0; i < x.diags.n && !found; i++) {
                        diag_format(&x.diags.v[i], buf, sizeof(buf));
                        fprintf(stderr, "  %s\n", buf);
                }
                cr_assert(found, "no diagnostic with '%s'", *w);
        }
        msys_fini(&x);
}

Test(master_structural, a_bound_size_gives_one_column_per_element_and_their_values)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("g", "VectorGain"),
                .parameters = MSYS_UINT("g.n", "5") MSYS_REAL("g.k", "3")
                              MSYS_REAL("g.u", "1 2 3 4 5"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("g.y"),
        };
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(eq(sz, columns(&x, "g.y["), 5));
        cr_assert(eq(str, x.sc->columns[4].name, "g.y[5]"));
        msys_start(&x);
        /* Set in Configuration Mode: the worker and the FMU have n = 5. */
        cr_assert(eq(u64, worker_uint(&x, "g", "n"), 5));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        /* y = k u from the start time (Initialization Mode) to the stop time. */
        cr_assert(eq(sz, x.n_rows, 3));
        for (size_t r = 0; r < x.n_rows; r++) {
                cr_assert(eq(dbl, val(&x, &x.rows[r], "g.y[1]"), 3.0));
                cr_assert(eq(dbl, val(&x, &x.rows[r], "g.y[4]"), 12.0));
                cr_assert(eq(dbl, val(&x, &x.rows[r], "g.y[5]"), 15.0));
        }
        msys_fini(&x);
}

Test(master_structural, a_connection_matching_only_with_the_size_set_is_accepted)
{
        /* Feedthrough's vector has 4 elements, VectorGain's 3 unless n = 4. */
        struct msys_spec spec = {
                .elements = MSYS_COMP("f", "Feedthrough") MSYS_COMP("g", "VectorGain"),
                .connections = MSYS_CONN("f", "Float64_vector_output", "g", "u"),
                .parameters = MSYS_UINT("g.n", "4"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("g.y"),
        };
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(eq(sz, x.sc->n_connections, 1));
        cr_assert(eq(u64, x.sc->connections[0].elements, 4));
        cr_assert(eq(sz, columns(&x, "g.y["), 4));
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        /* y = 2 u, u = Feedthrough's vector 1 2 3 4. */
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "g.y[1]"), 2.0));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "g.y[4]"), 8.0));
        msys_fini(&x);

        /* Without the binding the shapes differ, named with both sizes. */
        spec.parameters = NULL;
        refused(&spec, (const char *const[]){ "'f.Float64_vector_output' is [4]",
                                              "'g.u' is [3]", NULL });
}

Test(master_structural, a_connection_no_longer_matching_is_refused_naming_both_sizes)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "Feedthrough") MSYS_COMP("b", "Feedthrough"),
                .connections = MSYS_CONN("a", "Float64_vector_output", "b", "Float64_vector_input"),
                .parameters = MSYS_UINT("a.n", "6"),
                .stop = 0.2,
        };

        refused(&spec, (const char *const[]){ "shape mismatch with the structural parameters set",
                                              "'a.Float64_vector_output' is [6]",
                                              "'b.Float64_vector_input' is [4]", NULL });
}

Test(master_structural, sizes_out_of_range_and_values_that_are_not_sizes_are_refused)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("g", "VectorGain") MSYS_COMP("f", "Feedthrough"),
                .stop = 0.2,
        };

        spec.parameters = MSYS_UINT("g.n", "17");
        refused(&spec, (const char *const[]){ "'g.n'", "17 is above its max 16", NULL });
        spec.parameters = MSYS_UINT("g.n", "0");
        refused(&spec, (const char *const[]){ "'g.n'", "0 is below its min 1", NULL });
        spec.parameters = MSYS_UINT("f.n", "65");
        refused(&spec, (const char *const[]){ "65 is above its max 64", NULL });
        spec.parameters = MSYS_UINT("g.n", "2.5");
        refused(&spec, (const char *const[]){ "'g.n'", "value \"2.5\"",
                                              "not a value of the variable's type", NULL });
        spec.parameters = MSYS_REAL("g.n", "4");
        refused(&spec, (const char *const[]){ "a Real value for UInt64 variable", NULL });
        spec.parameters = MSYS_UINT("g.n", "-1");
        refused(&spec, (const char *const[]){ "'g.n'", "value \"-1\"", NULL });
        /* An array start given for the size as described, not as set. */
        spec.parameters = MSYS_UINT("g.n", "5") MSYS_REAL("g.u", "1 2 3");
        refused(&spec, (const char *const[]){ "'g.u'", "3 values, but the variable has 5 "
                                              "elements with the structural parameters set",
                                              NULL });
}

Test(master_structural, an_fmi2_parameter_beside_a_structural_one_is_set_as_before)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("g", "VectorGain") MSYS_COMP("lin2", "LinearOde2"),
                .parameters = MSYS_UINT("g.n", "2") MSYS_REAL("lin2.k", "0.5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("g.y") MSYS_RECORD("lin2.x"),
        };
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(eq(sz, x.sc->n_columns, 3));
        msys_start(&x);
        cr_assert(eq(dbl, worker_float(&x, "lin2", "k"), 0.5));
        cr_assert(eq(u64, worker_uint(&x, "g", "n"), 2));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "lin2.x") - exp(-0.5)) < 1e-9);
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "g.y[2]"), 2.0));
        msys_fini(&x);
}

/* A single FMU loaded with --start overrides, as fmuctl run and load give them. */
static int load_fmu(struct msys *x, const char *fmu, size_t n, struct scenario_assign *starts)
{
        struct scenario_overrides ov = { .n_starts = n, .starts = starts };
        struct scenario_opts o;

        *x = (struct msys){ 0 };
        x->cache = tmpdir_new("fmud-mst-cache");
        cr_assert(x->cache != NULL);
        diag_list_init(&x->diags, 0);
        scenario_opts_default(&o);
        o.cache_dir = x->cache;
        session_opts_default(&x->so);
        x->so.worker_path = FMUD_WORKER;
        master_opts_default(&x->mo);
        return scenario_load(fmu, &o, &ov, &x->diags, &x->sc);
}

Test(master_structural, a_start_override_sets_the_size_of_a_single_fmu)
{
        struct scenario_assign starts[] = { { "n", "6" },
                                            { "Float64_vector_input", "1 2 3 4 5 6" } };
        struct msys x;
        char buf[512];

        cr_assert(eq(int, load_fmu(&x, FMUD_TEST_FMU_DIR "/Feedthrough.fmu", 2, starts), 0));
        cr_assert(eq(sz, columns(&x, "Float64_vector_output["), 6));
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (int i = 1; i <= 6; i++) {
                snprintf(buf, sizeof(buf), "Float64_vector_output[%d]", i);
                cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], buf), (double)i));
        }
        msys_fini(&x);

        starts[0].value = "6.5";
        cr_assert(load_fmu(&x, FMUD_TEST_FMU_DIR "/Feedthrough.fmu", 1, starts) < 0);
        cr_assert(x.sc == NULL);
        cr_assert(x.diags.n >= 1);
        diag_format(&x.diags.v[0], buf, sizeof(buf));
        cr_assert(strstr(buf, "--start") && strstr(buf, "'n'") && strstr(buf, "value \"6.5\""),
                  "%s", buf);
        msys_fini(&x);

        /* n's min is 0 (FMI 3.0 section 2.4.7.2): the vectors have no element and no column. */
        starts[0].value = "0";
        starts[1].value = "7";          /* one value for all elements: none */
        cr_assert(eq(int, load_fmu(&x, FMUD_TEST_FMU_DIR "/Feedthrough.fmu", 2, starts), 0));
        cr_assert(eq(sz, columns(&x, "Float64_vector_"), 0));
        cr_assert(columns(&x, "Float64_output") == 1);
        msys_start(&x);
        cr_assert(eq(u64, worker_uint(&x, "Feedthrough", "n"), 0));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "Float64_output"), 2.5));
        msys_fini(&x);

        /* Values for elements it does not have are refused, naming the size. */
        starts[1].value = "1 2";
        cr_assert(load_fmu(&x, FMUD_TEST_FMU_DIR "/Feedthrough.fmu", 2, starts) < 0);
        cr_assert(x.diags.n >= 1);
        diag_format(&x.diags.v[0], buf, sizeof(buf));
        cr_assert(strstr(buf, "2 values, but the variable has 0 elements") != NULL, "%s", buf);
        msys_fini(&x);
}

/* Loads Feedthrough with starts; 0, or <0 with the first diagnostic in why (size 512). */
static int load_with(struct msys *x, struct scenario_assign *starts, size_t n, char *why)
{
        int r = load_fmu(x, FMUD_TEST_FMU_DIR "/Feedthrough.fmu", n, starts);

        why[0] = '\0';
        if (r < 0 && x->diags.n)
                diag_format(&x->diags.v[0], why, 512);
        return r;
}

/*
 * --start takes an array's values as fmuctl set does too, in brackets
 * with commas (a matrix's rows nested), and an array sized 0 takes no
 * value, "" or "[]" (FMI 3.0 section 2.4.7.2); what is not a list is
 * refused with the reason.
 */
Test(master_structural, a_start_override_takes_brackets_and_no_value_for_no_elements)
{
        struct scenario_assign starts[] = { { "n", "3" }, { "Float64_vector_input", "[1, 2, 3]" },
                                            { "Float64_matrix_input", "[[1, 2], [3, 4], [5, 6]]" } };
        static const char *const none[] = { "[]", "", " [ ] " };
        static const struct { const char *n, *v, *why; } bad[] = {
                { "2", "[]", "0 values, but the variable has 2 elements" },
                { "2", "", "0 values, but the variable has 2 elements" },
                { "2", "[1,,2]", "a comma without a value" },
                { "2", "[1, 2,]", "a comma without a value" },
                { "2", "[1, 2", "brackets that do not pair" },
                { "2", "[1] 2", "text after the brackets" },
                { "2", "[1, 2, 3]", "3 values, but the variable has 2 elements" },
                { "2", "[1, x]", "not a value of the variable's type" },
        };
        struct msys x;
        char buf[512];

        cr_assert(eq(int, load_with(&x, starts, 3, buf), 0), "%s", buf);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (int i = 1; i <= 3; i++) {
                snprintf(buf, sizeof(buf), "Float64_vector_output[%d]", i);
                cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], buf), (double)i));
        }
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "Float64_matrix_output[3,1]"), 5.0));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "Float64_matrix_output[2,2]"), 4.0));
        msys_fini(&x);

        starts[0].value = "0";
        for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++) {
                starts[1].value = none[i];
                cr_assert(eq(int, load_with(&x, starts, 2, buf), 0), "\"%s\": %s", none[i], buf);
                cr_assert(eq(sz, columns(&x, "Float64_vector_"), 0));
                msys_start(&x);
                cr_assert(eq(u64, worker_uint(&x, "Feedthrough", "n"), 0));
                cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
                msys_fini(&x);
        }

        /* An array of a fixed size takes no empty list either, nor rows not its own (3 x 2). */
        {
                static const struct { const char *v, *why; } matrix[] = {
                        { "[]", "no value, but the variable has elements" },
                        { "[[1, 2, 3], [4, 5, 6]]", "lists of other lengths than the variable's" },
                        { "[[1, 2], [3, 4], [5, 6], [7, 8]]", "lists of other lengths" },
                        { "[[1], [2, 3, 4, 5, 6]]", "rows of different lengths" },
                        { "[[1, 2], 3, [4, 5]]", "a list mixes values and rows" },
                        { "[[[[7]]]]", "rows nested otherwise than the variable has dimensions" },
                        { "[[1, 2], [3, 4], [5, 6]", "brackets that do not pair" },
                };

                for (size_t i = 0; i < sizeof(matrix) / sizeof(*matrix); i++) {
                        starts[2].value = matrix[i].v;
                        cr_assert(load_with(&x, starts + 2, 1, buf) < 0, "%s", matrix[i].v);
                        cr_assert(strstr(buf, matrix[i].why) != NULL, "%s: %s", matrix[i].v, buf);
                        msys_fini(&x);
                }
                /* Flat, in row-major order, or one value for all: as a start attribute. */
                starts[2].value = "[1, 2, 3, 4, 5, 6]";
                cr_assert(eq(int, load_with(&x, starts + 2, 1, buf), 0), "%s", buf);
                msys_fini(&x);
                starts[2].value = "[7]";
                cr_assert(eq(int, load_with(&x, starts + 2, 1, buf), 0), "%s", buf);
                msys_fini(&x);
        }

        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
                starts[0].value = bad[i].n;
                starts[1].value = bad[i].v;
                cr_assert(load_with(&x, starts, 2, buf) < 0, "\"%s\"", bad[i].v);
                cr_assert(x.sc == NULL);
                cr_assert(strstr(buf, bad[i].why) != NULL, "\"%s\": %s", bad[i].v, buf);
                msys_fini(&x);
        }
}

Test(master_structural, a_size_of_0_leaves_arrays_with_no_elements_that_connect_and_run)
{
        /* FMI 3.0 section 2.4.7.2: a structural parameter of min 0 may size an array 0. */
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "Feedthrough") MSYS_COMP("b", "Feedthrough"),
                .connections = MSYS_CONN("a", "Float64_vector_output", "b", "Float64_vector_input")
                               MSYS_CONN("a", "Float64_output", "b", "Float64_input"),
                .parameters = MSYS_UINT("a.n", "0") MSYS_UINT("b.n", "0")
                              MSYS_REAL("a.Float64_input", "4.25"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.Float64_vector_output") MSYS_RECORD("b.Float64_vector_output")
                            MSYS_RECORD("b.Float64_output"),
        };
        struct msys x;
        int vectors = 0;

        msys_load(&x, &spec);
        cr_assert(eq(sz, x.sc->n_connections, 2));
        for (size_t i = 0; i < 2; i++)
                if (strcmp(x.sc->components[x.sc->connections[i].from_comp].fmu->md->vars
                           [x.sc->connections[i].from_var].name, "Float64_vector_output") == 0) {
                        cr_assert(eq(u64, x.sc->connections[i].elements, 0));
                        vectors++;
                }
        cr_assert(eq(int, vectors, 1));
        /* Listed to be recorded, the vectors have no column; the scalar has its own. */
        cr_assert(eq(sz, columns(&x, "a.Float64_vector"), 0));
        cr_assert(eq(sz, columns(&x, "b.Float64_vector"), 0));
        cr_assert(eq(sz, x.sc->n_columns, 1));
        msys_start(&x);
        /* b's inputs are filled by the scalar connection alone: the empty one is not routed. */
        cr_assert(eq(sz, x.m->mi[msys_comp(&x, "b")].n_routes, 1));
        cr_assert(eq(u64, worker_uint(&x, "a", "n"), 0));
        cr_assert(eq(u64, worker_uint(&x, "b", "n"), 0));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        /* The scalar connection beside it carries as ever. */
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "b.Float64_output"), 4.25));
        msys_fini(&x);

        /* A size of 0 against one of 4 is a shape mismatch like any other. */
        spec.parameters = MSYS_UINT("a.n", "0");
        refused(&spec, (const char *const[]){ "'a.Float64_vector_output' is [0]",
                                              "'b.Float64_vector_input' is [4]", NULL });
}
