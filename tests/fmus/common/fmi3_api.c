/*
 * fmi3_api.c: the FMI 3.0 Co-Simulation life cycle of a test FMU:
 * instantiation, the state machine (sections 2.3 and 4.2), fmi3DoStep,
 * Event Mode and (Re)Configuration Mode. Variable access is in
 * fmi3_values.c, FMU state functions in fmi3_state.c, Clock timing in
 * fmi3_clocks.c, partial derivatives and dependencies in fmi3_partials.c
 * (refused unless the model provides them); functions the test FMUs only
 * refuse (Model Exchange, Scheduled Execution) are in fmi3_refuse.c.
 *
 * DESIGN: every call first checks the state it is allowed in and refuses
 * with fmi3Error and a message naming the state. Any fmi3Error moves the
 * instance to Terminated (section 2.3.1); fmi3SetFMUState and fmi3Reset
 * lead back.
 *
 * Build with FMUD_OMIT_DO_STEP defined to leave fmi3DoStep out of the
 * binary (the MissingSymbol test FMU).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

#include "common.h"

/* Report a failure: log was done by the caller; move to Terminated. */
static fmi3Status fail(struct inst *inst)
{
        inst_fail(inst);
        return fmi3Error;
}

static void forward_log3(struct inst *inst, enum fmu_status status, const char *category,
                 const char *message)
{
        fmi3LogMessageCallback cb = (fmi3LogMessageCallback)inst->log_callback;

        cb(inst->env, (fmi3Status)status, category, message);
}

static void intermediate3(struct inst *inst, struct intermediate *iu)
{
        fmi3IntermediateUpdateCallback cb = (fmi3IntermediateUpdateCallback)inst->iu_callback;
        fmi3Boolean early = fmi3False;
        fmi3Float64 early_time = iu->t;

        cb(inst->env, iu->t, iu->set_requested, iu->get_allowed, iu->step_finished,
           iu->can_return_early, &early, &early_time);
        iu->early_return_requested = early;
        iu->early_return_time = early_time;
}

/* Log before an instance exists (instantiation refused). */
static void log_refusal(fmi3InstanceEnvironment env, fmi3LogMessageCallback cb,
                        const char *message)
{
        if (cb)
                cb(env, fmi3Error, log_category_names[LOG_STATUS_ERROR], message);
}

/* Check the instantiation arguments; returns a static reason or NULL. */
static const char *instantiation_refusal(fmi3String name, fmi3String token,
                                         fmi3Boolean event_mode_used,
                                         const fmi3ValueReference required[],
                                         size_t n_required)
{
#ifdef FMUD_TEST_NEEDS_TOOL
        /* As an export that needs its tool installed where it runs (tests/fmus/CMakeLists.txt). */
        if (!getenv("FMUD_TEST_TOOL"))
                return "cannot find the execution tool (FMUD_TEST_TOOL is not set)";
#endif
        if (!name || inst_name_blank(name))
                return "fmi3InstantiateCoSimulation: instanceName must not be empty";
        if (!token || strcmp(token, model.token) != 0)
                return "fmi3InstantiateCoSimulation: instantiationToken does not match "
                       "the one this binary was built for";
        if (event_mode_used && !(model.caps & MODEL_HAS_EVENT_MODE))
                return "fmi3InstantiateCoSimulation: eventModeUsed = true, but hasEventMode is false";
        if (n_required > 0 && !required)
                return "fmi3InstantiateCoSimulation: requiredIntermediateVariables is NULL";
        for (size_t i = 0; i < n_required; i++) {
                const struct var *v = NULL;

                for (size_t j = 0; j < model.n_vars; j++)
                        if (model.vars[j].vr == required[i])
                                v = &model.vars[j];
                if (!v || !v->intermediate)
                        return "fmi3InstantiateCoSimulation: a requiredIntermediateVariables "
                               "entry is not a variable with intermediateUpdate=\"true\"";
        }
        return NULL;
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName,
                                         fmi3String instantiationToken,
                                         fmi3String resourcePath,
                                         fmi3Boolean visible,
                                         fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed,
                                         fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate)
{
        const char *why;
        struct inst *inst;

        (void) visible;         /* batch or interactive: the same for us */
        why = instantiation_refusal(instanceName, instantiationToken, eventModeUsed,
                                    requiredIntermediateVariables,
                                    nRequiredIntermediateVariables);
        if (why) {
                log_refusal(instanceEnvironment, logMessage, why);
                return NULL;
        }
        inst = inst_new(instanceName, resourcePath);
        if (!inst)
                goto out_oom;
        if (nRequiredIntermediateVariables > 0) {
                inst->required_iu = malloc(nRequiredIntermediateVariables * sizeof(uint32_t));
                if (!inst->required_iu)
                        goto out_free;
                memcpy(inst->required_iu, requiredIntermediateVariables,
                       nRequiredIntermediateVariables * sizeof(uint32_t));
                inst->n_required_iu = nRequiredIntermediateVariables;
        }
#ifdef FMUD_TEST_LOG_ENV_SELF
        /* As exports that pass their own instance where the environment belongs. */
        inst->env = inst;
#else
        inst->env = instanceEnvironment;
#endif
        if (logMessage) {
                inst->log_callback = (void (*)(void))logMessage;
                inst->logger = forward_log3;
        }
        if (intermediateUpdate && (model.caps & MODEL_PROVIDES_INTERMEDIATE)) {
                inst->iu_callback = (void (*)(void))intermediateUpdate;
                inst->iu = intermediate3;
        }
        inst->log_mask = loggingOn ? (1u << LOG_N_CATEGORIES) - 1 : 0;
        inst->event_mode_used = eventModeUsed;
        inst->early_return_allowed = earlyReturnAllowed;
        return inst;

out_free:
        inst_free(inst);
out_oom:
        log_refusal(instanceEnvironment, logMessage,
                    "fmi3InstantiateCoSimulation: out of memory");
        return NULL;
}

