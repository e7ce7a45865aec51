/*
 * Clocks of a Model Exchange FMU in its worker (FMI 3.0 sections 2.2.8
 * and 3.2): ClockedME integrates x' = -x from x(0) = 1, so x = exp(-t);
 * its input Clock sample (interval 0.1) holds xs = x and counts its ticks
 * in n_sample; its output Clock cross ticks at the state event where x
 * falls to 0.5, t = ln 2, with t_cross = time there. The master lands a
 * point on every tick of sample, and the worker ends the step at the
 * state event for the master's Event Mode, where cross is read.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_master_sys.h"

#define VR_SAMPLE 100u
#define VR_CROSS 101u
/* CVODE at the description's tolerance (1e-8) against the closed form. */
#define CLOSE 1e-6

#define CLOCKED_ME_SPEC { \
        .elements = MSYS_COMP("c", "ClockedME"), \
        .stop = 1.0, \
        .attrs = "stepSize=\"0.25\"", \
        .settings = MSYS_RECORD("c.x") MSYS_RECORD("c.xs") MSYS_RECORD("c.n_sample") \
                    MSYS_RECORD("c.t_cross") MSYS_RECORD("c.n_cross") MSYS_RECORD("c.cross"), \
}

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

/* Load spec, run it to its end; its last row. */
static const struct mrow *run(struct msys *x, const struct msys_spec *spec)
{
        msys_load(x, spec);
        msys_start(x);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
        return &x->rows[x->n_rows - 1];
}

static void run_to_end(struct msys *x)
{
        struct msys_spec spec = CLOCKED_ME_SPEC;

        (void) run(x, &spec);
}

/* The row after the event at t (or the point at t), within 1e-12. */
static const struct mrow *right_at(const struct msys *x, double t)
{
        const struct mrow *r = NULL;

        for (size_t i = 0; i < x->n_rows; i++)
                if (fabs(x->rows[i].t - t) < 1e-12 && !(x->rows[i].flags & MASTER_ROW_EVENT_LEFT))
                        r = &x->rows[i];
        cr_assert(r != NULL, "no row at t = %g", t);
        return r;
}

Test(me_clocks, the_sampled_partition_runs_at_every_tick_of_its_input_clock)
{
        struct msys x;

        run_to_end(&x);
        for (int k = 0; k <= 10; k++) {
                const struct mrow *r = right_at(&x, k / 10.0);

                cr_assert(eq(dbl, val(&x, r, "c.n_sample"), k + 1.0), "t = %g", r->t);
                cr_assert(fabs(val(&x, r, "c.xs") - exp(-r->t)) < CLOSE, "t = %g: xs %.17g",
                          r->t, val(&x, r, "c.xs"));
        }
        /* Between ticks xs holds: at 0.25 it is still the sample of 0.2. */
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.25), "c.xs"),
                     val(&x, right_at(&x, 0.2), "c.xs")));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "c"), VR_SAMPLE), 11));
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "c.x") - exp(-1.0)) < CLOSE);
        msys_fini(&x);
}

Test(me_clocks, the_output_clock_ticks_at_the_state_event_inside_a_step)
{
        const struct mrow *tick = NULL;
        struct msys x;

        run_to_end(&x);
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "c"), VR_CROSS), 1));
        for (size_t i = 0; i < x.n_rows; i++)
                if (val(&x, &x.rows[i], "c.cross") == 1.0) {
                        cr_assert(tick == NULL, "cross ticked twice, at %.17g and %.17g",
                                  tick ? tick->t : 0.0, x.rows[i].t);
                        tick = &x.rows[i];
                }
        /* A point of its own inside the step (0.5, 0.75): the step returned early there. */
        cr_assert(tick != NULL);
        cr_assert(fabs(tick->t - log(2.0)) < CLOSE, "cross at %.17g", tick->t);
        cr_assert(eq(dbl, val(&x, tick, "c.t_cross"), tick->t));
        cr_assert(eq(dbl, val(&x, tick, "c.n_cross"), 1.0));
        cr_assert(fabs(val(&x, tick, "c.x") - 0.5) < CLOSE, "x %.17g", val(&x, tick, "c.x"));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.6), "c.n_cross"), 0.0));
        cr_assert(eq(dbl, val(&x, right_at(&x, 1.0), "c.t_cross"), tick->t));
        /* The grid is not shifted by the early return: 0.75 is a point still. */
        cr_assert(fabs(val(&x, right_at(&x, 0.75), "c.x") - exp(-0.75)) < CLOSE);
        msys_fini(&x);
}

