/*
 * Model Exchange FMUs hosted in the worker and integrated with CVODE
 * (worker/me.c), run by the master as Co-Simulation instances, with the
 * worker sandbox on: BallME against its closed form (state events at the
 * impacts, a time event where gravity changes), VanDerPol against CVODE in
 * this process at a much tighter tolerance, Robertson (stiff) against the
 * known values, and BallME beside a Co-Simulation FMU in one system.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "me_ball.h"
#include "test_master_sys.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

/* Load and start spec with the workers in the strict sandbox. */
static void start(struct msys *x, const struct msys_spec *spec)
{
        msys_load(x, spec);
        x->so.sandbox.mode = SANDBOX_STRICT;
        msys_start(x);
}

static void run(struct msys *x, const struct msys_spec *spec)
{
        start(x, spec);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
}

/* Start spec and run it into a fault whose message has expect. */
static void run_to_fault(struct msys *x, const struct msys_spec *spec, const char *expect)
{
        start(x, spec);
        cr_assert(lt(int, master_run(x->m), 0));
        cr_assert(eq(int, master_state(x->m), MASTER_FAULTED));
        cr_assert(strstr(master_message(x->m), expect) != NULL, "%s", master_message(x->m));
}

Test(me, a_bouncing_ball_meets_its_closed_form_across_state_and_time_events)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .stop = 3.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        run(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)301));
        /* Impacts at 0.4515, 1.0836 (g = 9.81), then 1.5277, 2.289, 2.821 (3.71 from 1.5 on). */
        cr_assert(eq(sz, me_ball_check(&x, "ball.h", "ball.v", 1e-5), (size_t)5));
        /* Before 1.5 the velocity falls by 9.81 per second; after, by 3.71. */
        cr_assert(fabs(val(&x, g[140], "ball.v") - val(&x, g[141], "ball.v") - 0.0981) < 1e-9);
        cr_assert(fabs(val(&x, g[160], "ball.v") - val(&x, g[161], "ball.v") - 0.0371) < 1e-9);
        free(g);
        msys_fini(&x);
}

/* van der Pol, mu = 1, from (2, 0): CVODE BDF in this process at tolerance 1e-12. */
static int vdp_rhs(sunrealtype t, N_Vector y, N_Vector dy, void *data)
{
        double x0 = NV_Ith_S(y, 0), x1 = NV_Ith_S(y, 1), mu = *(const double *)data;

        (void) t;
        NV_Ith_S(dy, 0) = x1;
        NV_Ith_S(dy, 1) = mu * (1.0 - x0 * x0) * x1 - x0;
        return 0;
}

/*
 * x0 at the times ts, from x0 with mu = 1, and mu = mu_after from t_switch
 * on (the integration restarted there, as at an event).
 */
static void vdp_reference_switch(double x0, double mu_after, double t_switch, const double *ts,
                                 size_t n, double *ret_x0)
{
        SUNContext ctx;
        N_Vector y;
        SUNMatrix A;
        SUNLinearSolver ls;
        void *cv;
        double t = 0.0, mu = 1.0;

        cr_assert(eq(int, SUNContext_Create(NULL, &ctx), 0));
        y = N_VNew_Serial(2, ctx);
        NV_Ith_S(y, 0) = x0;
        NV_Ith_S(y, 1) = 0.0;
        A = SUNDenseMatrix(2, 2, ctx);
        ls = SUNLinSol_Dense(y, A, ctx);
        cv = CVodeCreate(CV_BDF, ctx);
        cr_assert(eq(int, CVodeInit(cv, vdp_rhs, 0.0, y), CV_SUCCESS));
        cr_assert(eq(int, CVodeSetUserData(cv, &mu), CV_SUCCESS));
        cr_assert(eq(int, CVodeSStolerances(cv, 1e-12, 1e-12), CV_SUCCESS));
        cr_assert(eq(int, CVodeSetLinearSolver(cv, ls, A), CV_SUCCESS));
        cr_assert(eq(int, CVodeSetMaxNumSteps(cv, 1000000), CV_SUCCESS));
        if (isfinite(t_switch))
                cr_assert(eq(int, CVodeSetStopTime(cv, t_switch), CV_SUCCESS));
        for (size_t k = 0; k < n; k++) {
                if (ts[k] > t_switch && mu != mu_after) {
                        if (t < t_switch)
                                cr_assert(CVode(cv, t_switch, y, &t, CV_NORMAL) >= 0);
                        mu = mu_after;
                        cr_assert(eq(int, CVodeReInit(cv, t_switch, y), CV_SUCCESS));
                        cr_assert(eq(int, CVodeSetStopTime(cv, ts[n - 1] + 1.0), CV_SUCCESS));
                }
                if (ts[k] > t)
                        cr_assert(CVode(cv, ts[k], y, &t, CV_NORMAL) >= 0);
                ret_x0[k] = NV_Ith_S(y, 0);
        }
        CVodeFree(&cv);
        SUNLinSolFree(ls);
        SUNMatDestroy(A);
        N_VDestroy(y);
        SUNContext_Free(&ctx);
}