void fmi3FreeInstance(fmi3Instance instance)
{
        inst_free(instance);
}

const char *fmi3GetVersion(void)
{
        return fmi3Version;
}

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn,
                               size_t nCategories, const fmi3String categories[])
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (inst_set_debug_logging(inst, loggingOn, nCategories, categories) < 0)
                return fail(inst);
        return fmi3OK;
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance,
                                       fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance,
                                       fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined,
                                       fmi3Float64 stopTime)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3EnterInitializationMode", STATE_BIT(ST_INSTANTIATED)))
                return fail(inst);
        if (inst_set_experiment(inst, "fmi3EnterInitializationMode", startTime, stopTimeDefined,
                                stopTime) < 0)
                return fail(inst);
        /* Kept for models that show what they got (inst_tolerance()); none integrates with it. */
        inst_set_tolerance(inst, toleranceDefined, tolerance);
        inst->sim.state = ST_INITIALIZATION;
        inst->sim.dirty = true;
        return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3ExitInitializationMode", STATE_BIT(ST_INITIALIZATION)))
                return fail(inst);
        /* Evaluate f_init while the initial equations still apply. */
        if (inst_calculate(inst) < 0)
                return fail(inst);
        inst->sim.state = inst->event_mode_used ? ST_EVENT : ST_STEP;
        return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3EnterEventMode", STATE_BIT(ST_STEP)))
                return fail(inst);
        if (!inst->event_mode_used) {
                inst_log(inst, FMU_ERROR,
                         "fmi3EnterEventMode: the instance was created with eventModeUsed = false");
                return fail(inst);
        }
        inst->sim.state = ST_EVENT;
        return fmi3OK;
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3EvaluateDiscreteStates", STATE_BIT(ST_EVENT)))
                return fail(inst);
        /* providesEvaluateDiscreteStates is false: the call is ignored (2.3.5). */
        return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance,
                                    fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime)
{
        struct inst *inst = instance;
        struct discrete d = { 0 };

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3UpdateDiscreteStates", STATE_BIT(ST_EVENT)))
                return fail(inst);
        if (!discreteStatesNeedUpdate || !terminateSimulation ||
            !nominalsOfContinuousStatesChanged || !valuesOfContinuousStatesChanged ||
            !nextEventTimeDefined || !nextEventTime) {
                inst_log(inst, FMU_ERROR, "fmi3UpdateDiscreteStates: an output argument is NULL");
                return fail(inst);
        }
        if (model.update_discrete && model.update_discrete(inst, &d) < 0)
                return fail(inst);
        if (inst_calculate(inst) < 0)
                return fail(inst);
        *discreteStatesNeedUpdate = d.need_update;
        *terminateSimulation = d.terminate;
        /* Both only have a meaning in Model Exchange. */
        *nominalsOfContinuousStatesChanged = fmi3False;
        *valuesOfContinuousStatesChanged = fmi3False;
        *nextEventTimeDefined = d.next_event_time_defined;
        *nextEventTime = d.next_event_time_defined ? d.next_event_time : 0.0;
        return fmi3OK;
}

fmi3Status fmi3EnterStepMode(fmi3Instance instance)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3EnterStepMode", STATE_BIT(ST_EVENT)))
                return fail(inst);
        if (inst_calculate(inst) < 0)
                return fail(inst);
        inst->sim.state = ST_STEP;
        return fmi3OK;
}

