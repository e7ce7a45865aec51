/*
 * master: time events (FMI 3.0 sections 3.2.2 and 4.3.3: the nextEventTime
 * an FMU returns from fmi3UpdateDiscreteStates), with TimeEvent (a counter
 * that jumps at phase + k period, x' = count, z' = u, gain = 2 base,
 * y = gain (1 + count)). Parameter connections, with the same FMU, are in
 * test_master_params.c.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
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

/* The rows at time t: *ret_left the MASTER_ROW_EVENT_LEFT one, *ret_right the next. */
static size_t rows_at(const struct msys *x, double t, const struct mrow **ret_left,
                      const struct mrow **ret_right)
{
        size_t n = 0;

        *ret_left = *ret_right = NULL;
        for (size_t i = 0; i < x->n_rows; i++) {
                if (x->rows[i].t != t || (x->rows[i].flags & MASTER_ROW_INTERMEDIATE))
                        continue;
                n++;
                if (x->rows[i].flags & MASTER_ROW_EVENT_LEFT)
                        *ret_left = &x->rows[i];
                else
                        *ret_right = &x->rows[i];
        }
        return n;
}

/* Every grid row is at t0 + n h exactly (never accumulated), n = 0..n_expected-1. */
static void grid_is_exact(const struct msys *x, double h, size_t n_expected)
{
        size_t n;
        const struct mrow **g = msys_grid(x, &n);

        cr_assert(eq(sz, n, n_expected));
        for (size_t k = 0; k < n; k++)
                cr_assert(g[k]->t == (double)k * h, "grid row %zu at %.17g, not %.17g", k,
                          g[k]->t, (double)k * h);
        free(g);
}

/* Load and start spec, run it to the stop time, and take the master's statistics. */
static void run_to_end(struct msys *x, const struct msys_spec *spec, struct master_stats *ret)
{
        msys_load(x, spec);
        msys_start(x);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
        master_get_stats(x->m, ret);
}

#define TE_LIN_SPEC(phase, period) { \
        .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("lin", "LinearOde"), \
        .connections = MSYS_CONN("te", "level", "lin", "u0"), \
        .parameters = MSYS_REAL("te.phase", phase) MSYS_REAL("te.period", period), \
        .stop = 1.0, \
        .attrs = "stepSize=\"0.1\"", \
        .settings = MSYS_RECORD("te.count") MSYS_RECORD("te.x") MSYS_RECORD("te.level") \
                    MSYS_RECORD("lin.x") MSYS_RECORD("lin.u0"), \
}

Test(master_time_events, an_event_between_grid_points_is_an_extra_point_everyone_meets)
{
        struct msys_spec spec = TE_LIN_SPEC("0.15", "0.5");
        const struct mrow *left, *right, *before, *after;
        struct master_stats st;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(session_event_mode_used(x.s, msys_comp(&x, "te")));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        /* Events at 0.15 and 0.65: planned extra points, no early return, no restore. */
        cr_assert(eq(u64, st.extra_points, 2));
        cr_assert(eq(u64, st.events, 2));
        cr_assert(eq(u64, st.restores, 0));
        cr_assert(eq(sz, x.n_rows, (size_t)(11 + 2 * 2)));
        grid_is_exact(&x, 0.1, 11);
        for (int e = 0; e < 2; e++) {
                double te = e == 0 ? 0.15 : 0.65;

                cr_assert(eq(sz, rows_at(&x, te, &left, &right), (size_t)2), "rows at %g", te);
                cr_assert(left && right && right == left + 1);
                cr_assert(eq(uint, left->flags, MASTER_ROW_EXTRA | MASTER_ROW_EVENT_LEFT));
                cr_assert(eq(uint, right->flags, MASTER_ROW_EXTRA));
                /* The counter's left and right values. */
                cr_assert(eq(dbl, val(&x, left, "te.count"), (double)e));
                cr_assert(eq(dbl, val(&x, right, "te.count"), (double)(e + 1)));
                cr_assert(eq(dbl, val(&x, right, "te.level"), (double)(e + 1)));
                before = left - 1;
                after = right + 1;
                cr_assert(before->flags == 0 && after->flags == 0);
                cr_assert(before->t < te && after->t > te);
                /* LinearOde stepped to the event (x' = -x with u0 held at the old level). */
                cr_assert(val(&x, left, "lin.x") == val(&x, before, "lin.x") *
                          exp(-1.0 * (te - before->t)));
                cr_assert(val(&x, right, "lin.x") == val(&x, left, "lin.x"));
                cr_assert(eq(dbl, val(&x, left, "lin.u0"), (double)e));
                /* From the event on, it steps with the new level. */
                cr_assert(eq(dbl, val(&x, after, "lin.u0"), (double)(e + 1)));
        }
        /* x = integral of count: 1 from 0.15, 2 from 0.65. */
        cr_assert(fabs(val(&x, msys_row(&x, 0.5, 0), "te.x") - 0.35) < 1e-12);
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "te.x") - (0.5 + 2 * 0.35)) < 1e-12);
        msys_fini(&x);
}

