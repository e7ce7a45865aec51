/*
 * master: early return and Event Mode (BouncingBall meeting LinearOde at
 * the bounce), and intermediate update (IntermediateProbe fed by
 * LinearOde, extrapolated with LinearOde's output derivatives).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_master_sys.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

Test(master_events, every_instance_meets_an_early_return_and_the_grid_goes_on)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BouncingBall") MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("ball", "h", "lin", "u0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v") MSYS_RECORD("lin.x")
                            MSYS_RECORD("lin.u0"),
        };
        const struct mrow *left = NULL, *right = NULL, *before, *after;
        double t_bounce = sqrt(2.0 * 1.0 / 9.81), te;
        struct master_stats st;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(session_event_mode_used(x.s, msys_comp(&x, "ball")));
        cr_assert(session_early_return_allowed(x.s, msys_comp(&x, "ball")));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (size_t i = 0; i < x.n_rows; i++) {
                if (x.rows[i].flags == (MASTER_ROW_EXTRA | MASTER_ROW_EVENT_LEFT))
                        left = &x.rows[i];
                else if (x.rows[i].flags == MASTER_ROW_EXTRA)
                        right = &x.rows[i];
        }
        cr_assert(left && right, "no extra point");
        te = left->t;
        cr_assert(right->t == te && right == left + 1);
        cr_assert(fabs(te - t_bounce) < 1e-12, "bounce at %.17g, not %.17g", te, t_bounce);
        before = msys_row(&x, 0.4, 0);
        after = msys_row(&x, 0.5, 0);
        cr_assert(before && after && before + 1 == left && right + 1 == after);
        /* The ball: at the floor, falling before the event, reversed and scaled by e after. */
        cr_assert(val(&x, left, "ball.h") == 0.0 && val(&x, right, "ball.h") == 0.0);
        cr_assert(fabs(val(&x, left, "ball.v") + sqrt(2.0 * 9.81 * 1.0)) < 1e-9);
        cr_assert(val(&x, right, "ball.v") == -0.7 * val(&x, left, "ball.v"));
        /* LinearOde was restored and stepped to the bounce, then on to the grid. */
        cr_assert(val(&x, left, "lin.x") == val(&x, before, "lin.x") * exp(-1.0 * (te - before->t)));
        cr_assert(val(&x, right, "lin.x") == val(&x, left, "lin.x"));
        cr_assert(val(&x, after, "lin.x") == val(&x, right, "lin.x") * exp(-1.0 * (after->t - te)));
        /* Its input from the bounce on is the ball's height there. */
        cr_assert(val(&x, after, "lin.u0") == val(&x, right, "ball.h"));
        cr_assert(val(&x, left, "lin.u0") == val(&x, before, "ball.h"));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 1));
        cr_assert(eq(u64, st.events, 1));
        cr_assert(st.restores >= 1);
        cr_assert(eq(sz, x.n_rows, (size_t)13));
        msys_fini(&x);
}

/*
 * Beside an instance whose state cannot be restored (GlobalCounter), under
 * Jacobi, an early return could not be met: the ball is instantiated with
 * earlyReturnAllowed false (FMI 3.0 section 4.2.1: the importer decides) and
 * completes its steps, bouncing inside them. The run finishes, with no
 * extra point and no restore; it used to fault at the first bounce.
 */
Test(master_events, an_early_return_that_cannot_be_met_is_not_allowed)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BouncingBall") MSYS_COMP("counter", "GlobalCounter"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.bounces"),
        };
        struct master_stats st;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(not(session_early_return_allowed(x.s, 0)));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.restores, 0));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 1.0));
        cr_assert(x.rows[x.n_rows - 1].v[msys_col(&x, "ball.bounces")] >= 1.0);
        msys_fini(&x);
}

