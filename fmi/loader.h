/*
 * loader: the FMU's shared library for this platform, dlopen'ed, with every
 * FMI function of its version's Co-Simulation API resolved.
 *
 * DESIGN: dlopen runs the library's constructors, that is FMU code, so only
 * a worker (or a test process) calls fmu_lib_open(); the daemon never does.
 * A function the standard requires, always or because the description
 * declares the capability that needs it, must be present: a missing one is
 * reported by name. Every other function is resolved when present and left
 * NULL otherwise, so callers check before calling those.
 */
#ifndef FMUD_FMI_LOADER_H
#define FMUD_FMI_LOADER_H

#include "diag.h"
#include "fmi2FunctionTypes.h"
#include "fmi3FunctionTypes.h"
#include "model_description.h"

/* When a function must be exported. */
enum fmu_need {
        FMU_NEED_ALWAYS,        /* every Co-Simulation FMU */
        FMU_NEED_STATE,         /* canGetAndSetFMUState */
        FMU_NEED_SERIALIZE,     /* canSerializeFMUState */
        FMU_NEED_DIRECTIONAL,   /* providesDirectionalDerivative(s) */
        FMU_NEED_ADJOINT,       /* providesAdjointDerivatives */
        FMU_NEED_EVENT_MODE,    /* hasEventMode (CoSimulation; Model Exchange has no Step Mode) */
        FMU_NEED_EVENTS,        /* hasEventMode, or hosted as Model Exchange */
        FMU_NEED_EVALUATE,      /* providesEvaluateDiscreteStates */
        FMU_NEED_OUTPUT_DER,    /* maxOutputDerivativeOrder > 0 */
        FMU_NEED_INPUT_DER,     /* FMI 2.0 canInterpolateInputs */
        FMU_NEED_CLOCKS,        /* the description has a Clock variable */
        FMU_NEED_CONFIG,        /* the description has a structural parameter */
        FMU_NEED_CS,            /* hosted as Co-Simulation */
        FMU_NEED_ME,            /* hosted as Model Exchange (md_host_me()) */
        FMU_NEED_SE,            /* hosted as Scheduled Execution (md_host_se()) */
        FMU_NEED_OPTIONAL,      /* resolved when present */
};

/*
 * FMI 3.0 Co-Simulation API, and the Model Exchange functions a worker
 * that integrates the FMU calls (section 3.2): name, need. Order is the
 * struct's order.
 */