Test(me_clocks, runs_are_bit_identical)
{
        struct msys a, b;

        run_to_end(&a);
        run_to_end(&b);
        cr_assert(msys_same_rows(&a, &b));
        msys_fini(&a);
        msys_fini(&b);
}

/* Its events end its steps early: a session without early return is refused, saying why. */
Test(me_clocks, a_session_without_early_return_is_refused_saying_why)
{
        struct msys_spec spec = CLOCKED_ME_SPEC;
        char *msg = NULL;
        struct msys x;

        msys_load(&x, &spec);
        x.so.no_early_return = true;
        cr_assert(msys_session_try(&x, &msg) < 0);
        cr_assert(msg != NULL && strstr(msg, "component 'c': a Model Exchange FMU with Clocks "
                                        "ends its steps at its events, which needs "
                                        "earlyReturnAllowed: the session turns early return "
                                        "off") != NULL, "%s", msg ? msg : "(none)");
        free(msg);
        msys_fini(&x);
}

/*
 * Beside a Co-Simulation FMU: cross drives ClockKinds' triggered input
 * Clock trg with t_cross on its clocked input tu (ty sums tu over the
 * ticks of trg), so trg ticks once, at the state event, with ln 2.
 */
Test(me_clocks, its_output_clock_ticks_a_connected_clock_of_a_co_simulation_fmu)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c", "ClockedME") MSYS_COMP("k", "ClockKinds"),
                .connections = MSYS_CONN("c", "cross", "k", "trg")
                               MSYS_CONN("c", "t_cross", "k", "tu"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.25\"",
                .settings = MSYS_RECORD("k.ty") MSYS_RECORD("k.n_trg") MSYS_RECORD("c.t_cross"),
        };
        const struct mrow *last;
        struct msys x;

        last = run(&x, &spec);
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "k"), 7), 1));
        cr_assert(eq(dbl, val(&x, last, "k.n_trg"), 1.0));
        cr_assert(fabs(val(&x, last, "c.t_cross") - log(2.0)) < CLOSE);
        cr_assert(eq(dbl, val(&x, last, "k.ty"), val(&x, last, "c.t_cross")));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.6), "k.n_trg"), 0.0));
        msys_fini(&x);
}

/*
 * A continuous input set at every step, from TimeEvent's level (0 before
 * 0.25, 1 before 0.75, then 2): the worker restarts the integrator from
 * the states without an event, and x' = level - x stays the closed form
 * of each piece. The indicator x - 0.5 - u crosses 0 where u jumps to 1:
 * a state event at 0.25 itself, where cross ticks, and never again.
 */
