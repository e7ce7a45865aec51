/*
 * fmi3Functions.h: the FMI 3.0 function prototypes an FMU defines.
 *
 * Written from the definitions in the FMI 3.0 standard, section 2.2.2
 * ("Header Files and Naming of Functions"). An FMU shipped as a shared
 * object exports every function under its plain name (fmi3DoStep); one
 * compiled from source or into a static library defines
 * FMI3_FUNCTION_PREFIX as "<modelIdentifier>_" before including this
 * header, which turns fmi3DoStep into <modelIdentifier>_fmi3DoStep.
 * Defining FMI3_OVERRIDE_FUNCTION_PREFIX as well keeps the plain names.
 *
 * FMI3_Export gives the functions default visibility, so an FMU built
 * with -fvisibility=hidden still exports exactly the FMI API. Define
 * FMI3_Export before including this header to override it.
 */
#ifndef fmi3Functions_h
#define fmi3Functions_h

#include "fmi3PlatformTypes.h"
#include "fmi3FunctionTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the standard these headers implement (fmi3GetVersion). */
#define fmi3Version "3.0"

#ifndef FMI3_Export
#if defined(__GNUC__) && __GNUC__ >= 4
#define FMI3_Export __attribute__((visibility("default")))
#else
#define FMI3_Export
#endif
#endif

#if defined(FMI3_FUNCTION_PREFIX) && !defined(FMI3_OVERRIDE_FUNCTION_PREFIX)
#define fmi3Paste_(a, b) a##b
#define fmi3PasteB_(a, b) fmi3Paste_(a, b)
#define fmi3FullName(name) fmi3PasteB_(FMI3_FUNCTION_PREFIX, name)
#else
#define fmi3FullName(name) name
#endif

