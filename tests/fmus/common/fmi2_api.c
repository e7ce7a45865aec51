/*
 * fmi2_api.c: the FMI 2.0 Co-Simulation life cycle of a test FMU:
 * fmi2Instantiate, the slave state machine (FMI 2.0 section 4.2.4),
 * fmi2DoStep and status inquiry, plus the Model Exchange and optional
 * functions that a Co-Simulation-only FMU refuses. Variable access is in
 * fmi2_values.c, FMU state functions in fmi2_state.c.
 *
 * DESIGN: the same instance and model hooks as the FMI 3.0 front end. FMI
 * 2.0's states map onto the common ones: instantiated, initializationMode,
 * slaveInitialized (ST_STEP), terminated; its error state is ST_TERMINATED
 * too, since both allow only get, reset, free and FMU state calls. The
 * model's memory comes from malloc, so modelDescription.xml declares
 * canNotUseMemoryManagementFunctions="true".
 */
#ifdef FMUD_TEST_ASYNC
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef FMUD_TEST_ASYNC
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#endif

#include "fmi2Functions.h"

#include "common.h"

#ifdef FMUD_TEST_ASYNC
/*
 * canRunAsynchronuously (FMI 2.0 section 4.3.1): fmi2DoStep starts the
 * step on a thread and returns fmi2Pending; fmi2GetStatus(fmi2DoStepStatus)
 * says fmi2Pending until it is done, then its status (section 4.2.3). The
 * importer gave no stepFinished, which it may (section 4.2.1). One step at
 * a time in the process: a worker hosts one instance.
 */
static struct {
        pthread_t thread;
        bool running;
        atomic_bool done;
        struct inst *inst;
        double t, h;
        fmi2Status status;
} async;
#endif

static fmi2Status fail(struct inst *inst)
{
        inst_fail(inst);
        return fmi2Error;
}

/* The logger is variadic and takes a format: pass the message as "%s". */
static void forward_log2(struct inst *inst, enum fmu_status status, const char *category,
                 const char *message)
{
        fmi2CallbackLogger cb = (fmi2CallbackLogger)inst->log_callback;

        cb(inst->env, inst->name, (fmi2Status)status, category, "%s", message);
}

const char *fmi2GetTypesPlatform(void)
{
        return fmi2TypesPlatform;
}

const char *fmi2GetVersion(void)
{
        return fmi2Version;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
        const char *why = NULL;
        struct inst *inst;

        (void) visible;
        if (!functions)
                return NULL;    /* nowhere to report to */
        if (!instanceName || inst_name_blank(instanceName))
                why = "fmi2Instantiate: instanceName must not be empty";
        else if (fmuType != fmi2CoSimulation)
                why = "fmi2Instantiate: this FMU implements Co-Simulation only, not Model Exchange";
        else if (!fmuGUID || strcmp(fmuGUID, model.token) != 0)
                why = "fmi2Instantiate: fmuGUID does not match the one this binary was built for";
        if (why) {
                if (functions->logger)
                        functions->logger(functions->componentEnvironment,
                                          instanceName ? instanceName : "", fmi2Error,
                                          log_category_names[LOG_STATUS_ERROR], "%s", why);
                return NULL;
        }

        inst = inst_new(instanceName, fmuResourceLocation);
        if (!inst) {
                if (functions->logger)
                        functions->logger(functions->componentEnvironment, instanceName,
                                          fmi2Error, log_category_names[LOG_STATUS_ERROR],
                                          "%s", "fmi2Instantiate: out of memory");
                return NULL;
        }
        /* Copy the callbacks: the struct need not outlive this call. */
#ifdef FMUD_TEST_LOG_ENV_NULL
        /* As exports that call logger(NULL, ...): they keep no environment. */
        inst->env = NULL;
#else
        inst->env = functions->componentEnvironment;
#endif
        if (functions->logger) {
                inst->log_callback = (void (*)(void))functions->logger;
                inst->logger = forward_log2;
        }
        inst->log_mask = loggingOn ? (1u << LOG_N_CATEGORIES) - 1 : 0;
        return inst;
}

