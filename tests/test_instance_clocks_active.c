/*
 * instance: the worker tracks which Clocks are active and refuses access
 * to a clocked variable in Event Mode while none of its Clocks is
 * (sections 2.2.7.2, 2.2.8.3, 2.3.5), on the ClockedDeriv test FMU
 * through a real worker: tick clocks cu and cy (and the input Clock sub),
 * the output Clock hi clocks hy, tick and trig both clock cw. Each refusal comes with its own test:
 * the worker's error, a message naming the function, the variable, its
 * Clock and the state, and an instance that did not change (the FMU,
 * which does not check Clock activation itself, never saw the call).
 * Each allowed sequence has its own test too, with the values the FMU
 * computed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(in))

enum { VR_TICK = 10, VR_CU, VR_CY, VR_HI, VR_SLOW, VR_TRIG, VR_HY, VR_SUB, VR_CW };

static const uint32_t tick = VR_TICK, cu = VR_CU, cy = VR_CY, hi = VR_HI, trig = VR_TRIG,
        hy = VR_HY, sub = VR_SUB, cw = VR_CW;

/* A worker with ClockedDeriv instantiated (eventModeUsed) and in Initialization Mode. */
static struct inst *initializing(void)
{
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;

        drv_opts(&o, "ClockedDeriv");
        cr_assert(eq(int, inst_new(&o, &in, &why), 0), "%s", why ? why : "");
        ok(inst_instantiate(in, &(struct inst_instantiate){ .event_mode_used = true }));
        ok(inst_enter_initialization_mode(in, NULL));
        return in;
}

/* The same, then in the Event Mode fmi3ExitInitializationMode enters: no Clock active. */
static struct inst *event_mode(void)
{
        struct inst *in = initializing();

        ok(inst_exit_initialization_mode(in));
        cr_assert(eq(int, inst_state(in), CALL_ST_EVENT));
        return in;
}

