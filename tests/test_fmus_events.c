/*
 * fmu_models: the test FMUs with events, early return, intermediate
 * update, global state and the FMI state machine, called directly
 * (fmu_direct.h) and checked against independently computed results.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_direct.h"

/* ---- BouncingBall ----------------------------------------------------------- */

enum { BB_H = 1, BB_V = 3, BB_G = 5, BB_E = 6, BB_H0 = 8, BB_BOUNCES = 10 };

Test(fmus, bouncing_ball_returns_early_at_the_bounce_and_handles_the_event)
{
        const double g = 9.81, e = 0.7, t1 = sqrt(2.0 * 1.0 / g), v_impact = -g * t1;
        fmi3Boolean need = fmi3True, term, nominals, values, next_defined, early = fmi3False;
        fmi3Boolean event = fmi3False, terminate = fmi3False;
        double t = 0.0, t_end = 0.0, next, h = 0.01, t2;
        struct fmi3 api;
        fmi3Instance inst;
        int n;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", true, true, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        /* eventModeUsed: Exit Initialization Mode leads to Event Mode. */
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &next_defined, &next), fmi3OK));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));

        for (n = 0; n < 100; n++) {
                cr_assert(eq(int, api.DoStep(inst, t, h, fmi3False, &event, &terminate, &early,
                                             &t_end), fmi3OK), "%s", last_log);
                if (early)
                        break;
                cr_assert(eq(int, event, fmi3False));
                t = t_end;
        }
        cr_assert(eq(int, early, fmi3True), "no early return in 1 s");
        cr_assert(eq(int, event, fmi3True));
        cr_assert(epsilon_eq(dbl, t_end, t1, 1e-12), "first bounce at %.17g", t_end);
        cr_assert(eq(dbl, get_f64(&api, inst, BB_H), 0.0));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), v_impact, 1e-12));

        cr_assert(eq(int, api.EnterEventMode(inst), fmi3OK));
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &next_defined, &next), fmi3OK));
        cr_assert(eq(int, need, fmi3False));
        cr_assert(eq(int, term, fmi3False));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), -e * v_impact, 1e-12));
        cr_assert(eq(i32, get_i32(&api, inst, BB_BOUNCES), 1));

        /* The next step starts at the event time; the second bounce follows. */
        t = t_end;
        t2 = t1 + 2.0 * (-e * v_impact) / g;
        for (n = 0; n < 200; n++) {
                cr_assert(eq(int, api.DoStep(inst, t, h, fmi3False, &event, &terminate, &early,
                                             &t_end), fmi3OK), "%s", last_log);
                if (early)
                        break;
                t = t_end;
        }
        cr_assert(eq(int, early, fmi3True));
        cr_assert(epsilon_eq(dbl, t_end, t2, 1e-12), "second bounce at %.17g", t_end);
        api.FreeInstance(inst);
}

Test(fmus, bouncing_ball_without_early_return_bounces_inside_the_step)
{
        const double g = 9.81, e = 0.7, t1 = sqrt(2.0 / g), v1 = e * g * t1;
        double t = 0.0, t_end = 0.0, h_exact, dt;
        fmi3Boolean early = fmi3True;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 6; n++) {
                cr_assert(eq(int, step3(&api, inst, t, 0.1, &early, &t_end), fmi3OK));
                cr_assert(eq(int, early, fmi3False));
                cr_assert(epsilon_eq(dbl, t_end, t + 0.1, 1e-15));
                t = t_end;
        }
        dt = t - t1;
        h_exact = v1 * dt - 0.5 * g * dt * dt;
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_H), h_exact, 1e-12));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), v1 - g * dt, 1e-12));
        cr_assert(eq(i32, get_i32(&api, inst, BB_BOUNCES), 1));

        /* Early return without Event Mode: bounce inside, return at the impact. */
        api.FreeInstance(inst);
        inst = instantiate3(&api, "BouncingBall", false, true, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, &early, &t_end), fmi3OK));
        cr_assert(eq(int, early, fmi3True));
        cr_assert(epsilon_eq(dbl, t_end, t1, 1e-12));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), v1, 1e-12));
        api.FreeInstance(inst);
}

Test(fmus, bouncing_ball_comes_to_rest)
{
        double t = 0.0;
        int32_t bounces;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 100; n++, t += 0.1)
                cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK));
        bounces = get_i32(&api, inst, BB_BOUNCES);
        cr_assert(eq(dbl, get_f64(&api, inst, BB_H), 0.0));
        cr_assert(eq(dbl, get_f64(&api, inst, BB_V), 0.0));
        cr_assert(bounces > 5);
        cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i32, get_i32(&api, inst, BB_BOUNCES), bounces), "a ball at rest stays");
        api.FreeInstance(inst);
}

