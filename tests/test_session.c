/*
 * session: workers spawned, instances instantiated and taken through
 * Initialization Mode together: connected inputs resolved in dependency
 * order (MsdMass1 and MsdMass2 feed each other, yet their variables do
 * not form a loop), a real loop iterated to its fixed point or refused by
 * name, an input without a value refused by name, FMI 2.0 next to FMI
 * 3.0, Event Mode left for Step Mode, and nothing left behind.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test_master_sys.h"
#include "worker/call.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

static bool no_children(void)
{
        return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

Test(session, connected_inputs_are_resolved_in_dependency_order)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("mass1", "MsdMass1") MSYS_COMP("mass2", "MsdMass2"),
                .connections = MSYS_CONN("mass2", "F", "mass1", "F")
                               MSYS_CONN("mass1", "x1", "mass2", "x1")
                               MSYS_CONN("mass1", "v1", "mass2", "v1"),
                .parameters = MSYS_REAL("mass1.x1_0", "0.25"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("mass1.F") MSYS_RECORD("mass2.x1") MSYS_RECORD("mass2.F"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        /* x1 reaches mass2 first, then F = kc (x2 - x1) + dc (v2 - v1) reaches mass1. */
        cr_assert(eq(dbl, val(&x, &x.rows[0], "mass2.x1"), 0.25));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "mass2.F"), 10.0 * (1.0 - 0.25)));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "mass1.F"), 10.0 * (1.0 - 0.25)));
        msys_fini(&x);
        cr_assert(no_children());
}

#define HALF "<ssc:LinearTransformation factor=\"0.5\"/>"

static void loop(struct msys *x, bool contracting)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde"),
                .connections = contracting ?
                        "<ssd:Connection startElement=\"a\" startConnector=\"y0\" endElement=\"b\" "
                        "endConnector=\"u0\">" HALF "</ssd:Connection>"
                        "<ssd:Connection startElement=\"b\" startConnector=\"y0\" endElement=\"a\" "
                        "endConnector=\"u0\">" HALF "</ssd:Connection>" :
                        MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "y0", "a", "u0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.u0") MSYS_RECORD("b.u0"),
        };

        msys_load(x, &spec);
}

Test(session, an_initialization_loop_is_iterated_to_its_fixed_point)
{
        struct msys x;

        /* u_a = (x_b + u_b) / 2, u_b = (x_a + u_a) / 2 with x = 1: u_a = u_b = 1. */
        loop(&x, true);
        msys_start(&x);
        cr_assert(fabs(val(&x, &x.rows[0], "a.u0") - 1.0) < 1e-9, "%.17g",
                  val(&x, &x.rows[0], "a.u0"));
        cr_assert(fabs(val(&x, &x.rows[0], "b.u0") - 1.0) < 1e-9);
        msys_fini(&x);
}

Test(session, a_loop_that_does_not_settle_is_refused_by_name)
{
        struct msys x;
        char *msg = NULL;

        /* u_a = x_b + u_b = 2 + u_a: no fixed point. */
        loop(&x, false);
        cr_assert(eq(int, msys_session_try(&x, &msg), -ELOOP));
        cr_assert(msg != NULL);
        cr_assert(strstr(msg, "does not settle") != NULL, "%s", msg);
        cr_assert(strstr(msg, "a.y0") != NULL && strstr(msg, "b.u0") != NULL &&
                  strstr(msg, "b.y0") != NULL && strstr(msg, "a.u0") != NULL, "%s", msg);
        free(msg);
        cr_assert(no_children());
        msys_fini(&x);
}