Test(master_time_events, an_event_on_a_grid_point_adds_no_point)
{
        /* 0.2, 0.5 and 0.8 are 2 h, 5 h and 8 h exactly in binary too. */
        struct msys_spec spec = TE_LIN_SPEC("0.2", "0.3");
        const struct mrow *left, *right;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 3));
        cr_assert(eq(sz, x.n_rows, (size_t)(11 + 3)));
        grid_is_exact(&x, 0.1, 11);
        for (int e = 0; e < 3; e++) {
                double te = (double)(2 + 3 * e) * 0.1;

                cr_assert(eq(sz, rows_at(&x, te, &left, &right), (size_t)2), "rows at %g", te);
                cr_assert(left && right && right == left + 1);
                cr_assert(eq(uint, left->flags, MASTER_ROW_EVENT_LEFT));
                cr_assert(eq(dbl, val(&x, left, "te.count"), (double)e));
                cr_assert(eq(dbl, val(&x, right, "te.count"), (double)(e + 1)));
        }
        msys_fini(&x);
}

Test(master_time_events, an_event_a_rounding_error_before_a_grid_point_is_at_the_grid_point)
{
        /* The event at 0.3; the grid point 3 h = 0.30000000000000004. */
        struct msys_spec spec = TE_LIN_SPEC("0.3", "10");
        const struct mrow *left, *right, *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 1));
        cr_assert(eq(sz, x.n_rows, (size_t)12), "%zu rows", x.n_rows);
        grid_is_exact(&x, 0.1, 11);
        cr_assert(eq(sz, rows_at(&x, 3 * 0.1, &left, &right), (size_t)2));
        cr_assert(left && right && right == left + 1);
        cr_assert(eq(dbl, val(&x, left, "te.count"), 0.0));
        cr_assert(eq(dbl, val(&x, right, "te.count"), 1.0));
        /* The instance went on with the others to the end. */
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, last->t, 1.0));
        cr_assert(fabs(val(&x, last, "te.x") - 0.7) < 1e-12, "x = %.17g", val(&x, last, "te.x"));
        msys_fini(&x);
}

Test(master_time_events, two_instances_meet_at_each_others_events)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEvent"),
                .connections = MSYS_CONN("a", "level", "b", "u") MSYS_CONN("b", "level", "a", "u"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("a.period", "1")
                              MSYS_REAL("b.phase", "0.35") MSYS_REAL("b.period", "1"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.count") MSYS_RECORD("a.z") MSYS_RECORD("b.count")
                            MSYS_RECORD("b.z"),
        };
        const struct mrow *left, *right, *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 2));
        cr_assert(eq(u64, st.events, 2));
        cr_assert(eq(u64, st.restores, 0));
        grid_is_exact(&x, 0.1, 11);
        cr_assert(eq(sz, rows_at(&x, 0.15, &left, &right), (size_t)2));
        cr_assert(val(&x, right, "a.count") == 1.0 && val(&x, right, "b.count") == 0.0);
        cr_assert(eq(sz, rows_at(&x, 0.35, &left, &right), (size_t)2));
        cr_assert(val(&x, right, "a.count") == 1.0 && val(&x, right, "b.count") == 1.0);
        /*
         * z integrates the other's level: each stepped to the other's event
         * and took the new level from there, so z is the time since it.
         */
        cr_assert(fabs(val(&x, right, "b.z") - 0.2) < 1e-12, "b.z = %.17g", val(&x, right, "b.z"));
        last = &x.rows[x.n_rows - 1];
        cr_assert(fabs(val(&x, last, "b.z") - 0.85) < 1e-12, "b.z = %.17g", val(&x, last, "b.z"));
        cr_assert(fabs(val(&x, last, "a.z") - 0.65) < 1e-12, "a.z = %.17g", val(&x, last, "a.z"));
        msys_fini(&x);
}