/* Run n steps of h from t, recording h and v after each. */
static void bb_run(struct fmi3 *api, fmi3Instance inst, double t, int n, double *out)
{
        for (int i = 0; i < n; i++) {
                double t_end;
                fmi3Boolean early;

                cr_assert(eq(int, step3(api, inst, t, 0.01, &early, &t_end), fmi3OK), "%s", last_log);
                t = t_end;
                out[3 * i] = t;
                out[3 * i + 1] = get_f64(api, inst, BB_H);
                out[3 * i + 2] = get_f64(api, inst, BB_V);
        }
}

Test(fmus, bouncing_ball_state_round_trips_continue_bit_identically)
{
        enum { N = 80 };
        double first[3 * N], again[3 * N], from_bytes[3 * N], t = 0.0;
        fmi3FMUState state = NULL, restored = NULL, bogus = NULL;
        fmi3Byte *bytes;
        size_t size = 0;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, true, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 30; n++, t += 0.01)
                cr_assert(eq(int, step3(&api, inst, t, 0.01, NULL, NULL), fmi3OK));
        cr_assert(eq(int, api.GetFMUState(inst, &state), fmi3OK));
        cr_assert(eq(int, api.SerializedFMUStateSize(inst, state, &size), fmi3OK));
        bytes = malloc(size);
        cr_assert(eq(int, api.SerializeFMUState(inst, state, bytes, size), fmi3OK));

        bb_run(&api, inst, t, N, first);                /* crosses the bounce */
        cr_assert(eq(int, api.SetFMUState(inst, state), fmi3OK));
        bb_run(&api, inst, t, N, again);
        cr_assert(eq(int, memcmp(first, again, sizeof(first)), 0));

        cr_assert(eq(int, api.DeserializeFMUState(inst, bytes, size, &restored), fmi3OK));
        cr_assert(eq(int, api.SetFMUState(inst, restored), fmi3OK));
        bb_run(&api, inst, t, N, from_bytes);
        cr_assert(eq(int, memcmp(first, from_bytes, sizeof(first)), 0));

        /* Wrong size, then a damaged magic: refused (and Terminated). */
        cr_assert(eq(int, api.DeserializeFMUState(inst, bytes, size - 1, &bogus), fmi3Error));
        cr_assert(eq(ptr, bogus, NULL));
        cr_assert(eq(int, api.SetFMUState(inst, state), fmi3OK), "restoring recovers");
        bytes[0] ^= 0xff;
        cr_assert(eq(int, api.DeserializeFMUState(inst, bytes, size, &bogus), fmi3Error));
        cr_assert(eq(int, step3(&api, inst, t, 0.01, NULL, NULL), fmi3Error));
        cr_assert(eq(int, api.SetFMUState(inst, state), fmi3OK));
        cr_assert(eq(int, step3(&api, inst, t, 0.01, NULL, NULL), fmi3OK));

        cr_assert(eq(int, api.FreeFMUState(inst, &state), fmi3OK));
        cr_assert(eq(ptr, state, NULL));
        cr_assert(eq(int, api.FreeFMUState(inst, &restored), fmi3OK));
        free(bytes);
        api.FreeInstance(inst);
}

/* ---- IntermediateProbe ------------------------------------------------------ */

enum { IP_U = 1, IP_Y = 2, IP_N = 3, IP_LAST_U = 4, IP_SUM_U = 5, IP_LAST_T = 6 };

/* What the importer's callback saw and should do; one test per process. */
static struct {
        struct fmi3 *api;
        fmi3Instance inst;
        int calls;
        double times[16];
        double y_seen[16];
        bool flags_ok;
        int return_early_at;            /* request early return at this call */
        bool misbehave;                 /* read a non-intermediate variable */
        fmi3Status misbehave_status;
} probe;

static void probe_callback(fmi3InstanceEnvironment env, fmi3Float64 t, fmi3Boolean set_requested,
                           fmi3Boolean get_allowed, fmi3Boolean step_finished,
                           fmi3Boolean can_return_early, fmi3Boolean *early_requested,
                           fmi3Float64 *early_time)
{
        fmi3ValueReference u = IP_U, y = IP_Y, n = IP_N;
        double value = 10.0 * (probe.calls + 1), y_now = NAN;
        int32_t count;
        int k = probe.calls++;

        (void) env;
        probe.times[k] = t;
        probe.flags_ok &= set_requested && get_allowed && step_finished && can_return_early;
        if (probe.misbehave) {
                probe.misbehave_status = probe.api->GetInt32(probe.inst, &n, 1, &count, 1);
                return;
        }
        /* 4.2.2: all gets first, then sets. */
        probe.api->GetFloat64(probe.inst, &y, 1, &y_now, 1);
        probe.y_seen[k] = y_now;
        probe.api->SetFloat64(probe.inst, &u, 1, &value, 1);
        if (probe.calls == probe.return_early_at) {
                *early_requested = fmi3True;
                *early_time = t;
        }
}

