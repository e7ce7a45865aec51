/*
 * fmi3_refuse.c: the FMI 3.0 functions a test FMU exports but only refuses:
 * the other interface types (Model Exchange, Scheduled Execution). Clock
 * timing (fmi3_clocks.c), partial derivatives and per-element dependencies
 * (fmi3_partials.c) are refused the same way unless the model provides
 * them.
 *
 * DESIGN: an importer resolves every function of the standard, so every
 * test FMU binary exports all of them. Each one here logs why it is not
 * available (the capability flag or interface type that rules it out) and
 * returns fmi3Error, which, as for any error, moves the instance to
 * Terminated.
 */
#include <stddef.h>

#include "fmi3Functions.h"

#include "common.h"

static fmi3Status refuse(fmi3Instance instance, const char *fn, const char *why)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        inst_log(inst, FMU_ERROR, "%s: %s", fn, why);
        inst_fail(inst);
        return fmi3Error;
}

#define NOT_ME "this FMU implements Co-Simulation only, not Model Exchange"

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName,
                                          fmi3String instantiationToken,
                                          fmi3String resourcePath,
                                          fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
        (void) instanceName;
        (void) instantiationToken;
        (void) resourcePath;
        (void) visible;
        (void) loggingOn;
        if (logMessage)
                logMessage(instanceEnvironment, fmi3Error, log_category_names[LOG_STATUS_ERROR],
                           "fmi3InstantiateModelExchange: " NOT_ME);
        return NULL;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName,
                                               fmi3String instantiationToken,
                                               fmi3String resourcePath,
                                               fmi3Boolean visible,
                                               fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage,
                                               fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption)
{
        (void) instanceName;
        (void) instantiationToken;
        (void) resourcePath;
        (void) visible;
        (void) loggingOn;
        (void) clockUpdate;
        (void) lockPreemption;
        (void) unlockPreemption;
        if (logMessage)
                logMessage(instanceEnvironment, fmi3Error, log_category_names[LOG_STATUS_ERROR],
                           "fmi3InstantiateScheduledExecution: this FMU implements Co-Simulation "
                           "only, not Scheduled Execution");
        return NULL;
}

/* ---- Model Exchange ------------------------------------------------- */

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
        return refuse(instance, "fmi3EnterContinuousTimeMode", NOT_ME);
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation)
{
        (void) noSetFMUStatePriorToCurrentPoint;
        (void) enterEventMode;
        (void) terminateSimulation;
        return refuse(instance, "fmi3CompletedIntegratorStep", NOT_ME);
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time)
{
        (void) time;
        return refuse(instance, "fmi3SetTime", NOT_ME);
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates)
{
        (void) continuousStates;
        (void) nContinuousStates;
        return refuse(instance, "fmi3SetContinuousStates", NOT_ME);
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates)
{
        (void) derivatives;
        (void) nContinuousStates;
        return refuse(instance, "fmi3GetContinuousStateDerivatives", NOT_ME);
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators)
{
        (void) eventIndicators;
        (void) nEventIndicators;
        return refuse(instance, "fmi3GetEventIndicators", NOT_ME);
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates)
{
        (void) continuousStates;
        (void) nContinuousStates;
        return refuse(instance, "fmi3GetContinuousStates", NOT_ME);
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates)
{
        (void) nominals;
        (void) nContinuousStates;
        return refuse(instance, "fmi3GetNominalsOfContinuousStates", NOT_ME);
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators)
{
        (void) nEventIndicators;
        return refuse(instance, "fmi3GetNumberOfEventIndicators", NOT_ME);
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates)
{
        (void) nContinuousStates;
        return refuse(instance, "fmi3GetNumberOfContinuousStates", NOT_ME);
}

/* ---- Scheduled Execution -------------------------------------------- */

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
        (void) clockReference;
        (void) activationTime;
        return refuse(instance, "fmi3ActivateModelPartition",
                      "this FMU implements Co-Simulation only, not Scheduled Execution");
}