static void vdp_reference(double x0, const double *ts, size_t n, double *ret_x0)
{
        vdp_reference_switch(x0, 1.0, INFINITY, ts, n, ret_x0);
}

/*
 * x's grid (n_expected rows) against the independent integration from x0,
 * mu switched to mu_after at t_switch: every x0 within 1e-6.
 */
static void assert_vdp_grid(const struct msys *x, size_t n_expected, double x0, double mu_after,
                            double t_switch)
{
        double ts[128], ref[128], worst = 0.0;
        const struct mrow **g;
        size_t n;

        g = msys_grid(x, &n);
        cr_assert(eq(sz, n, n_expected));
        cr_assert(n <= sizeof(ts) / sizeof(ts[0]));
        for (size_t k = 0; k < n; k++)
                ts[k] = g[k]->t;
        vdp_reference_switch(x0, mu_after, t_switch, ts, n, ref);
        for (size_t k = 0; k < n; k++)
                worst = fmax(worst, fabs(val(x, g[k], "vdp.x0") - ref[k]));
        cr_assert(worst < 1e-6, "largest difference %g", worst);
        free(g);
}

Test(me, van_der_pol_meets_an_independent_integration)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .stop = 10.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0"),
        };
        struct msys x;

        run(&x, &spec);
        assert_vdp_grid(&x, 101, 2.0, 1.0, INFINITY);
        /* It oscillates: x0 changes sign on the way (period about 6.66). */
        cr_assert(val(&x, msys_row(&x, 3.0, 0), "vdp.x0") < -1.0);
        msys_fini(&x);
}

/*
 * A set of a tunable parameter between steps: Continuous-Time Mode takes
 * only continuous inputs (FMI 3.0 section 3.2.1), and VanDerPol refuses
 * mu there, so the worker enters Event Mode before the set; the event is
 * iterated and the integration restarts with mu = 2, which meets the
 * independent integration with mu switched at t = 2.
 */
Test(me, a_tunable_parameter_is_set_in_event_mode_and_takes_effect_at_once)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .stop = 4.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0"),
        };
        const uint32_t vr_mu = 5;
        const double mu = 2.0;
        struct msys x;

        start(&x, &spec);
        cr_assert(master_run_until(x.m, 2.0) >= 0, "%s", master_message(x.m));
        cr_assert(eq(int, inst_set(session_inst(x.s, 0), MD_FLOAT64, &vr_mu, 1, &mu, 1),
                     INST_OK), "%s", inst_message(session_inst(x.s, 0)));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        assert_vdp_grid(&x, 41, 2.0, mu, 2.0);
        msys_fini(&x);
}

/*
 * A time event at 0.55 that asks to terminate (VanDerPol's t_stop), inside
 * the step from 0.5 to 0.6: the worker stops the integration there and
 * says so in lastSuccessfulTime, and the lone instance's session ends at
 * 0.55, its last row the state at 0.55, not that state called t = 0.6.
 */