Test(session, an_input_without_a_value_holds_admission)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde"),
                .connections = MSYS_CONN("a", "y0", "b", "u0"),
                .stop = 1.0,
        };
        struct msys x;
        struct md_variable *u3, *u0;
        char *msg = NULL;

        msys_load(&x, &spec);
        /* As if the FMU declared no start for these inputs; b.u0 is connected, a.u3 is not. */
        u3 = &x.sc->components[msys_comp(&x, "a")].fmu->md->vars[msys_var(&x, 0, "u3")];
        u0 = &x.sc->components[msys_comp(&x, "b")].fmu->md->vars[msys_var(&x, 1, "u0")];
        u3->has_start = false;
        u0->has_start = false;
        cr_assert(eq(int, msys_session_try(&x, &msg), -EINVAL));
        cr_assert(msg != NULL);
        cr_assert(strstr(msg, "'a.u3'") != NULL, "%s", msg);
        cr_assert(strstr(msg, "'b.u0'") == NULL, "%s", msg);
        cr_assert(strstr(msg, "1 input without a value") != NULL, "%s", msg);
        free(msg);
        cr_assert(no_children());
        u3->has_start = true;
        u0->has_start = true;
        msys_fini(&x);
}

Test(session, fmi2_and_fmi3_instances_initialize_and_step_together)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde2"),
                .connections = MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "y0", "a", "u1"),
                .parameters = MSYS_REAL("b.k", "2"),
                .stop = 0.3,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("b.x") MSYS_RECORD("b.u0") MSYS_RECORD("a.y0")
                            MSYS_RECORD("a.u1") MSYS_RECORD("b.y0"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, inst_fmi_version(session_inst(x.s, msys_comp(&x, "b"))), 2));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.u0"), val(&x, &x.rows[0], "a.y0")));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "a.u1"), val(&x, &x.rows[0], "b.y0")));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, x.n_rows, (size_t)4));
        cr_assert(val(&x, &x.rows[1], "b.x") == exp(-2.0 * 0.1));
        cr_assert(val(&x, &x.rows[2], "b.u0") == val(&x, &x.rows[1], "a.y0"));
        msys_fini(&x);
        cr_assert(no_children());
}

Test(session, event_mode_instances_start_in_step_mode)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BouncingBall") MSYS_COMP("lin", "LinearOde"),
                .stop = 1.0,
        };
        struct msys x;
        size_t ball, lin;

        msys_load(&x, &spec);
        x.so.no_early_return = true;
        msys_start(&x);
        ball = msys_comp(&x, "ball");
        lin = msys_comp(&x, "lin");
        cr_assert(session_event_mode_used(x.s, ball) && !session_event_mode_used(x.s, lin));
        cr_assert(session_early_return_allowed(x.s, ball) == false);
        cr_assert(eq(int, inst_state(session_inst(x.s, ball)), CALL_ST_STEP));
        cr_assert(eq(int, inst_state(session_inst(x.s, lin)), CALL_ST_STEP));
        cr_assert(isinf(session_next_event_time(x.s, ball)));
        /* Without early return the ball bounces inside its steps: no extra point. */
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(x.rows[x.n_rows - 1].flags == 0);
        msys_fini(&x);
        cr_assert(no_children());
}

#define TOLERANCE_RECORDS \
        MSYS_RECORD("a.tolerance_seen") MSYS_RECORD("a.tolerance_defined") \
        MSYS_RECORD("b.tolerance_seen") MSYS_RECORD("b.tolerance_defined")

/* a: LinearOde (FMI 3.0, DefaultExperiment tolerance 1e-5); b: LinearOde2 (FMI 2.0, none). */
static void tolerances(const char *attrs, double a_seen, double a_defined, double b_seen,
                       double b_defined)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde2"),
                .stop = 0.2,
                .attrs = attrs,
                .settings = TOLERANCE_RECORDS,
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(dbl, val(&x, &x.rows[0], "a.tolerance_seen"), a_seen));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "a.tolerance_defined"), a_defined));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.tolerance_seen"), b_seen));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.tolerance_defined"), b_defined));
        msys_fini(&x);
        cr_assert(no_children());
}

Test(session, each_fmu_gets_its_default_experiment_tolerance_or_none)
{
        /* fmi3EnterInitializationMode(toleranceDefined = true, 1e-5); fmi2SetupExperiment(false). */
        tolerances("stepSize=\"0.1\"", 1e-5, 1.0, 0.0, 0.0);
}

