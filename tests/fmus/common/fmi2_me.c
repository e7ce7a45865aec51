/*
 * fmi2_me.c: the FMI 2.0 Model Exchange API (FMI 2.0 section 3.2) over a
 * model of me_model.h: instantiation, Initialization, Event and
 * Continuous-Time Modes, Real get and set, states, derivatives, event
 * indicators. With FME2_WITH_CS it is also a Co-Simulation FMU (one
 * binary, both interfaces, as FMI 2.0 allows): fmi2DoStep integrates the
 * same model with fixed RK4 steps of its own.
 *
 * DESIGN: behaves like a Dymola or OpenModelica export where the standard
 * leaves room: fmi2NewDiscreteStates asks for another pass
 * (newDiscreteStatesNeeded) whenever its pass changed any variable, and
 * reports a jump of the states (valuesOfContinuousStatesChanged) and the
 * next time event (nextEventTimeDefined). Each function checks the mode
 * the standard allows it in (FMI 2.0 section 3.2.3's state machine) and
 * logs and fails otherwise; fmi2EnterContinuousTimeMode before the
 * iteration is done fails too, so an importer that gets the calling
 * sequence wrong is caught by the tests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#include "me_model.h"

enum mode { M_INSTANTIATED, M_INIT, M_EVENT, M_CONT, M_STEP, M_TERMINATED };

struct me2_inst {
        double v[ME_MODEL_MAX_VARS];
        enum mode mode;
        bool cs;                /* instantiated as fmi2CoSimulation */
        bool need_pass;         /* the last fmi2NewDiscreteStates asked for another */
        bool next_defined;      /* Co-Simulation: the next time event */
        double next;
        char *name;
        const fmi2CallbackFunctions *cb;        /* kept: FMI 2.0 section 2.1.5 allows it */
};

static fmi2Status fail(struct me2_inst *in, const char *fn, const char *why)
{
        if (in && in->cb->logger)
                in->cb->logger(in->cb->componentEnvironment, in->name, fmi2Error, "logStatusError",
                              "%s: %s", fn, why);
        return fmi2Error;
}

#define B(m) (1u << (m))

#define MODE_OK(in, fn, allowed) \
        do { \
                if (!(in)) \
                        return fmi2Error; \
                if (!((1u << (in)->mode) & (allowed))) \
                        return fail((in), (fn), "not allowed in this state (FMI 2.0 section 3.2.3)"); \
        } while (0)

const char *fmi2GetTypesPlatform(void)
{
        return fmi2TypesPlatform;
}

const char *fmi2GetVersion(void)
{
        return fmi2Version;
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
        (void) loggingOn;
        (void) nCategories;
        (void) categories;
        return c ? fmi2OK : fmi2Error;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
        struct me2_inst *in;
        bool cs = fmuType == fmi2CoSimulation;

        (void) fmuResourceLocation;
        (void) visible;
        (void) loggingOn;
#ifdef FME2_WITH_CS
        if (fmuType != fmi2ModelExchange && !cs)
                return NULL;
#else
        if (fmuType != fmi2ModelExchange)
                return NULL;
#endif
        if (!functions || !instanceName || !fmuGUID || strcmp(fmuGUID, me_model.token))
                return NULL;
        in = calloc(1, sizeof(*in));
        if (!in || !(in->name = malloc(strlen(instanceName) + 1))) {
                free(in);
                return NULL;
        }
        memcpy(in->name, instanceName, strlen(instanceName) + 1);
        in->cb = functions;
        in->cs = cs;
        me_model.start(in->v);
        return in;
}

void fmi2FreeInstance(fmi2Component c)
{
        struct me2_inst *in = c;

        if (in)
                free(in->name);
        free(in);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
        struct me2_inst *in = c;

        (void) toleranceDefined;
        (void) tolerance;
        (void) stopTimeDefined;
        (void) stopTime;
        MODE_OK(in, "fmi2SetupExperiment", B(M_INSTANTIATED));
        in->v[0] = startTime;
        return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2EnterInitializationMode", B(M_INSTANTIATED));
        in->mode = M_INIT;
        return fmi2OK;
}

/* One pass of the event iteration; *changed: some variable changed in it. */
static void event_pass(struct me2_inst *in, bool *jumped, bool *changed, bool *next_defined,
                       double *next)
{
        double before[ME_MODEL_MAX_VARS];

        memcpy(before, in->v, sizeof(before));
        *jumped = *next_defined = false;
        *next = 0.0;
        if (me_model.event)
                me_model.event(in->v, jumped, next_defined, next);
        me_model.derivatives(in->v);
        *changed = memcmp(before, in->v, sizeof(before)) != 0;
}

