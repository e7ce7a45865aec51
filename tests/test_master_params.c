/*
 * master: calculatedParameter -> parameter connections, resolved in
 * Initialization Mode before the first step (along a chain, through a
 * linear transformation, over a binding, into FMI 3.0 and 2.0 consumers);
 * those that cannot be are refused with their message, and a loop that
 * does not settle is an error naming it. With TimeEvent (gain = 2 base,
 * y = gain (1 + count)).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/instance.h"
#include "test_master_sys.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}


/* Three TimeEvents a, b, c; connections and a.base given. */
static void cp_spec(struct msys_spec *spec, const char *connections)
{
        *spec = (struct msys_spec){
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEvent")
                            MSYS_COMP("c", "TimeEvent"),
                .connections = connections,
                .parameters = MSYS_REAL("a.base", "1.25"),
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.y") MSYS_RECORD("b.y") MSYS_RECORD("c.y"),
        };
}

static double param(struct msys *x, const char *comp, const char *var)
{
        size_t c = msys_comp(x, comp);
        uint32_t vr = x->sc->components[c].fmu->md->vars[msys_var(x, c, var)].vr;
        double v = NAN;

        cr_assert(eq(int, inst_get(session_inst(x->s, c), MD_FLOAT64, &vr, 1, &v, 1), INST_OK));
        return v;
}

Test(master_time_events, a_calculated_parameter_feeds_a_parameter_before_the_first_step)
{
        struct msys_spec spec;
        struct msys x;

        cp_spec(&spec, MSYS_CONN("a", "gain", "b", "base") MSYS_CONN("b", "gain", "c", "base"));
        msys_load(&x, &spec);
        msys_start(&x);
        /* a.gain = 2.5 -> b.base; b.gain = 5 -> c.base; c.gain = 10. */
        cr_assert(eq(dbl, param(&x, "b", "base"), 2.5));
        cr_assert(eq(dbl, param(&x, "c", "base"), 5.0));
        cr_assert(eq(dbl, param(&x, "c", "gain"), 10.0));
        /* Applied in Initialization Mode: the outputs at the start time show it. */
        cr_assert(eq(sz, x.n_rows, (size_t)1));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "a.y"), 2.5));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.y"), 5.0));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "c.y"), 10.0));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        /* After the event at 0.15: y = gain * 2. */
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "c.y"), 20.0));
        msys_fini(&x);
}

Test(master_time_events, a_linear_transformation_applies_to_a_parameter_connection)
{
        struct msys_spec spec;
        struct msys x;

        cp_spec(&spec, "<ssd:Connection startElement=\"a\" startConnector=\"gain\" "
                       "endElement=\"b\" endConnector=\"base\">"
                       "<ssc:LinearTransformation factor=\"0.5\" offset=\"1\"/></ssd:Connection>");
        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(dbl, param(&x, "b", "base"), 2.5 * 0.5 + 1.0));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.y"), 2.0 * 2.25));
        msys_fini(&x);
}

/*
 * A calculated parameter feeds an input too (SSP's allowed connections:
 * calculatedParameter to input): a.gain = 2.5 is b's input u from the
 * start on, z' = u integrating it (z = 2.5 t).
 */
Test(master_time_events, a_calculated_parameter_feeds_an_input)
{
        struct msys_spec spec;
        struct msys x;
        const struct mrow *last;

        cp_spec(&spec, MSYS_CONN("a", "gain", "b", "u"));
        spec.settings = MSYS_RECORD("b.u") MSYS_RECORD("b.z");
        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.u"), 2.5));
        cr_assert(eq(dbl, val(&x, last, "b.u"), 2.5));
        cr_assert(epsilon_eq(dbl, val(&x, last, "b.z"), 2.5 * 0.2, 1e-12), "%.17g",
                  val(&x, last, "b.z"));
        msys_fini(&x);
}

/* The scenario is refused with a message containing want. */
static void refused(const char *connections, const char *want)
{
        struct msys_spec spec;
        struct msys x;
        char buf[512];
        bool found = false;

        cp_spec(&spec, connections);
        cr_assert(msys_load_try(&x, &spec) < 0, "accepted: %s", connections);
        for (size_t i = 0; i < x.diags.n && !found; i++) {
                diag_format(&x.diags.v[i], buf, sizeof(buf));
                found = strstr(buf, want) != NULL;
        }
        cr_assert(found, "no diagnostic with '%s' (first: %s)", want,
                  x.diags.n ? (diag_format(&x.diags.v[0], buf, sizeof(buf)), buf) : "none");
        msys_fini(&x);
}

