/*
 * fmi3FunctionTypes.h: the FMI 3.0 enumerations, callback types and one
 * function type fmi3<Name>TYPE per API function, for importers that resolve
 * the functions with dlsym() and for FMUs that define them.
 *
 * Written from the definitions in the FMI 3.0 standard, section 2.2 (and
 * the function definitions of sections 3.2, 4.2 and 5.2 it refers to).
 * The types are the ABI shared with FMUs built elsewhere: do not change
 * a definition.
 */
#ifndef fmi3FunctionTypes_h
#define fmi3FunctionTypes_h

#include "fmi3PlatformTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Section 2.2.4. Ordered by severity; code may compare with < and >. */
typedef enum {
        fmi3OK,
        fmi3Warning,
        fmi3Discard,
        fmi3Error,
        fmi3Fatal
} fmi3Status;

/* Section 2.2.9: the kind of dependency of an unknown on a known. */
typedef enum {
        fmi3Independent,
        fmi3Constant,
        fmi3Fixed,
        fmi3Tunable,
        fmi3Discrete,
        fmi3Dependent
} fmi3DependencyKind;

/* Section 2.2.8.4: whether a Clock interval is known and has changed. */
typedef enum {
        fmi3IntervalNotYetKnown,
        fmi3IntervalUnchanged,
        fmi3IntervalChanged
} fmi3IntervalQualifier;

/* Callbacks the importer provides (section 2.3.1). */
typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment instanceEnvironment,
                                       fmi3Status status,
                                       fmi3String category,
                                       fmi3String message);

typedef void (*fmi3ClockUpdateCallback)(fmi3InstanceEnvironment instanceEnvironment);

typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3Float64 intermediateUpdateTime,
                                               fmi3Boolean intermediateVariableSetRequested,
                                               fmi3Boolean intermediateVariableGetAllowed,
                                               fmi3Boolean intermediateStepFinished,
                                               fmi3Boolean canReturnEarly,
                                               fmi3Boolean *earlyReturnRequested,
                                               fmi3Float64 *earlyReturnTime);

typedef void (*fmi3LockPreemptionCallback)(void);
typedef void (*fmi3UnlockPreemptionCallback)(void);

/* ---- Common functions ------------------------------------------------ */

/* Inquire version numbers and set debug logging. */
typedef const char *fmi3GetVersionTYPE(void);

typedef fmi3Status fmi3SetDebugLoggingTYPE(fmi3Instance instance,
                                           fmi3Boolean loggingOn,
                                           size_t nCategories,
                                           const fmi3String categories[]);

/* Creation and destruction of FMU instances. */
typedef fmi3Instance fmi3InstantiateModelExchangeTYPE(fmi3String instanceName,
                                                      fmi3String instantiationToken,
                                                      fmi3String resourcePath,
                                                      fmi3Boolean visible,
                                                      fmi3Boolean loggingOn,
                                                      fmi3InstanceEnvironment instanceEnvironment,
                                                      fmi3LogMessageCallback logMessage);

typedef fmi3Instance fmi3InstantiateCoSimulationTYPE(fmi3String instanceName,
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
                                                     fmi3IntermediateUpdateCallback intermediateUpdate);

typedef fmi3Instance fmi3InstantiateScheduledExecutionTYPE(fmi3String instanceName,
                                                           fmi3String instantiationToken,
                                                           fmi3String resourcePath,
                                                           fmi3Boolean visible,
                                                           fmi3Boolean loggingOn,
                                                           fmi3InstanceEnvironment instanceEnvironment,
                                                           fmi3LogMessageCallback logMessage,
                                                           fmi3ClockUpdateCallback clockUpdate,
                                                           fmi3LockPreemptionCallback lockPreemption,
                                                           fmi3UnlockPreemptionCallback unlockPreemption);

typedef void fmi3FreeInstanceTYPE(fmi3Instance instance);

/* Enter and exit initialization mode, enter event mode, terminate and reset. */
typedef fmi3Status fmi3EnterInitializationModeTYPE(fmi3Instance instance,
                                                   fmi3Boolean toleranceDefined,
                                                   fmi3Float64 tolerance,
                                                   fmi3Float64 startTime,
                                                   fmi3Boolean stopTimeDefined,
                                                   fmi3Float64 stopTime);

typedef fmi3Status fmi3ExitInitializationModeTYPE(fmi3Instance instance);