/* The name each API function is defined under. */
#define fmi3GetVersion                      fmi3FullName(fmi3GetVersion)
#define fmi3SetDebugLogging                 fmi3FullName(fmi3SetDebugLogging)
#define fmi3InstantiateModelExchange        fmi3FullName(fmi3InstantiateModelExchange)
#define fmi3InstantiateCoSimulation         fmi3FullName(fmi3InstantiateCoSimulation)
#define fmi3InstantiateScheduledExecution   fmi3FullName(fmi3InstantiateScheduledExecution)
#define fmi3FreeInstance                    fmi3FullName(fmi3FreeInstance)
#define fmi3EnterInitializationMode         fmi3FullName(fmi3EnterInitializationMode)
#define fmi3ExitInitializationMode          fmi3FullName(fmi3ExitInitializationMode)
#define fmi3EnterEventMode                  fmi3FullName(fmi3EnterEventMode)
#define fmi3Terminate                       fmi3FullName(fmi3Terminate)
#define fmi3Reset                           fmi3FullName(fmi3Reset)
#define fmi3GetFloat32                      fmi3FullName(fmi3GetFloat32)
#define fmi3GetFloat64                      fmi3FullName(fmi3GetFloat64)
#define fmi3GetInt8                         fmi3FullName(fmi3GetInt8)
#define fmi3GetUInt8                        fmi3FullName(fmi3GetUInt8)
#define fmi3GetInt16                        fmi3FullName(fmi3GetInt16)
#define fmi3GetUInt16                       fmi3FullName(fmi3GetUInt16)
#define fmi3GetInt32                        fmi3FullName(fmi3GetInt32)
#define fmi3GetUInt32                       fmi3FullName(fmi3GetUInt32)
#define fmi3GetInt64                        fmi3FullName(fmi3GetInt64)
#define fmi3GetUInt64                       fmi3FullName(fmi3GetUInt64)
#define fmi3GetBoolean                      fmi3FullName(fmi3GetBoolean)
#define fmi3GetString                       fmi3FullName(fmi3GetString)
#define fmi3GetBinary                       fmi3FullName(fmi3GetBinary)
#define fmi3GetClock                        fmi3FullName(fmi3GetClock)
#define fmi3SetFloat32                      fmi3FullName(fmi3SetFloat32)
#define fmi3SetFloat64                      fmi3FullName(fmi3SetFloat64)
#define fmi3SetInt8                         fmi3FullName(fmi3SetInt8)
#define fmi3SetUInt8                        fmi3FullName(fmi3SetUInt8)
#define fmi3SetInt16                        fmi3FullName(fmi3SetInt16)
#define fmi3SetUInt16                       fmi3FullName(fmi3SetUInt16)
#define fmi3SetInt32                        fmi3FullName(fmi3SetInt32)
#define fmi3SetUInt32                       fmi3FullName(fmi3SetUInt32)
#define fmi3SetInt64                        fmi3FullName(fmi3SetInt64)
#define fmi3SetUInt64                       fmi3FullName(fmi3SetUInt64)
#define fmi3SetBoolean                      fmi3FullName(fmi3SetBoolean)
#define fmi3SetString                       fmi3FullName(fmi3SetString)
#define fmi3SetBinary                       fmi3FullName(fmi3SetBinary)
#define fmi3SetClock                        fmi3FullName(fmi3SetClock)
#define fmi3GetNumberOfVariableDependencies fmi3FullName(fmi3GetNumberOfVariableDependencies)
#define fmi3GetVariableDependencies         fmi3FullName(fmi3GetVariableDependencies)
#define fmi3GetFMUState                     fmi3FullName(fmi3GetFMUState)
#define fmi3SetFMUState                     fmi3FullName(fmi3SetFMUState)
#define fmi3FreeFMUState                    fmi3FullName(fmi3FreeFMUState)
#define fmi3SerializedFMUStateSize          fmi3FullName(fmi3SerializedFMUStateSize)
#define fmi3SerializeFMUState               fmi3FullName(fmi3SerializeFMUState)
#define fmi3DeserializeFMUState             fmi3FullName(fmi3DeserializeFMUState)
#define fmi3GetDirectionalDerivative        fmi3FullName(fmi3GetDirectionalDerivative)
#define fmi3GetAdjointDerivative            fmi3FullName(fmi3GetAdjointDerivative)
#define fmi3EnterConfigurationMode          fmi3FullName(fmi3EnterConfigurationMode)
#define fmi3ExitConfigurationMode           fmi3FullName(fmi3ExitConfigurationMode)
#define fmi3GetIntervalDecimal              fmi3FullName(fmi3GetIntervalDecimal)
#define fmi3GetIntervalFraction             fmi3FullName(fmi3GetIntervalFraction)
#define fmi3GetShiftDecimal                 fmi3FullName(fmi3GetShiftDecimal)
#define fmi3GetShiftFraction                fmi3FullName(fmi3GetShiftFraction)
#define fmi3SetIntervalDecimal              fmi3FullName(fmi3SetIntervalDecimal)
#define fmi3SetIntervalFraction             fmi3FullName(fmi3SetIntervalFraction)
#define fmi3SetShiftDecimal                 fmi3FullName(fmi3SetShiftDecimal)
#define fmi3SetShiftFraction                fmi3FullName(fmi3SetShiftFraction)
#define fmi3EvaluateDiscreteStates          fmi3FullName(fmi3EvaluateDiscreteStates)
#define fmi3UpdateDiscreteStates            fmi3FullName(fmi3UpdateDiscreteStates)
#define fmi3EnterContinuousTimeMode         fmi3FullName(fmi3EnterContinuousTimeMode)
#define fmi3CompletedIntegratorStep         fmi3FullName(fmi3CompletedIntegratorStep)
#define fmi3SetTime                         fmi3FullName(fmi3SetTime)
#define fmi3SetContinuousStates             fmi3FullName(fmi3SetContinuousStates)
#define fmi3GetContinuousStateDerivatives   fmi3FullName(fmi3GetContinuousStateDerivatives)
#define fmi3GetEventIndicators              fmi3FullName(fmi3GetEventIndicators)
#define fmi3GetContinuousStates             fmi3FullName(fmi3GetContinuousStates)
#define fmi3GetNominalsOfContinuousStates   fmi3FullName(fmi3GetNominalsOfContinuousStates)
#define fmi3GetNumberOfEventIndicators      fmi3FullName(fmi3GetNumberOfEventIndicators)
#define fmi3GetNumberOfContinuousStates     fmi3FullName(fmi3GetNumberOfContinuousStates)
#define fmi3EnterStepMode                   fmi3FullName(fmi3EnterStepMode)
#define fmi3GetOutputDerivatives            fmi3FullName(fmi3GetOutputDerivatives)
#define fmi3DoStep                          fmi3FullName(fmi3DoStep)
#define fmi3ActivateModelPartition          fmi3FullName(fmi3ActivateModelPartition)