Test(me, a_terminating_time_event_ends_the_session_at_its_time)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .parameters = MSYS_REAL("vdp.t_stop", "0.55"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0"),
        };
        const struct mrow *last;
        double t = 0.55, ref;
        struct msys x;

        run(&x, &spec);
        cr_assert(x.n_rows > 0);
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, last->t, 0.55));
        vdp_reference(2.0, &t, 1, &ref);
        cr_assert(fabs(val(&x, last, "vdp.x0") - ref) < 1e-6, "x0 %.17g against %.17g",
                  val(&x, last, "vdp.x0"), ref);
        cr_assert(eq(dbl, master_time(x.m), 0.55));
        msys_fini(&x);
}

/*
 * A terminate request in the first Event Mode, right after
 * fmi3ExitInitializationMode (VanDerPol's t_stop at the start time): FMI
 * 3.0 section 2.3.5 lets fmi3UpdateDiscreteStates ask it there as at any
 * event. The session finishes at the start time with its initial row,
 * never stepped, and says who asked; it does not fault.
 */
Test(me, a_terminate_request_in_the_first_event_mode_finishes_at_the_start)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .parameters = MSYS_REAL("vdp.t_stop", "0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0"),
        };
        struct msys x;

        start(&x, &spec);
        cr_assert(eq(int, master_state(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(int, master_run(x.m), -EPERM));
        cr_assert(eq(dbl, master_time(x.m), 0.0));
        cr_assert(eq(sz, x.n_rows, 1));
        cr_assert(eq(dbl, x.rows[0].t, 0.0));
        cr_assert(eq(dbl, val(&x, &x.rows[0], "vdp.x0"), 2.0));
        cr_assert(strstr(master_message(x.m), "terminateSimulation requested by 'vdp'") != NULL,
                  "%s", master_message(x.m));
        msys_fini(&x);
}

static void count_note(void *ctx, size_t comp, const char *message)
{
        (void) comp;
        (void) message;
        (*(unsigned *)ctx)++;
}

/*
 * The same beside a Co-Simulation instance: the point stays the step's
 * end (0.6), and the message says where the integration stopped; no note
 * takes the short step for a deviation of lastSuccessfulTime.
 */
Test(me, a_terminating_time_event_beside_another_instance_says_where_it_stopped)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol") MSYS_COMP("lin", "LinearOde"),
                .parameters = MSYS_REAL("vdp.t_stop", "0.55"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0"),
        };
        unsigned notes = 0;
        struct msys x;

        msys_load(&x, &spec);
        x.so.sandbox.mode = SANDBOX_STRICT;
        x.mo.note = count_note;
        x.mo.note_ctx = &notes;
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 6 * 0.1));
        cr_assert(strstr(master_message(x.m), "terminateSimulation requested by 'vdp' at t = "
                         "0.60000000000000009 (it stopped at t = 0.55000000000000004)") != NULL,
                  "%s", master_message(x.m));
        cr_assert(eq(u32, notes, 0));
        msys_fini(&x);
}

/*
 * The same event for a multirate instance alone (its steps two grid points
 * long): its point stays the step's end, and the run finishes there, as
 * before the rule above, never stepping an instance that asked to stop.
 */
Test(me, a_terminating_time_event_of_a_multirate_instance_finishes_the_run)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .parameters = MSYS_REAL("vdp.t_stop", "0.55"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0") "<fmud:Component name=\"vdp\" multirate=\"2\"/>",
        };
        struct msys x;

        run(&x, &spec);
        cr_assert(master_time(x.m) <= 0.6 + 1e-12, "finished at %g", master_time(x.m));
        msys_fini(&x);
}

/*
 * A continuous state with initial="exact" takes a start from the scenario
 * (FMI 3.0 section 2.3.2: the importer may set it in Instantiated): the
 * oscillator starts from x0 = 0.5 and meets the integration from there.
 */
Test(me, a_binding_sets_the_initial_value_of_a_state)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .parameters = MSYS_REAL("vdp.x0", "0.5"),
                .stop = 5.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .settings = MSYS_RECORD("vdp.x0"),
        };
        struct msys x;

        run(&x, &spec);
        cr_assert(eq(dbl, val(&x, &x.rows[0], "vdp.x0"), 0.5));
        assert_vdp_grid(&x, 51, 0.5, 1.0, INFINITY);
        msys_fini(&x);
}