Test(master_time_events, a_multirate_instance_meets_its_own_event_alone)
{
        struct msys_spec spec = TE_LIN_SPEC("0.15", "0.5");
        const struct mrow *r5, *left, *right;
        struct master_stats st;
        struct msys x;

        spec.settings = "<fmud:Component name=\"te\" multirate=\"5\"/>"
                        MSYS_RECORD("te.count") MSYS_RECORD("te.x") MSYS_RECORD("lin.x")
                        MSYS_RECORD("lin.u0");
        run_to_end(&x, &spec, &st);
        /* Its events at 0.15 and 0.65 fall inside its own steps: nobody else stops there. */
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 2));
        cr_assert(eq(sz, x.n_rows, (size_t)11));
        grid_is_exact(&x, 0.1, 11);
        cr_assert(eq(sz, rows_at(&x, 0.15, &left, &right), (size_t)0));
        for (size_t k = 1; k < 5; k++)
                cr_assert(eq(dbl, val(&x, &x.rows[k], "te.count"), 0.0), "count held at %zu", k);
        r5 = msys_row(&x, 0.5, 0);
        cr_assert(r5 != NULL);
        cr_assert(eq(dbl, val(&x, r5, "te.count"), 1.0));
        cr_assert(fabs(val(&x, r5, "te.x") - 0.35) < 1e-12, "x = %.17g", val(&x, r5, "te.x"));
        /* LinearOde sees the new level only from te's point 0.5 on. */
        cr_assert(eq(dbl, val(&x, r5, "lin.u0"), 0.0));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 6 * 0.1, 0), "lin.u0"), 1.0));
        cr_assert(eq(dbl, val(&x, &x.rows[10], "te.count"), 2.0));
        cr_assert(fabs(val(&x, &x.rows[10], "te.x") - 1.2) < 1e-12);
        msys_fini(&x);
}

Test(master_time_events, without_event_mode_the_fmu_takes_its_events_inside_the_step)
{
        struct msys_spec spec = TE_LIN_SPEC("0.15", "0.5");
        struct master_stats st;
        struct msys x;

        msys_load(&x, &spec);
        x.so.no_event_mode = true;
        msys_start(&x);
        cr_assert(false == session_event_mode_used(x.s, msys_comp(&x, "te")));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 0));
        cr_assert(eq(sz, x.n_rows, (size_t)11));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.2, 0), "te.count"), 1.0));
        cr_assert(fabs(val(&x, &x.rows[10], "te.x") - 1.2) < 1e-12);
        msys_fini(&x);
}

Test(master_time_events, runs_are_bit_identical)
{
        struct msys_spec spec = TE_LIN_SPEC("0.15", "0.5");
        struct msys a, b;

        msys_load(&a, &spec);
        msys_start(&a);
        cr_assert(eq(int, master_run(a.m), MASTER_FINISHED), "%s", master_message(a.m));
        msys_load(&b, &spec);
        msys_start(&b);
        cr_assert(eq(int, master_run(b.m), MASTER_FINISHED), "%s", master_message(b.m));
        cr_assert(eq(sz, a.n_rows, (size_t)15));
        cr_assert(msys_same_rows(&a, &b));
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_time_events, an_event_at_the_stop_time_is_handled_there)
{
        struct msys_spec spec = TE_LIN_SPEC("1", "10");
        const struct mrow *left, *right;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 1));
        cr_assert(eq(sz, rows_at(&x, 1.0, &left, &right), (size_t)2));
        cr_assert(left && right && val(&x, right, "te.count") == 1.0);
        cr_assert(eq(dbl, val(&x, left, "te.count"), 0.0));
        msys_fini(&x);
}

