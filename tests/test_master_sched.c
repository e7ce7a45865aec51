/*
 * master: who steps when. Multirate (a slow instance steps every m-th
 * point, m * h at a time, and its outputs are held in between), and
 * Gauss-Seidel against Jacobi on a chain a -> b -> c of LinearOde
 * instances (y0 feeds the next one's u0; y0 = x + u0, x independent of
 * u): under Jacobi each link delays by one step, under Gauss-Seidel by
 * none. Every relation is asserted bit for bit. And decimation.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdlib.h>

#include "test_master_sys.h"

#define V(row, name) val(&x, row, name)

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

Test(master_sched, slow_instance_outputs_change_only_at_its_own_points)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde")
                            MSYS_COMP("c", "LinearOde"),
                .connections = MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "y0", "c", "u0"),
                .parameters = MSYS_REAL("b.k", "0.5"),
                .stop = 1.2,
                .attrs = "stepSize=\"0.1\"",
                .settings = "<fmud:Component name=\"b\" multirate=\"3\"/>"
                            MSYS_RECORD("a.y0") MSYS_RECORD("b.x") MSYS_RECORD("b.u0")
                            MSYS_RECORD("b.y0") MSYS_RECORD("c.u0"),
        };
        struct msys x;
        const struct mrow **g;
        size_t n;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)13));
        for (size_t k = 1; k < n; k++) {
                if (k % 3) {
                        /* Held: the slow instance's outputs and inputs as at its last point. */
                        cr_assert(V(g[k], "b.x") == V(g[k - 1], "b.x"), "b.x changed at %zu", k);
                        cr_assert(V(g[k], "b.y0") == V(g[k - 1], "b.y0"));
                        cr_assert(V(g[k], "b.u0") == V(g[k - 1], "b.u0"));
                } else {
                        double h = g[k]->t - g[k - 3]->t;

                        /* One step of 3 h, exact: x *= exp(-k h). */
                        cr_assert(V(g[k], "b.x") == V(g[k - 3], "b.x") * exp(-0.5 * h),
                                  "b.x at %zu", k);
                        /* Its input was a's output at its previous point. */
                        cr_assert(V(g[k], "b.u0") == V(g[k - 3], "a.y0"));
                }
                /* c reads b's published value at the point before its step (zero-order hold). */
                cr_assert(V(g[k], "c.u0") == V(g[k - 1], "b.y0"), "c.u0 at %zu", k);
        }
        free(g);
        msys_fini(&x);
}

static void chain(struct msys *xp, bool gauss_seidel)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde")
                            MSYS_COMP("c", "LinearOde"),
                .connections = MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "y0", "c", "u0"),
                .parameters = MSYS_REAL("a.k", "0.5") MSYS_REAL("b.k", "1.5")
                              MSYS_REAL("c.k", "2.5") MSYS_REAL("b.x0", "2")
                              MSYS_REAL("c.x0", "3"),
                .stop = 1.0,
                .attrs = gauss_seidel ? "stepSize=\"0.05\" algorithm=\"gauss-seidel\" order=\"a b c\""
                                      : "stepSize=\"0.05\"",
                .settings = MSYS_RECORD("a.x") MSYS_RECORD("a.y0") MSYS_RECORD("b.x")
                            MSYS_RECORD("b.u0") MSYS_RECORD("b.y0") MSYS_RECORD("c.x")
                            MSYS_RECORD("c.u0") MSYS_RECORD("c.y0"),
        };

        msys_load(xp, &spec);
        msys_start(xp);
        cr_assert(eq(int, master_run(xp->m), MASTER_FINISHED), "%s", master_message(xp->m));
}