void fmi2FreeInstance(fmi2Component c)
{
#ifdef FMUD_TEST_ASYNC
        if (async.running && async.inst == c) {
                pthread_join(async.thread, NULL);
                async.running = false;
        }
#endif
        inst_free(c);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (inst_set_debug_logging(inst, loggingOn, nCategories, categories) < 0)
                return fail(inst);
        return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (!inst_check_state(inst, "fmi2SetupExperiment", STATE_BIT(ST_INSTANTIATED)))
                return fail(inst);
        if (inst_set_experiment(inst, "fmi2SetupExperiment", startTime, stopTimeDefined,
                                stopTime) < 0)
                return fail(inst);
        inst_set_tolerance(inst, toleranceDefined, tolerance);
        return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (!inst_check_state(inst, "fmi2EnterInitializationMode", STATE_BIT(ST_INSTANTIATED)))
                return fail(inst);
        inst->sim.state = ST_INITIALIZATION;
        inst->sim.dirty = true;
        return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (!inst_check_state(inst, "fmi2ExitInitializationMode", STATE_BIT(ST_INITIALIZATION)))
                return fail(inst);
        if (inst_calculate(inst) < 0)
                return fail(inst);
        inst->sim.state = ST_STEP;
        return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (!inst_check_state(inst, "fmi2Terminate", STATE_BIT(ST_STEP)))
                return fail(inst);
        inst->sim.state = ST_TERMINATED;
        if (inst->model->terminate && inst->model->terminate(inst) < 0)
                return fmi2Error;
        return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        inst_reset(inst);
        return fmi2OK;
}

/* The step itself, its arguments checked; also on a thread of its own (FMUD_TEST_ASYNC). */
static fmi2Status step_now(struct inst *inst, double t, double h)
{
        struct step s = { .t = t, .h = h, .t_end = t + h };

        if (model.do_step(inst, &s) < 0)
                return fail(inst);
        if (s.early_return || s.event_needed) {
                inst_log(inst, FMU_ERROR, "fmi2DoStep: FMI 2.0 has no early return or events");
                return fail(inst);
        }
        inst->sim.time = s.t_end;
        if (inst_calculate(inst) < 0)
                return fail(inst);
        /*
         * The model asks to stop (a Modelica terminate()): FMI 2.0 says so
         * with fmi2Discard, fmi2Terminated and fmi2LastSuccessfulTime
         * (section 4.2.3), as the FMU SDK's template and exports do.
         */
        if (s.terminate) {
                inst->sim.terminated = true;
                inst_log(inst, FMU_DISCARD, "fmi2DoStep: the model terminates at t = %.17g",
                         s.t_end);
                return fmi2Discard;
        }
        return fmi2OK;
}

#ifdef FMUD_TEST_ASYNC
static void *async_step(void *arg)
{
        (void) arg;
        /* Long enough that the importer sees it pending. */
        nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
        async.status = step_now(async.inst, async.t, async.h);
        atomic_store(&async.done, true);
        return NULL;
}

static fmi2Status async_start(struct inst *inst, double t, double h)
{
        if (async.running) {
                inst_log(inst, FMU_ERROR, "fmi2DoStep: the last step is still pending");
                return fail(inst);
        }
        async.inst = inst;
        async.t = t;
        async.h = h;
        atomic_store(&async.done, false);
        if (pthread_create(&async.thread, NULL, async_step, NULL) != 0)
                return step_now(inst, t, h);
        async.running = true;
        return fmi2Pending;
}

/* The pending step's status, joined once it is done; fmi2Pending until then. */
static fmi2Status async_status(void)
{
        if (!atomic_load(&async.done))
                return fmi2Pending;
        pthread_join(async.thread, NULL);
        async.running = false;
        return async.status;
}
#endif

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentCommunicationPoint)
{
        struct inst *inst = c;
        double t = currentCommunicationPoint, h = communicationStepSize;
        double tol = 1e-9 * fmax(1.0, fabs(t));

        (void) noSetFMUStatePriorToCurrentCommunicationPoint;
        if (!inst)
                return fmi2Error;
        if (!inst_check_state(inst, "fmi2DoStep", STATE_BIT(ST_STEP)))
                return fail(inst);
        if (!(h > 0.0) || fabs(t - inst->sim.time) > tol ||
            (inst->sim.stop_time_defined && t + h > inst->sim.stop_time)) {
                inst_log(inst, FMU_ERROR,
                         "fmi2DoStep(%.17g, %.17g): step must be > 0, start at the FMU's time "
                         "%.17g and not pass the stop time", t, h, inst->sim.time);
                return fail(inst);
        }
#ifdef FMUD_TEST_ASYNC
        return async_start(inst, t, h);
#else
        return step_now(inst, t, h);
#endif
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        inst_log(inst, FMU_ERROR, "fmi2CancelStep: canRunAsynchronuously is false; no step to cancel");
        return fail(inst);
}