/* A bounce (an early return) at tb = sqrt(2 / 9.81) = 0.4515... and a time event near it. */
static void ball_and_event(const char *phase, double te, bool event_first)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BouncingBall") MSYS_COMP("te", "TimeEvent"),
                .connections = MSYS_CONN("ball", "h", "te", "u"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("ball.v") MSYS_RECORD("te.count") MSYS_RECORD("te.z"),
        };
        char params[256];
        double tb = sqrt(2.0 / 9.81);
        const struct mrow *left, *right;
        struct master_stats st;
        struct msys x;

        snprintf(params, sizeof(params), MSYS_REAL("te.phase", "%s") MSYS_REAL("te.period", "10"),
                 phase);
        spec.parameters = params;
        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 2));
        cr_assert(eq(u64, st.events, 2));
        /* The time event instance went past the bounce in the step that found it. */
        cr_assert(st.restores >= 1);
        grid_is_exact(&x, 0.1, 11);
        cr_assert(eq(sz, rows_at(&x, te, &left, &right), (size_t)2), "rows at the event");
        cr_assert(val(&x, left, "te.count") == 0.0 && val(&x, right, "te.count") == 1.0);
        /* The bounce is an extra point too, one row each side, in time order with the event. */
        left = right = NULL;
        for (size_t i = 0; i < x.n_rows; i++)
                if (fabs(x.rows[i].t - tb) < 1e-12) {
                        if (!left)
                                left = &x.rows[i];
                        right = &x.rows[i];
                }
        cr_assert(left && right && right == left + 1, "rows at the bounce");
        cr_assert(val(&x, left, "ball.v") < 0.0 && val(&x, right, "ball.v") > 0.0);
        cr_assert(event_first ? te < left->t : te > left->t);
        for (size_t i = 1; i < x.n_rows; i++)
                cr_assert(x.rows[i].t >= x.rows[i - 1].t, "rows out of order at %zu", i);
        msys_fini(&x);
}

Test(master_time_events, a_time_event_just_before_an_early_return)
{
        ball_and_event("0.45", 0.45, true);
}

Test(master_time_events, a_time_event_just_after_an_early_return)
{
        /* The event instance went past the bounce: it is restored and meets it first. */
        ball_and_event("0.452", 0.452, false);
}

/* te at multirate rate with its events at phase + k period; it must reach the end. */
static void multirate_event(const char *rate, const char *phase, double t_event)
{
        struct msys_spec spec = TE_LIN_SPEC("0", "10");
        char params[256], settings[512];
        const struct mrow *last;
        struct master_stats st;
        struct msys x;

        snprintf(params, sizeof(params), MSYS_REAL("te.phase", "%s") MSYS_REAL("te.period", "10"),
                 phase);
        snprintf(settings, sizeof(settings), "<fmud:Component name=\"te\" multirate=\"%s\"/>"
                 MSYS_RECORD("te.count") MSYS_RECORD("te.x") MSYS_RECORD("te.level")
                 MSYS_RECORD("lin.x") MSYS_RECORD("lin.u0"), rate);
        spec.parameters = params;
        spec.settings = settings;
        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        cr_assert(eq(u64, st.events, 1));
        grid_is_exact(&x, 0.1, 11);
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "te.count"), 1.0));
        cr_assert(fabs(val(&x, last, "te.x") - (1.0 - t_event)) < 1e-12, "x = %.17g",
                  val(&x, last, "te.x"));
        msys_fini(&x);
}

Test(master_time_events, a_multirate_instance_s_event_on_a_base_grid_point)
{
        multirate_event("5", "0.2", 0.2);
}

Test(master_time_events, a_multirate_instance_s_event_a_rounding_error_before_its_point)
{
        /* Its own point 3 h = 0.30000000000000004; the event at 0.3. */
        multirate_event("3", "0.3", 0.3);
}