static fmi3Instance probe_start(struct fmi3 *api)
{
        fmi3ValueReference required[] = { IP_U, IP_Y };
        fmi3Instance inst;

        load3(api, "IntermediateProbe", NULL);
        inst = instantiate3(api, "IntermediateProbe", false, true, required, 2, probe_callback);
        probe.api = api;
        probe.inst = inst;
        probe.flags_ok = true;
        initialize3(api, inst, 0.0);
        set_f64(api, inst, IP_U, 2.0);
        return inst;
}

Test(fmus, intermediate_probe_reports_what_the_callback_set)
{
        fmi3ValueReference u = IP_U;
        double x = 1.0;
        fmi3Boolean early = fmi3True;
        double t_end = 0.0;
        struct fmi3 api;
        fmi3Instance inst = probe_start(&api);

        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, &early, &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(int, early, fmi3False));
        cr_assert(eq(dbl, t_end, 1.0));
        cr_assert(eq(int, probe.calls, 4));
        cr_assert(eq(dbl, probe.times[0], 0.25));
        cr_assert(eq(dbl, probe.times[1], 0.5));
        cr_assert(eq(dbl, probe.times[2], 0.75));
        cr_assert(eq(dbl, probe.times[3], 1.0));
        cr_assert(probe.flags_ok, "set requested, get allowed, step finished, can return early");
        /* y = integral of u: 2 for the first quarter, then the values set. */
        cr_assert(eq(dbl, probe.y_seen[0], 0.5));
        cr_assert(eq(dbl, probe.y_seen[1], 0.5 + 2.5));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_Y), 0.25 * (2.0 + 10.0 + 20.0 + 30.0)));
        cr_assert(eq(i32, get_i32(&api, inst, IP_N), 4));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_LAST_U), 40.0));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_SUM_U), 100.0));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_LAST_T), 1.0));
        /* u stays an ordinary input in Step Mode. */
        cr_assert(eq(int, api.SetFloat64(inst, &u, 1, &x, 1), fmi3OK));
        api.FreeInstance(inst);
}

Test(fmus, intermediate_probe_returns_early_when_asked)
{
        fmi3Boolean early = fmi3False;
        double t_end = 0.0;
        struct fmi3 api;
        fmi3Instance inst;

        probe.return_early_at = 2;
        inst = probe_start(&api);
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, &early, &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(int, early, fmi3True));
        cr_assert(eq(dbl, t_end, 0.5));
        cr_assert(eq(i32, get_i32(&api, inst, IP_N), 2));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_LAST_T), 0.5));
        /* The next step starts where the FMU stopped. */
        probe.return_early_at = 0;
        cr_assert(eq(int, step3(&api, inst, 0.5, 0.5, &early, &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(dbl, t_end, 1.0));
        api.FreeInstance(inst);
}

Test(fmus, intermediate_probe_refuses_non_intermediate_access_in_the_callback)
{
        fmi3ValueReference u = IP_U, n = IP_N;
        double x = 1.0;
        int32_t count;
        struct fmi3 api;
        fmi3Instance inst;

        probe.misbehave = true;
        inst = probe_start(&api);
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, NULL, NULL), fmi3Error));
        cr_assert(eq(int, probe.misbehave_status, fmi3Error));
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        /* Outside a callback, n_updates is an ordinary output and u an input. */
        cr_assert(eq(int, api.GetInt32(inst, &n, 1, &count, 1), fmi3OK));
        cr_assert(eq(int, api.SetFloat64(inst, &u, 1, &x, 1), fmi3OK));
        api.FreeInstance(inst);
}

/* ---- GlobalCounter ---------------------------------------------------------- */