Test(me_clocks, a_continuous_input_set_at_every_step_integrates_as_the_closed_form)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedME"),
                .connections = MSYS_CONN("te", "level", "c", "u"),
                .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.25\"",
                .settings = MSYS_RECORD("c.x") MSYS_RECORD("c.n_cross") MSYS_RECORD("c.n_sample")
                            MSYS_RECORD("c.t_cross"),
        };
        double x25 = exp(-0.25), x75 = 1.0 + (x25 - 1.0) * exp(-0.5);
        const struct mrow *last;
        struct msys x;

        last = run(&x, &spec);
        cr_assert(fabs(val(&x, right_at(&x, 0.2), "c.x") - exp(-0.2)) < CLOSE);
        cr_assert(fabs(val(&x, right_at(&x, 0.5), "c.x") - (1.0 + (x25 - 1.0) * exp(-0.25)))
                  < CLOSE, "x(0.5) %.17g", val(&x, right_at(&x, 0.5), "c.x"));
        cr_assert(fabs(val(&x, last, "c.x") - (2.0 + (x75 - 2.0) * exp(-0.25))) < CLOSE,
                  "x(1) %.17g", val(&x, last, "c.x"));
        cr_assert(eq(dbl, val(&x, last, "c.n_cross"), 1.0));
        cr_assert(eq(dbl, val(&x, last, "c.t_cross"), 0.25));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "c"), VR_CROSS), 1));
        cr_assert(eq(dbl, val(&x, last, "c.n_sample"), 11.0));
        msys_fini(&x);
}

/*
 * A discrete input the master sets with every step again (TimeEvent's
 * level into d, changing at 0.25 and 0.75): the worker leaves its
 * unchanged value out in Continuous-Time Mode, so the FMU enters Event
 * Mode only for the master: after initialization, at the ticks of sample
 * at 0 to 1 (11), for d's changes (2) and at the state event (1).
 */
Test(me_clocks, a_discrete_input_set_with_every_step_opens_no_event_mode_of_its_own)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedME"),
                .connections = MSYS_CONN("te", "level", "c", "d"),
                .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.25\"",
                .settings = MSYS_RECORD("c.n_enter") MSYS_RECORD("c.n_cross"),
        };
        const struct mrow *last;
        struct msys x;

        last = run(&x, &spec);
        cr_assert(eq(dbl, val(&x, last, "c.n_cross"), 1.0));
        cr_assert(eq(dbl, val(&x, last, "c.n_enter"), 15.0));
        msys_fini(&x);
}

/* Another Model Exchange component can vary its step but has no FMU states: refused, saying so. */
Test(me_clocks, a_session_with_another_model_exchange_fmu_is_refused_saying_why)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c", "ClockedME") MSYS_COMP("vdp", "VanDerPol"),
                .stop = 1.0,
        };
        char *msg = NULL;
        struct msys x;

        msys_load(&x, &spec);
        cr_assert(msys_session_try(&x, &msg) < 0);
        cr_assert(msg != NULL && strstr(msg, "earlyReturnAllowed: another component can vary its "
                                        "step but cannot restore its state") != NULL, "%s",
                  msg ? msg : "(none)");
        free(msg);
        msys_fini(&x);
}

/* ClockedME with these bindings to t = 1, h = 0.25: run to its end. */
static void run_with(struct msys *x, const char *parameters)
{
        struct msys_spec spec = CLOCKED_ME_SPEC;

        spec.parameters = parameters;
        spec.settings = MSYS_RECORD("c.x") MSYS_RECORD("c.n_tev");
        (void) run(x, &spec);
}

/*
 * A time event of the FMU (nextEventTime 0.66, off the grid and the ticks),
 * known from the master's Event Mode: the step ends there for it.
 */
Test(me_clocks, a_time_event_of_the_fmu_is_a_point_with_its_event_mode)
{
        struct msys x;

        run_with(&x, MSYS_REAL("c.t_ev", "0.66"));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.6), "c.n_tev"), 0.0));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.66), "c.n_tev"), 1.0));
        cr_assert(fabs(val(&x, right_at(&x, 0.66), "c.x") - exp(-0.66)) < CLOSE);
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "c.x") - exp(-1.0)) < CLOSE);
        msys_fini(&x);
}

/* A time event at a step's end (0.75): the step is whole and says eventHandlingNeeded. */
Test(me_clocks, a_time_event_at_the_end_of_a_step_is_handled_there)
{
        struct msys x;

        run_with(&x, MSYS_REAL("c.t_ev", "0.75"));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.7), "c.n_tev"), 0.0));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.75), "c.n_tev"), 1.0));
        cr_assert(fabs(val(&x, right_at(&x, 0.75), "c.x") - exp(-0.75)) < CLOSE);
        msys_fini(&x);
}