/* Event Mode entered (me_model.h): FMI 2.0 has no Clocks to pass. */
static void entered(struct me2_inst *in)
{
        bool none[ME_MODEL_MAX_CLOCKS] = { false };

        if (me_model.entered)
                me_model.entered(in->v, none);
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2ExitInitializationMode", B(M_INIT));
        me_model.init(in->v);
        me_model.derivatives(in->v);
        /* Model Exchange: Event Mode next (FMI 2.0 section 3.2.3); Co-Simulation: its first event now. */
        in->mode = M_EVENT;
        entered(in);
        if (in->cs) {
                bool jumped, changed;

                do
                        event_pass(in, &jumped, &changed, &in->next_defined, &in->next);
                while (changed);
                in->mode = M_STEP;
        }
        return fmi2OK;
}

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2EnterEventMode", B(M_CONT));
        in->mode = M_EVENT;
        entered(in);
        return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
        struct me2_inst *in = c;
        bool jumped, changed, defined;
        double next;

        MODE_OK(in, "fmi2NewDiscreteStates", B(M_EVENT));
        event_pass(in, &jumped, &changed, &defined, &next);
        /* As a tool's export: one more pass after any change, until a pass changes nothing. */
        in->need_pass = changed;
        info->newDiscreteStatesNeeded = changed;
        info->terminateSimulation = fmi2False;
        info->nominalsOfContinuousStatesChanged = fmi2False;
        info->valuesOfContinuousStatesChanged = jumped;
        info->nextEventTimeDefined = defined;
        info->nextEventTime = defined ? next : 0.0;
        return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2EnterContinuousTimeMode", B(M_EVENT));
        if (in->need_pass)
                return fail(in, "fmi2EnterContinuousTimeMode", "newDiscreteStatesNeeded was "
                            "true: call fmi2NewDiscreteStates again first (FMI 2.0 section 3.2.2)");
        in->mode = M_CONT;
        return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
        struct me2_inst *in = c;

        (void) noSetFMUStatePriorToCurrentPoint;
        MODE_OK(in, "fmi2CompletedIntegratorStep", B(M_CONT));
        *enterEventMode = fmi2False;
        *terminateSimulation = fmi2False;
        return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2SetTime", B(M_EVENT) | B(M_CONT));
        in->v[0] = time;
        return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2SetContinuousStates", B(M_CONT));
        if (nx != me_model.nx)
                return fail(in, "fmi2SetContinuousStates", "wrong number of states");
        for (size_t i = 0; i < nx; i++)
                in->v[me_model.state_vr[i]] = x[i];
        return fmi2OK;
}

#define READ_MODES (B(M_INIT) | B(M_EVENT) | B(M_CONT) | B(M_TERMINATED))

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2GetContinuousStates", READ_MODES);
        if (nx != me_model.nx)
                return fail(in, "fmi2GetContinuousStates", "wrong number of states");
        for (size_t i = 0; i < nx; i++)
                x[i] = in->v[me_model.state_vr[i]];
        return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2GetDerivatives", READ_MODES);
        if (nx != me_model.nx)
                return fail(in, "fmi2GetDerivatives", "wrong number of states");
        me_model.derivatives(in->v);
        for (size_t i = 0; i < nx; i++)
                dx[i] = in->v[me_model.der_vr[i]];
        return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2GetEventIndicators", READ_MODES);
        if (nz != me_model.nz)
                return fail(in, "fmi2GetEventIndicators", "wrong number of event indicators");
        if (nz)
                me_model.indicators(in->v, z);
        return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real n[], size_t nx)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2GetNominalsOfContinuousStates", READ_MODES | B(M_INSTANTIATED));
        if (nx != me_model.nx)
                return fail(in, "fmi2GetNominalsOfContinuousStates", "wrong number of states");
        for (size_t i = 0; i < nx; i++)
                n[i] = me_model.nominal[i] > 0.0 ? me_model.nominal[i] : 1.0;
        return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
        struct me2_inst *in = c;

        MODE_OK(in, "fmi2Terminate", B(M_EVENT) | B(M_CONT) | B(M_STEP));
        in->mode = M_TERMINATED;
        return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
        struct me2_inst *in = c;

        if (!in)
                return fmi2Error;
        memset(in->v, 0, sizeof(in->v));
        me_model.start(in->v);
        in->mode = M_INSTANTIATED;
        in->need_pass = in->next_defined = false;
        return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
        struct me2_inst *in = c;

        if (!in)
                return fmi2Error;
        if (in->mode != M_INSTANTIATED)
                me_model.derivatives(in->v);
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] >= me_model.n_vars)
                        return fail(in, "fmi2GetReal", "unknown value reference");
                if (me_model.no_input_get && in->mode == M_CONT && me_model.set[vr[i]] >= ME_SET_EVENT)
                        return fail(in, "fmi2GetReal", "an input is not got in Continuous-Time "
                                    "Mode");
                value[i] = in->v[vr[i]];
        }
        return fmi2OK;
}

/*
 * The modes fmi2SetReal may change vr in (FMI 2.0 section 3.2.3, Table of
 * the ME state machine; section 4.2.4 for Co-Simulation's step mode):
 * me_model.h's enum me_set, as a strict FMU checks them.
 */