Test(master_time_events, a_multirate_instance_s_later_event_a_rounding_error_before_its_point)
{
        /* Events at 0.15 (inside its step, met alone) and 0.15 + 0.15 = 0.3, before 3 h. */
        struct msys_spec spec = TE_LIN_SPEC("0.15", "0.15");
        const struct mrow *last;
        struct master_stats st;
        struct msys x;

        spec.settings = "<fmud:Component name=\"te\" multirate=\"3\"/>"
                        MSYS_RECORD("te.count") MSYS_RECORD("te.x") MSYS_RECORD("lin.x");
        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.extra_points, 0));
        /* 0.15, 0.3, 0.45, 0.6, 0.75, 0.9 (k * 0.15 rounded as the FMU computes it). */
        cr_assert(eq(u64, st.events, 6));
        grid_is_exact(&x, 0.1, 11);
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "te.count"), 6.0));
        msys_fini(&x);
}

Test(master_time_events, events_too_dense_fault_the_step_instead_of_stalling_it)
{
        /* An event every microsecond against h = 0.1: 100,000 extra points per grid interval. */
        struct msys_spec spec = TE_LIN_SPEC("0.05", "1e-6");
        struct master_stats st;
        struct msys x;
        int r;

        msys_load(&x, &spec);
        x.mo.max_extra_points = 200;
        msys_start(&x);
        r = master_run(x.m);
        cr_assert(eq(int, r, -ELOOP), "%d: %s", r, master_message(x.m));
        cr_assert(strstr(master_message(x.m), "more than 200 extra points (early returns or time "
                         "events) between t = 0 and the next grid point 0.10000000000000001") != NULL,
                  "%s", master_message(x.m));
        cr_assert(eq(int, master_state(x.m), MASTER_FAULTED));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 201));
        cr_assert(master_time(x.m) < 0.1);
        msys_fini(&x);
}

Test(master_time_events, terminate_from_event_mode_records_the_values_after_the_event)
{
        /* Events at 0.05, 0.15, 0.25; the third makes count 3 = stop_count: the end. */
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent"),
                .parameters = MSYS_REAL("te.phase", "0.05") MSYS_REAL("te.period", "0.1")
                              MSYS_INT("te.stop_count", "3"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("te.count") MSYS_RECORD("te.y") MSYS_RECORD("te.x"),
        };
        const struct mrow *left, *right, *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        cr_assert(eq(u64, st.events, 3));
        cr_assert(eq(sz, rows_at(&x, 0.25, &left, &right), (size_t)2));
        cr_assert(left && right && right == left + 1);
        last = &x.rows[x.n_rows - 1];
        cr_assert(last == right, "the last row is at %.17g", last->t);
        cr_assert(eq(uint, left->flags, MASTER_ROW_EXTRA | MASTER_ROW_EVENT_LEFT));
        cr_assert(eq(uint, right->flags, MASTER_ROW_EXTRA));
        /* Before the event: 2; after it, as the FMU computed it in Event Mode: 3. */
        cr_assert(eq(dbl, val(&x, left, "te.count"), 2.0));
        cr_assert(eq(dbl, val(&x, right, "te.count"), 3.0));
        cr_assert(eq(dbl, val(&x, right, "te.y"), 3.0 * (1.0 + 3.0)));
        cr_assert(fabs(val(&x, right, "te.x") - (0.1 + 2 * 0.1)) < 1e-12);
        cr_assert(eq(dbl, st.sim_time, 0.25));
        msys_fini(&x);
}

/*
 * A nextEventTime that is NaN, or before the event that gave it, is no
 * time the master can land on (FMI 3.0 section 3.2.2: the time of the next
 * time event): it faults the session at that event, naming the component
 * and the value, instead of being taken for no event or an event now.
 */
#define BAD_NEXT(how) MSYS_REAL("te.phase", "0.05") MSYS_REAL("te.period", "0.1") \
                      MSYS_INT("te.bad_next", how)

static void bad_next_faults(const char *parameters, const char *expect)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent"),
                .parameters = parameters,
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("te.count"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(lt(int, master_run(x.m), 0));
        cr_assert(eq(int, master_state(x.m), MASTER_FAULTED));
        cr_assert(strstr(master_message(x.m), expect) != NULL, "%s", master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.05), "held at %.17g", master_time(x.m));
        msys_fini(&x);
}

