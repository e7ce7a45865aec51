/*
 * fmi3_me.c: the FMI 3.0 Model Exchange API (section 3.2) over a model of
 * me_model.h: instantiation, Initialization, Event and Continuous-Time
 * Modes, Float64 get and set, states, derivatives, event indicators,
 * Clocks.
 *
 * DESIGN: the instance is the model's variable array and a mode; each
 * function checks the mode the standard allows it in and logs and fails
 * otherwise, so that an importer that gets the state machine wrong is
 * caught by the tests. Types other than Float64 do not exist in these
 * models: their get and set functions refuse.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

#include "me_model.h"

enum mode { M_INSTANTIATED, M_INIT, M_EVENT, M_CONT, M_TERMINATED };

struct me_inst {
        double v[ME_MODEL_MAX_VARS];
        enum mode mode;
        fmi3InstanceEnvironment env;
        fmi3LogMessageCallback log;
        bool logging;
        double t_accepted;      /* the last accepted integrator time */
        /*
         * fmi3SetTime's floor (section 3.2.1): the start time, the time of
         * the second last fmi3CompletedIntegratorStep, that of the last
         * fmi3EnterEventMode. t_completed: the last completed step's time.
         */
        double t_floor, t_completed;
        bool active[ME_MODEL_MAX_CLOCKS];       /* me_model.clocks[i] active */
#ifdef ME_STRING_INPUT
        char str[64], str_seen[64];     /* me_model.string_vr, and as the last event took it */
#endif
        bool ran[ME_MODEL_MAX_CLOCKS];          /* its partition ran in this activation */
};

/* The partitions of the input Clocks ticking now, each once (me_model.h, tick). */
static void run_ticks(struct me_inst *in)
{
        if (in->mode != M_EVENT || !me_model.tick)
                return;
        for (size_t i = 0; i < me_model.n_clocks; i++)
                if (!me_model.clocks[i].output && in->active[i] && !in->ran[i]) {
                        in->ran[i] = true;
                        me_model.tick(in->v, i);
                }
}

/* A clocked variable outside Initialization Mode and its Clock's activation (section 2.2.8.3). */
static bool clock_closed(const struct me_inst *in, unsigned vr)
{
        unsigned c = me_model.clocked_by[vr];

        return c && in->mode != M_INIT && !(in->mode == M_EVENT && in->active[c - 1]);
}

static void entered(struct me_inst *in)
{
        if (me_model.entered)
                me_model.entered(in->v, in->active);
}

static fmi3Status fail(struct me_inst *in, const char *fn, const char *why)
{
        char msg[256];

        if (in && in->log) {
                snprintf(msg, sizeof(msg), "%s: %s", fn, why);
                in->log(in->env, fmi3Error, "logStatusError", msg);
        }
        return fmi3Error;
}

#define MODE_OK(in, fn, allowed) \
        do { \
                if (!(in)) \
                        return fmi3Error; \
                if (!((1u << (in)->mode) & (allowed))) \
                        return fail((in), (fn), "not allowed in this mode (section 3.2)"); \
        } while (0)

#define B(m) (1u << (m))

const char *fmi3GetVersion(void)
{
        return fmi3Version;
}

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
        struct me_inst *in = instance;

        (void) nCategories;
        (void) categories;
        if (!in)
                return fmi3Error;
        in->logging = loggingOn;
        return fmi3OK;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
        struct me_inst *in;

        (void) resourcePath;
        (void) visible;
        if (!instanceName || !instantiationToken || strcmp(instantiationToken, me_model.token))
                return NULL;
        in = calloc(1, sizeof(*in));
        if (!in)
                return NULL;
        in->env = instanceEnvironment;
        in->log = logMessage;
        in->logging = loggingOn;
        me_model.start(in->v);
        return in;
}