/* A terminate asked at its time event 0.45 ends the session there. */
Test(me_clocks, a_terminate_at_a_time_event_ends_the_run_there)
{
        struct msys x;

        run_with(&x, MSYS_REAL("c.t_stop", "0.45"));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 0.45));
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "c.x") - exp(-0.45)) < CLOSE);
        msys_fini(&x);
}

/* The notes the master gives, one after the other, in the buffer at ctx. */
static void keep_note(void *ctx, size_t comp, const char *message)
{
        char *buf = ctx;
        size_t len = strlen(buf);

        (void) comp;
        snprintf(buf + len, 1024 - len, "%s\n", message);
}

/*
 * Gauss-Seidel, TimeEvent before ClockedME (its level, 0 throughout, into
 * u): c returns early at ln 2, te steps again to meet it, and c, already
 * there and without FMU states, keeps its step instead of faulting, which
 * the master says once.
 */
Test(me_clocks, a_gauss_seidel_consumer_at_its_own_early_return_keeps_its_step)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedME"),
                .connections = MSYS_CONN("te", "level", "c", "u"),
                .parameters = MSYS_REAL("te.phase", "5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.25\" algorithm=\"gauss-seidel\" order=\"te c\"",
                .settings = MSYS_RECORD("c.x") MSYS_RECORD("c.t_cross") MSYS_RECORD("c.n_cross"),
        };
        const struct mrow *last;
        char notes[1024] = "";
        const char *first;
        struct msys x;

        msys_load(&x, &spec);
        x.mo.note = keep_note;
        x.mo.note_ctx = notes;
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        last = &x.rows[x.n_rows - 1];
        first = strstr(notes, "component 'c' keeps its step to t = 0.69314");
        cr_assert(first != NULL && strstr(first + 1, "component 'c' keeps") == NULL, "%s", notes);
        cr_assert(strstr(notes, "it cannot restore its FMU state; said once") != NULL, "%s", notes);
        cr_assert(eq(dbl, val(&x, last, "c.n_cross"), 1.0));
        cr_assert(fabs(val(&x, last, "c.t_cross") - log(2.0)) < CLOSE);
        cr_assert(fabs(val(&x, last, "c.x") - exp(-1.0)) < CLOSE);
        msys_fini(&x);
}

/* x = t exactly, and x - level - u rises through 0 at t = 0.699999995. */
#define EXACT_CROSSING MSYS_REAL("c.x0", "0") MSYS_REAL("c.k", "0") MSYS_REAL("c.u", "1") \
                       MSYS_REAL("c.level", "-0.300000005")

/*
 * A time event of the FMU at t_ev = 0.6999999951, 1e-10 after that state
 * event: with a step of 10 the master rounds the early return onto its
 * point t_ev (1e-9 of its step) and enters Event Mode there; the FMU goes
 * to t_ev for its time event instead of naming it as its next event over
 * and over.
 */
Test(me_clocks, a_time_event_within_rounding_of_an_early_return_is_handled)
{
        struct msys_spec spec = CLOCKED_ME_SPEC;
        struct msys x;

        spec.parameters = EXACT_CROSSING MSYS_REAL("c.t_ev", "0.6999999951");
        spec.attrs = "stepSize=\"10\"";
        spec.settings = MSYS_RECORD("c.x") MSYS_RECORD("c.n_tev");
        (void) run(&x, &spec);
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.6), "c.n_tev"), 0.0));
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "c.n_tev"), 1.0));
        msys_fini(&x);
}

/*
 * A time event at the end (0.7, a tick) of the step that returned early at
 * the state event (ln 2): the master is at ln 2, not rounded, and the FMU
 * stays there until it integrates on to 0.7.
 */