Test(master_time_events, a_nan_next_event_time_faults_naming_it)
{
        bad_next_faults(BAD_NEXT("1"), "component 'te': fmi3UpdateDiscreteStates at t = 0.050000000000000003 "
                        "returned nextEventTime nan");
}

Test(master_time_events, a_next_event_time_that_never_advances_faults_naming_it)
{
        bad_next_faults(BAD_NEXT("4"), "component 'te': nextEventTime 0.050000000000000003 is not "
                        "after its event at t = 0.050000000000000003, 100 times in a row: time "
                        "would not advance");
}

Test(master_time_events, a_next_event_time_before_the_event_faults_naming_it)
{
        bad_next_faults(BAD_NEXT("2"), "component 'te': fmi3UpdateDiscreteStates at t = 0.050000000000000003 "
                        "returned nextEventTime -0.94999999999999996");
}

/*
 * TimeEvent with bad_next 3 puts each time event off once, reporting
 * nextEventTime = the event's own time: the master enters Event Mode again
 * at once at that point (FMI 3.0 section 3.2.2), so the count moves there,
 * not a step later (where TimeEvent's step would pass its event: an error).
 */
#define NEXT_NOW(phase) MSYS_REAL("te.phase", phase) MSYS_REAL("te.period", "0.5") \
                        MSYS_INT("te.bad_next", "3")

/* TimeEvent with these bindings, its events at t_event + k 0.5 up to the stop time 1. */
static void next_now(const char *parameters, double t_event)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent"),
                .parameters = parameters,
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("te.count"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)11));
        for (size_t k = 0; k < n; k++) {
                double t = g[k]->t;
                double want = t < t_event - 1e-12 ? 0 : floor((t - t_event) / 0.5 + 1e-9) + 1;

                cr_assert(eq(dbl, val(&x, g[k], "te.count"), want), "t = %g", t);
        }
        free(g);
        msys_fini(&x);
}

Test(master_time_events, a_next_event_time_equal_to_the_event_is_an_event_again_at_once)
{
        next_now(NEXT_NOW("0.2"), 0.2);
}

Test(master_time_events, a_next_event_time_at_the_start_is_an_event_at_the_start)
{
        next_now(NEXT_NOW("0"), 0.0);
}

/*
 * An event a hair after a point, within the master's rounding window of
 * it but not of the FMU's (TimeEvent's at 5e-9, a step of 10 makes the
 * window 1e-8): Event Mode at the point does not take it, and the master
 * must not repeat that until it gives up; it steps to the event instead.
 */
Test(master_time_events, an_event_just_after_a_point_is_not_an_event_again_at_the_point)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent"),
                .parameters = MSYS_REAL("te.phase", "5e-9") MSYS_REAL("te.period", "0.5"),
                .stop = 0.3,
                .attrs = "stepSize=\"10\"",
                .settings = MSYS_RECORD("te.count"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "te.count"), 1.0));
        msys_fini(&x);
}

/*
 * A discrete input that changes (a.count into b.k at a's events, 0.15 and
 * 0.65, off b's own at 0.35 and 0.85) reaches an instance with Event Mode
 * in an Event Mode of its own before its step, never in Step Mode: FMI 3.0
 * section 2.4.7.4 ("discrete": with Event Mode used it may only change in
 * Event Mode) and 4.3.1 (the importer must call fmi3EnterEventMode when it
 * plans discrete changes to inputs). It was set in Step Mode.
 */
Test(master_time_events, a_discrete_input_changes_in_event_mode)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEvent"),
                .connections = MSYS_CONN("a", "count", "b", "k"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("b.phase", "0.35"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("b.k_events") MSYS_RECORD("b.k_in_step")
                            MSYS_RECORD("a.count") MSYS_RECORD("b.count"),
        };
        const struct mrow *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "a.count"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "b.count"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "b.k_in_step"), 0.0));
        cr_assert(eq(dbl, val(&x, last, "b.k_events"), 2.0));
        /* Each instance's own two events, and b's two input events. */
        cr_assert(eq(u64, st.events, 6));
        msys_fini(&x);
}