/*
 * VanDerPol with h_max: its derivatives Discard any point more than 0.001
 * after the last accepted time (FMI 3.0 section 3.2.1 allows fmi3Discard
 * there: the integrator reduces its step). With h_nan instead, they are
 * NaN with fmi3OK, as an export whose equations overflow at a far trial
 * point gives them: the worker takes them as a Discard, as CVODE does in an
 * importer that hands it the NaN. Either way CVODE recovers, every doStep
 * succeeds and the result is the same oscillator.
 */
static void shortened_steps(const char *parameters)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .stop = 10.0,
                .attrs = "stepSize=\"0.1\" tolerance=\"1e-9\"",
                .parameters = parameters,
                .settings = MSYS_RECORD("vdp.x0"),
        };
        struct msys x;

        run(&x, &spec);
        assert_vdp_grid(&x, 101, 2.0, 1.0, INFINITY);
        msys_fini(&x);
}

Test(me, derivatives_that_discard_a_long_trial_step_only_shorten_the_steps)
{
        shortened_steps(MSYS_REAL("vdp.h_max", "0.001"));
}

Test(me, nan_derivatives_at_a_long_trial_step_only_shorten_the_steps)
{
        shortened_steps(MSYS_REAL("vdp.h_nan", "0.001"));
}

/*
 * BallME broken from t = 0.2 on (t_nan), as an export with a bug is:
 * a NaN event indicator, a NaN derivative at every point, a NaN
 * nextEventTime. Each faults the step that meets it with a message that
 * names what was NaN, not CVODE's guess, and no state event is missed
 * silently: the session holds its last good point, before 0.2.
 */
#define NAN_AT_0_2(what) MSYS_REAL("ball.t_nan", "0.2") MSYS_REAL("ball.nan_what", what)

static void nan_faults(const char *parameters, const char *expect)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.01\"",
                .parameters = parameters,
                .settings = MSYS_RECORD("ball.h"),
        };
        struct msys x;

        run_to_fault(&x, &spec, expect);
        cr_assert(master_time(x.m) < 0.2 + 1e-9, "held at %g", master_time(x.m));
        cr_assert(master_time(x.m) >= 0.19 - 1e-9, "held at %g", master_time(x.m));
        msys_fini(&x);
}

Test(me, a_nan_event_indicator_faults_the_step_naming_it)
{
        nan_faults(NAN_AT_0_2("1"), "event indicator 0 is NaN at t = 0.2");
}

Test(me, a_derivative_nan_at_every_point_faults_the_step_naming_it)
{
        nan_faults(NAN_AT_0_2("2"), "the derivative of continuous state 1 was not finite");
}

/* BallME's first event from 0.2 on is its bounce at sqrt(2 / 9.81) = 0.4515 s. */
Test(me, a_nan_next_event_time_faults_the_step_naming_it)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.01\"",
                .parameters = NAN_AT_0_2("3"),
                .settings = MSYS_RECORD("ball.h"),
        };
        struct msys x;

        run_to_fault(&x, &spec, "nextEventTime nan is not a time");
        cr_assert(eq(dbl, master_time(x.m), 0.45), "held at %g", master_time(x.m));
        msys_fini(&x);
}

/* A state that is NaN after an event (BallME's h after its bounce at 0.4515 s) is named. */
Test(me, a_nan_state_after_an_event_faults_naming_it)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.01\"",
                .parameters = NAN_AT_0_2("4"),
                .settings = MSYS_RECORD("ball.h"),
        };
        struct msys x;

        run_to_fault(&x, &spec, "continuous state 0 is nan at t = 0.4515");
        cr_assert(strstr(master_message(x.m), "fmi3GetContinuousStates") != NULL, "%s",
                  master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.45), "held at %g", master_time(x.m));
        msys_fini(&x);
}

