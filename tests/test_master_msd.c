/*
 * master: the coupled mass-spring-damper (MsdMass1 + MsdMass2, Jacobi,
 * zero-order hold) against the exact solution of the coupled linear
 * system, the order of the coupling error, and bit-identical results run
 * to run and on one CPU against all.
 *
 * Reference: z = (x1, v1, x2, v2), z' = A z (see tests/fmus/MsdMass1/
 * model.c), z(t_n) = exp(A h)^n z(0) with exp(A h) from its Taylor series
 * (||A h|| < 0.3 for the steps used: 30 terms are exact to rounding).
 *
 * Error: each FMU integrates its own part with RK4 (10 substeps, local
 * error ~ (h/10)^5), so what remains is the coupling error of Jacobi with
 * zero-order hold, first order in h: max |x_i(t_n) - x_i,ref(t_n)| over
 * [0, 2] s is C h with C measured at 3.40, 3.28, 3.23 (h = 0.01, 0.005,
 * 0.0025 give 3.40e-2, 1.64e-2, 8.08e-3); the test allows C = 4, and
 * asserts that halving h halves the error (ratio in [0.4, 0.6]).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_master_sys.h"

#define T_END 2.0
#define ERROR_CONSTANT 4.0

static const double A[4][4] = {
        { 0.0, 1.0, 0.0, 0.0 },
        { -(10.0 + 10.0) / 1.0, -(0.5 + 0.2) / 1.0, 10.0 / 1.0, 0.2 / 1.0 },
        { 0.0, 0.0, 0.0, 1.0 },
        { 10.0 / 1.0, 0.2 / 1.0, -10.0 / 1.0, -0.2 / 1.0 },
};

/* exp(A h) by its Taylor series. */
static void expm(double h, double E[4][4])
{
        double term[4][4], next[4][4];

        for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                        E[i][j] = term[i][j] = i == j;
        for (int k = 1; k <= 30; k++) {
                for (int i = 0; i < 4; i++)
                        for (int j = 0; j < 4; j++) {
                                double s = 0.0;

                                for (int l = 0; l < 4; l++)
                                        s += term[i][l] * A[l][j];
                                next[i][j] = s * h / k;
                        }
                for (int i = 0; i < 4; i++)
                        for (int j = 0; j < 4; j++) {
                                term[i][j] = next[i][j];
                                E[i][j] += term[i][j];
                        }
        }
}

static void load_msd(struct msys *x, double h, const char *extra_settings)
{
        char attrs[128];
        struct msys_spec spec = {
                .elements = MSYS_COMP("mass1", "MsdMass1") MSYS_COMP("mass2", "MsdMass2"),
                .connections = MSYS_CONN("mass2", "F", "mass1", "F")
                               MSYS_CONN("mass1", "x1", "mass2", "x1")
                               MSYS_CONN("mass1", "v1", "mass2", "v1"),
                .start = 0.0,
                .stop = T_END,
                .attrs = attrs,
                .settings = extra_settings,
        };

        snprintf(attrs, sizeof(attrs), "stepSize=\"%.17g\"", h);
        msys_load(x, &spec);
}

/* Max error of x1 and x2 over the grid rows. */
static double msd_error(double h)
{
        struct msys x;
        double E[4][4], z[4] = { 0.0, 0.0, 1.0, 0.0 }, err = 0.0;
        size_t cx1, cx2, n;
        const struct mrow **g;

        load_msd(&x, h, MSYS_RECORD("mass1.x1") MSYS_RECORD("mass2.x2"));
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cx1 = msys_col(&x, "mass1.x1");
        cx2 = msys_col(&x, "mass2.x2");
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)lround(T_END / h) + 1));
        expm(h, E);
        for (size_t k = 0; k < n; k++) {
                double zn[4];

                cr_assert(g[k]->t == (double)k * h || k == n - 1, "t_%zu = %.17g", k, g[k]->t);
                err = fmax(err, fmax(fabs(g[k]->v[cx1] - z[0]), fabs(g[k]->v[cx2] - z[2])));
                for (int i = 0; i < 4; i++) {
                        zn[i] = 0.0;
                        for (int j = 0; j < 4; j++)
                                zn[i] += E[i][j] * z[j];
                }
                memcpy(z, zn, sizeof(z));
        }
        free(g);
        msys_fini(&x);
        return err;
}

Test(master_msd, jacobi_zoh_error_is_first_order_in_h)
{
        double h = 0.01, e1 = msd_error(h), e2 = msd_error(h / 2), e3 = msd_error(h / 4);

        fprintf(stderr, "msd error: h %g: %.3g (C = %.3g), h/2: %.3g, h/4: %.3g\n", h, e1, e1 / h,
                e2, e3);
        cr_assert(e1 <= ERROR_CONSTANT * h, "error %g above %g h", e1, ERROR_CONSTANT);
        cr_assert(e2 <= ERROR_CONSTANT * h / 2);
        cr_assert(e3 <= ERROR_CONSTANT * h / 4);
        cr_assert(e2 / e1 < 0.6 && e2 / e1 > 0.4, "ratio %g", e2 / e1);
        cr_assert(e3 / e2 < 0.6 && e3 / e2 > 0.4, "ratio %g", e3 / e2);
}

/* MSD plus a ring of six LinearOde instances: workers that finish in any order. */
static void run_ring(struct msys *x)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("mass1", "MsdMass1") MSYS_COMP("mass2", "MsdMass2")
                            MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "LinearOde")
                            MSYS_COMP("c", "LinearOde") MSYS_COMP("d", "LinearOde")
                            MSYS_COMP("e", "LinearOde") MSYS_COMP("f", "LinearOde"),
                .connections = MSYS_CONN("mass2", "F", "mass1", "F")
                               MSYS_CONN("mass1", "x1", "mass2", "x1")
                               MSYS_CONN("mass1", "v1", "mass2", "v1")
                               MSYS_CONN("mass1", "x1", "a", "u0")
                               MSYS_CONN("a", "y0", "b", "u0") MSYS_CONN("b", "y0", "c", "u0")
                               MSYS_CONN("c", "y0", "d", "u0") MSYS_CONN("d", "y0", "e", "u0")
                               MSYS_CONN("e", "y0", "f", "u0") MSYS_CONN("f", "y1", "a", "u1"),
                .parameters = MSYS_REAL("a.k", "0.3") MSYS_REAL("b.k", "0.7")
                              MSYS_REAL("c.k", "1.1") MSYS_REAL("d.k", "1.3")
                              MSYS_REAL("e.k", "1.7") MSYS_REAL("f.k", "2.9"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.005\"",
        };

        msys_load(x, &spec);
        msys_start(x);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
        cr_assert(eq(sz, x->n_rows, (size_t)201));
}

Test(master_msd, results_are_bit_identical_run_to_run_and_on_one_cpu)
{
        struct msys a, b, c;

        run_ring(&a);
        run_ring(&b);
        cr_assert(msys_same_rows(&a, &b), "two runs differ");
        if (!msys_one_cpu())
                cr_skip_test("cannot pin to one CPU");
        run_ring(&c);
        cr_assert(msys_same_rows(&a, &c), "one CPU differs from all CPUs");
        msys_fini(&a);
        msys_fini(&b);
        msys_fini(&c);
}
