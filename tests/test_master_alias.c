/*
 * master_alias: what one variable is called across FMUs. An FMI 3.0
 * variable's <Alias> names (section 2.4.7.3)
 * name it wherever a variable is named: a parameter binding, a
 * connection's ends and a recorded variable, as exporters that give a
 * variable several names expect (LinearOde: x is also 'position', k
 * 'decay', u0 'in0', y0 'out0'). A column is named as it was asked for,
 * as FMPy names its columns: an alias recorded beside its variable is a
 * column of its own, with the same values.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_master_sys.h"

Test(master_alias, aliases_name_their_variables_in_bindings_connections_and_records)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde"),
                .connections = MSYS_CONN("a", "out0", "b", "in0"),
                .parameters = MSYS_REAL("a.decay", "2"),
                .stop = 0.5,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.position") MSYS_RECORD("b.x") MSYS_RECORD("b.out0")
                            MSYS_RECORD("a.x"),
        };
        size_t ax, ap, bx, by, n = 0;
        const struct mrow **grid;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        /* An alias's column has its name and its variable's values. */
        ax = msys_col(&x, "a.x");
        ap = msys_col(&x, "a.position");
        bx = msys_col(&x, "b.x");
        by = msys_col(&x, "b.out0");
        grid = msys_grid(&x, &n);
        cr_assert(eq(sz, n, 6));
        for (size_t i = 0; i < n; i++) {
                /* a.k = 2 through its alias: x = exp(-2 t) exactly as the FMU computes it. */
                cr_assert(fabs(grid[i]->v[ax] - exp(-2 * grid[i]->t)) < 1e-12, "t = %g: %.17g",
                          grid[i]->t, grid[i]->v[ax]);
                cr_assert(eq(dbl, grid[i]->v[ap], grid[i]->v[ax]), "t = %g", grid[i]->t);
                /* b.y0 = b.x + b.u0, u0 fed by a.y0 = a.x of the point before (Jacobi). */
                if (i)
                        cr_assert(fabs(grid[i]->v[by] - grid[i]->v[bx] - grid[i - 1]->v[ax]) <
                                  1e-12, "t = %g", grid[i]->t);
        }
        free(grid);
        msys_fini(&x);
}

/* The same name twice is refused, saying which; an alias beside its variable is not. */
Test(master_alias, a_name_recorded_twice_is_refused)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde"),
                .stop = 0.5,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.position") MSYS_RECORD("a.x") MSYS_RECORD("a.position"),
        };
        char text[2048];
        struct msys x;

        cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "a.position") && strstr(text, "recorded twice"), "%s", text);
        cr_assert(eq(ptr, strstr(text, "a.x"), NULL), "%s", text);
        msys_fini(&x);
}

/*
 * An FMI 2.0 Enumeration is got and set as an Integer (FMI 2.0 section
 * 2.2.7), an FMI 3.0 one as Int64 (FMI 3.0 section 2.2.6.2): connected
 * either way, the value crosses unchanged (Choice2 passes choice_in to
 * choice_out and choice_real; Feedthrough its Enumeration input to its
 * output).
 */
Test(master_alias, an_fmi2_enumeration_connects_to_an_fmi3_one_both_ways)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c1", "Choice2") MSYS_COMP("f", "Feedthrough")
                            MSYS_COMP("c2", "Choice2"),
                .connections = MSYS_CONN("c1", "choice_out", "f", "Enumeration_input")
                               MSYS_CONN("f", "Enumeration_output", "c2", "choice_in"),
                .parameters = "<ssv:Parameter name=\"c1.choice_in\"><ssv:Enumeration "
                              "value=\"blue\"/></ssv:Parameter>",
                .stop = 0.3,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("f.Enumeration_output") MSYS_RECORD("c2.choice_real"),
        };
        size_t fe, cr, n = 0;
        const struct mrow **grid;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        fe = msys_col(&x, "f.Enumeration_output");
        cr = msys_col(&x, "c2.choice_real");
        grid = msys_grid(&x, &n);
        cr_assert(eq(sz, n, 4));
        for (size_t i = 0; i < n; i++) {
                cr_assert(eq(dbl, grid[i]->v[fe], 3), "t = %g", grid[i]->t);
                cr_assert(eq(dbl, grid[i]->v[cr], 3), "t = %g", grid[i]->t);
        }
        free(grid);
        msys_fini(&x);
}