#define FMI3_CS_FUNCTIONS(X) \
        X(fmi3GetVersion, FMU_NEED_ALWAYS) \
        X(fmi3SetDebugLogging, FMU_NEED_ALWAYS) \
        X(fmi3InstantiateCoSimulation, FMU_NEED_CS) \
        X(fmi3FreeInstance, FMU_NEED_ALWAYS) \
        X(fmi3EnterInitializationMode, FMU_NEED_ALWAYS) \
        X(fmi3ExitInitializationMode, FMU_NEED_ALWAYS) \
        X(fmi3Terminate, FMU_NEED_ALWAYS) \
        X(fmi3Reset, FMU_NEED_ALWAYS) \
        X(fmi3GetFloat32, FMU_NEED_ALWAYS) \
        X(fmi3GetFloat64, FMU_NEED_ALWAYS) \
        X(fmi3GetInt8, FMU_NEED_ALWAYS) \
        X(fmi3GetUInt8, FMU_NEED_ALWAYS) \
        X(fmi3GetInt16, FMU_NEED_ALWAYS) \
        X(fmi3GetUInt16, FMU_NEED_ALWAYS) \
        X(fmi3GetInt32, FMU_NEED_ALWAYS) \
        X(fmi3GetUInt32, FMU_NEED_ALWAYS) \
        X(fmi3GetInt64, FMU_NEED_ALWAYS) \
        X(fmi3GetUInt64, FMU_NEED_ALWAYS) \
        X(fmi3GetBoolean, FMU_NEED_ALWAYS) \
        X(fmi3GetString, FMU_NEED_ALWAYS) \
        X(fmi3GetBinary, FMU_NEED_ALWAYS) \
        X(fmi3SetFloat32, FMU_NEED_ALWAYS) \
        X(fmi3SetFloat64, FMU_NEED_ALWAYS) \
        X(fmi3SetInt8, FMU_NEED_ALWAYS) \
        X(fmi3SetUInt8, FMU_NEED_ALWAYS) \
        X(fmi3SetInt16, FMU_NEED_ALWAYS) \
        X(fmi3SetUInt16, FMU_NEED_ALWAYS) \
        X(fmi3SetInt32, FMU_NEED_ALWAYS) \
        X(fmi3SetUInt32, FMU_NEED_ALWAYS) \
        X(fmi3SetInt64, FMU_NEED_ALWAYS) \
        X(fmi3SetUInt64, FMU_NEED_ALWAYS) \
        X(fmi3SetBoolean, FMU_NEED_ALWAYS) \
        X(fmi3SetString, FMU_NEED_ALWAYS) \
        X(fmi3SetBinary, FMU_NEED_ALWAYS) \
        X(fmi3DoStep, FMU_NEED_CS) \
        X(fmi3GetNumberOfVariableDependencies, FMU_NEED_OPTIONAL) \
        X(fmi3GetVariableDependencies, FMU_NEED_OPTIONAL) \
        X(fmi3GetFMUState, FMU_NEED_STATE) \
        X(fmi3SetFMUState, FMU_NEED_STATE) \
        X(fmi3FreeFMUState, FMU_NEED_STATE) \
        X(fmi3SerializedFMUStateSize, FMU_NEED_SERIALIZE) \
        X(fmi3SerializeFMUState, FMU_NEED_SERIALIZE) \
        X(fmi3DeserializeFMUState, FMU_NEED_SERIALIZE) \
        X(fmi3GetDirectionalDerivative, FMU_NEED_DIRECTIONAL) \
        X(fmi3GetAdjointDerivative, FMU_NEED_ADJOINT) \
        X(fmi3EnterConfigurationMode, FMU_NEED_CONFIG) \
        X(fmi3ExitConfigurationMode, FMU_NEED_CONFIG) \
        X(fmi3GetClock, FMU_NEED_CLOCKS) \
        X(fmi3SetClock, FMU_NEED_CLOCKS) \
        X(fmi3GetIntervalDecimal, FMU_NEED_OPTIONAL) \
        X(fmi3GetIntervalFraction, FMU_NEED_OPTIONAL) \
        X(fmi3GetShiftDecimal, FMU_NEED_OPTIONAL) \
        X(fmi3GetShiftFraction, FMU_NEED_OPTIONAL) \
        X(fmi3SetIntervalDecimal, FMU_NEED_OPTIONAL) \
        X(fmi3SetIntervalFraction, FMU_NEED_OPTIONAL) \
        X(fmi3SetShiftDecimal, FMU_NEED_OPTIONAL) \
        X(fmi3SetShiftFraction, FMU_NEED_OPTIONAL) \
        X(fmi3EvaluateDiscreteStates, FMU_NEED_EVALUATE) \
        X(fmi3UpdateDiscreteStates, FMU_NEED_EVENTS) \
        X(fmi3EnterEventMode, FMU_NEED_EVENTS) \
        X(fmi3EnterStepMode, FMU_NEED_EVENT_MODE) \
        X(fmi3GetOutputDerivatives, FMU_NEED_OUTPUT_DER) \
        X(fmi3InstantiateModelExchange, FMU_NEED_ME) \
        X(fmi3EnterContinuousTimeMode, FMU_NEED_ME) \
        X(fmi3CompletedIntegratorStep, FMU_NEED_ME) \
        X(fmi3SetTime, FMU_NEED_ME) \
        X(fmi3SetContinuousStates, FMU_NEED_ME) \
        X(fmi3GetContinuousStateDerivatives, FMU_NEED_ME) \
        X(fmi3GetEventIndicators, FMU_NEED_ME) \
        X(fmi3GetContinuousStates, FMU_NEED_ME) \
        X(fmi3GetNominalsOfContinuousStates, FMU_NEED_ME) \
        X(fmi3GetNumberOfEventIndicators, FMU_NEED_ME) \
        X(fmi3GetNumberOfContinuousStates, FMU_NEED_ME) \
        X(fmi3InstantiateScheduledExecution, FMU_NEED_SE) \
        X(fmi3ActivateModelPartition, FMU_NEED_SE)

/*
 * FMI 2.0 Co-Simulation API (FMI 2.0 sections 2.1 and 4.2), and the Model
 * Exchange functions a worker that integrates the FMU calls (section 3.2).
 */