/*
 * A nextEventTime at the event's own time (BallME's t_again, at its bounce)
 * is a time event at once (FMI 3.0 section 3.3: Event Mode again once time
 * >= nextEventTime), not a fault: the ball is the same as without it.
 */
Test(me, a_next_event_time_at_the_events_own_time_is_an_event_at_once)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
        };
        struct msys plain, again;
        double worst = 0.0;

        run(&plain, &spec);
        spec.parameters = MSYS_REAL("ball.t_again", "0.3");
        run(&again, &spec);
        cr_assert(eq(sz, again.n_rows, plain.n_rows));
        for (size_t i = 0; i < plain.n_rows; i++)
                for (size_t k = 0; k < 2; k++)
                        worst = fmax(worst, fabs(again.rows[i].v[k] - plain.rows[i].v[k]));
        cr_assert(worst < 1e-9, "largest difference %g", worst);
        msys_fini(&plain);
        msys_fini(&again);
}

/*
 * A step CVODE can only take in tiny pieces (VanDerPol's derivatives NaN
 * beyond 1e-9 of the last accepted time) ends with an Error that says
 * so after a bounded number of steps, not at the call's deadline.
 */
Test(me, a_step_held_down_to_tiny_pieces_faults_after_a_bounded_number)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("vdp", "VanDerPol"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .parameters = MSYS_REAL("vdp.h_nan", "1e-9"),
                .settings = MSYS_RECORD("vdp.x0"),
        };
        struct msys x;

        run_to_fault(&x, &spec, "CVODE took 100000 steps from t = 0 and reached only t = ");
        cr_assert(eq(dbl, master_time(x.m), 0.0));
        msys_fini(&x);
}

Test(me, robertson_meets_the_known_values)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("r", "Robertson"),
                .stop = 40.0,
                .attrs = "stepSize=\"0.4\" tolerance=\"1e-6\"",
                .settings = MSYS_RECORD("r.y1") MSYS_RECORD("r.y2") MSYS_RECORD("r.y3"),
        };
        const struct mrow *end;
        struct msys x;

        run(&x, &spec);
        end = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, end->t, 40.0));
        /* SUNDIALS' cvRoberts_dns: y(40) = (7.1583e-01, 9.1855e-06, 2.8416e-01). */
        cr_assert(fabs(val(&x, end, "r.y1") - 0.71583) < 2e-4, "%.9g", val(&x, end, "r.y1"));
        cr_assert(fabs(val(&x, end, "r.y2") - 9.1855e-6) < 2e-8, "%.9g", val(&x, end, "r.y2"));
        cr_assert(fabs(val(&x, end, "r.y3") - 0.28416) < 2e-4, "%.9g", val(&x, end, "r.y3"));
        cr_assert(fabs(val(&x, end, "r.y1") + val(&x, end, "r.y2") + val(&x, end, "r.y3") - 1.0) <
                  1e-6);
        msys_fini(&x);
}

/* An ME FMU and a CS FMU in one system: the ball's height drives LinearOde's input. */
Test(me, a_model_exchange_fmu_drives_a_co_simulation_fmu)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME") MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("ball", "h", "lin", "u0"),
                .stop = 2.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("lin.u0") MSYS_RECORD("lin.y0")
                            MSYS_RECORD("lin.x"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        run(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)201));
        for (size_t k = 0; k < n; k++) {
                double h, v;

                ball_exact(g[k]->t, &h, &v);
                cr_assert(fabs(val(&x, g[k], "ball.h") - h) < 1e-5, "t = %g", g[k]->t);
                /* Jacobi: the step into t_k had the ball's height at t_(k-1) as input. */
                if (k)
                        cr_assert(eq(dbl, val(&x, g[k], "lin.u0"), val(&x, g[k - 1], "ball.h")),
                                  "t = %g", g[k]->t);
                cr_assert(eq(dbl, val(&x, g[k], "lin.y0"), val(&x, g[k], "lin.x") +
                             val(&x, g[k], "lin.u0")), "t = %g", g[k]->t);
        }
        free(g);
        msys_fini(&x);
}