Test(me_clocks, a_time_event_at_the_end_of_a_step_that_returned_early_stays_ahead)
{
        struct msys x;

        run_with(&x, MSYS_REAL("c.t_ev", "0.7"));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.6), "c.n_tev"), 0.0));
        cr_assert(eq(dbl, val(&x, right_at(&x, 0.7), "c.n_tev"), 1.0));
        cr_assert(fabs(val(&x, right_at(&x, 0.7), "c.x") - exp(-0.7)) < CLOSE);
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "c.x") - exp(-1.0)) < CLOSE);
        msys_fini(&x);
}

/*
 * x = t exactly (x0 = 0, k = 0, u = 1) and the indicator x - level - u
 * rises through 0 at t = 0.699999995, 5e-9 before the tick at 0.7; with
 * a step of 10 the master rounds that early return onto 0.7 (1e-9 of its
 * step) and the next step starts there, which the worker takes, moving
 * the FMU's time on with its states held: x lags t by those 5e-9.
 */
Test(me_clocks, a_step_from_a_point_the_master_rounded_an_early_return_onto_runs)
{
        struct msys_spec spec = CLOCKED_ME_SPEC;
        struct msys x;

        spec.parameters = EXACT_CROSSING;
        spec.attrs = "stepSize=\"10\"";
        (void) run(&x, &spec);
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "c.x") - 1.0) < 1e-8, "x(1) %.17g",
                  val(&x, &x.rows[x.n_rows - 1], "c.x"));
        msys_fini(&x);
}

/*
 * u set in the master's Event Mode: TimeEvent's level jumps to 1 at 0.4,
 * a tick of sample, so c's Event Mode there sets u = 1, and x(0.4) - 0.5 - 1
 * < 0: the FMU ticks cross in that Event Mode (FMI 3.0 section 3.2.2), and
 * the master reads it there, at 0.4.
 */
Test(me_clocks, an_output_clock_an_input_set_in_event_mode_ticks_is_read_there)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedME"),
                .connections = MSYS_CONN("te", "level", "c", "u"),
                .parameters = MSYS_REAL("te.phase", "0.4") MSYS_REAL("te.period", "10"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.25\"",
                .settings = MSYS_RECORD("c.t_cross") MSYS_RECORD("c.n_cross"),
        };
        const struct mrow *last;
        struct msys x;

        last = run(&x, &spec);
        cr_assert(eq(dbl, val(&x, last, "c.n_cross"), 1.0));
        cr_assert(fabs(val(&x, last, "c.t_cross") - 0.4) < 1e-12, "t_cross %.17g",
                  val(&x, last, "c.t_cross"));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "c"), VR_CROSS), 1));
        msys_fini(&x);
}

/* A Discard from fmi3UpdateDiscreteStates in the master's Event Mode: said with the FMU's message. */
Test(me_clocks, a_discarded_event_says_what_the_fmu_logged)
{
        struct msys_spec spec = CLOCKED_ME_SPEC;
        const char *msg;
        struct msys x;

        spec.parameters = MSYS_REAL("c.t_dis", "0.45");
        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(master_run(x.m) != MASTER_FINISHED);
        msg = master_message(x.m);
        cr_assert(strstr(msg, "component 'c': fmi3UpdateDiscreteStates returned Discard") != NULL &&
                  strstr(msg, "fmi3UpdateDiscreteStates: discarded at t = 0.45") != NULL, "%s",
                  msg);
        msys_fini(&x);
}

/* The row at t with exactly these flags; NULL when there is none. */
static const struct mrow *row_at(const struct msys *x, double t, unsigned flags)
{
        for (size_t i = 0; i < x->n_rows; i++)
                if (fabs(x->rows[i].t - t) < 1e-12 && x->rows[i].flags == flags)
                        return &x->rows[i];
        return NULL;
}