typedef fmi3Status fmi3EnterEventModeTYPE(fmi3Instance instance);

typedef fmi3Status fmi3TerminateTYPE(fmi3Instance instance);

typedef fmi3Status fmi3ResetTYPE(fmi3Instance instance);

/* Getting and setting variable values (section 2.2.7.2). */
typedef fmi3Status fmi3GetFloat32TYPE(fmi3Instance instance,
                                      const fmi3ValueReference valueReferences[],
                                      size_t nValueReferences,
                                      fmi3Float32 values[],
                                      size_t nValues);

typedef fmi3Status fmi3GetFloat64TYPE(fmi3Instance instance,
                                      const fmi3ValueReference valueReferences[],
                                      size_t nValueReferences,
                                      fmi3Float64 values[],
                                      size_t nValues);

typedef fmi3Status fmi3GetInt8TYPE(fmi3Instance instance,
                                   const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences,
                                   fmi3Int8 values[],
                                   size_t nValues);

typedef fmi3Status fmi3GetUInt8TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    fmi3UInt8 values[],
                                    size_t nValues);

typedef fmi3Status fmi3GetInt16TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    fmi3Int16 values[],
                                    size_t nValues);

typedef fmi3Status fmi3GetUInt16TYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     fmi3UInt16 values[],
                                     size_t nValues);

typedef fmi3Status fmi3GetInt32TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    fmi3Int32 values[],
                                    size_t nValues);

typedef fmi3Status fmi3GetUInt32TYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     fmi3UInt32 values[],
                                     size_t nValues);

typedef fmi3Status fmi3GetInt64TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    fmi3Int64 values[],
                                    size_t nValues);

typedef fmi3Status fmi3GetUInt64TYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     fmi3UInt64 values[],
                                     size_t nValues);

typedef fmi3Status fmi3GetBooleanTYPE(fmi3Instance instance,
                                      const fmi3ValueReference valueReferences[],
                                      size_t nValueReferences,
                                      fmi3Boolean values[],
                                      size_t nValues);

typedef fmi3Status fmi3GetStringTYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     fmi3String values[],
                                     size_t nValues);

typedef fmi3Status fmi3GetBinaryTYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     size_t valueSizes[],
                                     fmi3Binary values[],
                                     size_t nValues);

typedef fmi3Status fmi3GetClockTYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    fmi3Clock values[]);

typedef fmi3Status fmi3SetFloat32TYPE(fmi3Instance instance,
                                      const fmi3ValueReference valueReferences[],
                                      size_t nValueReferences,
                                      const fmi3Float32 values[],
                                      size_t nValues);

typedef fmi3Status fmi3SetFloat64TYPE(fmi3Instance instance,
                                      const fmi3ValueReference valueReferences[],
                                      size_t nValueReferences,
                                      const fmi3Float64 values[],
                                      size_t nValues);

typedef fmi3Status fmi3SetInt8TYPE(fmi3Instance instance,
                                   const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences,
                                   const fmi3Int8 values[],
                                   size_t nValues);

typedef fmi3Status fmi3SetUInt8TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    const fmi3UInt8 values[],
                                    size_t nValues);

typedef fmi3Status fmi3SetInt16TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    const fmi3Int16 values[],
                                    size_t nValues);

typedef fmi3Status fmi3SetUInt16TYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     const fmi3UInt16 values[],
                                     size_t nValues);

typedef fmi3Status fmi3SetInt32TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    const fmi3Int32 values[],
                                    size_t nValues);

typedef fmi3Status fmi3SetUInt32TYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     const fmi3UInt32 values[],
                                     size_t nValues);

typedef fmi3Status fmi3SetInt64TYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    const fmi3Int64 values[],
                                    size_t nValues);

typedef fmi3Status fmi3SetUInt64TYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     const fmi3UInt64 values[],
                                     size_t nValues);

typedef fmi3Status fmi3SetBooleanTYPE(fmi3Instance instance,
                                      const fmi3ValueReference valueReferences[],
                                      size_t nValueReferences,
                                      const fmi3Boolean values[],
                                      size_t nValues);

typedef fmi3Status fmi3SetStringTYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     const fmi3String values[],
                                     size_t nValues);

typedef fmi3Status fmi3SetBinaryTYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences,
                                     const size_t valueSizes[],
                                     const fmi3Binary values[],
                                     size_t nValues);