Test(fmus, global_counter_instances_in_one_process_interfere)
{
        fmi3FMUState state = NULL;
        struct fmi3 api;
        fmi3Instance a, b;

        load3(&api, "GlobalCounter", NULL);
        a = instantiate3(&api, "GlobalCounter", false, false, NULL, 0, NULL);
        b = instantiate3(&api, "GlobalCounter", false, false, NULL, 0, NULL);
        initialize3(&api, a, 0.0);
        initialize3(&api, b, 0.0);
        cr_assert(eq(int, step3(&api, a, 0.0, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i64, get_i64(&api, a, 1), 1));
        cr_assert(eq(int, step3(&api, b, 0.0, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i64, get_i64(&api, b, 1), 2), "b sees a's step");
        cr_assert(eq(int, step3(&api, a, 0.1, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i64, get_i64(&api, a, 1), 3), "a sees b's step");
        cr_assert(eq(i64, get_i64(&api, a, 2), 2), "a's own steps");
        /* canGetAndSetFMUState is false. */
        cr_assert(eq(int, api.GetFMUState(a, &state), fmi3Error));
        api.FreeInstance(a);
        api.FreeInstance(b);
}

/* ---- State machine and argument checks ------------------------------------ */

Test(fmus, illegal_calls_are_refused_with_a_reason)
{
        fmi3ValueReference x0 = LO_X0;
        double one = 1.0, d;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "LinearOde", NULL);
        cr_assert(eq(ptr, api.InstantiateCoSimulation("i", "{not the token}", NULL, fmi3False,
                                                      fmi3False, fmi3False, fmi3False, NULL, 0,
                                                      NULL, logger3, NULL), NULL));
        cr_assert(ne(ptr, strstr(last_log, "instantiationToken"), NULL), "%s", last_log);
        cr_assert(eq(ptr, api.InstantiateCoSimulation("i", token_of("LinearOde"), NULL, fmi3False,
                                                      fmi3False, fmi3True, fmi3False, NULL, 0,
                                                      NULL, logger3, NULL), NULL),
                  "eventModeUsed without hasEventMode");
        cr_assert(eq(ptr, api.InstantiateModelExchange("i", token_of("LinearOde"), NULL,
                                                       fmi3False, fmi3False, NULL, logger3), NULL));
        cr_assert(eq(ptr, api.InstantiateCoSimulation(" ", token_of("LinearOde"), NULL, fmi3False,
                                                      fmi3False, fmi3False, fmi3False, NULL, 0,
                                                      NULL, logger3, NULL), NULL));

        inst = instantiate3(&api, "LinearOde", false, false, NULL, 0, NULL);
        cr_assert(eq(int, step3(&api, inst, 0.0, 0.1, NULL, NULL), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "fmi3DoStep must not be called in Instantiated"), NULL),
                  "%s", last_log);
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.SetFloat64(inst, &x0, 1, &one, 1), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "fixed parameter"), NULL), "%s", last_log);
        cr_assert(ne(ptr, strstr(last_log, "Step Mode"), NULL), "%s", last_log);
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.GetFloat64(inst, &x0, 1, &d, 2), fmi3Error), "nValues 2 for a scalar");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.EnterEventMode(inst), fmi3Error), "eventModeUsed was false");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.5, 0.1, NULL, NULL), fmi3Error), "wrong time");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.0, 0.0, NULL, NULL), fmi3Error), "h = 0");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.GetDirectionalDerivative(inst, NULL, 0, NULL, 0, NULL, 0, NULL, 0),
                     fmi3Error));
        cr_assert(eq(int, api.Reset(inst), fmi3OK));
        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3Error), "no structural parameters");
        api.FreeInstance(inst);
}

Test(fmus, debug_logging_filters_informational_messages)
{
        const char *events[] = { "logEvents" }, *bogus[] = { "logNoSuchCategory" };
        struct fmi3 api;
        fmi3Instance inst;
        int before;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, false, NULL, 0, NULL);
        cr_assert(eq(int, api.SetDebugLogging(inst, fmi3False, 0, NULL), fmi3OK));
        initialize3(&api, inst, 0.0);
        before = n_logs;
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, NULL, NULL), fmi3OK));
        cr_assert(eq(int, n_logs, before), "logEvents is off");
        cr_assert(eq(int, api.SetDebugLogging(inst, fmi3True, 1, events), fmi3OK));
        cr_assert(eq(int, step3(&api, inst, 1.0, 1.0, NULL, NULL), fmi3OK));
        cr_assert(n_logs > before, "bounces are logged under logEvents");
        cr_assert(ne(ptr, strstr(last_log, "logEvents"), NULL), "%s", last_log);
        cr_assert(eq(int, api.SetDebugLogging(inst, fmi3True, 1, bogus), fmi3Error));
        api.FreeInstance(inst);
}

/* ---- TimeEvent --------------------------------------------------------------- */

enum { TE_PERIOD = 1, TE_PHASE = 2, TE_COUNT = 3, TE_X = 4, TE_BASE = 6, TE_GAIN = 7 };