Test(session, the_scenario_tolerance_reaches_fmi3_and_fmi2_fmus)
{
        tolerances("stepSize=\"0.1\" tolerance=\"1e-7\"", 1e-7, 1.0, 1e-7, 1.0);
}

#define FT_CONN(a, b) MSYS_CONN(a, "Float64_output", b, "Float64_input")
#define FT_CONN_TRANSFORMED(a, b, t) \
        "<ssd:Connection startElement=\"" a "\" startConnector=\"Float64_output\" endElement=\"" \
        b "\" endConnector=\"Float64_input\">" t "</ssd:Connection>"

/*
 * Feedthrough passes Float64_input to Float64_output. In a ring of them
 * every value is consistent once all inputs agree; simultaneous updates
 * would only rotate the differing start values (2.5, 1, 4) around the ring.
 */
Test(session, a_consistent_swap_loop_of_two_settles)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "Feedthrough") MSYS_COMP("b", "Feedthrough"),
                .connections = FT_CONN("a", "b") FT_CONN("b", "a"),
                .parameters = MSYS_REAL("b.Float64_input", "1"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.Float64_input") MSYS_RECORD("b.Float64_input"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        /* Swept in the loop's order from a.Float64_input: it takes b's value, then b takes it. */
        cr_assert(eq(dbl, val(&x, &x.rows[0], "a.Float64_input"), 1.0));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.Float64_input"), 1.0));
        msys_fini(&x);
        cr_assert(no_children());
}

Test(session, a_consistent_loop_of_three_settles)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "Feedthrough") MSYS_COMP("b", "Feedthrough")
                            MSYS_COMP("c", "Feedthrough"),
                .connections = FT_CONN("a", "b") FT_CONN("b", "c") FT_CONN("c", "a"),
                .parameters = MSYS_REAL("b.Float64_input", "1") MSYS_REAL("c.Float64_input", "4"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.Float64_input") MSYS_RECORD("b.Float64_input")
                            MSYS_RECORD("c.Float64_input"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        /* From a.Float64_input along the ring: c's start value reaches a, then b, then c. */
        cr_assert(eq(dbl, val(&x, &x.rows[0], "a.Float64_input"), 4.0));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.Float64_input"), 4.0));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "c.Float64_input"), 4.0));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        msys_fini(&x);
        cr_assert(no_children());
}

/* A ring closed by the connection b -> a given: no consistent value, or none iteration finds. */
static void refused_ring(const char *b_to_a)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "Feedthrough") MSYS_COMP("b", "Feedthrough"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
        };
        char *conns = NULL, *msg = NULL;
        struct msys x;

        cr_assert(asprintf(&conns, "%s%s", FT_CONN("a", "b"), b_to_a) > 0);
        spec.connections = conns;
        msys_load(&x, &spec);
        cr_assert(eq(int, msys_session_try(&x, &msg), -ELOOP), "%s", b_to_a);
        cr_assert(msg != NULL);
        cr_assert(strstr(msg, "does not settle") != NULL, "%s", msg);
        cr_assert(strstr(msg, "a.Float64_output") != NULL && strstr(msg, "b.Float64_input") &&
                  strstr(msg, "b.Float64_output") != NULL && strstr(msg, "a.Float64_input"),
                  "%s", msg);
        free(msg);
        cr_assert(no_children());
        msys_fini(&x);
        free(conns);
}

Test(session, a_loop_without_a_consistent_value_is_refused_by_name)
{
        /* a.u = b.u + 1 = a.u + 1 */
        refused_ring(FT_CONN_TRANSFORMED("b", "a", "<ssc:LinearTransformation offset=\"1\"/>"));
}

Test(session, a_diverging_loop_is_refused_by_name)
{
        /* a.u = 2 b.u = 2 a.u: from 2.5 it doubles every sweep. */
        refused_ring(FT_CONN_TRANSFORMED("b", "a", "<ssc:LinearTransformation factor=\"2\"/>"));
}