typedef fmi3Status fmi3SetClockTYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences,
                                    const fmi3Clock values[]);

/* Getting variable dependency information (section 2.2.9). */
typedef fmi3Status fmi3GetNumberOfVariableDependenciesTYPE(fmi3Instance instance,
                                                           fmi3ValueReference valueReference,
                                                           size_t *nDependencies);

typedef fmi3Status fmi3GetVariableDependenciesTYPE(fmi3Instance instance,
                                                   fmi3ValueReference dependent,
                                                   size_t elementIndicesOfDependent[],
                                                   fmi3ValueReference independents[],
                                                   size_t elementIndicesOfIndependents[],
                                                   fmi3DependencyKind dependencyKinds[],
                                                   size_t nDependencies);

/* Getting and setting the internal FMU state (section 2.2.7.4). */
typedef fmi3Status fmi3GetFMUStateTYPE(fmi3Instance instance, fmi3FMUState *FMUState);
typedef fmi3Status fmi3SetFMUStateTYPE(fmi3Instance instance, fmi3FMUState FMUState);
typedef fmi3Status fmi3FreeFMUStateTYPE(fmi3Instance instance, fmi3FMUState *FMUState);

typedef fmi3Status fmi3SerializedFMUStateSizeTYPE(fmi3Instance instance,
                                                  fmi3FMUState FMUState,
                                                  size_t *size);

typedef fmi3Status fmi3SerializeFMUStateTYPE(fmi3Instance instance,
                                             fmi3FMUState FMUState,
                                             fmi3Byte serializedState[],
                                             size_t size);

typedef fmi3Status fmi3DeserializeFMUStateTYPE(fmi3Instance instance,
                                               const fmi3Byte serializedState[],
                                               size_t size,
                                               fmi3FMUState *FMUState);

/* Getting partial derivatives (section 2.2.12). */
typedef fmi3Status fmi3GetDirectionalDerivativeTYPE(fmi3Instance instance,
                                                    const fmi3ValueReference unknowns[],
                                                    size_t nUnknowns,
                                                    const fmi3ValueReference knowns[],
                                                    size_t nKnowns,
                                                    const fmi3Float64 seed[],
                                                    size_t nSeed,
                                                    fmi3Float64 sensitivity[],
                                                    size_t nSensitivity);

typedef fmi3Status fmi3GetAdjointDerivativeTYPE(fmi3Instance instance,
                                                const fmi3ValueReference unknowns[],
                                                size_t nUnknowns,
                                                const fmi3ValueReference knowns[],
                                                size_t nKnowns,
                                                const fmi3Float64 seed[],
                                                size_t nSeed,
                                                fmi3Float64 sensitivity[],
                                                size_t nSensitivity);

/* Entering and exiting the Configuration or Reconfiguration Mode (2.3.6). */
typedef fmi3Status fmi3EnterConfigurationModeTYPE(fmi3Instance instance);
typedef fmi3Status fmi3ExitConfigurationModeTYPE(fmi3Instance instance);

/* Clock related functions (section 2.2.8.4). */
typedef fmi3Status fmi3GetIntervalDecimalTYPE(fmi3Instance instance,
                                              const fmi3ValueReference valueReferences[],
                                              size_t nValueReferences,
                                              fmi3Float64 intervals[],
                                              fmi3IntervalQualifier qualifiers[]);

typedef fmi3Status fmi3GetIntervalFractionTYPE(fmi3Instance instance,
                                               const fmi3ValueReference valueReferences[],
                                               size_t nValueReferences,
                                               fmi3UInt64 counters[],
                                               fmi3UInt64 resolutions[],
                                               fmi3IntervalQualifier qualifiers[]);

typedef fmi3Status fmi3GetShiftDecimalTYPE(fmi3Instance instance,
                                           const fmi3ValueReference valueReferences[],
                                           size_t nValueReferences,
                                           fmi3Float64 shifts[]);

typedef fmi3Status fmi3GetShiftFractionTYPE(fmi3Instance instance,
                                            const fmi3ValueReference valueReferences[],
                                            size_t nValueReferences,
                                            fmi3UInt64 counters[],
                                            fmi3UInt64 resolutions[]);

typedef fmi3Status fmi3SetIntervalDecimalTYPE(fmi3Instance instance,
                                              const fmi3ValueReference valueReferences[],
                                              size_t nValueReferences,
                                              const fmi3Float64 intervals[]);