FMI3_Export fmi3GetVersionTYPE                      fmi3GetVersion;
FMI3_Export fmi3SetDebugLoggingTYPE                 fmi3SetDebugLogging;
FMI3_Export fmi3InstantiateModelExchangeTYPE        fmi3InstantiateModelExchange;
FMI3_Export fmi3InstantiateCoSimulationTYPE         fmi3InstantiateCoSimulation;
FMI3_Export fmi3InstantiateScheduledExecutionTYPE   fmi3InstantiateScheduledExecution;
FMI3_Export fmi3FreeInstanceTYPE                    fmi3FreeInstance;
FMI3_Export fmi3EnterInitializationModeTYPE         fmi3EnterInitializationMode;
FMI3_Export fmi3ExitInitializationModeTYPE          fmi3ExitInitializationMode;
FMI3_Export fmi3EnterEventModeTYPE                  fmi3EnterEventMode;
FMI3_Export fmi3TerminateTYPE                       fmi3Terminate;
FMI3_Export fmi3ResetTYPE                           fmi3Reset;
FMI3_Export fmi3GetFloat32TYPE                      fmi3GetFloat32;
FMI3_Export fmi3GetFloat64TYPE                      fmi3GetFloat64;
FMI3_Export fmi3GetInt8TYPE                         fmi3GetInt8;
FMI3_Export fmi3GetUInt8TYPE                        fmi3GetUInt8;
FMI3_Export fmi3GetInt16TYPE                        fmi3GetInt16;
FMI3_Export fmi3GetUInt16TYPE                       fmi3GetUInt16;
FMI3_Export fmi3GetInt32TYPE                        fmi3GetInt32;
FMI3_Export fmi3GetUInt32TYPE                       fmi3GetUInt32;
FMI3_Export fmi3GetInt64TYPE                        fmi3GetInt64;
FMI3_Export fmi3GetUInt64TYPE                       fmi3GetUInt64;
FMI3_Export fmi3GetBooleanTYPE                      fmi3GetBoolean;
FMI3_Export fmi3GetStringTYPE                       fmi3GetString;
FMI3_Export fmi3GetBinaryTYPE                       fmi3GetBinary;
FMI3_Export fmi3GetClockTYPE                        fmi3GetClock;
FMI3_Export fmi3SetFloat32TYPE                      fmi3SetFloat32;
FMI3_Export fmi3SetFloat64TYPE                      fmi3SetFloat64;
FMI3_Export fmi3SetInt8TYPE                         fmi3SetInt8;
FMI3_Export fmi3SetUInt8TYPE                        fmi3SetUInt8;
FMI3_Export fmi3SetInt16TYPE                        fmi3SetInt16;
FMI3_Export fmi3SetUInt16TYPE                       fmi3SetUInt16;
FMI3_Export fmi3SetInt32TYPE                        fmi3SetInt32;
FMI3_Export fmi3SetUInt32TYPE                       fmi3SetUInt32;
FMI3_Export fmi3SetInt64TYPE                        fmi3SetInt64;
FMI3_Export fmi3SetUInt64TYPE                       fmi3SetUInt64;
FMI3_Export fmi3SetBooleanTYPE                      fmi3SetBoolean;
FMI3_Export fmi3SetStringTYPE                       fmi3SetString;
FMI3_Export fmi3SetBinaryTYPE                       fmi3SetBinary;
FMI3_Export fmi3SetClockTYPE                        fmi3SetClock;
FMI3_Export fmi3GetNumberOfVariableDependenciesTYPE fmi3GetNumberOfVariableDependencies;
FMI3_Export fmi3GetVariableDependenciesTYPE         fmi3GetVariableDependencies;
FMI3_Export fmi3GetFMUStateTYPE                     fmi3GetFMUState;
FMI3_Export fmi3SetFMUStateTYPE                     fmi3SetFMUState;
FMI3_Export fmi3FreeFMUStateTYPE                    fmi3FreeFMUState;
FMI3_Export fmi3SerializedFMUStateSizeTYPE          fmi3SerializedFMUStateSize;
FMI3_Export fmi3SerializeFMUStateTYPE               fmi3SerializeFMUState;
FMI3_Export fmi3DeserializeFMUStateTYPE             fmi3DeserializeFMUState;
FMI3_Export fmi3GetDirectionalDerivativeTYPE        fmi3GetDirectionalDerivative;
FMI3_Export fmi3GetAdjointDerivativeTYPE            fmi3GetAdjointDerivative;
FMI3_Export fmi3EnterConfigurationModeTYPE          fmi3EnterConfigurationMode;
FMI3_Export fmi3ExitConfigurationModeTYPE           fmi3ExitConfigurationMode;
FMI3_Export fmi3GetIntervalDecimalTYPE              fmi3GetIntervalDecimal;
FMI3_Export fmi3GetIntervalFractionTYPE             fmi3GetIntervalFraction;
FMI3_Export fmi3GetShiftDecimalTYPE                 fmi3GetShiftDecimal;
FMI3_Export fmi3GetShiftFractionTYPE                fmi3GetShiftFraction;
FMI3_Export fmi3SetIntervalDecimalTYPE              fmi3SetIntervalDecimal;
FMI3_Export fmi3SetIntervalFractionTYPE             fmi3SetIntervalFraction;
FMI3_Export fmi3SetShiftDecimalTYPE                 fmi3SetShiftDecimal;
FMI3_Export fmi3SetShiftFractionTYPE                fmi3SetShiftFraction;
FMI3_Export fmi3EvaluateDiscreteStatesTYPE          fmi3EvaluateDiscreteStates;
FMI3_Export fmi3UpdateDiscreteStatesTYPE            fmi3UpdateDiscreteStates;
FMI3_Export fmi3EnterContinuousTimeModeTYPE         fmi3EnterContinuousTimeMode;
FMI3_Export fmi3CompletedIntegratorStepTYPE         fmi3CompletedIntegratorStep;
FMI3_Export fmi3SetTimeTYPE                         fmi3SetTime;
FMI3_Export fmi3SetContinuousStatesTYPE             fmi3SetContinuousStates;
FMI3_Export fmi3GetContinuousStateDerivativesTYPE   fmi3GetContinuousStateDerivatives;
FMI3_Export fmi3GetEventIndicatorsTYPE              fmi3GetEventIndicators;
FMI3_Export fmi3GetContinuousStatesTYPE             fmi3GetContinuousStates;
FMI3_Export fmi3GetNominalsOfContinuousStatesTYPE   fmi3GetNominalsOfContinuousStates;
FMI3_Export fmi3GetNumberOfEventIndicatorsTYPE      fmi3GetNumberOfEventIndicators;
FMI3_Export fmi3GetNumberOfContinuousStatesTYPE     fmi3GetNumberOfContinuousStates;
FMI3_Export fmi3EnterStepModeTYPE                   fmi3EnterStepMode;
FMI3_Export fmi3GetOutputDerivativesTYPE            fmi3GetOutputDerivatives;
FMI3_Export fmi3DoStepTYPE                          fmi3DoStep;
FMI3_Export fmi3ActivateModelPartitionTYPE          fmi3ActivateModelPartition;

#ifdef __cplusplus
}
#endif

#endif /* fmi3Functions_h */