/*
 * A discrete input set with every step (te.level into sw.s: 0 to 1 at
 * 0.25, 1 to 2 at 0.75) opens the FMU's Event Mode only where it changed:
 * after initialization, at 0.25 and at 0.75, and the integrator restarts
 * only there. The worker entered Event Mode for the unchanged value at
 * each of the 20 steps; then it asked the FMU for s, which a strict FMU
 * refuses in Continuous-Time Mode. Between the changes x follows
 * s - (s - x) e^-t.
 */
static void switched(const char *components, const char *connections, bool label)
{
        struct msys_spec spec = {
                .elements = components,
                .connections = connections,
                .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\"",
                .settings = label ? MSYS_RECORD("sw.x") MSYS_RECORD("sw.n_enter")
                                    MSYS_RECORD("sw.n_label")
                                  : MSYS_RECORD("sw.x") MSYS_RECORD("sw.n_enter"),
        };
        const struct mrow **g;
        double x75 = 1.0 - exp(-0.5);
        struct msys x;
        size_t n;

        run(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)21));
        for (size_t k = 0; k < n; k++) {
                double t = g[k]->t;
                /* The change at te's event reaches sw at that point, after te's Event Mode. */
                double want = t < 0.25 + 1e-9 ? 0.0 : t < 0.75 + 1e-9 ? 1.0 - exp(-(t - 0.25))
                              : 2.0 - (2.0 - x75) * exp(-(t - 0.75));
                double enters = t < 0.25 + 1e-9 ? 1.0 : t < 0.75 + 1e-9 ? 2.0 : 3.0;

                cr_assert(fabs(val(&x, g[k], "sw.x") - want) < 1e-6, "t = %g: x %.17g, not %.17g",
                          t, val(&x, g[k], "sw.x"), want);
                /* After initialization, then only where s changed. */
                cr_assert(eq(dbl, val(&x, g[k], "sw.n_enter"), enters), "t = %g", t);
                if (label)
                        cr_assert(eq(dbl, val(&x, g[k], "sw.n_label"), enters - 1.0), "t = %g", t);
        }
        free(g);
        msys_fini(&x);
}

Test(me, a_discrete_input_enters_event_mode_only_where_it_changes)
{
        switched(MSYS_COMP("te", "TimeEvent") MSYS_COMP("sw", "SwitchedME"),
                 MSYS_CONN("te", "level", "sw", "s"), false);
}

Test(me, a_discrete_input_of_an_fmi2_export_enters_event_mode_only_where_it_changes)
{
        switched(MSYS_COMP("te", "TimeEvent") MSYS_COMP("sw", "SwitchedME2"),
                 MSYS_CONN("te", "level", "sw", "s"), false);
}

/* The same with a String input beside it (te.tag, "count=N", into sw.label): it changes with s. */
Test(me, a_string_input_enters_event_mode_only_where_it_changes)
{
        switched(MSYS_COMP("te", "TimeEvent") MSYS_COMP("sw", "SwitchedME"),
                 MSYS_CONN("te", "level", "sw", "s") MSYS_CONN("te", "tag", "sw", "label"), true);
}

/*
 * A continuous input that changes only at some points (te.y = 3 (1 +
 * count) into sw.u: 3, then 6 at 0.25, 9 at 0.75) is set where it changed,
 * as an event there (a jump, FMI 3.0 section 4.3.1), and left out where it
 * did not: Event Mode after initialization and at the two changes only.
 * x' = u - x between them. The FMU refuses a get of u in Continuous-Time
 * Mode, so the worker goes by what it set, and answers the recorded u and
 * s from it too (the session faulted at its start, getting them); FMI 3.0
 * and 2.0 exports alike.
 */