Test(master_sched, gauss_seidel_removes_the_one_step_delay_of_each_link)
{
        struct msys x, jac;
        const struct mrow **g, **j;
        size_t n, nj;

        chain(&jac, false);
        chain(&x, true);
        g = msys_grid(&x, &n);
        j = msys_grid(&jac, &nj);
        cr_assert(eq(sz, n, (size_t)21));
        cr_assert(eq(sz, nj, n));
        for (size_t k = 1; k < n; k++) {
                /* The states do not depend on the inputs: equal in both runs. */
                cr_assert(V(g[k], "a.x") == val(&jac, j[k], "a.x"));
                cr_assert(V(g[k], "c.x") == val(&jac, j[k], "c.x"));
                /* Jacobi: every link takes its producer's output of the point before. */
                cr_assert(val(&jac, j[k], "b.u0") == val(&jac, j[k - 1], "a.y0"), "jacobi b.u0 at %zu", k);
                cr_assert(val(&jac, j[k], "c.u0") == val(&jac, j[k - 1], "b.y0"), "jacobi c.u0 at %zu", k);
                /* Gauss-Seidel: the output of the same point. */
                cr_assert(V(g[k], "b.u0") == V(g[k], "a.y0"), "gs b.u0 at %zu", k);
                cr_assert(V(g[k], "c.u0") == V(g[k], "b.y0"), "gs c.u0 at %zu", k);
                /* So a's state reaches c two steps late under Jacobi, at once under Gauss-Seidel. */
                cr_assert(V(g[k], "c.u0") == V(g[k], "b.x") + V(g[k], "a.x"));
                if (k >= 2)
                        cr_assert(val(&jac, j[k], "c.u0") ==
                                  val(&jac, j[k - 1], "b.x") + val(&jac, j[k - 2], "a.x"));
        }
        free(g);
        free(j);
        msys_fini(&x);
        msys_fini(&jac);
}

Test(master_sched, decimation_keeps_every_nth_grid_point_and_the_last)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "LinearOde"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" decimation=\"3\"",
                .settings = MSYS_RECORD("a.x"),
        };
        static const uint64_t kept[] = { 0, 3, 6, 9, 10 };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, x.n_rows, sizeof(kept) / sizeof(*kept)));
        for (size_t i = 0; i < x.n_rows; i++)
                cr_assert(eq(u64, x.rows[i].point, kept[i]));
        msys_fini(&x);
}

/*
 * Gauss-Seidel without an order, the chain written from its end (c b a,
 * as a tool may export it): the components step in the order the values
 * flow, a before b before c, so no link lags a step. Document order made
 * every link backwards: Jacobi's delays under the name Gauss-Seidel.
 */
Test(master_sched, gauss_seidel_without_an_order_follows_the_values)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c", "LinearOde") MSYS_COMP("b", "LinearOde")
                            MSYS_COMP("a", "LinearOde"),
                .connections = MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "y0", "c", "u0"),
                .parameters = MSYS_REAL("a.k", "0.5") MSYS_REAL("b.k", "1.5")
                              MSYS_REAL("c.k", "2.5") MSYS_REAL("b.x0", "2")
                              MSYS_REAL("c.x0", "3"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\" algorithm=\"gauss-seidel\"",
                .settings = MSYS_RECORD("a.y0") MSYS_RECORD("b.u0") MSYS_RECORD("b.y0")
                            MSYS_RECORD("c.u0"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)21));
        for (size_t k = 1; k < n; k++) {
                cr_assert(V(g[k], "b.u0") == V(g[k], "a.y0"), "b.u0 at %zu", k);
                cr_assert(V(g[k], "c.u0") == V(g[k], "b.y0"), "c.u0 at %zu", k);
        }
        free(g);
        msys_fini(&x);
}

/*
 * The same with a loop (a and b feed each other, through b's state) and a consumer of it
 * written first (c a b): the loop is entered at a, its first component in
 * document order, and c steps after b, whose output it takes at once. c,
 * first in document order but in no loop, was taken as the loop's entry.
 */
Test(master_sched, gauss_seidel_without_an_order_enters_a_loop_at_one_of_its_own)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c", "LinearOde") MSYS_COMP("a", "LinearOde")
                            MSYS_COMP("b", "LinearOde"),
                .connections = MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "x", "a", "u0")
                               MSYS_CONN("b", "y0", "c", "u0"),
                .parameters = MSYS_REAL("a.k", "0.5") MSYS_REAL("b.k", "1.5")
                              MSYS_REAL("b.x0", "2"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\" algorithm=\"gauss-seidel\"",
                .settings = MSYS_RECORD("a.y0") MSYS_RECORD("b.u0") MSYS_RECORD("b.y0")
                            MSYS_RECORD("c.u0"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        g = msys_grid(&x, &n);
        for (size_t k = 1; k < n; k++) {
                cr_assert(V(g[k], "b.u0") == V(g[k], "a.y0"), "b.u0 at %zu", k);
                cr_assert(V(g[k], "c.u0") == V(g[k], "b.y0"), "c.u0 at %zu", k);
        }
        free(g);
        msys_fini(&x);
}