typedef fmi3Status fmi3SetIntervalFractionTYPE(fmi3Instance instance,
                                               const fmi3ValueReference valueReferences[],
                                               size_t nValueReferences,
                                               const fmi3UInt64 counters[],
                                               const fmi3UInt64 resolutions[]);

typedef fmi3Status fmi3SetShiftDecimalTYPE(fmi3Instance instance,
                                           const fmi3ValueReference valueReferences[],
                                           size_t nValueReferences,
                                           const fmi3Float64 shifts[]);

typedef fmi3Status fmi3SetShiftFractionTYPE(fmi3Instance instance,
                                            const fmi3ValueReference valueReferences[],
                                            size_t nValueReferences,
                                            const fmi3UInt64 counters[],
                                            const fmi3UInt64 resolutions[]);

typedef fmi3Status fmi3EvaluateDiscreteStatesTYPE(fmi3Instance instance);

typedef fmi3Status fmi3UpdateDiscreteStatesTYPE(fmi3Instance instance,
                                                fmi3Boolean *discreteStatesNeedUpdate,
                                                fmi3Boolean *terminateSimulation,
                                                fmi3Boolean *nominalsOfContinuousStatesChanged,
                                                fmi3Boolean *valuesOfContinuousStatesChanged,
                                                fmi3Boolean *nextEventTimeDefined,
                                                fmi3Float64 *nextEventTime);

/* ---- Functions for Model Exchange (section 3.2) ---------------------- */

typedef fmi3Status fmi3EnterContinuousTimeModeTYPE(fmi3Instance instance);

typedef fmi3Status fmi3CompletedIntegratorStepTYPE(fmi3Instance instance,
                                                   fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi3Boolean *enterEventMode,
                                                   fmi3Boolean *terminateSimulation);

typedef fmi3Status fmi3SetTimeTYPE(fmi3Instance instance, fmi3Float64 time);

typedef fmi3Status fmi3SetContinuousStatesTYPE(fmi3Instance instance,
                                               const fmi3Float64 continuousStates[],
                                               size_t nContinuousStates);

typedef fmi3Status fmi3GetContinuousStateDerivativesTYPE(fmi3Instance instance,
                                                         fmi3Float64 derivatives[],
                                                         size_t nContinuousStates);

typedef fmi3Status fmi3GetEventIndicatorsTYPE(fmi3Instance instance,
                                              fmi3Float64 eventIndicators[],
                                              size_t nEventIndicators);

typedef fmi3Status fmi3GetContinuousStatesTYPE(fmi3Instance instance,
                                               fmi3Float64 continuousStates[],
                                               size_t nContinuousStates);

typedef fmi3Status fmi3GetNominalsOfContinuousStatesTYPE(fmi3Instance instance,
                                                         fmi3Float64 nominals[],
                                                         size_t nContinuousStates);

typedef fmi3Status fmi3GetNumberOfEventIndicatorsTYPE(fmi3Instance instance,
                                                      size_t *nEventIndicators);

typedef fmi3Status fmi3GetNumberOfContinuousStatesTYPE(fmi3Instance instance,
                                                       size_t *nContinuousStates);

/* ---- Functions for Co-Simulation (section 4.2) ----------------------- */

typedef fmi3Status fmi3EnterStepModeTYPE(fmi3Instance instance);

typedef fmi3Status fmi3GetOutputDerivativesTYPE(fmi3Instance instance,
                                                const fmi3ValueReference valueReferences[],
                                                size_t nValueReferences,
                                                const fmi3Int32 orders[],
                                                fmi3Float64 values[],
                                                size_t nValues);

typedef fmi3Status fmi3DoStepTYPE(fmi3Instance instance,
                                  fmi3Float64 currentCommunicationPoint,
                                  fmi3Float64 communicationStepSize,
                                  fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                  fmi3Boolean *eventHandlingNeeded,
                                  fmi3Boolean *terminateSimulation,
                                  fmi3Boolean *earlyReturn,
                                  fmi3Float64 *lastSuccessfulTime);

/* ---- Functions for Scheduled Execution (section 5.2) ----------------- */

typedef fmi3Status fmi3ActivateModelPartitionTYPE(fmi3Instance instance,
                                                  fmi3ValueReference clockReference,
                                                  fmi3Float64 activationTime);

#ifdef __cplusplus
}
#endif

#endif /* fmi3FunctionTypes_h */