void fmi3FreeInstance(fmi3Instance instance)
{
        free(instance);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
        struct me_inst *in = instance;

        (void) toleranceDefined;
        (void) tolerance;
        (void) stopTimeDefined;
        (void) stopTime;
        MODE_OK(in, "fmi3EnterInitializationMode", B(M_INSTANTIATED));
        in->v[0] = startTime;
        in->t_floor = in->t_completed = startTime;
        in->mode = M_INIT;
        return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3ExitInitializationMode", B(M_INIT));
        me_model.init(in->v);
        me_model.derivatives(in->v);
        in->t_accepted = in->v[0];
        in->mode = M_EVENT;     /* Model Exchange: Event Mode next (section 3.2) */
        entered(in);
        return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
        struct me_inst *in = instance;

        /* From Continuous-Time Mode (section 3.2.1); after initialization it is there already. */
        MODE_OK(in, "fmi3EnterEventMode", B(M_CONT));
        in->mode = M_EVENT;
        in->t_floor = in->t_completed = in->v[0];
        entered(in);
        return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime)
{
        struct me_inst *in = instance;
        bool changed = false, defined = false, again;
        double next = 0.0;

        MODE_OK(in, "fmi3UpdateDiscreteStates", B(M_EVENT));
        if (me_model.discard_event && me_model.discard_event(in->v)) {
                char msg[96];

                snprintf(msg, sizeof(msg), "fmi3UpdateDiscreteStates: discarded at t = %g", in->v[0]);
                if (in->log)
                        in->log(in->env, fmi3Discard, "logStatusDiscard", msg);
                return fmi3Discard;
        }
        run_ticks(in);
#ifdef ME_STRING_INPUT
        if (strcmp(in->str, in->str_seen) != 0) {
                in->v[me_model.string_changes] += 1.0;
                memcpy(in->str_seen, in->str, sizeof(in->str));
        }
#endif
        /* "Any Clock active during fmi3UpdateDiscreteStates must be deactivated by the FMU" (2.3.5). */
        memset(in->active, 0, sizeof(in->active));
        again = me_model.updated && me_model.updated(in->v, in->active);
        if (me_model.event)
                me_model.event(in->v, &changed, &defined, &next);
        me_model.derivatives(in->v);
        *discreteStatesNeedUpdate = again;
        *terminateSimulation = me_model.terminate && me_model.terminate(in->v);
        *nominalsOfContinuousStatesChanged = fmi3False;
        *valuesOfContinuousStatesChanged = changed;
        *nextEventTimeDefined = defined;
        *nextEventTime = defined ? next : 0.0;
        return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3EnterContinuousTimeMode", B(M_EVENT));
        in->mode = M_CONT;
        memset(in->active, 0, sizeof(in->active));
        memset(in->ran, 0, sizeof(in->ran));
        in->t_accepted = in->v[0];
        return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation)
{
        struct me_inst *in = instance;

        (void) noSetFMUStatePriorToCurrentPoint;
        MODE_OK(in, "fmi3CompletedIntegratorStep", B(M_CONT));
        in->t_accepted = in->v[0];
        in->t_floor = fmax(in->t_floor, in->t_completed);
        in->t_completed = in->v[0];
        *enterEventMode = fmi3False;
        *terminateSimulation = fmi3False;
        return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3SetTime", B(M_CONT) | B(M_EVENT));
        /* Back and forth to find an event, but not past the floor (section 3.2.1). */
        if (!(time >= in->t_floor)) {
                char why[160];

                snprintf(why, sizeof(why), "time %.17g is before %.17g, which it must not be "
                         "(section 3.2.1)", time, in->t_floor);
                return fail(in, "fmi3SetTime", why);
        }
        in->v[0] = time;
        return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 x[], size_t nx)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3SetContinuousStates", B(M_CONT));
        if (nx != me_model.nx)
                return fail(in, "fmi3SetContinuousStates", "wrong number of states");
        for (size_t i = 0; i < nx; i++)
                in->v[me_model.state_vr[i]] = x[i];
        return fmi3OK;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[], size_t nx)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3GetContinuousStates", B(M_INIT) | B(M_EVENT) | B(M_CONT) | B(M_TERMINATED));
        if (nx != me_model.nx)
                return fail(in, "fmi3GetContinuousStates", "wrong number of states");
        for (size_t i = 0; i < nx; i++)
                x[i] = in->v[me_model.state_vr[i]];
        return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 dx[], size_t nx)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3GetContinuousStateDerivatives",
                B(M_INIT) | B(M_EVENT) | B(M_CONT) | B(M_TERMINATED));
        if (nx != me_model.nx)
                return fail(in, "fmi3GetContinuousStateDerivatives", "wrong number of states");
        if (me_model.discard && me_model.discard(in->v, in->t_accepted))
                return fmi3Discard;
        me_model.derivatives(in->v);
        for (size_t i = 0; i < nx; i++)
                dx[i] = in->v[me_model.der_vr[i]];
        if (me_model.overflow && me_model.overflow(in->v, in->t_accepted))
                for (size_t i = 0; i < nx; i++)
                        dx[i] = NAN;
        return fmi3OK;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 z[], size_t nz)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3GetEventIndicators", B(M_INIT) | B(M_EVENT) | B(M_CONT) | B(M_TERMINATED));
        if (nz != me_model.nz)
                return fail(in, "fmi3GetEventIndicators", "wrong number of event indicators");
        if (nz)
                me_model.indicators(in->v, z);
        return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 n[], size_t nx)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3GetNominalsOfContinuousStates",
                B(M_INSTANTIATED) | B(M_EVENT) | B(M_CONT) | B(M_TERMINATED));
        if (nx != me_model.nx)
                return fail(in, "fmi3GetNominalsOfContinuousStates", "wrong number of states");
        for (size_t i = 0; i < nx; i++)
                n[i] = me_model.nominal[i] > 0.0 ? me_model.nominal[i] : 1.0;
        return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *n)
{
        if (!instance)
                return fmi3Error;
        *n = me_model.nz;
        return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *n)
{
        if (!instance)
                return fmi3Error;
        *n = me_model.nx;
        return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance instance)
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3Terminate", B(M_EVENT) | B(M_CONT));
        in->mode = M_TERMINATED;
        return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance)
{
        struct me_inst *in = instance;

        if (!in)
                return fmi3Error;
        memset(in->v, 0, sizeof(in->v));
        me_model.start(in->v);
#ifdef ME_STRING_INPUT
        in->str[0] = in->str_seen[0] = '\0';
#endif
        in->mode = M_INSTANTIATED;
        return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues)
{
        struct me_inst *in = instance;

        if (!in || nvr != nValues)
                return fmi3Error;
        run_ticks(in);
        if (in->mode != M_INSTANTIATED)
                me_model.derivatives(in->v);
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] >= me_model.n_vars)
                        return fail(in, "fmi3GetFloat64", "unknown value reference");
                if (clock_closed(in, vr[i]))
                        return fail(in, "fmi3GetFloat64", "a clocked variable whose Clock is not "
                                    "active (section 2.2.8.3)");
                if (me_model.no_input_get && in->mode == M_CONT && me_model.set[vr[i]] >= ME_SET_EVENT)
                        return fail(in, "fmi3GetFloat64", "an input is not got in Continuous-Time "
                                    "Mode (section 3.2.1)");
                values[i] = in->v[vr[i]];
        }
        return fmi3OK;
}

