/*
 * master: FMUs with a fixed internal step (FMI 3.0 section 4.2.1,
 * lastSuccessfulTime; section 4.4, canHandleVariableCommunicationStepSize
 * and fixedInternalStepSize), with FixedStep (any step accepted; where the
 * internal step does not fit, lastSuccessfulTime lags without an early
 * return) and FixedStepRigid (every step of one size, a multiple of the
 * internal step).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_direct.h"
#include "test_master_sys.h"

enum { FS_X = 1, FS_U = 2, FS_TAU = 3, FS_STEPS = 4 };

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

struct notes {
        unsigned n;
        char last[1024];
};

static void on_note(void *ctx, size_t comp, const char *message)
{
        struct notes *nt = ctx;

        (void)comp;
        nt->n++;
        snprintf(nt->last, sizeof(nt->last), "%s", message);
}

/* Whether the scenario's diagnostics hold a warning with text in it. */
static bool has_warning(const struct msys *x, const char *text)
{
        for (size_t i = 0; i < x->diags.n; i++)
                if (x->diags.v[i].severity == DIAG_WARNING && strstr(x->diags.v[i].message, text))
                        return true;
        return false;
}

static bool has_error(const struct msys *x, const char *text)
{
        for (size_t i = 0; i < x->diags.n; i++)
                if (x->diags.v[i].severity == DIAG_ERROR && strstr(x->diags.v[i].message, text))
                        return true;
        return false;
}

#define FS_SPEC(step_, stop_) { \
        .elements = MSYS_COMP("fs", "FixedStep"), \
        .stop = (stop_), \
        .attrs = "stepSize=\"" step_ "\"", \
        .settings = MSYS_RECORD("fs.x") MSYS_RECORD("fs.tau") MSYS_RECORD("fs.steps"), \
}

Test(master_fixed_step, a_lagging_fmu_alone_gives_row_for_row_what_a_plain_loop_gives)
{
        struct msys_spec spec = FS_SPEC("0.01", 1.0);
        const double h = 0.01;
        const struct mrow **g;
        struct master_stats st;
        struct notes nt = { 0 };
        struct fmi3 api;
        fmi3Instance fi;
        struct msys x;
        size_t n;

        msys_load(&x, &spec);
        x.mo.note = on_note;
        x.mo.note_ctx = &nt;
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.restores, 0));

        /* The plain loop: doStep(t_n, h) at every t_n = n h, as fmusim and FMPy call it. */
        load3(&api, "FixedStep", NULL);
        fi = instantiate3(&api, "FixedStep", false, false, NULL, 0, NULL);
        initialize3(&api, fi, 0.0);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)101));
        for (size_t k = 0; k < n; k++) {
                double t_last = -1.0;

                if (k > 0) {
                        cr_assert(eq(int, step3(&api, fi, (double)(k - 1) * h, h, NULL, &t_last),
                                     fmi3OK), "%s", last_log);
                        cr_assert(t_last == get_f64(&api, fi, FS_TAU));
                }
                cr_assert(g[k]->t == (double)k * h);
                cr_assert(val(&x, g[k], "fs.x") == get_f64(&api, fi, FS_X), "row %zu", k);
                cr_assert(val(&x, g[k], "fs.tau") == get_f64(&api, fi, FS_TAU), "row %zu", k);
                cr_assert(eq(dbl, val(&x, g[k], "fs.steps"), (double)get_i32(&api, fi, FS_STEPS)));
        }
        /* Ten internal steps of 0.1: x = 1 - 0.9^10 at t = 1. */
        cr_assert(eq(dbl, val(&x, g[n - 1], "fs.steps"), 10.0));
        cr_assert(fabs(val(&x, g[n - 1], "fs.x") - (1.0 - pow(0.9, 10))) < 1e-12);
        free(g);
        api.FreeInstance(fi);

        /* Said once, with the deviation, never a fault. */
        cr_assert(eq(u32, nt.n, 1));
        cr_assert(strstr(nt.last, "'fs'") && strstr(nt.last, "lastSuccessfulTime 0 ") &&
                  strstr(nt.last, "earlyReturn = false"), "%s", nt.last);
        msys_fini(&x);
}