static void jumps(const char *fmu)
{
        char elements[160];
        struct msys_spec spec = {
                .connections = MSYS_CONN("te", "y", "sw", "u"),
                /* s set before initialization: the worker knows it from then on. */
                .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5")
                              MSYS_REAL("sw.s", "0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\"",
                .settings = MSYS_RECORD("sw.x") MSYS_RECORD("sw.n_enter") MSYS_RECORD("sw.u")
                            MSYS_RECORD("sw.s"),
        };
        double x25 = 3.0 * (1.0 - exp(-0.25)), x75 = 6.0 - (6.0 - x25) * exp(-0.5);
        const struct mrow **g;
        struct msys x;
        size_t n;

        snprintf(elements, sizeof(elements), MSYS_COMP("te", "TimeEvent") "<ssd:Component "
                 "name=\"sw\" source=\"resources/%s.fmu\"/>", fmu);
        spec.elements = elements;
        run(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)21));
        for (size_t k = 0; k < n; k++) {
                double t = g[k]->t;
                double want = t < 0.25 + 1e-9 ? 3.0 * (1.0 - exp(-t)) : t < 0.75 + 1e-9 ?
                              6.0 - (6.0 - x25) * exp(-(t - 0.25)) :
                              9.0 - (9.0 - x75) * exp(-(t - 0.75));
                double enters = t < 0.25 + 1e-9 ? 1.0 : t < 0.75 + 1e-9 ? 2.0 : 3.0;
                /* The input the step from t took: te.y before t's event at 0.25 and 0.75. */
                double u = t < 0.3 - 1e-9 ? 3.0 : t < 0.8 - 1e-9 ? 6.0 : 9.0;

                cr_assert(fabs(val(&x, g[k], "sw.x") - want) < 1e-6, "t = %g: x %.17g, not %.17g",
                          t, val(&x, g[k], "sw.x"), want);
                cr_assert(eq(dbl, val(&x, g[k], "sw.n_enter"), enters), "t = %g", t);
                /* Recorded inputs the FMU does not answer for: what was set. */
                cr_assert(eq(dbl, val(&x, g[k], "sw.u"), u), "t = %g", t);
                cr_assert(eq(dbl, val(&x, g[k], "sw.s"), 0.0), "t = %g", t);
        }
        free(g);
        msys_fini(&x);
}

Test(me, a_continuous_input_is_an_event_only_where_it_changes)
{
        jumps("SwitchedME");
}

Test(me, a_continuous_input_of_an_fmi2_export_is_an_event_only_where_it_changes)
{
        jumps("SwitchedME2");
}

/*
 * A recorded String input of a strict FMU (sw.label from te.tag) is
 * answered from what the worker set, as a Float64 one is: the session
 * faulted at its start, the FMU refusing the get. Its changes are taken
 * in Event Mode (n_label) at te's events only.
 */
Test(me, a_recorded_string_input_is_answered_from_what_was_set)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("sw", "SwitchedME"),
                .connections = MSYS_CONN("te", "y", "sw", "u") MSYS_CONN("te", "tag", "sw", "label"),
                .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5")
                              MSYS_REAL("sw.s", "0"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.05\"",
                .settings = MSYS_RECORD("sw.x") MSYS_RECORD("sw.label") MSYS_RECORD("sw.u")
                            MSYS_RECORD("sw.n_label") MSYS_RECORD("sw.n_enter"),
        };
        const struct mrow *last;
        struct msys x;

        run(&x, &spec);
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, val(&x, last, "sw.n_label"), 2.0));
        cr_assert(eq(dbl, val(&x, last, "sw.n_enter"), 3.0));
        cr_assert(eq(dbl, val(&x, last, "sw.u"), 9.0));
        msys_fini(&x);
}