/* The modes fmi3SetFloat64 may change vr in (me_model.h, enum me_set). */
static unsigned set_modes(unsigned vr)
{
        unsigned m = B(M_INSTANTIATED) | B(M_INIT);

        if (me_model.set[vr] >= ME_SET_EVENT)
                m |= B(M_EVENT);
        if (me_model.set[vr] == ME_SET_CONTINUOUS)
                m |= B(M_CONT);
        return m;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues)
{
        struct me_inst *in = instance;

        if (!in || nvr != nValues)
                return fmi3Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] == 0 || vr[i] >= me_model.n_vars)
                        return fail(in, "fmi3SetFloat64", "unknown or not settable value reference");
                if (clock_closed(in, vr[i]))
                        return fail(in, "fmi3SetFloat64", "a clocked variable whose Clock is not "
                                    "active (section 2.2.8.3)");
                /* Continuous-Time Mode takes continuous inputs only (section 3.2.1). */
                if (!(B(in->mode) & set_modes(vr[i])))
                        return fail(in, "fmi3SetFloat64", "this variable may not be set in the "
                                    "current mode (sections 3.2.1 and 3.2.2)");
        }
        for (size_t i = 0; i < nvr; i++)
                in->v[vr[i]] = values[i];
        return fmi3OK;
}

/* The index of the Clock vr in me_model.clocks, of the direction wanted; -1 if none. */
static int clock_of(fmi3ValueReference vr, bool output)
{
        for (size_t i = 0; i < me_model.n_clocks; i++)
                if (me_model.clocks[i].vr == vr)
                        return me_model.clocks[i].output == output ? (int)i : -1;
        return -1;
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[])
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3SetClock", B(M_EVENT));
        for (size_t i = 0; i < nvr; i++)
                if (clock_of(vr[i], false) < 0)
                        return fail(in, "fmi3SetClock", "not an input Clock");
        for (size_t i = 0; i < nvr; i++) {
                int k = clock_of(vr[i], false);

                in->active[k] = values[i];
                in->ran[k] &= values[i];
        }
        return fmi3OK;
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[])
{
        struct me_inst *in = instance;

        MODE_OK(in, "fmi3GetClock", B(M_EVENT));
        for (size_t i = 0; i < nvr; i++)
                if (clock_of(vr[i], true) < 0)
                        return fail(in, "fmi3GetClock", "not an output Clock");
        run_ticks(in);
        /* Active until fmi3UpdateDiscreteStates (section 2.3.5). */
        for (size_t i = 0; i < nvr; i++)
                values[i] = in->active[clock_of(vr[i], true)];
        return fmi3OK;
}

#ifdef ME_STRING_INPUT
fmi3Status fmi3SetString(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String values[], size_t nValues)
{
        struct me_inst *in = instance;

        if (!in || nvr != nValues)
                return fmi3Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] != me_model.string_vr || !values[i] ||
                    strlen(values[i]) >= sizeof(in->str))
                        return fail(in, "fmi3SetString", "unknown value reference or too long");
                /* A discrete input: Event Mode, not Continuous-Time Mode (section 3.2.1). */
                if (in->mode == M_CONT || in->mode == M_TERMINATED)
                        return fail(in, "fmi3SetString", "a discrete input may not be set in the "
                                    "current mode (sections 3.2.1 and 3.2.2)");
        }
        for (size_t i = 0; i < nvr; i++) {
                snprintf(in->str, sizeof(in->str), "%s", values[i]);
                if (in->mode != M_EVENT)
                        memcpy(in->str_seen, in->str, sizeof(in->str));
        }
        return fmi3OK;
}

fmi3Status fmi3GetString(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String values[], size_t nValues)
{
        struct me_inst *in = instance;

        if (!in || nvr != nValues)
                return fmi3Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] != me_model.string_vr)
                        return fail(in, "fmi3GetString", "unknown value reference");
                if (me_model.no_input_get && in->mode == M_CONT)
                        return fail(in, "fmi3GetString", "an input is not got in Continuous-Time "
                                    "Mode (section 3.2.1)");
                values[i] = in->str;
        }
        return fmi3OK;
}
#endif

/* The types these models do not have. */
#include "fmi3_absent.h"