Test(master_time_events, parameter_connections_that_cannot_be_are_refused)
{
        refused(MSYS_CONN("a", "level", "b", "base"),
                "'a.level' feeds the parameter 'b.base': a parameter is fed by a calculated "
                "parameter, not by an output");
        refused(MSYS_CONN("a", "gain", "b", "gain"), "are both outputs (or calculated parameters)");
        /* Both connections on one line: the message names the other one's ends. */
        refused(MSYS_CONN("a", "gain", "c", "base") MSYS_CONN("b", "gain", "c", "base"),
                "'c.base': fed twice: also by the connection at line 10 (a.gain to c.base)");
}

Test(master_time_events, a_parameter_loop_that_does_not_settle_is_a_precise_error)
{
        struct msys_spec spec;
        struct msys x;
        char *msg = NULL;

        /* a.base = 2 b.base = 4 a.base: no fixed point but 0, and the iteration diverges. */
        cp_spec(&spec, MSYS_CONN("a", "gain", "b", "base") MSYS_CONN("b", "gain", "a", "base"));
        msys_load(&x, &spec);
        cr_assert(msys_session_try(&x, &msg) < 0);
        cr_assert(msg && strstr(msg, "initialization loop through") && strstr(msg, "a.gain") &&
                  strstr(msg, "does not settle"), "%s", msg ? msg : "(null)");
        free(msg);
        msys_fini(&x);
}

Test(master_time_events, a_connected_parameter_takes_the_connected_value_over_its_binding)
{
        struct msys_spec spec;
        struct msys x;

        cp_spec(&spec, MSYS_CONN("a", "gain", "b", "base"));
        spec.parameters = MSYS_REAL("a.base", "1.25") MSYS_REAL("b.base", "7");
        msys_load(&x, &spec);
        msys_start(&x);
        /* The binding is its start value; Initialization Mode sets the connected one. */
        cr_assert(eq(dbl, param(&x, "b", "base"), 2.5));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "b.y"), 5.0));
        msys_fini(&x);
}

Test(master_time_events, a_calculated_parameter_sets_the_dynamics_of_fmi3_and_fmi2_consumers)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("lin", "LinearOde")
                            MSYS_COMP("lin2", "LinearOde2"),
                .connections = MSYS_CONN("te", "gain", "lin", "k") MSYS_CONN("te", "gain", "lin2", "k"),
                .parameters = MSYS_REAL("te.base", "0.25"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("lin.x") MSYS_RECORD("lin2.x"),
        };
        const struct mrow *last;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        /* k = gain = 0.5 in both, not their start value 1. */
        cr_assert(eq(dbl, param(&x, "lin", "k"), 0.5));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        last = &x.rows[x.n_rows - 1];
        cr_assert(fabs(val(&x, last, "lin.x") - exp(-0.5)) < 1e-12, "lin.x = %.17g",
                  val(&x, last, "lin.x"));
        cr_assert(fabs(val(&x, last, "lin2.x") - exp(-0.5)) < 1e-9, "lin2.x = %.17g",
                  val(&x, last, "lin2.x"));
        msys_fini(&x);
}

/*
 * A loop of twelve components: the message names eight of its variables
 * and how many more, then why it failed, instead of a list so long that
 * the reason was cut off behind it.
 */
Test(master_time_events, a_long_parameter_loop_that_does_not_settle_still_says_why)
{
        static char elements[4096], connections[8192];
        struct msys_spec spec;
        struct msys x;
        char *msg = NULL;
        size_t e = 0, k = 0;

        for (int i = 0; i < 12; i++) {
                char name[8], next[8];

                snprintf(name, sizeof(name), "c%d", i);
                snprintf(next, sizeof(next), "c%d", (i + 1) % 12);
                e += (size_t)snprintf(elements + e, sizeof(elements) - e,
                                      MSYS_COMP("%s", "TimeEvent"), name);
                k += (size_t)snprintf(connections + k, sizeof(connections) - k,
                                      MSYS_CONN("%s", "gain", "%s", "base"), name, next);
        }
        spec = (struct msys_spec){
                .elements = elements, .connections = connections,
                .parameters = MSYS_REAL("c0.base", "1.25"), .stop = 0.2,
                .attrs = "stepSize=\"0.1\"",
        };
        msys_load(&x, &spec);
        cr_assert(msys_session_try(&x, &msg) < 0);
        cr_assert(msg && strstr(msg, "initialization loop through c") &&
                  strstr(msg, " and 16 more does not settle after 100 iterations (") &&
                  strstr(msg, ".base still changes)"), "%s", msg ? msg : "(null)");
        free(msg);
        msys_fini(&x);
}