#define FMI2_CS_FUNCTIONS(X) \
        X(fmi2GetTypesPlatform, FMU_NEED_ALWAYS) \
        X(fmi2GetVersion, FMU_NEED_ALWAYS) \
        X(fmi2SetDebugLogging, FMU_NEED_ALWAYS) \
        X(fmi2Instantiate, FMU_NEED_ALWAYS) \
        X(fmi2FreeInstance, FMU_NEED_ALWAYS) \
        X(fmi2SetupExperiment, FMU_NEED_ALWAYS) \
        X(fmi2EnterInitializationMode, FMU_NEED_ALWAYS) \
        X(fmi2ExitInitializationMode, FMU_NEED_ALWAYS) \
        X(fmi2Terminate, FMU_NEED_ALWAYS) \
        X(fmi2Reset, FMU_NEED_ALWAYS) \
        X(fmi2GetReal, FMU_NEED_ALWAYS) \
        X(fmi2GetInteger, FMU_NEED_ALWAYS) \
        X(fmi2GetBoolean, FMU_NEED_ALWAYS) \
        X(fmi2GetString, FMU_NEED_ALWAYS) \
        X(fmi2SetReal, FMU_NEED_ALWAYS) \
        X(fmi2SetInteger, FMU_NEED_ALWAYS) \
        X(fmi2SetBoolean, FMU_NEED_ALWAYS) \
        X(fmi2SetString, FMU_NEED_ALWAYS) \
        X(fmi2DoStep, FMU_NEED_CS) \
        X(fmi2CancelStep, FMU_NEED_CS) \
        X(fmi2GetStatus, FMU_NEED_CS) \
        X(fmi2GetRealStatus, FMU_NEED_CS) \
        X(fmi2GetIntegerStatus, FMU_NEED_CS) \
        X(fmi2GetBooleanStatus, FMU_NEED_CS) \
        X(fmi2GetStringStatus, FMU_NEED_CS) \
        X(fmi2GetFMUstate, FMU_NEED_STATE) \
        X(fmi2SetFMUstate, FMU_NEED_STATE) \
        X(fmi2FreeFMUstate, FMU_NEED_STATE) \
        X(fmi2SerializedFMUstateSize, FMU_NEED_SERIALIZE) \
        X(fmi2SerializeFMUstate, FMU_NEED_SERIALIZE) \
        X(fmi2DeSerializeFMUstate, FMU_NEED_SERIALIZE) \
        X(fmi2GetDirectionalDerivative, FMU_NEED_DIRECTIONAL) \
        X(fmi2SetRealInputDerivatives, FMU_NEED_INPUT_DER) \
        X(fmi2GetRealOutputDerivatives, FMU_NEED_OUTPUT_DER) \
        X(fmi2EnterEventMode, FMU_NEED_ME) \
        X(fmi2NewDiscreteStates, FMU_NEED_ME) \
        X(fmi2EnterContinuousTimeMode, FMU_NEED_ME) \
        X(fmi2CompletedIntegratorStep, FMU_NEED_ME) \
        X(fmi2SetTime, FMU_NEED_ME) \
        X(fmi2SetContinuousStates, FMU_NEED_ME) \
        X(fmi2GetDerivatives, FMU_NEED_ME) \
        X(fmi2GetEventIndicators, FMU_NEED_ME) \
        X(fmi2GetContinuousStates, FMU_NEED_ME) \
        X(fmi2GetNominalsOfContinuousStates, FMU_NEED_ME)

#define FMU_LIB_MEMBER(name, need) name##TYPE *name;

struct fmi3_api {
        FMI3_CS_FUNCTIONS(FMU_LIB_MEMBER)
};

struct fmi2_api {
        FMI2_CS_FUNCTIONS(FMU_LIB_MEMBER)
};

struct fmu_lib {
        void *handle;
        enum md_fmi_version fmi;
        char *path;             /* the library's path */
        union {
                struct fmi3_api f3;
                struct fmi2_api f2;
        };
};

/*
 * Load "<unpacked_dir>/binaries/<platform>/<modelIdentifier>.so" with
 * RTLD_NOW | RTLD_LOCAL and resolve md's version of the API. Runs FMU code:
 * call only in a worker or test process.
 *
 * Returns 0 with *ret_lib set (free with fmu_lib_close()); -ENOENT when the
 * library is missing, -ENOEXEC when dlopen refuses it (its dlerror() text in
 * diags), -ENOSYS when a required function is missing (each one named in
 * diags), -EPROTO when its get-version function reports another FMI version
 * or FMI 2.0 types platform, -EINVAL when md has no Co-Simulation interface
 * (md_host_me() gives an ME FMU one: then the ME functions are required).
 */
int fmu_lib_open(const char *unpacked_dir, const struct md *md, struct diag_list *diags,
                 struct fmu_lib **ret_lib);

/* dlclose and free; NULL is a no-op. Free every instance first. */
void fmu_lib_close(struct fmu_lib *lib);

#endif