Test(master_fixed_step, a_system_holding_a_lagging_fmu_runs_without_meeting)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("fs", "FixedStep") MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("fs", "x", "lin", "u0")
                               MSYS_CONN("lin", "y0", "fs", "u"),
                .stop = 0.5,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("fs.x") MSYS_RECORD("fs.steps") MSYS_RECORD("lin.u0"),
        };
        const struct mrow **g;
        struct master_stats st;
        struct msys x;
        size_t n;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.restores, 0));
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)51));
        /* fs moved only at whole internal steps, and LinearOde saw each move a point later. */
        cr_assert(eq(dbl, val(&x, g[50], "fs.steps"), 5.0));
        for (size_t k = 1; k < n; k++)
                cr_assert(val(&x, g[k], "lin.u0") == val(&x, g[k - 1], "fs.x"), "row %zu", k);
        free(g);
        msys_fini(&x);
}

Test(master_fixed_step, a_rigid_fmu_gets_its_internal_step_by_default)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid"),
                .stop = 1.0,
                .settings = MSYS_RECORD("r.x") MSYS_RECORD("r.steps"),
        };
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(eq(dbl, x.sc->experiment.step, 0.1));
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 1.0));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "r.steps"), 10.0));
        msys_fini(&x);
}

Test(master_fixed_step, a_step_that_is_no_multiple_of_a_rigid_fmus_internal_step_is_refused_at_load)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.03\"",
        };
        struct msys x = { 0 };

        cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL));
        cr_assert(has_error(&x, "canHandleVariableCommunicationStepSize is false"));
        cr_assert(has_error(&x, "0.03") && has_error(&x, "fixedInternalStepSize 0.1"));
        msys_fini(&x);
}

Test(master_fixed_step, a_multirate_factor_may_make_the_step_fit)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid") MSYS_COMP("lin", "LinearOde"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\"",
                .settings = "<fmud:Component name=\"r\" multirate=\"2\"/>"
                            MSYS_RECORD("r.steps") MSYS_RECORD("lin.x"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "r.steps"), 10.0));
        msys_fini(&x);
}

Test(master_fixed_step, a_rigid_fmu_stops_at_its_last_whole_step_and_says_so)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid"),
                .stop = 1.05,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("r.steps"),
        };
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(has_warning(&x, "last whole step"), "no warning about the stop time");
        cr_assert(eq(dbl, x.sc->experiment.stop, 1.0));
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 1.0));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "r.steps"), 10.0));
        msys_fini(&x);
}

Test(master_fixed_step, a_rigid_multirate_fmu_stops_where_its_own_steps_end)
{
        /* 0.05 * 2 = 0.1 per step of r; the grid ends at 0.95 = 19 points: r's last is 0.9. */
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid") MSYS_COMP("lin", "LinearOde"),
                .stop = 0.95,
                .attrs = "stepSize=\"0.05\"",
                .settings = "<fmud:Component name=\"r\" multirate=\"2\"/>" MSYS_RECORD("r.steps"),
        };
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(has_warning(&x, "last whole step"));
        cr_assert(x.sc->experiment.stop == 18 * 0.05, "stop %.17g", x.sc->experiment.stop);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "r.steps"), 9.0));
        msys_fini(&x);
}

Test(master_fixed_step, a_step_the_time_representation_cannot_resolve_is_refused_at_load)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("lin", "LinearOde"),
                .start = 1e9,
                .stop = 1e9 + 1,
                .attrs = "stepSize=\"1e-7\"",
        };
        struct msys x = { 0 };

        cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL));
        cr_assert(has_error(&x, "cannot be told apart"), "no error about resolution");
        msys_fini(&x);
}

Test(master_fixed_step, rollback_on_fault_warns_of_what_cannot_be_rolled_back)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("fs", "FixedStep") MSYS_COMP("lin", "LinearOde"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" rollbackOnFault=\"true\"",
        };
        struct msys_spec bad = spec;
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(x.sc->experiment.rollback_on_fault);
        cr_assert(has_warning(&x, "cannot be rolled back"));
        msys_fini(&x);
        bad.attrs = "stepSize=\"0.1\" rollbackOnFault=\"yes\"";
        cr_assert(eq(int, msys_load_try(&x, &bad), -EINVAL));
        cr_assert(has_error(&x, "expected true or false"));
        msys_fini(&x);
}

/*
 * r (FixedStepRigid, h = 0.1) in x's finished run, with u from column
 * 'from': at its points its x is its Euler step from its last point with
 * that column's value there held (after an event there); at the extra
 * points of the others it is held. Returns how many extra points there were.
 */