/* SSP's implementation attribute picks the interface: an FMU without it is refused, saying so. */
Test(me, the_ssp_implementation_attribute_chooses_the_interface)
{
        struct msys_spec me = {
                .elements = "<ssd:Component name=\"ball\" source=\"resources/BallME.fmu\" "
                            "implementation=\"ModelExchange\"/>",
                .stop = 0.5,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("ball.h"),
        };
        struct msys_spec cs = me, bad = me;
        char text[2048];
        struct msys x;
        double h, v;

        run(&x, &me);
        cr_assert(x.sc->components[0].fmu->md->hosted_me);
        /* t = 0.5: after the first impact (0.4515). */
        ball_exact(0.5, &h, &v);
        cr_assert(fabs(val(&x, &x.rows[x.n_rows - 1], "ball.h") - h) < 1e-5);
        msys_fini(&x);

        cs.elements = "<ssd:Component name=\"ball\" source=\"resources/BallME.fmu\" "
                      "implementation=\"CoSimulation\"/>";
        cr_assert(eq(int, msys_load_try(&x, &cs), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "CoSimulation asked for, but the FMU has no CoSimulation interface "
                               "(it has ModelExchange)") != NULL, "%s", text);
        cr_assert(x.sc == NULL);
        msys_fini(&x);

        cs.elements = "<ssd:Component name=\"lin\" source=\"resources/LinearOde.fmu\" "
                      "implementation=\"ModelExchange\"/>";
        cr_assert(eq(int, msys_load_try(&x, &cs), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "ModelExchange asked for, but the FMU has no ModelExchange "
                               "interface (it has CoSimulation only)") != NULL, "%s", text);
        msys_fini(&x);

        bad.elements = "<ssd:Component name=\"ball\" source=\"resources/BallME.fmu\" "
                       "implementation=\"ScheduledExecution\"/>";
        cr_assert(eq(int, msys_load_try(&x, &bad), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "ScheduledExecution asked for, but the FMU has no ScheduledExecution "
                               "interface (it has ModelExchange)") != NULL, "%s", text);
        msys_fini(&x);

        bad.elements = "<ssd:Component name=\"ball\" source=\"resources/BallME.fmu\" "
                       "implementation=\"Interpreted\"/>";
        cr_assert(eq(int, msys_load_try(&x, &bad), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "implementation=\"Interpreted\" is none of any, CoSimulation, "
                               "ModelExchange and ScheduledExecution") != NULL, "%s", text);
        msys_fini(&x);
}

/*
 * BallME with t_close: after the first impact (0.4515) its next time event
 * is one ulp later, too close for CVODE to step to. FMI allows any later
 * nextEventTime, so it is handled as a time event then, and the ball
 * still meets its closed form.
 */
Test(me, a_next_event_time_one_ulp_later_is_a_time_event_at_once)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .stop = 2.0,
                .attrs = "stepSize=\"0.1\"",
                .parameters = MSYS_REAL("ball.t_close", "0.4"),
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
        };
        const struct mrow *end;
        struct msys x;
        double h, v;

        run(&x, &spec);
        end = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, end->t, 2.0));
        ball_exact(2.0, &h, &v);
        cr_assert(fabs(val(&x, end, "ball.h") - h) < 1e-5, "%.9g, by hand %.9g",
                  val(&x, end, "ball.h"), h);
        cr_assert(fabs(val(&x, end, "ball.v") - v) < 1e-5, "%.9g, by hand %.9g",
                  val(&x, end, "ball.v"), v);
        msys_fini(&x);
}

/*
 * An FMU whose next time event is not after the event just handled would
 * stop time: the step fails with a message that says so, the session
 * faults there, and what came before is intact.
 */
Test(me, a_next_event_time_that_does_not_advance_faults_the_step_clearly)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .parameters = MSYS_REAL("ball.t_stuck", "1"),
                .stop = 3.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        start(&x, &spec);
        cr_assert(lt(int, master_run(x.m), 0));
        /* From t_stuck = 1 on: the next event, the impact at 1.0837, says it is the next one too. */
        cr_assert(strstr(master_message(x.m), "the Model Exchange integration (CVODE, in its "
                                              "worker) at t = 1.08") != NULL &&
                  strstr(master_message(x.m), ": nextEventTime 1.0836567") != NULL &&
                  strstr(master_message(x.m), " is not after the event at t = 1.0836567") != NULL,
                  "%s", master_message(x.m));
        /* Held at the last good point, every row before it right. */
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)109));
        for (size_t k = 0; k < n; k++) {
                double h, v;

                ball_exact(g[k]->t, &h, &v);
                cr_assert(fabs(val(&x, g[k], "ball.h") - h) < 1e-5, "t = %g", g[k]->t);
        }
        free(g);
        msys_fini(&x);
}