Test(master_events, intermediate_inputs_are_the_producers_extrapolated_outputs)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("lin", "LinearOde") MSYS_COMP("probe", "IntermediateProbe"),
                .connections = MSYS_CONN("lin", "x", "probe", "u"),
                .parameters = MSYS_REAL("lin.k", "0.5"),
                .stop = 0.5,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("lin.x") MSYS_RECORD("probe.n_updates")
                            MSYS_RECORD("probe.last_u") MSYS_RECORD("probe.sum_u")
                            MSYS_RECORD("probe.last_t") MSYS_RECORD("probe.y"),
        };
        size_t n, n_iu = 0, probe;
        const struct mrow **g;
        struct msys x;

        msys_load(&x, &spec);
        x.so.record_intermediate = true;
        msys_start(&x);
        probe = msys_comp(&x, "probe");
        cr_assert(session_iu_enabled(x.s, probe));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)6));
        for (size_t k = 0; k + 1 < n; k++) {
                /* lin: x' = -k x with k = 0.5: x' = -0.5 x, x'' = 0.25 x at t_k, exactly. */
                double t = g[k]->t, h = g[k + 1]->t - t, y = val(&x, g[k], "lin.x");
                double d1 = -0.5 * y, d2 = 0.25 * y, sum = 0.0, u = 0.0, tj = t;

                for (int j = 1; j <= 4; j++) {
                        double dt;

                        tj = j == 4 ? t + h : t + h * j / 4;
                        dt = tj - t;
                        u = y + d1 * dt + d2 * dt * dt / 2.0;
                        sum += u;
                }
                cr_assert(eq(dbl, val(&x, g[k + 1], "probe.n_updates"), 4.0));
                cr_assert(val(&x, g[k + 1], "probe.last_u") == u, "last_u at %zu", k + 1);
                cr_assert(val(&x, g[k + 1], "probe.sum_u") == sum, "sum_u at %zu", k + 1);
                cr_assert(val(&x, g[k + 1], "probe.last_t") == tj, "last_t at %zu", k + 1);
        }
        /* Intermediate rows: one per update, flagged, at the update times. */
        for (size_t i = 0; i < x.n_rows; i++)
                if (x.rows[i].flags & MASTER_ROW_INTERMEDIATE) {
                        cr_assert(eq(sz, x.rows[i].comp, probe));
                        n_iu++;
                }
        cr_assert(eq(sz, n_iu, (size_t)20));
        free(g);
        msys_fini(&x);
}

/* A pause requested while the probe steps from t_2: the next update sees it. */
static bool pause_in_step_2(void *ctx, size_t comp, double *time)
{
        struct msys *x = ctx;

        (void) comp;
        if (*time > 0.2 && *time < 0.3 && !x->user) {
                x->user = x;    /* once */
                master_request_pause(x->m);
        }
        return false;
}

Test(master_events, a_pause_can_end_a_step_early_through_an_intermediate_update)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("lin", "LinearOde") MSYS_COMP("probe", "IntermediateProbe"),
                .connections = MSYS_CONN("lin", "x", "probe", "u"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("lin.x") MSYS_RECORD("probe.last_t"),
        };
        const struct mrow *last;
        struct msys x;

        msys_load(&x, &spec);
        x.mo.early_return_on_request = true;
        x.mo.iu_hook = pause_in_step_2;
        x.mo.iu_hook_ctx = &x;
        msys_start(&x);
        /* Requested in the step from t_2, it ends that step at its first update (t_2 + h/4). */
        cr_assert(eq(int, master_run(x.m), MASTER_PAUSED), "%s", master_message(x.m));
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(uint, last->flags, MASTER_ROW_EXTRA));
        cr_assert(eq(dbl, last->t, master_time(x.m)));
        cr_assert(eq(dbl, master_time(x.m), 0.2 + (0.30000000000000004 - 0.2) * 1 / 4));
        cr_assert(val(&x, last, "probe.last_t") == master_time(x.m));
        /* LinearOde met it there. */
        cr_assert(val(&x, last, "lin.x") == val(&x, last - 1, "lin.x") *
                  exp(-1.0 * (last->t - (last - 1)->t)));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, x.n_rows, (size_t)12));
        msys_fini(&x);
}

Test(master_events, a_slow_instance_past_the_next_point_handles_its_event_alone)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BouncingBall") MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("ball", "h", "lin", "u0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = "<fmud:Component name=\"ball\" multirate=\"5\"/>"
                            MSYS_RECORD("ball.h") MSYS_RECORD("ball.v") MSYS_RECORD("lin.x"),
        };
        double g = 9.81, tb = sqrt(2.0 / g), v_up = 0.7 * sqrt(2.0 * g);
        const struct mrow *r5;
        struct master_stats st;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        /* The ball returned early at the bounce (after t_1), ran Event Mode and went on alone. */
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 1));
        cr_assert(eq(u64, st.restores, 0));
        cr_assert(eq(sz, x.n_rows, (size_t)11));
        for (size_t k = 1; k < 5; k++)
                cr_assert(val(&x, &x.rows[k], "ball.v") == 0.0, "ball.v held at %zu", k);
        r5 = msys_row(&x, 0.5, 0);
        cr_assert(r5 != NULL);
        cr_assert(fabs(val(&x, r5, "ball.v") - (v_up - g * (0.5 - tb))) < 1e-9, "v = %.17g",
                  val(&x, r5, "ball.v"));
        cr_assert(fabs(val(&x, r5, "ball.h") - (v_up * (0.5 - tb) - g / 2 * (0.5 - tb) *
                                                 (0.5 - tb))) < 1e-9);
        /* LinearOde went on at the base step, undisturbed. */
        cr_assert(val(&x, &x.rows[10], "lin.x") == val(&x, &x.rows[9], "lin.x") *
                  exp(-1.0 * (x.rows[10].t - x.rows[9].t)));
        msys_fini(&x);
}