static void done(struct inst *in)
{
        cr_assert(eq(int, inst_free(in), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

static int set_clock(struct inst *in, uint32_t vr, bool on)
{
        return inst_set(in, MD_CLOCK, &vr, 1, &on, 1);
}

static int get_clock(struct inst *in, uint32_t vr, bool *ret)
{
        return inst_get(in, MD_CLOCK, &vr, 1, ret, 1);
}

static int set_f64(struct inst *in, uint32_t vr, double v)
{
        return inst_set(in, MD_FLOAT64, &vr, 1, &v, 1);
}

static int get_f64(struct inst *in, uint32_t vr, double *ret)
{
        return inst_get(in, MD_FLOAT64, &vr, 1, ret, 1);
}

static int update(struct inst *in)
{
        struct inst_discrete d;

        return inst_update_discrete_states(in, &d);
}

/* Leave Event Mode with a step of 0.1 and come back. */
static void next_event(struct inst *in, double t)
{
        struct inst_step_result res;

        ok(update(in));
        ok(inst_enter_step_mode(in));
        ok(inst_do_step(in, &(struct inst_step){ .t = t, .h = 0.1 }, &res));
        ok(inst_enter_event_mode(in));
}

/*
 * The worker refused with -EACCES and a message containing each of the
 * texts (NULL-terminated); the instance neither failed nor moved.
 */
static void refused(struct inst *in, int r, const char *const *texts)
{
        cr_assert(eq(int, r, -EACCES), "got %d (%s), want -EACCES", r, inst_message(in));
        for (size_t i = 0; texts[i]; i++)
                cr_assert(strstr(inst_message(in), texts[i]) != NULL, "message '%s' lacks '%s'",
                          inst_message(in), texts[i]);
        cr_assert(eq(int, inst_fault(in), 0));
        cr_assert(eq(int, inst_state(in), CALL_ST_EVENT));
}

#define TEXTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* ---- Refusals ------------------------------------------------------------ */

Test(instance_clocks_active, set_of_a_clocked_input_while_its_clock_is_inactive)
{
        struct inst *in = event_mode();

        refused(in, set_f64(in, cu, 1.0),
                TEXTS("fmi3SetFloat64: variable 'cu' (vr 11, input, discrete) is clocked by "
                      "'tick' (vr 10), which is not active", "section", "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, get_of_a_clocked_output_while_its_clock_is_inactive)
{
        struct inst *in = event_mode();
        double v;

        refused(in, get_f64(in, cy, &v),
                TEXTS("fmi3GetFloat64: variable 'cy' (vr 12, output, discrete) is clocked by "
                      "'tick' (vr 10), which is not active", "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, update_discrete_states_deactivates_the_clock)
{
        struct inst *in = event_mode();
        double v;

        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 1.0));
        ok(update(in));
        refused(in, set_f64(in, cu, 2.0), TEXTS("variable 'cu'", "'tick' (vr 10), which is not "
                                                 "active", "(state: Event Mode)"));
        refused(in, get_f64(in, cy, &v), TEXTS("variable 'cy'", "'tick'", "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, leaving_event_mode_deactivates_the_clock)
{
        struct inst *in = event_mode();

        ok(set_clock(in, tick, true));
        ok(inst_enter_step_mode(in));   /* without fmi3UpdateDiscreteStates */
        ok(inst_enter_event_mode(in));
        refused(in, set_f64(in, cu, 1.0), TEXTS("variable 'cu'", "'tick' (vr 10), which is not "
                                                 "active", "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, deactivating_the_clock_with_set_clock_false)
{
        struct inst *in = event_mode();
        double v;

        ok(set_clock(in, tick, true));
        ok(get_f64(in, cy, &v));
        ok(set_clock(in, tick, false));
        refused(in, get_f64(in, cy, &v), TEXTS("fmi3GetFloat64: variable 'cy'", "'tick'",
                                               "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, output_clock_not_yet_reported_by_get_clock)
{
        struct inst *in = event_mode();
        double v;

        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 2.0));       /* hi ticks in the FMU, but nobody asked */
        refused(in, get_f64(in, hy, &v),
                TEXTS("fmi3GetFloat64: variable 'hy' (vr 16, output, discrete) is clocked by "
                      "'hi' (vr 13), which is not active", "once fmi3GetClock reported it",
                      "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, output_clock_reported_inactive)
{
        struct inst *in = event_mode();
        bool on = true;
        double v;

        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 0.5));       /* hi ticks only with cu > 1 */
        ok(get_clock(in, hi, &on));
        cr_assert(on == false, "hi reported active");
        refused(in, get_f64(in, hy, &v), TEXTS("variable 'hy'", "'hi' (vr 13)",
                                               "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, deactivating_an_input_clock_deactivates_the_output_clock_it_triggered)
{
        struct inst *in = event_mode();
        bool on = false;
        double v;

        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 2.0));
        ok(get_clock(in, hi, &on));
        cr_assert(on, "hi does not tick");
        ok(get_f64(in, hy, &v));
        /* hi depends on tick (<ModelStructure>): it goes with it (section 2.3.5). */
        ok(set_clock(in, tick, false));
        refused(in, get_f64(in, hy, &v), TEXTS("variable 'hy'", "'hi' (vr 13), which is not "
                                               "active", "(state: Event Mode)"));
        /* And the FMU agrees when asked again. */
        ok(get_clock(in, hi, &on));
        cr_assert(on == false, "hi still ticks in the FMU");
        done(in);
}

Test(instance_clocks_active, clocked_input_clock_while_its_clock_is_inactive)
{
        struct inst *in = event_mode();

        refused(in, set_clock(in, sub, true),
                TEXTS("fmi3SetClock: variable 'sub' (vr 17, input, discrete) is clocked by "
                      "'tick' (vr 10), which is not active", "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, variable_of_two_clocks_while_neither_is_active)
{
        struct inst *in = event_mode();

        refused(in, set_f64(in, cw, 1.0),
                TEXTS("fmi3SetFloat64: variable 'cw' (vr 18, input, discrete) is clocked by "
                      "'tick' (vr 10) and 'trig' (vr 15), none of them active",
                      "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, periodic_clock_active_at_a_second_update_in_one_event_mode)
{
        struct inst *in = event_mode();

        ok(set_clock(in, tick, true));
        ok(update(in));
        refused(in, set_clock(in, tick, true),
                TEXTS("fmi3SetClock: Clock 'tick' (vr 10) was active at an "
                      "fmi3UpdateDiscreteStates of this Event Mode",
                      "more than one fmi3UpdateDiscreteStates per Event Mode (section 2.3.5)",
                      "(state: Event Mode)"));
        done(in);
}

Test(instance_clocks_active, set_fmu_state_forgets_the_active_clocks)
{
        struct inst *in = event_mode();
        uint64_t h = 0;

        ok(set_clock(in, tick, true));
        ok(inst_get_fmu_state(in, &h));
        ok(inst_set_fmu_state(in, h));
        refused(in, set_f64(in, cu, 1.0), TEXTS("variable 'cu'", "'tick'", "(state: Event Mode)"));
        /* Setting the Clock again is the way back. */
        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 1.0));
        ok(inst_free_fmu_state(in, &h));
        done(in);
}

/* ---- Allowed sequences --------------------------------------------------- */

Test(instance_clocks_active, initialization_mode_ignores_clock_activation)
{
        struct inst *in = initializing();
        double v = 0.0;

        ok(set_f64(in, cu, 1.5));
        ok(get_f64(in, cy, &v));
        cr_assert(v == 3.0, "cy = %g", v);
        done(in);
}

Test(instance_clocks_active, active_input_clock_admits_its_clocked_variables)
{
        struct inst *in = event_mode();
        double v = 0.0;
        bool on = false;

        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 0.75));
        ok(get_f64(in, cy, &v));
        cr_assert(v == 1.5, "cy = %g", v);
        ok(get_clock(in, tick, &on));
        cr_assert(on);
        ok(set_clock(in, sub, true));   /* a Clock clocked by tick */
        ok(set_clock(in, sub, false));
        /* fmi3SetClock may be called again in the same instant (algebraic loops, 2.3.5). */
        ok(set_clock(in, tick, false));
        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 1.0));
        ok(get_f64(in, cy, &v));
        cr_assert(v == 2.0, "cy = %g", v);
        ok(update(in));
        done(in);
}

Test(instance_clocks_active, reported_output_clock_admits_its_clocked_variables)
{
        struct inst *in = event_mode();
        bool on = false;
        double v = 0.0;

        ok(set_clock(in, tick, true));
        ok(set_f64(in, cu, 2.0));
        ok(get_clock(in, hi, &on));
        cr_assert(on, "hi does not tick");
        ok(get_f64(in, hy, &v));
        cr_assert(v == 20.0, "hy = %g", v);
        /* Reading an output Clock twice is allowed; the activation stays. */
        ok(get_clock(in, hi, &on));
        ok(get_f64(in, hy, &v));
        /* hi does not depend on sub: deactivating sub leaves it active. */
        ok(set_clock(in, sub, true));
        ok(set_clock(in, sub, false));
        ok(get_f64(in, hy, &v));
        cr_assert(v == 20.0, "hy = %g", v);
        ok(update(in));
        done(in);
}

Test(instance_clocks_active, each_event_mode_activates_its_clocks_anew)
{
        struct inst *in = event_mode();
        double v = 0.0;

        for (int i = 0; i < 3; i++) {
                ok(set_clock(in, tick, true));
                ok(set_f64(in, cu, i));
                ok(get_f64(in, cy, &v));
                cr_assert(v == 2.0 * i, "event %d: cy = %g", i, v);
                next_event(in, 0.1 * i);
        }
        done(in);
}

Test(instance_clocks_active, variable_of_two_clocks_while_one_is_active)
{
        struct inst *in = event_mode();
        double v = 0.0;

        ok(set_clock(in, trig, true));  /* tick stays inactive */
        ok(set_f64(in, cw, 4.0));
        ok(get_f64(in, cw, &v));
        cr_assert(v == 4.0, "cw = %g", v);
        ok(update(in));
        done(in);
}

Test(instance_clocks_active, triggered_clock_may_tick_at_every_update)
{
        struct inst *in = event_mode();
        bool on = false;

        for (int i = 0; i < 3; i++) {
                ok(set_clock(in, trig, true));
                ok(get_clock(in, trig, &on));
                cr_assert(on, "update %d", i);
                ok(update(in));
        }
        done(in);
}