static size_t check_rigid(const struct msys *x, const char *from)
{
        double xr = 0, u = 0, held = 0, last_t = -1;
        size_t extra = 0, grid = 0;

        for (size_t i = 0; i < x->n_rows; i++) {
                const struct mrow *row = &x->rows[i];
                double k = nearbyint(row->t / 0.1);
                bool own = fabs(row->t - k * 0.1) <= 1e-12;

                /* A second row at one time: after an event there; at r's own point, r's u. */
                if (row->t == last_t) {
                        cr_assert(eq(dbl, val(x, row, "r.x"), held), "t = %.17g", row->t);
                        if (own)
                                u = val(x, row, from);
                        continue;
                }
                last_t = row->t;
                if (!own) {
                        extra++;
                        cr_assert(eq(dbl, val(x, row, "r.x"), held), "t = %.17g", row->t);
                        continue;
                }
                if (grid++)
                        xr += 0.1 * (u - xr);
                cr_assert(ieee_ulp_eq(dbl, val(x, row, "r.x"), xr, 4), "t = %.17g: %.17g, not %.17g",
                          row->t, val(x, row, "r.x"), xr);
                u = val(x, row, from);
                held = val(x, row, "r.x");
        }
        cr_assert(eq(sz, grid, 11));
        cr_assert(eq(dbl, val(x, &x->rows[x->n_rows - 1], "r.steps"), 10.0));
        return extra;
}

/*
 * A rigid FMU beside one with time events off its grid (a fixed-step
 * export beside a Modelica one's sample()): the events get their extra
 * points, and the rigid one keeps its fixed step across them, its input
 * held from its step's start and its output held between its points, as
 * a multirate component's (FMI 3.0 section 4.4: it cannot take a shorter
 * step). It was sent a shorter step and the session faulted.
 */
Test(master_fixed_step, a_rigid_fmu_keeps_its_step_across_another_ones_time_events)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid") MSYS_COMP("te", "TimeEvent"),
                .connections = MSYS_CONN("te", "y", "r", "u") MSYS_CONN("r", "x", "te", "u"),
                .parameters = MSYS_REAL("te.period", "0.25") MSYS_REAL("te.phase", "0.25"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("r.x") MSYS_RECORD("r.steps") MSYS_RECORD("te.y")
                            MSYS_RECORD("te.count"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, check_rigid(&x, "te.y"), 2));         /* 0.25 and 0.75 */
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "te.count"), 4.0));
        msys_fini(&x);
}

/*
 * The same across another one's early return (BouncingBall's impacts):
 * the rigid one, which cannot be sent back to meet it (nor restore its
 * state), goes on to its own point; the session faulted.
 */
Test(master_fixed_step, a_rigid_fmu_keeps_its_step_across_another_ones_early_return)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid") MSYS_COMP("b", "BouncingBall"),
                .connections = MSYS_CONN("b", "h", "r", "u"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("r.x") MSYS_RECORD("r.steps") MSYS_RECORD("b.h")
                            MSYS_RECORD("b.bounces"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        /* One impact before 1 s: h0 = 1 m hits at 0.4515 s, the bounce flies 0.63 s. */
        cr_assert(eq(sz, check_rigid(&x, "b.h"), 1));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "b.bounces"), 1.0));
        msys_fini(&x);
}

/*
 * Gauss-Seidel, a rigid consumer of a producer that steps again to meet
 * another's early return (BouncingBall b and LinearOde p at once, then r
 * taking p.x in sequence): r goes on to its own point with the input it took;
 * it was sent back too and the session faulted.
 */
Test(master_fixed_step, a_rigid_gauss_seidel_consumer_keeps_its_step_across_an_early_return)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("b", "BouncingBall") MSYS_COMP("p", "LinearOde")
                            MSYS_COMP("r", "FixedStepRigid"),
                .connections = MSYS_CONN("b", "h", "p", "u0") MSYS_CONN("p", "x", "r", "u"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" algorithm=\"gauss-seidel\" order=\"b p r\"",
                /* Only r waits for p: b and p step at once, p past b's early return. */
                .settings = "<fmud:GaussSeidel input=\"r.u\"/>" MSYS_RECORD("r.x")
                            MSYS_RECORD("r.steps") MSYS_RECORD("b.bounces"),
        };
        size_t extra = 0;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (size_t i = 0; i < x.n_rows; i++)
                extra += fabs(x.rows[i].t - nearbyint(x.rows[i].t / 0.1) * 0.1) > 1e-12;
        cr_assert(extra >= 1, "no early return met");
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "r.steps"), 10.0));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "b.bounces"), 1.0));
        msys_fini(&x);
}