/*
 * String and Binary discrete inputs are discrete inputs like the others
 * (FMI 3.0 section 2.4.7.4: with Event Mode used they may change only in
 * Event Mode): a.tag ("count=N") into b.label and a.raw (one byte) into
 * b.blob change at a's events, 0.15 and 0.65, and reach b in an Event
 * Mode of b's before its step, compared by their contents. They were set
 * in Step Mode.
 */
Test(master_time_events, string_and_binary_discrete_inputs_change_in_event_mode)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEvent"),
                .connections = MSYS_CONN("a", "tag", "b", "label") MSYS_CONN("a", "raw", "b", "blob"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("b.phase", "0.35"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("b.label_events") MSYS_RECORD("b.label_in_step")
                            MSYS_RECORD("b.blob_events") MSYS_RECORD("b.blob_in_step")
                            MSYS_RECORD("a.count"),
        };
        const struct mrow *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "a.count"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "b.label_in_step"), 0.0));
        cr_assert(eq(dbl, val(&x, last, "b.blob_in_step"), 0.0));
        /* "count=0" and {0} come in Initialization Mode; the changes at 0.15 and 0.65. */
        cr_assert(eq(dbl, val(&x, last, "b.label_events"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "b.blob_events"), 2.0));
        /* Each instance's own two events, and b's two input events (both inputs in each). */
        cr_assert(eq(u64, st.events, 6));
        msys_fini(&x);
}

/*
 * An output Clock that ticks in the Event Mode of an input's change (b.kc,
 * when a.count reaches b.k at 0.15) ticks its consumer's triggered input
 * Clock (c.trg) at that point, in an Event Mode of c's before its step from
 * there (FMI 3.0 section 2.2.8.3: the consumer's Clock ticks with the
 * producer's). It ticked a point late, at 0.2, where the rows showed it
 * unticked before an Event Mode of its own.
 */
Test(master_time_events, an_output_clock_of_an_input_change_ticks_its_consumer_at_that_point)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEventKc")
                            MSYS_COMP("c", "ClockKinds"),
                .connections = MSYS_CONN("a", "count", "b", "k") MSYS_CONN("b", "kc", "c", "trg"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("b.phase", "0.35"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("b.k_events") MSYS_RECORD("c.n_trg"),
        };
        const struct mrow *untriggered = NULL, *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        for (size_t i = 0; i < x.n_rows; i++)
                if (val(&x, &x.rows[i], "c.n_trg") == 0.0)
                        untriggered = &x.rows[i];
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "b.k_events"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "c.n_trg"), 2.0));
        cr_assert(untriggered != NULL);
        cr_assert(eq(dbl, untriggered->t, 0.15), "c.trg ticked only after t = %.17g",
                  untriggered->t);
        msys_fini(&x);
}

/*
 * An output Clock that ticks in the Event Mode of a set between points
 * (b.kc, when k is set at 0.3) is flagged in the next recorded row, at
 * 0.4, once. The next point cleared it before any row was written.
 */
Test(master_time_events, an_output_clock_of_a_sets_event_mode_is_flagged_in_the_next_row)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("b", "TimeEventKc"),
                .parameters = MSYS_REAL("b.period", "0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("b.kc") MSYS_RECORD("b.k_events"),
        };
        const uint32_t k = 14;
        const int32_t seven = 7;
        double flagged = 0.0;
        const struct mrow *at;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(master_run_until(x.m, 0.3) >= 0, "%s", master_message(x.m));
        cr_assert(eq(int, master_set_event_begin(x.m, 0), 1), "%s", master_message(x.m));
        cr_assert(eq(int, inst_set(session_inst(x.s, 0), MD_INT32, &k, 1, &seven, 1), INST_OK));
        cr_assert(eq(int, master_set_event_end(x.m, 0), 0), "%s", master_message(x.m));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (size_t i = 0; i < x.n_rows; i++)
                flagged += val(&x, &x.rows[i], "b.kc");
        at = msys_row(&x, 0.4, 0);
        cr_assert(at != NULL);
        cr_assert(eq(dbl, val(&x, at, "b.kc"), 1.0));
        cr_assert(eq(dbl, val(&x, at, "b.k_events"), 1.0));
        cr_assert(eq(dbl, flagged, 1.0));
        msys_fini(&x);
}