/* A status that does not exist for this kind, or while no step is pending. */
static fmi2Status status_discard(struct inst *inst, const char *fn, fmi2StatusKind s)
{
        inst_log(inst, FMU_DISCARD, "%s: status kind %d is not available (no asynchronous step)",
                 fn, (int)s);
        return fmi2Discard;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
        struct inst *inst = c;

        (void) value;
        if (!inst)
                return fmi2Error;
#ifdef FMUD_TEST_ASYNC
        if (s == fmi2DoStepStatus && value && async.running) {
                *value = async_status();
                return fmi2OK;
        }
#endif
        return status_discard(inst, "fmi2GetStatus", s);
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (s != fmi2LastSuccessfulTime || !value)
                return status_discard(inst, "fmi2GetRealStatus", s);
        *value = inst->sim.time;
        return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
        struct inst *inst = c;

        (void) value;
        if (!inst)
                return fmi2Error;
        return status_discard(inst, "fmi2GetIntegerStatus", s);
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (s != fmi2Terminated || !value)
                return status_discard(inst, "fmi2GetBooleanStatus", s);
        *value = inst->sim.terminated ? fmi2True : fmi2False;
        return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
        struct inst *inst = c;

        (void) value;
        if (!inst)
                return fmi2Error;
        return status_discard(inst, "fmi2GetStringStatus", s);
}

/* ---- Functions this FMU only refuses ---------------------------------- */

static fmi2Status refuse(fmi2Component c, const char *fn, const char *why)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        inst_log(inst, FMU_ERROR, "%s: %s", fn, why);
        return fail(inst);
}

#define NOT_ME "this FMU implements Co-Simulation only, not Model Exchange"

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
        (void) vUnknown_ref;
        (void) nUnknown;
        (void) vKnown_ref;
        (void) nKnown;
        (void) dvKnown;
        (void) dvUnknown;
        return refuse(c, "fmi2GetDirectionalDerivative", "providesDirectionalDerivative is false");
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t nvr, const fmi2Integer order[],
                                       const fmi2Real value[])
{
        (void) vr;
        (void) nvr;
        (void) order;
        (void) value;
        return refuse(c, "fmi2SetRealInputDerivatives", "canInterpolateInputs is false");
}

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
        return refuse(c, "fmi2EnterEventMode", NOT_ME);
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *fmi2eventInfo)
{
        (void) fmi2eventInfo;
        return refuse(c, "fmi2NewDiscreteStates", NOT_ME);
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
        return refuse(c, "fmi2EnterContinuousTimeMode", NOT_ME);
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c,
                                       fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode,
                                       fmi2Boolean *terminateSimulation)
{
        (void) noSetFMUStatePriorToCurrentPoint;
        (void) enterEventMode;
        (void) terminateSimulation;
        return refuse(c, "fmi2CompletedIntegratorStep", NOT_ME);
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
        (void) time;
        return refuse(c, "fmi2SetTime", NOT_ME);
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
        (void) x;
        (void) nx;
        return refuse(c, "fmi2SetContinuousStates", NOT_ME);
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
        (void) derivatives;
        (void) nx;
        return refuse(c, "fmi2GetDerivatives", NOT_ME);
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
        (void) eventIndicators;
        (void) ni;
        return refuse(c, "fmi2GetEventIndicators", NOT_ME);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
        (void) x;
        (void) nx;
        return refuse(c, "fmi2GetContinuousStates", NOT_ME);
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
        (void) x_nominal;
        (void) nx;
        return refuse(c, "fmi2GetNominalsOfContinuousStates", NOT_ME);
}
