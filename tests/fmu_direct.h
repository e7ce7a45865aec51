/*
 * fmu_direct: the project's test FMUs loaded as an importer loads them,
 * for tests that call them directly (no worker): dlopen() of the staged
 * binary, every FMI function resolved by name, a logger that keeps the
 * last message, and small call helpers that fail the test on a bad status.
 */
#ifndef FMUD_TESTS_FMU_DIRECT_H
#define FMUD_TESTS_FMU_DIRECT_H

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/fmi2FunctionTypes.h"
#include "fmi/fmi3FunctionTypes.h"

#if defined(__x86_64__)
#define FMI3_PLATFORM "x86_64-linux"
#elif defined(__aarch64__)
#define FMI3_PLATFORM "aarch64-linux"
#endif
#define FMI2_PLATFORM "linux64"

/* Every function of the FMI 3.0 API, by name without the fmi3 prefix. */
#define FMI3_FUNCTIONS(X) \
        X(GetVersion) X(SetDebugLogging) X(InstantiateModelExchange) \
        X(InstantiateCoSimulation) X(InstantiateScheduledExecution) X(FreeInstance) \
        X(EnterInitializationMode) X(ExitInitializationMode) X(EnterEventMode) \
        X(Terminate) X(Reset) \
        X(GetFloat32) X(GetFloat64) X(GetInt8) X(GetUInt8) X(GetInt16) X(GetUInt16) \
        X(GetInt32) X(GetUInt32) X(GetInt64) X(GetUInt64) X(GetBoolean) X(GetString) \
        X(GetBinary) X(GetClock) \
        X(SetFloat32) X(SetFloat64) X(SetInt8) X(SetUInt8) X(SetInt16) X(SetUInt16) \
        X(SetInt32) X(SetUInt32) X(SetInt64) X(SetUInt64) X(SetBoolean) X(SetString) \
        X(SetBinary) X(SetClock) \
        X(GetNumberOfVariableDependencies) X(GetVariableDependencies) \
        X(GetFMUState) X(SetFMUState) X(FreeFMUState) X(SerializedFMUStateSize) \
        X(SerializeFMUState) X(DeserializeFMUState) \
        X(GetDirectionalDerivative) X(GetAdjointDerivative) \
        X(EnterConfigurationMode) X(ExitConfigurationMode) \
        X(GetIntervalDecimal) X(GetIntervalFraction) X(GetShiftDecimal) X(GetShiftFraction) \
        X(SetIntervalDecimal) X(SetIntervalFraction) X(SetShiftDecimal) X(SetShiftFraction) \
        X(EvaluateDiscreteStates) X(UpdateDiscreteStates) \
        X(EnterContinuousTimeMode) X(CompletedIntegratorStep) X(SetTime) \
        X(SetContinuousStates) X(GetContinuousStateDerivatives) X(GetEventIndicators) \
        X(GetContinuousStates) X(GetNominalsOfContinuousStates) \
        X(GetNumberOfEventIndicators) X(GetNumberOfContinuousStates) \
        X(EnterStepMode) X(GetOutputDerivatives) X(DoStep) X(ActivateModelPartition)

#define FMI2_FUNCTIONS(X) \
        X(GetTypesPlatform) X(GetVersion) X(SetDebugLogging) X(Instantiate) \
        X(FreeInstance) X(SetupExperiment) X(EnterInitializationMode) \
        X(ExitInitializationMode) X(Terminate) X(Reset) \
        X(GetReal) X(GetInteger) X(GetBoolean) X(GetString) \
        X(SetReal) X(SetInteger) X(SetBoolean) X(SetString) \
        X(GetFMUstate) X(SetFMUstate) X(FreeFMUstate) X(SerializedFMUstateSize) \
        X(SerializeFMUstate) X(DeSerializeFMUstate) X(GetDirectionalDerivative) \
        X(EnterEventMode) X(NewDiscreteStates) X(EnterContinuousTimeMode) \
        X(CompletedIntegratorStep) X(SetTime) X(SetContinuousStates) X(GetDerivatives) \
        X(GetEventIndicators) X(GetContinuousStates) X(GetNominalsOfContinuousStates) \
        X(SetRealInputDerivatives) X(GetRealOutputDerivatives) X(DoStep) X(CancelStep) \
        X(GetStatus) X(GetRealStatus) X(GetIntegerStatus) X(GetBooleanStatus) \
        X(GetStringStatus)

struct fmi3 {
        void *dl;
#define X(name) fmi3##name##TYPE *name;
        FMI3_FUNCTIONS(X)
#undef X
};

struct fmi2 {
        void *dl;
#define X(name) fmi2##name##TYPE *name;
        FMI2_FUNCTIONS(X)
#undef X
};


/* The FMI 3.0 test FMUs (not MissingSymbol, which lacks fmi3DoStep). */
extern const char *const fmi3_fmus[8];

/* LinearOde's value references. */
enum { LO_X = 1, LO_DER_X = 2, LO_K = 3, LO_X0 = 4, LO_U0 = 10, LO_Y0 = 20 };

/* The last message an FMU logged, and how many it logged. */
extern char last_log[2048];
extern int n_logs;

/* Resolve every function; a missing one fails the test unless allowed. */
void load3(struct fmi3 *api, const char *name, const char *allowed_missing);
/* The same, without asking for every function (one interface only): missing ones are NULL. */
void load3_some(struct fmi3 *api, const char *name);
void load2(struct fmi2 *api, const char *name);
void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
             fmi3String message);
void logger2(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
             fmi2String category, fmi2String message, ...);
/* Instantiate for Co-Simulation with the token from modelDescription.xml. */
fmi3Instance instantiate3(struct fmi3 *api, const char *name, bool event_mode, bool early_return,
                          const fmi3ValueReference *required, size_t n_required,
                          fmi3IntermediateUpdateCallback iu);
void initialize3(struct fmi3 *api, fmi3Instance inst, double t0);
fmi3Status step3(struct fmi3 *api, fmi3Instance inst, double t, double h, fmi3Boolean *ret_early,
                 double *ret_t);
double get_f64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr);
void set_f64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr, double v);
int32_t get_i32(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr);
int64_t get_i64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr);

/* The staged FMU's modelDescription.xml (xmlFreeDoc() it). */
xmlDocPtr read_description(const char *name);
/* The first child element named tag; NULL: none. */
xmlNodePtr child(xmlNodePtr parent, const char *tag);
/* An attribute as a string in buf ("" if absent); returns whether present. */
bool attr(xmlNodePtr node, const char *name, char *buf, size_t size);
/* The instantiation token (FMI 3.0) or GUID (FMI 2.0) of a staged FMU (static buffer). */
const char *token_of(const char *name);

#endif