/*
 * The consumer of that Clock asks to terminate in the Event Mode of its
 * tick (c.stop_trg = 1): the run finishes there, at 0.15, with the row
 * after the event (FMI 3.0 section 3.2.2). It was sent a step in Event
 * Mode, and faulted.
 */
Test(master_time_events, terminate_in_the_event_mode_of_a_clock_an_input_change_ticked_finishes)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEventKc")
                            MSYS_COMP("c", "ClockKinds"),
                .connections = MSYS_CONN("a", "count", "b", "k") MSYS_CONN("b", "kc", "c", "trg"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("b.phase", "0.35")
                              MSYS_REAL("c.stop_trg", "1"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("c.n_trg"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(strstr(master_message(x.m), "terminateSimulation requested by 'c'") != NULL,
                  "%s", master_message(x.m));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 0.15));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "c.n_trg"), 1.0));
        msys_fini(&x);
}

/*
 * A later Gauss-Seidel stage's discrete input changes only once its
 * producer stepped (a.count into b.k, a's events at 0.15 and 0.65), and
 * the Event Mode b then gets before its own step schedules a time event
 * inside that step (k_delay 0.02: at 0.17 and 0.67). The point is cut
 * there: b steps to it, a goes back to the point it left and steps to it
 * too, and b's time event comes at 0.17 (FMI 3.0 section 4.3.3: the
 * importer must not step past nextEventTime). b was sent on to 0.2 and
 * refused the step that passed its event.
 */
Test(master_time_events, a_time_event_from_a_later_stages_input_event_cuts_the_point)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEvent"),
                .connections = MSYS_CONN("a", "count", "b", "k"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("b.period", "0")
                              MSYS_REAL("b.k_delay", "0.02"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\" algorithm=\"gauss-seidel\" order=\"a b\"",
                .settings = "<fmud:GaussSeidel input=\"b.k\"/>" MSYS_RECORD("b.k_events")
                            MSYS_RECORD("b.k_fired") MSYS_RECORD("a.count"),
        };
        const struct mrow *fired = NULL, *last;
        struct master_stats st;
        struct msys x;

        run_to_end(&x, &spec, &st);
        for (size_t i = 0; i < x.n_rows && !fired; i++)
                if (val(&x, &x.rows[i], "b.k_fired") == 1.0)
                        fired = &x.rows[i];
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "b.k_events"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "b.k_fired"), 2.0));
        cr_assert(fired != NULL);
        cr_assert(fabs(fired->t - 0.17) < 1e-12, "b's timer fired at t = %.17g", fired->t);
        cr_assert(st.restores > 0, "a went back to meet b");
        msys_fini(&x);
}

/*
 * An instance that asks to terminate in the Event Mode of its input's
 * change (b.stop_k = 1: when a.count reaches it, at 0.15) ends the run
 * there: finished, saying who asked and where, the last row at 0.15.
 */
Test(master_time_events, terminate_in_the_event_mode_of_an_input_change_finishes_there)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("a", "TimeEvent") MSYS_COMP("b", "TimeEvent"),
                .connections = MSYS_CONN("a", "count", "b", "k"),
                .parameters = MSYS_REAL("a.phase", "0.15") MSYS_REAL("b.phase", "0.35")
                              MSYS_INT("b.stop_k", "1"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("b.k_events") MSYS_RECORD("a.count"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(not(eq(ptr, strstr(master_message(x.m), "terminateSimulation requested by 'b' "
                                     "at t = 0.1"), NULL)), "%s", master_message(x.m));
        cr_assert(not(eq(ptr, strstr(master_message(x.m), "discrete input"), NULL)), "%s", master_message(x.m));
        cr_assert(fabs(x.rows[x.n_rows - 1].t - 0.15) < 1e-12, "%.17g", x.rows[x.n_rows - 1].t);
        cr_assert(eq(int, master_terminate(x.m), 0), "%s", master_message(x.m));
        msys_fini(&x);
}