/*
 * A rigid FMU's triggered input Clock connected to an output Clock that
 * ticks between its points (p's out at 0.66 s; r steps 0.05 s and all its
 * own Clocks tick on that grid): r cannot meet the tick (FMI 3.0 section
 * 4.4: no shorter step), so the session faults there and names r, before
 * any Event Mode of r at 0.66 s. The ticks on its grid (p's out at 0)
 * reached it.
 */
Test(master_fixed_step, a_rigid_fmus_triggered_clock_ticking_between_its_points_faults_naming_it)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("p", "ClockKinds33") MSYS_COMP("r", "ClockKindsRigid"),
                .connections = MSYS_CONN("p", "out", "r", "trg"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\"",
                .settings = MSYS_RECORD("r.n_trg") MSYS_RECORD("r.n_cst") MSYS_RECORD("p.n_cst"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), -ENOTSUP));
        cr_assert(eq(int, master_state(x.m), MASTER_FAULTED));
        cr_assert(not(eq(ptr, strstr(master_message(x.m), "component 'r': its triggered input "
                                     "Clock ticks at t = 0.66"), NULL)), "%s", master_message(x.m));
        cr_assert(not(eq(ptr, strstr(master_message(x.m), "canHandleVariableCommunicationStepSize"),
                         NULL)));
        /* Rows up to the extra point, r's own Clocks and the tick at 0 counted. */
        const struct mrow *last = &x.rows[x.n_rows - 1];
        cr_assert(ieee_ulp_eq(dbl, last->t, 0.66, 4), "%.17g", last->t);
        cr_assert(eq(dbl, val(&x, last, "r.n_trg"), 1.0));
        cr_assert(eq(dbl, val(&x, last, "r.n_cst"), 3.0));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "r"), 7), 1));
        msys_fini(&x);
}

/*
 * Gauss-Seidel from a multirate producer (p every 2 steps, x decaying):
 * the consumer takes p's outputs held at p's last point until p is past
 * its own step's end, so what it takes never goes back in time (and never
 * comes from p's future). It took p's step-end outputs at p's step start,
 * then the older held ones at the point between.
 */
Test(master_fixed_step, a_gauss_seidel_consumer_of_a_slower_producer_never_goes_back_in_time)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("p", "LinearOde") MSYS_COMP("c", "Feedthrough"),
                .connections = MSYS_CONN("p", "x", "c", "Float64_input"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" algorithm=\"gauss-seidel\" order=\"p c\"",
                .settings = "<fmud:GaussSeidel input=\"c.Float64_input\"/>"
                            "<fmud:Component name=\"p\" multirate=\"2\"/>"
                            MSYS_RECORD("p.x") MSYS_RECORD("c.Float64_output"),
        };
        double last = INFINITY;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (size_t i = 1; i < x.n_rows; i++) {
                double y = val(&x, &x.rows[i], "c.Float64_output");

                cr_assert(y <= last, "t = %.17g: %.17g after %.17g", x.rows[i].t, y, last);
                cr_assert(y >= exp(-x.rows[i].t) - 1e-12, "t = %.17g: %.17g is p's future",
                          x.rows[i].t, y);
                last = y;
        }
        msys_fini(&x);
}

/*
 * A start time below 0 (FMI 3.0 section 2.4.6 allows any startTime; a
 * warm-up before 0 is common): the grid is -1, -0.9, ..., 1 and the step
 * from -0.05 to 0.05 of a varying grid is not cut at 0. The master took a
 * cut at t = 0 for "no cut" and split the step there: an extra point for
 * an FMU that can vary its step, a fault for one that cannot.
 */
Test(master_fixed_step, a_start_time_below_0_keeps_the_grid_with_no_point_at_0)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "FixedStepRigid"),
                .start = -1.0,
                .stop = 1.0,
                .settings = MSYS_RECORD("r.steps"),
        };
        struct msys_spec vary = {
                .elements = MSYS_COMP("lin", "LinearOde"),
                .start = -1.05,
                .stop = 0.95,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("lin.x"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, x.n_rows, 21));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "r.steps"), 20.0));
        msys_fini(&x);

        msys_load(&x, &vary);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, x.n_rows, 21));
        for (size_t i = 0; i < x.n_rows; i++)
                cr_assert(x.rows[i].t != 0.0, "a point at 0 (row %zu)", i);
        msys_fini(&x);
}