static unsigned set_modes(unsigned vr)
{
        unsigned m = B(M_INSTANTIATED) | B(M_INIT);

        if (me_model.set[vr] >= ME_SET_EVENT)
                m |= B(M_EVENT) | B(M_STEP);
        if (me_model.set[vr] == ME_SET_CONTINUOUS)
                m |= B(M_CONT);
        return m;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
        struct me2_inst *in = c;

        if (!in)
                return fmi2Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] == 0 || vr[i] >= me_model.n_vars)
                        return fail(in, "fmi2SetReal", "unknown or not settable value reference");
                if (!(B(in->mode) & set_modes(vr[i])))
                        return fail(in, "fmi2SetReal", "this variable may not be set in the "
                                    "current state (FMI 2.0 section 3.2.3)");
        }
        for (size_t i = 0; i < nvr; i++)
                in->v[vr[i]] = value[i];
        return fmi2OK;
}

/* The types these models do not have. */
#define NO_GET(T, CT) \
        fmi2Status fmi2Get##T(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, CT value[]) \
        { \
                (void) vr; (void) nvr; (void) value; \
                return fail(c, "fmi2Get" #T, "the model has no such variables"); \
        }
#define NO_SET(T, CT) \
        fmi2Status fmi2Set##T(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, \
                              const CT value[]) \
        { \
                (void) vr; (void) nvr; (void) value; \
                return fail(c, "fmi2Set" #T, "the model has no such variables"); \
        }

NO_GET(Integer, fmi2Integer)
NO_GET(Boolean, fmi2Boolean)
NO_GET(String, fmi2String)
NO_SET(Integer, fmi2Integer)
NO_SET(Boolean, fmi2Boolean)
NO_SET(String, fmi2String)

#ifdef FME2_WITH_CS
#define CS_STEP 1e-4    /* the FMU's own fixed step */

/* dx/dt at in->v with the states x. */
static void rates(struct me2_inst *in, const double *x, double *dx)
{
        for (size_t i = 0; i < me_model.nx; i++)
                in->v[me_model.state_vr[i]] = x[i];
        me_model.derivatives(in->v);
        for (size_t i = 0; i < me_model.nx; i++)
                dx[i] = in->v[me_model.der_vr[i]];
}

/* One classical RK4 step of dt from in->v's time and states. */
static void rk4(struct me2_inst *in, double dt)
{
        double x[ME_MODEL_MAX_STATES], y[ME_MODEL_MAX_STATES], k[4][ME_MODEL_MAX_STATES];
        double t = in->v[0], f[4] = { 0.0, 0.5, 0.5, 1.0 };
        size_t n = me_model.nx;

        for (size_t i = 0; i < n; i++)
                x[i] = in->v[me_model.state_vr[i]];
        for (int s = 0; s < 4; s++) {
                for (size_t i = 0; i < n; i++)
                        y[i] = s ? x[i] + f[s] * dt * k[s - 1][i] : x[i];
                in->v[0] = t + f[s] * dt;
                rates(in, y, k[s]);
        }
        for (size_t i = 0; i < n; i++)
                in->v[me_model.state_vr[i]] = x[i] + dt / 6.0 * (k[0][i] + 2.0 * k[1][i] +
                                                               2.0 * k[2][i] + k[3][i]);
        in->v[0] = t + dt;
}

/* Co-Simulation: fixed steps to t + h; an event after the step where an indicator fell to 0. */
fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior)
{
        struct me2_inst *in = c;
        double end = t + h, z0[ME_MODEL_MAX_INDICATORS], z1[ME_MODEL_MAX_INDICATORS];

        (void) noSetPrior;
        MODE_OK(in, "fmi2DoStep", B(M_STEP));
        while (in->v[0] < end - 1e-12) {
                double dt = fmin(CS_STEP, end - in->v[0]);
                bool event = false, jumped, changed;

                if (in->next_defined && in->next > in->v[0])
                        dt = fmin(dt, in->next - in->v[0]);
                if (me_model.nz)
                        me_model.indicators(in->v, z0);
                rk4(in, dt);
                if (me_model.nz)
                        me_model.indicators(in->v, z1);
                for (size_t i = 0; i < me_model.nz; i++)
                        event |= (z0[i] > 0.0) != (z1[i] > 0.0);
                event |= in->next_defined && in->v[0] >= in->next;
                if (event)
                        do
                                event_pass(in, &jumped, &changed, &in->next_defined, &in->next);
                        while (changed);
        }
        return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
        return fail(c, "fmi2CancelStep", "no step is pending");
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
        (void) s;
        (void) value;
        return fail(c, "fmi2GetStatus", "no step is pending");
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
        (void) s;
        (void) value;
        return fail(c, "fmi2GetRealStatus", "no step is pending");
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
        (void) s;
        (void) value;
        return fail(c, "fmi2GetIntegerStatus", "no step is pending");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
        (void) s;
        (void) value;
        return fail(c, "fmi2GetBooleanStatus", "no step is pending");
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
        (void) s;
        (void) value;
        return fail(c, "fmi2GetStringStatus", "no step is pending");
}
#endif