static bool has_structural(bool tunable_only)
{
        for (size_t i = 0; i < model.n_vars; i++)
                if (model.vars[i].causality == VAR_STRUCTURAL_PARAMETER &&
                    (!tunable_only || model.vars[i].variability == VAR_TUNABLE))
                        return true;
        return false;
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance)
{
        struct inst *inst = instance;
        bool re;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3EnterConfigurationMode",
                              STATE_BIT(ST_INSTANTIATED) | STATE_BIT(ST_STEP)))
                return fail(inst);
        re = inst->sim.state == ST_STEP;
        if (!has_structural(re)) {
                inst_log(inst, FMU_ERROR, "fmi3EnterConfigurationMode: the model has no %sstructural parameters",
                         re ? "tunable " : "");
                return fail(inst);
        }
        inst->sim.state = re ? ST_RECONFIGURATION : ST_CONFIGURATION;
        return fmi3OK;
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance)
{
        struct inst *inst = instance;
        bool re;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3ExitConfigurationMode",
                              STATE_BIT(ST_CONFIGURATION) | STATE_BIT(ST_RECONFIGURATION)))
                return fail(inst);
        re = inst->sim.state == ST_RECONFIGURATION;
        if (model.configure && model.configure(inst) < 0)
                return fail(inst);
        /* Recompute in the state we return to: in Instantiated, from start values. */
        inst->sim.state = re ? ST_STEP : ST_INSTANTIATED;
        if (inst_calculate(inst) < 0)
                return fail(inst);
        return fmi3OK;
}

#ifndef FMUD_OMIT_DO_STEP
/* Check the step arguments against the FMU's time and stop time. */
static bool step_args_ok(struct inst *inst, fmi3Float64 t, fmi3Float64 h)
{
        double tol = 1e-9 * fmax(1.0, fabs(t));

        if (!(h > 0.0)) {
                inst_log(inst, FMU_ERROR, "fmi3DoStep: communicationStepSize %.17g must be > 0", h);
                return false;
        }
        if (fabs(t - inst->sim.time) > tol) {
                inst_log(inst, FMU_ERROR,
                         "fmi3DoStep: currentCommunicationPoint %.17g differs from the FMU's time %.17g",
                         t, inst->sim.time);
                return false;
        }
        /* Strictly, as exports check it (FMI 3.0 section 2.3.2: past stopTime is an Error). */
        if (inst->sim.stop_time_defined && t + h > inst->sim.stop_time) {
                inst_log(inst, FMU_ERROR, "fmi3DoStep: step to %.17g would pass stopTime %.17g",
                         t + h, inst->sim.stop_time);
                return false;
        }
        return true;
}

fmi3Status fmi3DoStep(fmi3Instance instance,
                      fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded,
                      fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn,
                      fmi3Float64 *lastSuccessfulTime)
{
        struct inst *inst = instance;
        struct step s;

        (void) noSetFMUStatePriorToCurrentPoint;        /* we keep no history */
        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3DoStep", STATE_BIT(ST_STEP)))
                return fail(inst);
        if (!eventHandlingNeeded || !terminateSimulation || !earlyReturn || !lastSuccessfulTime) {
                inst_log(inst, FMU_ERROR, "fmi3DoStep: an output argument is NULL");
                return fail(inst);
        }
        if (!step_args_ok(inst, currentCommunicationPoint, communicationStepSize))
                return fail(inst);

        s = (struct step){
                .t = currentCommunicationPoint,
                .h = communicationStepSize,
                .early_return_allowed = inst->early_return_allowed,
                .event_mode_used = inst->event_mode_used,
                .t_end = currentCommunicationPoint + communicationStepSize,
        };
        if (model.do_step(inst, &s) < 0)
                return fail(inst);
        if ((s.early_return && !inst->early_return_allowed) ||
            (s.event_needed && !inst->event_mode_used)) {
                inst_log(inst, FMU_ERROR, "fmi3DoStep: the model asked for an early return or "
                         "event the importer does not allow");
                return fail(inst);
        }
        /*
         * Without an early return the next call is expected at t + h, even
         * where lastSuccessfulTime (s.t_end) deviates from it, as a
         * fixed-step model's does (section 4.2.1).
         */
        inst->sim.time = s.early_return ? s.t_end : currentCommunicationPoint + communicationStepSize;
        if (inst_calculate(inst) < 0)
                return fail(inst);
        if (s.early_return)
                inst_log(inst, FMU_OK, "fmi3DoStep: early return at t = %.17g%s", s.t_end,
                         s.event_needed ? " (event)" : "");

        *eventHandlingNeeded = s.event_needed;
        *terminateSimulation = s.terminate;
        *earlyReturn = s.early_return;
        *lastSuccessfulTime = s.t_end;
        return fmi3OK;
}
#endif /* FMUD_OMIT_DO_STEP */

fmi3Status fmi3Terminate(fmi3Instance instance)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3Terminate", STATE_BIT(ST_STEP) | STATE_BIT(ST_EVENT)))
                return fail(inst);
        inst->sim.state = ST_TERMINATED;
        if (inst->model->terminate && inst->model->terminate(inst) < 0)
                return fmi3Error;       /* Terminated all the same (section 2.3.1) */
        return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3Reset", SETTLED_STATE))
                return fail(inst);
        inst_reset(inst);
        return fmi3OK;
}