/*
 * A multirate instance's Clocks that tick between its points (c steps 1.0
 * beside te's 0.25, and runs on alone through sample's ticks at 0.3 to 0.9
 * and cross at ln 2) are flagged in the row at 1.0 before its Event Mode
 * there, with its outputs of that time (held until then: n_cross is 0 in
 * the rows at 0.25 to 0.75). The row at 0.25 said both had ticked, while
 * the one at 1.0 said cross had not.
 */
Test(me_clocks, a_multirate_instances_ticks_are_flagged_with_its_outputs)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedME"),
                .parameters = MSYS_REAL("te.period", "0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.25\"",
                .settings = "<fmud:Component name=\"c\" multirate=\"4\"/>"
                            MSYS_RECORD("c.n_sample") MSYS_RECORD("c.sample")
                            MSYS_RECORD("c.t_cross") MSYS_RECORD("c.n_cross") MSYS_RECORD("c.cross"),
        };
        const struct mrow *left, *after;
        struct msys x;

        run(&x, &spec);
        for (int k = 1; k <= 3; k++) {
                const struct mrow *r = row_at(&x, k * 0.25, 0);

                cr_assert(r != NULL, "no row at %g", k * 0.25);
                cr_assert(eq(dbl, val(&x, r, "c.cross"), 0.0), "t = %g", r->t);
                cr_assert(eq(dbl, val(&x, r, "c.sample"), 0.0), "t = %g", r->t);
                cr_assert(eq(dbl, val(&x, r, "c.n_cross"), 0.0), "t = %g", r->t);
        }
        left = row_at(&x, 1.0, MASTER_ROW_EVENT_LEFT);
        after = row_at(&x, 1.0, 0);
        cr_assert(left != NULL && after != NULL);
        cr_assert(eq(dbl, val(&x, left, "c.cross"), 1.0));
        cr_assert(eq(dbl, val(&x, left, "c.sample"), 1.0));
        cr_assert(eq(dbl, val(&x, left, "c.n_cross"), 1.0));
        cr_assert(fabs(val(&x, left, "c.t_cross") - log(2.0)) < CLOSE);
        /* After the Event Mode at 1.0: sample's tick there, cross's no more. */
        cr_assert(eq(dbl, val(&x, after, "c.cross"), 0.0));
        cr_assert(eq(dbl, val(&x, after, "c.sample"), 1.0));
        cr_assert(eq(dbl, val(&x, after, "c.n_sample"), 11.0));
        msys_fini(&x);
}

/*
 * With decimation the point where a multirate instance's ticks are
 * flagged is recorded (c steps 0.75 beside te's 0.25, every second point
 * recorded; cross ticks once, at ln 2, and is flagged at 0.75, a point
 * decimation skips): each tick is in one row. Cross was in none.
 */
Test(me_clocks, a_flagged_tick_is_recorded_through_decimation)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedME"),
                .parameters = MSYS_REAL("te.period", "0"),
                .stop = 1.5,
                .attrs = "stepSize=\"0.25\" decimation=\"2\"",
                .settings = "<fmud:Component name=\"c\" multirate=\"3\"/>"
                            MSYS_RECORD("c.n_sample") MSYS_RECORD("c.sample")
                            MSYS_RECORD("c.n_cross") MSYS_RECORD("c.cross"),
        };
        double cross = 0.0;
        struct msys x;

        run(&x, &spec);
        for (size_t i = 0; i < x.n_rows; i++)
                cross += val(&x, &x.rows[i], "c.cross");
        cr_assert(eq(dbl, val(&x, &x.rows[x.n_rows - 1], "c.n_cross"), 1.0));
        cr_assert(eq(dbl, cross, 1.0), "cross ticked once, flagged in %g rows", cross);
        cr_assert(row_at(&x, 0.75, MASTER_ROW_EVENT_LEFT) != NULL || row_at(&x, 0.75, 0) != NULL);
        msys_fini(&x);
}