Test(fmus, time_event_reports_its_schedule_and_refuses_to_step_past_it)
{
        fmi3Boolean need, term, nominals, values, defined, event, terminate, early;
        double next = 0.0, t_end;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "TimeEvent", NULL);
        inst = instantiate3(&api, "TimeEvent", true, false, NULL, 0, NULL);
        set_f64(&api, inst, TE_BASE, 0.75);
        initialize3(&api, inst, 0.0);
        /* The calculatedParameter follows the parameter. */
        cr_assert(eq(dbl, get_f64(&api, inst, TE_GAIN), 1.5));
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &defined, &next), fmi3OK));
        cr_assert(eq(int, defined, fmi3True));
        cr_assert(eq(dbl, next, 0.15));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));
        /* To the event: no eventHandlingNeeded, the importer knows the time. */
        cr_assert(eq(int, api.DoStep(inst, 0.0, 0.15, fmi3False, &event, &terminate, &early,
                                     &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(int, event, fmi3False));
        cr_assert(eq(i32, get_i32(&api, inst, TE_COUNT), 0));
        /* Past it, without Event Mode in between: an error. */
        cr_assert(eq(int, api.DoStep(inst, 0.15, 0.1, fmi3False, &event, &terminate, &early,
                                     &t_end), fmi3Error));
        cr_assert(strstr(last_log, "goes past the time event") != NULL, "%s", last_log);
        api.FreeInstance(inst);

        inst = instantiate3(&api, "TimeEvent", true, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &defined, &next), fmi3OK));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));
        cr_assert(eq(int, api.DoStep(inst, 0.0, 0.15, fmi3False, &event, &terminate, &early,
                                     &t_end), fmi3OK));
        cr_assert(eq(int, api.EnterEventMode(inst), fmi3OK));
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &defined, &next), fmi3OK));
        cr_assert(eq(i32, get_i32(&api, inst, TE_COUNT), 1));
        cr_assert(eq(dbl, next, 0.65));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));
        cr_assert(eq(int, api.DoStep(inst, 0.15, 0.1, fmi3False, &event, &terminate, &early,
                                     &t_end), fmi3OK));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, TE_X), 0.1, 1e-15));
        api.FreeInstance(inst);
}

/*
 * The Model Exchange test code lets an importer go back and forth in time
 * to find an event, but not back past the second last completed
 * integrator step or the last Event Mode (FMI 3.0 section 3.2.1,
 * fmi3SetTime), so that a worker that puts time back is caught.
 */
Test(fmus, the_model_exchange_time_does_not_go_back_past_its_floor)
{
        fmi3Boolean enter = fmi3False, term = fmi3False, need, nominals, values, defined;
        fmi3Float64 next;
        struct fmi3 api;
        fmi3Instance inst;

        load3_some(&api, "VanDerPol");
        cr_assert(ne(ptr, (void *)api.InstantiateModelExchange, NULL));
        inst = api.InstantiateModelExchange("i", token_of("VanDerPol"), NULL, fmi3False, fmi3True,
                                            NULL, logger3);
        cr_assert(ne(ptr, inst, NULL));
        cr_assert(eq(int, api.EnterInitializationMode(inst, fmi3False, 0.0, 1.0, fmi3False, 0.0),
                     fmi3OK));
        cr_assert(eq(int, api.ExitInitializationMode(inst), fmi3OK));
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &defined, &next), fmi3OK));
        cr_assert(eq(int, api.EnterContinuousTimeMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetTime(inst, 0.5), fmi3Error), "before the start time");
        cr_assert(strstr(last_log, "before 1") != NULL, "%s", last_log);
        cr_assert(eq(int, api.SetTime(inst, 1.1), fmi3OK));
        cr_assert(eq(int, api.CompletedIntegratorStep(inst, fmi3True, &enter, &term), fmi3OK));
        cr_assert(eq(int, api.SetTime(inst, 1.2), fmi3OK));
        cr_assert(eq(int, api.CompletedIntegratorStep(inst, fmi3True, &enter, &term), fmi3OK));
        /* Inside the last completed step, and back to the one before it: allowed. */
        cr_assert(eq(int, api.SetTime(inst, 1.15), fmi3OK), "%s", last_log);
        cr_assert(eq(int, api.SetTime(inst, 1.1), fmi3OK), "%s", last_log);
        cr_assert(eq(int, api.SetTime(inst, 1.05), fmi3Error), "past the second last step");
        cr_assert(eq(int, api.SetTime(inst, 1.2), fmi3OK));
        cr_assert(eq(int, api.EnterEventMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetTime(inst, 1.15), fmi3Error), "before the last Event Mode");
        api.FreeInstance(inst);
}
